"""Gymnasium environment over the step API: ``TaskSchedulingEnv`` (public path ``sim_core.gym``).

Close in spirit to SustainCluster's ``TaskSchedulingEnv``: every 15-minute step the agent sees the
pending tasks and answers per task (multi-action mode) or once for all of them (single-action
mode)::

    from sim_core.gym import TaskSchedulingEnv
    env = TaskSchedulingEnv("bundles/<id>", reward={"energy_cost": 1, "carbon_emissions": 1},
                            single_action=True, days=7)
    obs, info = env.reset(seed=0)
    obs, reward, terminated, truncated, info = env.step(env.action_space.sample())

Actions: with deferral (default) ``0`` = defer, ``j`` (1..n_dc) = run at datacenter ``j - 1``
(manifest order); with ``allow_defer=False`` the action is the 0-based datacenter index.

Padded multi-action mode (``max_tasks=M``, multi-action only; what Gymnasium's and stable-baselines3's
``check_env`` and MaskablePPO-style agents need: fixed shapes): the action is ``MultiDiscrete([n_actions] * M)``,
slot q for the q-th pending task; the observation is a dict, ``tasks`` (M rows of the per-task features, zero
rows after the pending ones, flattened row by row: a 1-D vector, as stable-baselines3's policies take) and
``mask`` (1 on the slots in use); ``env.action_masks()`` gives MaskablePPO's
flat mask. Actions of unused slots are ignored; pending tasks past the first M get 0 (deferred, or their
origin without deferral) and come back in the next step's slots.

Observation, single-action mode: a float32 vector, layout in ``env.feature_names``
(``9 + 14 n_dc`` features). Multi-action mode: a list with one float32 vector per pending task
(``10 + 14 n_dc`` features, ``env.task_feature_names``), in pending order; ``[]`` when nothing is
pending (the action is then ``[]``). Scales (fixed per environment, from its window):

* time: ``sin/cos`` of the UTC hour of day and of the day of year of the step start;
* ``pending_load`` = n / (n + mean arrivals per step); ``pending_{cores,gpus,mem}`` = pending
  demand / total capacity (clipped to 1); ``min_slack`` = min over pending of the slack fraction;
* per task: ``origin_<loc>`` one-hot; cores, GPUs, memory, input GB, duration / the window maxima;
  ``slack`` = (deadline - step start - duration) / (deadline - arrival - duration), clipped to
  [-1, 1] (1 = just arrived, 0 = must start now, < 0 = will miss its deadline);
* per datacenter: ``avail_{cores,gpus,mem}_<loc>`` = (capacity - committed) / capacity, clipped to
  [-1, 1] (committed = running + queued + in transit); ``carbon_<loc>`` = current intensity /
  1000 g/kWh (clipped to [0, 1]); ``price_<loc>`` = current price / 1000 USD/MWh (clipped to [-1, 1]);
  ``carbon_fc_<b>_<loc>``, ``price_fc_<b>_<loc>`` = the mean of the latest issued forecast (run options
  ``forecast``, ``forecast_issue_every_min``; its finite leads) over the lead buckets b = 1h (0-1 h
  ahead), 4h (1-4 h), 12h (4-12 h), 24h (12-24 h),
  same scales. Fixed scales: a scale taken from the window's own signals would tell the agent about
  the future (docs/simulation.md, "Information").

Reward: a :class:`sim_core.rl.reward.Reward` (or config dict / YAML text / YAML path, or any callable
``f(outcome) -> float``); ``info["components"]`` holds the raw value of each component.
An episode is the window (``start``/``days``/``steps``); it terminates after its last step.
``reset(seed=s)`` re-samples task origins from ``s`` (same seed => identical episode).
"""

from __future__ import annotations

import math
import sys
from collections.abc import Callable, Mapping
from datetime import timedelta
from pathlib import Path

import gymnasium as gym
import numpy as np
from gymnasium import spaces
from numba import njit

from .. import engine as E
from ..battery import B_P
from ..options import check_bool, check_seed
from ..outcome import StepOutcome
from ..precompile import kernels_notice
from ..scenario import Scenario
from ..simulator import Simulator, as_scenario
from .reward import Reward

