"""Trained agents as files: the policy network's weights and what produced them, loaded with one call
(docs/rl.md, "Saved agents"; needs torch, the ``rl`` extra).

stable-baselines3's own ``.zip`` holds pickled Python objects (its ``data`` entry: the class, spaces and
schedules, cloudpickled), and loading a pickle runs code from the file. An agent here is saved with
``torch.save`` as a dict of tensors, strings and numbers only, and loaded with ``torch.load(weights_only=True)``,
which refuses anything else. What is kept: the actor's layers (PPO / MaskablePPO: ``mlp_extractor.policy_net``
then ``action_net``; DQN: ``q_net.q_net``), their activation, the observation layout, and the provenance:
bundle id, recipe (its hyperparameters as JSON text), seed, training steps::

    agent = load_agent("agents/maskable_ppo-8567ae2e47c62498-s0.pt")
    action = agent.act(obs, env.action_masks())     # greedy: the valid action of highest score

The forward pass runs in NumPy (a few microseconds per decision: no torch call per step).
"""

from __future__ import annotations

import io
import json
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from gridshift.atomic import atomic_write_bytes

FORMAT = "gridshift-agent/1"
_ACTIVATIONS = {"Tanh": np.tanh, "ReLU": lambda x: np.maximum(x, 0.0)}


def _layers(state: dict, algo: str) -> list[tuple[np.ndarray, np.ndarray]]:
    """The actor's (weight, bias) pairs in order, from an SB3 policy's ``state_dict``."""
    def seq(prefix):
        ks = sorted({int(k[len(prefix):].split(".")[0]) for k in state if k.startswith(prefix)})
        return [(state[f"{prefix}{k}.weight"], state[f"{prefix}{k}.bias"]) for k in ks]

    if algo == "DQN":
        return seq("q_net.q_net.")
    return seq("mlp_extractor.policy_net.") + [(state["action_net.weight"], state["action_net.bias"])]


@dataclass(frozen=True)
class Agent:
    """A loaded agent: its layers and provenance; :meth:`act` picks the valid action of highest score."""

    algo: str
    activation: str
    layers: tuple[tuple[np.ndarray, np.ndarray], ...]
    bundle_id: str
    recipe: str
    hyperparameters: dict
    seed: int
    timesteps: int
    feature_names: tuple[str, ...]

    def __post_init__(self) -> None:
        """Refuse, naming it, an activation or a layer chain :meth:`scores` could not run (a hostile file's)."""
        if self.activation not in _ACTIVATIONS:
            raise ValueError(f"activation {self.activation!r} is not one of {sorted(_ACTIVATIONS)}")
        width = len(self.feature_names)
        for k, (w, b) in enumerate(self.layers):
            if w.ndim != 2 or w.shape[1] != width or b.shape != (w.shape[0],):
                raise ValueError(f"layer {k}: weight {w.shape} and bias {b.shape} do not take {width} inputs")
            width = w.shape[0]
        if not self.layers:
            raise ValueError("no layers")

    def scores(self, obs: np.ndarray) -> np.ndarray:
        """The actor's output for one observation: action logits (PPO) or Q-values (DQN)."""
        f = _ACTIVATIONS[self.activation]
        x = np.asarray(obs, dtype=np.float32)
        for k, (w, b) in enumerate(self.layers):
            x = w @ x + b
            if k < len(self.layers) - 1:
                x = f(x)
        return x

    def act(self, obs: np.ndarray, mask: np.ndarray | None = None) -> int:
        s = self.scores(obs)
        if mask is not None:
            s = np.where(mask, s, -np.inf)
        return int(np.argmax(s))


def play(agent, env, seed: int, **window) -> dict:
    """One greedy episode of ``agent`` (anything with ``act(obs, mask)``) on a
    :class:`~sim_core.rl.decision.TaskDecisionEnv`; the run's totals (the episode drains: equal work)."""
    obs, _ = env.reset(seed=seed, options=window or None)
    done = False
    while not done:
        obs, _, done, _, _ = env.step(agent.act(obs, env.action_masks()))
    return env.result().totals


def agent_from_model(model, *, bundle_id: str, recipe: str, hyperparameters: dict, seed: int,
                     feature_names) -> Agent:
    """The actor of a trained SB3 PPO, MaskablePPO or DQN ``model`` as an :class:`Agent`, with its provenance."""
    algo = type(model).__name__
    net = model.policy.q_net if algo == "DQN" else model.policy
    act = net.activation_fn.__name__
    if act not in _ACTIVATIONS:
        raise ValueError(f"activation {act} is not supported by the saved-agent format ({sorted(_ACTIVATIONS)})")
    state = {k: v.detach().cpu().numpy().astype(np.float32) for k, v in model.policy.state_dict().items()}
    return Agent(algo, act, tuple(_layers(state, algo)), str(bundle_id), recipe, dict(hyperparameters), int(seed),
                 int(model.num_timesteps), tuple(feature_names))


def save_agent(agent: Agent, path: str | Path) -> Path:
    """Write ``agent`` to ``path`` atomically (a dict of tensors, strings and numbers: ``torch.save``). The bytes
    depend on the agent alone: ``torch.save`` names its archive's folder after the file it writes to, so the
    archive is built in memory (named ``archive``) and then written, and the same network saved anywhere has the
    same sha256 (the digest the leaderboard records with every row of an agent entry)."""
    import torch

    payload = {"format": FORMAT, "algo": agent.algo, "activation": agent.activation, "bundle_id": agent.bundle_id,
               "recipe": agent.recipe, "hyperparameters": json.dumps(agent.hyperparameters, sort_keys=True),
               "seed": agent.seed, "timesteps": agent.timesteps, "feature_names": list(agent.feature_names),
               "layers": [torch.from_numpy(np.ascontiguousarray(w)) for pair in agent.layers for w in pair]}
    buf = io.BytesIO()
    torch.save(payload, buf)
    path = Path(path)
    atomic_write_bytes(path, buf.getvalue())  # (creates the folder)
    return path


def load_agent(path: str | Path) -> Agent:
    """Load an agent written by :func:`save_agent` (``torch.load(weights_only=True)``: no pickle)."""
    import torch

    path = Path(path)
    try:
        d = torch.load(path, weights_only=True, map_location="cpu")
    except Exception as e:  # noqa: BLE001 - any unreadable file: say which
        raise ValueError(f"{path}: not a gridshift agent file ({type(e).__name__}: {e})") from None
    fmt = d.get("format") if isinstance(d, dict) else None
    if fmt != FORMAT:
        raise ValueError(f"{path}: not a gridshift agent file (format {fmt!r}, expected {FORMAT!r})")
    try:
        ws = [t.numpy().astype(np.float32) for t in d["layers"]]
        return Agent(d["algo"], d["activation"], tuple(zip(ws[0::2], ws[1::2], strict=True)), d["bundle_id"],
                     d["recipe"], json.loads(d["hyperparameters"]), int(d["seed"]), int(d["timesteps"]),
                     tuple(d["feature_names"]))
    except (KeyError, TypeError, AttributeError, ValueError) as e:  # the tag is right, a field is missing or mistyped
        raise ValueError(f"{path}: not a gridshift agent file (a field is missing or of the wrong type: "
                         f"{type(e).__name__}: {e})") from None


__all__ = ["Agent", "play", "agent_from_model", "save_agent", "load_agent", "FORMAT"]
