"""Flexible tasks (bundle format 2): allowed delays, pause / resume with checkpoint overhead, elastic
rescaling, and the controls a policy uses to drive them (docs/simulation.md "Flexible tasks").

Each case is written out by hand: start, pause and resume times, the work left, the overhead, the
speed-up of the task's scaling curve at the new scale, and the busy time every step must then carry."""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest
from numba import njit

import sim_core
from sim_core import engine as E
from sim_core.engine import speedup
from sim_core.options import RunOptionsError
from sim_core.policies import registry
from sim_core.testing import write_bundle

STEP = 900.0


def one_dc(tmp_path, tasks, *, n_steps=32, cores=64, gpus=8, mem=512.0, **kw):
    args = dict(locations=["A"], timezones=["UTC"], population_weight=[1.0], n_steps=n_steps,
                total_cores=cores, total_gpus=gpus, total_mem_gb=mem, tasks=tasks)
    args.update(kw)
    return write_bundle(tmp_path, **args)


def drive(path, controls_at: dict[int, dict[int, float]], *, power="always_on", **kw):
    """Run the step API: every pending task goes to datacenter A; ``controls_at[j]`` at step j."""
    sim = sim_core.Simulator(path, 0, power=power, **kw)
    obs = sim.reset()
    infos = []
    while not sim.done:
        j = sim.step_index
        obs, info = sim.step(np.ones(obs["n_pending"], np.int64), controls=controls_at.get(j))
        infos.append(info)
    return sim, sim.result(), infos


def busy(r, col="busy_cores"):
    return r.steps[col].to_numpy()


# ------------------------------------------------------------------------------------------ pause / resume
INTR = {"arrival_ts_utc": [0.0], "duration_s": [3600.0], "cpu_cores": [8.0], "mem_gb": [10.0],
        "interruptible": [True], "checkpoint_s": [30.0], "max_delay_s": [6 * 3600.0]}


def test_pause_stops_busy_time_exactly_and_resume_pays_the_overhead(tmp_path):
    """Start 0, pause at 1800 (step 2), resume at 3600 (step 4): 1800 s of work left + 30 s overhead, so
    the task runs [0, 1800) and [3600, 5430); nothing is booked while it is paused."""
    p = one_dc(tmp_path, INTR)
    sim, r, infos = drive(p, {2: {0: 0.0}, 4: {0: 1.0}})
    b = busy(r)
    np.testing.assert_array_equal(b[:6], [8.0, 8.0, 0.0, 0.0, 8.0, 8.0])
    assert b[6] == pytest.approx(8.0 * 30.0 / STEP, abs=1e-12)
    assert not b[7:].any()
    assert r.steps["running"].to_list()[:8] == [1, 1, 0, 0, 1, 1, 1, 0]
    assert r.steps["paused"].to_list()[:6] == [0, 0, 1, 1, 0, 0]
    t = r.tasks.row(0, named=True)
    assert (t["finish_ts_utc"] - t["arrival_ts_utc"]).total_seconds() == 5430.0
    assert (t["start_ts_utc"] - t["arrival_ts_utc"]).total_seconds() == 0.0  # the first start is kept
    assert t["n_pauses"] == 1 and t["n_resumes"] == 1 and t["run_s"] == 1800.0 + 1830.0
    assert not t["violated"] and t["status"] == "started"
    T = r.totals
    assert T["pauses"] == 1 and T["resumes"] == 1 and T["invalid_controls"] == 0 and T["tasks_completed"] == 1
    # booked busy time = allocation x the seconds it ran (overhead included)
    assert b.sum() * STEP == pytest.approx(8.0 * 3630.0, rel=1e-12)
    # memory follows the same segments
    np.testing.assert_allclose(busy(r, "busy_mem_gb")[:7], np.array([1, 1, 0, 0, 1, 1, 30 / STEP]) * 10.0,
                               rtol=0, atol=1e-12)
    # the step API reports the same per-step energy as the results
    np.testing.assert_allclose([i["it_kwh"].sum() for i in infos], r.steps.group_by("step", maintain_order=True)
                               .agg(pl.col("it_kwh").sum())["it_kwh"].to_numpy(), rtol=1e-12)


