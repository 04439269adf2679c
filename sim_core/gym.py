"""The Gymnasium environments' stable public path, and their registered ids::

    import gymnasium
    import sim_core.gym  # registers the ids below (Gymnasium has no plugin discovery)

    env = gymnasium.make("gridshift/TaskScheduling-v0", bundle="bundles/<id>", single_action=True, days=7)
    envs = gymnasium.make_vec("gridshift/TaskScheduling-v0", num_envs=8, bundle="bundles/<id>", days=7)

``gymnasium.make`` gives :class:`TaskSchedulingEnv` (either action mode) with its ``spec``;
``gymnasium.make_vec`` gives :class:`TaskSchedulingVectorEnv` (single-action; N environments stepped in
one jitted call); stable-baselines3's ``make_vec_env("gridshift/TaskScheduling-v0", env_kwargs=...)``
works by the same id (name ``render_mode`` in ``env_kwargs``: SB3 asks for ``"rgb_array"`` otherwise, and
the environment renders text, ``"ansi"``, only). The multi-agent (PettingZoo) environment follows
PettingZoo's convention instead:
``from sim_core.gym import site_scheduling_v0; env = site_scheduling_v0.parallel_env(bundle=...)``.

The implementations live in :mod:`sim_core.rl.env` (one environment), :mod:`sim_core.rl.vector` (N
environments stepped in one jitted call), :mod:`sim_core.rl.multiagent` and :mod:`sim_core.rl.reward`.
"""

from gymnasium.envs.registration import register, registry

from .rl import site_scheduling_v0
from .rl.env import TaskSchedulingEnv
from .rl.vector import TaskSchedulingVectorEnv

TASK_SCHEDULING_ID = "gridshift/TaskScheduling-v0"

if TASK_SCHEDULING_ID not in registry:
    register(id=TASK_SCHEDULING_ID, entry_point="sim_core.rl.env:TaskSchedulingEnv",
             vector_entry_point="sim_core.rl.vector:TaskSchedulingVectorEnv")

__all__ = ["TASK_SCHEDULING_ID", "TaskSchedulingEnv", "TaskSchedulingVectorEnv", "site_scheduling_v0"]