N_TIME = 4
N_SINGLE_FIXED = 9  # time (4) + pending_load + pending_{cores,gpus,mem} + min_slack
N_TASK_FIXED = 6  # cores, gpus, mem, bandwidth, duration, slack
#: forecast features: mean of the forecast over leads (lo, hi] steps, per signal (carbon, price)
FC_BUCKETS = ((0, 4), (4, 16), (16, 48), (48, 96))
FC_BUCKET_NAMES = ("1h", "4h", "12h", "24h")
N_PER_DC = 5 + 2 * len(FC_BUCKETS)  # avail cores/gpus/mem, carbon, price, forecast buckets
#: fixed observation scales (never the window's own maxima: those would reveal the future). Carbon:
#: above the most carbon-intensive generation (coal, lifecycle median 820 g/kWh, IPCC AR5 WGIII
#: Annex III, Table A.III.2, 2014), so no grid's intensity is clipped; price: typical day-ahead prices
#: stay well inside [-1, 1], the spikes of the data mirror (SG 3361, US-TEX-ERCO 4111, AU-NSW 7425
#: USD/MWh) are clipped to 1.
CARBON_SCALE = 1000.0  # g/kWh
PRICE_SCALE = 1000.0  # USD/MWh


TIME_FEATURES = ("hour_sin", "hour_cos", "doy_sin", "doy_cos")


def feature_layout(locations) -> tuple[list[str], list[str]]:
    """The observation layouts for sites ``locations`` (manifest order): the single-action vector's
    feature names, and the per-task vector's (multi-action mode). docs/rl.md's tables are rendered from it."""
    loc = list(locations)
    per_dc = ([f"avail_{r}_{x}" for x in loc for r in ("cores", "gpus", "mem")] + [f"carbon_{x}" for x in loc]
              + [f"price_{x}" for x in loc]
              + [f"{sig}_fc_{b}_{x}" for sig in ("carbon", "price") for b in FC_BUCKET_NAMES for x in loc])
    single = (list(TIME_FEATURES) + ["pending_load", "pending_cores", "pending_gpus", "pending_mem", "min_slack"]
              + [f"origin_share_{x}" for x in loc] + per_dc)
    task = (list(TIME_FEATURES) + [f"origin_{x}" for x in loc]
            + ["cores", "gpus", "mem", "bandwidth", "duration", "slack"] + per_dc)
    return single, task


#: what each observation feature means, by name pattern (``<loc>`` a site, ``<b>`` a forecast lead bucket);
#: docs/rl.md's observation tables are rendered from these by :func:`layout_table` (a test checks)
FEATURE_MEANINGS = {
    "hour_sin": "sin of the UTC hour of day of the step start", "hour_cos": "cos of the same",
    "doy_sin": "sin of the UTC day of year of the step start", "doy_cos": "cos of the same",
    "pending_load": "n / (n + mean arrivals per step of the window), n = pending tasks",
    "pending_cores": "pending core demand / total cluster cores (clipped to 1)",
    "pending_gpus": "pending GPU demand / total cluster GPUs (clipped to 1)",
    "pending_mem": "pending memory demand / total cluster memory (clipped to 1)",
    "min_slack": "smallest slack fraction of the pending tasks (1 if none)",
    "origin_share_<loc>": "share of the pending tasks originating at the site",
    "origin_<loc>": "1 at the task's origin site, else 0",
    "cores": "the task's cores / the window's largest", "gpus": "the task's GPUs / the window's largest",
    "mem": "the task's memory / the window's largest", "bandwidth": "the task's input GB / the window's largest",
    "duration": "the task's duration / the window's longest",
    "slack": "(deadline − step start − duration) / (deadline − arrival − duration), clipped to [−1, 1]",
    "avail_cores_<loc>": "(cores − committed) / cores, in [−1, 1]; committed = running + queued + in transit",
    "avail_gpus_<loc>": "the same for GPUs", "avail_mem_<loc>": "the same for memory",
    "carbon_<loc>": f"carbon intensity now / {CARBON_SCALE:g} g/kWh, clipped to [0, 1]",
    "price_<loc>": f"price now / {PRICE_SCALE:g} USD/MWh, clipped to [−1, 1]",
    "carbon_fc_<b>_<loc>": "mean of the latest issued carbon forecast over the lead bucket <b> (same scale)",
    "price_fc_<b>_<loc>": "mean of the latest issued price forecast over the lead bucket <b> (same scale)",
    # one decision per task (sim_core.rl.decision.TaskDecisionEnv): avail_* there is what is left after the
    # step's earlier answers
    "valid_defer": "1 if deferring the task is a valid action (action mask)",
    "valid_<loc>": "1 if running the task at the site is a valid action: it fits what is left and meets its deadline",
    "gain_<loc>": "carbon saved by running the task at the site rather than its origin, at the current intensities "
                  "(transfer included), per kWh of the task / 100 g/kWh, clipped to [−10, 10]",
    "step_left": "share of this step's pending tasks not yet decided",
}


