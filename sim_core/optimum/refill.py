"""A local search of the upper bound: move a deadline-meeting run's tasks to cheaper capacity its own run leaves
free (docs/optimum.md "The upper bound: the best schedule found").

The rounded plans book capacity for whole steps against the LP's profile, so the runs they give leave capacity
free where the LP prices a resource-step lowest (on the README week the x1.1 least-slack rounding's run held
1,541 of California's 1,997 GPUs on average over its cheapest eight hours, the LP runs all of them), and run work
in Singapore that the LP runs nowhere. A refill reads the capacity the run held per site and step
(:func:`held_capacity`: a task holds its request from its start to the step boundary at or after its finish,
``engine/queues.py``) and, task by task, most expensive first, moves a task to the cheapest (site, dispatch
step) that meets its deadline with ``WAKE_SPARE`` wakes to spare and fits what is left
(``rounding.refill_kernel``); the new plan is run through the engine, its late tasks are put back where they ran
(:data:`REVERT_RUNS` runs) and then repaired as every candidate is (``search.Evaluator.repair``), and the run is
kept when it meets every deadline and is lower.
"""

from __future__ import annotations

import time

import numpy as np

from ..simulator import Prepared
from .plan import Plan
from .rounding import WAKE_SPARE, refill_kernel, transfer_weights, wake_latency_s
from .search import Candidate, Evaluator, plan_from_run, run_seconds
from .solve import OptimumResult

#: refill rounds at most (each: one refill, its reverts and repairs); the search stops earlier at the first round
#: that finds no lower deadline-meeting run. Search choices, not model parameters: every candidate is an engine
#: run and only runs with no late task bound OPT. Measured on the README week from the x1.1 rounding, repaired
#: (159,362.4 kg): three rounds gave 156,232.4, 155,506.3 and 155,210.9 kg (margin 0.02); from the LP's own
#: assignment (``upper.follow_plan``), repaired (154,679.0 kg), three rounds gave 150,856.7 kg, each round kept,
#: so the search may go on while rounds pay (docs/optimum.md)
REFILL_ROUNDS = 6
#: a task moves only to a slot that costs less than (1 - margin) x its present one at the LP's prices: a
#: move's gain is the LP's estimate, and small ones churn the queues for little (margin 0: 302,412 tasks moved in
#: the first round and 5,597 late, 0.02: 123,893 and 3,509, for nearly the same run after the repair)
REFILL_MARGIN = 0.02
#: runs that put a refill's late tasks back where they ran before the repair moves them
REVERT_RUNS = 2


