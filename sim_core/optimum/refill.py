"""A local search of the upper bound: move a deadline-meeting run's tasks to cheaper capacity its own run leaves
free (docs/optimum.md "The upper bound: the best schedule found").

The rounded plans book capacity for whole steps against the LP's profile, so the runs they give leave capacity
free where the LP prices a resource-step lowest (on the README week the x1.1 least-slack rounding's run held
1,541 of California's 1,997 GPUs on average over its cheapest eight hours, the LP runs all of them), and run work
in Singapore that the LP runs nowhere. A refill reads the capacity the run held per site and step
(:func:`held_capacity`: a task holds its request from its start to the step boundary at or after its finish,
``engine/queues.py``) and, task by task, most expensive first, moves a task to the cheapest (site, dispatch
step) that meets its deadline with a spare of wake latencies and fits what is left (``rounding.refill_kernel``);
the new plan is run through the engine, its late tasks are put back where they ran (:data:`REVERT_RUNS` runs) and
then repaired as every candidate is (``search.Evaluator.repair``, its relocations at the round's spare), and the
run is kept when it meets every deadline and is lower. The rounds go in phases of a spare each
(:data:`REFILL_SPARES`): a smaller spare reaches slots closer to the deadlines, and a task that then waits for a
wake past its deadline is put back or repaired as any late task, so only runs that meet every deadline are kept.
"""

from __future__ import annotations

import time

import numpy as np

from ..simulator import Prepared
from .plan import Plan
from .rounding import WAKE_SPARE, refill_kernel, transfer_weights, wake_latency_s
from .search import Candidate, Evaluator, plan_from_run, run_seconds
from .solve import OptimumResult

#: refill rounds at most, over every phase of :data:`REFILL_SPARES` (each round: one refill, its reverts and
#: repairs, about 20 engine runs). Search choices, not model parameters: every candidate is an engine run and only
#: runs with no late task bound OPT. Measured on the README week: at a spare of 2 alone, rounds to convergence (16 at
#: most) kept eleven for 150,403.2 kg against six's 150,595.9 (docs/optimum.md); with each round's repair at its
#: phase's spare, phases capped at six rounds were still paying at the cap (below), so the phases are let run on
REFILL_ROUNDS = 40
#: the wake spare of each phase of refill rounds, in wake latencies (``rounding.WAKE_SPARE`` the plan's): a phase
#: goes on until a round finds no lower deadline-meeting run, then the next begins from the best run; the cycle runs
#: twice, since a round at one spare frees capacity the next phase's spare can use. A search choice (every candidate
#: is an engine run that must meet every deadline), not a model parameter. Measured on the README week with each
#: round's repair at its phase's spare (2026-12-02), from 150,342.7 kg (five rounds at a spare of 2, the sixth
#: found nothing lower): six rounds at 1 gave 150,031.7 kg, six at 0 149,859.5 kg and two more at 2 149,817.1 kg,
#: every round kept but the last; with the repair at the plan's spare, the phase at 0 kept one round
REFILL_SPARES = (WAKE_SPARE, 1.0, 0.0, WAKE_SPARE, 1.0, 0.0)
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
          force: bool, spare: float = WAKE_SPARE) -> tuple[Plan, int]:
    """``plan`` with the tasks of ``order`` (in that order) moved by ``rounding.refill_kernel`` against the capacity
    ``result`` (the plan's engine run) held, each to a slot that meets its deadline with ``spare`` wake latencies
    to spare. Returns the new plan and the number of tasks moved."""
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
                          float(spare) * wake_s, wake_s, occ, k0, k1, float(margin), bool(force), site, step)
    return Plan(site=site, step=step, late=plan.late.copy(), plan_s=time.perf_counter() - t), int(moved)


def refill_schedule(prep: Prepared, lower: OptimumResult, plan: Plan, result, margin: float = REFILL_MARGIN,
                    spare: float = WAKE_SPARE) -> tuple[Plan, int]:
    """``plan`` (whose engine run is ``result``) with tasks moved to cheaper capacity the run leaves free, at the
    LP's prices (``lower.profile.price``), each to a slot that meets its deadline with ``spare`` wake latencies to
    spare: the tasks whose request costs most per second where they run choose first (``rounding.refill_kernel``).
    Returns the new plan and the number of tasks moved."""
    T, n = prep.tasks, lower.steps
    price = lower.profile.price
    live = (plan.site >= 0) & (plan.step < n)
    req = np.stack([T.cores, T.gpus, T.mem], axis=1)
    at = price[np.maximum(plan.site, 0), np.clip(plan.step, 0, n - 1)]
    rate = np.where(live, np.einsum("ij,ij->i", req, at), 0.0)
    return _move(prep, lower, plan, result, np.argsort(-rate, kind="stable"), margin, False, spare)


