"""The optimum bracketed: the LP's lower bound (``optimum.solve``) and an upper bound, the best schedule found
(``optimum.search``: the schedule rounded from the LP's solution here, ``optimum.rounding``, strong heuristics'
runs, their late tasks repaired, a local search), each run through the engine, so its carbon (or cost) is what
the engine reports for a real schedule (docs/optimum.md).

Every policy's distance from the optimum OPT of the window (lower <= OPT <= upper) is then known to within
the bracket: (value - upper) / upper <= (value - OPT) / OPT <= (value - lower) / lower.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field

import numpy as np

from ..simulator import Prepared, as_scenario
from .plan import Plan, PlanPolicy
from .refill import REFILL_ROUNDS, REFILL_SPARES, refill, relocate_late
from .rounding import STEP_S, WAKE_SPARE, plan_kernel, transfer_weights, wake_latency_s
from .search import HEURISTICS, SEARCH_RUNS, Evaluator, arrival_step, drop_results, improve
from .solve import HORIZON_DAYS, OptimumError, OptimumResult, bound_steps, optimum

#: further roundings of the LP's solution run as candidates: (capacity booked past a task's planned finish, in
#: wake latencies; the weight of the site's largest price in the cost of load beyond the LP's profile, the rest
#: the step's own price; the capacity booked against, x each site's). The plan's (``WAKE_SPARE``, 1.0, 1.0)
#: books whole wake spares within the capacity and sends load beyond the profile where the LP prices it lowest,
#: which packs the clean sites less than the LP does (on the README week the LP runs 1 % of the GPU-hours in
#: Singapore, the plan 26 %); these pack them tighter, up to over-booking them and leaving the engine's queues to
#: absorb it, at the price of late tasks that the repair moves. Search choices, not model parameters: every
#: candidate is an engine run and only deadline-meeting runs bound OPT. Measured on the README week (one
#: rounding each, up to 12 repairs; docs/optimum.md): 1,784.8 kg (the plan), 1,730.4 (1, 0, 1), 1,699.5 (0, 0, 1:
#: 56 late, none after 4 repairs), 1,671.9 (0, 0, 1.05: 316 late, none after 10), 1,656.8 (0, 0, 1.07),
#: 1,649.5 (0, 0, 1.08: 718 late, none after 7); from x1.1 on (1,237 late and more) the repair leaves 300-460 late.
#: On the source-size README week (the LP pricing elastic work's speed-up, repair patience 8): x1 166,645.7 kg,
#: x1.05 163,344.4, x1.08 161,936.4, x1.1 160,255.5 (53,844 late, none after the repair); x1.12 ran higher
#: (162,770.6, measured with a repair move since removed). An optional fourth element, the order tasks are placed in
#: (``ROUNDING_ORDERS``; default least slack first): placed in order of arrival and over-booked x1.1, the rounding
#: runs at 153,184.5 kg with 177,988 late tasks, 155,697.8 kg once repaired with relocations (``search.
#: RELOCATE_RUNS``; x1.05: 156,160.1; least slack first x1.1: 159,362.4), the best start of the refills
#: (``optimum.refill``; docs/optimum.md).
PLAN_VARIANTS = ((0.0, 0.0, 1.0), (0.0, 0.0, 1.05), (0.0, 0.0, 1.08), (0.0, 0.0, 1.1), (0.0, 0.0, 1.1, "arrival"))
#: the candidate name of the LP's own assignment of whole tasks (:func:`follow_plan`)
FOLLOW_NAME = "LP assignment"
#: the orders a rounding places tasks in: the fewest choices first (least slack, then arrival), or as they arrive
ROUNDING_ORDERS = ("slack", "arrival")
#: the planning LP's capacity divisor: ``bracket`` also solves the LP on each site's capacity / ``PLAN_HOLD``
#: (``optimum(..., capacity_scale=1 / PLAN_HOLD)``, not a bound) and runs its assignment of whole tasks as a
#: candidate, repaired and refilled at that LP's prices. The engine holds a task's resources to the step boundary
#: after its finish (``engine/queues.py``), which the bound's capacity rows do not count: on the README week the
#: clean sites held 1.11 x their busy GPU-time in the upper end's run (docs/optimum.md), so the bound's LP packs them
#: fuller than whole tasks can. A search choice, not a model parameter (the candidate is an engine run that must
#: meet every deadline). Measured on the README week (2026-12-02, a script around this LP, ``follow_plan``, the
#: repair and ``refill``): its assignment 146,593.0 kg with 383,489 late (the bound's: 146,197.3, 459,580), repaired
#: 152,836.4 kg (the bound's: 154,146.1), its first two refill rounds 150,339.0 and 149,629.6 kg (the bound's
#: assignment: 151,585.1 and 150,841.0, twenty rounds to 149,810.5); in ``bench_optimum.py``'s bracket, repaired
#: 152,941.7 kg and fourteen rounds to 148,850.8, bracket 9.70 % (BENCHMARKS.md)
PLAN_HOLD = 1.11
#: that candidate's repair budget (re-runs at most, patience): its run starts with more tasks late in the queues of
#: packed sites than the roundings' (measured: the default budget stopped at 10 late after 28 re-runs, patience 8;
#: patience 25 reached none after 33)
PLAN_REPAIR = (90, 25)


@dataclass
class UpperResult:
    """The best schedule found, run through the engine (an achievable value: the upper end of the bracket when
    ``sla_violations`` is 0), and how it was found."""

    objective: str
    value: float  # the objective of the run (kg, USD or their weighted sum)
    carbon_kg: float  # carbon_incl_transfer_kg of the run
    cost_usd: float  # cost_incl_transfer_usd of the run
    energy_kwh: float  # facility energy of the run
    sla_violations: int  # tasks started past their deadline's reach (engine count)
    tasks_forced: int  # tasks the engine sent to their origin at their deadline (none if the plan holds)
    tasks_started: int
    tasks_not_started: int  # pending, queued or in transit at the end (planned past the window's end)
    planned_late: int  # tasks no candidate could finish by their deadline (dispatched as early as possible)
    planned_past_window: int  # tasks planned to start after the bound's steps (their deadline allows it)
    plan_s: float
    sim_s: float  # the engine's runs, repairs included
    repairs: int  # re-runs of the LP plan with its late tasks started earlier (0: it met every deadline)
    totals: dict  # the engine's totals of the best candidate's run
    source: str = "LP plan"  # which candidate is the best: the LP plan, a heuristic, repaired, or a crossover
    runs: int = 1  # engine runs in all (candidates, repairs, local search)
    search_accepted: int = 0  # local-search moves kept
    refill_values: tuple = ()  # the best run's value after each refill round kept (``optimum.refill``), in order
    refill_from: float = float("nan")  # the value of the run the refill rounds started from (NaN: none ran)
    refill_spares: tuple = ()  # each kept round's wake spare (``refill.REFILL_SPARES``), as refill_values
    plan_value: float = float("nan")  # the LP plan's run (after its repairs)
    plan_late: int = 0
    candidates: dict = field(default_factory=dict)  # every candidate's (value, late tasks), by name
    run: object = field(default=None, repr=False)  # the best candidate's sim_core.RunResult (its steps, tasks)

    @property
    def refills(self) -> int:
        """Refill rounds kept (``optimum.refill``)."""
        return len(self.refill_values)


@dataclass
class Bracket:
    """The optimum of a window bracketed: ``lower.value <= OPT <= upper.value``."""

    lower: OptimumResult
    upper: UpperResult

    @property
    def width(self) -> float:
        """(upper - lower) / lower."""
        return (self.upper.value - self.lower.value) / self.lower.value

    def distance(self, value: float) -> tuple[float, float]:
        """The range of (value - OPT) / OPT: from (value - upper) / upper to (value - lower) / lower."""
        return (value - self.upper.value) / self.upper.value, (value - self.lower.value) / self.lower.value


def _check_profile(prep: Prepared, lower: OptimumResult) -> None:
    """The plans read ``lower``'s LP profile per step and task of ``prep``'s window: both must be the same."""
    if lower.profile is None:
        raise OptimumError("the lower bound has no LP profile: compute it with optimum(..., profile=True)")
    if lower.steps != bound_steps(prep) or lower.start_step != prep.s0 or lower.seed != prep.seed:
        raise OptimumError(f"the lower bound's window (step {lower.start_step}, {lower.steps} steps, seed "
                           f"{lower.seed}) is not the run's (step {prep.s0}, {bound_steps(prep)} steps, seed "
                           f"{prep.seed})")


def plan_schedule(prep: Prepared, lower: OptimumResult, hold_wakes: float = WAKE_SPARE, overflow: float = 1.0,
                  cap_scale: float = 1.0, order: str = "slack") -> Plan:
    """Round the LP's solution (``lower.profile``, from ``optimum(..., profile=True)`` on the same window,
    seed and options) to one (datacenter, dispatch step) per task of ``prep``'s window. ``hold_wakes``: wake
    latencies of capacity booked past each task's planned finish (the deadline always keeps ``WAKE_SPARE``);
    ``overflow``: the weight of the site's largest price in the cost of load beyond the LP's profile;
    ``cap_scale``: the capacity booked against, x each site's (> 1 over-books it: ``PLAN_VARIANTS``); ``order``:
    the order the tasks are placed in (``ROUNDING_ORDERS``)."""
    _check_profile(prep, lower)
    if not (np.isfinite(cap_scale) and cap_scale > 0):
        raise OptimumError(f"cap_scale must be > 0, got {cap_scale!r}")
    if not (np.isfinite(hold_wakes) and hold_wakes >= 0):
        raise OptimumError(f"hold_wakes must be >= 0 (wake latencies), got {hold_wakes!r}")
    if order not in ROUNDING_ORDERS:
        raise OptimumError(f"order must be one of {ROUNDING_ORDERS}, got {order!r}")
    if not 0.0 <= overflow <= 1.0:
        raise OptimumError(f"overflow must be in [0, 1], got {overflow!r}")
    t = time.perf_counter()
    T, C = prep.tasks, prep.ctx
    n = lower.steps
    w_c, w_u = lower.weights["per_kg"], lower.weights["per_usd"]
    xfer_w = transfer_weights(prep, n, w_c, w_u)
    wake_s = wake_latency_s(prep)
    wake, hold = WAKE_SPARE * wake_s, hold_wakes * wake_s
    slack = T.deadline - T.arrival - T.duration
    keys = (T.arrival, slack) if order == "slack" else (T.arrival,)
    seq = np.lexsort(keys).astype(np.int64)
    m = T.arrival.shape[0]
    site = np.full(m, -1, np.int64)
    step = np.zeros(m, np.int64)
    late = np.zeros(m, np.int8)
    plan_kernel(seq, T.arrival, T.duration, T.cores, T.gpus, T.mem, T.bw, T.origin, T.deadline, C.cap * cap_scale,
                C.delay_s_per_gb, C.rtt_s, float(C.t0), int(n), np.ascontiguousarray(lower.profile.price),
                np.ascontiguousarray(lower.profile.busy), xfer_w, wake, hold, float(overflow), site, step, late)
    return Plan(site=site, step=step, late=late, plan_s=time.perf_counter() - t)


def follow_plan(prep: Prepared, lower: OptimumResult) -> Plan:
    """The LP's own assignment of whole tasks (``lower.profile.site``/``step``, ``optimum.follow``) made to meet
    the deadlines: a task starts no earlier than its arrival step, and no later than the last step from which it
    finishes by its deadline with ``WAKE_SPARE`` wakes to spare (transfer included); a task with no such step at
    its LP site, or with no LP cell, runs at its origin (from the window's end when its deadline allows it, else
    at the latest step that meets it, else at its arrival step, counted in ``late``). No capacity is booked: the
    engine's queues absorb what the LP's packing leaves to whole tasks (booked against the capacity x1.2 in the
    order of the steps, a task that does not fit taking its cheapest slot, the run was 149,404.2 kg with 328,607
    late, and 245 were still late after the repair, on the README week; docs/optimum.md)."""
    _check_profile(prep, lower)
    t = time.perf_counter()
    T, C = prep.tasks, prep.ctx
    n, t0 = lower.steps, float(C.t0)
    wake = WAKE_SPARE * wake_latency_s(prep)
    o = T.origin.astype(np.int64)
    arr = arrival_step(prep)

    def last_step(d):
        delay = np.where(d == o, 0.0, T.bw * C.delay_s_per_gb[o, d] + C.rtt_s[o, d])
        last = T.deadline - T.duration - delay - wake[d]
        s = np.floor((last - t0) / STEP_S)
        return np.where(last < T.arrival, -1, np.minimum(s, n)).astype(np.int64)

    site = lower.profile.site.copy()
    d = np.where(site >= 0, site, o)
    s_max = last_step(d)
    step = np.where(site >= 0, lower.profile.step, n)
    move = (site < 0) | (s_max < arr)
    d = np.where(move, o, d)
    s_max = np.where(move, last_step(o), s_max)
    late = s_max < arr
    step = np.where(late, arr, np.clip(step, arr, np.maximum(s_max, arr)))
    return Plan(site=d, step=step, late=late.astype(np.int8), plan_s=time.perf_counter() - t)


def variant_name(hold: float, overflow: float, cap_scale: float, order: str = "slack") -> str:
    """The candidate name of a rounding variant (``PLAN_VARIANTS``)."""
    return f"LP plan (hold {hold:g} wakes, overflow {overflow:g}, capacity x{cap_scale:g}" + \
        ("" if order == "slack" else f", {order} order") + ")"


def plan_lp_name(plan_lp: OptimumResult) -> str:
    """The candidate name of a planning LP's assignment (``PLAN_HOLD``)."""
    return f"LP assignment (capacity / {1.0 / plan_lp.capacity_scale:.4g})"


