"""Workload realisations: a block bootstrap over whole weeks that keeps the week's shape."""

from __future__ import annotations

import numpy as np
import pytest

from sim_core.realisation import WEEK_S, realise

YEAR_S = 35040 * 900.0


def _arrivals(seed=0, n=20000):
    rng = np.random.default_rng(seed)
    # a load that grows through the year, so weeks differ
    return np.sort(YEAR_S * np.sqrt(rng.uniform(0, 1, n)))


def test_weeks_are_whole_weeks_of_the_bundle_shifted_in_time():
    arr = _arrivals()
    src, new, slot = realise(arr, YEAR_S, np.random.default_rng(1))
    assert np.all(np.diff(new) >= 0) and new.min() >= 0 and new.max() < YEAR_S
    shift = new - arr[src]
    assert np.allclose(shift / WEEK_S, np.round(shift / WEEK_S))  # whole weeks only
    assert np.array_equal(np.floor(new / WEEK_S).astype(int), slot)
    # every slot is one whole source week: its tasks are a contiguous run of bundle rows of one week
    for k in np.unique(slot)[:-1]:
        rows = src[slot == k]
        weeks = np.floor(arr[rows] / WEEK_S)
        assert np.unique(weeks).size == 1 and np.array_equal(rows, np.arange(rows[0], rows[0] + rows.size))
        full = np.flatnonzero(np.floor(arr / WEEK_S) == weeks[0])
        assert rows.size == full.size


def test_seeds_change_the_year_and_the_same_seed_repeats_it():
    arr = _arrivals()
    a = realise(arr, YEAR_S, np.random.default_rng(1))
    b = realise(arr, YEAR_S, np.random.default_rng(1))
    c = realise(arr, YEAR_S, np.random.default_rng(2))
    assert all(np.array_equal(x, y) for x, y in zip(a, b, strict=True))
    assert a[0].size != c[0].size or not np.array_equal(a[0], c[0])


def test_origins_mode_and_short_bundles_keep_the_tasks_as_they_are():
    arr = _arrivals()
    src, new, slot = realise(arr, YEAR_S, np.random.default_rng(1), mode="origins")
    assert np.array_equal(src, np.arange(arr.size)) and np.array_equal(new, arr) and not slot.any()
    day = np.sort(np.random.default_rng(0).uniform(0, 86400, 50))
    src, new, _ = realise(day, 96 * 900.0, np.random.default_rng(1))
    assert np.array_equal(new, day)  # shorter than two full weeks: nothing to draw from
    with pytest.raises(ValueError, match="realisation"):
        realise(arr, YEAR_S, np.random.default_rng(1), mode="shuffle")


def test_a_runs_seed_draws_the_workload_unless_origins_only(tmp_path):
    import sim_core
    from sim_core.testing import tiny_bundle

    n_steps = 4 * 7 * 96  # four weeks
    rng = np.random.default_rng(5)
    arr = np.sort(n_steps * 900 * np.sqrt(rng.uniform(0, 1, 2000)))  # more work in later weeks
    p = tiny_bundle(tmp_path, n_steps=n_steps, tasks={"arrival_ts_utc": arr, "duration_s": np.full(2000, 3000.0)})
    a, b = (sim_core.run(p, "local_only", seed=s) for s in (0, 1))
    assert a.tasks["arrival_ts_utc"].to_list() != b.tasks["arrival_ts_utc"].to_list()
    assert sim_core.run(p, "local_only", seed=0).totals == a.totals  # the same seed, the same year
    # policies compared at one seed see the same realisation (a paired comparison)
    c = sim_core.run(p, "round_robin", seed=0)
    assert c.tasks.sort("task_id")["arrival_ts_utc"].to_list() == a.tasks.sort("task_id")["arrival_ts_utc"].to_list()
    oa, ob = (sim_core.run(p, "local_only", seed=s, workload="origins") for s in (0, 1))
    assert oa.tasks["arrival_ts_utc"].to_list() == ob.tasks["arrival_ts_utc"].to_list()
    assert oa.tasks["task_id"].to_list() == list(range(2000))
    assert oa.tasks["origin"].to_list() != ob.tasks["origin"].to_list()  # the seed still draws the origins
    with pytest.raises(sim_core.RunOptionsError, match="workload"):
        sim_core.run(p, "local_only", workload="shuffled")
