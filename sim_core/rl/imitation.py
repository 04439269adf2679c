"""Behaviour cloning from a rule policy: the warm start of a recipe with ``warm_start`` (sim_core/rl/recipes.py;
docs/rl.md, "Warm start"). Needs torch (the ``rl`` extra).

A network at its random initialisation starts far below the rules and spends most of a 30-minute budget
learning what the best rule already does (the greenest site with room). Cloning starts it *at* the rule:

1. :func:`demonstrate` plays the rule through :class:`~sim_core.rl.decision.TaskDecisionEnv`
   (:meth:`~sim_core.rl.decision.TaskDecisionEnv.rule_action`: the rule's own kernel, under the environment's
   masks) on episodes of the training bundle and records each decision's observation, mask, the action done and
   the discounted return from it on (the environment's own dense reward);
2. :func:`clone` fits an SB3 actor-critic policy to them: the masked log-likelihood of the rule's actions (the
   actor) and the squared error to the returns (the critic, so that the first policy-gradient updates measure
   advantages against the rule's own values rather than an untrained critic's);
3. reinforcement learning then starts from the clone (examples/train_agent.py keeps the fine-tuned agent only
   if it beats the clone on a validation window of the *training* bundle: the held-out year chooses nothing).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass(frozen=True)
class Demonstrations:
    """Decisions of a rule through the environment: observations (n, features), masks (n, actions), the actions
    done (n,), and each decision's discounted return within its episode (n,)."""

    rule: str
    obs: np.ndarray
    masks: np.ndarray
    actions: np.ndarray
    returns: np.ndarray

    def __len__(self) -> int:
        return int(self.actions.shape[0])


def demonstrate(env, rule: str, decisions: int, *, gamma: float, seed: int) -> Demonstrations:
    """Play rule policy ``rule`` on ``env`` (a TaskDecisionEnv; each episode reset with seed ``seed + e``, its
    window as the environment draws it) until ``decisions`` decisions are recorded. The last episode is cut
    there; its returns are those of the rewards seen (with ``gamma`` < 1 the cut touches its last few)."""
    from ..policies import registry

    if rule not in registry.of_kind("rule"):
        raise ValueError(f"{rule!r} is not a rule policy; rules: {sorted(registry.of_kind('rule'))}")
    if decisions < 1:
        raise ValueError(f"decisions must be >= 1, got {decisions!r}")
    if not 0.0 <= gamma <= 1.0:
        raise ValueError(f"gamma must be in [0, 1], got {gamma!r}")
    obs = np.zeros((decisions, env.observation_space.shape[0]), np.float32)
    masks = np.zeros((decisions, env.n_actions), bool)
    actions = np.zeros(decisions, np.int64)
    returns = np.zeros(decisions, np.float32)
    n, e = 0, 0
    while n < decisions:
        o, _ = env.reset(seed=seed + e)
        e += 1
        first, rewards, done = n, [], False
        while not done and n < decisions:
            m = env.action_masks()
            o2, r, done, _, info = env.step(env.rule_action(rule))
            obs[n], masks[n], actions[n] = o, m, info["action"]
            rewards.append(r)
            o, n = o2, n + 1
        g = 0.0
        for k in range(len(rewards) - 1, -1, -1):
            g = rewards[k] + gamma * g
            returns[first + k] = g
    return Demonstrations(rule, obs, masks, actions, returns)


def clone(policy, demos: Demonstrations, *, epochs: int, batch_size: int, learning_rate: float, seed: int,
          vf_coef: float = 0.5, masked: bool = True) -> dict:
    """Fit SB3 actor-critic ``policy`` (PPO's or MaskablePPO's: its public ``evaluate_actions``) to ``demos``:
    minimise ``-log pi(a | s) + vf_coef * (V(s) - G)^2`` over ``epochs`` shuffled passes (Adam); ``vf_coef`` 0.5
    is SB3 PPO's default value-loss weight (the fine-tuning's own), not tuned here. ``masked``: the
    likelihood under the action masks (MaskablePPO acts under them; PPO does not). Returns the last epoch's mean
    losses and the share of the demonstrations whose greedy action is the rule's."""
    import torch

    if epochs < 1 or batch_size < 1 or not learning_rate > 0:
        raise ValueError(f"epochs and batch_size must be >= 1 and learning_rate > 0, got {epochs}, {batch_size}, "
                         f"{learning_rate}")
    obs = torch.as_tensor(demos.obs)
    acts = torch.as_tensor(demos.actions)
    masks = torch.as_tensor(demos.masks)
    rets = torch.as_tensor(demos.returns)
    opt = torch.optim.Adam(policy.parameters(), lr=learning_rate)
    gen = torch.Generator().manual_seed(int(seed))
    policy.set_training_mode(True)
    n = len(demos)
    for _ in range(epochs):
        tot_pi = tot_v = 0.0
        for idx in torch.randperm(n, generator=gen).split(batch_size):
            kw = {"action_masks": masks[idx].numpy()} if masked else {}
            values, logp, _ = policy.evaluate_actions(obs[idx], acts[idx], **kw)
            loss_pi = -logp.mean()
            loss_v = torch.nn.functional.mse_loss(values.flatten(), rets[idx])
            opt.zero_grad()
            (loss_pi + vf_coef * loss_v).backward()
            opt.step()
            tot_pi += loss_pi.item() * len(idx)
            tot_v += loss_v.item() * len(idx)
    policy.set_training_mode(False)
    return {"policy_loss": tot_pi / n, "value_loss": tot_v / n, "agreement": agreement(policy, demos, masked)}


def agreement(policy, demos: Demonstrations, masked: bool = True) -> float:
    """Share of ``demos`` on which ``policy``'s greedy action (under the masks if ``masked``) is the rule's."""
    import torch

    with torch.no_grad():
        kw = {"action_masks": demos.masks} if masked else {}
        acts, _, _ = policy.forward(torch.as_tensor(demos.obs), deterministic=True, **kw)
    return float((acts.numpy().reshape(-1) == demos.actions).mean())


__all__ = ["Demonstrations", "demonstrate", "clone", "agreement"]
