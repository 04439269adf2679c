"""Energy conservation with pause / resume / rescale (docs/simulation.md "Flexible tasks"), on tasks
whose flexibility comes from the workload pipeline's model (pipelines/workload/flexibility.py), driven
by a Python policy that pauses in dirty hours, resumes scaled up in clean ones and rescales.

From the engine's state after every step an independent ledger rebuilds each task's run segments;
from them, and from nothing the engine booked:
* work: every finished task did exactly its duration of work (s at scale 1), summed over its segments
  at the speed of its scaling curve, overheads excluded;
* IT energy: the busy resources of (work done at each scale) + (checkpoint overheads), put through the
  physics, give the IT energy the run booked, step by step and datacenter by datacenter.
The same seed gives the identical run."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

import sim_core
from pipelines.workload.flexibility import FlexParams, assign_flexibility
from sim_core import engine as E
from sim_core.engine import speedup
from sim_core.physics import compute as physics_compute
from sim_core.testing import write_bundle
from tests.unit.sim_core.test_flex import Ledger

STEP = 900.0
N_STEPS = 96
DIRTY = 300.0


def flexible_workload(n, seed):
    rng = np.random.default_rng(seed)
    g = rng.choice([0.0, 0.0, 1.0, 2.0], n)
    t = pl.DataFrame({
        "task_id": np.arange(n, dtype=np.int64), "arrival_ts_utc": np.sort(rng.uniform(0, 40 * STEP, n)),
        "duration_s": rng.uniform(1800, 5 * 3600, n), "cpu_cores": rng.choice([1.0, 2.0, 4.0], n), "gpus": g,
        "mem_gb": rng.uniform(1, 16, n), "gpu_mem_gb": g * 16.0, "bandwidth_gb": np.zeros(n)})
    return assign_flexibility(t, FlexParams(), seed=seed)


def bundle(tmp_path, seed):
    # A: clean and dirty in turns of 8 steps (2 h); B: always dirty
    carbon_a = np.where((np.arange(N_STEPS) // 8) % 2 == 0, 100.0, 500.0)
    tasks = flexible_workload(50, seed)
    return write_bundle(tmp_path, locations=["A", "B"], timezones=["UTC", "UTC"], n_steps=N_STEPS,
                        total_cores=64, total_gpus=16, total_mem_gb=512,
                        signals={"carbon_g_per_kwh": np.stack([carbon_a, np.full(N_STEPS, 450.0)]),
                                 "temp_c": 22.0, "wetbulb_c": 15.0},
                        tasks={c: tasks[c].to_numpy() for c in tasks.columns}), tasks


def carbon_policy(obs):
    """Place every task at the greener site; pause interruptible tasks in dirty hours and resume them at
    2x (within their range) in clean ones; a running elastic task goes to 2x when clean, back to 1x when dirty."""
    c = obs["carbon_g_per_kwh"]
    acts = np.full(obs["n_pending"], int(np.argmin(c)) + 1, np.int64)
    ctl = {}
    for k, i in enumerate(obs["flex_index"]):
        dirty = c[obs["flex_dest"][k]] > DIRTY
        st, x = obs["flex_state"][k], obs["flex_scale"][k]
        up = min(2.0, obs["flex_max_scale"][k])
        if st == "running" and dirty and obs["flex_interruptible"][k]:
            ctl[int(i)] = 0.0
        elif st == "running" and dirty and x != 1.0:
            ctl[int(i)] = 1.0
        elif not dirty and (st == "paused" or (st == "running" and x != up)):
            ctl[int(i)] = up
    return acts, ctl


def drive(path, seed):
    sim = sim_core.Simulator(path, seed, power="always_on", workload="origins")
    obs = sim.reset()
    ledger = Ledger(sim.prep)
    while not sim.done:
        j = sim.step_index
        acts, ctl = carbon_policy(obs)
        obs, _ = sim.step(acts, controls=ctl)
        ledger.after_step(j)
    return sim, sim.result(), ledger


@pytest.mark.parametrize("seed", [0, 1])
def test_it_energy_is_the_work_done_plus_the_checkpoint_overheads(tmp_path, seed):
    path, _ = bundle(tmp_path, seed)
    sim, r, ledger = drive(path, seed)
    T, S, P = sim.prep.tasks, sim.prep.state, sim.prep
    tot = r.totals
    assert tot["pauses"] >= 5 and tot["resumes"] >= 5 and tot["rescales"] >= 5 and tot["invalid_controls"] == 0
    t0, end = P.ctx.t0, P.ctx.t0 + N_STEPS * STEP
    n_dc = 2
    work = {"busy_cores": np.zeros((n_dc, N_STEPS)), "busy_gpus": np.zeros((n_dc, N_STEPS)),
            "busy_mem_gb": np.zeros((n_dc, N_STEPS))}
    over = {k: np.zeros_like(v) for k, v in work.items()}
    req = {"busy_cores": T.cores, "busy_gpus": T.gpus, "busy_mem_gb": T.mem}
    n_done = overhead_s = 0
    for i, segs in ledger.segs.items():
        d = S.dest[i]
        done = 0.0
        for k, (a, b, x) in enumerate(segs):
            oh = min(T.ckpt[i], b - a) if k > 0 else 0.0  # a resumed segment starts with the overhead
            done += (b - a - oh) * speedup(x, T.mthr[i])
            overhead_s += oh
            for acc, lo_t, hi_t in ((over, a, a + oh), (work, a + oh, b)):
                for j in range(int((lo_t - t0) // STEP), min(int(np.ceil((hi_t - t0) / STEP)), N_STEPS)):
                    lo, hi = max(lo_t, t0 + STEP * j), min(hi_t, t0 + STEP * (j + 1))
                    if hi > lo:
                        for col in acc:
                            acc[col][d, j] += req[col][i] * x * (hi - lo) / STEP
        if S.fin[i] <= end:  # finished in the window: exactly its duration of work, no more, no less
            assert done == pytest.approx(T.duration[i], rel=1e-9, abs=1e-6), i
            n_done += 1
        else:
            assert done < T.duration[i]
    assert n_done >= 20 and overhead_s > 0
    # the busy resources booked = the work done at each scale + the overheads
    steps = r.steps
    for col in work:
        np.testing.assert_allclose(steps[col].to_numpy().reshape(n_dc, N_STEPS), work[col] + over[col],
                                   rtol=1e-9, atol=1e-9)
    # ... and so is the IT energy (the physics of those busy resources), every step and site
    sc = sim.scenario
    caps = (sc.cap_cores, sc.cap_gpus, sc.cap_mem_gb)
    temp, wb = sc.temp_c[:, P.s0:P.s0 + N_STEPS], sc.wetbulb_c[:, P.s0:P.s0 + N_STEPS]
    it = physics_compute(sc.params, *caps, *(work[c] + over[c] for c in work), temp, wb)["it_kw"] * STEP / 3600.0
    booked = steps["it_kwh"].to_numpy().reshape(n_dc, N_STEPS)
    np.testing.assert_allclose(booked, it, rtol=1e-9, atol=1e-12)
    assert tot["it_kwh"] == pytest.approx(it.sum(), rel=1e-12)
    # the overheads are charged: without them the IT energy would be lower
    it_work = physics_compute(sc.params, *caps, *(work[c] for c in work), temp, wb)["it_kw"] * STEP / 3600.0
    assert it_work.sum() < booked.sum()
    # per task: the seconds booked = segment lengths (overheads included)
    run_s = r.tasks["run_s"].to_numpy()
    for i, segs in ledger.segs.items():
        assert run_s[i] == pytest.approx(sum(b - a for a, b, _ in segs), rel=1e-12, abs=1e-6)


def test_flexible_run_is_identical_with_the_same_seed(tmp_path):
    path, _ = bundle(tmp_path, 3)
    _, a, _ = drive(path, 3)
    _, b, _ = drive(path, 3)
    assert a.steps.equals(b.steps) and a.tasks.equals(b.tasks) and a.totals == b.totals
    assert a.totals["pauses"] > 0 and a.totals["rescales"] > 0
    # through sim_core.run (policy returns (actions, controls)) too, with the default workload realisation
    c = sim_core.run(path, carbon_policy, seed=3, power="always_on")
    d = sim_core.run(path, carbon_policy, seed=3, power="always_on")
    assert c.steps.equals(d.steps) and c.tasks.equals(d.tasks) and c.totals == d.totals
    assert E.ST_PAUSED == 6  # (the status code the policy view reports as "paused")
