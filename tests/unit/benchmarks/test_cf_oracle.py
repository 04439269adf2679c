"""CarbonFlex(Oracle) for docs/reproductions.md (benchmarks/cf_oracle.py): Algorithm 1's plan executed step by
step equals the plan, and on a hand-made bundle with one low-carbon window the oracle's job carbon is no more
than the carbon-agnostic run's or CarbonFlex's, evaluated the same way, for the same work."""

from __future__ import annotations

import numpy as np
import pytest

import sim_core
from benchmarks import cf_oracle as CO
from sim_core.policies import carbonflex as CF
from tests.unit.sim_core.test_baselines import HOUR, STEP, one_dc, run
from tests.unit.sim_core.test_carbonflex import _oracle_case


def _job(a, dl, work, r, smin, smax, mthr, M=2.0):
    """One site of M one-core servers (cores only)."""
    frac = np.stack([r / M, np.zeros_like(r), np.zeros_like(r)], axis=1)
    return {"a": a, "dl": dl, "work": work, "r": r, "frac": frac, "smin": smin, "smax": smax, "mthr": mthr}


def test_plan_executed_equals_the_plan():
    """The hand-made case of test_carbonflex (A: 2 h on 1 server in the 100 and 200 slots, B: 1 h in the 100
    slot): each step of a slot holds the plan's servers x the request; no work is left."""
    a, dl, work, r, smin, smax, mthr, ci = _oracle_case()
    job = _job(a, dl, work, r, smin, smax, mthr)
    alloc, _, _, done = CF.oracle_alg1(a, dl, work, r, job["frac"], smin, smax, mthr, ci, HOUR)
    req = np.array([[8.0, 4.0], [1.0, 0.0], [16.0, 2.0]])  # (cores, GPUs, GB) x job, at r = 1 server
    busy, left = CO._execute(alloc, job, req, HOUR, STEP, 4)
    assert left.tolist() == [0.0, 0.0]
    per_slot = busy.reshape(3, 4, 4)  # (resource, slot, step in slot)
    for s in range(4):
        assert per_slot[:, :, s].T.tolist() == (alloc.T @ req.T).tolist()
    # a job that needs half of its second slot holds its server for two of that slot's four steps
    work2 = np.array([1.5 * HOUR, HOUR])
    alloc2, _, _, _ = CF.oracle_alg1(a, dl, work2, r, job["frac"], smin, smax, mthr, ci, HOUR)
    busy2, left2 = CO._execute(alloc2, _job(a, dl, work2, r, smin, smax, mthr), req, HOUR, STEP, 4)
    assert alloc2[0].tolist() == [0.0, 1.0, 1.0, 0.0] and left2.tolist() == [0.0, 0.0]
    assert busy2[0, 8:12].tolist() == [8.0, 8.0, 0.0, 0.0]
    assert busy2[0].sum() * STEP / HOUR == pytest.approx(8.0 * 1.5 + 4.0 * 1.0)  # core-hours = work x request


def test_infeasible_jobs_get_their_delay_extended():
    """Two 1-server jobs of 1 h, both due within the first slot, M = 1: Algorithm 1 finishes one; the other's
    deadline is extended a day and it runs in the next greenest slot in reach."""
    ci = np.r_[100.0, np.full(30, 300.0)]
    ci[5] = 200.0
    job = _job(np.zeros(2), np.full(2, HOUR), np.full(2, HOUR), np.ones(2), np.ones(2), np.ones(2), np.zeros(2),
               M=1.0)
    alloc, dl, n_ext = CO._plan_site(job, ci, HOUR, 31 * HOUR)
    assert n_ext == 1 and sorted(dl.tolist()) == [HOUR, HOUR + 86400.0]
    assert alloc.sum(axis=0)[[0, 5]].tolist() == [1.0, 1.0] and alloc.sum() == 2.0


def test_oracle_carbon_not_above_local_only_or_carbonflex(tmp_path):
    """One site, a 100 g/kWh trough from hour 6 to 10 in 500 g/kWh: flexible jobs (12 h allowed delay) arriving
    in the first hours. The oracle puts them in the trough; its job carbon (same power model, same work) is at
    most the carbon-agnostic run's and CarbonFlex's, and strictly below the carbon-agnostic run's."""
    n = 12
    carbon = np.full(96, 500.0)
    carbon[24:40] = 100.0
    tasks = {"arrival_ts_utc": np.linspace(0.0, 3 * HOUR, n), "duration_s": np.full(n, 2 * HOUR),
             "cpu_cores": np.full(n, 8.0), "gpus": np.zeros(n), "max_delay_s": np.full(n, 12 * HOUR)}
    sc = sim_core.load(one_dc(tmp_path, tasks, carbon))
    res = {p: run(sc, p, days=1.0, power="managed") for p in ("local_only", "carbonflex")}
    o = CO.oracle_busy(res["local_only"], sc)
    assert o["undone_s"] == 0.0 and o["jobs"] == n
    kg = {p: CO.job_carbon_kg(sc, *CO.run_busy(r)) for p, r in res.items()}
    oracle_kg, oracle_busy_core_h = CO.job_carbon_kg(sc, o["busy"], o["k0"])[0], o["busy"][0].sum() * STEP / HOUR
    assert oracle_busy_core_h == pytest.approx(n * 2 * 8.0)  # all the work, at its request
    assert oracle_kg < kg["local_only"][0] and oracle_kg <= kg["carbonflex"][0] + 1e-9
    assert float((o["busy"][0, 0] * (sc.carbon_g_per_kwh[0, :o["busy"].shape[2]] > 100.0)).sum()) == 0.0