def test_pause_without_controls_changes_nothing(tmp_path):
    """The same task under the step API with no controls, and under a built-in policy: one segment."""
    p = one_dc(tmp_path, INTR)
    _, r, _ = drive(p, {})
    b = busy(r)
    np.testing.assert_array_equal(b[:5], [8.0, 8.0, 8.0, 8.0, 0.0])
    r2 = sim_core.run(p, "local_only", power="always_on")
    np.testing.assert_array_equal(busy(r2), b)
    assert r2.totals["pauses"] == 0 and r2.tasks["n_pauses"][0] == 0


def test_pause_during_the_overhead_loses_it(tmp_path):
    """A segment paused before its checkpoint overhead is over has done no work: the whole remaining work
    (and a new overhead) is left for the next resume."""
    p = one_dc(tmp_path, {**INTR, "checkpoint_s": [1000.0]})
    # pause at 900 (900 s of work done), resume at 1800 (segment 1000 + 2700), pause at 2700 (in the
    # overhead: nothing done), resume at 3600 (segment 1000 + 2700 -> finish 7300)
    _, r, _ = drive(p, {1: {0: 0.0}, 2: {0: 1.0}, 3: {0: 0.0}, 4: {0: 1.0}})
    t = r.tasks.row(0, named=True)
    assert (t["finish_ts_utc"] - t["arrival_ts_utc"]).total_seconds() == 7300.0
    assert t["run_s"] == 900.0 + 900.0 + 3700.0 and t["n_pauses"] == 2 and t["n_resumes"] == 2
    assert busy(r).sum() * STEP == pytest.approx(8.0 * 5500.0, rel=1e-12)


def test_forced_resume_keeps_a_paused_task_on_time(tmp_path):
    """Paused at 900 and never resumed by the policy: deadline 5400 (1.5 x 3600); at step 2 waiting one more
    step would end at 1800 + 900 + 30 + 2700 = 5430 > 5400, so the engine resumes it at 1800."""
    p = one_dc(tmp_path, {**INTR, "max_delay_s": [0.0]})
    _, r, _ = drive(p, {1: {0: 0.0}})
    t = r.tasks.row(0, named=True)
    assert (t["finish_ts_utc"] - t["arrival_ts_utc"]).total_seconds() == 1800.0 + 30.0 + 2700.0
    assert (t["deadline_ts_utc"] - t["arrival_ts_utc"]).total_seconds() == 5400.0 and not t["violated"]
    assert r.totals["forced_resumes"] == 1 and r.totals["resumes"] == 0 and t["n_resumes"] == 1
    assert r.steps["paused"].to_list()[:3] == [0, 1, 0]


def test_pause_lasts_at_least_until_the_next_step(tmp_path):
    """A task already too late to wait is still paused for the step it was paused in (the guard looks at
    tasks paused in earlier steps), then resumed: deadline 1.2 x 3600 = 4320; paused at 2700 with 900 s
    left (2700 + 900 + 30 + 900 > 4320 already), resumed by the guard at 3600, finishes 4530: late."""
    p = one_dc(tmp_path, {**INTR, "max_delay_s": [0.0]})
    _, r, _ = drive(p, {3: {0: 0.0}}, sla_multiplier=1.2)
    t = r.tasks.row(0, named=True)
    assert r.steps["paused"].to_list()[:6] == [0, 0, 0, 1, 0, 0]
    assert (t["finish_ts_utc"] - t["arrival_ts_utc"]).total_seconds() == 3600.0 + 30.0 + 900.0
    assert t["violated"] and r.totals["sla_violations"] == 1 and r.totals["forced_resumes"] == 1
    assert r.steps["sla_violations"].to_list()[:6] == [0, 0, 0, 0, 1, 0]


# ------------------------------------------------------------------------------------------ rescale
ELASTIC = {"arrival_ts_utc": [0.0], "duration_s": [3600.0], "cpu_cores": [4.0], "gpus": [1.0], "mem_gb": [16.0],
           "gpu_mem_gb": [16.0], "interruptible": [True], "checkpoint_s": [30.0], "min_scale": [0.5],
           "max_scale": [4.0], "marginal_throughput": [0.9]}


