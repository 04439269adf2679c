"""Workload realisations: a block bootstrap over whole weeks that keeps the week's shape."""

from __future__ import annotations

import numpy as np
import pytest

from sim_core.realisation import WEEK_S, realise, realise_window, uniforms_from

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


@pytest.mark.parametrize("mode", ["weeks", "origins"])
def test_a_window_is_exactly_its_slice_of_the_whole_year(mode):
    """realise_window builds only the week slots a window overlaps; its tasks must be the whole year's
    tasks in that window, and ``first`` their index among the year's (the draws a run skips)."""
    arr = _arrivals()
    year = realise(arr, YEAR_S, np.random.default_rng(3), mode)
    rng = np.random.default_rng(11)
    windows = [(0.0, YEAR_S), (0.0, 900.0), (YEAR_S - 900.0, YEAR_S), (WEEK_S, 2 * WEEK_S),
               (WEEK_S - 1.0, WEEK_S + 1.0), (52 * WEEK_S + 5.0, YEAR_S), (YEAR_S, YEAR_S + 900.0)]
    windows += [tuple(sorted(rng.uniform(0, YEAR_S, 2))) for _ in range(40)]
    for t_lo, t_hi in windows:
        w = realise_window(arr, YEAR_S, np.random.default_rng(3), mode, t_lo, t_hi)
        lo, hi = np.searchsorted(year[1], [t_lo, t_hi], side="left")
        assert w.first == lo, (t_lo, t_hi)
        for got, want in zip(w.rows, year, strict=True):
            assert np.array_equal(got, want[lo:hi]), (t_lo, t_hi)
        assert w.identity == np.array_equal(year[0], np.arange(arr.size))


def test_identity_is_exact_when_the_draws_repeat_the_bundle():
    """Two full weeks: each seed draws one of four orders, one of them the bundle itself; the flag must
    say which (it decides whether a run renumbers its task ids)."""
    two = np.sort(np.random.default_rng(0).uniform(0, 2 * WEEK_S, 300))
    seen = set()
    for seed in range(40):
        year = realise(two, 2 * WEEK_S, np.random.default_rng(seed))
        w = realise_window(two, 2 * WEEK_S, np.random.default_rng(seed), "weeks", 0.0, WEEK_S)
        same = np.array_equal(year[0], np.arange(two.size)) and np.array_equal(year[1], two)
        assert w.identity == same
        seen.add(same)
    assert seen == {True, False}


@pytest.mark.parametrize("first", [0, 1, 7, 12345])
def test_uniforms_from_skips_exactly_the_first_draws(first):
    want = np.random.Generator(np.random.PCG64(42)).random(first + 1000)[first:]
    got = uniforms_from(np.random.Generator(np.random.PCG64(42)), first, 1000)
    assert np.array_equal(got, want)


def test_a_runs_window_has_the_tasks_origins_and_draws_of_its_whole_year(tmp_path):
    """A run over a window is the whole-year run's tasks in that window: same rows, arrivals, ids,
    origins and policy uniforms (the set-up builds only the window, skipping the year's other draws)."""
    import sim_core
    from sim_core.simulator import Prepared
    from sim_core.testing import reference_bundle

    sc = sim_core.load(reference_bundle(tmp_path, n_tasks=40_000, n_steps=96 * 7 * 5 + 13, name="win"))
    for workload in ("weeks", "origins"):
        for seed in (0, 5):
            whole = Prepared(sc, seed, workload=workload)
            for start, steps in ((0, 96), (96 * 9 + 7, 96 * 8), (96 * 7 * 5 - 3, 16), (5, 96 * 7 * 5 + 8)):
                w = Prepared(sc, seed, start=start, steps=steps, workload=workload)
                sl = slice(w.lo, w.hi)
                assert w.hi - w.lo == w.tasks.arrival.shape[0] > 0
                for f in w.tasks._fields:
                    assert np.array_equal(getattr(w.tasks, f), getattr(whole.tasks, f)[sl]), (workload, seed, f)
                assert np.array_equal(w.task_id, whole.task_id[sl])
