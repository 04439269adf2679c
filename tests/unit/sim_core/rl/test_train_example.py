"""The single-action training example: its core loop learns to beat a random agent (tiny budget)."""

from __future__ import annotations

import numpy as np
import pytest

import sim_core
from sim_core.gym import TaskSchedulingEnv
from tests.conftest import load_example


@pytest.fixture(scope="module")
def ex():
    return load_example("train_single_action")


@pytest.fixture(scope="module")
def small(ex, tmp_path_factory):
    return ex.make_bundle(tmp_path_factory.mktemp("ex"), n_dc=3, days=2, tasks_per_day=3000)


def test_train_beats_random(ex, small):
    env = TaskSchedulingEnv(sim_core.load(small), single_action=True, days=1)
    W, hist = ex.train(env, episodes=24, seed=0, population=8)
    assert W.shape == (env.action_space.n, env.observation_space.shape[0] + 1)
    # (each iteration's elite mean is on its own training seed, so the history need not rise: the learning check
    # is the held-out comparison below)
    assert len(hist) == 3 and np.all(np.isfinite(hist))
    seeds = [100, 101]
    trained = ex.evaluate(env, ex.linear_policy(W), seeds)
    rnd = ex.evaluate(env, ex.random_policy(env.action_space.n), seeds)
    assert np.isfinite(trained) and trained > rnd


def _steps(ex, env, name: str) -> list[int]:
    """Steps of the evaluation episodes (seeds 10000, 10001) of a built-in rule, counted here step by step."""
    counts = []
    for seed in (10_000, 10_001):
        env.reset(seed=seed)
        n, done = 0, False
        while not done:
            _, _, done, truncated, _ = env.step(env.baseline_action(name))
            n += 1
            done = done or truncated
        counts.append(n)
    return counts


def test_main_end_to_end(ex, small, capsys):
    scores = ex.main(["--bundle", str(small), "--episodes", "16", "--population", "8", "--days", "0.5",
                      "--eval-seeds", "2"])
    out = capsys.readouterr().out
    assert set(scores) == {"trained (CEM, linear)", "random", "local_only", "lowest_carbon"}
    # the steps printed are those the environment runs: 48 window steps (half a day of 15 min), then the drain
    env = TaskSchedulingEnv(sim_core.load(small), single_action=True, days=0.5, seed=0)
    p = env.sim.prep
    assert f"episodes of 0.5 days: 48 steps of 15 min, then at most {p.n - 48} drain steps" in out
    assert p.n_window == 48 and p.n > 48
    for name, seed_steps in (("local_only", _steps(ex, env, "local_only")), ("lowest_carbon", None)):
        line = next(ln for ln in out.splitlines() if ln.strip().startswith(name))
        shown = [int(x) for x in line.split("steps ")[1].split(", ")]
        assert len(shown) == 2 and all(48 <= n <= p.n for n in shown), line
        if seed_steps is not None:
            assert shown == seed_steps, line
    assert "trained beats random" in out
    assert scores["trained (CEM, linear)"] > scores["random"]
