"""Reinforcement learning over the step API.

* :mod:`sim_core.rl.env`: ``TaskSchedulingEnv``, a Gymnasium environment (public path
  ``sim_core.gym``);
* :mod:`sim_core.rl.reward`: composable rewards over one step's :class:`sim_core.outcome.StepOutcome`.

Documented in docs/rl.md.
"""
