"""The multi-agent environment by PettingZoo's convention (a versioned module with ``parallel_env`` and
``env``): one agent per site, the MASAC utility per agent (:mod:`sim_core.rl.multiagent`). Needs the
``rl`` extra (PettingZoo). Public path ``sim_core.gym.site_scheduling_v0``::

    from sim_core.gym import site_scheduling_v0
    env = site_scheduling_v0.parallel_env(bundle="bundles/<id>", days=7)
"""

from __future__ import annotations


def parallel_env(bundle, **kwargs):
    """A :class:`sim_core.rl.multiagent.SiteSchedulingParallelEnv` (PettingZoo ``ParallelEnv``)."""
    from .multiagent import SiteSchedulingParallelEnv

    return SiteSchedulingParallelEnv(bundle, **kwargs)


def env(bundle, **kwargs):
    """The same environment through PettingZoo's AEC interface (agents act in turn)."""
    from pettingzoo.utils.conversions import parallel_to_aec

    return parallel_to_aec(parallel_env(bundle, **kwargs))
