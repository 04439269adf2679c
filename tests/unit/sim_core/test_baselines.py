"""The published carbon-aware baselines (docs/baselines.md): each one's characteristic behaviour on a
small hand-made bundle, with the expected decision worked out by hand from the paper's rule; then every
baseline on a week of a multi-site bundle with flexible tasks: conservation, accounting, determinism."""

from __future__ import annotations

import datetime as dt

import numpy as np
import pytest

import sim_core
from sim_core.options import RunOptionsError
from sim_core.policies import carbonscaler as CS
from sim_core.policies import registry
from sim_core.policies import vcc as VCC
from sim_core.testing import write_bundle
from tests.unit.sim_core.test_flex import _random_workload
from tests.unit.sim_core.test_options import check_result

STEP = 900.0
HOUR = 3600.0
BASELINES = registry.of_kind("baseline")


def _td(s):
    return dt.timedelta(seconds=s)


def one_dc(tmp_path, tasks, carbon, *, cores=100, **kw):
    return write_bundle(tmp_path, locations=["A"], timezones=["UTC"], population_weight=[1.0],
                        n_steps=len(carbon), total_cores=cores, total_gpus=8, total_mem_gb=1000,
                        tasks=tasks, signals={"carbon_g_per_kwh": np.asarray(carbon, dtype=float)}, **kw)


def run(p, policy, **kw):
    kw.setdefault("power", "always_on")
    kw.setdefault("workload", "origins")
    kw.setdefault("forecast", "oracle")
    return sim_core.run(p, policy, seed=0, **kw)


def waits(r) -> list[float]:
    t = r.tasks
    return [(s - a).total_seconds() for s, a in zip(t["start_ts_utc"], t["arrival_ts_utc"], strict=True)]


def test_registered_everywhere_policies_are_listed():
    assert set(BASELINES) <= set(sim_core.POLICIES)
    assert set(registry.of_kind("rule")) | set(BASELINES) == set(sim_core.POLICIES) == set(registry.names())


# ------------------------------------------------------------------------------------------ Wait Awhile
def _wa_carbon():
    """A ramp 500 - 10 k down to step 19, a 100 g/kWh trough at steps 20-23, 500 after."""
    c = np.full(64, 500.0)
    c[:20] = 500.0 - 10.0 * np.arange(20)
    c[20:24] = 100.0
    return c


def test_wait_awhile_starts_in_the_lowest_carbon_window_within_the_allowed_delay(tmp_path):
    """1-h task (4 steps). Delay 8 h: the window [20, 24) (mean 100) -> start 18000 s. Delay 3 h (12 steps):
    only starts 0..12 are allowed; the ramp makes the last the lowest -> 10800 s. No delay: at once."""
    tasks = {"arrival_ts_utc": [0.0, 0.0, 0.0], "duration_s": [HOUR] * 3, "cpu_cores": [4.0] * 3,
             "max_delay_s": [8 * HOUR, 3 * HOUR, 0.0]}
    r = run(one_dc(tmp_path, tasks, _wa_carbon()), "wait_awhile")
    assert waits(r) == [20 * STEP, 12 * STEP, 0.0]
    assert r.totals["sla_violations"] == 0 and r.totals["pauses"] == 0


def test_wait_awhile_acts_on_the_forecast_not_the_actual(tmp_path):
    """Yesterday's trough was at 05:00, today's is at 15:00. A task arriving at today's midnight with a 20 h
    delay: with the oracle forecast it starts at 15:00; with the seasonal naive forecast (the value one day
    earlier) it starts at 05:00, where the forecast it was given says the trough is."""
    c = np.full(3 * 96, 400.0)
    c[20:24] = 50.0  # day 0, 05:00
    c[96 + 60:96 + 64] = 50.0  # day 1, 15:00
    tasks = {"arrival_ts_utc": [96 * STEP], "duration_s": [HOUR], "cpu_cores": [4.0], "max_delay_s": [20 * HOUR]}
    p = one_dc(tmp_path, tasks, c)
    assert waits(run(p, "wait_awhile", start=96, days=1)) == [60 * STEP]
    assert waits(run(p, "wait_awhile", start=96, days=1, forecast="seasonal_naive")) == [20 * STEP]
    assert waits(run(p, "wait_awhile", start=96, days=1, forecast="persistence")) == [0.0]  # all windows alike