def _add_repaired(ev: Evaluator, cands: list, c, **repair):
    """Append candidate ``c`` to ``cands`` and, if it has late tasks, its repair beside it (:meth:`Evaluator.repair`,
    ``repair``: its arguments); then drop the results the bracket cannot return (:func:`drop_results`). Returns the
    repair (``c`` if none)."""
    r = ev.repair(c, **repair)
    cands += [c] if r is c else [c, r]
    drop_results(cands, ev.prep)
    return r


def upper_bound(scenario, lower: OptimumResult, *, start=None, days=None, steps=None,
                heuristics: tuple[str, ...] = HEURISTICS, search_runs: int = SEARCH_RUNS,
                variants: tuple[tuple, ...] = PLAN_VARIANTS, refill_rounds: int = REFILL_ROUNDS,
                refill_spares: tuple[float, ...] = REFILL_SPARES, follow: bool = True,
                plan_lp: OptimumResult | None = None, **options) -> UpperResult:
    """The best schedule found for the window of ``lower`` (``optimum(..., profile=True)``), run through the engine
    (``sim_core.run``) on the same window, seed and run options (``optimum.search``): the LP's solution rounded to a
    plan (:class:`PlanPolicy`) and to its ``variants`` (``PLAN_VARIANTS``), with ``follow`` the LP's own assignment
    of whole tasks (:func:`follow_plan`, ``optimum.follow``), the runs of the ``heuristics`` (registered policies),
    each candidate's late tasks repaired (moved into capacity its run leaves free, then started earlier),
    ``search_runs`` runs of a local search around the best two, and up to ``refill_rounds`` refills of the best
    (``optimum.refill``: tasks moved to cheaper capacity its run leaves free, in phases of the wake spares
    ``refill_spares``; from a planning LP's candidate at that LP's prices). ``plan_lp``: a planning LP of the same
    window (``optimum(..., capacity_scale=1 / PLAN_HOLD, profile=True)``), whose assignment of whole tasks is a
    candidate too, repaired at its prices with the budget ``PLAN_REPAIR``. The result is the least candidate with no
    late task (an upper bound of OPT), or, if none meets every deadline, the one with the fewest late tasks
    (``sla_violations`` > 0: not a bound)."""
    sc = as_scenario(scenario)
    run_kw = dict(start=start, days=days, steps=steps, **options)
    prep = Prepared(sc, lower.seed, **run_kw)
    plan = plan_schedule(prep, lower)
    ev = Evaluator(sc, prep, lower.objective, lower.weights, run_kw,
                   relocate=lambda p, res: relocate_late(prep, lower, p, res))
    cands: list = []
    lp_run = _add_repaired(ev, cands, ev.plan("LP plan", plan))
    for h in heuristics:
        _add_repaired(ev, cands, ev.run(h, h, None))
    plan_s = plan.plan_s
    for v in variants:
        alt = plan_schedule(prep, lower, *v)
        plan_s += alt.plan_s
        _add_repaired(ev, cands, ev.plan(variant_name(*v), alt))
    if follow:
        alt = follow_plan(prep, lower)
        plan_s += alt.plan_s
        _add_repaired(ev, cands, ev.plan(FOLLOW_NAME, alt))
    if plan_lp is not None:
        _check_profile(prep, plan_lp)
        alt = follow_plan(prep, plan_lp)
        plan_s += alt.plan_s
        c = ev.plan(plan_lp_name(plan_lp), alt)
        c.lp = plan_lp
        _add_repaired(ev, cands, c, runs=PLAN_REPAIR[0], patience=PLAN_REPAIR[1],
                      relocate=lambda p, res: relocate_late(prep, plan_lp, p, res))
    clean = sorted((c for c in cands if c.late == 0), key=lambda c: c.value)
    accepted = 0
    if len(clean) >= 2 and search_runs > 0:
        found, accepted = improve(ev, clean[0], clean[1], search_runs, seed=lower.seed)
        if found is not clean[0]:
            cands.append(found)
            clean.insert(0, found)
            drop_results(cands, prep)
    kept, spares, refill_from = (), (), float("nan")
    if clean and refill_rounds > 0:
        refill_from = clean[0].value
        found, kept, spares = refill(ev, clean[0], clean[0].lp or lower, refill_rounds, spares=refill_spares)
        if found is not clean[0]:
            cands.append(found)
            clean.insert(0, found)
            drop_results(cands, prep)
    best = clean[0] if clean else min(cands, key=lambda c: (c.late, c.value))
    tot = best.totals
    not_started = tot["tasks"] - tot["tasks_started"] - tot["tasks_unschedulable"]
    return UpperResult(objective=lower.objective, value=best.value, carbon_kg=float(tot["carbon_incl_transfer_kg"]),
                       cost_usd=float(tot["cost_incl_transfer_usd"]), energy_kwh=float(tot["total_kwh"]),
                       sla_violations=int(tot["sla_violations"]), tasks_forced=int(tot["tasks_forced"]),
                       tasks_started=int(tot["tasks_started"]), tasks_not_started=int(not_started),
                       planned_late=int(plan.late.sum()), planned_past_window=int((plan.step >= lower.steps).sum()),
                       plan_s=plan_s, sim_s=ev.sim_s, repairs=lp_run.repairs, totals=dict(tot), source=best.name,
                       runs=ev.runs, search_accepted=accepted, refill_values=kept, refill_from=refill_from,
                       refill_spares=spares,
                       plan_value=lp_run.value, plan_late=lp_run.late,
                       candidates={c.name: (c.value, c.late) for c in cands}, run=best.result)


