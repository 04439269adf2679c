"""The optimum bracketed: the LP's lower bound <= the engine's value of the schedule rounded from it (the upper
bound) and <= every deadline-meeting policy's; the rounded schedule is feasible, its value is the engine's own,
a forced instance where the bracket's width is exactly the power bound's error, determinism, failure paths."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

import sim_core
from sim_core.optimum import OptimumError, PlanPolicy, bracket, optimum, upper_bound
from sim_core.optimum.power import bound_at, facility_pieces, site_power
from sim_core.optimum.solve import idle_floor_kw
from sim_core.optimum.upper import plan_schedule
from sim_core.simulator import Prepared
from sim_core.testing import synthetic_signals, synthetic_tasks, write_bundle

DAY = 96


@pytest.fixture(scope="module")
def three_sites(three_site_bundle):
    """3 sites, 2 days of synthetic signals, 240 synthetic tasks with allowed delays of 0, 2 or 6 h."""
    return three_site_bundle("bracket", n_tasks=240, seed=3, total_cores=256, total_gpus=16, total_mem_gb=2000)


@pytest.fixture(scope="module")
def one_day(three_sites):
    return bracket(three_sites, seed=0, days=1)


def test_lower_below_upper_and_every_deadline_meeting_policy(three_sites, one_day):
    b = one_day
    assert b.lower.status == "Optimal" and b.lower.n_tasks > 80
    assert b.lower.baseline_carbon_kg < b.lower.value <= b.upper.value
    assert b.width == pytest.approx((b.upper.value - b.lower.value) / b.lower.value)
    assert 0.0 <= b.width < 0.5
    checked = 0
    for pol in ("local_only", "lowest_carbon", "round_robin", "wait_awhile"):
        tot = sim_core.run(three_sites, pol, seed=0, days=1).totals
        v = tot["carbon_incl_transfer_kg"]
        lo, hi = b.distance(v)
        assert lo <= hi
        if tot["sla_violations"] == 0:  # the bound holds for schedules that meet every deadline
            assert v >= b.lower.value, (pol, v, b.lower.value)
            checked += 1
    assert checked >= 2


def test_the_bracket_covers_the_drained_runs_work(three_sites, one_day):
    """Equal work: the runs drain by default, and so do the bound and the plan's run. The bound covers the
    window and the drain to the last deadline (more work than the window's alone, so a higher bound than
    ``drain=False``'s), the plan's run does every task's whole work, as ``local_only``'s drained run does."""
    lo, up = one_day.lower, one_day.upper
    assert lo.window_steps == DAY and lo.steps > DAY
    window_only = optimum(three_sites, seed=0, days=1, drain=False)
    assert window_only.steps == window_only.window_steps == DAY
    assert lo.value > window_only.value * 1.05
    assert lo.baseline_carbon_kg == pytest.approx(window_only.baseline_carbon_kg, rel=1e-12)
    ref = sim_core.run(three_sites, "local_only", seed=0, days=1).totals
    assert up.totals["work_left_core_hours"] == 0.0 and ref["work_left_core_hours"] == 0.0
    assert up.totals["work_core_hours"] == pytest.approx(ref["work_core_hours"], rel=1e-12)
    assert up.totals["drain_steps"] > 0


def test_the_rounded_schedule_is_feasible(three_sites, one_day):
    """Every task is started inside the window or planned past it (its deadline allowing); none misses its
    deadline, none is forced by the engine, the engine never needed a fallback site; the few tasks that no
    candidate could give the wake margin (dispatched at once) still met their deadlines."""
    u = one_day.upper
    tot = u.totals
    assert u.sla_violations == 0 and u.tasks_forced == 0
    assert u.planned_late < 0.1 * tot["tasks"]
    assert tot["invalid_actions"] == 0
    assert u.tasks_started + u.tasks_not_started + tot["tasks_unschedulable"] == tot["tasks"]
    assert u.tasks_not_started == 0 and u.planned_past_window == 0  # drained: every task placed and run
    prep = Prepared(three_sites, 0, days=1)
    plan = plan_schedule(prep, one_day.lower)
    T = prep.tasks
    past = plan.step >= one_day.lower.steps
    t_end = prep.t0 + 900.0 * one_day.lower.steps
    assert np.all(T.deadline[past] >= t_end + T.duration[past])  # they can still meet their deadline
    assert np.all(plan.site[~past] >= 0)
    # per site, step and resource, the requests the plan books never exceed the capacity
    occ = booked(prep, plan, one_day.lower.steps)
    assert occ.max() > 0 and np.all(occ <= prep.ctx.cap[:, None, :] + 1e-9)


def booked(prep, plan, n, hold_wakes=None):
    """The plan's bookings recomputed from its decisions (independently of the kernel): each task's request at
    its site from its dispatch step to the step holding its finish + ``hold_wakes`` wake latencies (default: the
    wake spare), the task running from max(dispatch step start, arrival) + its transfer delay (the whole
    bandwidth moves)."""
    from sim_core.optimum.upper import WAKE_SPARE
    from sim_core.physics import P_WAKE_S

    hold_wakes = WAKE_SPARE if hold_wakes is None else hold_wakes

    T, C, sc = prep.tasks, prep.ctx, prep.scenario
    occ = np.zeros((sc.n_dc, n, 3))
    req = np.stack([T.cores, T.gpus, T.mem], axis=1)
    for i in np.flatnonzero((plan.site >= 0) & (plan.step < n)):
        d, o = plan.site[i], T.origin[i]
        delay = 0.0 if d == o else T.bw[i] * C.delay_s_per_gb[o, d] + C.rtt_s[o, d]
        wake = hold_wakes * sc.params[d][P_WAKE_S] if prep.managed else 0.0
        tau = max(C.t0 + 900.0 * plan.step[i], T.arrival[i]) + delay
        k_last = min(n - 1, int((tau + T.duration[i] + wake - 1e-6 - C.t0) // 900.0))
        occ[d, plan.step[i]:k_last + 1] += req[i]
    return occ


def test_plan_variants_book_within_capacity_and_are_candidates(three_sites, one_day):
    """The tighter roundings (``PLAN_VARIANTS``: less capacity held past a finish, load beyond the LP's profile at
    the step's own price, capacity over-booked by a factor) never book more than that factor x a site's capacity
    and still meet the deadline with the wake spare in the plan; each is an engine-run candidate of the bracket
    (repaired when late), and the upper end is the least deadline-meeting candidate, so never above the plan's
    own run."""
    from sim_core.optimum.upper import PLAN_VARIANTS, WAKE_SPARE, variant_name
    from sim_core.physics import P_WAKE_S

    prep = Prepared(three_sites, 0, days=1)
    T, n = prep.tasks, one_day.lower.steps
    base = plan_schedule(prep, one_day.lower)
    moved = 0
    for v in PLAN_VARIANTS:
        hold, ov, scale = v[:3]
        plan = plan_schedule(prep, one_day.lower, *v)
        occ = booked(prep, plan, n, hold)
        assert occ.max() > 0 and np.all(occ <= scale * prep.ctx.cap[:, None, :] + 1e-9)
        inside = (plan.site >= 0) & (plan.step < n) & (plan.late == 0)
        d, o = plan.site[inside], T.origin[inside]
        delay = np.where(d == o, 0.0, T.bw[inside] * prep.ctx.delay_s_per_gb[o, d] + prep.ctx.rtt_s[o, d])
        tau = np.maximum(prep.ctx.t0 + 900.0 * plan.step[inside], T.arrival[inside]) + delay
        wake = np.array([WAKE_SPARE * three_sites.params[k][P_WAKE_S] for k in d]) if prep.managed else 0.0
        assert np.all(tau + T.duration[inside] + wake <= T.deadline[inside] + 1e-6)
        moved += int(((plan.site != base.site) | (plan.step != base.step)).sum())
        assert variant_name(*v) in one_day.upper.candidates
    assert moved > 0  # the variants are other schedules, not the plan again
    assert one_day.upper.value <= one_day.upper.plan_value
    with pytest.raises(OptimumError, match="cap_scale"):
        plan_schedule(prep, one_day.lower, cap_scale=0.0)
    with pytest.raises(OptimumError, match="hold_wakes"):
        plan_schedule(prep, one_day.lower, hold_wakes=float("nan"))
    with pytest.raises(OptimumError, match="overflow"):
        plan_schedule(prep, one_day.lower, overflow=1.5)
    with pytest.raises(OptimumError, match="order must be one of"):
        plan_schedule(prep, one_day.lower, order="random")


def test_a_remote_dispatch_books_the_steps_after_its_transfer(tmp_path):
    """Twelve 8-core tasks arrive together at a dirty site; a clean site 3,200 s of transfer away holds two at a
    time. The rounding must check the clean site's capacity over the steps the task runs there, after its
    transfer: an earlier kernel checked only up to the deadline less the transfer, read stale capacity flags for
    the rest, sent all twelve to the clean site and the engine started four of them late (after two repairs).
    Now the plan books at most the clean site's capacity, sends the rest to the origin, and its run meets every
    deadline; the upper bound is above the lower one and at most the engine's own value of the plan's run."""
    n, k = DAY, 12
    tasks = {"arrival_ts_utc": 900.0 + np.arange(k), "duration_s": np.full(k, 3600.0),
             "cpu_cores": np.full(k, 8.0), "gpus": np.zeros(k), "mem_gb": np.full(k, 16.0),
             "bandwidth_gb": np.full(k, 1.0), "max_delay_s": np.full(k, 4 * 3600.0)}
    path = write_bundle(tmp_path, locations=["AA", "BB"], timezones=["UTC", "UTC"], population_weight=[1.0, 1e-9],
                        total_cores=[64.0, 16.0], total_gpus=0, total_mem_gb=[512.0, 128.0], n_steps=n,
                        signals={"carbon_g_per_kwh": np.stack([np.full(n, 600.0), np.full(n, 50.0)])},
                        usd_per_gb=0.0, throughput_mbps=2.5, rtt_ms=10.0, tasks=tasks)
    sc = sim_core.load(path)
    kw = dict(workload="origins", sla_multiplier=1.0)
    b = bracket(sc, seed=0, **kw)
    prep = Prepared(sc, 0, **kw)
    plan = plan_schedule(prep, b.lower)
    assert set(prep.tasks.origin.tolist()) == {0}
    assert 0 < (plan.site == 1).sum() < k and plan.late.sum() == 0  # some go to the clean site, not all
    occ = booked(prep, plan, b.lower.steps)
    assert occ[1, :, 0].max() <= 16.0 and np.all(occ <= prep.ctx.cap[:, None, :] + 1e-9)
    u = b.upper
    assert u.sla_violations == 0 and u.repairs == 0 and u.tasks_forced == 0 and u.tasks_started == k
    assert b.lower.value <= u.value
    res = sim_core.run(sc, PlanPolicy(plan, prep.s0), seed=0, **kw)
    assert res.totals["carbon_incl_transfer_kg"] == u.plan_value and u.plan_late == 0
    assert u.value <= u.plan_value  # the best schedule found is the plan's run or a lower candidate's


def test_upper_value_is_the_engines(three_sites, one_day):
    """The LP plan's value is the engine's own total of the plan-following run: running the plan again through
    sim_core.run gives the same totals, bit for bit; the upper end is the least deadline-meeting candidate (and a
    second bracket gives the same values)."""
    prep = Prepared(three_sites, 0, days=1)
    plan = plan_schedule(prep, one_day.lower)
    res = sim_core.run(three_sites, PlanPolicy(plan, prep.s0), seed=0, days=1)
    # the run's task rows are in the plan's (the engine's) task order: what the repair of late tasks reads
    assert res.tasks["task_id"].to_list() == prep.task_id.tolist()
    assert one_day.upper.repairs == 0
    assert res.totals["carbon_incl_transfer_kg"] == one_day.upper.plan_value == one_day.upper.candidates["LP plan"][0]
    # the upper end is the least candidate that meets every deadline, and its totals are that run's
    clean = {k: v for k, (v, late) in one_day.upper.candidates.items() if late == 0}
    assert one_day.upper.value == min(clean.values()) and one_day.upper.source in clean
    assert one_day.upper.totals["carbon_incl_transfer_kg"] == one_day.upper.value
    again = bracket(three_sites, seed=0, days=1)
    assert again.lower.value == one_day.lower.value and again.upper.value == one_day.upper.value


def test_forced_instance_width_is_the_power_bounds_error(tmp_path):
    """One task with no slack, which only its origin can run (its data would take days to move): the LP's
    schedule is forced (run from arrival at the origin), the rounding finds that very schedule, and the lower
    bound is exactly the power bound evaluated at the engine's own busy resources: the bracket's width is the
    power relaxation's error alone."""
    n = DAY
    path = write_bundle(tmp_path, locations=["AA", "BB"], timezones=["UTC", "UTC"], population_weight=[1.0, 1e-9],
                        total_cores=64, total_gpus=0, total_mem_gb=512, n_steps=n,
                        signals={"carbon_g_per_kwh": np.full((2, n), 300.0)}, usd_per_gb=0.05,
                        throughput_mbps=100.0, rtt_ms=10.0,
                        tasks={"arrival_ts_utc": np.array([1800.0]), "duration_s": np.array([3600.0]),
                               "cpu_cores": np.array([32.0]), "gpus": np.array([0.0]),
                               "mem_gb": np.array([64.0]), "bandwidth_gb": np.array([1e6]),
                               "max_delay_s": np.array([0.0])})
    sc = sim_core.load(path)
    kw = dict(power="always_on", workload="origins", sla_multiplier=1.0)
    b = bracket(sc, seed=0, **kw)
    prep = Prepared(sc, 0, drain=False, **kw)
    plan = plan_schedule(prep, b.lower)
    assert plan.site.tolist() == [0] and plan.step.tolist() == [2]  # arrival step, origin
    # the engine's run: 32 cores / 64 GB busy from t = 1800 s to 5400 s (steps 2-5)
    busy = np.zeros(n)
    for k in range(n):
        busy[k] = max(0.0, min(5400.0, 900.0 * (k + 1)) - max(1800.0, 900.0 * k)) / 900.0
    sites = [site_power(sc.params[d], sc.cap_cores[d], sc.cap_gpus[d], sc.cap_mem_gb[d], False) for d in range(2)]
    fac = facility_pieces(sc.params, sites, sc.temp_c, sc.wetbulb_c)
    floor = idle_floor_kw(sc, slice(0, n), False, fac)
    kwh = sum(0.25 * np.maximum(floor[d], bound_at(sites[d], fac.slope[d], fac.icpt[d], 32.0 * busy * (d == 0), 0.0,
                                                   64.0 * busy * (d == 0), 0.0, 0.0)[3]) for d in range(2))
    assert b.lower.value == pytest.approx((kwh * 300.0 / 1000.0).sum(), rel=1e-7)
    assert b.upper.sla_violations == 0 and b.upper.tasks_started == 1
    assert b.lower.value < b.upper.value < 1.1 * b.lower.value  # the power bound is within 10 % here
    assert b.upper.energy_kwh == pytest.approx(b.upper.carbon_kg / 0.3, rel=1e-9)


@pytest.mark.parametrize("power", ["managed", "always_on"])
def test_an_empty_window_is_decided_exactly(tmp_path, power):
    """No task arrives in the window (all on the next day): every schedule is the same, and the bound (the
    engine's power in its least state, the idle floor) equals the engine's value: lower == upper."""
    n = 2 * DAY
    t = synthetic_tasks(30, DAY, seed=2).with_columns(pl.col("arrival_ts_utc").dt.offset_by("1d"))
    sc = sim_core.load(write_bundle(tmp_path, locations=["L0", "L1"], timezones=["UTC", "UTC"], total_cores=128,
                                    total_gpus=8, total_mem_gb=1000, n_steps=n, signals=synthetic_signals(2, n, 2),
                                    tasks=t))
    b = bracket(sc, seed=0, days=1, power=power)
    assert b.upper.totals["tasks"] == 0
    assert b.upper.value == pytest.approx(b.lower.value, rel=1e-8)
    assert b.lower.value == pytest.approx(b.lower.baseline_carbon_kg, rel=1e-12)
    # without the floor the bound is below (the power bound's own error at idle)
    loose = optimum(sc, seed=0, days=1, power=power, idle_floor=False)
    assert loose.value <= b.lower.value


@pytest.mark.parametrize("power", ["managed", "always_on"])
def test_the_idle_floor_is_below_the_engine_at_every_step(three_sites, power):
    """The idle floor's validity: every step of every site of runs of policies that load the sites
    differently draws at least the floor (the engine's power is non-decreasing in load and servers on)."""
    from sim_core.optimum.power import facility_pieces, site_power

    sc = three_sites
    n = 2 * DAY
    sites = [site_power(sc.params[d], sc.cap_cores[d], sc.cap_gpus[d], sc.cap_mem_gb[d], power == "managed")
             for d in range(sc.n_dc)]
    fac = facility_pieces(sc.params, sites, sc.temp_c[:, :n], sc.wetbulb_c[:, :n])
    floor = idle_floor_kw(sc, slice(0, n), power == "managed", fac)
    assert (floor > 0).all()
    for pol in ("local_only", "round_robin", "lowest_carbon", "wait_awhile"):
        st = sim_core.run(sc, pol, seed=0, power=power).steps.sort(["step", "dc"])
        kw = st["total_kwh"].to_numpy().reshape(n, sc.n_dc).T / 0.25
        assert (kw >= floor).all(), (pol, float((kw - floor).min()))
        assert (kw > floor * (1 + 1e-6)).any()  # (not trivially equal: the policies load the sites)


def test_the_planning_lp_is_a_candidate_not_a_bound(three_sites, one_day):
    """``bracket``'s planning LP (``PLAN_HOLD``: each site's capacity / 1.11, ``kind`` "planning") is never the
    lower end: on less capacity its value is at least the bound's; its assignment of whole tasks is an engine-run
    candidate (repaired when late), and without it (``hold=None``) the bound and every other candidate are the same
    runs to the digit."""
    from sim_core.optimum.upper import PLAN_HOLD, plan_lp_name

    plan = optimum(three_sites, seed=0, days=1, profile=True, capacity_scale=1 / PLAN_HOLD)
    assert plan.kind == "planning" and plan.capacity_scale == pytest.approx(1 / PLAN_HOLD)
    assert one_day.lower.kind == "relaxation" and one_day.lower.capacity_scale == 1.0
    assert plan.value >= one_day.lower.value and "not a bound" in plan.describe()
    assert plan_lp_name(plan) == "LP assignment (capacity / 1.11)"
    assert plan_lp_name(plan) in one_day.upper.candidates
    without = bracket(three_sites, seed=0, days=1, hold=None)
    assert without.lower.value == one_day.lower.value
    assert not any("capacity /" in name for name in without.upper.candidates)
    assert one_day.upper.value >= one_day.lower.value and one_day.upper.sla_violations == 0
    for name, got in without.upper.candidates.items():
        if "refilled" not in name and "crossover" not in name:
            assert one_day.upper.candidates[name] == got, name
    with pytest.raises(OptimumError, match="capacity_scale"):
        optimum(three_sites, seed=0, days=1, capacity_scale=1.5)
    with pytest.raises(OptimumError, match="hold must be > 1"):
        bracket(three_sites, seed=0, days=1, hold=0.9)


def test_failure_paths(three_sites, one_day):
    no_profile = optimum(three_sites, seed=0, days=1)
    with pytest.raises(OptimumError, match="profile=True"):
        upper_bound(three_sites, no_profile, days=1)
    with pytest.raises(OptimumError, match="window"):
        upper_bound(three_sites, one_day.lower, days=2)


def test_optimum_table_brackets_with_deadline_meeting_runs(three_sites, one_day):
    """docs/optimum_table.md's generator: the bracket's upper end is the least value of a run with no SLA
    violation over the same (drained) work — the plan's run only when it meets every deadline — and its lower
    end the drained bound; every policy's row carries its distance range."""
    from benchmarks.optimum_table import table

    md = table(three_sites, 1, 0, "cmd", "three sites")
    rows = {ln.split(" | ")[0].strip("| *"): ln.split(" | ") for ln in md.splitlines() if ln.startswith("| ")}
    kg = {k: float(v[1].replace(",", "")) for k, v in rows.items() if k not in ("policy", "|---|---:|---:|---:|---:|")}
    lo = kg["optimum: lower bound (LP)"]
    assert lo == pytest.approx(one_day.lower.value, abs=0.06)
    clean = [t["carbon_incl_transfer_kg"] for t in (sim_core.run(three_sites, p, seed=0, days=1).totals
                                                    for p in sim_core.POLICIES) if t["sla_violations"] == 0]
    if one_day.upper.sla_violations == 0:
        clean.append(one_day.upper.value)
    up_key = next(k for k in kg if k.startswith("optimum: upper bound"))
    assert kg[up_key] == pytest.approx(min(clean), abs=0.06) and kg[up_key] >= lo
    assert all(" to " in rows[p][3] for p in sim_core.POLICIES)
    assert "Every figure covers the same work" in md and "h past the window's end" in md
