"""stable-baselines3: the VecEnv adapter (same-step autoreset over the vector env) and a short PPO run."""

from __future__ import annotations

import tempfile

import numpy as np
import pytest

pytest.importorskip("stable_baselines3", reason="the optional rl extra is not installed (GRIDSHIFT_EXTRAS=rl)")

from sim_core.gym import TaskSchedulingEnv, TaskSchedulingVectorEnv  # noqa: E402
from sim_core.rl.sb3 import SB3VecEnv, silent_logger  # noqa: E402


def test_adapter_same_step_autoreset(busy):
    # episodes of exactly 4 and 6 steps (drain=False: the autoreset's timing is the subject, not equal work)
    venv = SB3VecEnv(TaskSchedulingVectorEnv(busy, 2, windows=[dict(steps=4), dict(steps=6)], drain=False))
    venv.seed(30)
    obs = venv.reset()
    assert obs.shape == (2, 9 + 14 * busy.n_dc)
    for _ in range(4):
        venv.step_async(np.array([1, 2]))
        obs, rew, dones, infos = venv.step_wait()
    assert dones.tolist() == [True, False] and rew.dtype == np.float32
    # env 0's episode ended: obs is the first observation of its next episode (seed 30 + 2) ...
    fresh = TaskSchedulingEnv(busy, single_action=True, steps=4, drain=False)
    np.testing.assert_array_equal(obs[0], fresh.reset(seed=32)[0])
    # ... and the last one is the single env's terminal observation
    ref = TaskSchedulingEnv(busy, single_action=True, steps=4, drain=False)
    ref.reset(seed=30)
    for _ in range(4):
        last, *_ = ref.step(1)
    np.testing.assert_array_equal(infos[0]["terminal_observation"], last)
    assert infos[0]["TimeLimit.truncated"] is False and "terminal_observation" not in infos[1]
    assert venv.get_attr("n_dc") == [busy.n_dc, busy.n_dc]


def test_short_ppo_run(busy, tmp_path, monkeypatch):
    from stable_baselines3 import PPO

    venv = SB3VecEnv(TaskSchedulingVectorEnv(busy, 4, steps=24, reward={"energy_cost": 1.0, "sla_penalty": 1.0}))
    model = PPO("MlpPolicy", venv, n_steps=32, batch_size=64, n_epochs=2, seed=0, device="cpu", verbose=0)
    model.set_logger(silent_logger())
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # where SB3's default logger would make its folder
    model.learn(total_timesteps=256)
    assert list(tmp_path.iterdir()) == []  # the silent logger wrote nothing
    assert model.num_timesteps >= 256
    obs = venv.reset()
    act, _ = model.predict(obs, deterministic=True)
    assert act.shape == (4,) and ((act >= 0) & (act <= busy.n_dc)).all()
    assert np.isfinite(model.logger.name_to_value.get("train/loss", 0.0))