def test_rescale_finishes_when_the_curve_says(tmp_path):
    """Start 0 at scale 1; at 900 (step 1) rescale to 2: 2700 s of work left; with a marginal throughput of
    0.9 the speed-up at scale 2 is 1 + 0.9 x (2 - 1) = 1.9; the new segment is 30 + 2700 / 1.9 s."""
    p = one_dc(tmp_path, ELASTIC)
    sim, r, _ = drive(p, {1: {0: 2.0}})
    s2 = 1.0 + 0.9 * (2.0 - 1.0)
    assert speedup(2.0, 0.9) == s2 == pytest.approx(1.9) and speedup(1.0, 0.37) == 1.0
    f = 900.0 + (30.0 + 2700.0 / s2)
    t = r.tasks.row(0, named=True)
    assert sim.prep.state.fin[0] == f
    assert abs((t["finish_ts_utc"] - t["arrival_ts_utc"]).total_seconds() - f) < 1e-6
    assert t["scale"] == 2.0 and t["n_rescales"] == 1 and t["n_resumes"] == 0 and t["n_pauses"] == 0
    g = busy(r, "busy_gpus")
    assert g[0] == 1.0 and g[1] == 2.0
    assert g[2] == pytest.approx(2.0 * (f - 1800.0) / STEP, abs=1e-12)
    assert not g[3:].any()
    np.testing.assert_allclose(busy(r)[:3], 4.0 * g[:3], rtol=1e-15)  # cores follow the scale (4 per GPU)
    assert r.totals["rescales"] == 1 and r.totals["pauses"] == 0
    # booked GPU-seconds: 1 x 900 + 2 x the new segment
    assert g.sum() * STEP == pytest.approx(900.0 + 2.0 * (f - 900.0), rel=1e-12)


def test_rescale_down_and_back(tmp_path):
    """Scale 0.5 from 900, back to 1 at 2700: the work done at 0.5 is 1800 x speedup(0.5, 0.9)."""
    p = one_dc(tmp_path, ELASTIC)
    _, r, _ = drive(p, {1: {0: 0.5}, 3: {0: 1.0}})
    s = speedup(0.5, 0.9)
    assert s == pytest.approx(0.55)
    done = 900.0 + (2700.0 - 900.0 - 30.0) * s
    f = 2700.0 + 30.0 + (3600.0 - done)
    t = r.tasks.row(0, named=True)
    assert abs((t["finish_ts_utc"] - t["arrival_ts_utc"]).total_seconds() - f) < 1e-6
    assert t["n_rescales"] == 2 and t["scale"] == 1.0
    g = busy(r, "busy_gpus")
    np.testing.assert_allclose(g[:3], [1.0, 0.5, 0.5], rtol=0, atol=1e-15)
    assert g.sum() * STEP == pytest.approx(900.0 + 0.5 * 1800.0 + (f - 2700.0), rel=1e-12)


def test_rescale_beyond_capacity_waits_paused_and_capacity_is_never_exceeded(tmp_path):
    """Two 4-GPU elastic tasks on 8 GPUs: scaling one to 2 (8 GPUs) cannot start while the other runs; it
    waits at the head of the queue (resuming) and starts when the other has finished."""
    tasks = {k: v * 2 for k, v in ELASTIC.items()}
    tasks.update(gpus=[4.0, 4.0], gpu_mem_gb=[64.0, 64.0], duration_s=[3600.0, 1800.0], cpu_cores=[8.0, 8.0])
    p = one_dc(tmp_path, tasks)
    sim, r, _ = drive(p, {1: {0: 2.0}})
    g = busy(r, "busy_gpus")
    assert g.max() <= 8.0 + 1e-12
    # task 1 ends at 1800; task 0 (stopped at 900, 2700 s left) restarts at 1800 with 8 GPUs
    f0 = 1800.0 + (30.0 + 2700.0 / speedup(2.0, 0.9))
    assert sim.prep.state.fin[0] == f0
    np.testing.assert_allclose(g[:3], [8.0, 4.0, 8.0], atol=1e-12)
    assert r.steps["queue_len"].to_list()[:3] == [0, 1, 0]
    assert r.totals["tasks_resuming_at_end"] == 0 and r.totals["rescales"] == 1