def feature_pattern(name: str, locations) -> str:
    """``name`` with its site and lead bucket replaced by ``<loc>`` and ``<b>`` (a key of FEATURE_MEANINGS)."""
    for x in sorted(locations, key=len, reverse=True):
        if name.endswith("_" + x):
            name = name[: -len(x)] + "<loc>"
            break
    for b in FC_BUCKET_NAMES:
        name = name.replace(f"_fc_{b}_", "_fc_<b>_")
    return name


def layout_table(names, locations) -> str:
    """A Markdown table of an observation layout: each name pattern in order, how many features it
    spans for ``locations``, and what it means."""
    counts: dict[str, int] = {}
    for n in names:
        pat = feature_pattern(n, locations)
        counts[pat] = counts.get(pat, 0) + 1
    rows = [f"| `{pat}` | {k} | {FEATURE_MEANINGS[pat]} |" for pat, k in counts.items()]
    return "\n".join(["| feature | count | meaning |", "|---|---|---|", *rows])


# ---------------------------------------------------------------------------- feature kernels
@njit(cache=True, nogil=True, inline="always")
def _clip(x, lo, hi):
    return min(max(x, lo), hi)


@njit(cache=True, nogil=True)
def _time_block(t, day_s, year_off_s, out, off):
    two_pi = 2.0 * math.pi
    h = (t % day_s) / day_s
    y = ((t + year_off_s) / day_s) / 365.25
    out[off] = math.sin(two_pi * h)
    out[off + 1] = math.cos(two_pi * h)
    out[off + 2] = math.sin(two_pi * y)
    out[off + 3] = math.cos(two_pi * y)


@njit(cache=True, nogil=True)
def _fc_mean(fc, s, d, lo, hi, now):
    """Mean of the forecast of signal s at datacenter d over leads lo + 1 .. hi (the current value when
    every one of them is past the bundle's end)."""
    tot = 0.0
    m = 0
    for h in range(lo, min(hi, fc.shape[2])):
        v = fc[s, d, h]
        if v == v:
            tot += v
            m += 1
    return tot / m if m > 0 else now


@njit(cache=True, nogil=True)
def _dc_block(cap, commit, hist, fc, k, c_scale, p_scale, out, off):
    n_dc = cap.shape[0]
    for d in range(n_dc):
        for r in range(3):
            c = cap[d, r]
            out[off + 3 * d + r] = _clip((c - commit[d, r]) / c, -1.0, 1.0) if c > 0.0 else 0.0
    o2 = off + 3 * n_dc
    for d in range(n_dc):
        out[o2 + d] = _clip(hist[0, d, k] / c_scale, 0.0, 1.0)
        out[o2 + n_dc + d] = _clip(hist[1, d, k] / p_scale, -1.0, 1.0)
    o3 = o2 + 2 * n_dc
    nb = len(FC_BUCKETS)
    for s in range(2):
        scale = c_scale if s == 0 else p_scale
        lo_clip = 0.0 if s == 0 else -1.0
        for b in range(nb):
            lo, hi = FC_BUCKETS[b]
            for d in range(n_dc):
                v = _fc_mean(fc, s, d, lo, hi, hist[s, d, k])
                out[o3 + (s * nb + b) * n_dc + d] = _clip(v / scale, lo_clip, 1.0)


@njit(cache=True, nogil=True, inline="always")
def _slack(t, arrival, duration, deadline):
    span = deadline - arrival - duration
    s = deadline - t - duration
    if span <= 0.0:
        return 1.0 if s >= 0.0 else -1.0
    return _clip(s / span, -1.0, 1.0)


