"""The training recipes' hyperparameters, all in this one file (docs/rl.md, "Learning"): what
examples/train_agent.py trains on :class:`sim_core.rl.decision.TaskDecisionEnv`.

Every value not listed here is the library's default (stable-baselines3 / sb3-contrib 2.x), and each listed
one says why it departs. Shared by every recipe:

* ``episode_days`` 2: an episode is two days of the training bundle from a start drawn among its days (about
  7,000 decisions at the main job's load), so that a rollout sees several seasons' days;
* ``n_envs`` 4 environments (DummyVecEnv, one process: the machine has 2 shared cores);
* ``torch_threads`` 1: one core for torch, one for the environments;
* ``net_arch`` [64, 64]: SB3's default MLP, stated so that the saved policy's layout is explicit;
* ``validation``: the windows of the *training* bundle on which a warm-started recipe chooses the agent it keeps
  (the clone or a checkpoint; the held-out year chooses nothing): ``days`` long from the shares ``at`` of its
  span. Sized by its measured noise (docs/rl.md, "Warm start"): on 7-day windows of 2022 the saving of one agent
  minus another's varies from week to week with a standard deviation of 0.1-0.2 point, so 16 weeks (the middle
  week of each 16th of the year) put the standard error of a difference at 0.03-0.05 point, below the 0.1 point
  between agents to rank. The first validation, four 2-day windows, could not (its differences pointed the
  wrong way for one seed).

A recipe with ``warm_start`` first clones a rule policy's decisions (:mod:`sim_core.rl.imitation`): ``rule``
(the best rule of the results pages, ``lowest_carbon``), ``decisions`` recorded on the training bundle's
episodes, ``epochs`` passes of Adam at ``learning_rate`` in batches of ``batch_size``; then the RL algorithm
fine-tunes the clone for ``timesteps``, a checkpoint every ``eval_every``; the clone or the checkpoint of least
carbon on the ``validation`` windows is kept.
"""

from __future__ import annotations

#: recipe name -> {"algo": the library class, "policy": its policy name, "kwargs": the class's arguments,
#: "timesteps": the training budget in decisions, "eval_every": steps between two held-out evaluations}
RECIPES: dict[str, dict] = {
    # PPO without masks: an invalid action is repaired by the environment (to the origin); the reward says what
    # was done. n_steps 512 x 4 envs = 2,048 decisions per update (SB3's default rollout size for one env).
    "ppo": {"algo": "stable_baselines3.PPO", "policy": "MlpPolicy", "timesteps": 300_000, "eval_every": 50_000,
            "kwargs": {"n_steps": 512, "batch_size": 256, "learning_rate": 3e-4, "gamma": 0.9,
                       "policy_kwargs": {"net_arch": [64, 64]}}},
    # MaskablePPO (sb3-contrib): the same PPO, its logits masked by env.action_masks().
    "maskable_ppo": {"algo": "sb3_contrib.MaskablePPO", "policy": "MlpPolicy", "timesteps": 300_000,
                     "eval_every": 50_000,
                     "kwargs": {"n_steps": 512, "batch_size": 256, "learning_rate": 3e-4, "gamma": 0.9,
                                "policy_kwargs": {"net_arch": [64, 64]}}},
    # DQN (value-based, no masks: repaired actions as for PPO). learning_starts 5,000 (a replay buffer of
    # decisions from several steps before the first update); target_update_interval 2,000 (SB3's 10,000 is
    # tuned for Atari's 10 M frames, 5 % of this budget); exploration over the first 20 % of the budget.
    "dqn": {"algo": "stable_baselines3.DQN", "policy": "MlpPolicy", "timesteps": 300_000, "eval_every": 50_000,
            "kwargs": {"learning_rate": 1e-4, "buffer_size": 200_000, "learning_starts": 5_000,
                       "target_update_interval": 2_000, "exploration_fraction": 0.2, "gamma": 0.9,
                       "policy_kwargs": {"net_arch": [64, 64]}}},
    # MaskablePPO warm-started by cloning lowest_carbon (sim_core/rl/imitation.py): 200,000 demonstrated decisions
    # (~28 two-day episodes), 20 epochs at Adam's default 1e-3 (Kingma & Ba 2015, arXiv:1412.6980, Algorithm 1: a
    # supervised fit). The first version cloned 50,000 for 10 epochs; its clones fell short of the rule on the
    # held-out year (docs/rl.md, "Warm start"). The fine-tuning starts from a policy worth keeping, so its steps
    # are smaller than PPO's
    # defaults (3e-4, clip 0.2): learning_rate 1e-4 and clip_range 0.1, the conservative end of the clip range the
    # PPO paper compares (Schulman et al. 2017, arXiv:1707.06347, Table 1: 0.1, 0.2, 0.3). Chosen before any run,
    # not tuned (docs/rl.md, "Warm start": one run per training seed).
    "maskable_ppo_bc": {"algo": "sb3_contrib.MaskablePPO", "policy": "MlpPolicy", "timesteps": 100_000,
                        "eval_every": 25_000,
                        "warm_start": {"rule": "lowest_carbon", "decisions": 200_000, "epochs": 20,
                                       "batch_size": 256, "learning_rate": 1e-3},
                        "kwargs": {"n_steps": 512, "batch_size": 256, "learning_rate": 1e-4, "clip_range": 0.1,
                                   "gamma": 0.9, "policy_kwargs": {"net_arch": [64, 64]}}},
}

#: shared by every recipe (module docstring)
COMMON = {"episode_days": 2, "n_envs": 4, "torch_threads": 1, "seed": 0,
          "validation": {"at": [(k + 0.5) / 16 for k in range(16)], "days": 7}}

__all__ = ["RECIPES", "COMMON"]
