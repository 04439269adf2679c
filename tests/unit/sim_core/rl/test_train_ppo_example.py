"""The PPO training recipe (examples/train_ppo.py): its score is the default reward summed over an episode,
and the recipe runs end to end on a tiny budget (needs the rl extra)."""

from __future__ import annotations

import numpy as np
import pytest

from sim_core.gym import TaskSchedulingEnv
from sim_core.policies import registry
from tests.conftest import load_example


@pytest.fixture(scope="module")
def ex():
    return load_example("train_ppo")


@pytest.fixture(scope="module")
def small(ex, tmp_path_factory):
    return ex.make_bundle(tmp_path_factory.mktemp("ppo"), days=3, tasks_per_day=1500)


def test_score_is_the_default_reward_summed_over_the_episode(ex, busy):
    env = TaskSchedulingEnv(busy, single_action=True, seed=1)
    env.reset(seed=1)
    total, done, k = 0.0, False, 0
    while not done:
        _, r, done, _, _ = env.step(k % env.n_actions)  # (every site and deferral in turn: transfers, SLA misses)
        total += r
        k += 1
    totals = env.result().totals
    assert totals["transfer_cost_usd"] > 0 and totals["sla_violations"] > 0
    np.testing.assert_allclose(ex.score(totals), total, rtol=1e-9)


def test_recipe_runs_end_to_end(ex, small, capsys):
    pytest.importorskip("stable_baselines3", reason="the optional rl extra is not installed")
    out = ex.main(["--bundle", str(small), "--train-days", "2", "--timesteps", "512", "--envs", "2",
                   "--eval-seeds", "1"])
    text = capsys.readouterr().out
    assert out["timesteps"] >= 512 and out["best_rule"] in registry.of_kind("rule")
    assert {"PPO", "random agent", "local_only"} <= set(out["means"])
    assert all(np.isfinite(v) for v in out["means"].values())
    assert "held-out score" in text and f"best rule policy: {out['best_rule']}" in text