# ------------------------------------------------------------------------------------------ managed power
def test_resume_on_sleeping_servers_waits_for_the_wake(tmp_path):
    """Managed power, three 64-core servers, one (the spare pool) on at the start: the 128-core task waits
    260 s for a wake and starts at 260; paused at 1800 (1540 s done, 2060 left), its servers are switched
    off at the next boundary; the resume at 3600 wakes them again, so the segment starts at 3860 and
    ends 30 + 2060 s later."""
    p = one_dc(tmp_path, {**INTR, "cpu_cores": [128.0], "mem_gb": [100.0]}, cores=192, gpus=0, mem=1536.0)
    sim, r, _ = drive(p, {2: {0: 0.0}, 4: {0: 1.0}}, power="managed")
    st = sim.prep.state
    assert st.start[0] == 260.0 and st.segs[0] == 3600.0 + 260.0
    assert st.fin[0] == 3860.0 + (30.0 + 2060.0)
    b = busy(r)
    assert b[2] == 0.0 and b[3] == 0.0 and b[4] == pytest.approx(128.0 * (900.0 - 260.0) / STEP, abs=1e-12)
    assert b.sum() * STEP == pytest.approx(128.0 * (1540.0 + 2090.0), rel=1e-12)
    on = r.steps["servers_on"].to_numpy()
    assert on[3] == 1.0  # only the spare pool while it is paused


# ------------------------------------------------------------------------------------------ deadlines, SLA
def test_deadline_is_arrival_plus_allowed_delay_plus_duration(tmp_path):
    tasks = {"arrival_ts_utc": [0.0, 0.0, 0.0], "duration_s": [3600.0] * 3, "max_delay_s": [6 * 3600.0, 0.0, 600.0]}
    p = one_dc(tmp_path, tasks)
    r = sim_core.run(p, "local_only", power="always_on")
    dl = [(d - a).total_seconds() for d, a in zip(r.tasks["deadline_ts_utc"], r.tasks["arrival_ts_utc"], strict=True)]
    assert dl == [6 * 3600.0 + 3600.0, 5400.0, 5400.0]  # the larger of delay + duration and 1.5 x duration
    r = sim_core.run(p, "local_only", power="always_on", sla_multiplier=1.1)
    dl = [(d - a).total_seconds() for d, a in zip(r.tasks["deadline_ts_utc"], r.tasks["arrival_ts_utc"], strict=True)]
    assert dl == [6 * 3600.0 + 3600.0, 3960.0, 4200.0]  # (1.1 x 3600 to the microsecond)


def test_allowed_delay_lets_a_policy_defer_without_violation(tmp_path):
    """Deferred for 5 h: on time with a 6 h allowed delay; without one it is forced to its origin at its
    deadline (1.5 x duration) and started then."""
    tasks = {"arrival_ts_utc": [0.0, 0.0], "duration_s": [3600.0, 3600.0], "max_delay_s": [6 * 3600.0, 0.0]}
    p = one_dc(tmp_path, tasks, n_steps=40)
    sim = sim_core.Simulator(p, 0, power="always_on")
    obs = sim.reset()
    while not sim.done:
        act = np.zeros(obs["n_pending"], np.int64) if sim.step_index < 20 else np.ones(obs["n_pending"], np.int64)
        obs, _ = sim.step(act)
    t = sim.result().tasks
    starts = [(s - a).total_seconds() for s, a in zip(t["start_ts_utc"], t["arrival_ts_utc"], strict=True)]
    assert starts == [20 * STEP, 6 * STEP] and t["forced"].to_list() == [False, True]
    assert t["violated"].to_list() == [False, True]  # 5400 + 3600 > 5400


