"""The jitted passes that build a run's results give exactly what the numpy expressions they replaced gave
(sim_core.result, sim_core.drain): the same step of every time, the same counts, the same terms summed in the
same order, on ordinary values and on hostile ones (NaN, infinities, negative and signed-zero sizes)."""

from __future__ import annotations

import numpy as np
import pytest

from sim_core import engine as E
from sim_core.drain import _work_terms
from sim_core.result import TALLIES, _floor_div, _task_tallies
from sim_core.simulator import floor_div

STEP_S = E.STEP_S


def test_floor_div_is_python_floor_division_at_step_boundaries_and_beyond():
    rng = np.random.default_rng(0)
    k = rng.integers(-40_000, 40_000, 20_000).astype(np.float64)
    edges = k * STEP_S
    x = np.concatenate([
        rng.uniform(-4e7, 4e7, 20_000), edges, np.nextafter(edges, -np.inf), np.nextafter(edges, np.inf),
        rng.uniform(-1e12, 1e12, 2_000), [0.0, -0.0, 1e-300, -1e-300, 899.9999999999999, -899.9999999999999],
    ])
    for v in x:
        got, want = _floor_div(float(v), STEP_S), float(v) // STEP_S
        assert got == want and np.copysign(1.0, got) == np.copysign(1.0, want), (v, got, want)
    for v in (np.nan, np.inf, -np.inf):  # non-finite in, non-finite out: never a step
        assert not np.isfinite(_floor_div(v, STEP_S))


def test_the_set_ups_floor_div_is_numpys_floor_division():
    rng = np.random.default_rng(1)
    edges = rng.integers(0, 40_000, 50_000) * STEP_S
    t = np.concatenate([rng.uniform(0, 3.2e7, 100_000), edges, np.nextafter(edges, -np.inf),
                        np.nextafter(edges, np.inf), rng.uniform(-1e12, 1e12, 1000), [0.0, -0.0, 1e-300]])
    got, want = floor_div(t, STEP_S), t // STEP_S
    np.testing.assert_array_equal(got, want)
    assert (np.signbit(got) == np.signbit(want)).all()


def _hostile_tasks(m: int, seed: int):
    rng = np.random.default_rng(seed)
    status = rng.integers(0, 7, m).astype(np.int8)
    start = np.where(rng.random(m) < 0.7, rng.uniform(0, 5e5, m), np.nan)
    arrival = rng.uniform(0, 5e5, m)
    finish = np.where(np.isnan(start), np.nan, start + rng.uniform(0, 1e5, m))
    pick = rng.random(m)
    finish[pick < 0.03] = np.inf
    finish[(pick > 0.03) & (pick < 0.05)] = -np.inf
    finish[(pick > 0.05) & (pick < 0.08)] = np.nan
    duration = rng.uniform(0, 1e5, m)
    duration[pick > 0.97] = np.nan
    duration[(pick > 0.94) & (pick < 0.95)] = -5.0
    duration[(pick > 0.92) & (pick < 0.93)] = -0.0
    duration[(pick > 0.90) & (pick < 0.91)] = np.inf
    cores = rng.choice([0.0, -0.0, 1.0, 4.0, -2.0, np.nan, np.inf, 96.0], m)
    gpus = rng.choice([0.0, 1.0, 8.0, np.nan, -1.0], m)
    rem_p = np.where(rng.random(m) < 0.1, np.nan, rng.uniform(-10, 1e5, m))
    dest = rng.integers(-1, 5, m).astype(np.int32)
    origin = rng.integers(0, 5, m).astype(np.int32)
    violated = rng.integers(0, 2, m).astype(np.int8)
    return status, start, arrival, finish, duration, cores, gpus, rem_p, dest, origin, violated


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_work_terms_sum_to_the_numpy_work_totals(seed):
    status, start, _, finish, duration, cores, gpus, rem_p, *_ = _hostile_tasks(50_000, seed)
    t_end = 3.6e5
    # the numpy expressions sim_core.drain.work_totals evaluated before the pass
    ok = status != E.ST_UNSCHEDULABLE
    started = ~np.isnan(start)
    paused = (status == E.ST_PAUSED) | ((status == E.ST_QUEUED) & started)
    with np.errstate(invalid="ignore", over="ignore"):
        rem = np.where(~started, duration,
                       np.where(paused, rem_p, np.clip(np.nan_to_num(finish, nan=t_end) - t_end, 0.0, None)))
        rem = np.minimum(np.where(ok, rem, 0.0), duration)
        sized = ok & np.isfinite(duration) & (duration >= 0)
        want = []
        for r in (cores, gpus):
            use = sized & np.isfinite(r) & (r >= 0)
            want.append(((r * duration)[use], (r * rem)[use]))
        *terms, counts = _work_terms(status, start, finish, rem_p, duration, cores, gpus, t_end)
    for j, (all_w, left_w) in enumerate(want):
        assert counts[j] == all_w.shape[0]
        np.testing.assert_array_equal(terms[2 * j][:counts[j]], all_w)
        np.testing.assert_array_equal(terms[2 * j + 1][:counts[j]], left_w)
        assert terms[2 * j + 1][:counts[j]].sum().hex() == left_w.sum().hex() or np.isnan(left_w.sum())


@pytest.mark.parametrize("seed", [4, 5])
def test_task_tallies_are_the_numpy_counts_and_mean_wait(seed):
    status, start, arrival, finish, _, _, _, _, dest, origin, violated = _hostile_tasks(50_000, seed)
    t_end = 3.6e5
    cnt, wait = _task_tallies(status, dest, origin, start, arrival, finish, violated, t_end)
    got = dict(zip(TALLIES, cnt.tolist(), strict=True))
    started = ~np.isnan(start)
    assert got["tasks_started"] == started.sum()
    assert got["tasks_completed"] == (started & (finish <= t_end)).sum()
    assert got["tasks_unschedulable"] == (status == E.ST_UNSCHEDULABLE).sum()
    assert got["tasks_pending_at_end"] == (status == E.ST_PENDING).sum()
    assert got["tasks_queued_at_end"] == ((status == E.ST_QUEUED) & ~started).sum()
    assert got["tasks_paused_at_end"] == (status == E.ST_PAUSED).sum()
    assert got["tasks_resuming_at_end"] == ((status == E.ST_QUEUED) & started).sum()
    assert got["tasks_in_transit_at_end"] == (status == E.ST_TRANSIT).sum()
    assert got["tasks_remote"] == ((dest >= 0) & (dest != origin)).sum()
    assert got["sla_violations"] == violated.astype(bool).sum()
    want = np.nanmean(np.where(started, start - arrival, np.nan))
    assert (np.sum(wait) / got["n_waits"]).hex() == want.hex()
