"""Sweep statistics: Student-t CI on hand numbers, savings paired per seed, the Pareto front."""

from __future__ import annotations

import math

import polars as pl
import pytest

from sim_core.bench.metrics import METRICS
from sim_core.bench.stats import mean_ci, pareto_front, summarize, t_ppf
from sim_core.bench.sweep import RunKey, runs_frame


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