@njit(cache=True, nogil=True)
def single_features(pend, pn, arrival, duration, cores, gpus, mem, deadline, origin, cap, cap_tot, commit,
                    hist, fc, k, t, day_s, year_off_s, n_ref, c_scale, p_scale, out):
    """Fill the single-action observation ``out`` (9 + 14 n_dc) for bundle step ``k`` at time ``t``, from
    the history and the latest issued forecast as seen at k (engine ``Info.hist``/``Info.fc``)."""
    n_dc = cap.shape[0]
    _time_block(t, day_s, year_off_s, out, 0)
    sc = 0.0
    sg = 0.0
    sm = 0.0
    mn = 1.0
    for d in range(n_dc):
        out[N_SINGLE_FIXED + d] = 0.0
    for q in range(pn):
        i = pend[q]
        sc += cores[i]
        sg += gpus[i]
        sm += mem[i]
        s = _slack(t, arrival[i], duration[i], deadline[i])
        if s < mn:
            mn = s
        out[N_SINGLE_FIXED + origin[i]] += 1.0
    if pn > 0:
        for d in range(n_dc):
            out[N_SINGLE_FIXED + d] /= pn
    out[4] = pn / (pn + n_ref)
    out[5] = _clip(sc / cap_tot[0], 0.0, 1.0) if cap_tot[0] > 0.0 else 0.0
    out[6] = _clip(sg / cap_tot[1], 0.0, 1.0) if cap_tot[1] > 0.0 else 0.0
    out[7] = _clip(sm / cap_tot[2], 0.0, 1.0) if cap_tot[2] > 0.0 else 0.0
    out[8] = mn
    _dc_block(cap, commit, hist, fc, k, c_scale, p_scale, out, N_SINGLE_FIXED + n_dc)


@njit(cache=True, nogil=True)
def observe_single(a, pn, k, t, out):
    """The single-action observation into ``out`` from ``a``, the static arguments of
    :func:`single_features` that :meth:`TaskSchedulingEnv._bind` collects (``a[1]``, ``a[14]``, ``a[15]``
    and ``a[21]`` are placeholders for ``pn``, ``k``, ``t`` and ``out``). The one code path of the
    single-action observation: :class:`TaskSchedulingEnv` calls it, and so does the vector environment
    (:mod:`sim_core.rl.vector`) for each of its environments inside its jitted step."""
    single_features(a[0], pn, a[2], a[3], a[4], a[5], a[6], a[7], a[8], a[9], a[10], a[11], a[12], a[13], k, t,
                    a[16], a[17], a[18], a[19], a[20], out)


@njit(cache=True, nogil=True)
def task_features(pend, pn, arrival, duration, cores, gpus, mem, bw, deadline, origin, cap, commit, hist,
                  fc, k, t, day_s, year_off_s, t_scale, c_scale, p_scale, out):
    """Fill ``out`` (pn, 10 + 14 n_dc): one row per pending task (multi-action observation).
    ``t_scale``: window maxima of cores, gpus, mem, bandwidth, duration."""
    n_dc = cap.shape[0]
    if pn == 0:
        return
    row0 = out[0]
    _time_block(t, day_s, year_off_s, row0, 0)
    base = N_TIME + n_dc + N_TASK_FIXED
    _dc_block(cap, commit, hist, fc, k, c_scale, p_scale, row0, base)
    for q in range(pn):
        i = pend[q]
        row = out[q]
        if q > 0:
            for k in range(N_TIME):
                row[k] = row0[k]
            for k in range(base, row.shape[0]):
                row[k] = row0[k]
        for d in range(n_dc):
            row[N_TIME + d] = 0.0
        row[N_TIME + origin[i]] = 1.0
        o = N_TIME + n_dc
        row[o] = _clip(cores[i] / t_scale[0], 0.0, 1.0)
        row[o + 1] = _clip(gpus[i] / t_scale[1], 0.0, 1.0)
        row[o + 2] = _clip(mem[i] / t_scale[2], 0.0, 1.0)
        row[o + 3] = _clip(bw[i] / t_scale[3], 0.0, 1.0)
        row[o + 4] = _clip(duration[i] / t_scale[4], 0.0, 1.0)
        row[o + 5] = _slack(t, arrival[i], duration[i], deadline[i])


# ---------------------------------------------------------------------------- spaces
class _ListSequence(spaces.Sequence):
    """``spaces.Sequence`` whose ``contains`` also accepts a list (the multi-action observation)."""

    def contains(self, x) -> bool:
        if isinstance(x, list):
            x = tuple(x)
        if isinstance(x, np.ndarray) and x.ndim >= 1 and not self.stack:
            x = tuple(x)
        return super().contains(x)


#: The most slots of the padded multi-action mode: the observation is (slots x features) float32, ~3,600 features
#: at 256 sites, so 65,536 slots are ~0.9 GB; a step of a year at load 1 has ~40 pending tasks.
MAX_TASKS = 65_536
MAX_TASKS_WHY = "a step at load 1 has ~40 pending tasks; the padded observation is slots x features float32"


