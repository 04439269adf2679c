"""The MASAC paper's decision steps over the engine: one agent per site decides its queued jobs one at a time.

Zhang, Xu, Lim & Niyato 2023 (IEEE GLOBECOM, arXiv:2304.07948), §II "Scheduling" and §III: at decision step k
every site n with a queued job j_n^k acts on it (theta_n^k = 0: postpone one slot; n: start here; d: migrate to
d); a slot holds as many decision steps as its longest queue; every agent observes the same state
S^k = {<J_n, R_n, Q_n, V_n>} and receives the same reward, the system utility's increment (Algorithm 1, line 13).

Here (gridshift's engine, 15-minute slots where the paper has 1-minute ones): at each slot the pending jobs of
each origin are that site's queue, in arrival order; round r of the slot is decision step k, in which every site
with an r-th job decides it. When no site has a job left, the engine runs the slot with the decided actions
(multi-action mode of :class:`~sim_core.rl.env.TaskSchedulingEnv`; a postponed job is pending again next slot).

State (float32, ``feature_names``): the time features, then per site ``job_gpus`` (its current job's GPUs /
the window's largest request; 0 when it has none), ``job_duration`` (/ the window's longest), ``job_slack``
(the environment's slack fraction: 1 just arrived, 0 must start now, < 0 late), ``avail_gpus`` ((installed -
committed - sent there earlier this slot) / installed, in [-1, 1]: R_n), ``queued_gpus`` (GPUs of its jobs not
yet decided this slot / installed, in [0, 4]: Q_n), ``price`` and ``carbon`` (V_n, the environment's scales).

Reward (USD, the same for every agent): the system utility accrued between this decision step and the next,
:func:`sim_core.rl.reward.masac_terms` of every slot run in between (Eqs. 2-7), less the revenue of the jobs that
started past their allowed delay (they are not in the paper's J+, Eq. 7b; gridshift runs them, equal work):
their whole GPU-hours x alpha, at their start. Decisions inside a slot get 0 and the slot's last decision its
utility (the paper's U4 is due at the decision; here at the slot's end, when the engine has run it). Summed over
an episode the rewards are the run's utility (tested).
"""

from __future__ import annotations

import numpy as np

from .. import engine as E
from .env import TIME_FEATURES, TaskSchedulingEnv
from .multiagent import slack_fraction
from .reward import MASAC_DEFAULTS, check_masac_params, masac_terms

GPU = 1  # resource column of GPUs in the engine's (cores, GPUs, memory) arrays
PER_SITE = ("job_gpus", "job_duration", "job_slack", "avail_gpus", "queued_gpus", "price", "carbon")
#: queued GPUs / installed is clipped to this: an assumption (the paper does not scale Q_n), a queue of four
#: sites' worth already says "overloaded"
QUEUED_CLIP = 4.0


