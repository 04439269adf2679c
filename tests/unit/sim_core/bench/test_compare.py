"""compare(): runs and summary equal sim_core.run totals; CI, savings and Pareto arithmetic; option keys."""

from __future__ import annotations

import math
import statistics

import numpy as np
import polars as pl
import pytest

import sim_core
from sim_core.compare import (
    METRICS,
    SAVINGS_METRICS,
    RunKey,
    compare,
    options_sha256,
    pareto_front,
    run_options,
    runs_frame,
    summarize,
)
from sim_core.stats import mean_ci, t_ppf

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


def test_mean_ci_on_hand_numbers():
    assert t_ppf(0.975, 1) == pytest.approx(12.706204736174706, rel=1e-12)
    assert t_ppf(0.975, 2) == pytest.approx(4.302652729749464, rel=1e-10)
    assert t_ppf(0.975, 3) == pytest.approx(3.182446305284263, rel=1e-10)
    assert t_ppf(0.975, 30) == pytest.approx(2.042272456301238, rel=1e-10)
    st = mean_ci([1.0, 2.0, 3.0, 4.0])
    assert st.mean == 2.5 and st.std == pytest.approx(math.sqrt(5 / 3), rel=1e-15)
    assert st.ci95 == pytest.approx(3.182446305284263 * math.sqrt(5 / 3) / 2, rel=1e-10)  # 2.05426...
    one = mean_ci([7.0])
    assert one.n == 1 and one.mean == 7.0 and math.isnan(one.std) and math.isnan(one.ci95)
    same = mean_ci([3.0, 3.0, 3.0])
    assert same.ci95 == 0.0 and same.std == 0.0
    assert math.isnan(mean_ci([1.0, float("nan")]).mean) and mean_ci([]).n == 0


def _hand_runs(rows):
    keys = [RunKey("b", p, s, "v", "0" * 64) for p, s, _ in rows]
    metrics = []
    for _, _, cost in rows:
        m = {name: 1.0 for name in (x.name for x in METRICS)}
        m["cost_usd"] = cost
        metrics.append(m)
    return runs_frame(list(zip(keys, metrics, strict=True)))


def test_savings_paired_per_seed_then_averaged():
    runs = _hand_runs([("local_only", 0, 100.0), ("local_only", 1, 200.0), ("x", 0, 90.0), ("x", 1, 150.0)])
    s = summarize(runs)
    row = s.filter((pl.col("policy") == "x") & (pl.col("metric") == "cost_usd")).row(0, named=True)
    assert row["savings_vs_local_only_pct"] == 17.5  # seeds: 10 % and 25 % (on means it would be 20 %)
    assert row["savings_ci95_pct"] == pytest.approx(12.706204736174706 * math.sqrt(112.5) / math.sqrt(2), rel=1e-10)
    assert row["mean"] == 120.0 and row["ci95_low"] == 120.0 - row["ci95"]
    base = s.filter((pl.col("policy") == "local_only") & (pl.col("metric") == "cost_usd")).row(0, named=True)
    assert base["savings_vs_local_only_pct"] == 0.0
    pue = s.filter((pl.col("policy") == "x") & (pl.col("metric") == "pue")).row(0, named=True)
    assert pue["savings_vs_local_only_pct"] is None  # not a "less is better" resource metric
    zero = summarize(_hand_runs([("local_only", 0, 0.0), ("x", 0, 5.0)]))
    assert zero.filter((pl.col("policy") == "x") & (pl.col("metric") == "cost_usd"))["savings_vs_local_only_pct"][0] \
        is None


def test_pareto_front():
    #          a: cheap+dirty  b: dominated  c: clean+dear  d: middle  e: duplicate of d
    assert pareto_front([1, 3, 5, 2, 2], [9, 9, 1, 4, 4]) == [True, False, True, True, True]
    assert pareto_front([1.0, float("nan")], [1.0, 0.0]) == [True, False]


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
