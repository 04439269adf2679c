"""The Gymnasium environment's stable public path: ``from sim_core.gym import TaskSchedulingEnv``.

The implementation lives in :mod:`sim_core.rl.env` (rewards in :mod:`sim_core.rl.reward`).
"""

from .rl.env import TaskSchedulingEnv

__all__ = ["TaskSchedulingEnv"]