def test_interrupting_wait_awhile_runs_only_in_the_greenest_steps(tmp_path):
    """2-h interruptible task (8 steps), 10 h delay; carbon 100 at steps 4-7 and 12-15, 500 elsewhere. It
    waits to step 4, runs 4-7, is paused at 8, resumed at 12 (30 s checkpoint overhead, so 30 s of work are
    left at 16), then finishes at 16 x 900 + 30 s: busy only in the green steps and those 30 s."""
    c = np.full(64, 500.0)
    c[4:8] = 100.0
    c[12:16] = 100.0
    tasks = {"arrival_ts_utc": [0.0], "duration_s": [2 * HOUR], "cpu_cores": [8.0], "interruptible": [True],
             "checkpoint_s": [30.0], "max_delay_s": [10 * HOUR]}
    r = run(one_dc(tmp_path, tasks, c), "wait_awhile_interrupting")
    b = r.steps["busy_cores"].to_numpy()
    expect = np.zeros(64)
    expect[4:8] = 8.0
    expect[12:16] = 8.0
    expect[16] = 8.0 * 30.0 / STEP
    np.testing.assert_allclose(b, expect, atol=1e-12)
    t = r.tasks.row(0, named=True)
    assert t["n_pauses"] == 1 and t["n_resumes"] == 1 and not t["violated"]
    assert (t["finish_ts_utc"] - t["arrival_ts_utc"]).total_seconds() == 16 * STEP + 30.0
    # the non-interrupting rule on the same task: every 8-step window holds at most one green block (mean 300
    # at best, from the start at 0 on), so the tie goes to the earliest: it starts at once, never paused
    r2 = run(one_dc(tmp_path / "b", tasks, c), "wait_awhile")
    assert waits(r2) == [0.0] and r2.totals["pauses"] == 0


# ------------------------------------------------------------------------------------------ GAIA
def _gaia_carbon():
    """Hourly blocks: hour 0 at 400, hour 1 at 300, hour 6 at 100, hour 10 at 50, 400 elsewhere."""
    h = np.full(30, 400.0)
    h[1], h[6], h[10] = 300.0, 100.0, 50.0
    return np.repeat(h, 4)


def test_gaia_lowest_carbon_window_vs_carbon_time(tmp_path):
    """A 1-h job (short queue: it waits at most 6 h, GAIA's 6x24, though its allowed delay is 24 h).
    Lowest-Carbon-Window: the least carbon among starts 0..6 h on the hourly grid -> hour 6 (hour 10 is
    beyond the short queue's wait). Carbon-Time: the most carbon saved per hour of completion time,
    (C0 - Cs) / (s + 1 h): hour 1 saves 100 over 2 h (50/h), hour 6 saves 300 over 7 h (42.9/h) -> hour 1."""
    tasks = {"arrival_ts_utc": [0.0], "duration_s": [HOUR], "cpu_cores": [4.0], "max_delay_s": [24 * HOUR]}
    p = one_dc(tmp_path, tasks, _gaia_carbon())
    assert waits(run(p, "gaia_lowest_carbon_window")) == [6 * HOUR]
    assert waits(run(p, "gaia_carbon_time")) == [HOUR]
    # RES-First: free reserved capacity (every server on, idle) -> the job starts at once
    assert waits(run(p, "gaia_res_first")) == [0.0]


