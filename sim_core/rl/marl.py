"""Multi-agent discrete SAC (MASAC, the paper's S4) and multi-agent DQN (MADQN, its S3) on
:class:`~sim_core.rl.masac_env.JobDecisionEnv` (needs torch: the optional ``rl`` extra).

MASAC (Zhang, Xu, Lim & Niyato 2023, Algorithm 1): every agent n has an actor pi_n(a | S), two critics
Q_n, Q'_n(S, .) over its own actions and their target copies, and its own replay buffer; all observe the global
state S^k and store the shared reward. The update is soft actor-critic for discrete actions (Christodoulou 2019,
arXiv:1910.07207, whose equations follow; the paper cites SAC, Haarnoja et al. 2018, and gives no equations)::

    y        = r + gamma (1 - done) sum_a' pi(a'|S') [min(Qt1, Qt2)(S', a') - alpha log pi(a'|S')]
    L_Q      = (Q1(S, a) - y)^2 + (Q2(S, a) - y)^2                        (mean over the batch)
    L_pi     = sum_a pi(a|S) [alpha log pi(a|S) - min(Q1, Q2)(S, a)]
    L_alpha  = -log alpha (sum_a pi(a|S) log pi(a|S) + H_target)         (H_target = ratio x log |A|)
    targets  <- tau x critics + (1 - tau) x targets

MADQN (the paper's S3, "trained by the Deep Q Network algorithm", its ref. [18]): one Q network per agent on the
same state, epsilon-greedy, target y = r + gamma (1 - done) max_a' Qt(S', a'), the same target update.

Every hyperparameter is in :class:`MARLConfig` (Table I where the paper gives it; the others named there with
their source). Evaluation acts greedily (the argmax of pi or Q). Weights are saved as a ``.npz`` of arrays and a
``.json`` of metadata (no pickle): :func:`save_agents`, :func:`load_agents`.
"""

from __future__ import annotations

import dataclasses
import io
import json
import math
import os
import time
import zipfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from torch import nn
from torch.nn import functional as F

from gridshift.atomic import atomic_write_bytes

ALGORITHMS = ("masac", "madqn")
FORMAT = "gridshift-marl-1"


@dataclass(frozen=True)
class MARLConfig:
    """The trainers' hyperparameters, in one place. Table I of the paper: learning rates (actor 1e-5, critic
    5e-4), network update steps G = 1,000 per epoch, batch 256, gamma 0.99, hidden layers [256, 256], K_max =
    12,000 steps per episode; §IV-A: 10 training environments, 100 epochs (``epochs``: a run within a CPU budget
    sets fewer and says so). Not in the paper (stated choices): ``tau`` 0.005 (Haarnoja et al. 2018, SAC's
    default), ``buffer_size`` 200,000 transitions per agent (SAC's 10^6 holds more than a CPU budget collects and
    would take 1.5 GB for five agents), ``target_entropy_ratio`` 0.98 x log |A| and ``alpha_lr`` = the critic's
    (Christodoulou 2019, discrete SAC), MADQN's learning rate = Table I's critic rate and epsilon from 1 to 0.05
    over the first ``eps_decay_epochs`` epochs (Mnih et al. 2015 anneal 1 to 0.1 over the first 4 % of
    training; here the first 10 % of the paper's 100 epochs; the end value 0.05 is an assumption, not Mnih's), and
    ``warmup`` 1,000 (an assumption): updates start once every agent's buffer holds ``min(warmup, batch_size)``
    transitions, so with these defaults the batch size (256) decides. The paper has no warm-up (its Algorithm 1
    updates G times after every epoch's episodes, lines 8-21), and on its preset the first epoch's ten episodes
    leave ~1,900 transitions in the smallest agent's buffer (17,860 in all), past either gate: updates start after
    epoch 1 whichever acts, as in Algorithm 1 (docs/reproductions.md, MASAC)."""

    actor_lr: float = 1e-5
    critic_lr: float = 5e-4
    updates_per_epoch: int = 1000
    batch_size: int = 256
    gamma: float = 0.99
    hidden: tuple[int, ...] = (256, 256)
    max_steps: int = 12_000
    envs_per_epoch: int = 10
    epochs: int = 100
    tau: float = 0.005
    buffer_size: int = 200_000
    target_entropy_ratio: float = 0.98
    alpha_lr: float = 5e-4
    eps_start: float = 1.0
    eps_end: float = 0.05
    eps_decay_epochs: int = 10
    warmup: int = 1000
    seed: int = 0

    def __post_init__(self):
        for k in ("updates_per_epoch", "batch_size", "max_steps", "envs_per_epoch", "epochs", "buffer_size", "warmup",
                  "eps_decay_epochs"):
            v = getattr(self, k)
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"MARLConfig.{k} must be a positive int, got {v!r}")
        for k in ("actor_lr", "critic_lr", "alpha_lr", "tau"):
            v = getattr(self, k)
            if not (isinstance(v, int | float) and 0.0 < v <= 1.0):
                raise ValueError(f"MARLConfig.{k} must be in (0, 1], got {v!r}")
        if not 0.0 <= self.gamma < 1.0:
            raise ValueError(f"MARLConfig.gamma must be in [0, 1), got {self.gamma!r}")
        if not self.hidden or any(isinstance(h, bool) or not isinstance(h, int) or h < 1 for h in self.hidden):
            raise ValueError(f"MARLConfig.hidden must be positive layer widths, got {self.hidden!r}")