def _check_max_tasks(max_tasks, single_action: bool) -> int | None:
    """``max_tasks`` (the padded multi-action mode's slot count): None or a positive int, multi-action only."""
    if max_tasks is None:
        return None
    if isinstance(max_tasks, bool) or not isinstance(max_tasks, int | np.integer) or not 1 <= max_tasks <= MAX_TASKS:
        raise ValueError(f"max_tasks must be None or an integer in 1..{MAX_TASKS:,} ({MAX_TASKS_WHY}), "
                         f"got {max_tasks!r}")
    if single_action:
        raise ValueError("max_tasks pads the multi-action mode's per-task actions: pass single_action=False")
    return int(max_tasks)


def _as_reward(reward) -> Callable:
    if reward is None:
        return Reward()
    if isinstance(reward, Reward):
        return reward
    if isinstance(reward, Mapping | str | Path):
        return Reward.from_config(reward)
    if callable(reward):
        return reward
    raise TypeError("reward must be a Reward, a config (dict, YAML text or path) or a callable(outcome) -> float")


# ---------------------------------------------------------------------------- the environment
class TaskSchedulingEnv(gym.Env):
    """Geo-distributed task scheduling as a Gymnasium environment (see the module docstring).

    Arguments: ``bundle``, a bundle path or :class:`sim_core.Scenario`; ``reward`` (see module docstring);
    ``single_action``; ``allow_defer``; the window ``start``/``days``/``steps``; the default
    ``seed``; any other run option of :func:`sim_core.run` (``sla_multiplier``,
    ``transfer_emissions``, ...); ``render_mode="ansi"``: :meth:`render` returns a text summary of the
    step; ``max_tasks``: the padded multi-action mode (module docstring). Registered as
    ``gridshift/TaskScheduling-v0`` (:mod:`sim_core.gym`).
    """

    metadata = {"render_modes": ["ansi"], "render_fps": 4}

    def __init__(self, bundle: str | Path | Scenario, reward=None, single_action: bool = False,
                 allow_defer: bool = True, days=None, start=None, seed: int = 0, steps=None,
                 render_mode: str | None = None, max_tasks: int | None = None, battery_action: bool = False,
                 **sim_options):
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise ValueError(f"render_mode must be None or one of {self.metadata['render_modes']}, got {render_mode!r}")
        self.render_mode = render_mode
        self.scenario = as_scenario(bundle)
        self.reward = _as_reward(reward)
        self._evaluate = getattr(self.reward, "evaluate", None)
        self.single_action = check_bool("single_action", single_action)
        self.allow_defer = check_bool("allow_defer", allow_defer)
        for k in ("single_action", "allow_defer"):
            sim_options.pop(k, None)
        self.max_tasks = _check_max_tasks(max_tasks, self.single_action)
        self._window = dict(start=start, days=days, steps=steps)
        self._sim_options = dict(sim_options, single_action=self.single_action, allow_defer=self.allow_defer)
        self._seed = check_seed(seed)
        line = kernels_notice("the Gymnasium environment", [single_features])
        if line:  # a first use compiles for minutes under load: say so before the silence
            print(f"gridshift: {line}", file=sys.stderr, flush=True)
        sc = self.scenario
        n_dc = sc.n_dc
        self.n_dc = n_dc
        self.locations = list(sc.locations)
        self.n_actions = n_dc + 1 if self.allow_defer else n_dc
        self.sim = self._make_sim(self._seed, self._window)  # validates the window and options
        self._set_scales()

        #: single-action observation layout; multi-action per-task observation layout
        self.feature_names, self.task_feature_names = feature_layout(self.locations)
        assert len(self.feature_names) == N_SINGLE_FIXED + (1 + N_PER_DC) * n_dc
        assert len(self.task_feature_names) == N_TIME + n_dc + N_TASK_FIXED + N_PER_DC * n_dc
        lo_s, hi_s = self._bounds(self.feature_names)
        lo_t, hi_t = self._bounds(self.task_feature_names)
        self.task_space = spaces.Box(lo_t, hi_t, dtype=np.float32)
        if self.single_action:
            self.observation_space = spaces.Box(lo_s, hi_s, dtype=np.float32)
            self.action_space = spaces.Discrete(self.n_actions)
        elif self.max_tasks is not None:  # padded: fixed-length action, the slots in use in the observation's mask
            m = self.max_tasks
            self.observation_space = spaces.Dict({
                "tasks": spaces.Box(np.tile(lo_t, m), np.tile(hi_t, m), dtype=np.float32),  # (flat: SB3's policies)
                "mask": spaces.MultiBinary(m)})
            self.action_space = spaces.MultiDiscrete(np.full(m, self.n_actions, np.int64))
        else:
            self.observation_space = _ListSequence(self.task_space)
            self.action_space = spaces.Sequence(spaces.Discrete(self.n_actions))
        #: battery_action (a run with the ``battery`` option): the action is {"tasks": the task action above,
        #: "battery": each site's target as a fraction of its battery's power, -1 (discharge) .. 1 (charge)}
        self.battery_action = check_bool("battery_action", battery_action)
        if self.battery_action:
            if self.sim.prep.battery is None:
                raise ValueError("battery_action=True needs batteries: pass the battery run option")
            self.action_space = spaces.Dict({"tasks": self.action_space,
                                             "battery": spaces.Box(-1.0, 1.0, (n_dc,), dtype=np.float32)})
        self._obs_buf = np.zeros(len(self.feature_names), np.float32)
        self._feat64 = np.zeros(len(self.feature_names))
        self._started = False

    # -------------------------------------------------------------- set-up helpers
    @staticmethod
    def _bounds(names):
        lo = np.full(len(names), -1.0, np.float32)
        hi = np.ones(len(names), np.float32)
        for k, n in enumerate(names):
            if n.startswith(("pending_", "origin", "carbon_", "cores", "gpus", "mem", "bandwidth", "duration")):
                lo[k] = 0.0
        return lo, hi

    def _make_sim(self, seed: int, window: dict) -> Simulator:
        sim = Simulator(self.scenario, seed, **window, **self._sim_options)
        sim.reset()
        return sim

    def _set_scales(self) -> None:
        p = self.sim.prep
        sc = self.scenario
        C, T = p.ctx, p.tasks
        self._c_scale = CARBON_SCALE
        self._p_scale = PRICE_SCALE
        n_tasks = int(T.arrival.shape[0])
        self._n_ref = max(n_tasks / p.n_window, 1.0)  # (arrivals per step of the window, not of its drain)
        self._t_scale = np.array([max(float(a.max()) if n_tasks else 0.0, 1e-9)
                                  for a in (T.cores, T.gpus, T.mem, T.bw, T.duration)])
        self._cap_tot = C.cap.sum(axis=0).astype(np.float64)
        jan1 = sc.start_utc.replace(month=1, day=1, hour=0, minute=0, second=0, microsecond=0)
        self._year_off = float((sc.start_utc - jan1).total_seconds())

    def _bind(self) -> None:
        """Fast entry points of the feature kernels for this episode's arrays."""
        p = self.sim.prep
        T, S, C, info = p.tasks, p.state, p.ctx, p.info
        self._sargs = (S.pend, 0, T.arrival, T.duration, T.cores, T.gpus, T.mem, T.deadline, T.origin, C.cap,
                       self._cap_tot, S.commit, info.hist, info.fc, 0, 0.0, 86400.0, self._year_off,
                       self._n_ref, self._c_scale, self._p_scale, self._feat64)
        self._sk = self.sim.kernel(observe_single, self._sargs, 0, 0, 0.0, self._feat64)
        if self.single_action:
            self._fargs = self._sargs
            self._fk = self._sk
        else:
            out = np.zeros((1, len(self.task_feature_names)))
            self._fargs = (S.pend, 0, T.arrival, T.duration, T.cores, T.gpus, T.mem, T.bw, T.deadline, T.origin,
                           C.cap, S.commit, info.hist, info.fc, 0, 0.0, 86400.0, self._year_off, self._t_scale,
                           self._c_scale, self._p_scale, out)
            self._fk = self.sim.kernel(task_features, *self._fargs)

    # -------------------------------------------------------------- observation
    @property
    def n_pending(self) -> int:
        return int(self.sim.prep.state.sc[E.SC_PEND_N])

    @property
    def outcome(self) -> StepOutcome | None:
        """The last step's results (buffers reused every step)."""
        return self.sim.outcome

    def _obs(self):
        p = self.sim.prep
        S = p.state
        j = min(int(S.sc[E.SC_STEP]), p.n - 1)
        t = p.ctx.t0 + E.STEP_S * j
        k = p.s0 + j
        pn = int(S.sc[E.SC_PEND_N])
        a = self._fargs
        if self.single_action:
            self.sim._issue(*self.sim._issue_args, j)  # the latest issued forecast (one jitted call)
            self._fk(a, pn, k, t, self._feat64)
            return self._feat64.astype(np.float32)
        if self.max_tasks is not None:
            return self._padded_obs(a, pn, k, t, j)
        if pn == 0:
            return []
        self.sim._issue(*self.sim._issue_args, j)
        out = np.empty((pn, len(self.task_feature_names)))
        self._fk(a[0], pn, *a[2:14], k, t, *a[16:21], out)
        return list(out.astype(np.float32))

    def _padded_obs(self, a, pn, k, t, j) -> dict:
        """Padded multi-action observation: the first ``max_tasks`` pending tasks' rows (the same rows as the
        list observation's), zero rows after them, flattened; and ``mask`` = 1 on the rows in use."""
        m = self.max_tasks
        used = min(pn, m)
        out = np.zeros((m, len(self.task_feature_names)))
        if used:
            self.sim._issue(*self.sim._issue_args, j)
            self._fk(a[0], used, *a[2:14], k, t, *a[16:21], out)
        mask = np.zeros(m, np.int8)
        mask[:used] = 1
        return {"tasks": out.astype(np.float32).ravel(), "mask": mask}

    def action_masks(self) -> np.ndarray:
        """Padded multi-action mode (MaskablePPO's convention for ``MultiDiscrete``): for each of the
        ``max_tasks`` slots, which of its ``n_actions`` choices are valid, flattened: every choice for a slot
        that holds a pending task, only 0 for an empty slot (its action is ignored)."""
        if self.max_tasks is None:
            raise ValueError("action_masks() is for the padded multi-action mode (max_tasks=...)")
        masks = np.zeros((self.max_tasks, self.n_actions), np.bool_)
        masks[: min(self.n_pending, self.max_tasks)] = True
        masks[:, 0] = True
        return masks.ravel()

    def summary_observation(self) -> np.ndarray:
        """The single-action observation (``feature_names``) now, in either mode (a fresh float32 array):
        what the multi-agent environment (:mod:`sim_core.rl.multiagent`) gives every agent."""
        p = self.sim.prep
        S = p.state
        j = min(int(S.sc[E.SC_STEP]), p.n - 1)
        self.sim._issue(*self.sim._issue_args, j)
        self._sk(self._sargs, int(S.sc[E.SC_PEND_N]), p.s0 + j, p.ctx.t0 + E.STEP_S * j, self._feat64)
        return self._feat64.astype(np.float32)

    # -------------------------------------------------------------- API
    def reset(self, *, seed: int | None = None, options: dict | None = None):
        if seed is not None:
            self._seed = check_seed(seed)
        super().reset(seed=seed)
        window = dict(self._window)
        if options:
            unknown = set(options) - set(window)
            if unknown:
                raise ValueError(f"unknown reset options {sorted(unknown)}; known: {sorted(window)}")
            window.update(options)
        if self._started or seed is not None or options:
            self.sim.reset(self._seed, **window)  # (the same Simulator: its compiled entry points are kept)
            if options:
                self._set_scales()
        self._started = True
        self._bind()
        return self._obs(), {"step": self.sim.prep.s0 + self.sim.step_index, "n_pending": self.n_pending}

    def _engine_actions(self, action):
        n = self.n_actions
        if self.single_action:
            if isinstance(action, np.ndarray):  # (Discrete's own contains() takes shape () only)
                if action.shape != ():
                    raise ValueError(f"single-action mode takes one int in 0..{n - 1}, got an array of shape "
                                     f"{action.shape}")
                action = action[()]
            if isinstance(action, bool) or not isinstance(action, int | np.integer):
                raise TypeError(f"single-action mode takes one int in 0..{n - 1}, got {action!r}")
            a = int(action)
            if not 0 <= a < n:
                raise ValueError(f"action {a} out of range 0..{n - 1}" + (" (0 = defer, j = DC j - 1)"
                                                                          if self.allow_defer else " (DC index)"))
            return a if self.allow_defer else a + 1
        pn = self.n_pending
        if self.max_tasks is not None:
            return self._padded_actions(action, pn)
        a = np.asarray(action if not isinstance(action, tuple) else list(action))
        if a.ndim != 1:
            raise ValueError(f"multi-action mode takes a sequence of {pn} ints (one per pending task), got shape "
                             f"{a.shape}")
        if a.size != pn:
            raise ValueError(f"expected {pn} actions (one per pending task), got {a.size}")
        if pn == 0:
            return np.zeros(0, np.int64)
        if a.dtype.kind not in "iu":
            if a.dtype.kind == "f" and np.all(a == np.round(a)):
                a = a.astype(np.int64)
            else:
                raise TypeError(f"actions must be integers, got dtype {a.dtype}")
        a = a.astype(np.int64)
        if a.min() < 0 or a.max() >= n:
            bad = a[(a < 0) | (a >= n)][0]
            raise ValueError(f"action {int(bad)} out of range 0..{n - 1}"
                             + (" (0 = defer, j = DC j - 1)" if self.allow_defer else " (DC index)"))
        return a if self.allow_defer else a + 1

    def _battery_target(self, action):
        """(task action, battery targets kW) of a ``battery_action`` action: fractions in [-1, 1] of each site's
        battery power."""
        if not isinstance(action, dict) or set(action) != {"tasks", "battery"}:
            raise ValueError("with battery_action=True an action is {'tasks': ..., 'battery': n_dc fractions}")
        f = np.asarray(action["battery"], dtype=np.float64)
        if f.shape != (self.n_dc,) or not np.all(np.isfinite(f)) or np.abs(f).max(initial=0.0) > 1.0:
            raise ValueError(f"action['battery'] must be {self.n_dc} finite fractions in [-1, 1], got {f!r}")
        return action["tasks"], f * self.sim.prep.battery.vec[:, B_P]

    def _padded_actions(self, action, pn: int) -> np.ndarray:
        """The engine actions of the padded mode: slot q's action for pending task q < max_tasks; the pending
        tasks past ``max_tasks`` get 0 (deferred, or their origin with ``allow_defer=False``)."""
        m, n = self.max_tasks, self.n_actions
        a = np.asarray(action)
        if a.shape != (m,):
            raise ValueError(f"padded multi-action mode takes {m} ints (one per slot, max_tasks), got shape "
                             f"{a.shape}")
        if a.dtype.kind not in "iu":
            raise TypeError(f"actions must be integers, got dtype {a.dtype}")
        used = min(pn, m)
        bad = np.flatnonzero((a[:used] < 0) | (a[:used] >= n))
        if bad.size:
            raise ValueError(f"slot {int(bad[0])}: action {int(a[bad[0]])} out of range 0..{n - 1}"
                             + (" (0 = defer, j = DC j - 1)" if self.allow_defer else " (DC index)"))
        acts = np.zeros(pn, np.int64)
        acts[:used] = a[:used] if self.allow_defer else a[:used] + 1
        return acts

    def step(self, action):
        if not self._started:
            raise RuntimeError("call reset() before step()")
        if self.sim.done:
            raise RuntimeError("episode is over: call reset()")
        battery = None
        if self.battery_action:
            action, battery = self._battery_target(action)
        o = self.sim.step_fast(self._engine_actions(action), battery=battery)
        if self._evaluate is not None:
            r, raw = self._evaluate(o)
        else:
            r, raw = float(self.reward(o)), {}
        terminated = self.sim.done
        info = {"step": o.step, "components": raw}
        return self._obs(), float(r), terminated, False, info

    def render(self) -> str | None:
        """``render_mode="ansi"``: the step, its UTC start, the pending tasks and, per site, free capacity,
        carbon intensity and price now (None without a render mode)."""
        if self.render_mode is None:
            return None
        p = self.sim.prep
        S, C = p.state, p.ctx
        j = min(int(S.sc[E.SC_STEP]), p.n - 1)
        k = p.s0 + j
        when = self.scenario.start_utc + timedelta(seconds=E.STEP_S * k)
        drain = " draining" if j >= p.n_window else ""  # (past the window: sim_core.drain)
        lines = [f"step {j}/{p.n_window}{drain} ({when:%Y-%m-%d %H:%M} UTC), {self.n_pending} pending",
                 f"{'site':<16}{'free cores':>12}{'free GPUs':>11}{'gCO2/kWh':>10}{'USD/MWh':>9}"]
        for d, loc in enumerate(self.locations):
            free = C.cap[d] - S.commit[d]
            lines.append(f"{loc:<16}{free[0]:>12.0f}{free[1]:>11.1f}{p.info.hist[0, d, k]:>10.0f}"
                         f"{p.info.hist[1, d, k]:>9.1f}")
        return "\n".join(lines) + "\n"

    def baseline_action(self, policy: str):
        """What built-in policy ``policy`` would do now, in this environment's action encoding
        (single-action mode: the action the policy picks for the oldest pending task)."""
        acts = self.sim.builtin_actions(policy).astype(np.int64)
        if not self.allow_defer:
            acts = np.maximum(acts - 1, 0)
        if self.single_action:
            return int(acts[0]) if acts.size else 0
        if self.max_tasks is not None:
            padded = np.zeros(self.max_tasks, np.int64)
            padded[: min(acts.size, self.max_tasks)] = acts[: self.max_tasks]
            return padded
        return acts

    def result(self):
        """The full results of the episode so far (:class:`sim_core.RunResult`)."""
        return self.sim.result()


__all__ = ["TaskSchedulingEnv"]
