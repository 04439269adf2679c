"""stable-baselines3 adapter: :class:`SB3VecEnv` presents a :class:`~sim_core.rl.vector.TaskSchedulingVectorEnv`
as a stable-baselines3 ``VecEnv`` (needs the optional ``rl`` extra: ``GRIDSHIFT_EXTRAS=rl ./run.sh ...``)::

    from stable_baselines3 import PPO
    from sim_core.gym import TaskSchedulingVectorEnv
    from sim_core.rl.sb3 import SB3VecEnv

    venv = SB3VecEnv(TaskSchedulingVectorEnv("bundles/<id>", num_envs=16, days=7))
    PPO("MlpPolicy", venv, device="cpu").learn(100_000)

stable-baselines3 resets an environment in the step that ends its episode (the returned observation is
the next episode's first, the last one is in ``infos[i]["terminal_observation"]``), where Gymnasium's
vector API resets it on the next step; the adapter resets finished environments at once
(:meth:`TaskSchedulingVectorEnv.reset_finished`), so both see the same episodes and seeds. Episodes end
by termination (the window's last step), never by a time limit: ``TimeLimit.truncated`` is False.

:func:`silent_logger` is the logger every model here is given (``model.set_logger(silent_logger())``): without
one, stable-baselines3's ``learn`` configures its default, which creates a folder ``SB3-<date>`` in the system's
temporary directory on every run (``stable_baselines3.common.logger.configure``) and leaves it there.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from stable_baselines3.common.logger import Logger
from stable_baselines3.common.vec_env.base_vec_env import VecEnv

from .vector import TaskSchedulingVectorEnv


class SB3VecEnv(VecEnv):
    """A :class:`TaskSchedulingVectorEnv` as a stable-baselines3 ``VecEnv`` (module docstring)."""

    def __init__(self, venv: TaskSchedulingVectorEnv):
        if not isinstance(venv, TaskSchedulingVectorEnv):
            raise TypeError(f"expected a TaskSchedulingVectorEnv, got {type(venv).__name__}")
        self.venv = venv
        self.render_mode = None
        super().__init__(venv.num_envs, venv.single_observation_space, venv.single_action_space)
        self._actions = None

    def reset(self):
        seeds = None if all(s is None for s in self._seeds) else [int(s) for s in self._seeds]
        obs, info = self.venv.reset(seed=seeds)
        self.reset_infos = [{"seed": int(s)} for s in info["seed"]]
        self._seeds = [None] * self.num_envs
        return obs

    def step_async(self, actions: np.ndarray) -> None:
        self._actions = np.asarray(actions).reshape(self.num_envs)

    def step_wait(self):
        obs, rew, term, trunc, info = self.venv.step(self._actions)
        comps = info["components"]
        infos = [{"components": {k: float(v[i]) for k, v in comps.items()}} for i in range(self.num_envs)]
        dones = term | trunc
        if dones.any():
            for i in np.flatnonzero(dones):
                infos[i]["terminal_observation"] = obs[i].copy()
                infos[i]["TimeLimit.truncated"] = bool(trunc[i] and not term[i])
            self.venv.reset_finished()
            obs = self.venv.last_obs.copy()
        return obs, rew.astype(np.float32), dones, infos

    def close(self) -> None:
        self.venv.close()

    # -------------------------------------------------------------- attribute access (the sub-environments)
    def _targets(self, indices) -> list:
        return [self.venv.envs[i] for i in self._get_indices(indices)]

    def get_attr(self, attr_name: str, indices=None) -> list:
        if attr_name == "render_mode":
            return [None for _ in self._get_indices(indices)]
        return [getattr(env, attr_name) for env in self._targets(indices)]

    def set_attr(self, attr_name: str, value, indices=None) -> None:
        for env in self._targets(indices):
            setattr(env, attr_name, value)

    def env_method(self, method_name: str, *method_args, indices=None, **method_kwargs) -> list:
        return [getattr(env, method_name)(*method_args, **method_kwargs) for env in self._targets(indices)]

    def env_is_wrapped(self, wrapper_class, indices=None) -> Sequence[bool]:
        return [isinstance(env, wrapper_class) for env in self._targets(indices)]


def silent_logger() -> Logger:
    """A stable-baselines3 logger with no output and no folder: the training's values are still recorded
    (``logger.name_to_value``, until each dump), nothing is written anywhere (module docstring)."""
    return Logger(folder=None, output_formats=[])


__all__ = ["SB3VecEnv", "silent_logger"]