def relocate_late(prep: Prepared, lower: OptimumResult, plan: Plan, result, spare: float = WAKE_SPARE
                  ) -> tuple[Plan, int]:
    """The repair's first move (``search.Evaluator.repair``): ``plan``'s tasks that ran late in ``result`` each
    moved, least slack first, to the cheapest slot (at the LP's prices) that meets the deadline with ``spare`` wake
    latencies to spare in the capacity the run leaves free, if there is one. Returns the new plan and the tasks
    moved."""
    T = prep.tasks
    late = np.flatnonzero(result.tasks["violated"].to_numpy())
    slack = (T.deadline - T.arrival - T.duration)[late]
    return _move(prep, lower, plan, result, late[np.argsort(slack, kind="stable")], 0.0, True, spare)


def _round(ev: Evaluator, best: Candidate, lower: OptimumResult, margin: float, spare: float, name: str
           ) -> Candidate | None:
    """One refill round from ``best``: refill its run at ``spare``, run it, put its late tasks back where they ran,
    repair what is still late, relocating its late tasks at the same ``spare`` (at the plan's larger spare a late
    task that only a slot nearer its deadline fits finds none, and the repair starts it at its arrival step or its
    origin instead). The new candidate when it meets every deadline and is lower, else None."""
    base = best.plan if best.plan is not None else plan_from_run(ev.prep, best.result)
    plan, moved = refill_schedule(ev.prep, lower, base, best.result, margin, spare)
    if moved == 0:
        return None
    cand = ev.plan(name, plan)
    for _ in range(REVERT_RUNS):
        if cand.late == 0:
            break
        late = cand.result.tasks["violated"].to_numpy()
        plan = Plan(site=np.where(late, base.site, plan.site), step=np.where(late, base.step, plan.step),
                    late=plan.late, plan_s=plan.plan_s)
        cand = ev.plan(name, plan)
    cand = ev.repair(cand, relocate=lambda p, res: relocate_late(ev.prep, lower, p, res, spare))
    if cand.late > 0 or cand.value >= best.value:
        return None
    cand.name, cand.lp = name, best.lp
    return cand


def refill(ev: Evaluator, best: Candidate, lower: OptimumResult, rounds: int = REFILL_ROUNDS,
           margin: float = REFILL_MARGIN, spares: tuple[float, ...] = REFILL_SPARES
           ) -> tuple[Candidate, tuple[float, ...], tuple[float, ...]]:
    """Refill rounds from ``best`` (a deadline-meeting candidate with its engine run), ``rounds`` at most in all,
    in phases of one wake spare each (``spares``): each round refills the best run (:func:`refill_schedule`),
    runs it, puts its late tasks back where they ran, repairs what is still late, and keeps the run when it meets
    every deadline and is lower. A phase ends at its first round that finds nothing lower; a phase whose spare
    already failed on the same best run is skipped (its round would repeat). Returns the best candidate, the value
    of each round kept, in order (whether the rounds still paid when they stopped), and each kept round's spare."""
    kept: tuple[float, ...] = ()
    kept_spares: tuple[float, ...] = ()
    name = f"{best.name}, refilled"
    failed: dict[float, float] = {}  # spare -> the best value its last round could not lower
    left = rounds
    for spare in spares:
        spare = float(spare)
        while left > 0 and failed.get(spare) != best.value:
            left -= 1
            cand = _round(ev, best, lower, margin, spare, name)
            if cand is None:
                failed[spare] = best.value
                break
            best, kept, kept_spares = cand, kept + (cand.value,), kept_spares + (spare,)
    return best, kept, kept_spares


__all__ = ["REFILL_MARGIN", "REFILL_ROUNDS", "REFILL_SPARES", "REVERT_RUNS", "held_capacity", "refill",
           "refill_schedule", "relocate_late"]
