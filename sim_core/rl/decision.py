"""One decision per task: ``TaskDecisionEnv``, the environment the training recipes learn on (docs/rl.md,
"Learning").

Each ``step`` decides ONE pending task (the oldest not yet decided in the current 15-minute step): ``0`` =
defer it to the next step, ``j`` = run it at datacenter ``j - 1``. When every pending task of the step has its
answer, the simulation step runs (:meth:`sim_core.Simulator.step_fast`, the engine's multi-action mode) and
the next step's first pending task is shown; steps with nothing pending run on their own. An episode is the
window and its drain (every task done: equal work), as in :class:`sim_core.gym.TaskSchedulingEnv`.

Why this and not the step-level environments (what stopped learning there, docs/rl.md):

* **one answer per task**, not one for a whole step: the rules decide per task, reserving what they hand
  out; a single action sends a step's whole batch to one site, which overloads it;
* **action masks** (:meth:`action_masks`, MaskablePPO's convention): a site is valid when the task fits in
  what is left of it after this step's earlier answers (capacity minus committed minus reserved) and can
  still meet its deadline after the transfer. When it fits nowhere, it queues wherever it goes: every site
  where it can still meet its deadline after the transfer is valid (the rules then pick the least
  over-committed site; an origin-only mask there cost ``lowest_carbon`` 0.11 point of its saving on the
  held-out year and 0.04 on the training one, docs/rl.md "Warm start"). Deferral is valid only while the task
  can still start at its origin after one more step and meet its deadline. Never empty: with nothing valid,
  the origin is. An
  invalid action (from an agent without masks: PPO, DQN) is *repaired* to the origin (or the first valid
  choice), the same rule every agent without masks gets; the reward is that of what was done;
* **a dense reward whose sum is the ranked metric**: a decision to run task i at site d starting at ``ts``
  earns ``(B_i - C_i(d, ts)) / norm``: ``C`` = the task's IT energy x the site's actual carbon intensity
  over its run + the emissions of the GB it moves (data locality as the engine applies it), ``B_i`` = the
  same for the task run at its origin from its arrival (a constant per task, whatever the policy). A
  deferral earns 0 now. Summed over an episode: carbon saved vs running every task at home on arrival, at
  equal work; each SLA violation costs ``late_penalty_kg`` (the ratio of the default reward's weights, 1
  violation = 100 kg CO2eq, :data:`sim_core.rl.reward.DEFAULT_REWARD`);
* **observations on fixed scales and relative to the task**: the per-site ``gain`` feature, the decision's
  saving at the current intensities (transfer included) per kWh of the task, over 100 g/kWh
  (:data:`GAIN_SCALE`): on the carbon features' 1,000 g/kWh scale the differences between sites are O(0.1)
  and an MLP at its default initialisation learned from them ~5x slower (docs/rl.md, "Learning");
* **no deferral by default** (``allow_defer=False``): under a discount a cost paid k decisions later weighs
  gamma^k of a cost paid now, so a deferral looks cheaper than it is and the agents learned to defer (and
  to miss deadlines). ``allow_defer=True`` offers it, masked as above.
"""

from __future__ import annotations

import math

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from .. import engine as E
from ..physics import P_CORES_PER_SERVER, P_CPU_MAX, P_GPU_MAX
from ..simulator import Simulator, as_scenario
from .env import CARBON_SCALE, N_PER_DC, PRICE_SCALE, TIME_FEATURES, _dc_block, _time_block, feature_layout

#: The cost of one SLA violation in kg CO2eq: the default reward's own ratio (``sla_penalty`` weight 1 per
#: violation against ``carbon_emissions`` weight 1 per 100 kg, :data:`sim_core.rl.reward.DEFAULT_REWARD`).
LATE_PENALTY_KG = 100.0
#: One unit of reward, kg CO2eq: the main job's mean carbon per task under ``local_only`` (97,909 kg for the
#: 1.26 M tasks of a year, docs/results.md), so that one decision's reward is of order 0.01-1.
REWARD_NORM_KG = 0.08
#: ``gain`` features: the saving per kWh of the task over this scale, clipped to +-GAIN_CLIP. 100 g/kWh is the
#: order of the hourly spread between sites' intensities (the main job's sites: 2023 means from ~200 g/kWh,
#: US-CAL-CISO, to ~500 g/kWh, SG), so gains are O(1); on the carbon observations' own 1,000 g/kWh scale they
#: were O(0.1), features an MLP at its default initialisation barely reads.
GAIN_SCALE = 100.0
GAIN_CLIP = 10.0