def one_low_carbon_hour(tmp_path, n=16):
    """The case of the two tests below: one site (100 cores, 8 GPUs), carbon 500 g/kWh but 100 from 06:00 to
    07:00, n 15-minute jobs (12 h allowed delay) arriving in the first hour, alternately 40 cores and 4 GPUs + 10 cores.
    Returns (scenario, local_only's run, Algorithm 1's oracle over it)."""
    carbon = np.full(96, 500.0)
    carbon[24:28] = 100.0
    cpu = np.arange(n) % 2 == 0
    tasks = {"arrival_ts_utc": np.linspace(0.0, HOUR, n), "duration_s": np.full(n, STEP),
             "cpu_cores": np.where(cpu, 40.0, 10.0), "gpus": np.where(cpu, 0.0, 4.0), "mem_gb": np.full(n, 1.0),
             "max_delay_s": np.full(n, 12 * HOUR)}
    sc = sim_core.load(one_dc(tmp_path, tasks, carbon))
    base = run(sc, "local_only", days=1.0, power="managed")
    return sc, base, CO.oracle_busy(base, sc)


def test_oracle_puts_short_mixed_jobs_in_the_one_low_carbon_hour(tmp_path):
    """One site (100 cores, 8 GPUs), carbon 500 g/kWh but 100 from 06:00 to 07:00; 16 flexible 15-min jobs
    (12 h allowed delay) arrive in the first hour: 8 CPU jobs of 40 cores and 8 GPU jobs of 4 GPUs and 10
    cores. Per 15-minute step, two of each fill the site's cores and GPUs exactly, so all 16 fit in that hour.
    The oracle's plan runs every one there: its evaluated carbon per busy kWh is about the hour's 100 g,
    where running at arrival (local_only) gives about 500. (Charging each job a whole hour's slot, or the sum
    of the jobs' dominant shares of a server against the site's servers, leaves most of them outside that
    hour.)"""
    n = 16
    sc, base, o = one_low_carbon_hour(tmp_path, n)
    assert o["jobs"] == n and o["extended"] == 0 and o["undone_s"] == pytest.approx(0.0, abs=1e-6)
    busy = o["busy"][:, 0]
    assert busy[0].sum() * STEP / HOUR == pytest.approx(8 * 40 * 0.25 + 8 * 10 * 0.25)  # all the work
    outside = np.ones(busy.shape[1], bool)
    outside[24:28] = False
    assert busy[:, outside].sum() == 0.0 and busy[0, 24:28].tolist() == [100.0] * 4
    assert busy[1, 24:28].tolist() == [8.0] * 4
    kg, _, kwh = CO.job_carbon_kg(sc, o["busy"], o["k0"])
    kg0, _, kwh0 = CO.job_carbon_kg(sc, *CO.run_busy(base))
    # (the power model's busy IT energy trails the busy resources a little: not exactly the hour's 100 g)
    assert 1000.0 * kg / kwh < 110.0 < 450.0 < 1000.0 * kg0 / kwh0 and kg < 0.25 * kg0
    # the models gridshift used before, each alone, leave work outside that hour
    for slot_steps, dominant in ((4, False), (1, True), (4, True)):
        b = CO.oracle_busy(base, sc, slot_steps=slot_steps, dominant=dominant)["busy"][:, 0]
        assert b[0, :24].sum() + b[0, 28:].sum() > 0.0 and b[0].sum() == pytest.approx(busy[0].sum())


def test_the_plan_run_through_the_engine_puts_the_work_in_the_low_carbon_hour(tmp_path):
    """The case above, Algorithm 1's plan carried out by the engine (PlanFollower, a Python policy reading
    the plan): every task starts in the 100 g/kWh hour, none late, all the work done, and its job carbon is
    below a quarter of running at arrival's."""
    sc, base, o = one_low_carbon_hour(tmp_path)
    res = run(sc, CO.PlanFollower(o["plan"], o["k0"]), days=1.0, power="managed")
    t = res.tasks
    start_step = np.array([(s - t["arrival_ts_utc"][0]).total_seconds() for s in t["start_ts_utc"]]) // STEP
    assert sorted(set(start_step.tolist())) == [24.0, 25.0, 26.0, 27.0]
    assert res.totals["sla_violations"] == 0 and res.totals["work_gpu_hours"] == base.totals["work_gpu_hours"]
    kg = CO.job_carbon_kg(sc, *CO.run_busy(res))[0]
    assert kg < 0.25 * CO.job_carbon_kg(sc, *CO.run_busy(base))[0]
