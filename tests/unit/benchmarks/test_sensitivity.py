"""benchmarks/sensitivity.py: its axes come from the registries when it runs, each setting changes what it
says, and the page's savings are the runs' own numbers."""

from __future__ import annotations

import numpy as np
import pytest

import sim_core
from benchmarks import sensitivity as S
from gridshift.dc_params import FACILITY_PRESETS
from sim_core import forecast as F
from sim_core.testing import reference_bundle


@pytest.fixture(scope="module")
def sc(tmp_path_factory):
    return sim_core.load(reference_bundle(tmp_path_factory.mktemp("sens"), n_tasks=600, n_steps=4 * 96, seed=3,
                                          capacity_scale=0.01))


def test_axes_read_the_registries():
    ax = dict(S.axes("default"))
    labels = {t.split(" (")[0]: [s.label for s in ss] for t, ss in ax.items()}
    assert [lbl.split(" ")[0].strip("`") for lbl in labels["facility design"]] == list(FACILITY_PRESETS)
    assert [lbl.split(" ")[0].strip("`") for lbl in labels["forecast model"]] == list(F.MODELS)
    facility = next(ss for t, ss in ax.items() if t.startswith("facility"))
    assert [s.scenario for s in facility if s.scenario is None] == [None]  # the bundle's own design: no transform


def test_settings_change_the_scenario(sc):
    off = S._transform("flexibility:off")(sc)
    assert not off.interruptible.any() and (off.max_delay_s == 0).all() and (off.max_scale == 1).all()
    old = S._transform("facility:gridshift-0.1")(sc)
    assert all(p.economizer == "none" and p.lighting_frac == 0.0 for p in old.physics)
    assert not np.array_equal(old.params, sc.params)


def test_page_savings_are_the_runs(sc):
    kwh = next(ss for t, ss in S.axes("default") if t.startswith("network energy"))
    settings = [next(s for s in kwh if not s.options), next(s for s in kwh if s.options == (("transfer_kwh_per_gb",
                                                                                            "none"),))]
    pols = ["local_only", "lowest_carbon"]
    res = S.measure(sc, settings, pols, ["2023-01-02T00:00:00+00:00"], 1, [0])
    base, none = res[(), None], res[settings[1].options, None]
    r = sim_core.run(sc, "lowest_carbon", seed=0, start="2023-01-02T00:00:00+00:00", days=1)
    assert base["lowest_carbon"][0, 0] == r.totals["carbon_incl_transfer_kg"]
    # no network energy: the same decisions, less carbon by exactly the transfers' emissions
    assert none["lowest_carbon"][0, 0] == pytest.approx(r.totals["carbon_kg_equal_work"], rel=1e-12)
    text = S.page(sc.bundle_id, res, [("t", settings)], pols, ["2023-01-02T00:00:00+00:00"], 1, [0], 1.0)
    b, x = base["local_only"][0, 0], base["lowest_carbon"][0, 0]
    assert f"{100.0 * (b - x) / b:+.2f}" in text.split("| `lowest_carbon` |")[1]