def test_gaia_long_queue_waits_up_to_24_h_and_uses_the_queue_mean_length(tmp_path):
    """Carbon 400 every hour but hour 10 (50). Two long jobs (>= 2 h, wait up to 24 h) arriving together.
    The first (3 h) plans with its queue's mean so far, 3 h: the 3-h windows holding hour 10 (starts 8, 9,
    10 h) tie at 850 -> the earliest, 8 h. The second (5 h) plans with the mean of 3 and 5 h, 4 h: the
    4-h windows holding hour 10 (starts 7..10 h) tie -> 7 h (its own length is unknown to GAIA)."""
    tasks = {"arrival_ts_utc": [0.0, 0.0], "duration_s": [3 * HOUR, 5 * HOUR], "cpu_cores": [4.0, 4.0],
             "max_delay_s": [24 * HOUR, 24 * HOUR]}
    h = np.full(40, 400.0)
    h[10] = 50.0
    r = run(one_dc(tmp_path, tasks, np.repeat(h, 4)), "gaia_lowest_carbon_window")
    assert waits(r) == [8 * HOUR, 7 * HOUR]


def test_gaia_res_first_waits_when_reserved_capacity_is_busy(tmp_path):
    """Task 0 (inflexible) holds all 100 cores for 2 h; task 1 (flexible, 1 h) finds no free reserved
    capacity, so it follows Carbon-Time (hour 1, as above): decided at 1 h, it queues behind task 0 and
    starts at 2 h."""
    tasks = {"arrival_ts_utc": [0.0, 0.0], "duration_s": [2 * HOUR, HOUR], "cpu_cores": [100.0, 4.0],
             "max_delay_s": [0.0, 24 * HOUR]}
    r = run(one_dc(tmp_path, tasks, _gaia_carbon()), "gaia_res_first")
    assert waits(r) == [0.0, 2 * HOUR]
    t = r.tasks
    assert [(d - a).total_seconds() for d, a in zip(t["decision_ts_utc"], t["arrival_ts_utc"], strict=True)] == \
        [0.0, HOUR]


# ------------------------------------------------------------------------------------------ CarbonScaler
def test_carbonscaler_scales_up_in_low_carbon_hours(tmp_path):
    """An elastic, interruptible 4-h job (scale 0.5..2, marginal throughput 0.8) with 12 h of delay; carbon
    100 in hours 2, 5 and 8, 500 elsewhere. The greedy takes the low hours' minimum scale first, then their
    extra allocation (0.8 / 100 beats 1.2 / 500): the job never runs in a high hour, runs above its request
    in a low hour, and finishes on time."""
    h = np.full(24, 500.0)
    h[[2, 5, 8]] = 100.0
    c = np.repeat(h, 4)
    tasks = {"arrival_ts_utc": [0.0], "duration_s": [4 * HOUR], "cpu_cores": [10.0], "interruptible": [True],
             "checkpoint_s": [30.0], "min_scale": [0.5], "max_scale": [2.0], "marginal_throughput": [0.8],
             "max_delay_s": [12 * HOUR]}
    r = run(one_dc(tmp_path, tasks, c), "carbonscaler")
    b = r.steps["busy_cores"].to_numpy()
    low = np.repeat(h, 4) < 200
    assert b[~low].max() < 10.0 * 30.0 / STEP + 1e-9  # at most a checkpoint's spill into a high step
    assert b[low].max() == pytest.approx(20.0)  # scaled up to 2x its request
    assert r.totals["rescales"] >= 1 and r.totals["tasks_completed"] == 1 and r.totals["sla_violations"] == 0
    # against its own rule: the carbon of the run is below running it at once at its request (local_only)
    assert r.totals["carbon_kg"] < run(one_dc(tmp_path / "b", tasks, c), "local_only").totals["carbon_kg"]


