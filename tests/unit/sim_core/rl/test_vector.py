"""TaskSchedulingVectorEnv: trajectories equal N single environments', autoreset, API, errors."""

from __future__ import annotations

import numpy as np
import pytest
from gymnasium.vector import AutoresetMode

from sim_core.gym import TaskSchedulingEnv, TaskSchedulingVectorEnv
from sim_core.rl import vector as V
from sim_core.rl.reward import Reward, masac_terms

#: every built-in component, the MASAC utility with non-default parameters
ALL_COMPONENTS = {"energy_cost": 1.0, "carbon_emissions": 0.5, "energy": {"weight": 0.2, "norm": 50.0},
                  "transfer_cost": 2.0, "transfer_emissions": 1.0, "sla_penalty": 3.0, "water": 0.1,
                  "masac_utility": {"weight": 1.0, "norm": 10.0,
                                    "params": {"carbon_usd_per_t": 120, "migration_usd_per_gb": 0.02, "pue": 1.3,
                                               "result_gb": 2.0,
                                               "include_transfer_carbon": False}}}
WINDOWS = [dict(steps=17), dict(start=20, steps=23), dict(start=50, steps=11), dict(start=3, steps=29)]


def single_rollout(scenario, window, seeds, actions, reward, **kw):
    """One single environment driven as environment i of a NEXT_STEP-autoreset vector env: reset with
    seeds[0], and after each termination, on the next step, reset with the next seed (reward 0)."""
    env = TaskSchedulingEnv(scenario, single_action=True, reward=reward, **window, **kw)
    it = iter(seeds)
    obs, _ = env.reset(seed=next(it))
    out = [(obs, None, None, None)]
    auto = False
    for a in actions:
        if auto:
            obs, _ = env.reset(seed=next(it))
            r, term, comp = 0.0, False, None
            auto = False
        else:
            obs, r, term, trunc, info = env.step(int(a))
            assert trunc is False
            comp = info["components"]
            auto = term
        out.append((obs, r, term, comp))
    return out


@pytest.mark.parametrize("parallel", [False, True])
def test_trajectories_equal_single_envs(busy, parallel):
    n, n_steps = len(WINDOWS), 200  # (episodes drain past their windows: sim_core.drain)
    reward = Reward(ALL_COMPONENTS)
    venv = TaskSchedulingVectorEnv(busy, n, reward=reward, windows=WINDOWS, parallel=parallel)
    rng = np.random.default_rng(4)
    acts = rng.integers(0, venv.n_actions, size=(n_steps, n))
    obs, info = venv.reset(seed=11)
    assert obs.shape == (n, 9 + 14 * busy.n_dc) and obs.dtype == np.float32
    assert info["seed"].tolist() == [11, 12, 13, 14]
    traj = [(obs, None, None, None)]
    n_done = 0
    for t in range(n_steps):
        obs, rew, term, trunc, info = venv.step(acts[t])
        assert not trunc.any()
        n_done += int(term.sum())
        traj.append((obs, rew, term, info["components"]))
    assert n_done >= 8  # every environment went through several episodes (autoresets)
    for i in range(n):
        ref = single_rollout(busy, WINDOWS[i], [11 + i + n * e for e in range(10)], acts[:, i], reward)
        for t, ((o, r, te, comp), (vo, vr, vte, vcomp)) in enumerate(zip(ref, traj, strict=True)):
            np.testing.assert_array_equal(vo[i], o, err_msg=f"env {i}, step {t}")
            if t == 0:
                continue
            assert vr[i] == r and bool(vte[i]) == te, (i, t)
            for name in reward.names:
                assert vcomp[name][i] == (comp[name] if comp is not None else 0.0), (i, t, name)


def test_rewards_are_real_numbers(busy):
    """The jitted reward is not a constant: components vary and the MASAC utility is hand-checkable."""
    venv = TaskSchedulingVectorEnv(busy, 2, reward={"masac_utility": 1.0, "energy_cost": 1.0}, steps=40)
    assert venv._terms is not None  # built-in components: evaluated inside the jitted step
    venv.reset(seed=0)
    costs = []
    for _ in range(39):
        _, rew, _, _, info = venv.step(np.array([1, 2]))
        costs.append(info["components"]["energy_cost"].copy())
        o = venv.envs[1].outcome
        util = masac_terms(o)["utility"]
        assert info["components"]["masac_utility"][1] == pytest.approx(util, rel=1e-12)
        assert rew[1] == pytest.approx(util - o["cost_usd"] / 20.0, rel=1e-12)
    costs = np.array(costs)
    assert (costs > 0).all() and np.ptp(costs[:, 0]) > 0


def test_python_reward_equals_single_env(busy):
    def reward(o):  # a callable: evaluated in Python after the jitted step
        return -o["total_kwh"] * 1e-3 - o["sla_violations"]

    venv = TaskSchedulingVectorEnv(busy, 2, reward=reward, windows=WINDOWS[:2])
    assert venv._terms is None
    acts = np.random.default_rng(1).integers(0, venv.n_actions, size=(30, 2))
    venv.reset(seed=3)
    got = [venv.step(a)[1] for a in acts]
    for i in range(2):
        ref = single_rollout(busy, WINDOWS[i], [3 + i + 2 * e for e in range(5)], acts[:, i], reward)
        assert [g[i] for g in got] == [r for _, r, _, _ in ref[1:]]


