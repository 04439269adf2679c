"""CarbonFlex started mid-bundle on the real mirror (issue 36's cold start): its first learning phase replays the
weeks before the run with the jobs that arrived in them (``Plan.past``), so on its first day it provisions about
what the carbon-agnostic ``local_only`` runs -- not the near-nothing of a knowledge base of zero-job states
(726 GPU-h against 2,004 before the fix, the CarbonFlex preset's week from 2022-06-06)."""

from __future__ import annotations

import datetime as dt

import numpy as np
import polars as pl
import pytest

import sim_core
from benchmarks import repro_presets as RP
from benchmarks.reproductions import export

START = "2022-06-06"  # the week the issue measured; 22 weeks into the bundle


@pytest.fixture(scope="module")
def preset_scenario(shared_data, tmp_path_factory):
    """The CarbonFlex preset's bundle (its stand-in zone, 2022, synthetic workload at 50 % utilisation) with
    the paper's three queues."""
    p = RP.CARBONFLEX
    zone = RP.pick_zones(p, RP.zone_stats(shared_data, p.year))[0][1]
    sc = sim_core.load(export(tmp_path_factory.mktemp("cf_home"), shared_data, [zone], p.year, p.export, 0))
    return RP.with_queues(sc, p.queues)


def _day0_gpu_h(res, start: dt.datetime) -> float:
    """Busy GPU-hours of the run's first day (all sites)."""
    s = res.steps.filter(pl.col("ts_utc") < start + dt.timedelta(days=1))
    return float(s["busy_gpus"].sum()) * 0.25


def test_carbonflex_started_mid_bundle_provisions_like_local_only_on_day_0(preset_scenario):
    start = dt.datetime.fromisoformat(START).replace(tzinfo=dt.UTC)
    kw = dict(seed=0, start=START, days=7, forecast="oracle", power="managed")
    runs = {p: sim_core.run(preset_scenario, p, **kw) for p in ("local_only", "carbonflex", "carbonflex_scaled")}
    gpu_h = {p: _day0_gpu_h(r, start) for p, r in runs.items()}
    assert gpu_h["local_only"] > 1000.0  # a busy day, not an empty one
    for p in ("carbonflex", "carbonflex_scaled"):
        assert gpu_h[p] == pytest.approx(gpu_h["local_only"], rel=0.10), (p, gpu_h)
    # equal work over the run (it drains): what it did not run on day 0 it ran later
    work = {p: r.totals["work_gpu_hours"] for p, r in runs.items()}
    assert np.allclose(list(work.values()), work["local_only"], rtol=1e-9)
