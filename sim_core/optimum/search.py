"""The upper end of the bracket: the best schedule found, not only the schedule rounded from the LP
(docs/optimum.md "The upper bound: the best schedule found").

Candidates: the rounded LP plan (``upper.plan_schedule``) and the runs of strong heuristics (registered
policies, ``HEURISTICS``). A heuristic's run with late tasks is replayed as a plan (each task dispatched at the
step and to the site the policy chose, :func:`plan_from_run`) and repaired: its late tasks start earlier (their
arrival step), then, if still late, at their origin (no transfer delay). The best candidate is then improved by
a local search: a share of its tasks takes the decisions of the second-best candidate (a crossover), kept when
the engine's run is better and meets every deadline. Every candidate is an engine run of the whole window with
the run's options, so the best one with no late task is an achievable value, an upper bound of OPT.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np

from ..simulator import Prepared
from .plan import Plan, PlanPolicy

#: the heuristics whose runs are candidates (the strongest registered policies on carbon and on cost)
HEURISTICS = ("lowest_carbon", "lowest_price")
#: engine runs at most for repairing one candidate's late tasks; the repair stops earlier when no task is late, or
#: when ``REPAIR_PATIENCE`` runs in a row have not brought the late count to a new low among its runs (the first
#: moves often raise the count above the candidate's own: 8,994 -> 22,578 -> 13,918 -> 9,861; a search budget, not a
#: model parameter: every run is an engine run and only runs with no late task bound OPT). Moving late tasks
#: earlier crowds other steps, so the count falls unevenly: on the source-size README week a patience of 3 left
#: the x 1 and x 1.08 roundings at 19,254 and 36,668 late tasks, a patience of 8 brought both to 0
#: (docs/optimum.md)
REPAIR_RUNS = 30
REPAIR_PATIENCE = 8
#: re-runs of a repair at most whose late tasks are first moved into capacity the run leaves free (``relocate``,
#: ``refill.relocate_late``), before the moves to the arrival step and the origin. Measured on the README week:
#: the arrival-ordered rounding over-booked x1.1 had 177,988 late tasks; eight relocations brought them to 9,050
#: and the moves after them to 0 (155,697.8 kg), the moves alone left 30,335 late after 12 re-runs
RELOCATE_RUNS = 8
#: engine runs of the local search (crossovers of the best and second-best candidates)
SEARCH_RUNS = 2
#: share of the tasks a crossover takes from the second-best candidate (halved after each rejection)
CROSSOVER_SHARE = 0.5


@dataclass
class Candidate:
    """One schedule run through the engine: its plan (None: a policy's own run, not replayed), value and late
    tasks."""

    name: str
    value: float
    late: int
    plan: Plan | None
    result: object  # sim_core.RunResult (None once dropped: :func:`drop_results`)
    repairs: int = 0  # re-runs that repaired it
    totals: dict | None = None  # the run's totals (kept when its result is dropped)
    lp: object = None  # the LP (OptimumResult) whose prices its refills read; None: the bound's (``upper.PLAN_HOLD``)


def objective_value(totals: dict, objective: str, w_c: float, w_u: float) -> float:
    """The objective of a run's totals (kg, USD or their weighted sum)."""
    carbon, cost = totals["carbon_incl_transfer_kg"], totals["cost_incl_transfer_usd"]
    return float(carbon if objective == "carbon" else cost if objective == "cost" else w_c * carbon + w_u * cost)


def run_seconds(prep: Prepared, res, column: str) -> np.ndarray:
    """A run's per-task timestamp column (``res.tasks[column]``) in seconds from the scenario's start (NaN where
    null), the clock the window's tasks and steps use."""
    us = res.tasks[column].dt.epoch("us").to_numpy().astype(np.float64)
    return us / 1e6 - prep.scenario.start_utc.timestamp()


def plan_from_run(prep: Prepared, res) -> Plan:
    """The (datacenter, dispatch step) of every task of a run, as a :class:`Plan` (the engine's task order): a
    task never dispatched keeps site -1 (it stays pending, as in the run)."""
    tk = res.tasks
    if tk.height != prep.tasks.arrival.shape[0]:
        raise ValueError(f"the run has {tk.height} tasks, the window {prep.tasks.arrival.shape[0]}")
    dest = tk["dest"].to_physical().fill_null(-1).to_numpy().astype(np.int64)
    dec = run_seconds(prep, res, "decision_ts_utc")
    step = np.where(np.isfinite(dec), np.floor(np.nan_to_num(dec) / prep.scenario.step_s), 0).astype(np.int64)
    step -= prep.s0
    site = np.where(np.isfinite(dec), dest, -1)
    return Plan(site=site, step=step, late=np.zeros(site.shape[0], np.int8), plan_s=0.0)


def arrival_step(prep: Prepared) -> np.ndarray:
    """Each task's arrival step in the run's window (clipped to it)."""
    return np.clip((prep.tasks.arrival - prep.t0) // prep.scenario.step_s, 0, prep.n - 1).astype(np.int64)


def _copy(plan: Plan) -> Plan:
    return Plan(site=plan.site.copy(), step=plan.step.copy(), late=plan.late.copy(), plan_s=plan.plan_s)


class Evaluator:
    """Runs plans through the engine on one window (its options), counting the runs and their time."""

    def __init__(self, sc, prep: Prepared, objective: str, weights: dict, run_kw: dict, relocate=None):
        self.sc, self.prep, self.objective = sc, prep, objective
        self.relocate = relocate  # (plan, run) -> (plan, moved): the repair's first move (``RELOCATE_RUNS``)
        self.w_c, self.w_u = weights["per_kg"], weights["per_usd"]
        self.run_kw = run_kw
        self.runs = 0
        self.sim_s = 0.0

    def run(self, name: str, policy, plan: Plan | None) -> Candidate:
        from ..simulator import run

        t = time.perf_counter()
        res = run(self.sc, policy, seed=self.prep.seed, **self.run_kw)
        self.sim_s += time.perf_counter() - t
        self.runs += 1
        return Candidate(name=name, value=objective_value(res.totals, self.objective, self.w_c, self.w_u),
                         late=int(res.totals["sla_violations"]), plan=plan, result=res, totals=dict(res.totals))

    def plan(self, name: str, plan: Plan) -> Candidate:
        return self.run(name, PlanPolicy(plan, self.prep.s0), plan)

    def repair(self, cand: Candidate, runs: int = REPAIR_RUNS, patience: int = REPAIR_PATIENCE,
               relocate=None) -> Candidate:
        """Re-run ``cand`` with its late tasks moved: for the first ``RELOCATE_RUNS`` re-runs into capacity the run
        leaves free (``relocate``, else the evaluator's, when given and while it finds a slot), then started
        earlier: at their arrival step (a task the plan deferred), then at their origin (no transfer); at most
        ``runs`` runs, until no task is late or ``patience`` re-runs in a row bring no new low of late tasks among
        the re-runs. Returns the last run (``repairs``: its re-runs)."""
        if cand.late == 0:
            return cand
        relocate = relocate if relocate is not None else self.relocate
        plan = _copy(cand.plan if cand.plan is not None else plan_from_run(self.prep, cand.result))
        arr = arrival_step(self.prep)
        origin = self.prep.tasks.origin.astype(np.int64)
        cur = cand
        low, since = np.inf, 0  # (counted from the first re-run: the first moves often crowd other steps)
        for k in range(runs):
            if since >= patience:
                break
            late = cur.result.tasks["violated"].to_numpy()
            if not late.any():
                break
            n_moved = 0
            if relocate is not None and k < RELOCATE_RUNS:
                moved_plan, n_moved = relocate(plan, cur.result)
                if n_moved:
                    plan = moved_plan
            if not n_moved:
                earlier = late & (plan.step > arr)
                if earlier.any():
                    plan.step[earlier] = arr[earlier]
                moved = late & ~earlier & (plan.site != origin) & (plan.site >= 0)
                plan.site[moved] = origin[moved]
                plan.step[moved] = arr[moved]
                if not (earlier.any() or moved.any()):
                    break
            cur = self.plan(f"{cand.name}, repaired", _copy(plan))
            cur.repairs, cur.lp = k + 1, cand.lp
            low, since = (cur.late, 0) if cur.late < low else (low, since + 1)
        return cur


def drop_results(cands: list[Candidate], prep: Prepared) -> None:
    """Keep the engine's result (its per-task and per-step frames: ~0.2 GB a run on a week of the source
    cluster) only for the candidates the bracket may return, the least one with no late task and the one with
    the fewest late tasks; the others keep their totals and their plan (read back from the run if they had
    none, :func:`plan_from_run`), which is all the search uses of them."""
    if not cands:
        return
    clean = [c for c in cands if c.late == 0]
    keep = {id(min(cands, key=lambda c: (c.late, c.value)))}
    if clean:
        keep.add(id(min(clean, key=lambda c: c.value)))
    for c in cands:
        if id(c) in keep or c.result is None:
            continue
        if c.plan is None:
            c.plan = plan_from_run(prep, c.result)
        c.result = None


def improve(ev: Evaluator, best: Candidate, other: Candidate, runs: int, seed: int = 0) -> tuple[Candidate, int]:
    """Local search: crossovers of ``best`` and ``other`` (a share of the tasks, drawn at random with ``seed``,
    take ``other``'s decisions), each run through the engine; one that meets every deadline and is lower
    replaces ``best``. Returns the best and the number of accepted moves."""
    rng = np.random.default_rng(seed)
    a = best.plan if best.plan is not None else plan_from_run(ev.prep, best.result)
    b = other.plan if other.plan is not None else plan_from_run(ev.prep, other.result)
    share, accepted = CROSSOVER_SHARE, 0
    for _ in range(runs):
        take = rng.random(a.site.shape[0]) < share
        trial = _copy(a)
        trial.site[take], trial.step[take] = b.site[take], b.step[take]
        cand = ev.plan(f"crossover of {best.name} and {other.name}", trial)
        cand.lp = best.lp  # mostly the best's decisions: its prices
        if cand.late == 0 and cand.value < best.value:
            best, a, accepted = cand, trial, accepted + 1
        else:
            share /= 2
    return best, accepted


__all__ = ["HEURISTICS", "RELOCATE_RUNS", "REPAIR_PATIENCE", "REPAIR_RUNS", "SEARCH_RUNS", "Candidate", "Evaluator",
           "arrival_step", "drop_results", "improve", "objective_value", "plan_from_run", "run_seconds"]
