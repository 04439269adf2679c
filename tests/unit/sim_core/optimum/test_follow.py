"""The LP's own assignment of whole tasks (``optimum.follow``): released members of a class take its fluid cells
earliest deadline first, datacenters within a step in order, none before its release nor past the class's work;
the plan made of it (``upper.follow_plan``) starts every task from its arrival step and meets its deadline with the
wake spare wherever any step does."""

from __future__ import annotations

import numpy as np
import pytest

from sim_core.optimum import OptimumError, optimum
from sim_core.optimum.follow import follow_cells
from sim_core.optimum.rounding import STEP_S, WAKE_SPARE, wake_latency_s
from sim_core.optimum.upper import FOLLOW_NAME, follow_plan, upper_bound
from sim_core.simulator import Prepared


def test_members_take_cells_in_deadline_order():
    cells = dict(cell_cls=np.zeros(4, np.int64), cell_dc=np.zeros(4, np.int64),
                 cell_step=np.array([3, 0, 2, 1]), y=np.ones(4))
    deadline = np.array([40.0, 10.0, 30.0, 20.0])
    site, step = follow_cells(np.zeros(4, np.int64), np.zeros(4, np.int64), deadline, np.ones(4), **cells)
    assert step.tolist() == [3, 0, 2, 1]
    assert site.tolist() == [0, 0, 0, 0]


def test_datacenters_within_a_step_in_order_and_by_their_share():
    # one step: 1 resource-step at datacenter 0, 2 at datacenter 1; three members of 1 each
    site, step = follow_cells(np.zeros(3, np.int64), np.zeros(3, np.int64), np.array([1.0, 2.0, 3.0]), np.ones(3),
                              np.zeros(2, np.int64), np.array([1, 0]), np.zeros(2, np.int64), np.array([2.0, 1.0]))
    assert site.tolist() == [0, 1, 1]
    assert step.tolist() == [0, 0, 0]


def test_no_cell_past_the_class_work_or_across_classes():
    # class 0 has 1.5 resource-steps, class 1 has 1; class 0's third member and a task of no class get none
    cls = np.array([0, 0, 0, 1, -1])
    site, step = follow_cells(cls, np.zeros(5, np.int64), np.array([1.0, 2.0, 3.0, 1.0, 1.0]), np.ones(5),
                              np.array([0, 0, 1]), np.array([0, 1, 2]), np.array([0, 5, 7]), np.array([1.0, 0.5, 1.0]))
    assert site.tolist() == [0, 1, -1, 2, -1]
    assert step.tolist() == [0, 5, -1, 7, -1]
    # cells at 0 carry no work
    site, _ = follow_cells(np.zeros(1, np.int64), np.zeros(1, np.int64), np.ones(1), np.ones(1), np.zeros(1, np.int64),
                           np.zeros(1, np.int64), np.zeros(1, np.int64), np.zeros(1))
    assert site.tolist() == [-1]


def test_released_members_earliest_deadline_first_never_before_release():
    # one class, one resource-step per step 0..3; member 0 (deadline 10) is released at step 2, so the members
    # released at 0 take steps 0 and 1 by deadline, then member 0 (now the earliest) step 2, member 3 step 3
    cells = dict(cell_cls=np.zeros(4, np.int64), cell_dc=np.zeros(4, np.int64), cell_step=np.arange(4),
                 y=np.ones(4))
    release = np.array([2, 0, 0, 0])
    deadline = np.array([10.0, 40.0, 20.0, 30.0])
    site, step = follow_cells(np.zeros(4, np.int64), release, deadline, np.ones(4), **cells)
    assert step.tolist() == [2, 3, 0, 1]
    assert (step >= release).all()
    # a member released after the class's last cell, and a member whose deadline is NaN (last), get what is left
    site, step = follow_cells(np.zeros(3, np.int64), np.array([0, 9, 0]), np.array([np.nan, 1.0, 2.0]),
                              np.ones(3), **cells)
    assert step.tolist() == [1, -1, 0]
    # a cell's work before any release stays on the curve: both members start where they may, at step 1
    site, step = follow_cells(np.zeros(2, np.int64), np.array([1, 1]), np.array([1.0, 2.0]), np.ones(2),
                              np.zeros(3, np.int64), np.zeros(3, np.int64), np.array([0, 1, 2]),
                              np.array([1.0, 1.0, 1.0]))
    assert step.tolist() == [1, 1]


@pytest.fixture(scope="module")
def lower(sites):
    return optimum(sites, seed=0, days=1, profile=True)


def test_follow_plan_meets_deadlines_from_the_arrival_step(sites, lower):
    prep = Prepared(sites, 0, days=1)
    prof = lower.profile
    assert (prof.site >= 0).sum() > 0.9 * prof.site.shape[0]  # the LP runs nearly all of them in the window
    plan = follow_plan(prep, lower)
    T, C = prep.tasks, prep.ctx
    n, t0 = lower.steps, float(C.t0)
    arr = np.clip(np.floor((T.arrival - t0) / STEP_S), 0, n - 1)
    assert (plan.site >= 0).all() and (plan.step >= arr).all()
    placed = prof.site >= 0  # the LP's reading itself places no member before its release
    assert (prof.step[placed] >= arr[placed]).all()
    o = T.origin.astype(np.int64)
    d = plan.site
    delay = np.where(d == o, 0.0, T.bw * C.delay_s_per_gb[o, d] + C.rtt_s[o, d])
    fin = np.maximum(t0 + STEP_S * plan.step, T.arrival) + delay + WAKE_SPARE * wake_latency_s(prep)[d] + T.duration
    ok = plan.late == 0
    assert (fin[ok] <= T.deadline[ok] + 1e-6).all()
    # where the plan keeps the LP's cell, it keeps its datacenter and starts no earlier than the cell
    kept = ok & (prof.site == d) & (prof.site >= 0)
    assert kept.sum() > 0.5 * kept.shape[0]
    assert (plan.step[kept] <= np.maximum(prof.step[kept], arr[kept])).all()


def test_follow_plan_refuses_another_window_or_no_profile(sites, lower):
    with pytest.raises(OptimumError, match="is not the run's"):
        follow_plan(Prepared(sites, 1, days=1), lower)
    with pytest.raises(OptimumError, match="no LP profile"):
        follow_plan(Prepared(sites, 0, days=1), optimum(sites, seed=0, days=1))


def test_the_assignment_is_a_candidate_of_the_upper_bound_run_through_the_engine(sites, lower):
    up = upper_bound(sites, lower, days=1, heuristics=(), search_runs=0, variants=(), refill_rounds=0)
    value, late = up.candidates[FOLLOW_NAME]
    assert value >= lower.value  # an engine run of the window: never below the bound
    assert up.value <= min(v for v, n_late in up.candidates.values() if n_late == 0)
    off = upper_bound(sites, lower, days=1, heuristics=(), search_runs=0, variants=(), refill_rounds=0, follow=False)
    assert FOLLOW_NAME not in off.candidates and off.runs < up.runs