def mlp(n_in: int, n_out: int, hidden: tuple[int, ...]) -> nn.Sequential:
    """ReLU multilayer perceptron ``n_in -> hidden... -> n_out``."""
    layers, w = [], n_in
    for h in hidden:
        layers += [nn.Linear(w, h), nn.ReLU()]
        w = h
    layers.append(nn.Linear(w, n_out))
    return nn.Sequential(*layers)


class Replay:
    """One agent's replay buffer D_n (a ring of numpy arrays)."""

    def __init__(self, size: int, obs_dim: int):
        self.s = np.zeros((size, obs_dim), np.float32)
        self.s2 = np.zeros((size, obs_dim), np.float32)
        self.a = np.zeros(size, np.int64)
        self.r = np.zeros(size, np.float32)
        self.d = np.zeros(size, np.float32)
        self.size, self.n, self.i = size, 0, 0

    def add(self, s, a, r, s2, d):
        k = self.i
        self.s[k], self.a[k], self.r[k], self.s2[k], self.d[k] = s, a, r, s2, d
        self.i = (k + 1) % self.size
        self.n = min(self.n + 1, self.size)

    def sample(self, rng: np.random.Generator, batch: int):
        k = rng.integers(0, self.n, batch)
        return (torch.from_numpy(self.s[k]), torch.from_numpy(self.a[k]), torch.from_numpy(self.r[k]),
                torch.from_numpy(self.s2[k]), torch.from_numpy(self.d[k]))


