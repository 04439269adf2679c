"""The optimum bracketed: the LP's lower bound (``optimum.solve``) and an upper bound, a schedule rounded
from the LP's solution (``optimum.rounding``) and run through the engine as a Python policy that follows
it, so its carbon (or cost) is what the engine reports for a real schedule (docs/optimum.md).

Every policy's distance from the optimum OPT of the window (lower <= OPT <= upper) is then known to within
the bracket: (value - upper) / upper <= (value - OPT) / OPT <= (value - lower) / lower.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from ..physics import P_WAKE_S
from ..simulator import Prepared, as_scenario
from .rounding import STEP_S, plan_kernel
from .solve import HORIZON_DAYS, OptimumError, OptimumResult, bound_steps, optimum

#: wake latencies a plan keeps to spare before a task's deadline (managed power)
WAKE_SPARE = 2.0
#: re-runs at most, each with the tasks the engine started too late moved to their arrival step
REPAIRS = 2


@dataclass
class Plan:
    """One decision per task of the window (the engine's task order): where and when to dispatch it."""

    site: np.ndarray  # datacenter (-1: fits none, the engine leaves it unscheduled)
    step: np.ndarray  # window step to dispatch it at (>= the window's steps: not inside the window)
    late: np.ndarray  # 1: no datacenter could finish it by its deadline within the capacity left
    plan_s: float  # time to round (s)


class PlanPolicy:
    """A Python policy (``sim_core.run``'s callable interface) that dispatches each pending task to its
    planned datacenter from its planned step on, and defers it before."""

    __name__ = "optimum_plan"

    def __init__(self, plan: Plan, s0: int):
        self.site = plan.site
        self.step = plan.step
        self.s0 = int(s0)

    def __call__(self, obs: dict) -> np.ndarray:
        idx = obs["pending_index"]
        j = int(obs["step"]) - self.s0
        due = self.step[idx] <= j
        return np.where(due, self.site[idx] + 1, 0).astype(np.int64)


@dataclass
class UpperResult:
    """The engine's totals of the plan-following run (an achievable value: the upper end of the bracket)."""

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
    repairs: int  # re-runs with the late tasks moved to their arrival step (0: the plan met every deadline)
    totals: dict


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


def plan_schedule(prep: Prepared, lower: OptimumResult) -> Plan:
    """Round the LP's solution (``lower.profile``, from ``optimum(..., profile=True)`` on the same window,
    seed and options) to one (datacenter, dispatch step) per task of ``prep``'s window."""
    if lower.profile is None:
        raise OptimumError("the lower bound has no LP profile: compute it with optimum(..., profile=True)")
    if lower.steps != bound_steps(prep) or lower.start_step != prep.s0 or lower.seed != prep.seed:
        raise OptimumError(f"the lower bound's window (step {lower.start_step}, {lower.steps} steps, seed "
                           f"{lower.seed}) is not the run's (step {prep.s0}, {bound_steps(prep)} steps, seed "
                           f"{prep.seed})")
    t = time.perf_counter()
    sc, T, C = prep.scenario, prep.tasks, prep.ctx
    n, s0 = lower.steps, prep.s0
    w_c, w_u = lower.weights["per_kg"], lower.weights["per_usd"]
    opts = prep.options
    carbon = sc.carbon_g_per_kwh[:, s0:s0 + n]
    ci = 0.5 * (carbon[:, None, :] + carbon[None, :, :]) if opts.transfer_emissions == "mean" else \
        np.broadcast_to(carbon[:, None, :], (sc.n_dc, sc.n_dc, n))
    xfer_w = np.ascontiguousarray(w_c * float(opts.transfer_kwh_per_gb) * ci / 1000.0
                                  + w_u * np.asarray(sc.usd_per_gb, dtype=np.float64)[:, :, None])
    # a task that needs a sleeping server waits for its wake, and for a wake group requested later in the same
    # step (docs/simulation.md "Server power states"): twice the wake latency is kept to spare (measured: the
    # longest wait past a dispatch on the benchmark bundle was 1.3 wakes)
    wake = np.array([WAKE_SPARE * float(sc.params[d][P_WAKE_S]) if prep.managed else 0.0 for d in range(sc.n_dc)])
    slack = T.deadline - T.arrival - T.duration
    order = np.lexsort((T.arrival, slack)).astype(np.int64)
    m = T.arrival.shape[0]
    site = np.full(m, -1, np.int64)
    step = np.zeros(m, np.int64)
    late = np.zeros(m, np.int8)
    plan_kernel(order, T.arrival, T.duration, T.cores, T.gpus, T.mem, T.bw, T.origin, T.deadline, C.cap,
                C.delay_s_per_gb, C.rtt_s, float(C.t0), int(n), np.ascontiguousarray(lower.profile.price),
                np.ascontiguousarray(lower.profile.busy), xfer_w, wake, site, step, late)
    return Plan(site=site, step=step, late=late, plan_s=time.perf_counter() - t)


def upper_bound(scenario, lower: OptimumResult, *, start=None, days=None, steps=None, **options) -> UpperResult:
    """Round ``lower`` (``optimum(..., profile=True)``) to a schedule and run it through the engine
    (``sim_core.run`` with :class:`PlanPolicy`) on the same window, seed and run options. A task the engine
    starts past its deadline (it waited longer for a wake than the plan kept to spare) is moved to its arrival
    step and the window run again (``REPAIRS`` times at most; the result reports the last run)."""
    from ..simulator import run

    sc = as_scenario(scenario)
    prep = Prepared(sc, lower.seed, start=start, days=days, steps=steps, **options)
    plan = plan_schedule(prep, lower)
    t = time.perf_counter()
    repairs = 0
    while True:
        res = run(sc, PlanPolicy(plan, prep.s0), seed=lower.seed, start=start, days=days, steps=steps, **options)
        late = res.tasks["violated"].to_numpy()  # (the engine's task order, as the plan's)
        if not late.any() or repairs == REPAIRS:
            break
        # a task the engine started too late (a longer wake wait than the plan kept) goes at its arrival step
        repairs += 1
        arr = np.clip((prep.tasks.arrival - prep.t0) // STEP_S, 0, prep.n - 1).astype(np.int64)
        moved = late & (plan.step > arr)
        if not moved.any():
            break
        plan.step[moved] = arr[moved]
    sim_s = time.perf_counter() - t
    tot = res.totals
    w_c, w_u = lower.weights["per_kg"], lower.weights["per_usd"]
    carbon, cost = tot["carbon_incl_transfer_kg"], tot["cost_incl_transfer_usd"]
    value = carbon if lower.objective == "carbon" else cost if lower.objective == "cost" else w_c * carbon + w_u * cost
    not_started = tot["tasks"] - tot["tasks_started"] - tot["tasks_unschedulable"]
    return UpperResult(objective=lower.objective, value=float(value), carbon_kg=float(carbon), cost_usd=float(cost),
                       energy_kwh=float(tot["total_kwh"]), sla_violations=int(tot["sla_violations"]),
                       tasks_forced=int(tot["tasks_forced"]), tasks_started=int(tot["tasks_started"]),
                       tasks_not_started=int(not_started), planned_late=int(plan.late.sum()),
                       planned_past_window=int((plan.step >= lower.steps).sum()), plan_s=plan.plan_s, sim_s=sim_s,
                       repairs=repairs, totals=dict(tot))


def bracket(scenario, *, seed: int = 0, start=None, days=None, steps=None, objective: str = "carbon",
            horizon_days: float | None = HORIZON_DAYS, lp: dict | None = None, **options) -> Bracket:
    """The optimum of a run window bracketed: the LP's lower bound (:func:`optimum`, ``lp``: its extra
    arguments, e.g. ``formulation``) and the engine's value of the schedule rounded from it."""
    sc = as_scenario(scenario)
    low = optimum(sc, seed=seed, start=start, days=days, steps=steps, objective=objective,
                  horizon_days=horizon_days, profile=True, **(lp or {}), **options)
    up = upper_bound(sc, low, start=start, days=days, steps=steps, **options)
    return Bracket(lower=low, upper=up)


__all__ = ["Bracket", "Plan", "PlanPolicy", "UpperResult", "bracket", "plan_schedule", "upper_bound"]