def test_carbonscaler_greedy_by_hand():
    """Slots (1 h) at 100, 500, 100; work 3 h; scale 0.5..2, m = 0.8: base values 1.2/c, extra 0.8/c. Order:
    base 0, base 2 (1.2/100), extra 0, extra 2 (0.8/100), base 1 (1.2/500)... Bases give 2 x 0.6 h, extra of
    slot 0: 1.5 x 0.8 = 1.2 h, then slot 2's extra covers the last 0.6 h: 0.75 units. Slot 0 runs at 2.0."""
    cb = np.repeat([100.0, 500.0, 100.0], 4)
    cb = np.r_[cb, np.inf]  # (the horizon: 12 steps + now)
    x = CS.carbonscaler_scale(cb, 0.0, 0, 3 * HOUR + 1e-6, 3 * HOUR, 0.5, 2.0, 0.8, True)
    assert x == pytest.approx(2.0)
    # slots at 500 then 100, 1 h of work: the low slot's minimum and extra cover it -> now: suspended (0)
    x = CS.carbonscaler_scale(np.repeat([500.0, 100.0], 4), 0.0, 0, 2 * HOUR, 1.0 * HOUR, 0.5, 2.0, 0.8, True)
    assert x == 0.0
    # cannot be suspended: at least its minimum scale
    x = CS.carbonscaler_scale(np.repeat([500.0, 100.0], 4), 0.0, 0, 2 * HOUR, 1.0 * HOUR, 0.5, 2.0, 0.8, False)
    assert x == 0.5


# ------------------------------------------------------------------------------------------ VCC
def test_vcc_curve_by_hand():
    """Demand 3.2 share-steps; hourly carbon lowest in hour 10 then hour 3; yesterday's inflexible share
    0.5 in hour 10: hour 10 takes 0.5 (2 share-steps), hour 3 the remaining 1.2 / 4 = 0.3."""
    cb = np.full(97, 400.0)
    cb[40:44] = 50.0
    cb[12:16] = 80.0
    infl = np.zeros(96)
    infl[40:44] = 0.5
    out = np.empty(24)
    VCC.vcc_curve(cb, 3.2, infl, out)
    expect = np.zeros(24)
    expect[10], expect[3] = 0.5, 0.3
    np.testing.assert_allclose(out, expect, atol=1e-12)


@pytest.mark.parametrize("seed", range(5))
def test_vcc_curve_keeps_the_days_demand_in_its_greenest_hours(seed):
    """Random forecast and inflexible load: the curve holds exactly the demand (sum x 4 steps), never more
    than the room the inflexible load leaves, and no hour holds anything while a greener hour has room
    left; a demand above the day's room gives every hour its room."""
    rng = np.random.default_rng(seed)
    cb = rng.uniform(50.0, 500.0, 97)
    infl = rng.uniform(0.0, 0.6, 96)
    room = 1.0 - infl.reshape(24, 4).max(axis=1)
    ch = cb[:96].reshape(24, 4).sum(axis=1)
    dem = rng.uniform(0.1, 0.9) * room.sum() * 4
    out = np.empty(24)
    VCC.vcc_curve(cb, dem, infl, out)
    assert out.sum() * 4 == pytest.approx(dem, rel=1e-12)
    assert np.all(out >= 0.0) and np.all(out <= room + 1e-12)
    partial = out < room - 1e-12
    assert ch[out > 0].max() <= ch[partial].min()
    VCC.vcc_curve(cb, room.sum() * 4 + 1.0, infl, out)
    np.testing.assert_allclose(out, room)


