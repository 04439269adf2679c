"""Sizing a site for its demand: the arithmetic, conservation, and the largest-task floor."""

from __future__ import annotations

import datetime as dt

import numpy as np
import polars as pl
import pytest

from gridshift.errors import GridshiftError
from gridshift.origin import local_hours, probabilities
from scenario_builder import sizing

YEAR = 2023
START = dt.datetime(YEAR, 1, 1, tzinfo=dt.UTC)
N = 35040


def _tasks(arrival_s, duration_s, cores, gpus=None, mem=None) -> pl.DataFrame:
    n = len(arrival_s)
    us = (np.asarray(arrival_s, dtype=np.float64) * 1e6).astype(np.int64) + int(START.timestamp()) * 1_000_000
    return pl.DataFrame({
        "arrival_ts_utc": pl.Series(us).cast(pl.Datetime("us")).dt.replace_time_zone("UTC"),
        "duration_s": np.asarray(duration_s, dtype=np.float64), "cpu_cores": np.asarray(cores, dtype=np.float64),
        "gpus": np.asarray(gpus if gpus is not None else np.zeros(n), dtype=np.float64),
        "mem_gb": np.asarray(mem if mem is not None else np.ones(n), dtype=np.float64),
    })


def test_demand_is_booked_by_the_seconds_inside_each_step():
    # one task of 8 cores from 100 s to 100 + 2000 s: 800 s in step 0, 900 in step 1, 300 in step 2
    t = _tasks([100.0], [2000.0], [8.0])
    d = _demand(t, np.ones((1, N))).of("cpu_cores")
    np.testing.assert_allclose(d[0, :4], [8 * 800 / 900, 8.0, 8 * 300 / 900, 0.0], rtol=0, atol=1e-12)


def test_demand_is_conserved_and_split_by_origin_probability():
    rng = np.random.default_rng(3)
    n = 5000
    arr = np.sort(rng.uniform(0, N * 900 - 1, n))
    t = _tasks(arr, rng.uniform(60, 20 * 3600, n), rng.choice([1.0, 4.0, 16.0], n))
    tz = ["Europe/Berlin", "Asia/Singapore", "America/Los_Angeles"]
    probs = probabilities([0.22, 0.25, 0.18], local_hours(tz, START, N, 900))
    d = _demand(t, probs).of("cpu_cores")
    inside = np.minimum(arr + t["duration_s"].to_numpy(), N * 900) - arr  # seconds inside the year
    assert d.sum() * 900 == pytest.approx(float((t["cpu_cores"].to_numpy() * inside).sum()), rel=1e-9)
    ja = (arr // 900).astype(int)
    for k in range(3):  # each site's core-seconds are the tasks' core-seconds weighted by that site's probability
        want = float((probs[k, ja] * t["cpu_cores"].to_numpy() * inside).sum())
        assert d[k].sum() * 900 == pytest.approx(want, rel=1e-9)


def test_capacity_is_mean_demand_over_target_in_whole_servers_and_never_below_the_largest_task():
    # a constant load of 100 cores and 3 GPUs at one site, plus one 200-core task for a minute
    step = 900.0
    arr = np.arange(N) * step
    t = _tasks(np.r_[arr, 10.0], np.r_[np.full(N, step), 60.0], np.r_[np.full(N, 100.0), 200.0],
               gpus=np.r_[np.full(N, 3.0), 0.0], mem=np.r_[np.full(N, 50.0), 1.0])
    (s,) = sizing.size_sites(_demand(t.sort("arrival_ts_utc")), ["DE-LU"], target_utilization=0.5,
                             cores_per_server=64.0)
    mean_cores = 100.0 + 200.0 * 60 / (N * 900)
    assert s.mean_demand["cpu_cores"] == pytest.approx(mean_cores, rel=1e-12)
    assert s.capacity["total_cores"] == 256.0  # 100.0004 / 0.5 = 200.0008 cores -> 4 servers of 64
    # 3 / 0.5 = 6 GPUs; memory (50 + 1 GB x 60 s of the year) / 0.5 = 100.0000038 -> 101 whole GB
    assert s.capacity["total_gpus"] == 6.0 and s.capacity["total_mem_gb"] == 101.0
    (big,) = sizing.size_sites(_demand(t.sort("arrival_ts_utc")), ["DE-LU"], target_utilization=1.0,
                               cores_per_server=64.0)
    assert big.capacity["total_cores"] == 256.0  # 100 cores at 100 % -> 2 servers, but the 200-core task needs 4


def test_refusals():
    t = _tasks([0.0], [60.0], [1.0])
    with pytest.raises(GridshiftError, match="target-utilization"):
        sizing.size_sites(_demand(t), ["DE-LU"], target_utilization=0.0)
    with pytest.raises(GridshiftError, match="without tasks"):
        sizing.size_sites(_demand(t.head(0)), ["DE-LU"])
    with pytest.raises(ValueError, match="8760 steps, the year has 35040"):
        sizing.Demand(np.ones((1, 8760)), YEAR)


def test_demand_added_batch_by_batch_is_the_demand_of_all():
    # the export streams a year too large to hold through Demand.add: the sums depend on the batches only in their
    # last bits (the whole steps' + and - ends interleave by batch), the capacities and the record not at all
    rng = np.random.default_rng(11)
    n = 20_000
    arr = np.sort(rng.uniform(-3600, N * 900 + 3600, n)).clip(0, N * 900 - 1)
    t = _tasks(arr, rng.uniform(60, 30 * 3600, n), rng.uniform(0.5, 96, n), gpus=rng.choice([0.0, 0.5, 8.0], n),
               mem=rng.uniform(1, 512, n))
    tz, w = ["Europe/Berlin", "Asia/Kolkata", "America/Los_Angeles"], [0.22, 0.25, 0.18]
    whole = sizing.Demand.of_sites(tz, w, YEAR)
    whole.add(t)
    parts = sizing.Demand.of_sites(tz, w, YEAR)
    for lo, hi in ((0, 1), (1, 7_000), (7_000, 7_000), (7_000, n)):
        parts.add(t[lo:hi])
    for column, _ in sizing.RESOURCES:
        np.testing.assert_allclose(parts.of(column), whole.of(column), rtol=1e-12, atol=1e-9, err_msg=column)
    assert parts.n_tasks == n and np.array_equal(whole.biggest, parts.biggest)
    a = sizing.size_sites(whole, ["DE-LU", "IN-WE", "US-CAL-CISO"])
    b = sizing.size_sites(parts, ["DE-LU", "IN-WE", "US-CAL-CISO"])
    assert [x.record() for x in a] == [x.record() for x in b]


def _demand(t: pl.DataFrame, probs: np.ndarray | None = None) -> sizing.Demand:
    """The demand of tasks ``t`` with origin probabilities ``probs`` (default: one site in Berlin)."""
    d = sizing.Demand.of_sites(["Europe/Berlin"], [1.0], YEAR) if probs is None else sizing.Demand(probs, YEAR)
    d.add(t)
    return d