class JobDecisionEnv:
    """The paper's decision steps (module docstring). ``bundle``: a bundle path or :class:`sim_core.Scenario`;
    ``masac_params``: overrides of :data:`~sim_core.rl.reward.MASAC_DEFAULTS` (``pue`` may be one per site);
    the window (``start``/``days``/``steps``), ``seed`` and run options as for :class:`TaskSchedulingEnv`.

    ``reset(seed, options)`` and ``step(actions)`` return ``(state, acting, ...)``: ``acting`` is the (n,) mask
    of the agents that decide a job at this step; ``actions`` is one int per agent (those not acting are
    ignored). ``step`` returns ``(state, acting, reward, done, info)``."""

    def __init__(self, bundle, masac_params: dict | None = None, **env_options):
        for k in ("single_action", "allow_defer", "reward", "max_tasks"):
            if k in env_options:
                raise TypeError(f"JobDecisionEnv sets {k} itself (multi-action, deferral allowed, the MASAC utility)")
        self.env = TaskSchedulingEnv(bundle, single_action=False, allow_defer=True, **env_options)
        self.masac = {**MASAC_DEFAULTS, **check_masac_params(masac_params or {})}
        pue = self.masac["pue"]
        self.agents = list(self.env.locations)
        n = len(self.agents)
        if isinstance(pue, tuple) and len(pue) != n:
            raise ValueError(f"masac_params pue: {len(pue)} values for {n} sites {self.agents}")
        self.n_agents = n
        self.n_actions = n + 1
        self.feature_names = list(TIME_FEATURES) + [f"{f}_{a}" for a in self.agents for f in PER_SITE]
        self.obs_dim = len(self.feature_names)
        names = self.env.feature_names
        self._i_avail = np.array([names.index(f"avail_gpus_{a}") for a in self.agents])
        self._i_price = np.array([names.index(f"price_{a}") for a in self.agents])
        self._i_carbon = np.array([names.index(f"carbon_{a}") for a in self.agents])
        self._done = True

    # -------------------------------------------------------------- episode
    def reset(self, seed: int | None = None, options: dict | None = None):
        """Start an episode (``options``: ``start``/``days``/``steps``); the state and the acting mask."""
        self.env.reset(seed=seed, options=options)
        self._started = np.zeros(self.env.sim.prep.tasks.arrival.shape[0], bool)
        self._done = False
        self.decisions = 0
        self._pending_reward = self._open_slot()
        return self.state(), self.acting()

    @property
    def done(self) -> bool:
        return self._done

    def _open_slot(self) -> float:
        """Run the slots with nothing pending (their utility accrues) up to one with pending jobs or the end;
        set up that slot's queues. Returns the utility accrued."""
        sim = self.env.sim
        acc = 0.0
        while not sim.done and self.env.n_pending == 0:
            acc += self._run_slot(np.zeros(0, np.int64))
        if sim.done:
            self._done = True
            self._queues = [np.zeros(0, np.int64)] * self.n_agents
            self._round = 0
            return acc
        p = sim.prep
        S, T, C = p.state, p.tasks, p.ctx
        pn = self.env.n_pending
        idx = S.pend[:pn].copy()
        org = T.origin[idx].astype(np.int64)
        self._idx = idx
        self._queues = [np.flatnonzero(org == d) for d in range(self.n_agents)]
        self._acts = np.zeros(pn, np.int64)
        self._round = 0
        summary = self.env.summary_observation()
        self._time = summary[:len(TIME_FEATURES)]
        self._price = summary[self._i_price]
        self._carbon = summary[self._i_carbon]
        cap = C.cap[:, GPU].astype(np.float64)
        self._cap = np.where(cap > 0.0, cap, 1.0)
        self._free = cap - S.commit[:, GPU]
        g = T.gpus[idx].astype(np.float64)
        self._gpus = g
        self._queued = np.bincount(org, weights=g, minlength=self.n_agents)
        j = min(int(S.sc[E.SC_STEP]), p.n - 1)
        t = C.t0 + E.STEP_S * j
        self._slack = slack_fraction(t, T.arrival[idx], T.duration[idx], T.deadline[idx])
        scale = self.env._t_scale
        self._g_norm = g / scale[1]
        self._d_norm = T.duration[idx] / scale[4]
        return acc

    def acting(self) -> np.ndarray:
        """(n,) bool: the agents that have a job to decide at this step."""
        return np.array([self._round < q.size for q in self._queues], dtype=bool)

    def state(self) -> np.ndarray:
        """The state S^k every agent observes (module docstring), float32."""
        out = np.zeros((self.n_agents, len(PER_SITE)))
        if not self._done:
            for d, q in enumerate(self._queues):
                if self._round < q.size:
                    i = q[self._round]
                    out[d, :3] = self._g_norm[i], self._d_norm[i], self._slack[i]
            out[:, 3] = np.clip(self._free / self._cap, -1.0, 1.0)
            out[:, 4] = np.clip(self._queued / self._cap, 0.0, QUEUED_CLIP)
            out[:, 5] = self._price
            out[:, 6] = self._carbon
            head = self._time
        else:
            head = np.zeros(len(TIME_FEATURES))
        return np.concatenate([head, out.ravel()]).astype(np.float32)

    def step(self, actions):
        """Apply the acting agents' actions (0 postpone, j run at site j - 1); when the slot's queues are all
        decided, run the slot. Returns ``(state, acting, reward, done, info)``."""
        if self._done:
            raise RuntimeError("episode is over: call reset()")
        a = np.asarray(actions)
        if a.shape != (self.n_agents,) or a.dtype.kind not in "iu":
            raise ValueError(f"step takes {self.n_agents} integer actions (one per agent, {self.agents}), got "
                             f"{a!r}")
        acting = self.acting()
        bad = acting & ((a < 0) | (a >= self.n_actions))
        if bad.any():
            d = int(np.flatnonzero(bad)[0])
            raise ValueError(f"agent {self.agents[d]}: action {int(a[d])} out of range 0..{self.n_actions - 1} "
                             "(0 = postpone, j = run at site j - 1)")
        for d in np.flatnonzero(acting):
            i = self._queues[d][self._round]
            self._acts[i] = int(a[d])
            self._queued[d] -= self._gpus[i]
            if a[d] > 0:
                self._free[int(a[d]) - 1] -= self._gpus[i]
        self._round += 1
        self.decisions += 1
        reward, self._pending_reward = self._pending_reward, 0.0
        if not self.acting().any():
            reward += self._run_slot(self._acts)
            reward += self._open_slot()
        return self.state(), self.acting(), reward, self._done, {}

    def _run_slot(self, acts: np.ndarray) -> float:
        """Run one engine slot; its system utility less the revenue of the jobs that started late in it."""
        sim = self.env.sim
        o = sim.step_fast(self.env._engine_actions(acts))
        u = masac_terms(o, **self.masac)["utility"]
        p = sim.prep
        S, T = p.state, p.tasks
        started = ~np.isnan(S.start)
        new = np.flatnonzero(started & ~self._started)
        self._started = started
        if new.size:
            late = new[S.start[new] - T.arrival[new] > T.max_delay[new] + 1e-6]
            u -= self.masac["revenue_usd_per_gpu_h"] * float((T.gpus[late] * T.duration[late]).sum()) / 3600.0
        return u

    def result(self):
        """The run's results so far (:class:`sim_core.RunResult`)."""
        return self.env.result()


__all__ = ["JobDecisionEnv", "PER_SITE"]