def test_vcc_caps_flexible_load_under_its_daily_curve(tmp_path):
    """Day 0 (no history, no curve): 8 flexible 1-h tasks of 10 of 100 cores arrive at 02:00 and start at
    once. Their demand, 8 x 0.1 x 4 = 3.2 share-steps, is day 1's forecast: the curve gives hour 10 (the
    lowest carbon) 3.2 / 4 = 0.8 and every other hour 0. Day 1's 10 tasks (same kind, arriving at 02:00 with
    20 h of delay) are held until hour 10, where 8 of them (80 cores, the curve) start; the other two wait
    for a curve that has no room left that day, until the last step from which they still finish on time
    (deadline 02:00 + 21 h: start 22:00)."""
    c = np.full(3 * 96, 400.0)
    for d in range(3):
        c[d * 96 + 40:d * 96 + 44] = 50.0
    n0, n1 = 8, 10
    arr = np.r_[np.full(n0, 8 * STEP), np.full(n1, 96 * STEP + 8 * STEP)]
    n = n0 + n1
    tasks = {"arrival_ts_utc": arr, "duration_s": np.full(n, HOUR), "cpu_cores": np.full(n, 10.0),
             "mem_gb": np.full(n, 1.0), "max_delay_s": np.full(n, 20 * HOUR)}
    r = run(one_dc(tmp_path, tasks, c, cores=100), "vcc")
    t0 = r.tasks["arrival_ts_utc"][0] - _td(8 * STEP)
    starts = sorted((s - t0).total_seconds() / STEP for s in r.tasks["start_ts_utc"])
    assert starts == [8.0] * n0 + [96.0 + 40.0] * 8 + [96.0 + 88.0] * 2
    b = r.steps["busy_cores"].to_numpy()
    assert b[96 + 40:96 + 44].max() == pytest.approx(80.0) and b[96 + 8:96 + 40].max() == 0.0
    assert r.totals["sla_violations"] == 0


