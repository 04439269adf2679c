"""benchmarks/sensitivity.py: its axes come from the registries when it runs, each setting changes what it
says, the page's savings are the runs' own numbers, the power-model rows are those of runs at the preset's
intensity, and ``--only`` replaces only its sections of the page."""

from __future__ import annotations

import numpy as np
import pytest

import sim_core
from benchmarks import sensitivity as S
from gridshift.dc_params import FACILITY_PRESETS
from sim_core import forecast as F
from sim_core import network_power as NP
from sim_core.testing import reference_bundle

W = ["2023-01-02T00:00:00+00:00"]
POLS = ["local_only", "lowest_carbon"]
BUILD = {"physics": "default", "target_utilization": 0.5, "year": 2023, "regions": ["US-CAL-CISO", "DE-LU", "SG"]}


@pytest.fixture(scope="module")
def sc(tmp_path_factory):
    return sim_core.load(reference_bundle(tmp_path_factory.mktemp("sens"), n_tasks=600, n_steps=4 * 96, seed=3,
                                          capacity_scale=0.01))


def _axis(key):
    return next(a for a in S.axes(BUILD) if a.key == key)


def test_axes_read_the_registries():
    labels = {a.key: [s.label for s in a.settings] for a in S.axes(BUILD)}
    assert [lbl.split(" ")[0].strip("`") for lbl in labels["facility"]] == list(FACILITY_PRESETS)
    assert [lbl.split(" ")[0].strip("`") for lbl in labels["forecast"]] == list(F.MODELS)
    assert [s.scenario for s in _axis("facility").settings if s.scenario is None] == [None]
    assert [lbl.split(" ")[0].strip("`,") for lbl in labels["egress"]] == list(S.EGRESS_PRESETS)


def test_bundle_axes_share_the_bundles_own_value():
    """Utilisation has at least 0.3, 0.5, 0.7, 0.8; the bundle's own value (and only it) needs no other export."""
    u = _axis("utilisation").settings
    assert [dict(s.bundle).get("target_utilization", 0.5) for s in u] == [0.3, 0.5, 0.7, 0.8]
    assert [s.bundle for s in u if "(the bundle's)" in s.label] == [()]
    assert [s.bundle for s in _axis("year").settings] == [(("year", 2022),), ()]
    assert _axis("regions").settings[0].bundle == () and len(_axis("regions").settings) >= 2
    # a bundle sized for 0.7 makes 0.7 the shared one
    other = next(a for a in S.axes({**BUILD, "target_utilization": 0.7}) if a.key == "utilisation")
    assert [s.bundle for s in other.settings if not s.bundle] == [()] and other.settings[2].bundle == ()


def test_catalogue_axis_is_public_then_trace_groups_over_tenants():
    """The default (``public``) shares the default runs; ``trace_groups`` at a tenth, one and ten times the trace's
    users, the trace's own count left at its default."""
    cat = _axis("catalogue").settings
    assert [s.options for s in cat] == [
        (), (("catalogue", "trace_groups"), ("catalogue_tenants", 130)), (("catalogue", "trace_groups"),),
        (("catalogue", "trace_groups"), ("catalogue_tenants", 13000))]
    assert all(s.bundle == () and s.scenario is None for s in cat)


def test_windows_are_the_iso_mondays():
    assert S.windows_for(2023) == ["2023-01-09T00:00:00+00:00", "2023-07-10T00:00:00+00:00"]
    assert S.windows_for(2022) == ["2022-01-10T00:00:00+00:00", "2022-07-11T00:00:00+00:00"]


def test_settings_change_the_scenario(sc):
    off = S._transform("flexibility:off")(sc)
    assert not off.interruptible.any() and (off.max_delay_s == 0).all() and (off.max_scale == 1).all()
    old = S._transform("facility:gridshift-0.1")(sc)
    assert all(p.economizer == "none" and p.lighting_frac == 0.0 for p in old.physics)
    assert not np.array_equal(old.params, sc.params)
    back = S._transform("egress:private-backbone")(sc)
    assert (back.usd_per_gb == 0).all() and (sc.usd_per_gb > 0).any()
    dx = S._transform("egress:direct-connect")(sc)
    assert np.array_equal(dx.usd_per_gb, np.minimum(sc.usd_per_gb, 0.02) * (1 - np.eye(sc.n_dc)))


def test_a_bundle_axis_without_a_home_is_refused(sc):
    with pytest.raises(SystemExit, match="--home"):
        S.measure(sc, [_axis("utilisation").settings[0]], POLS, 1, [0], windows=W)


