"""Equal work (docs/simulation.md "How a run ends"): a run drains by default, so a policy cannot lower its
totals by leaving work undone; ``drain=False`` keeps the old end at the window's edge."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

import sim_core
from sim_core.options import RunOptionsError
from sim_core.testing import reference_bundle, synthetic_tasks

N_STEPS = 6 * 96  # a three-day window and three days of bundle to drain into
WINDOW_DAYS = 3
N_TASKS = 2400


@pytest.fixture(scope="module")
def bundle(tmp_path_factory):
    """The reference cluster at 2 % of its size, half the tasks allowed to wait 24 h (what wait_awhile defers)."""
    t = synthetic_tasks(N_TASKS, N_STEPS, seed=3)
    rng = np.random.default_rng(3)
    t = t.with_columns(pl.Series("max_delay_s", np.where(rng.random(N_TASKS) < 0.5, 24 * 3600.0, 0.0)))
    root = reference_bundle(tmp_path_factory.mktemp("eq"), n_tasks=N_TASKS, n_steps=N_STEPS, seed=3, tasks=t,
                            capacity_scale=0.02, name="equal_work")
    return sim_core.load(root)


def _run(sc, policy, **kw):
    return sim_core.run(sc, policy, seed=1, days=WINDOW_DAYS, **kw)


def defer_everything(obs):
    """A Python policy that never starts anything itself (only the deadlines do)."""
    return np.zeros(obs["n_pending"], np.int64)


def test_a_drained_run_finishes_every_task_that_arrived_and_flags_its_drain_steps(bundle):
    r = _run(bundle, "local_only")
    T = r.totals
    assert 0 < T["drain_steps"] < N_STEPS - WINDOW_DAYS * 96  # it ended before the bundle did
    assert T["steps"] == WINDOW_DAYS * 96 + T["drain_steps"]
    assert T["work_left_core_hours"] == 0.0 and T["work_left_gpu_hours"] == 0.0
    assert T["tasks_completed"] == T["tasks"] - T["tasks_unschedulable"]
    assert T["tasks_pending_at_end"] == T["tasks_queued_at_end"] == T["tasks_in_transit_at_end"] == 0
    # the per-step frame covers the drain, flagged, with no arrival in it; its carbon sums to the totals'
    s = r.steps
    assert s.height == T["steps"] * T["n_dc"]
    assert int(s["draining"].sum()) == T["drain_steps"] * T["n_dc"]
    assert int(s.filter(pl.col("draining"))["arrived"].sum()) == 0
    assert float(s["carbon_kg"].sum()) == pytest.approx(T["carbon_kg"], rel=1e-12)
    # the per-unit rates divide the totals by the work done
    assert T["work_gpu_hours"] > 0
    assert T["carbon_kg_per_gpu_hour"] == T["carbon_kg"] / T["work_gpu_hours"]
    assert T["charged_carbon_kg"] == 0.0 and T["carbon_kg_equal_work"] == T["carbon_kg"]
    assert r.options["steps"] == WINDOW_DAYS * 96  # (the options name the window: the run's identity)


def test_drain_false_stops_at_the_window_and_leaves_work_undone(bundle):
    r = _run(bundle, "wait_awhile", drain=False)
    assert r.totals["steps"] == WINDOW_DAYS * 96 and "draining" not in r.steps.columns
    assert r.totals["work_left_gpu_hours"] > 0 and r.totals["charged_carbon_kg"] == 0.0


def test_wait_awhile_completes_the_same_gpu_hours_as_local_only(bundle):
    """The issue's finding (wait_awhile doing fewer GPU-hours than local_only) holds with drain=False and is
    gone with the default drain."""
    old = {p: _run(bundle, p, drain=False).totals for p in ("local_only", "wait_awhile")}
    assert old["wait_awhile"]["work_gpu_hours"] < old["local_only"]["work_gpu_hours"] * 0.99
    new = {p: _run(bundle, p).totals for p in ("local_only", "wait_awhile")}
    assert new["wait_awhile"]["work_gpu_hours"] == pytest.approx(new["local_only"]["work_gpu_hours"], rel=1e-12)
    assert new["wait_awhile"]["work_left_gpu_hours"] == 0.0


def test_a_policy_that_defers_everything_does_worse_than_local_only(bundle):
    local = _run(bundle, "local_only").totals
    lazy = _run(bundle, defer_everything).totals
    assert lazy["tasks_forced"] > 0.9 * lazy["tasks"]  # the deadlines started nearly everything
    assert lazy["work_gpu_hours"] == pytest.approx(local["work_gpu_hours"], rel=1e-12)
    assert lazy["carbon_kg_equal_work"] > local["carbon_kg_equal_work"]
    assert lazy["carbon_incl_transfer_kg"] > local["carbon_incl_transfer_kg"]  # (compare's headline metric)
    assert lazy["carbon_kg_per_gpu_hour"] > local["carbon_kg_per_gpu_hour"]
    # ... where stopping at the window's end made it look better
    lazy_old = _run(bundle, defer_everything, drain=False).totals
    assert lazy_old["carbon_kg"] < _run(bundle, "local_only", drain=False).totals["carbon_kg"]


def test_the_step_api_ends_a_drained_run_where_the_whole_run_does(bundle):
    whole = _run(bundle, "lowest_carbon")
    sim = sim_core.Simulator(bundle, 1, days=WINDOW_DAYS)
    sim.reset()
    while not sim.done:
        sim.step(sim.builtin_actions("lowest_carbon"))
    with pytest.raises(RuntimeError, match="done"):
        sim.step(0)
    stepped = sim.result().totals
    assert stepped["steps"] == whole.totals["steps"] > WINDOW_DAYS * 96
    assert stepped["carbon_kg"] == whole.totals["carbon_kg"]
    assert stepped["work_gpu_hours"] == whole.totals["work_gpu_hours"]


def _gpu_share(r) -> float:
    """The GPUs' share of the run's IT energy, from its per-step frame (``sim_core.drain``'s split)."""
    return float(r.steps["it_gpu_kw"].sum()) * 0.25 / float(r.steps["it_kwh"].sum())


def test_work_left_at_the_cap_is_charged_at_the_runs_own_rates(bundle):
    r = _run(bundle, "wait_awhile", drain_max_days=0.25)
    T = r.totals
    assert T["drain_steps"] == 24
    assert T["work_left_core_hours"] > 0 and T["work_left_gpu_hours"] > 0
    w = _gpu_share(r)
    assert 0.05 < w < 0.95 and T["charge_gpu_share"] == pytest.approx(w, rel=1e-12)
    share = (w * T["work_left_gpu_hours"] / T["work_gpu_hours"]
             + (1 - w) * T["work_left_core_hours"] / T["work_core_hours"])
    assert T["charged_carbon_kg"] == pytest.approx(T["carbon_kg"] * share, rel=1e-12)
    assert T["carbon_kg_equal_work"] == T["carbon_kg"] + T["charged_carbon_kg"]
    assert T["total_kwh_equal_work"] > T["total_kwh"] and T["cost_usd_equal_work"] > T["cost_usd"]


def test_drained_runs_are_reproducible(bundle):
    a, b = _run(bundle, "carbonscaler"), _run(bundle, "carbonscaler")
    assert a.totals == b.totals
    assert a.steps.equals(b.steps)


@pytest.mark.parametrize("bad", [-1.0, 400.0, float("nan")])
def test_a_bad_drain_cap_is_refused(bundle, bad):
    with pytest.raises(RunOptionsError, match="drain_max_days"):
        _run(bundle, "local_only", drain_max_days=bad)


def test_drain_must_be_a_bool(bundle):
    with pytest.raises(RunOptionsError, match="drain"):
        _run(bundle, "local_only", drain=1)


def test_compare_compares_over_the_same_work(bundle):
    """compare's runs drain: wait_awhile's GPU-hours equal local_only's, shown beside the carbon; with
    drain=False the gap the issue measured comes back."""
    from sim_core.bench.report import compact_rows
    from sim_core.bench.sweep import compare

    def by(cmp, metric):
        s = cmp.summary.filter(pl.col("metric") == metric)
        return dict(zip(s["policy"], s["mean"], strict=True))

    cmp = compare(bundle, ["local_only", "wait_awhile"], [1], days=WINDOW_DAYS)
    gpu = by(cmp, "work_gpu_hours")
    assert gpu["wait_awhile"] == pytest.approx(gpu["local_only"], rel=1e-12)
    assert by(cmp, "work_left_gpu_hours") == {"local_only": 0.0, "wait_awhile": 0.0}
    assert min(by(cmp, "drain_steps").values()) > 0
    header, rows = compact_rows(cmp)
    assert "GPU-h done" in header
    old = compare(bundle, ["local_only", "wait_awhile"], [1], days=WINDOW_DAYS, drain=False)
    gpu_old = by(old, "work_gpu_hours")
    assert gpu_old["wait_awhile"] < gpu_old["local_only"] * 0.99


def _episode(env, act):
    """(return, steps, the episode's result) of one episode with ``act(env, obs)``."""
    obs, _ = env.reset(seed=1)
    ret, n, done = 0.0, 0, False
    while not done:
        obs, r, done, trunc, _ = env.step(act(env, obs))
        ret += r
        n += 1
        assert not trunc
    return ret, n, env.result()


def test_an_agent_that_defers_everything_gets_a_worse_return_than_local_only(bundle):
    """The Gymnasium environment's episodes drain with the agent acting: leaving work undone earns nothing."""
    from sim_core.rl.env import TaskSchedulingEnv

    env = TaskSchedulingEnv(bundle, days=WINDOW_DAYS, seed=1)
    local, n_local, r_local = _episode(env, lambda e, o: e.baseline_action("local_only"))
    lazy, n_lazy, r_lazy = _episode(env, lambda e, o: np.zeros(e.n_pending, np.int64))
    assert n_lazy > WINDOW_DAYS * 96 and n_local > WINDOW_DAYS * 96
    assert r_lazy.totals["work_left_gpu_hours"] == r_local.totals["work_left_gpu_hours"] == 0.0
    assert lazy < local


def test_the_vector_env_ends_a_drained_episode_where_the_single_env_does(bundle):
    from sim_core.rl.env import TaskSchedulingEnv
    from sim_core.rl.vector import TaskSchedulingVectorEnv

    single = TaskSchedulingEnv(bundle, single_action=True, days=WINDOW_DAYS, seed=1)
    ret, n, res = _episode(single, lambda e, o: 0)
    assert n > WINDOW_DAYS * 96 and res.totals["work_left_core_hours"] == 0.0
    vec = TaskSchedulingVectorEnv(bundle, num_envs=1, days=WINDOW_DAYS, seed=1)
    vec.reset(seed=1)
    vret, steps = 0.0, 0
    while True:
        _, rew, term, trunc, _ = vec.step(np.zeros(1, np.int64))
        vret += float(rew[0])
        steps += 1
        if term[0] or trunc[0]:
            break
    assert steps == n
    assert vret == ret


def test_a_gpu_only_deferrer_left_at_the_bundles_end_is_charged_at_its_own_gpu_rate(tmp_path):
    """One site; a CPU task (8 cores, 2 h) and a GPU task (1 GPU, no cores, 2 h) run at once; a GPU-only task
    (2 GPUs, no cores, 4 h, 10 h of allowed delay) arrives at 20:00 and Wait Awhile defers it to the trough at
    03:00 the next day, past the bundle's end: nothing of it runs, all of its 8 GPU-hours are left. It is
    charged at the run's own GPU rate (the run's carbon x the GPUs' share of its IT energy / GPU-hours done);
    charged per core-hour, as before, it would cost nothing (it needs no core)."""
    from sim_core.testing import write_bundle

    c = np.full(2 * 96, 400.0)
    c[96 + 12:96 + 28] = 50.0  # the next day, 03:00-07:00
    tasks = {"arrival_ts_utc": [0.0, 0.0, 20 * 3600.0], "duration_s": [7200.0, 7200.0, 4 * 3600.0],
             "cpu_cores": [8.0, 0.0, 0.0], "gpus": [0.0, 1.0, 2.0], "mem_gb": [8.0, 8.0, 8.0],
             "max_delay_s": [0.0, 0.0, 10 * 3600.0]}
    p = write_bundle(tmp_path, locations=["A"], timezones=["UTC"], population_weight=[1.0], n_steps=2 * 96,
                     total_cores=64, total_gpus=8, total_mem_gb=512, tasks=tasks,
                     signals={"carbon_g_per_kwh": c})
    r = sim_core.run(p, "wait_awhile", seed=0, days=1, power="always_on", workload="origins", forecast="oracle",
                     drain_max_days=0.0)
    T = r.totals
    assert T["work_left_gpu_hours"] == 8.0 and T["work_left_core_hours"] == 0.0
    assert T["work_gpu_hours"] == 2.0 and T["work_core_hours"] == 16.0
    gpu_rate = T["carbon_kg"] * _gpu_share(r) / T["work_gpu_hours"]
    assert T["charged_carbon_kg"] == pytest.approx(8.0 * gpu_rate, rel=1e-12)
    assert T["charged_carbon_kg"] > 0.1 * T["carbon_kg"]