# ---------------------------------------------------------------------------- one agent
class SACAgent:
    """Discrete SAC for one agent (module docstring's equations)."""

    def __init__(self, obs_dim: int, n_actions: int, cfg: MARLConfig):
        h = tuple(cfg.hidden)
        self.cfg = cfg
        self.nets = {"actor": mlp(obs_dim, n_actions, h), "q1": mlp(obs_dim, n_actions, h),
                     "q2": mlp(obs_dim, n_actions, h)}
        self.nets["q1_target"] = mlp(obs_dim, n_actions, h)
        self.nets["q2_target"] = mlp(obs_dim, n_actions, h)
        self.nets["q1_target"].load_state_dict(self.nets["q1"].state_dict())
        self.nets["q2_target"].load_state_dict(self.nets["q2"].state_dict())
        self.log_alpha = torch.zeros(1, requires_grad=True)
        self.target_entropy = cfg.target_entropy_ratio * math.log(n_actions)
        self.opt_actor = torch.optim.Adam(self.nets["actor"].parameters(), lr=cfg.actor_lr)
        self.opt_q = torch.optim.Adam([*self.nets["q1"].parameters(), *self.nets["q2"].parameters()], lr=cfg.critic_lr)
        self.opt_alpha = torch.optim.Adam([self.log_alpha], lr=cfg.alpha_lr)

    def probs(self, s: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        logits = self.nets["actor"](s)
        return F.softmax(logits, -1), F.log_softmax(logits, -1)

    def act(self, s: torch.Tensor, rng: np.random.Generator, explore: bool) -> np.ndarray:
        with torch.no_grad():
            p, _ = self.probs(s)
        p = p.numpy().astype(np.float64)
        if not explore:
            return p.argmax(-1)
        c = np.cumsum(p, -1)
        u = rng.random((p.shape[0], 1)) * c[:, -1:]
        return np.minimum((u > c).sum(-1), p.shape[1] - 1)

    def target(self, r, s2, d) -> torch.Tensor:
        """y of the critic update (module docstring)."""
        with torch.no_grad():
            p2, logp2 = self.probs(s2)
            q2 = torch.min(self.nets["q1_target"](s2), self.nets["q2_target"](s2))
            alpha = self.log_alpha.exp()
            v2 = (p2 * (q2 - alpha * logp2)).sum(-1)
            return r + self.cfg.gamma * (1.0 - d) * v2

    def update(self, batch) -> dict[str, float]:
        s, a, r, s2, d = batch
        y = self.target(r, s2, d)
        q1 = self.nets["q1"](s).gather(1, a[:, None]).squeeze(1)
        q2 = self.nets["q2"](s).gather(1, a[:, None]).squeeze(1)
        loss_q = F.mse_loss(q1, y) + F.mse_loss(q2, y)
        self.opt_q.zero_grad()
        loss_q.backward()
        self.opt_q.step()
        p, logp = self.probs(s)
        with torch.no_grad():
            qmin = torch.min(self.nets["q1"](s), self.nets["q2"](s))
        alpha = self.log_alpha.exp().detach()
        loss_pi = (p * (alpha * logp - qmin)).sum(-1).mean()
        self.opt_actor.zero_grad()
        loss_pi.backward()
        self.opt_actor.step()
        neg_entropy = (p.detach() * logp.detach()).sum(-1)
        loss_alpha = -(self.log_alpha * (neg_entropy + self.target_entropy)).mean()
        self.opt_alpha.zero_grad()
        loss_alpha.backward()
        self.opt_alpha.step()
        _polyak(self.nets["q1"], self.nets["q1_target"], self.cfg.tau)
        _polyak(self.nets["q2"], self.nets["q2_target"], self.cfg.tau)
        return {"loss_q": loss_q.item(), "loss_pi": loss_pi.item(), "alpha": alpha.item()}

    def tensors(self) -> dict[str, np.ndarray]:
        out = {f"{k}/{n}": v.detach().numpy() for k, net in self.nets.items() for n, v in net.state_dict().items()}
        out["log_alpha"] = self.log_alpha.detach().numpy()
        return out

    def load(self, arrays: dict[str, np.ndarray]) -> None:
        for k, net in self.nets.items():
            net.load_state_dict({n: torch.from_numpy(arrays[f"{k}/{n}"]) for n in net.state_dict()})
        with torch.no_grad():
            self.log_alpha.copy_(torch.from_numpy(arrays["log_alpha"]))


class DQNAgent:
    """DQN for one agent (module docstring)."""

    def __init__(self, obs_dim: int, n_actions: int, cfg: MARLConfig):
        h = tuple(cfg.hidden)
        self.cfg = cfg
        self.n_actions = n_actions
        self.nets = {"q": mlp(obs_dim, n_actions, h), "q_target": mlp(obs_dim, n_actions, h)}
        self.nets["q_target"].load_state_dict(self.nets["q"].state_dict())
        self.opt = torch.optim.Adam(self.nets["q"].parameters(), lr=cfg.critic_lr)
        self.eps = cfg.eps_start

    def act(self, s: torch.Tensor, rng: np.random.Generator, explore: bool) -> np.ndarray:
        with torch.no_grad():
            greedy = self.nets["q"](s).argmax(-1).numpy()
        if not explore:
            return greedy
        rand = rng.random(greedy.shape[0]) < self.eps
        return np.where(rand, rng.integers(0, self.n_actions, greedy.shape[0]), greedy)

    def target(self, r, s2, d) -> torch.Tensor:
        with torch.no_grad():
            return r + self.cfg.gamma * (1.0 - d) * self.nets["q_target"](s2).max(-1).values

    def update(self, batch) -> dict[str, float]:
        s, a, r, s2, d = batch
        y = self.target(r, s2, d)
        q = self.nets["q"](s).gather(1, a[:, None]).squeeze(1)
        loss = F.mse_loss(q, y)
        self.opt.zero_grad()
        loss.backward()
        self.opt.step()
        _polyak(self.nets["q"], self.nets["q_target"], self.cfg.tau)
        return {"loss_q": loss.item()}

    def tensors(self) -> dict[str, np.ndarray]:
        return {f"{k}/{n}": v.detach().numpy() for k, net in self.nets.items() for n, v in net.state_dict().items()}

    def load(self, arrays: dict[str, np.ndarray]) -> None:
        for k, net in self.nets.items():
            net.load_state_dict({n: torch.from_numpy(arrays[f"{k}/{n}"]) for n in net.state_dict()})


def _polyak(src: nn.Module, dst: nn.Module, tau: float) -> None:
    with torch.no_grad():
        for p, q in zip(src.parameters(), dst.parameters(), strict=True):
            q.mul_(1.0 - tau).add_(p, alpha=tau)


# ---------------------------------------------------------------------------- the team
class MARL:
    """N agents of one algorithm (``masac`` or ``madqn``) over one state space: acting, training, saving."""

    def __init__(self, algorithm: str, agents: list[str], obs_dim: int, n_actions: int, cfg: MARLConfig,
                 meta: dict | None = None):
        if algorithm not in ALGORITHMS:
            raise ValueError(f"algorithm must be one of {ALGORITHMS}, got {algorithm!r}")
        if (not isinstance(agents, list | tuple) or not agents or len(set(agents)) != len(agents)
                or any(not isinstance(a, str) or not a for a in agents)):
            raise ValueError(f"agents must be a non-empty list of distinct names, got {agents!r}")
        for k, v in (("obs_dim", obs_dim), ("n_actions", n_actions)):
            if isinstance(v, bool) or not isinstance(v, int) or v < 1:
                raise ValueError(f"{k} must be a positive int, got {v!r}")
        torch.manual_seed(cfg.seed)
        cls = SACAgent if algorithm == "masac" else DQNAgent
        self.algorithm, self.agent_names, self.cfg = algorithm, list(agents), cfg
        self.obs_dim, self.n_actions = int(obs_dim), int(n_actions)
        self.agents = [cls(obs_dim, n_actions, cfg) for _ in agents]
        self.meta = dict(meta or {})
        self.rng = np.random.default_rng(cfg.seed)

    def act(self, states: np.ndarray, acting: np.ndarray, explore: bool = False) -> np.ndarray:
        """Actions (n_envs, n_agents) for states (n_envs, obs_dim) and acting masks (n_envs, n_agents)."""
        out = np.zeros(acting.shape, np.int64)
        s = torch.from_numpy(np.ascontiguousarray(states, dtype=np.float32))
        for n, ag in enumerate(self.agents):
            rows = np.flatnonzero(acting[:, n])
            if rows.size:
                out[rows, n] = ag.act(s[rows], self.rng, explore)
        return out


def _run_episodes(team: MARL, envs: list, seeds: list[int], buffers: list[Replay] | None, explore: bool,
                  max_steps: int | None) -> list[float]:
    """Run one episode in each env in lockstep (actions batched across envs per agent); store each acting
    agent's transitions when ``buffers``; returns each episode's summed reward (USD)."""
    states, acting, live, ret, steps = [], [], [], [], []
    for env, seed in zip(envs, seeds, strict=True):
        s, m = env.reset(seed=seed)
        states.append(s), acting.append(m), live.append(not env.done), ret.append(0.0), steps.append(0)
    while any(live):
        idx = [i for i, v in enumerate(live) if v]
        acts = team.act(np.stack([states[i] for i in idx]), np.stack([acting[i] for i in idx]), explore)
        for row, i in enumerate(idx):
            s2, m2, r, done, _ = envs[i].step(acts[row])
            steps[i] += 1
            ret[i] += r
            if buffers is not None:
                for n in np.flatnonzero(acting[i]):
                    buffers[n].add(states[i], acts[row, n], r, s2, float(done))
            states[i], acting[i] = s2, m2
            if done or (max_steps is not None and steps[i] >= max_steps):
                live[i] = False
    return ret


#: the fields of an epoch's row that measure the machine (wall seconds, the load they ran under), not the training:
#: everything else repeats exactly under a seed
MEASURED = ("seconds", "load_avg_1min")

def train(algorithm: str, make_env, train_windows: list[dict], cfg: MARLConfig, validate_window: dict | None = None,
          log=print, meta: dict | None = None, budget_s: float | None = None,
          on_epoch=None, budget_cpu_s: float | None = None) -> tuple[MARL, list[dict]]:
    """Train a team (Algorithm 1): each epoch runs one episode (capped at K_max decision steps) in each of
    ``cfg.envs_per_epoch`` environments (``make_env(window)`` for the next of ``train_windows``, round robin, each
    episode a fresh origin seed), then ``cfg.updates_per_epoch`` updates per agent on batches from its buffer;
    after each epoch a greedy episode in ``validate_window`` (when given). ``budget_s``: no epoch starts once
    this many seconds of wall time have passed (the epochs run are in the rows); ``budget_cpu_s``: the same in
    seconds of this process's CPU time (a budget the machine's other load does not move); ``on_epoch(team, rows)``
    after each epoch (a checkpoint). Returns the team and one row per epoch (training return per episode, its decision
    steps, validation return, seconds)."""
    torch.set_num_threads(1)
    torch.manual_seed(cfg.seed)
    envs = [make_env(train_windows[i % len(train_windows)]) for i in range(cfg.envs_per_epoch)]
    val_env = make_env(validate_window) if validate_window is not None else None
    e0 = envs[0]
    team = MARL(algorithm, e0.agents, e0.obs_dim, e0.n_actions, cfg,
                meta={**(meta or {}), "feature_names": e0.feature_names, "train_windows": train_windows,
                      "validate_window": validate_window})
    buffers = [Replay(cfg.buffer_size, e0.obs_dim) for _ in e0.agents]
    brng = np.random.default_rng(cfg.seed + 1)
    rows: list[dict] = []
    start, cpu0 = time.perf_counter(), time.process_time()
    for epoch in range(cfg.epochs):
        if budget_s is not None and time.perf_counter() - start >= budget_s:
            log(f"{algorithm}: budget of {budget_s:.0f} s spent after {epoch} epochs")
            break
        if budget_cpu_s is not None and time.process_time() - cpu0 >= budget_cpu_s:
            log(f"{algorithm}: CPU budget of {budget_cpu_s:.0f} s spent after {epoch} epochs")
            break
        t0 = time.perf_counter()
        if algorithm == "madqn":
            f = min(epoch / cfg.eps_decay_epochs, 1.0)
            for ag in team.agents:
                ag.eps = cfg.eps_start + f * (cfg.eps_end - cfg.eps_start)
        seeds = [cfg.seed * 100_003 + epoch * cfg.envs_per_epoch + i for i in range(cfg.envs_per_epoch)]
        ret = _run_episodes(team, envs, seeds, buffers, explore=True, max_steps=cfg.max_steps)
        stats: dict[str, float] = {}
        if min(b.n for b in buffers) >= min(cfg.warmup, cfg.batch_size):
            for _ in range(cfg.updates_per_epoch):
                for ag, b in zip(team.agents, buffers, strict=True):
                    stats = ag.update(b.sample(brng, cfg.batch_size))
        val = _run_episodes(team, [val_env], [cfg.seed], None, False, None)[0] if val_env is not None else None
        row = {"epoch": epoch + 1, "train_return_usd": float(np.mean(ret)), "validation_return_usd": val,
               "buffer": int(sum(b.n for b in buffers)), "seconds": time.perf_counter() - t0,
               "load_avg_1min": os.getloadavg()[0], **stats}
        rows.append(row)
        team.meta["epochs"] = rows
        if on_epoch is not None:
            on_epoch(team, rows)
        log(f"{algorithm} epoch {epoch + 1}/{cfg.epochs}: train {row['train_return_usd']:,.1f} USD/episode, "
            f"validation {val if val is None else f'{val:,.1f}'} USD, {row['seconds']:.0f} s")
    return team, rows


def evaluate(team: MARL, env, windows: list[dict], seeds: list[int]) -> list:
    """Greedy episodes, one per (window, seed), run to their end (no step limit, as the paper tests); their
    :class:`sim_core.RunResult`."""
    out = []
    for w, seed in zip(windows, seeds, strict=True):
        env.reset(seed=seed, options=w)
        _drive(team, env)
        out.append(env.result())
    return out


def _drive(team: MARL, env) -> None:
    s, m = env.state(), env.acting()
    while not env.done:
        a = team.act(s[None], m[None], explore=False)[0]
        s, m, *_ = env.step(a)


# ---------------------------------------------------------------------------- save / load (no pickle)
def save_agents(team: MARL, path: str | Path) -> tuple[Path, Path]:
    """``<path>.npz`` (every network's tensors, ``agent<i>/<net>/<param>``) and ``<path>.json`` (algorithm,
    agents, sizes, config, metadata), each written atomically."""
    path = Path(path)
    arrays = {f"agent{i}/{k}": v for i, ag in enumerate(team.agents) for k, v in ag.tensors().items()}
    meta = {"format": FORMAT, "algorithm": team.algorithm, "agents": team.agent_names, "obs_dim": team.obs_dim,
            "n_actions": team.n_actions, "config": dataclasses.asdict(team.cfg), "meta": team.meta}
    npz, js = path.with_suffix(".npz"), path.with_suffix(".json")
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    atomic_write_bytes(npz, buf.getvalue())
    atomic_write_bytes(js, json.dumps(meta, indent=1, default=str).encode())
    return npz, js


def load_agents(path: str | Path) -> MARL:
    """The team saved at ``path`` (:func:`save_agents`; ``.npz``/``.json`` or neither), ready to act."""
    path = Path(path)
    base = path.with_suffix("") if path.suffix in (".npz", ".json") else path
    js, npz = base.with_suffix(".json"), base.with_suffix(".npz")
    try:
        meta = json.loads(js.read_text())
    except (OSError, ValueError) as e:
        raise ValueError(f"{js}: not a gridshift MARL file ({type(e).__name__}: {e})") from None
    fmt = meta.get("format") if isinstance(meta, dict) else None
    if fmt != FORMAT:
        raise ValueError(f"{js}: not a gridshift MARL file (format {fmt!r}, expected {FORMAT!r})")
    try:
        c = meta["config"]
        cfg = MARLConfig(**{**c, "hidden": tuple(c["hidden"])})
        team = MARL(meta["algorithm"], meta["agents"], meta["obs_dim"], meta["n_actions"], cfg, meta.get("meta"))
    except (KeyError, TypeError, ValueError) as e:
        raise ValueError(f"{js}: bad MARL metadata ({type(e).__name__}: {e})") from None
    try:
        with np.load(npz, allow_pickle=False) as z:
            arrays = {k: z[k] for k in z.files}
    except (OSError, EOFError, ValueError, zipfile.BadZipFile) as e:  # missing, truncated, or an object array (pickle)
        raise ValueError(f"{npz}: not a gridshift MARL weights file ({type(e).__name__}: {e})") from None
    extra = sorted({k.split("/", 1)[0] for k in arrays} - {f"agent{i}" for i in range(len(team.agents))})
    if extra:
        raise ValueError(f"{npz}: tensors of {extra}, beyond the {len(team.agents)} agents of {js.name}")
    for i, ag in enumerate(team.agents):
        pre = f"agent{i}/"
        mine = {k[len(pre):]: v for k, v in arrays.items() if k.startswith(pre)}
        if not mine:
            raise ValueError(f"{npz}: no tensors for agent {i} ({meta['agents'][i]})")
        try:
            ag.load(mine)
        except (KeyError, RuntimeError, TypeError) as e:  # a tensor missing or of another shape than the json's
            raise ValueError(f"{npz}: agent {i} ({meta['agents'][i]}) does not match {js.name} "
                             f"({type(e).__name__}: {e})") from None
    return team


__all__ = ["MARLConfig", "MARL", "SACAgent", "DQNAgent", "Replay", "train", "evaluate", "save_agents",
           "load_agents", "ALGORITHMS"]