def test_violations_are_decided_at_start_withdrawn_at_pause_and_redecided_at_resume(tmp_path):
    """Deadline 5400 (1.5 x 3600). Start 0 (finish 3600: on time); paused at 900 (2700 left); resumed at 1800
    (finish 4530: on time); paused at 2700 (870 done after the overhead: 1830 left); the guard resumes it
    at 3600 (3600 + 900 + 30 + 1830 > 5400): finish 5460, late, decided in step 4. The per-step counts
    (results and step API) add up to the total."""
    p = one_dc(tmp_path, {**INTR, "max_delay_s": [0.0]}, n_steps=16)
    _, r, infos = drive(p, {1: {0: 0.0}, 2: {0: 1.0}, 3: {0: 0.0}})
    t = r.tasks.row(0, named=True)
    assert (t["finish_ts_utc"] - t["arrival_ts_utc"]).total_seconds() == 5460.0 and t["violated"]
    v = r.steps["sla_violations"].to_list()
    assert v[:6] == [0, 0, 0, 0, 1, 0]
    assert [i["sla_violations"] for i in infos][:6] == v[:6]
    assert sum(i["sla_violations"] for i in infos) == r.totals["sla_violations"] == 1
    assert sum(i["tasks_started"] for i in infos) == r.totals["tasks_started"] == 1
    assert t["n_pauses"] == 2 and t["n_resumes"] == 2 and r.totals["forced_resumes"] == 1


def test_a_late_start_withdrawn_by_a_pause_counts_minus_one_in_that_step(tmp_path):
    """sla_multiplier 1.01. Task 0 (64 cores, 900 s) holds every core until 900; task 1 (8 cores, 3600 s,
    deadline 1 + 3636) starts at 900: finish 4500, late, +1 in step 1. Paused at 1800: withdrawn, -1 in
    step 2. The guard resumes it at 2700 (finish 5430, late): +1 in step 3."""
    tasks = {"task_id": [0, 1], "arrival_ts_utc": [0.0, 1.0], "duration_s": [900.0, 3600.0],
             "cpu_cores": [64.0, 8.0], "interruptible": [False, True], "checkpoint_s": [0.0, 30.0],
             "mem_gb": [1.0, 1.0]}
    p = one_dc(tmp_path, tasks)
    _, r, infos = drive(p, {2: {1: 0.0}}, sla_multiplier=1.01)
    v = r.steps["sla_violations"].to_list()
    assert v[:5] == [0, 1, -1, 1, 0]
    assert [i["sla_violations"] for i in infos][:5] == v[:5]
    assert sum(v) == r.totals["sla_violations"] == 1
    t = r.tasks.row(1, named=True)
    assert (t["finish_ts_utc"] - t["arrival_ts_utc"]).total_seconds() == 5430.0 - 1.0


# ------------------------------------------------------------------------------------------ controls
def test_invalid_python_controls_are_refused_by_name(tmp_path):
    p = one_dc(tmp_path, {"arrival_ts_utc": [0.0, 0.0], "duration_s": [3600.0, 3600.0],
                          "interruptible": [True, False], "checkpoint_s": [30.0, 0.0], "min_scale": [1.0, 0.5],
                          "max_scale": [1.0, 2.0]})
    sim = sim_core.Simulator(p, 0, power="always_on")
    obs = sim.reset()
    obs, _ = sim.step([1, 1])
    assert sorted(obs["flex_index"].tolist()) == [0, 1] and obs["flex_state"].tolist() == ["running", "running"]
    cases = [({5: 0.0}, "not a controllable task"), ({1: 0.0}, "not interruptible"),
             ({0: 2.0}, r"must be in \[1, 1\]"), ({1: 3.0}, r"must be in \[0.5, 2\]"), ({0: math.nan}, "finite"),
             ({0: True}, "finite number"), ([0], "mapping")]
    for controls, msg in cases:
        with pytest.raises(RunOptionsError, match=msg):
            sim.step([], controls=controls)
    assert sim.step_index == 1  # nothing ran
    obs, _ = sim.step([], controls={0: 0.0, 1: 2.0})
    with pytest.raises(RunOptionsError, match=r"task 0 \(task_id 0\).*not running"):
        sim.step([], controls={0: 0.0})
    r = sim.result()
    assert r.totals["pauses"] == 1 and r.totals["rescales"] == 1 and r.tasks["scale"].to_list() == [1.0, 2.0]


