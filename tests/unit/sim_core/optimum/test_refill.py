"""The refill of the upper end's search (``optimum.refill``): the capacity a run held never exceeds a site's and
covers its busy resources; a refill moves tasks only to cheaper slots (at the LP's prices) that meet the deadline
with the wake spare; a refilled run that meets every deadline and is lower replaces the best, and the search's
upper end is never above its value without the refill; the rounds go in phases of a wake spare each, a phase at
a smaller spare only continuing the one before it."""

from __future__ import annotations

import numpy as np
import pytest

import sim_core
from sim_core.optimum import bracket, optimum
from sim_core.optimum.plan import Plan, PlanPolicy
from sim_core.optimum.refill import held_capacity, refill, refill_schedule, relocate_late
from sim_core.optimum.rounding import WAKE_SPARE, transfer_weights, wake_latency_s
from sim_core.optimum.search import Evaluator
from sim_core.optimum.upper import follow_plan
from sim_core.simulator import Prepared


@pytest.fixture(scope="module")
def crowd(three_site_bundle):
    """The same sites with half the capacity per task: 400 synthetic tasks on 96 cores, 6 GPUs, 800 GB."""
    return three_site_bundle("crowd", n_tasks=400, seed=5, total_cores=96, total_gpus=6, total_mem_gb=800)


@pytest.fixture(scope="module")
def lower(sites):
    return optimum(sites, seed=0, days=1, profile=True)


