"""compare(): runs and summary equal sim_core.run totals; utilisation metrics; option keys; bad sweeps."""

from __future__ import annotations

import math
import statistics

import numpy as np
import polars as pl
import pytest

import sim_core
from sim_core.bench.metrics import METRICS, SAVINGS_METRICS
from sim_core.bench.sweep import compare, options_sha256, run_options

POLS = ["local_only", "lowest_carbon", "defer_to_greener"]
TOTALS = [m.name for m in METRICS if m.source == "totals"]


def _same(a: float, b: float) -> bool:
    return a == b or (math.isnan(a) and math.isnan(b))


def test_runs_and_summary_equal_run_totals_exactly(scenario):
    cmp = compare(scenario, POLS, [0, 1, 2], days=1)
    assert cmp.runs.height == 9 and cmp.runs["policy"].to_list() == [p for p in POLS for _ in range(3)]
    assert len(cmp.computed) == 9 and not cmp.reused
    totals = {(p, s): sim_core.run(scenario, p, seed=s, days=1).totals for p in POLS for s in (0, 1, 2)}
    for (p, s), tot in totals.items():
        row = cmp.runs.filter((pl.col("policy") == p) & (pl.col("seed") == s)).row(0, named=True)
        for m in TOTALS:
            assert _same(row[m], float(tot[m])), (p, s, m, row[m], tot[m])
    by = {(r["policy"], r["metric"]): r for r in cmp.summary.iter_rows(named=True)}
    for p in POLS:
        for m in TOTALS:
            vals = [float(totals[p, s][m]) for s in (0, 1, 2)]
            r = by[p, m]
            assert r["n_seeds"] == 3
            assert _same(r["mean"], statistics.fmean(vals)), (p, m)
            assert _same(r["std"], statistics.stdev(vals)), (p, m)
        for m in SAVINGS_METRICS:
            if any(totals["local_only", s][m] == 0 for s in (0, 1, 2)):  # local_only transfers nothing
                assert by[p, m]["savings_vs_local_only_pct"] is None, (p, m)
                continue
            per_seed = [100.0 * (totals["local_only", s][m] - totals[p, s][m]) / totals["local_only", s][m]
                        for s in (0, 1, 2)]
            assert by[p, m]["savings_vs_local_only_pct"] == statistics.fmean(per_seed), (p, m)
    # the policies really differ on this bundle (a summary that ignored the policy would fail above)
    assert totals["lowest_carbon", 0]["carbon_kg"] != totals["local_only", 0]["carbon_kg"]
    assert totals["lowest_carbon", 0]["tasks_remote"] > 0 == totals["local_only", 0]["tasks_remote"]


def test_a_sweep_from_a_bundle_directory_holds_no_tasks_and_equals_the_loaded_one(bundle, scenario):
    """Given a path, each run loads and consumes its own tasks (one run's memory, not the sweep's): the metrics are
    those of the sweep over the loaded scenario bit for bit, and the sweep's scenario holds no task column."""
    from sim_core.scenario import TASK_COLUMNS

    by_path = compare(bundle, POLS, [0, 1], days=1)
    loaded = compare(scenario, POLS, [0, 1], days=1)
    assert by_path.runs.equals(loaded.runs)
    assert all(getattr(by_path.scenario, c) is None for c in TASK_COLUMNS)
    assert all(getattr(loaded.scenario, c) is not None for c in TASK_COLUMNS)
    # the optimum reads the tasks: a sweep that solves it keeps them
    assert compare(bundle, ["local_only"], [0], days=1, optimum=True).scenario.task_id is not None


def test_one_seed_summary_is_the_run_itself(scenario):
    cmp = compare(scenario, ["lowest_price"], [5], days=1)
    tot = sim_core.run(scenario, "lowest_price", seed=5, days=1).totals
    s = cmp.summary.filter(pl.col("metric") == "cost_usd").row(0, named=True)
    assert s["mean"] == tot["cost_usd"] and s["n_seeds"] == 1
    assert math.isnan(s["std"]) and math.isnan(s["ci95"])  # undefined with one seed, not 0
    assert s["savings_vs_local_only_pct"] is None  # no local_only in the sweep


def test_utilisation_is_capacity_weighted(scenario):
    cmp = compare(scenario, ["round_robin"], [0], days=1)
    steps = sim_core.run(scenario, "round_robin", seed=0, days=1).steps
    n = steps["step"].n_unique()
    want = steps["busy_cores"].sum() / (n * scenario.cap_cores.sum())
    got = cmp.runs["mean_cpu_util_frac"][0]
    assert got == pytest.approx(want, rel=1e-12) and got > 0
    # not the unweighted mean of per-DC utilisation (capacities differ: 50k / 85k / 110k cores)
    assert got != pytest.approx(steps["cpu_util"].mean(), rel=1e-6)


def test_option_keys(scenario):
    a = run_options(scenario, days=1)
    assert a["start_step"] == 0 and a["steps"] == 96 and a["sla_multiplier"] == 1.5
    assert options_sha256(a) == options_sha256(run_options(scenario, steps=96))  # same window, same run
    assert options_sha256(run_options(scenario, days=1, sla_multiplier=2)) == \
        options_sha256(run_options(scenario, days=1, sla_multiplier=2.0))
    assert options_sha256(a) != options_sha256(run_options(scenario, days=1, sla_multiplier=2.0))
    assert options_sha256(a) != options_sha256(run_options(scenario, days=1, start=4))
    with pytest.raises(ValueError, match="cannot be keyed"):
        run_options(scenario, days=1, sla_multiplier=np.ones(scenario.n_tasks))


@pytest.mark.parametrize(("policies", "seeds", "msg"), [
    (["nope"], [0], "unknown policy 'nope'"),
    (["local_only", "local_only"], [0], "policy given twice"),
    ([], [0], "no policy"),
    (["local_only"], [-1], "not a non-negative integer"),
    (["local_only"], [1, 1], "seed given twice"),
])
def test_bad_policies_and_seeds(scenario, policies, seeds, msg):
    with pytest.raises(ValueError, match=msg):
        compare(scenario, policies, seeds, days=1)
