"""TaskSchedulingEnv: Gymnasium conformance, reproducibility, action mapping, observations."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import sim_core
from sim_core.gym import TaskSchedulingEnv
from sim_core.rl.reward import Reward
from sim_core.testing import write_bundle


def two_dc(tmp_path, tasks, **kw):
    args = dict(locations=["A", "B"], timezones=["UTC", "UTC"], population_weight=[1.0, 0.0], n_steps=96,
                total_cores=16, total_gpus=2, total_mem_gb=64,
                signals={"carbon_g_per_kwh": np.array([[500.0] * 96, [100.0] * 96]),
                         "price_usd_per_mwh": np.array([[50.0] * 96, [-100.0] * 96])},
                usd_per_gb=0.05, throughput_mbps=80.0, rtt_ms=100.0, tasks=tasks)
    args.update(kw)
    return sim_core.load(write_bundle(tmp_path, **args))


def test_check_env_single_action(busy):
    env = TaskSchedulingEnv(busy, single_action=True, days=0.5)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # any checker warning fails the test
        check_env(env, skip_render_check=True)
    assert env.observation_space.shape == (len(env.feature_names),) == (9 + 14 * busy.n_dc,)
    assert env.action_space.n == busy.n_dc + 1


def test_check_env_single_action_without_defer(busy):
    env = TaskSchedulingEnv(busy, single_action=True, allow_defer=False, steps=10)
    check_env(env, skip_render_check=True)
    assert env.action_space.n == busy.n_dc


def rollout(env, seed, n_random=None):
    rng = np.random.default_rng(123)
    obs, _ = env.reset(seed=seed)
    traj = [obs]
    rewards = []
    done = False
    while not done:
        if env.single_action:
            a = int(rng.integers(env.n_actions))
        else:
            a = rng.integers(env.n_actions, size=len(obs)).tolist()
        obs, r, done, trunc, info = env.step(a)
        assert trunc is False
        traj.append(obs)
        rewards.append(r)
    return traj, rewards


@pytest.mark.parametrize("single", [True, False])
def test_reset_seed_reproducible(busy, single):
    env = TaskSchedulingEnv(busy, single_action=single, reward={"energy_cost": 1, "sla_penalty": 1,
                                                                "transfer_cost": 1})
    t1, r1 = rollout(env, 7)
    t2, r2 = rollout(env, 7)  # same env, second episode
    t3, r3 = rollout(TaskSchedulingEnv(busy, single_action=single), 7)  # fresh env (other reward)
    assert len(r1) == 96 and r1 == r2
    for a, b, c in zip(t1, t2, t3, strict=True):
        if single:
            np.testing.assert_array_equal(a, b)
            np.testing.assert_array_equal(a, c)
        else:
            assert len(a) == len(b) == len(c)
            for x, y, z in zip(a, b, c, strict=True):
                np.testing.assert_array_equal(x, y)
                np.testing.assert_array_equal(x, z)
    # another seed samples other origins: the episode differs
    t4, r4 = rollout(env, 8)
    assert r4 != r1


def test_reset_without_seed_repeats_the_last_seed(busy):
    env = TaskSchedulingEnv(busy, single_action=True, seed=4)
    _, ra = rollout_no_seed(env)
    _, rb = rollout_no_seed(env)
    assert ra == rb
    env.reset(seed=5)
    _, rc = rollout_no_seed(env)
    assert rc != ra


def rollout_no_seed(env):
    obs, _ = env.reset()
    rs = []
    done = False
    k = 0
    while not done:
        obs, r, done, _, _ = env.step(k % env.n_actions)
        rs.append(r)
        k += 1
    return obs, rs


def test_episode_terminates_at_window_end(busy):
    """With drain=False; by default it drains past the window until the work has finished."""
    env = TaskSchedulingEnv(busy, single_action=True, start=10, steps=25, drain=False)
    env.reset()
    for k in range(25):
        _, _, term, trunc, info = env.step(1)
        assert term == (k == 24) and not trunc
        assert info["step"] == 10 + k
    with pytest.raises(RuntimeError, match="reset"):
        env.step(1)
    env = TaskSchedulingEnv(busy, single_action=True, start=10, steps=25)
    env.reset()
    k, term = 0, False
    while not term:
        _, _, term, _, _ = env.step(1)
        k += 1
    assert k > 25 and env.result().totals["work_left_core_hours"] == 0.0


def test_multi_action_empty_list_when_nothing_pending(tmp_path):
    # one task arriving in step 5
    sc = two_dc(tmp_path, {"arrival_ts_utc": [5 * 900.0 + 10], "duration_s": [1800.0]})
    env = TaskSchedulingEnv(sc)
    obs, info = env.reset()
    assert obs == [] and info["n_pending"] == 0
    assert env.observation_space.contains(obs)
    for _ in range(5):
        with pytest.raises(ValueError, match="expected 0 actions"):
            env.step([1])
        obs, *_ = env.step([])
    assert len(obs) == 1 and obs[0].shape == (len(env.task_feature_names),)
    assert obs[0].dtype == np.float32 and env.observation_space.contains(obs)
    obs, *_ = env.step([2])
    assert obs == []


def one_task_env(tmp_path, allow_defer, single=False):
    sc = two_dc(tmp_path, {"arrival_ts_utc": [0.0], "duration_s": [1800.0], "bandwidth_gb": [1.0]})
    return TaskSchedulingEnv(sc, allow_defer=allow_defer, single_action=single)


@pytest.mark.parametrize("single", [False, True])
def test_action_mapping_with_defer(tmp_path, single):
    env = one_task_env(tmp_path, True, single)
    assert env.n_actions == 3
    wrap = (lambda a: a) if single else (lambda a: [a])
    env.reset()
    env.step(wrap(0))  # defer
    assert env.n_pending == 1 and env.sim.prep.state.dest[0] == -1
    env.step(wrap(2))  # DC index 1 = "B"
    assert env.n_pending == 0 and env.sim.prep.state.dest[0] == 1
    env.reset()
    env.step(wrap(1))  # DC index 0 = "A" (the origin)
    assert env.sim.prep.state.dest[0] == 0


@pytest.mark.parametrize("single", [False, True])
def test_action_mapping_without_defer(tmp_path, single):
    env = one_task_env(tmp_path, False, single)
    assert env.n_actions == 2
    wrap = (lambda a: a) if single else (lambda a: [a])
    env.reset()
    env.step(wrap(0))  # 0-based DC index: A
    assert env.n_pending == 0 and env.sim.prep.state.dest[0] == 0
    env.reset()
    _, _, _, _, info = env.step(wrap(1))  # B: a remote transfer of 1 GB at 0.05 USD/GB
    assert env.sim.prep.state.dest[0] == 1
    assert env.outcome["transfer_cost_usd"] == pytest.approx(0.05, abs=1e-15)
    assert env.outcome["transfers"] == 1.0


@pytest.mark.parametrize("single", [False, True])
@pytest.mark.parametrize("defer", [False, True])
def test_invalid_actions_raise(tmp_path, single, defer):
    env = one_task_env(tmp_path, defer, single)
    with pytest.raises(RuntimeError, match="reset"):
        env.step(0 if single else [0])
    env.reset()
    n = env.n_actions
    bad = [-1, n, n + 5]
    for a in bad:
        with pytest.raises(ValueError, match="out of range"):
            env.step(a if single else [a])
    if single:
        with pytest.raises(TypeError):
            env.step(1.5)
        with pytest.raises(TypeError):
            env.step("1")
    else:
        with pytest.raises(ValueError, match="expected 1 actions"):
            env.step([0, 1])
        with pytest.raises(TypeError, match="integers"):
            env.step([0.5])
    # nothing was applied by the failed calls
    assert env.n_pending == 1 and env.sim.step_index == 0


@pytest.mark.parametrize("single", [False, True])
def test_wrong_shape_actions_refused(tmp_path, single):
    """An action array of the wrong shape is refused with its shape, never flattened into a valid action (one
    task pending: a (1, 1) array or, in single-action mode, a (1,) array, used to be read as one action)."""
    env = one_task_env(tmp_path, True, single)
    env.reset()
    wrong = [np.array([[1]]), np.zeros((1, 1, 1), np.int64)] + ([np.array([1])] if single else [np.array(1)])
    for a in wrong:
        with pytest.raises(ValueError, match="shape") as err:
            env.step(a)
        assert str(a.shape) in str(err.value)
    assert env.n_pending == 1 and env.sim.step_index == 0  # nothing was applied
    env.step(np.int64(1) if single else np.array([1]))  # the right shapes still work
    assert env.n_pending == 0 and env.sim.prep.state.dest[0] == 0


def test_single_observation_layout(tmp_path):
    sc = two_dc(tmp_path, {"arrival_ts_utc": [0.0, 10.0], "duration_s": [1800.0, 900.0],
                           "cpu_cores": [4.0, 2.0], "gpus": [1.0, 0.0], "mem_gb": [8.0, 8.0]})
    env = TaskSchedulingEnv(sc, single_action=True)
    obs, _ = env.reset()
    f = dict(zip(env.feature_names, obs.tolist(), strict=True))
    assert obs.dtype == np.float32 and env.observation_space.contains(obs)
    # step 0 at 00:00 UTC on 1 January
    assert f["hour_sin"] == 0.0 and f["hour_cos"] == 1.0
    assert f["pending_load"] == pytest.approx(2 / (2 + 1.0))  # 2 tasks, mean arrivals/step < 1 -> ref 1
    assert f["pending_cores"] == pytest.approx(6 / 32) and f["pending_gpus"] == pytest.approx(1 / 4)
    assert f["pending_mem"] == pytest.approx(16 / 128)
    assert f["min_slack"] == 1.0
    assert f["origin_share_A"] == 1.0 and f["origin_share_B"] == 0.0
    assert f["avail_cores_A"] == 1.0 and f["avail_gpus_B"] == 1.0
    # fixed scales (1000 g/kWh, 1000 USD/MWh), never the window's own maxima (they reveal the future)
    assert f["carbon_A"] == pytest.approx(0.5) and f["carbon_B"] == pytest.approx(0.1)
    assert f["price_A"] == pytest.approx(0.05) and f["price_B"] == pytest.approx(-0.1)
    obs, *_ = env.step(1)  # both to A: 4 + 2 of 16 cores, 1 of 2 GPUs committed
    f = dict(zip(env.feature_names, obs.tolist(), strict=True))
    assert f["avail_cores_A"] == pytest.approx(10 / 16) and f["avail_gpus_A"] == pytest.approx(0.5)
    assert f["avail_cores_B"] == 1.0 and f["pending_load"] == 0.0
    assert f["hour_sin"] == pytest.approx(np.sin(2 * np.pi / 96), abs=1e-7)


def test_task_observation_layout(tmp_path):
    sc = two_dc(tmp_path, {"arrival_ts_utc": [0.0, 10.0], "duration_s": [1800.0, 900.0],
                           "cpu_cores": [4.0, 2.0], "bandwidth_gb": [0.5, 1.0]})
    env = TaskSchedulingEnv(sc)
    obs, _ = env.reset()
    assert len(obs) == 2
    rows = [dict(zip(env.task_feature_names, o.tolist(), strict=True)) for o in obs]
    assert rows[0]["origin_A"] == 1.0 and rows[0]["origin_B"] == 0.0
    assert rows[0]["cores"] == 1.0 and rows[1]["cores"] == 0.5
    assert rows[0]["bandwidth"] == 0.5 and rows[1]["bandwidth"] == 1.0
    assert rows[0]["duration"] == 1.0 and rows[1]["duration"] == 0.5
    assert rows[0]["slack"] == 1.0
    assert rows[1]["carbon_B"] == pytest.approx(0.1)
    # defer both one step (t = 900 s): slack = (deadline - t - duration) / (deadline - arrival - duration)
    obs, *_ = env.step([0, 0])
    k = env.task_feature_names.index("slack")
    assert obs[0][k] == 0.0  # (2700 - 900 - 1800) / 900
    assert obs[1][k] == pytest.approx(-440 / 450, rel=1e-6)  # (1360 - 900 - 900) / 450
    # next step (t = 1800 s): task 1's deadline has passed -> forced to its origin; task 0 is late
    obs, *_ = env.step([0, 0])
    assert len(obs) == 1 and obs[0][k] == -1.0
    assert env.sim.prep.state.forced[1] == 1


def test_reward_and_info(busy, tmp_path):
    cfg = tmp_path / "r.yaml"
    cfg.write_text("components:\n  energy_cost: {weight: 2, norm: 10}\n  sla_penalty: {weight: 1, norm: 4}\n")
    env = TaskSchedulingEnv(busy, reward=cfg, single_action=True)
    env.reset(seed=0)
    for _ in range(40):
        _, r, _, _, info = env.step(1)
        c = info["components"]
        assert set(c) == {"energy_cost", "sla_penalty"}
        assert r == pytest.approx(-(2 * c["energy_cost"] / 10 + c["sla_penalty"] / 4), rel=1e-12)
        assert c["energy_cost"] == env.outcome["cost_usd"]
    # a plain callable reward
    env = TaskSchedulingEnv(busy, reward=lambda o: o["busy_cores"], single_action=True)
    env.reset()
    _, r, _, _, info = env.step(1)
    assert r == env.outcome["busy_cores"] and info["components"] == {}
    assert isinstance(TaskSchedulingEnv(busy).reward, Reward)
    with pytest.raises(TypeError):
        TaskSchedulingEnv(busy, reward=3)


def test_bad_flags_and_seeds_are_refused_not_coerced(busy):
    for kw, text in (({"single_action": "yes"}, "single_action"), ({"allow_defer": 0}, "allow_defer"),
                     ({"seed": 1.5}, "seed"), ({"seed": -1}, "seed"), ({"sla_multiplier": float("nan")}, "nan")):
        with pytest.raises(sim_core.RunOptionsError, match=text):
            TaskSchedulingEnv(busy, **kw)
    env = TaskSchedulingEnv(busy, single_action=True)
    with pytest.raises(sim_core.RunOptionsError, match="seed"):
        env.reset(seed=2.0)
    with pytest.raises(sim_core.RunOptionsError, match="days=0"):
        env.reset(options={"days": 0.0001})
    with pytest.raises(sim_core.RunOptionsError, match="defer_quantile"):
        TaskSchedulingEnv(busy, defer_quantile=2.0)


def test_bad_options_raise(busy):
    with pytest.raises(TypeError, match="unknown run options"):
        TaskSchedulingEnv(busy, bogus=1)
    with pytest.raises(ValueError, match="window"):
        TaskSchedulingEnv(busy, days=30)
    env = TaskSchedulingEnv(busy, single_action=True)
    with pytest.raises(ValueError, match="unknown reset options"):
        env.reset(options={"seed": 3})
    obs, _ = env.reset(options={"start": 90, "steps": 6})
    n = 0
    done = False
    while not done:
        _, _, done, _, info = env.step(1)
        n += 1
    assert n == 6 and info["step"] == 95