def test_autoreset_next_step(busy):
    """(Episodes that end at their windows, drain=False, so that their lengths are known.)"""
    venv = TaskSchedulingVectorEnv(busy, 2, windows=[dict(steps=3), dict(steps=5)], seed=7, drain=False)
    assert venv.metadata["autoreset_mode"] == AutoresetMode.NEXT_STEP
    venv.reset()
    for _ in range(2):
        *_, term, _, _ = venv.step([1, 1])
        assert not term.any()
    obs, rew, term, _, _ = venv.step([1, 1])
    assert term.tolist() == [True, False]
    # env 0 resets now, whatever its action; its first observation is that of seed 7 + 2
    obs, rew, term, _, info = venv.step([2, 1])
    assert rew[0] == 0.0 and not term[0] and info["autoreset"].tolist() == [True, False]
    ref = TaskSchedulingEnv(busy, single_action=True, steps=3, drain=False)
    np.testing.assert_array_equal(obs[0], ref.reset(seed=9)[0])
    assert venv.envs[0].sim.step_index == 0 and venv.envs[1].sim.step_index == 4


def test_episode_results_equal_single_run(busy):
    # (episodes that end at their windows, drain=False; a drained episode's end: tests/unit/sim_core/test_equal_work.py)
    venv = TaskSchedulingVectorEnv(busy, 3, steps=30, reward={"energy_cost": 1.0}, drain=False)
    venv.reset(seed=[5, 6, 7])
    tot = np.zeros(3)
    for _ in range(30):
        _, _, term, _, info = venv.step([0, 1, 3])
        tot += info["components"]["energy_cost"]
    assert term.all()
    for i, a in enumerate([0, 1, 3]):
        env = TaskSchedulingEnv(busy, single_action=True, steps=30, drain=False)
        env.reset(seed=5 + i)
        while not env.step(a)[2]:
            pass
        single = env.result().totals
        vec = venv.results()[i].totals
        assert vec["cost_usd"] == single["cost_usd"] and vec["sla_violations"] == single["sla_violations"]
        assert tot[i] == pytest.approx(single["cost_usd"], rel=1e-12)


def test_spaces_and_errors(busy):
    venv = TaskSchedulingVectorEnv(busy, 3, steps=10, allow_defer=False)
    assert venv.single_action_space.n == busy.n_dc and venv.action_space.shape == (3,)
    assert venv.observation_space.shape == (3, len(venv.feature_names))
    with pytest.raises(RuntimeError, match="reset"):
        venv.step([0, 0, 0])
    obs, _ = venv.reset(seed=0)
    assert venv.observation_space.contains(obs)
    obs, *_ = venv.step(venv.action_space.sample())
    assert venv.observation_space.contains(obs)
    with pytest.raises(ValueError, match="expected 3 actions"):
        venv.step([0, 0])
    for wrong in (np.zeros((3, 1), np.int64), np.zeros((1, 3), np.int64)):  # same size, wrong shape
        with pytest.raises(ValueError, match=r"got shape \("):
            venv.step(wrong)
    with pytest.raises(ValueError, match="environment 1: action 3 out of range 0..2"):
        venv.step([0, 3, 0])
    with pytest.raises(TypeError, match="integers"):
        venv.step([0.5, 0, 0])
    with pytest.raises(ValueError, match="single-action only"):
        TaskSchedulingVectorEnv(busy, 2, single_action=False)
    with pytest.raises(ValueError, match="windows has 1 entries"):
        TaskSchedulingVectorEnv(busy, 2, windows=[dict(steps=4)])
    for bad in (0, 4097, 10**12):  # past the limit: a MemoryError before
        with pytest.raises(ValueError, match=r"num_envs must be an integer in 1\.\.4,096 .*got"):
            TaskSchedulingVectorEnv(busy, bad)
    with pytest.raises(ValueError, match="seed has 2 entries"):
        venv.reset(seed=[1, 2])


def test_cache_guard_records_the_dependencies_digest_where_numba_caches_this_module():
    from sim_core.engine import cache as kernel_cache

    folder = kernel_cache.index_file(V.step_all).parent  # where Numba keeps vector.py's kernels
    stamp = folder / f"vector{kernel_cache.STAMP_SUFFIX}"
    assert stamp.read_text() == V.dependencies_digest()  # written at import: an edited dependency drops the entries
    assert len(V.dependencies_digest()) == 64


def test_gymnasium_vector_wrappers(busy):
    """Gymnasium's own vector wrappers run on it: episode statistics over NEXT_STEP autoresets."""
    from gymnasium.wrappers.vector import RecordEpisodeStatistics

    venv = RecordEpisodeStatistics(TaskSchedulingVectorEnv(busy, 2, windows=[dict(steps=5), dict(steps=8)],
                                                           reward={"energy_cost": 1.0}, drain=False))
    venv.reset(seed=0)
    returns = np.zeros(2)
    episodes = []
    for _ in range(12):
        _, rew, term, _, info = venv.step(np.array([1, 1]))
        returns += rew
        if "episode" in info:
            for i in np.flatnonzero(info["_episode"]):
                episodes.append((int(i), int(info["episode"]["l"][i]), float(info["episode"]["r"][i])))
    assert [(i, n) for i, n, _ in episodes] == [(0, 5), (1, 8), (0, 5)]
    assert all(r < 0 for _, _, r in episodes)  # costs