def held_capacity(prep: Prepared, result, n: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The capacity a run held per datacenter, window step and resource (n_dc, n, 3), and each task's held steps
    (first, last; first > last: none inside the window): a started task holds its request at its datacenter
    from its start's step to the step boundary at or after its finish (``engine/queues.py``)."""
    sc, T = prep.scenario, prep.tasks
    start = run_seconds(prep, result, "start_ts_utc") - prep.t0
    fin = run_seconds(prep, result, "finish_ts_utc") - prep.t0
    dest = result.tasks["dest"].to_physical().fill_null(-1).to_numpy().astype(np.int64)
    step_s = float(sc.step_s)
    ok = np.isfinite(start) & (dest >= 0)
    end = np.where(np.isfinite(fin), fin, step_s * n)
    k0 = np.where(ok, np.maximum(np.floor(np.nan_to_num(start) / step_s), 0), 1).astype(np.int64)
    k1 = np.where(ok, np.minimum(np.ceil(np.nan_to_num(end) / step_s) - 1, n - 1), 0).astype(np.int64)
    live = np.flatnonzero(ok & (k0 <= k1))
    req = np.stack([T.cores, T.gpus, T.mem], axis=1)[live]
    diff = np.zeros((sc.n_dc, n + 1, 3))
    np.add.at(diff, (dest[live], k0[live]), req)
    np.add.at(diff, (dest[live], k1[live] + 1), -req)
    return np.ascontiguousarray(np.cumsum(diff, axis=1)[:, :n]), k0, k1


def _move(prep: Prepared, lower: OptimumResult, plan: Plan, result, order: np.ndarray, margin: float,
          force: bool) -> tuple[Plan, int]:
    """``plan`` with the tasks of ``order`` (in that order) moved by ``rounding.refill_kernel`` against the capacity
    ``result`` (the plan's engine run) held. Returns the new plan and the number of tasks moved."""
    t = time.perf_counter()
    T, C = prep.tasks, prep.ctx
    n = lower.steps
    occ, k0, k1 = held_capacity(prep, result, n)
    site, step = plan.site.copy(), plan.step.copy()
    wake_s = wake_latency_s(prep)
    xfer_w = transfer_weights(prep, n, lower.weights["per_kg"], lower.weights["per_usd"])
    moved = refill_kernel(np.ascontiguousarray(order, dtype=np.int64), T.arrival, T.duration, T.cores, T.gpus, T.mem,
                          T.bw, T.origin, T.deadline, np.ascontiguousarray(C.cap, dtype=np.float64), C.delay_s_per_gb,
                          C.rtt_s, float(C.t0), int(n), np.ascontiguousarray(lower.profile.price), xfer_w,
                          WAKE_SPARE * wake_s, wake_s, occ, k0, k1, float(margin), bool(force), site, step)
    return Plan(site=site, step=step, late=plan.late.copy(), plan_s=time.perf_counter() - t), int(moved)


def refill_schedule(prep: Prepared, lower: OptimumResult, plan: Plan, result,
                    margin: float = REFILL_MARGIN) -> tuple[Plan, int]:
    """``plan`` (whose engine run is ``result``) with tasks moved to cheaper capacity the run leaves free, at the
    LP's prices (``lower.profile.price``): the tasks whose request costs most per second where they run choose
    first (``rounding.refill_kernel``). Returns the new plan and the number of tasks moved."""
    T, n = prep.tasks, lower.steps
    price = lower.profile.price
    live = (plan.site >= 0) & (plan.step < n)
    req = np.stack([T.cores, T.gpus, T.mem], axis=1)
    at = price[np.maximum(plan.site, 0), np.clip(plan.step, 0, n - 1)]
    rate = np.where(live, np.einsum("ij,ij->i", req, at), 0.0)
    return _move(prep, lower, plan, result, np.argsort(-rate, kind="stable"), margin, False)


def relocate_late(prep: Prepared, lower: OptimumResult, plan: Plan, result) -> tuple[Plan, int]:
    """The repair's first move (``search.Evaluator.repair``): ``plan``'s tasks that ran late in ``result`` each
    moved, least slack first, to the cheapest slot (at the LP's prices) that meets the deadline with the wake
    spare in the capacity the run leaves free, if there is one. Returns the new plan and the tasks moved."""
    T = prep.tasks
    late = np.flatnonzero(result.tasks["violated"].to_numpy())
    slack = (T.deadline - T.arrival - T.duration)[late]
    return _move(prep, lower, plan, result, late[np.argsort(slack, kind="stable")], 0.0, True)


def refill(ev: Evaluator, best: Candidate, lower: OptimumResult, rounds: int = REFILL_ROUNDS,
           margin: float = REFILL_MARGIN) -> tuple[Candidate, tuple[float, ...]]:
    """Refill rounds from ``best`` (a deadline-meeting candidate with its engine run): each round refills the
    best run (:func:`refill_schedule`), runs it, puts its late tasks back where they ran, repairs what is
    still late, and keeps the run when it meets every deadline and is lower. Stops at the first round that
    finds nothing lower. Returns the best candidate and the value of each round kept, in order (whether the
    rounds still paid when they stopped)."""
    kept, name = (), f"{best.name}, refilled"
    for _ in range(rounds):
        base = best.plan if best.plan is not None else plan_from_run(ev.prep, best.result)
        plan, moved = refill_schedule(ev.prep, lower, base, best.result, margin)
        if moved == 0:
            break
        cand = ev.plan(name, plan)
        for _ in range(REVERT_RUNS):
            if cand.late == 0:
                break
            late = cand.result.tasks["violated"].to_numpy()
            plan = Plan(site=np.where(late, base.site, plan.site), step=np.where(late, base.step, plan.step),
                        late=plan.late, plan_s=plan.plan_s)
            cand = ev.plan(name, plan)
        cand = ev.repair(cand)
        if cand.late > 0 or cand.value >= best.value:
            break
        cand.name = name
        best, kept = cand, kept + (cand.value,)
    return best, kept


__all__ = ["REFILL_MARGIN", "REFILL_ROUNDS", "REVERT_RUNS", "held_capacity", "refill", "refill_schedule",
           "relocate_late"]
