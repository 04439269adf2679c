"""A PettingZoo ``ParallelEnv``: one agent per site, deciding for the tasks that originate there.

The setting of MASAC (Zhang, Xu, Lim & Niyato, "Sustainable AIGC Workload Scheduling of Geo-Distributed
Data Centers: A Multi-Agent Reinforcement Learning Approach", IEEE GLOBECOM 2023, arXiv:2304.07948): each
region's agent schedules the jobs submitted in its region, and is rewarded with a utility of GPU revenue
less energy, idle-GPU, carbon and migration costs (needs the optional ``rl`` extra for ``pettingzoo``)::

    from sim_core.rl.multiagent import SiteSchedulingParallelEnv
    env = SiteSchedulingParallelEnv("bundles/<id>", days=7)
    obs, infos = env.reset(seed=0)
    obs, rewards, terms, truncs, infos = env.step({a: env.action_space(a).sample() for a in env.agents})

Agents: the bundle's locations (``env.possible_agents``, manifest order). Each step, agent ``d`` answers
one action for all pending tasks whose origin is ``d`` (``Discrete(n_dc + 1)``: 0 = defer, ``j`` = run at
datacenter ``j - 1``; ``Discrete(n_dc)`` without deferral); the engine runs in multi-action mode with
each pending task given its origin agent's action, so this is :class:`~sim_core.rl.env.TaskSchedulingEnv`
with the decisions split by origin.

Observation of agent ``d`` (float32, ``env.feature_names``): the single-action observation of
:class:`TaskSchedulingEnv` (time, pending load, per-datacenter availability, signals and forecasts: the
same function, so what is added there appears here), then the agent's own block: ``own_share`` (its share
of the pending tasks), ``own_{cores,gpus,mem}`` (its pending demand / total capacity, clipped to 1) and
``own_min_slack`` (1 when it has no pending task).

Reward of agent ``d`` (USD / ``norm``): the MASAC utility (the paper's Eqs. 2-7,
:func:`~sim_core.rl.reward.masac_terms`) of its site,

    u_d = U1_d - U2_d - U3_d - U4_d - U5_d
    U1_d = (alpha - eta_d rho P_d) x busy GPU-h at d          U2_d = eta_d beta rho P_d x idle GPU-h at d
    U3_d = mu eta_d rho ((1 - beta) busy + beta installed) GPU-h at d x I_d
    U4_d = egress USD (or GB x migration_usd_per_gb) + mu x emissions of the transfers d sent
    U5_d = transfers d sent x result_gb x (the step's USD + mu x kg per GB of transfer)

with the parameters of :data:`sim_core.rl.reward.MASAC_DEFAULTS` (the paper's Table I; overridable:
``masac_params``). The paper gives every agent the same reward, the system utility's increment
(``shared=True``); the split between agents is this project's choice, stated here: the work a site runs counts
at that site (U1-U3), a transfer counts at the site that sent it (U4, U5). The agents' utilities add up to the
system utility (tested). ``infos[agent]["utility_terms"]`` holds the agent's terms in USD.
"""

from __future__ import annotations

import warnings

import numpy as np
from gymnasium import spaces
from pettingzoo import ParallelEnv

from .. import engine as E
from .. import transfer as X
from .env import TaskSchedulingEnv
from .reward import MASAC_DEFAULTS, REGISTRY, TERM_RANGES, check_masac_params, masac_site_terms, masac_transfer_terms

OWN_FEATURES = ("own_share", "own_cores", "own_gpus", "own_mem", "own_min_slack")


def slack_fraction(t: float, arrival, duration, deadline) -> np.ndarray:
    """The observations' slack of tasks at time ``t`` (vectorised ``env._slack``): (deadline - t - duration) /
    (deadline - arrival - duration) in [-1, 1]; 1 / -1 (on time / late) for a task with no allowed delay."""
    span = deadline - arrival - duration
    s = deadline - t - duration
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(span <= 0.0, np.where(s >= 0.0, 1.0, -1.0), np.clip(s / span, -1.0, 1.0))


