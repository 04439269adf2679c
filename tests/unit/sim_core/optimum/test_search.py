"""The upper end's search (``optimum.search``): a policy's run replayed as a plan is the same run; late tasks
are repaired by starting them earlier; the best candidate meets every deadline and is never above the LP
plan's or a heuristic's deadline-meeting run; the integer model (``optimum.mip``) sits between the fluid LP and
the engine on small windows."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

import sim_core
from sim_core.optimum import PlanPolicy, bracket, integrality_gap, optimum
from sim_core.optimum.plan import Plan
from sim_core.optimum.search import Evaluator, plan_from_run
from sim_core.simulator import Prepared
from sim_core.testing import synthetic_signals, synthetic_tasks, write_bundle

DAY = 96


def test_a_policy_run_replayed_as_a_plan_is_the_same_run(sites):
    """lowest_carbon dispatches each task at once: its (site, dispatch step) per task, followed by PlanPolicy,
    gives the engine the same decisions, so the same totals."""
    res = sim_core.run(sites, "lowest_carbon", seed=0, days=1)
    prep = Prepared(sites, 0, days=1)
    plan = plan_from_run(prep, res)
    assert (plan.site >= 0).all()
    again = sim_core.run(sites, PlanPolicy(plan, prep.s0), seed=0, days=1)
    assert again.totals["carbon_incl_transfer_kg"] == pytest.approx(res.totals["carbon_incl_transfer_kg"], rel=1e-12)
    assert again.tasks["dest"].to_list() == res.tasks["dest"].to_list()


def test_late_tasks_are_repaired_by_starting_them_earlier(sites):
    """A plan that dispatches every task 20 h after its arrival misses many deadlines; the repair starts the late
    ones at their arrival step (then at their origin) and the repaired run has fewer late tasks, none if it can."""
    prep = Prepared(sites, 0, days=1)
    arr = ((prep.tasks.arrival - prep.t0) // 900).astype(np.int64)
    bad = Plan(site=prep.tasks.origin.astype(np.int64), step=arr + 80, late=np.zeros(arr.shape[0], np.int8),
               plan_s=0.0)
    ev = Evaluator(sites, prep, "carbon", {"per_kg": 1.0, "per_usd": 0.0}, dict(days=1))
    first = ev.plan("late plan", bad)
    assert first.late > 10
    fixed = ev.repair(first)
    assert fixed.late < first.late and fixed.late == 0 and 1 <= fixed.repairs <= 3
    assert fixed.result.totals["sla_violations"] == 0 and ev.runs == 1 + fixed.repairs


def test_the_best_schedule_found_is_the_least_deadline_meeting_candidate(sites):
    b = bracket(sites, seed=0, days=1)
    up = b.upper
    assert up.sla_violations == 0 and up.runs >= 3
    assert set(up.candidates) >= {"LP plan", "lowest_carbon", "lowest_price"}
    clean = [v for v, late in up.candidates.values() if late == 0]
    assert up.value == min(clean) and up.value <= up.plan_value
    for h in ("lowest_carbon", "lowest_price"):  # the heuristics' own runs are candidates, as run
        tot = sim_core.run(sites, h, seed=0, days=1).totals
        assert up.candidates[h] == (tot["carbon_incl_transfer_kg"], tot["sla_violations"])
    assert b.lower.value <= up.value
    # the API's default is one LP over the window and its drain (the pages' figures)
    assert not b.lower.rolling and b.lower.n_horizons == 1
    assert b.lower.value == optimum(sites, seed=0, days=1, horizon_days=None).value


def test_no_search_keeps_the_candidates_as_run(sites):
    b = bracket(sites, seed=0, days=1, heuristics=(), search_runs=0, variants=(), refill_rounds=0, follow=False)
    assert set(b.upper.candidates) <= {"LP plan", "LP plan, repaired"} and b.upper.search_accepted == 0
    assert b.upper.refills == 0


def test_integrality_gap_orders_fluid_relaxation_and_integer(sites):
    """On a 6-hour window: the fluid LP's bound <= the integer model's relaxation <= its MIP value (each task one
    whole run), the MIP solved by HiGHS; every deadline-meeting engine run lies above the fluid bound."""
    g = integrality_gap(sites, seed=0, steps=24, time_limit_s=120)
    assert g.status == "Optimal" and g.n_tasks > 5 and g.n_columns > g.n_tasks
    assert g.fluid_lp <= g.relaxation * (1 + 1e-7)
    assert g.relaxation <= g.mip * (1 + 1e-7)
    assert g.mip_bound == pytest.approx(g.mip, rel=2e-4)
    assert 0.0 <= g.gap < 1.0 and g.gap_to_fluid >= g.gap - 1e-9
    assert 0.0 < g.fixed < g.fluid_lp and g.gap_of_changeable >= g.gap
    run = sim_core.run(sites, "local_only", seed=0, steps=24).totals
    if run["sla_violations"] == 0:
        assert run["carbon_incl_transfer_kg"] >= g.fluid_lp


def test_the_default_horizon_is_one_lp_up_to_two_weeks(tmp_path):
    """``horizon_days="auto"`` (the default): one LP while the bound spans at most ONE_LP_MAX_DAYS, rolling 7-day
    horizons beyond (a year as one LP is out of reach), a remainder shorter than a horizon (the drain) joining
    the last whole one; a bad value is refused."""
    from sim_core.optimum import OptimumError
    from sim_core.optimum.solve import ONE_LP_MAX_DAYS, horizon_starts

    assert horizon_starts(288, 96) == [0, 96, 192]
    assert horizon_starts(300, 96) == [0, 96, 192]  # the last 12 steps join the third horizon
    assert horizon_starts(793, 672) == [0] and horizon_starts(96, 96) == [0] and horizon_starts(50, 96) == [0]

    n = 17 * DAY
    sc = sim_core.load(write_bundle(tmp_path, locations=["L0", "L1"], timezones=["UTC", "Asia/Tokyo"],
                                    total_cores=64, total_gpus=0, total_mem_gb=512, n_steps=n,
                                    signals=synthetic_signals(2, n, 1), tasks=synthetic_tasks(40, n, seed=1)))
    short = optimum(sc, seed=0, days=ONE_LP_MAX_DAYS - 2)
    long = optimum(sc, seed=0, days=ONE_LP_MAX_DAYS + 1)
    assert not short.rolling and short.n_horizons == 1 and short.steps / 96 <= ONE_LP_MAX_DAYS
    assert long.rolling and long.horizon_steps == 7 * 96 and long.n_horizons == long.steps // (7 * 96)
    with pytest.raises(OptimumError, match="auto"):
        optimum(sc, seed=0, days=1, horizon_days="weekly")


def test_the_repair_runs_until_no_task_is_late_or_it_stops_improving(sites):
    """``Evaluator.repair`` re-runs until no task is late, or until ``patience`` runs in a row bring no new low of
    late tasks, at most ``runs`` runs (engine runs replaced by scripted late counts, each flagging the next block
    of tasks, all deferred and remote so that every run has a task to move: the stopping rule alone)."""
    import polars as pl

    from sim_core.optimum.search import REPAIR_PATIENCE, Candidate

    prep = Prepared(sites, 0, days=1)
    m = prep.tasks.arrival.shape[0]
    arr = ((prep.tasks.arrival - prep.t0) // 900).astype(np.int64)
    plan = Plan(site=(prep.tasks.origin.astype(np.int64) + 1) % 3, step=arr + 4, late=np.zeros(m, np.int8),
                plan_s=0.0)
    assert m >= 60

    class Scripted(Evaluator):
        def __init__(self, lates):
            super().__init__(sites, prep, "carbon", {"per_kg": 1.0, "per_usd": 0.0}, dict(days=1))
            self.lates, self.at = list(lates), 0

        def flagged(self, late):
            mask = np.zeros(m, bool)
            mask[(self.at + np.arange(late)) % m] = True
            self.at += late
            return SimpleNamespace(tasks=pl.DataFrame({"violated": mask}))

        def plan(self, name, p):
            self.runs += 1
            late = self.lates.pop(0)
            return Candidate(name=name, value=float(late), late=late, plan=p, result=self.flagged(late))

    def first(ev, late):
        return Candidate(name="c", value=0.0, late=late, plan=plan, result=ev.flagged(late))

    ev = Scripted([6, 9, 4, 5, 2, 0, 7])  # new lows at 6, 4, 2 and 0: stops at 0
    out = ev.repair(first(ev, 8))
    assert out.late == 0 and out.repairs == 6 and ev.runs == 6
    ev = Scripted([9, 7] + [7] * 10)  # 7 is a new low once, then none for REPAIR_PATIENCE runs
    out = ev.repair(first(ev, 8))
    assert ev.runs == 2 + REPAIR_PATIENCE and out.late == 7
    ev = Scripted([20, 15, 12, 10, 0])  # the first moves raise the count above the candidate's: lows among re-runs
    out = ev.repair(first(ev, 8))
    assert out.late == 0 and ev.runs == 5
    ev = Scripted([7, 6, 5, 4])  # a new low every run: stops at ``runs``
    assert ev.repair(first(ev, 8), runs=3).repairs == 3 and ev.runs == 3