def _vcc_window_run(tmp_path, lo_h0):
    """Three days at one site of 100 cores, 20 GPUs, 1000 GB; carbon 400 g/kWh but 50 in hours 12-23 of every
    day, except day 1's low window, which starts at hour ``lo_h0`` (12 hours long). On days 0 and 1, at each
    hour 0-11 two tasks of each of three kinds arrive (1 h, 20 h of delay): 50 cores, 10 GPUs, 500 GB, each
    kind half of one resource and nothing of the others. Every resource is half used over a day, but the
    tasks' dominant shares add up to 1.5 of the site: measured in them the day's demand (144 share-steps)
    exceeds the 96 a day has and the curve comes out flat."""
    c = np.full(3 * 96, 400.0)
    for d, h0 in enumerate((12, lo_h0, 12)):
        c[d * 96 + 4 * h0:d * 96 + 4 * h0 + 48] = 50.0
    arr = np.repeat([d * 96 * STEP + h * HOUR for d in range(2) for h in range(12)], 6)
    n = arr.shape[0]
    kind = np.tile(np.repeat(np.arange(3), 2), n // 6)
    tasks = {"arrival_ts_utc": arr, "duration_s": np.full(n, HOUR), "cpu_cores": np.where(kind == 0, 50.0, 0.0),
             "gpus": np.where(kind == 1, 10.0, 0.0), "mem_gb": np.where(kind == 2, 500.0, 0.0),
             "max_delay_s": np.full(n, 20 * HOUR)}
    p = write_bundle(tmp_path / f"w{lo_h0}", locations=["A"], timezones=["UTC"], population_weight=[1.0],
                     n_steps=len(c), total_cores=100, total_gpus=20, total_mem_gb=1000, tasks=tasks,
                     signals={"carbon_g_per_kwh": c})
    return run(p, "vcc")


def _hourly(r, col, day):
    x = r.steps[col].to_numpy()[day * 96:(day + 1) * 96]
    return x.reshape(24, 4).mean(axis=1)


@pytest.mark.parametrize("lo_h0", [12, 2])
def test_vcc_moves_the_days_flexible_load_into_the_forecast_low_carbon_window(tmp_path, lo_h0):
    """Day 0 (no curve) runs every task at arrival: 48 fraction-steps of each resource. Day 1's curve (the
    oracle forecast's window: hours ``lo_h0`` .. ``lo_h0`` + 11) holds that demand, one whole site in each
    of the window's 12 hours and 0 elsewhere, so day 1's tasks, arriving at hours 0-11, wait for the window
    and then run two of each kind an hour, in arrival order: every resource is fully used in the window's 12
    hours and idle in the others, and the day's work (48 fraction-steps a resource) is all done that day.
    Moving day 1's window (a perturbed forecast: hours 2-13 instead of 12-23) moves the curve and the load
    with it. (Measured in dominant shares the curve was flat and the same for both forecasts.)"""
    r = _vcc_window_run(tmp_path, lo_h0)
    expect = np.zeros(24)
    expect[lo_h0:lo_h0 + 12] = 1.0
    for col, cap in (("busy_cores", 100.0), ("busy_gpus", 20.0)):
        np.testing.assert_allclose(_hourly(r, col, 0)[:12], 1.0 * cap)  # day 0: at arrival
        np.testing.assert_allclose(_hourly(r, col, 1), expect * cap, atol=1e-9)  # day 1: in the window
        assert _hourly(r, col, 1).sum() * 4 / cap == pytest.approx(48.0)  # the day's demand, kept
    w = np.array(waits(r))[np.argsort(r.tasks["arrival_ts_utc"].to_numpy(), kind="stable")]
    assert w[72:].tolist() == [lo_h0 * HOUR] * 72  # arrivals of hour h start at lo_h0 + h, two of a kind an hour
    assert r.totals["sla_violations"] == 0


def test_baselines_are_refused_step_by_step(tmp_path):
    p = one_dc(tmp_path, {"arrival_ts_utc": [0.0]}, np.full(8, 300.0))
    sim = sim_core.Simulator(p, 0)
    sim.reset()
    with pytest.raises(RunOptionsError, match="published baseline"):
        sim.builtin_actions("wait_awhile")


# ------------------------------------------------------------------------------------------ a week, 3 sites
@pytest.fixture(scope="module")
def week(tmp_path_factory):
    n_steps = 7 * 96
    rng = np.random.default_rng(11)
    k = np.arange(n_steps)
    carbon = np.stack([300 + 200 * np.sin(2 * np.pi * k / 96), 200 + 120 * np.cos(2 * np.pi * k / 96),
                       rng.uniform(50, 600, n_steps)])
    return write_bundle(tmp_path_factory.mktemp("week"), locations=["A", "B", "C"],
                        timezones=["UTC", "Asia/Singapore", "America/New_York"], n_steps=n_steps,
                        total_cores=[96, 128, 64], total_gpus=[8, 8, 4], total_mem_gb=[512, 512, 256],
                        signals={"carbon_g_per_kwh": carbon}, tasks=_random_workload(600, n_steps, 5))


@pytest.mark.parametrize("policy", BASELINES)
@pytest.mark.parametrize("power", ["managed", "always_on"])
def test_a_week_conserves_energy_accounts_for_every_task_and_repeats(week, policy, power):
    a = sim_core.run(week, policy, seed=3, power=power)
    check_result(a, a.totals["tasks"])
    s = a.steps
    for col, caps in (("busy_cores", (96, 128, 64)), ("busy_gpus", (8, 8, 4)), ("busy_mem_gb", (512, 512, 256))):
        b = s[col].to_numpy().reshape(3, -1)
        assert b.min() >= 0.0 and (b.max(axis=1) <= np.array(caps) + 1e-9).all(), col
    T = a.totals
    assert T["invalid_controls"] == 0 and T["invalid_actions"] == 0
    assert T["tasks_paused_at_end"] + T["tasks_resuming_at_end"] <= T["tasks_started"]
    assert s["sla_violations"].sum() == T["sla_violations"]
    b = sim_core.run(week, policy, seed=3, power=power)
    assert a.steps.equals(b.steps) and a.tasks.equals(b.tasks) and a.totals == b.totals


def test_a_week_the_baselines_shift_work_and_use_their_controls(week):
    """On the week, each baseline is carbon-aware where its rule says so: less carbon than running every
    task at once at its origin (local_only), and the controlling ones do control."""
    base = sim_core.run(week, "local_only", seed=3, forecast="oracle")
    for pol in BASELINES:
        r = sim_core.run(week, pol, seed=3, forecast="oracle")
        if pol != "gaia_res_first":  # (work-conserving on free reserved capacity: may not save)
            assert r.totals["carbon_kg"] < base.totals["carbon_kg"], pol
    assert sim_core.run(week, "wait_awhile_interrupting", seed=3).totals["pauses"] > 0
    assert sim_core.run(week, "carbonscaler", seed=3).totals["rescales"] > 0