@pytest.fixture(scope="module")
def dirty(sites, lower):
    """Every task dispatched at its arrival step to the site the LP prices highest there (by its GPUs and
    cores), so a refill has somewhere cheaper to send it; the plan, its engine run, the window."""
    prep = Prepared(sites, 0, days=1)
    T = prep.tasks
    n = lower.steps
    arr = np.clip(((T.arrival - prep.t0) // 900).astype(np.int64), 0, n - 1)
    price = lower.profile.price[:, arr, :]  # (sites, tasks, resources)
    req = np.stack([T.cores, T.gpus, T.mem])  # (resources, tasks)
    site = np.argmax(np.einsum("dtr,rt->dt", price, req), axis=0).astype(np.int64)
    plan = Plan(site=site, step=arr, late=np.zeros(arr.shape[0], np.int8), plan_s=0.0)
    res = sim_core.run(sites, PlanPolicy(plan, prep.s0), seed=0, days=1)
    return plan, res, prep


def test_held_capacity_stays_within_the_sites_and_covers_the_busy_resources(sites, lower, dirty):
    plan, res, prep = dirty
    n = lower.steps
    occ, k0, k1 = held_capacity(prep, res, n)
    cap = prep.ctx.cap
    assert occ.max() > 0 and np.all(occ <= cap[:, None, :] + 1e-9)
    # each task holds its request over whole steps: the held resource-steps are the requests x held steps
    T = prep.tasks
    held = np.maximum(k1 - k0 + 1, 0)
    assert occ[:, :, 1].sum() == pytest.approx(float((T.gpus * held).sum()), rel=1e-12)
    # the engine's time-weighted busy GPUs never exceed what is held (a task holds to the step boundary)
    steps = res.steps
    for d in range(sites.n_dc):
        busy = steps.filter(steps["dc"] == d).sort("step")["busy_gpus"].to_numpy()[:n]
        assert np.all(busy <= occ[d, :busy.shape[0], 1] + 1e-9)


@pytest.mark.parametrize("spare", [WAKE_SPARE, 0.0])
def test_a_refill_moves_tasks_only_to_cheaper_slots_that_keep_the_wake_spare(sites, lower, dirty, spare):
    """Each moved task's new slot costs less than 0.98 x its old one at the LP's prices, its transfer included
    (recomputed here from the plan, not by the kernel), and meets its deadline with the wake spare asked."""
    plan, res, prep = dirty
    new, moved = refill_schedule(prep, lower, plan, res, margin=0.02, spare=spare)
    changed = (new.site != plan.site) | (new.step != plan.step)
    assert moved == int(changed.sum()) > 0
    assert np.array_equal(plan.site[~changed], new.site[~changed])  # the plan it started from is untouched
    T, C = prep.tasks, prep.ctx
    wake = wake_latency_s(prep)
    price = lower.profile.price
    xfer = transfer_weights(prep, lower.steps, 1.0, 0.0)

    def cost(i, d, s):
        o = T.origin[i]
        delay = 0.0 if d == o else T.bw[i] * C.delay_s_per_gb[o, d] + C.rtt_s[o, d]
        tau = max(C.t0 + 900.0 * s, T.arrival[i]) + delay
        k = np.arange(s, lower.steps)
        frac = np.clip(np.minimum(tau + T.duration[i], C.t0 + 900.0 * (k + 1)) - np.maximum(tau, C.t0 + 900.0 * k),
                       0.0, None) / 900.0
        run = float((frac[:, None] * price[d, k] * [T.cores[i], T.gpus[i], T.mem[i]]).sum())
        return run + (T.bw[i] * xfer[o, d, s] if d != o else 0.0), tau

    for i in np.flatnonzero(changed):
        d, s = new.site[i], new.step[i]
        c_new, tau = cost(i, d, s)
        c_old, _ = cost(i, plan.site[i], plan.step[i])
        assert c_new < 0.98 * c_old * (1 + 1e-9), i
        assert tau + T.duration[i] + spare * wake[d] <= T.deadline[i] + 1e-6


def test_a_refilled_run_that_meets_every_deadline_and_is_lower_replaces_the_best(sites, lower, dirty):
    plan, res, prep = dirty
    ev = Evaluator(sites, prep, "carbon", {"per_kg": 1.0, "per_usd": 0.0}, dict(days=1))
    start = ev.plan("dirty", plan)
    assert start.late == 0
    best, kept, spares = refill(ev, start, lower, rounds=2)
    assert len(kept) >= 1 and len(spares) == len(kept)
    assert kept[-1] == best.value and list(kept) == sorted(kept, reverse=True)
    assert best.late == 0 and best.value < start.value and "refilled" in best.name
    assert best.value >= lower.value
    again = sim_core.run(sites, PlanPolicy(best.plan, prep.s0), seed=0, days=1).totals
    assert again["carbon_incl_transfer_kg"] == best.value  # the candidate's value is its plan's engine run


def test_the_bracket_with_refills_is_below_the_one_without(crowd):
    """On a crowded window the best candidate's run leaves cheaper capacity free: the bracket's refills keep a
    lower run that meets every deadline, above the lower bound; without them the upper end is the candidate's."""
    without = bracket(crowd, seed=0, days=1, refill_rounds=0)
    with_refill = bracket(crowd, seed=0, days=1)
    assert without.upper.refills == 0 and "refilled" not in without.upper.source
    assert with_refill.lower.value == without.lower.value
    assert with_refill.upper.refills == len(with_refill.upper.refill_values) >= 1
    assert with_refill.upper.refill_values[-1] == with_refill.upper.value and "refilled" in with_refill.upper.source
    # the rounds started from the best candidate before them: the one the refilled run is named after
    start = with_refill.upper.source.removesuffix(", refilled")
    assert with_refill.upper.refill_from == with_refill.upper.candidates[start][0] > with_refill.upper.refill_values[0]
    assert np.isnan(without.upper.refill_from)
    assert without.lower.value <= with_refill.upper.value < without.upper.value
    assert with_refill.upper.sla_violations == 0


@pytest.fixture(scope="module")
def from_assignment(crowd):
    """The crowded window's LP assignment (``follow_plan``), repaired: the start of the week's refills."""
    lower = optimum(crowd, seed=0, days=1, profile=True)
    prep = Prepared(crowd, 0, days=1)

    def evaluator():
        return Evaluator(crowd, prep, "carbon", {"per_kg": 1.0, "per_usd": 0.0}, dict(days=1),
                         relocate=lambda p, res: relocate_late(prep, lower, p, res))

    start = evaluator().repair(evaluator().plan("LP assignment", follow_plan(prep, lower)))
    assert start.late == 0
    return lower, evaluator, start


def test_refill_phases_continue_the_plan_spares_rounds(from_assignment):
    """Phases of smaller spares begin where the plan's spare stops paying: the phased search's first rounds are the
    single phase's to the digit, its later rounds only lower the run, each kept run meets every deadline, and a
    phase whose spare already failed on the same run is skipped (it would repeat the round)."""
    lower, evaluator, start = from_assignment
    ev1 = evaluator()
    one, kept1, sp1 = refill(ev1, start, lower, rounds=10, spares=(WAKE_SPARE,))
    assert len(kept1) >= 1 and set(sp1) == {WAKE_SPARE}
    ev = evaluator()
    best, kept, spares = refill(ev, start, lower, rounds=10, spares=(WAKE_SPARE, 1.0, 0.0, WAKE_SPARE))
    assert kept[:len(kept1)] == kept1 and spares[:len(kept1)] == sp1
    assert len(kept) > len(kept1) and best.value == kept[-1] < one.value  # the smaller spares paid here
    assert list(kept) == sorted(kept, reverse=True) and len(set(kept)) == len(kept)
    order = [(WAKE_SPARE, 1.0, 0.0, WAKE_SPARE).index(w) for w in spares[len(kept1):]]
    assert order == sorted(order) and min(order) >= 1
    assert best.late == 0 and best.value >= lower.value
    again = evaluator()
    refill(again, start, lower, rounds=10, spares=(WAKE_SPARE, WAKE_SPARE))
    assert again.runs == ev1.runs  # the second phase of the same spare ran nothing


def test_a_candidates_prices_follow_it_through_repair_crossover_and_refill(crowd, from_assignment):
    """The LP a candidate's refills read (``Candidate.lp``, the planning LP's for its assignment) stays with the
    schedules made from it: its repaired run, a crossover with it as the best, and a refilled run."""
    from sim_core.optimum.search import improve

    lower, evaluator, start = from_assignment
    prep = Prepared(crowd, 0, days=1)
    ev = evaluator()
    c = ev.plan("LP assignment", follow_plan(prep, lower))
    assert c.late > 0 and c.lp is None
    c.lp = lower
    repaired = ev.repair(c)
    assert repaired is not c and repaired.lp is lower
    start.lp = lower
    made, plan = [], ev.plan
    ev.plan = lambda name, p: made.append(plan(name, p)) or made[-1]
    try:
        improve(ev, start, repaired, runs=2, seed=0)
        assert len(made) == 2 and all(m.lp is lower for m in made)  # each crossover, kept or not
        ev.plan = plan
        refilled, kept, _ = refill(ev, start, lower, rounds=2)
        assert kept and refilled.lp is lower
    finally:
        start.lp = None


def test_a_round_with_a_late_task_is_not_kept(from_assignment):
    """A smaller spare may start tasks so close to their deadlines that a wake makes them late: a round whose
    run still has a late task after its reverts and repair is never kept, whatever its value."""
    lower, evaluator, start = from_assignment
    ev = evaluator()
    repair = ev.repair

    def still_late(cand, **kw):
        cand = repair(cand, **kw)
        cand.late = max(cand.late, 1)
        return cand

    ev.repair = still_late
    best, kept, spares = refill(ev, start, lower, rounds=10, spares=(0.0, 1.0))
    assert best is start and kept == () and spares == ()
    assert ev.runs >= 2  # the rounds ran (one per phase), and each was turned down


def test_a_rounds_repair_relocates_at_the_rounds_spare(from_assignment, monkeypatch):
    """Each round's repair relocates its late tasks at the round's own spare (``refill.relocate_late``), not at the
    plan's: a late task that only a slot nearer its deadline fits would otherwise be started at its arrival step or
    origin. Every repair of the rounds is handed that relocation, and it asks ``relocate_late`` for the phase's
    spare."""
    import sim_core.optimum.refill as R

    lower, evaluator, start = from_assignment
    ev = evaluator()
    asked, handed = [], []
    original = R.relocate_late

    def recorded(prep, low, plan, res, spare=WAKE_SPARE):
        asked.append(spare)
        return original(prep, low, plan, res, spare)

    monkeypatch.setattr(R, "relocate_late", recorded)
    repair = ev.repair

    def checked(cand, relocate=None, **kw):
        handed.append(relocate)
        if relocate is not None:
            relocate(cand.plan, cand.result)
        return repair(cand, relocate=relocate, **kw)

    ev.repair = checked
    refill(ev, start, lower, rounds=3, spares=(0.0, 1.0))
    assert handed and all(r is not None for r in handed)
    assert asked and asked[0] == 0.0 and set(asked) <= {0.0, 1.0}


def test_the_repair_moves_late_tasks_into_free_capacity_first(crowd):
    """A plan that sends every task to one site at its arrival step leaves many late in that site's queue (a
    bundle with half the capacity per task of the others here); the repair's relocation
    (``refill.relocate_late``) moves only late tasks, into capacity the run leaves free at the other sites, and
    the repair ends with no task late."""
    sc = crowd
    lower = optimum(sc, seed=0, days=1, profile=True)
    prep = Prepared(sc, 0, days=1)
    T = prep.tasks
    arr = np.clip(((T.arrival - prep.t0) // 900).astype(np.int64), 0, lower.steps - 1)
    crowded = Plan(site=np.zeros(arr.shape[0], np.int64), step=arr, late=np.zeros(arr.shape[0], np.int8), plan_s=0.0)
    weights = {"per_kg": 1.0, "per_usd": 0.0}
    ev = Evaluator(sc, prep, "carbon", weights, dict(days=1),
                   relocate=lambda p, res: relocate_late(prep, lower, p, res))
    first = ev.plan("crowded", crowded)
    assert first.late > 20
    moved_plan, moved = relocate_late(prep, lower, crowded, first.result)
    late = first.result.tasks["violated"].to_numpy()
    changed = (moved_plan.site != crowded.site) | (moved_plan.step != crowded.step)
    assert moved > 0 and moved == int(changed.sum()) and not (changed & ~late).any()  # only late tasks move
    assert (moved_plan.site[changed] != 0).any()
    fixed = ev.repair(first)
    assert fixed.late == 0 and fixed.repairs >= 1 and fixed.result.totals["sla_violations"] == 0