def bracket(scenario, *, seed: int = 0, start=None, days=None, steps=None, objective: str = "carbon",
            horizon_days: float | str | None = HORIZON_DAYS, lp: dict | None = None,
            heuristics: tuple[str, ...] = HEURISTICS, search_runs: int = SEARCH_RUNS,
            variants: tuple[tuple, ...] = PLAN_VARIANTS, refill_rounds: int = REFILL_ROUNDS,
            refill_spares: tuple[float, ...] = REFILL_SPARES, follow: bool = True,
            hold: float | None = PLAN_HOLD, **options) -> Bracket:
    """The optimum of a run window bracketed: the LP's lower bound (:func:`optimum`, ``lp``: its extra
    arguments, e.g. ``formulation``) and the best schedule found (:func:`upper_bound`); with ``follow`` and
    ``hold`` (> 1; None: none) also a planning LP on each site's capacity / ``hold`` (``PLAN_HOLD``), whose
    assignment is a candidate."""
    if hold is not None and not (np.isfinite(hold) and hold > 1.0):
        raise OptimumError(f"hold must be > 1 or None, got {hold!r}")
    sc = as_scenario(scenario)
    low = optimum(sc, seed=seed, start=start, days=days, steps=steps, objective=objective,
                  horizon_days=horizon_days, profile=True, **(lp or {}), **options)
    plan_lp = None
    if follow and hold is not None:
        plan_lp = optimum(sc, seed=seed, start=start, days=days, steps=steps, objective=objective,
                          horizon_days=horizon_days, profile=True, capacity_scale=1.0 / hold, **(lp or {}), **options)
    up = upper_bound(sc, low, start=start, days=days, steps=steps, heuristics=heuristics, search_runs=search_runs,
                     variants=variants, refill_rounds=refill_rounds, refill_spares=refill_spares, follow=follow,
                     plan_lp=plan_lp, **options)
    return Bracket(lower=low, upper=up)


__all__ = ["FOLLOW_NAME", "PLAN_HOLD", "PLAN_REPAIR", "PLAN_VARIANTS", "ROUNDING_ORDERS", "Bracket", "Plan",
           "PlanPolicy", "UpperResult", "bracket", "follow_plan", "plan_lp_name", "plan_schedule", "upper_bound"]