def test_built_in_policies_ignore_flexibility_except_deadlines(tmp_path):
    """Interruptible and elastic tasks (no allowed delay) run exactly as plain ones under every built-in
    policy: the engine never pauses or rescales for them."""
    rng = np.random.default_rng(3)
    n = 60
    base = {"arrival_ts_utc": np.sort(rng.uniform(0, 40 * STEP, n)), "duration_s": rng.uniform(900, 9000, n),
            "cpu_cores": rng.choice([1.0, 4.0, 16.0], n), "gpus": rng.choice([0.0, 1.0, 2.0], n),
            "mem_gb": rng.uniform(1, 30, n)}
    flex = {**base, "interruptible": rng.random(n) < 0.5, "checkpoint_s": np.full(n, 30.0),
            "min_scale": np.full(n, 0.5), "max_scale": np.full(n, 4.0), "marginal_throughput": np.full(n, 0.9)}
    kw = dict(locations=["A", "B"], timezones=["UTC", "Asia/Singapore"], n_steps=48, total_cores=32,
              total_gpus=4, total_mem_gb=256, signals={"carbon_g_per_kwh": np.array([[500.0] * 48, [100.0] * 48])})
    pa = write_bundle(tmp_path / "a", tasks=base, **kw)
    pb = write_bundle(tmp_path / "b", tasks=flex, **kw)
    for pol in registry.of_kind("rule"):  # (the published baselines control flexible tasks: test_baselines.py)
        ra, rb = sim_core.run(pa, pol, seed=1), sim_core.run(pb, pol, seed=1)
        assert ra.steps.equals(rb.steps), pol
        assert ra.tasks.drop("interruptible", "elastic").equals(rb.tasks.drop("interruptible", "elastic")), pol
        assert rb.totals["tasks_flexible"] == n and rb.totals["pauses"] == 0


# ------------------------------------------------------------------------------------------ random controls
def _random_workload(n, n_steps, seed):
    rng = np.random.default_rng(seed)
    g = rng.choice([0.0, 0.5, 1.0, 2.0, 4.0], n)
    el = (g >= 1.0) & (rng.random(n) < 0.7)
    intr = (g > 0) & (rng.random(n) < 0.8)
    return {"arrival_ts_utc": np.sort(rng.uniform(0, (n_steps - 8) * STEP, n)),
            "duration_s": rng.uniform(600, 12000, n), "cpu_cores": rng.choice([1.0, 2.0, 8.0], n), "gpus": g,
            "mem_gb": rng.uniform(1, 40, n), "gpu_mem_gb": g * 16.0,
            "interruptible": intr, "checkpoint_s": np.where(intr | el, 30.0, 0.0),
            "min_scale": np.where(el, 1.0 / np.maximum(g, 1.0), 1.0),
            "max_scale": np.where(el, 8.0 / np.maximum(g, 1.0), 1.0),
            "marginal_throughput": np.where(el, rng.uniform(0.5, 0.99, n), 0.0),
            "max_delay_s": np.where(rng.random(n) < 0.5, 6 * 3600.0, 0.0)}


def _random_policy(seed, n_dc):
    rng = np.random.default_rng(seed)

    def policy(obs):
        acts = rng.integers(0, n_dc + 1, obs["n_pending"])
        ctl = {}
        for k, i in enumerate(obs["flex_index"]):
            u = rng.random()
            st = obs["flex_state"][k]
            if st == "running" and obs["flex_interruptible"][k] and u < 0.15:
                ctl[int(i)] = 0.0
            elif st == "paused" and u < 0.4:
                ctl[int(i)] = float(rng.uniform(obs["flex_min_scale"][k], obs["flex_max_scale"][k]))
            elif st == "running" and u < 0.3 and obs["flex_max_scale"][k] > obs["flex_min_scale"][k]:
                ctl[int(i)] = float(rng.choice([obs["flex_min_scale"][k], 1.0, obs["flex_max_scale"][k]]))
        return acts, ctl
    return policy


