"""The environments by their registered ids, Gymnasium's checker in both action modes, the text render."""

from __future__ import annotations

import warnings

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

import sim_core.gym
from sim_core.gym import TASK_SCHEDULING_ID, TaskSchedulingEnv, TaskSchedulingVectorEnv


def test_make_by_id_gives_the_environment_with_its_spec(busy):
    env = gymnasium.make(TASK_SCHEDULING_ID, bundle=busy, single_action=True, days=0.25)
    assert isinstance(env.unwrapped, TaskSchedulingEnv)
    assert env.spec.id == "gridshift/TaskScheduling-v0"
    assert env.spec.kwargs["single_action"] is True and env.spec.kwargs["days"] == 0.25  # the caller's, recorded
    obs, _ = env.reset(seed=3)
    assert obs.shape == (len(env.unwrapped.feature_names),)
    direct = TaskSchedulingEnv(busy, single_action=True, days=0.25)
    ref, _ = direct.reset(seed=3)
    np.testing.assert_array_equal(obs, ref)


def test_gymnasium_checker_passes_made_by_id_with_its_render_mode(busy):
    env = gymnasium.make(TASK_SCHEDULING_ID, bundle=busy, single_action=True, days=0.25, render_mode="ansi")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # any checker warning fails the test (render modes included)
        check_env(env.unwrapped)


def test_make_vec_by_id_steps_every_environment_in_one_call(busy):
    envs = gymnasium.make_vec(TASK_SCHEDULING_ID, num_envs=3, bundle=busy, days=0.25)
    assert isinstance(envs, TaskSchedulingVectorEnv)
    obs, _ = envs.reset(seed=0)
    assert obs.shape == (3, len(envs.feature_names))
    obs, rew, term, trunc, _ = envs.step(np.zeros(3, np.int64))
    assert rew.shape == term.shape == trunc.shape == (3,)


def test_ansi_render_names_every_site_and_the_pending_tasks(busy):
    env = TaskSchedulingEnv(busy, single_action=True, days=0.25, render_mode="ansi")
    env.reset(seed=0)
    for _ in range(8):
        env.step(1)
    text = env.render()
    assert text.startswith("step 8/24 (")
    assert f"{env.n_pending} pending" in text.splitlines()[0]
    assert [line.split()[0] for line in text.splitlines()[2:]] == env.locations
    assert TaskSchedulingEnv(busy, single_action=True, days=0.25).render() is None
    with pytest.raises(ValueError, match="render_mode must be None or one of"):
        TaskSchedulingEnv(busy, render_mode="human")


def test_site_scheduling_by_pettingzoo_convention(busy):
    pytest.importorskip("pettingzoo", reason="the optional rl extra is not installed")
    from sim_core.gym import site_scheduling_v0

    par = site_scheduling_v0.parallel_env(busy, days=0.25)
    obs, _ = par.reset(seed=0)
    assert sorted(obs) == sorted(busy.locations)
    aec = site_scheduling_v0.env(busy, days=0.25)
    aec.reset(seed=0)
    assert aec.agent_selection == par.possible_agents[0]


def test_sb3_make_vec_env_by_id(busy):
    pytest.importorskip("stable_baselines3", reason="the optional rl extra is not installed")
    from stable_baselines3.common.env_util import make_vec_env

    # (SB3 asks for render_mode="rgb_array" unless env_kwargs names one: the environment renders text only)
    venv = make_vec_env(TASK_SCHEDULING_ID, n_envs=2, env_kwargs={"bundle": busy, "single_action": True,
                                                                   "days": 0.25, "render_mode": None})
    obs = venv.reset()
    assert obs.shape == (2, len(venv.get_attr("feature_names")[0]))
    assert sim_core.gym.TASK_SCHEDULING_ID in gymnasium.registry


def test_docs_observation_tables_are_the_codes_layout():
    """docs/rl.md's observation tables equal what benchmarks/rl_layout_doc.py renders from the code, and
    every feature the environment returns has a documented meaning."""
    from benchmarks._report import ROOT
    from benchmarks.rl_layout_doc import EXAMPLE_SITES, sections
    from sim_core.rl.env import FEATURE_MEANINGS, feature_layout, feature_pattern

    doc = (ROOT / "docs" / "rl.md").read_text()
    for name, body in sections().items():
        assert f"<!-- {name}:start -->\n{body}\n<!-- {name}:end -->" in doc, (
            f"docs/rl.md's {name} table is stale: run ./run.sh python benchmarks/rl_layout_doc.py")
    single, task = feature_layout(EXAMPLE_SITES)
    assert len(single) == 9 + 14 * 3 and len(task) == 10 + 14 * 3
    assert {feature_pattern(n, EXAMPLE_SITES) for n in single + task} <= set(FEATURE_MEANINGS)


def test_environment_observes_the_documented_layout(busy):
    from sim_core.rl.env import feature_layout

    env = TaskSchedulingEnv(busy, single_action=True, days=0.25)
    assert (env.feature_names, env.task_feature_names) == feature_layout(busy.locations)
    assert env.observation_space.shape == (len(env.feature_names),)
