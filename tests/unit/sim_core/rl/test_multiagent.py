"""SiteSchedulingParallelEnv: PettingZoo's API test, decisions split by origin, the MASAC utility per agent."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("pettingzoo", reason="the optional rl extra is not installed (GRIDSHIFT_EXTRAS=rl)")

from pettingzoo.test import parallel_api_test  # noqa: E402

from sim_core.gym import TaskSchedulingEnv  # noqa: E402
from sim_core.rl.multiagent import SiteSchedulingParallelEnv  # noqa: E402
from sim_core.rl.reward import masac_terms  # noqa: E402


def test_parallel_api_test(busy):
    env = SiteSchedulingParallelEnv(busy, steps=40)
    # (PettingZoo's test resets with options={"options": 1}: accepted, as its API requires, and named)
    with pytest.warns(UserWarning, match=r"reset options \['options'\] are not options of this environment"):
        parallel_api_test(env, num_cycles=60)
    assert env.possible_agents == ["AA", "BB", "CC"]


def test_same_action_everywhere_equals_single_env(busy):
    """Every agent answering a gives the run of TaskSchedulingEnv answering a for every pending task."""
    for a in (0, 2):
        ma = SiteSchedulingParallelEnv(busy, steps=50)
        ma.reset(seed=4)
        while ma.agents:
            ma.step({ag: a for ag in ma.agents})
        env = TaskSchedulingEnv(busy, steps=50)
        obs, _ = env.reset(seed=4)
        done = False
        while not done:
            obs, _, done, _, _ = env.step([a] * len(obs))
        assert ma.result().totals == env.result().totals


def test_agents_decide_for_their_origin(busy):
    env = SiteSchedulingParallelEnv(busy, steps=30, allow_defer=False)
    env.reset(seed=1)
    choice = {"AA": 2, "BB": 0, "CC": 1}  # each site sends its tasks to one datacenter
    while env.agents:
        env.step(choice)
    t = env.result().tasks
    decided = t.filter(~t["forced"] & t["dest"].is_not_null())
    for loc, a in choice.items():
        dest = decided.filter(decided["origin"].cast(str) == loc)["dest"].cast(str).to_list()
        assert len(dest) > 10
        assert dest.count(busy.locations[a]) == len(dest), loc  # (every task fits every DC's capacity)
    assert env.result().totals["invalid_actions"] == 0


def test_utilities_add_up_to_system_utility(busy):
    env = SiteSchedulingParallelEnv(busy, steps=60, masac_params={"carbon_usd_per_t": 150.0})
    obs, _ = env.reset(seed=2)
    assert all(o.shape == (len(env.feature_names),) for o in obs.values())
    rng = np.random.default_rng(0)
    n_transfer_steps = 0
    while env.agents:
        obs, rew, term, trunc, info = env.step({a: int(rng.integers(env.n_actions)) for a in env.agents})
        o = env.env.outcome
        system = masac_terms(o, carbon_usd_per_t=150.0)
        for k in ("revenue", "energy_cost", "gpu_profit", "idle_cost", "carbon_cost", "migration_cost",
                  "retrieval_cost", "utility"):
            tot = sum(i["utility_terms"][k] for i in info.values())
            assert tot == pytest.approx(system[k], rel=1e-9, abs=1e-9), k
        assert sum(rew.values()) == pytest.approx(system["utility"], rel=1e-9, abs=1e-9)  # norm 1 USD
        n_transfer_steps += o["transfers"] > 0
        for a, ob in obs.items():
            assert env.observation_space(a).contains(ob)
    assert n_transfer_steps > 5  # migrations were attributed, not only DC terms


def test_reset_options_it_does_not_take_are_named(busy):
    env = SiteSchedulingParallelEnv(busy, steps=10)
    with pytest.warns(UserWarning, match=r"reset options \['bogus'\] are not options of this environment"):
        env.reset(seed=0, options={"bogus": 1})
    with pytest.raises(TypeError, match="options must be a dict"):
        env.reset(options=[("steps", 4)])


def test_shared_reward_and_errors(busy):
    env = SiteSchedulingParallelEnv(busy, steps=10, shared=True)
    env.reset(seed=0)
    _, rew, *_ = env.step({a: 1 for a in env.agents})
    assert len(set(rew.values())) == 1
    with pytest.raises(ValueError, match="no action for agents"):
        env.step({"AA": 1})
    with pytest.raises(ValueError, match="agent BB: action must be one integer in 0..3"):
        env.step({"AA": 1, "BB": 7, "CC": 0})
    for wrong in (np.array([1]), np.array([[1]])):  # one action per agent is shape () (its Discrete space)
        with pytest.raises(ValueError, match=r"agent AA: action must be one integer in 0..3 \(shape \(\)\)"):
            env.step({"AA": wrong, "BB": 1, "CC": 0})
    with pytest.raises(ValueError, match="unknown masac_params"):
        SiteSchedulingParallelEnv(busy, masac_params={"revenue": 1.0})
    with pytest.raises(TypeError, match="MASAC utility"):
        SiteSchedulingParallelEnv(busy, reward={"energy_cost": 1})


@pytest.mark.parametrize("params, name", [
    ({"carbon_usd_per_t": float("nan")}, "carbon_usd_per_t"), ({"revenue_usd_per_gpu_h": float("inf")},
                                                                "revenue_usd_per_gpu_h"),
    ({"idle_power_ratio": "yes"}, "idle_power_ratio"), ({"include_transfer_carbon": "yes"},
                                                             "include_transfer_carbon"),
    ({"migration_usd_per_gb": float("-inf")}, "migration_usd_per_gb"), ({"carbon_usd_per_t": True},
                                                                         "carbon_usd_per_t"),
    ({"revenue_usd_per_gpu_h": -1.0}, "revenue_usd_per_gpu_h"),
])
def test_masac_params_refuse_nan_inf_and_strings(busy, params, name):
    """masac_params are refused by name with their range (sim_core.rl.reward.MASAC_RANGES), in the environment
    and in a Reward configuration alike; a utility computed from NaN would poison every reward silently."""
    from sim_core.rl.reward import Reward, RewardConfigError

    with pytest.raises(RewardConfigError, match=name):
        SiteSchedulingParallelEnv(busy, masac_params=params)
    with pytest.raises(RewardConfigError, match=name):
        Reward({"masac_utility": {"params": params}})
    ok = SiteSchedulingParallelEnv(busy, masac_params={"migration_usd_per_gb": None, "carbon_usd_per_t": 0})
    assert ok.masac["carbon_usd_per_t"] == 0 and ok.masac["migration_usd_per_gb"] is None
