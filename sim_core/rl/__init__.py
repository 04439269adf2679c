"""Reinforcement learning over the step API.

* :mod:`sim_core.rl.env`: ``TaskSchedulingEnv``, a Gymnasium environment (public path
  ``sim_core.gym``);
* :mod:`sim_core.rl.reward`: composable rewards over one step's :class:`sim_core.outcome.StepOutcome`;
* :mod:`sim_core.rl.decision`: ``TaskDecisionEnv``, one decision per task with action masks and a dense carbon
  reward: what the training recipes (:mod:`sim_core.rl.recipes`) learn on;
* :mod:`sim_core.rl.agent`: trained agents saved and loaded without pickle.

Documented in docs/rl.md.
"""