def test_page_savings_are_the_runs(sc):
    kwh = _axis("network").settings
    settings = [next(s for s in kwh if not s.options), next(s for s in kwh if s.options == (("transfer_kwh_per_gb",
                                                                                            "none"),))]
    res = S.measure(sc, settings, POLS, 1, [0], windows=W)
    base, none = res[settings[0].key], res[settings[1].key]
    r = sim_core.run(sc, "lowest_carbon", seed=0, start=W[0], days=1)
    assert base["lowest_carbon"][0, 0] == r.totals["carbon_incl_transfer_kg"]
    # no network energy: the same decisions, less carbon by exactly the transfers' emissions
    assert none["lowest_carbon"][0, 0] == pytest.approx(r.totals["carbon_kg_equal_work"], rel=1e-12)
    secs = S.sections(sc, res, [S.Axis("network", "t", settings)], POLS)
    b, x = base["local_only"][0, 0], base["lowest_carbon"][0, 0]
    assert f"{100.0 * (b - x) / b:+.2f}" in secs["network"].split("| `lowest_carbon` |")[1]

    # the power-model rows: the runs at the preset's marginal intensity, plus the fixed share on both
    m = NP.NETWORK_POWER_MODELS["malmodin2020-marginal"]
    pm = S.sections(sc, res, [_axis("power_model")], POLS)["power_model"]
    kb, kp = (sim_core.run(sc, p, seed=0, start=W[0], days=1, **m.run_options()).totals["carbon_incl_transfer_kg"]
              for p in POLS)
    _, fkg = NP.fixed_kwh(sc, m, int(base["local_only"][0, 3]), int(base["local_only"][0, 4]))
    want = 100.0 * (kb - kp) / (kb + fkg)
    row = pm.split("| `lowest_carbon` |")[1]
    assert f"{want:+.2f}" in row.split("|")[1]
    assert row.split("|")[-2].strip().startswith(("yes", "no"))


def test_only_replaces_its_own_sections():
    head = "# Sensitivity\n\nnew header\n"
    ax = [S.Axis("network", "network energy per GB moved (kWh/GB, `transfer_kwh_per_gb`)", []),
          S.Axis("locality", "data locality (`locality`)", [])]
    old = ("# old\n\nold header\n\n## network energy per GB moved (kWh/GB, `transfer_kwh_per_gb`)\n\nN1\n\n"
           "## data locality (`locality`)\n\nL1\n\nRun time: 1344 s on x.\n")
    marked = S.mark_sections(old, ax)
    assert "<!-- sensitivity:network:start -->\n## network" in marked
    assert "L1\n<!-- sensitivity:locality:end -->" in marked
    new = S.assemble_page(marked, head, {"locality": S._block("locality", ["## data locality (`locality`)", "", "L2"]),
                                         "egress": S._block("egress", ["## egress", "", "E"])},
                          ["network", "locality", "egress"], "Run time: 5 s.")
    assert new.startswith(head) and "N1" in new and "L2" in new and "L1" not in new and "old header" not in new
    assert new.index("L2") < new.index("## egress") < new.index("Run time: 5 s.") and "1344" not in new
    assert S.mark_sections(new, ax) == new  # already marked: unchanged


def test_lateness_beside_savings_and_the_utilisation_figure(sc):
    """Each axis's section gives every policy's share of tasks late (the runs' own ``sla_violation_rate``); a
    numeric bundle axis links its figure, whose two panels carry every policy's line with no label overlap."""
    from gridshift_plots.style import overlapping_labels

    settings = [S.Setting("default"), S.Setting("tighter", (("sla_multiplier", 1.0),))]
    res = S.measure(sc, settings, POLS, 1, [0], windows=W)
    r = sim_core.run(sc, "lowest_carbon", seed=0, start=W[0], days=1, sla_multiplier=1.0)
    assert res[settings[1].key]["lowest_carbon"][0, S.LATE] == r.totals["sla_violation_rate"]
    sec = S.sections(sc, res, [S.Axis("network", "t", settings)], POLS)["network"]
    late_rows = sec.split("Tasks late")[1]
    assert f"{100.0 * r.totals['sla_violation_rate']:.2f}" in late_rows.split("| `lowest_carbon` |")[1]
    assert "| `local_only` |" in late_rows  # the baseline's own service is shown too

    util = _axis("utilisation")
    fake = {s.key: res[settings[i % 2].key] for i, s in enumerate(util.settings)}
    assert S.numeric_axis(util) == [0.3, 0.5, 0.7, 0.8] and S.numeric_axis(_axis("regions")) is None
    assert S.numeric_axis(_axis("year")) is None  # (numbers, but two years are not a curve)
    assert "![saving and lateness against utilisation](img/sensitivity_utilisation.png)" in \
        S.sections(sc, fake, [util], POLS)["utilisation"]
    # the spread section spans every bundle axis: a call that ran only some of them leaves it alone
    assert "spread" not in S.sections(sc, fake, [util], POLS)
    every = [_axis(k) for k in S.BUNDLE_AXES]
    full = {s.key: res[settings[0].key] for a in every for s in a.settings}
    assert "over utilisation | over year | over regions" in S.sections(sc, full, every, POLS)["spread"]
    scale = _axis("scale")  # the manifest leaves scale out at its default (rack): that setting is the bundle's
    assert [s.bundle for s in scale.settings][0] == () and scale.settings[0].label.endswith("(the bundle's)")
    assert S.axis_figure({s.key: res[settings[0].key] for s in scale.settings}, scale, POLS).axes[0].get_xscale() \
        == "log"
    fig = S.axis_figure(fake, util, POLS)
    left, right = fig.axes
    assert len(left.get_lines()) >= 1 and len(right.get_lines()) >= len(POLS)
    assert overlapping_labels(fig) == []
