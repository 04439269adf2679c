"""The Gymnasium environments' stable public path::

    from sim_core.gym import TaskSchedulingEnv, TaskSchedulingVectorEnv

The implementations live in :mod:`sim_core.rl.env` (one environment), :mod:`sim_core.rl.vector` (N
environments stepped in one jitted call) and :mod:`sim_core.rl.reward` (rewards).
"""

from .rl.env import TaskSchedulingEnv
from .rl.vector import TaskSchedulingVectorEnv

__all__ = ["TaskSchedulingEnv", "TaskSchedulingVectorEnv"]