class Ledger:
    """An independent account of every run segment (from the engine state after each step), to
    recompute the busy time each step must carry."""

    def __init__(self, prep):
        self.prep = prep
        m = prep.tasks.arrival.shape[0]
        self.nseg = np.zeros(m, np.int64)
        self.cut = np.zeros(m, np.int64)
        self.segs: dict[int, list[list[float]]] = {}

    def after_step(self, j):
        S, T = self.prep.state, self.prep.tasks
        t = self.prep.ctx.t0 + STEP * j
        flexible = S.scale.shape[0] == T.arrival.shape[0]
        for i in np.flatnonzero(~np.isnan(S.start)):
            n_now = int(S.nseg[i]) if flexible and T.flexible[i] else 1
            cuts = int(S.npause[i] + S.nrescale[i]) if flexible and T.flexible[i] else 0
            lst = self.segs.setdefault(int(i), [])
            if cuts > self.cut[i]:  # stopped at the start of this step
                lst[-1][1] = t
                self.cut[i] = cuts
            if n_now > self.nseg[i]:
                s0 = S.segs[i] if flexible and T.flexible[i] else S.start[i]
                x = S.scale[i] if flexible and T.flexible[i] else 1.0
                lst.append([float(s0), float(S.fin[i]), float(x)])
                self.nseg[i] = n_now

    def busy(self, n_dc, n, what):
        T, S = self.prep.tasks, self.prep.state
        t0 = self.prep.ctx.t0
        req = {"busy_cores": T.cores, "busy_gpus": T.gpus, "busy_mem_gb": T.mem}[what]
        out = np.zeros((n_dc, n))
        for i, lst in self.segs.items():
            d = S.dest[i]
            for a, b, x in lst:
                for j in range(int((a - t0) // STEP), min(int(math.ceil((b - t0) / STEP)), n)):
                    lo, hi = max(a, t0 + STEP * j), min(b, t0 + STEP * (j + 1))
                    if hi > lo:
                        out[d, j] += req[i] * x * (hi - lo) / STEP
        return out


def assert_queue_lists(S):
    """Each datacenter's two queue lists: the resumed (or rescaled) tasks lead (order below every first join),
    ``q_rlast`` is the last of them (-1: none) and ``q_tail`` the list's last task."""
    for d in range(S.q_head.shape[0]):
        for k in range(2):
            order, cur = [], S.q_head[d, k]
            while cur >= 0:
                order.append(cur)
                cur = S.nxt[cur]
            resumed = [i for i in order if S.seq[i] < 0]
            assert order[:len(resumed)] == resumed, (d, k, order)
            assert S.q_rlast[d, k] == (resumed[-1] if resumed else -1), (d, k, order)
            assert S.q_tail[d, k] == (order[-1] if order else -1), (d, k, order)


@pytest.mark.parametrize("power", ["always_on", "managed"])
@pytest.mark.parametrize("seed", [0, 1, 2])
def test_random_controls_conserve_busy_time_capacity_and_energy(tmp_path, power, seed):
    n_steps = 64
    p = write_bundle(tmp_path, locations=["A", "B"], timezones=["UTC", "Asia/Singapore"], n_steps=n_steps,
                     total_cores=96, total_gpus=8, total_mem_gb=512, tasks=_random_workload(120, n_steps, seed))
    sim = sim_core.Simulator(p, seed, power=power)
    obs = sim.reset()
    ledger = Ledger(sim.prep)
    policy = _random_policy(seed, 2)
    while not sim.done:
        j = sim.step_index
        acts, ctl = policy(obs)
        obs, info = sim.step(acts, controls=ctl)
        ledger.after_step(j)
        assert_queue_lists(sim.prep.state)
    r = sim.result()
    T = r.totals
    assert T["pauses"] > 5 and T["rescales"] > 5 and T["resumes"] + T["forced_resumes"] > 5
    assert T["invalid_controls"] == 0
    s = r.steps
    for col, cap in (("busy_cores", 96.0), ("busy_gpus", 8.0), ("busy_mem_gb", 512.0)):
        b = s[col].to_numpy().reshape(2, n_steps)
        assert b.max() <= cap + 1e-9 and b.min() >= 0.0
        np.testing.assert_allclose(b, ledger.busy(2, n_steps, col), rtol=1e-9, atol=1e-9)
    # the white-space energy balance holds every step
    np.testing.assert_allclose(s["cooling_load_kw"].to_numpy(),
                               (s["it_kw"] + s["crac_fan_kw"] + s["lighting_kw"]).to_numpy(),
                               rtol=1e-12)
    # every task is accounted for
    assert T["tasks_started"] + T["tasks_pending_at_end"] + T["tasks_queued_at_end"] + T["tasks_in_transit_at_end"] \
        + T["tasks_unschedulable"] == T["tasks"]
    assert T["tasks_paused_at_end"] + T["tasks_resuming_at_end"] <= T["tasks_started"]
    assert s["sla_violations"].sum() == T["sla_violations"]


def test_controlled_run_is_deterministic(tmp_path):
    p = write_bundle(tmp_path, locations=["A", "B"], timezones=["UTC", "Asia/Singapore"], n_steps=48,
                     total_cores=96, total_gpus=8, total_mem_gb=512, tasks=_random_workload(80, 48, 7))
    a = sim_core.run(p, _random_policy(7, 2), seed=7)
    b = sim_core.run(p, _random_policy(7, 2), seed=7)
    assert a.steps.equals(b.steps) and a.tasks.equals(b.tasks) and a.totals == b.totals
    assert a.totals["pauses"] > 0 and a.totals["rescales"] > 0


# ------------------------------------------------------------------------------------------ jitted policy
@njit
def _pause_when_dirty(view, actions):
    """Run everything at A; pause the interruptible tasks while carbon is above 300, resume them below."""
    for q in range(view.pending.shape[0]):
        actions[q] = 1
    k = 0
    dirty = view.carbon_now[0] > 300.0
    for i in view.flex:
        if view.interruptible[i] and k < view.ctl_task.shape[0]:
            running = view.status[i] == E.ST_STARTED and view.finish[i] > view.t
            if dirty and running:
                view.ctl_task[k] = i
                view.ctl_scale[k] = 0.0
                k += 1
            elif not dirty and view.status[i] == E.ST_PAUSED:
                view.ctl_task[k] = i
                view.ctl_scale[k] = 1.0
                k += 1
    view.n_controls[0] = k


def test_jitted_policy_pauses_in_dirty_hours_and_matches_the_step_api(tmp_path):
    carbon = np.where((np.arange(48) // 8) % 2 == 0, 100.0, 500.0)
    n = 20
    tasks = {"arrival_ts_utc": np.linspace(0, 6 * STEP, n), "duration_s": np.full(n, 4 * STEP),
             "cpu_cores": np.full(n, 2.0), "interruptible": np.ones(n, bool), "checkpoint_s": np.full(n, 30.0),
             "max_delay_s": np.full(n, 24 * 3600.0)}
    p = one_dc(tmp_path, tasks, n_steps=48, signals={"carbon_g_per_kwh": carbon})
    r = sim_core.run(p, _pause_when_dirty, power="always_on")
    s = r.steps
    # the tasks still running when the first dirty step begins (7200 s) are paused then, once each
    arr = tasks["arrival_ts_utc"]
    assert r.totals["pauses"] == int((arr + 4 * STEP > 8 * STEP).sum()) == 7 and r.totals["invalid_controls"] == 0
    assert r.totals["resumes"] == 7 and r.totals["tasks_completed"] == n
    dirty = carbon > 300.0
    assert s["busy_cores"].to_numpy()[dirty].max() < 1e-9 < s["busy_cores"].sum()  # paused at every dirty step
    # the same decisions through the step API give the same run
    sim = sim_core.Simulator(p, 0, power="always_on")
    obs = sim.reset()
    while not sim.done:
        d = obs["carbon_g_per_kwh"][0] > 300.0
        ctl = {}
        for k, i in enumerate(obs["flex_index"]):
            st = obs["flex_state"][k]
            if d and st == "running" and obs["flex_finish_s"][k] > obs["t_s"]:
                ctl[int(i)] = 0.0
            elif not d and st == "paused":
                ctl[int(i)] = 1.0
        obs, _ = sim.step(np.ones(obs["n_pending"], np.int64), controls=ctl)
    r2 = sim.result()
    assert r2.steps.equals(s) and r2.tasks.equals(r.tasks)