def decision_feature_names(locations) -> list[str]:
    """The observation layout of :class:`TaskDecisionEnv` for sites ``locations``."""
    loc = list(locations)
    _, task = feature_layout(loc)
    per_dc = task[len(TIME_FEATURES) + len(loc) + 6:]
    return (list(TIME_FEATURES) + [f"origin_{x}" for x in loc]
            + ["cores", "gpus", "mem", "bandwidth", "duration", "slack"] + per_dc
            + ["valid_defer"] + [f"valid_{x}" for x in loc] + [f"gain_{x}" for x in loc]
            + ["step_left", "pending_load"])


class TaskDecisionEnv(gym.Env):
    """One decision per pending task (module docstring). ``bundle``: a path or Scenario; the window
    ``start``/``days``/``steps`` (or ``episode_starts``: bundle steps one of which each reset draws, with
    ``days`` or ``steps`` the length); ``allow_defer``; ``seed``; ``late_penalty_kg``, ``reward_norm_kg``
    (module constants); any run option of :func:`sim_core.run`."""

    metadata = {"render_modes": []}

    def __init__(self, bundle, *, days=None, start=None, steps=None, seed: int = 0, allow_defer: bool = False,
                 episode_starts=None, late_penalty_kg: float = LATE_PENALTY_KG,
                 reward_norm_kg: float = REWARD_NORM_KG, **sim_options):
        for name, v in (("late_penalty_kg", late_penalty_kg), ("reward_norm_kg", reward_norm_kg)):
            if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v) or v < 0:
                raise ValueError(f"{name} must be a finite number >= 0, got {v!r}")
        if reward_norm_kg <= 0:
            raise ValueError(f"reward_norm_kg must be > 0, got {reward_norm_kg!r}")
        for k in ("single_action", "allow_defer"):
            if k in sim_options:
                raise ValueError(f"{k} is not a run option of TaskDecisionEnv (it decides one task per step)")
        self.scenario = sc = as_scenario(bundle)
        self.allow_defer = bool(allow_defer)
        self.late_penalty_kg = float(late_penalty_kg)
        self.reward_norm_kg = float(reward_norm_kg)
        self._starts = None if episode_starts is None else [int(s) for s in episode_starts]
        if self._starts is not None and not self._starts:
            raise ValueError("episode_starts must name at least one start step")
        first = start if self._starts is None else self._starts[0]
        self._window = dict(days=days, steps=steps)
        self._start = start
        self._seed = int(seed)
        self.sim = Simulator(sc, self._seed, start=first, days=days, steps=steps, single_action=False,
                             allow_defer=True, **sim_options)
        self.sim.reset()
        self.n_dc = n = sc.n_dc
        self.locations = list(sc.locations)
        self.n_actions = n + 1
        self.feature_names = decision_feature_names(self.locations)
        m = len(self.feature_names)
        hi = np.ones(m, np.float32)
        hi[m - 2 - n:m - 2] = GAIN_CLIP
        self.observation_space = spaces.Box(-hi, hi, (m,), np.float32)
        self.action_space = spaces.Discrete(self.n_actions)
        # per-site IT power of one core / one GPU at full load (W): the energy a task adds where it runs
        self._w_core = sc.params[:, P_CPU_MAX] / sc.params[:, P_CORES_PER_SERVER]
        self._w_gpu = sc.params[:, P_GPU_MAX]
        ci = np.asarray(sc.carbon_g_per_kwh, dtype=np.float64)
        self._ci = ci
        self._ci_cum = np.concatenate([np.zeros((n, 1)), np.cumsum(ci, axis=1)], axis=1)
        self._obs = np.zeros(m, np.float32)
        self._dc = np.zeros(N_PER_DC * n)
        self._started = False
        self.late_tasks = 0

    # -------------------------------------------------------------- set-up
    def _bind(self) -> None:
        p = self.sim.prep
        T, C = p.tasks, p.ctx
        self._T, self._S, self._C, self._info = T, p.state, C, p.info
        n_tasks = int(T.arrival.shape[0])
        self._t_scale = np.array([max(float(a.max()) if n_tasks else 0.0, 1e-9)
                                  for a in (T.cores, T.gpus, T.mem, T.bw, T.duration)])
        self._n_ref = max(n_tasks / p.n_window, 1.0)
        jan1 = self.scenario.start_utc.replace(month=1, day=1, hour=0, minute=0, second=0, microsecond=0)
        self._year_off = float((self.scenario.start_utc - jan1).total_seconds())
        opts = p.options
        self._kwh_per_gb = float(opts.transfer_kwh_per_gb)
        self._xfer_mean = opts.transfer_emissions == "mean"
        self._locality = C.opts[E.OPT_LOCALITY] > 0.5
        self._retain_s = float(C.opts[E.OPT_RETAIN_S])
        self._baseline = np.full(n_tasks, np.nan)

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        super().reset(seed=seed)
        if seed is not None:
            self._seed = int(seed)
        elif self._started:
            self._seed += 1  # (an automatic reset: new origins every episode, reproducible from the first seed)
        window = dict(self._window, start=self._start)
        if self._starts is not None:
            window["start"] = self._starts[int(self.np_random.integers(len(self._starts)))]
        if options:
            unknown = set(options) - {"start", "days", "steps"}
            if unknown:
                raise ValueError(f"unknown reset options {sorted(unknown)}; known: ['days', 'start', 'steps']")
            window.update(options)
        self.sim.reset(self._seed, **window)
        self._started = True
        self._bind()
        self.late_tasks = 0
        self._pending_reward = 0.0
        self._open_step()
        return self._observe(), {"seed": self._seed, "start": window["start"]}

    # -------------------------------------------------------------- the step's pending tasks
    def _open_step(self) -> None:
        """Run the steps with nothing pending; then take the current step's pending tasks, in order."""
        sim = self.sim
        while not sim.done and int(self._S.sc[E.SC_PEND_N]) == 0:
            self._account(sim.step_fast(np.zeros(0, np.int64)))
        if sim.done:
            self._pend = np.zeros(0, np.int64)
            return
        p, S, C = sim.prep, self._S, self._C
        pn = int(S.sc[E.SC_PEND_N])
        self._pend = S.pend[:pn].copy()
        self._q = 0
        self._acts = np.zeros(pn, np.int64)
        self._j = j = int(S.sc[E.SC_STEP])
        self._k = p.s0 + j
        self._t = C.t0 + E.STEP_S * j
        self._avail = C.cap - S.commit  # (a fresh array: this step's answers reserve from it)
        sim._issue(*sim._issue_args, j)  # the latest issued forecast
        _dc_block(C.cap, S.commit, self._info.hist, self._info.fc, self._k, CARBON_SCALE, PRICE_SCALE, self._dc, 0)
        self._now = self._info.hist[E.SIG_CARBON, :, self._k].astype(np.float64)
        self._rule_acts = {}

    def _account(self, o) -> None:
        v = int(o["sla_violations"])
        self.late_tasks += v
        self._pending_reward -= v * self.late_penalty_kg / self.reward_norm_kg

    # -------------------------------------------------------------- per task
    def _energy_kwh(self, i: int, d: int) -> float:
        T = self._T
        return (T.cores[i] * self._w_core[d] + T.gpus[i] * self._w_gpu[d]) * T.duration[i] / 3.6e6

    def _mean_ci(self, d: int, ts: float, te: float) -> float:
        """Actual mean carbon intensity of site d over [ts, te) (bundle steps; the last step's value past the end)."""
        step, t0 = self.scenario.step_s, self._C.t0 - self.sim.prep.s0 * E.STEP_S
        last = self._ci.shape[1]
        a = (ts - t0) / step
        b = max((te - t0) / step, a + 1e-9)
        ka, kb = min(int(a), last - 1), min(int(math.ceil(b)), last)
        if kb <= ka:
            return float(self._ci[d, last - 1])
        return float((self._ci_cum[d, kb] - self._ci_cum[d, ka]) / (kb - ka))

    def _moved_gb(self, i: int, d: int) -> float:
        """GB task i moves to site d (the engine's rule, sim_core/engine/queues.py ``_moved_gb``)."""
        T = self._T
        o = int(T.origin[i])
        if d == o:
            return 0.0
        k = int(T.ds[i])
        if not self._locality or k < 0:
            return float(T.bw[i])
        return float(T.bw[i]) if self._S.rep[d, k] < self._t - self._retain_s else float(T.bw[i] - T.ds_gb[i])

    def _delay_s(self, i: int, d: int) -> float:
        o = int(self._T.origin[i])
        return 0.0 if d == o else float(self._T.bw[i] * self._C.delay_s_per_gb[o, d] + self._C.rtt_s[o, d])

    def _cost_kg(self, i: int, d: int, ts: float, ci_now) -> float:
        """Carbon of running task i at site d from ``ts`` (intensities: actual over the run when ``ci_now`` is
        None, else ``ci_now``) plus that of the GB it moves there."""
        T = self._T
        e = self._energy_kwh(i, d)
        ci = self._mean_ci(d, ts, ts + T.duration[i]) if ci_now is None else ci_now[d]
        gb = self._moved_gb(i, d)
        kg = e * ci / 1000.0
        if gb > 0.0:
            o = int(T.origin[i])
            c_x = 0.5 * (self._now[o] + self._now[d]) if self._xfer_mean else self._now[o]
            kg += gb * self._kwh_per_gb * c_x / 1000.0
        return kg

    def _baseline_kg(self, i: int) -> float:
        b = self._baseline[i]
        if b != b:
            o = int(self._T.origin[i])
            b = self._baseline[i] = self._cost_kg(i, o, float(self._T.arrival[i]), None)
        return float(b)

    def action_masks(self) -> np.ndarray:
        """Which of the ``n_actions`` choices are valid for the task shown (module docstring)."""
        return self._mask.copy()

    def rule_action(self, policy: str) -> int:
        """What rule policy ``policy`` (``sim_core.policies.registry``, kind "rule") answers for the task shown, in
        this environment's encoding: its decision for the whole step (:meth:`sim_core.Simulator.builtin_actions`:
        the rule's own kernel, each task reserving what the rule handed out before it) taken at the step's start,
        entry ``q`` for the step's ``q``-th task. Exact while the earlier answers of the step were the rule's; an
        answer the masks refuse (a site where the task would miss its deadline, or any site but the origin when no
        site has room) is repaired by :meth:`step`. Asking changes nothing in the run, ``round_robin``'s counter
        included (it restarts from the same site at every step here)."""
        if self.sim.done or self._q >= self._pend.size:
            return int(np.flatnonzero(self._mask)[0])
        acts = self._rule_acts.get(policy)
        if acts is None:
            acts = self._rule_acts[policy] = self.sim.builtin_actions(policy).astype(np.int64)
        a = int(acts[self._q])
        return a if self.allow_defer or a > 0 else int(self._T.origin[int(self._pend[self._q])]) + 1

    def _valid(self) -> np.ndarray:
        m = np.zeros(self.n_actions, bool)
        if self.sim.done or self._q >= self._pend.size:
            m[0] = True
            return m
        i = int(self._pend[self._q])
        T = self._T
        t1 = self._t + E.STEP_S
        tdec = max(self._t, float(T.arrival[i]))
        dur, dl = float(T.duration[i]), float(T.deadline[i])
        room = np.zeros(self.n_dc, bool)
        for d in range(self.n_dc):
            a = self._avail[d]
            room[d] = T.cores[i] <= a[0] + 1e-9 and T.gpus[i] <= a[1] + 1e-9 and T.mem[i] <= a[2] + 1e-9
            m[d + 1] = tdec + self._delay_s(i, d) + dur <= dl  # (on time, room aside)
        if room.any():
            m[1:] &= room
        m[0] = self.allow_defer and t1 + dur <= dl
        if not m.any():
            m[int(T.origin[i]) + 1] = True
        return m

    def _observe(self) -> np.ndarray:
        out = self._obs
        self._mask = self._valid()
        if self.sim.done or self._q >= self._pend.size:
            out[:] = 0.0
            return out.copy()
        n = self.n_dc
        T, C = self._T, self._C
        i = int(self._pend[self._q])
        _time_block(self._t, 86400.0, self._year_off, out, 0)
        o0 = 4
        out[o0:o0 + n] = 0.0
        out[o0 + int(T.origin[i])] = 1.0
        o1 = o0 + n
        ts = self._t_scale
        out[o1] = min(T.cores[i] / ts[0], 1.0)
        out[o1 + 1] = min(T.gpus[i] / ts[1], 1.0)
        out[o1 + 2] = min(T.mem[i] / ts[2], 1.0)
        out[o1 + 3] = min(T.bw[i] / ts[3], 1.0)
        out[o1 + 4] = min(T.duration[i] / ts[4], 1.0)
        span = T.deadline[i] - T.arrival[i] - T.duration[i]
        s = T.deadline[i] - self._t - T.duration[i]
        out[o1 + 5] = (1.0 if s >= 0 else -1.0) if span <= 0 else min(max(s / span, -1.0), 1.0)
        o2 = o1 + 6
        dc = self._dc
        dc[:3 * n] = np.clip((self._avail / np.where(C.cap > 0, C.cap, 1.0)).ravel(), -1.0, 1.0)
        out[o2:o2 + N_PER_DC * n] = dc
        o3 = o2 + N_PER_DC * n
        out[o3:o3 + n + 1] = self._mask
        o4 = o3 + n + 1
        e = max(self._energy_kwh(i, int(T.origin[i])), 1e-12)
        base = self._cost_kg(i, int(T.origin[i]), self._t, self._now)
        for d in range(n):
            g = (base - self._cost_kg(i, d, self._t, self._now)) * 1000.0 / (e * GAIN_SCALE)
            out[o4 + d] = min(max(g, -GAIN_CLIP), GAIN_CLIP)
        pn = self._pend.size
        out[o4 + n] = (pn - self._q) / pn
        out[o4 + n + 1] = pn / (pn + self._n_ref)
        return out.copy()

    # -------------------------------------------------------------- API
    def step(self, action):
        if not self._started:
            raise RuntimeError("call reset() before step()")
        if self.sim.done:
            raise RuntimeError("episode is over: call reset()")
        a = int(action)
        if not 0 <= a < self.n_actions:
            raise ValueError(f"action {a} out of range 0..{self.n_actions - 1} (0 = defer, j = DC j - 1)")
        mask = self._mask
        repaired = not mask[a]
        if repaired:
            o = int(self._T.origin[int(self._pend[self._q])]) + 1
            a = o if mask[o] else int(np.flatnonzero(mask)[0])
        i = int(self._pend[self._q])
        r = self._pending_reward
        self._pending_reward = 0.0
        if a > 0:
            d = a - 1
            T = self._T
            ts = max(self._t, float(T.arrival[i])) + self._delay_s(i, d)
            r += (self._baseline_kg(i) - self._cost_kg(i, d, ts, None)) / self.reward_norm_kg
            self._avail[d, 0] -= T.cores[i]
            self._avail[d, 1] -= T.gpus[i]
            self._avail[d, 2] -= T.mem[i]
        else:
            self._baseline_kg(i)  # (fixed on first sight: the arrival's intensities, whatever comes later)
        self._acts[self._q] = a
        self._q += 1
        if self._q == self._pend.size:
            self._account(self.sim.step_fast(self._acts))
            self._open_step()
            r += self._pending_reward
            self._pending_reward = 0.0
        return self._observe(), float(r), bool(self.sim.done), False, {"action": a, "repaired": repaired}

    def result(self):
        """The full results of the episode so far (:class:`sim_core.RunResult`)."""
        return self.sim.result()


__all__ = ["TaskDecisionEnv", "decision_feature_names", "LATE_PENALTY_KG", "REWARD_NORM_KG"]