class SiteSchedulingParallelEnv(ParallelEnv):
    """One agent per site (module docstring). Arguments as for :class:`TaskSchedulingEnv` (the window,
    ``seed``, ``allow_defer``, run options), plus ``masac_params`` (overrides of ``MASAC_DEFAULTS``),
    ``norm`` (USD per reward unit; default the ``masac_utility`` component's) and ``shared``."""

    metadata = {"name": "gridshift_site_scheduling_v0", "render_modes": ["ansi"], "is_parallelizable": True}

    def __init__(self, bundle, masac_params: dict | None = None, norm: float | None = None,
                 shared: bool = False, **env_options):
        env_options.pop("single_action", None)
        if "max_tasks" in env_options:
            raise TypeError("the multi-agent environment answers one action per agent: max_tasks (the padded "
                            "multi-action mode of TaskSchedulingEnv) does not apply")
        if "reward" in env_options:
            raise TypeError("the multi-agent environment's reward is the MASAC utility per agent (masac_params, "
                            "norm, shared)")
        self.env = TaskSchedulingEnv(bundle, single_action=False, **env_options)
        self.render_mode = self.env.render_mode
        self.masac = {**MASAC_DEFAULTS, **check_masac_params(masac_params or {})}
        self.norm = REGISTRY["masac_utility"].norm if norm is None else norm
        nb = TERM_RANGES["norm"]
        if isinstance(self.norm, bool) or not isinstance(self.norm, int | float) or not nb.admits(float(self.norm)):
            raise ValueError(f"norm must be a positive number in {nb.describe()} ({nb.reason}), got {norm!r}")
        self.norm = float(self.norm)
        self.shared = bool(shared)
        self.possible_agents = list(self.env.locations)
        self.agents: list[str] = []
        self._index = {a: d for d, a in enumerate(self.possible_agents)}
        self.n_actions = self.env.n_actions
        self.feature_names = list(self.env.feature_names) + list(OWN_FEATURES)
        lo, hi = self.env._bounds(self.env.feature_names)
        self._obs_space = spaces.Box(np.concatenate([lo, [0, 0, 0, 0, -1]]).astype(np.float32),
                                     np.concatenate([hi, [1, 1, 1, 1, 1]]).astype(np.float32), dtype=np.float32)
        self._act_space = spaces.Discrete(self.n_actions)

    # -------------------------------------------------------------- spaces
    def observation_space(self, agent):
        return self._obs_space  # (the same space object for every agent, every call)

    def action_space(self, agent):
        return self._act_space

    # -------------------------------------------------------------- observations
    def _own_blocks(self) -> np.ndarray:
        """(n_agents, 5): each agent's pending share, demand and least slack."""
        p = self.env.sim.prep
        S, T = p.state, p.tasks
        n = len(self.possible_agents)
        pn = int(S.sc[E.SC_PEND_N])
        out = np.zeros((n, len(OWN_FEATURES)))
        out[:, 4] = 1.0
        if pn == 0:
            return out
        idx = S.pend[:pn]
        org = T.origin[idx]
        cnt = np.bincount(org, minlength=n)
        out[:, 0] = cnt / pn
        cap = self.env._cap_tot
        for r, a in enumerate((T.cores, T.gpus, T.mem)):
            dem = np.bincount(org, weights=a[idx], minlength=n)
            out[:, 1 + r] = np.clip(dem / cap[r], 0.0, 1.0) if cap[r] > 0 else 0.0
        j = min(int(S.sc[E.SC_STEP]), p.n - 1)
        t = p.ctx.t0 + E.STEP_S * j
        slack = slack_fraction(t, T.arrival[idx], T.duration[idx], T.deadline[idx])
        mins = np.ones(n)
        np.minimum.at(mins, org, slack)
        out[:, 4] = mins
        return out

    def _observations(self) -> dict:
        common = self.env.summary_observation()
        own = self._own_blocks().astype(np.float32)
        return {a: np.concatenate([common, own[d]]) for a, d in self._index.items()}

    # -------------------------------------------------------------- API
    def reset(self, seed: int | None = None, options: dict | None = None):
        """Start an episode (``seed`` as for :class:`TaskSchedulingEnv`). ``options``: its window keys
        (``start``/``days``/``steps``) change the window; any other key is ignored with a warning naming it
        (PettingZoo's API test passes an options dict of its own, so it cannot be refused; nor is it silent)."""
        if options is not None and not isinstance(options, dict):
            raise TypeError(f"options must be a dict or None, got {type(options).__name__}")
        ignored = sorted(str(k) for k in (options or {}) if k not in ("start", "days", "steps"))
        if ignored:
            warnings.warn(f"reset options {ignored} are not options of this environment and are ignored "
                          "(it takes start, days, steps)", UserWarning, stacklevel=2)
        window = {k: v for k, v in (options or {}).items() if k in ("start", "days", "steps")}
        self.env.reset(seed=seed, options=window or None)
        self.agents = list(self.possible_agents)
        obs = self._observations()
        return obs, {a: {} for a in self.agents}

    def step(self, actions: dict):
        if not self.agents:
            raise RuntimeError("episode is over: call reset()")
        missing = set(self.agents) - set(actions)
        if missing:
            raise ValueError(f"no action for agents {sorted(missing)}")
        unknown = set(actions) - set(self.agents)
        if unknown:
            raise ValueError(f"actions for unknown agents {sorted(unknown)}; agents: {self.agents}")
        per_agent = np.zeros(len(self.possible_agents), np.int64)
        for a, v in actions.items():
            v = np.asarray(v)  # (Discrete's own contains() takes shape () only)
            if v.shape != () or v.dtype.kind not in "iu" or not 0 <= int(v) < self.n_actions:
                raise ValueError(f"agent {a}: action must be one integer in 0..{self.n_actions - 1} (shape ()), got "
                                 f"{v!r} of shape {v.shape}")
            per_agent[self._index[a]] = int(v)
        sim = self.env.sim
        p = sim.prep
        S, T = p.state, p.tasks
        pn = int(S.sc[E.SC_PEND_N])
        task_actions = per_agent[T.origin[S.pend[:pn]]]
        # the candidates of this step's transfers (as transfer.step_transfers_sla sees them)
        cand = np.concatenate([sim._cand[:int(sim._wm[X.WM_N_CAND])],
                               np.arange(int(sim._wm[X.WM_NEXT_ARRIVAL]), int(S.sc[E.SC_NEXT_ARRIVAL]))])
        j = sim.step_index
        o = sim.step_fast(self.env._engine_actions(task_actions))
        terms = self._utility_terms(o, cand.astype(np.int64), j)
        util = terms["utility"]
        if self.shared:
            rewards = {a: float(util.sum() / self.norm) for a in self.agents}
        else:
            rewards = {a: float(util[d] / self.norm) for a, d in self._index.items()}
        done = sim.done
        obs = self._observations()
        terminations = {a: done for a in self.agents}
        truncations = {a: False for a in self.agents}
        infos = {a: {"step": o.step, "utility_terms": {k: float(v[d]) for k, v in terms.items()}}
                 for a, d in self._index.items()}
        if done:
            self.agents = []
        return obs, rewards, terminations, truncations, infos

    def _utility_terms(self, o, cand: np.ndarray, j: int) -> dict:
        """Per agent (n,) arrays of the MASAC terms of the step just run (module docstring)."""
        sim = self.env.sim
        p = sim.prep
        S, T = p.state, p.tasks
        n = len(self.possible_agents)
        usd, carbon, kwh_per_gb, mean = sim._xfer_net[:4]
        # transfers decided in step j, by origin (transfer.transfer_one's arithmetic)
        dest = S.dest[cand]
        dec = S.decision[cand]
        with np.errstate(invalid="ignore"):
            mine = (dest >= 0) & ~np.isnan(dec) & ((dec - p.ctx.t0) // E.STEP_S == j)
        idx = cand[mine]
        org, dst = T.origin[idx], S.dest[idx]
        remote = dst != org
        idx, org, dst = idx[remote], org[remote], dst[remote]
        k = min(max(j + p.s0, 0), carbon.shape[1] - 1)
        gb = S.gb[idx]  # GB moved (data locality: less a dataset the destination held)
        cost = gb * usd[org, dst]
        ekwh = gb * kwh_per_gb
        ci = 0.5 * (carbon[org, k] + carbon[dst, k]) if mean else carbon[org, k]
        x_kg = np.bincount(org, weights=ekwh * ci / 1000.0, minlength=n)
        x_usd = np.bincount(org, weights=cost, minlength=n)
        x_gb = np.bincount(org, weights=gb, minlength=n)
        n_x = np.bincount(org, minlength=n).astype(np.float64)
        m = self.masac
        out = masac_site_terms(o.per_dc("busy_gpus"), o.per_dc("idle_gpus"), o.per_dc("it_kwh"),
                               o.per_dc("total_kwh"), o.per_dc("cost_usd"), o.per_dc("carbon_kg"),
                               m["revenue_usd_per_gpu_h"], m["carbon_usd_per_t"], m["idle_power_ratio"], m["gpu_kw"],
                               m["pue"])
        # U5 at the step's mean rates over all its transfers (as the system utility charges it), split by sender
        rate = masac_transfer_terms(x_usd.sum(), x_kg.sum(), x_gb.sum(), 1.0, m["carbon_usd_per_t"], m["result_gb"],
                                    m["migration_usd_per_gb"], m["include_transfer_carbon"])["retrieval_cost"]
        out["migration_cost"] = masac_transfer_terms(x_usd, x_kg, x_gb, n_x, m["carbon_usd_per_t"], m["result_gb"],
                                                     m["migration_usd_per_gb"],
                                                     m["include_transfer_carbon"])["migration_cost"]
        out["retrieval_cost"] = n_x * rate
        out["gpu_profit"] = out["revenue"] - out["energy_cost"]
        out["utility"] = (out["gpu_profit"] - out["idle_cost"] - out["carbon_cost"] - out["migration_cost"]
                          - out["retrieval_cost"])
        return out

    def render(self) -> str | None:
        """``render_mode="ansi"``: the underlying environment's text summary of the step."""
        return self.env.render()

    def close(self):
        pass

    def result(self):
        """The full results of the episode so far (:class:`sim_core.RunResult`)."""
        return self.env.result()


__all__ = ["SiteSchedulingParallelEnv", "OWN_FEATURES", "slack_fraction"]
