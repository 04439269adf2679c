"""A Gymnasium vector environment that steps N scheduling environments in one jitted call.

``TaskSchedulingVectorEnv`` (public path ``sim_core.gym``) holds N :class:`~sim_core.rl.env.TaskSchedulingEnv`
of one bundle (single-action mode), each with its own seed and window, and steps all of them in **one**
Numba call per vector step: for every environment the same kernels, on the same arrays, in the same
order as the single environment's ``step`` (``engine.end_step``, ``physics.step_energy``,
``transfer.step_transfers_sla``, ``engine.begin_step``/``publish``), the reward of its
:class:`~sim_core.rl.reward.Reward`, and the observation through
:func:`sim_core.rl.env.observe_single` (the single environment's own observation function, with the
arguments its ``_bind`` collects). So the trajectories of the vector environment are those of N single
environments, bit for bit, and a feature added to the single environment's observation is in the
vector environment's as well.

::

    from sim_core.gym import TaskSchedulingVectorEnv
    envs = TaskSchedulingVectorEnv("bundles/<id>", num_envs=32, days=7, seed=0)
    obs, info = envs.reset(seed=0)            # (32, n_features) float32; env i uses seed 0 + i
    obs, rew, term, trunc, info = envs.step(envs.action_space.sample())

Seeds and windows: ``reset(seed=s)`` starts environment i with seed ``s + i`` (or ``seed[i]`` for a
list); every later episode of environment i uses its previous seed + ``num_envs`` (so every episode of
every environment samples other origins, and a run is reproducible from ``s``). ``windows``: one dict
(``start``/``days``/``steps``) per environment, else every environment uses the window given by
``start``/``days``/``steps``.

Autoreset: Gymnasium's default, ``AutoresetMode.NEXT_STEP`` (https://farama.org/Vector-Autoreset-Mode):
the step that ends an environment's episode returns its last observation with ``terminated`` True; the
next ``step`` ignores that environment's action, resets it, and returns its first observation with
reward 0 and ``terminated``/``truncated`` False. Resets run in Python (a new run set-up per episode),
the steps in one jitted call.

Rewards: a :class:`Reward` whose components are all built-in (the step totals and ``masac_utility``)
is evaluated inside the jitted call with the same arithmetic as in Python; any other reward (a custom
component or callable) is evaluated in Python per environment after the jitted call (correct, slower).
``info["components"][name]`` is the (N,) array of the raw values of each component.

The jitted functions here are cached, but they call kernels of ``engine/``, ``physics/``,
``transfer.py`` and ``rl/env.py``, and Numba's cache, keyed on the caller's file, would not notice an
edit to any of those (docs/architecture.md, "Rules for the kernels"): at import, the engine's cache guard
(``engine.cache.drop_stale``) therefore drops this module's cache entries whenever the sha256 of those
files differs from the one recorded with them.
"""

from __future__ import annotations

import hashlib
from collections import namedtuple
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from gymnasium import spaces
from gymnasium.vector import AutoresetMode, VectorEnv
from numba import njit, prange, typed, typeof

from .. import engine as E
from .. import physics as PH
from .. import transfer as X
from ..engine import cache as kernel_cache
from ..options import check_seed
from ..outcome import StepOutcome
from ..simulator import arg_key
from .env import TaskSchedulingEnv, observe_single
from .reward import Reward, get_component

#: The most environments of one vector (each holds its own run state; 4,096 is 100x a large machine's cores).
MAX_ENVS = 4096

#: what the jitted step reads and writes of one environment (the arrays of its Simulator and env)
Slot = namedtuple("Slot", [
    "T", "S", "C", "info", "acts",  # engine
    "params", "cap_cores", "cap_gpus", "cap_mem", "managed", "temp_c", "wetbulb_c", "carbon", "price", "buf",
    "dc", "dc_sum",  # physics -> outcome
    "usd_per_gb", "kwh_per_gb", "mean", "wm", "cand", "xfer",  # transfers -> outcome
    "obs_args", "obs64",  # observation
    "n_window",  # the window's steps: past them the episode drains until no work is left (sim_core.drain)
])

# reward terms (rows of the ``terms`` array): kind, source, index, coefficient, MASAC parameters
TERM_TOTAL = 0.0  # the value of one outcome slot
TERM_MASAC = 1.0  # the MASAC system utility
SRC_DC = 0.0  # outcome.dc_sum
SRC_XFER = 1.0  # outcome.xfer


#: outcome slots the MASAC utility reads
_M_BUSY_GPUS = PH.STEP_DC_NAMES.index("busy_gpus")
_M_IDLE_GPUS = PH.STEP_DC_NAMES.index("idle_gpus")
_M_IT = PH.STEP_DC_NAMES.index("it_kwh")
_M_TOTAL = PH.STEP_DC_NAMES.index("total_kwh")
_M_COST = PH.STEP_DC_NAMES.index("cost_usd")
_M_CARBON = PH.STEP_DC_NAMES.index("carbon_kg")
_M_X_CARBON = X.STEP_XFER_NAMES.index("transfer_carbon_kg")
_M_X_COST = X.STEP_XFER_NAMES.index("transfer_cost_usd")
_M_X_GB = X.STEP_XFER_NAMES.index("transfer_gb")
_M_X_N = X.STEP_XFER_NAMES.index("transfers")
#: the MASAC parameters in a term row, from column 4 on (None -> NaN, flags -> 0/1)
_MASAC_COLS = ("revenue_usd_per_gpu_h", "carbon_usd_per_t", "idle_power_ratio", "gpu_kw", "pue", "result_gb",
               "migration_usd_per_gb", "include_transfer_carbon")
N_TERM = 4 + len(_MASAC_COLS)


def _slot_index(name: str) -> tuple[float, int]:
    if name in StepOutcome.DC_NAMES:
        return SRC_DC, StepOutcome.DC_NAMES.index(name)
    return SRC_XFER, StepOutcome.STEP_NAMES.index(name)


def compile_reward(reward) -> np.ndarray | None:
    """The (n_terms, N_TERM) array the jitted step evaluates for ``reward``, or None when it has a
    component that only Python can evaluate (a custom or replaced component, a plain callable)."""
    if not isinstance(reward, Reward):
        return None
    rows = []
    for term in reward.terms:
        spec = get_component(term.name)
        tag = getattr(spec.fn, "jit_term", None)
        row = np.zeros(N_TERM)
        row[3] = term.coef
        if tag is not None and tag[0] == "total":
            row[0] = TERM_TOTAL
            row[1], row[2] = _slot_index(tag[1])
        elif tag is not None and tag[0] == "masac":
            p = {**spec.params, **term.params}
            row[0] = TERM_MASAC
            for c, name in enumerate(_MASAC_COLS):
                v = p[name]
                flag = name == "include_transfer_carbon"
                if v is not None and not flag and (not isinstance(v, int | float) or isinstance(v, bool)):
                    return None  # (Python evaluates whatever these are; the kernel takes floats)
                row[4 + c] = np.nan if v is None else float(v)
        else:
            return None
        rows.append(row)
    return np.array(rows).reshape(len(rows), N_TERM)


@njit(cache=True, nogil=True)
def _div(a, b):
    return a / b if b != 0.0 else 0.0


@njit(cache=True, nogil=True)
def _masac(dc, xfer, p):
    """``reward.masac_terms(...)["utility"]`` (the paper's Eq. 7a) for the parameters ``p`` (``_MASAC_COLS``)."""
    rev, c_usd_t, beta, kw, pue, res_gb, mig, include = p[0], p[1], p[2], p[3], p[4], p[5], p[6], p[7] > 0.5
    h = PH.STEP_HOURS
    revenue = energy = idle_c = carbon = 0.0  # summed over the sites in order, as masac_terms sums them
    for d in range(dc.shape[1]):
        busy, idle, it, tot = dc[_M_BUSY_GPUS, d], dc[_M_IDLE_GPUS, d], dc[_M_IT, d], dc[_M_TOTAL, d]
        eta = pue
        if pue != pue:
            eta = _div(tot, it) if it > 0.0 else 1.0
        price = _div(dc[_M_COST, d], tot)
        kg_kwh = _div(dc[_M_CARBON, d], tot)
        revenue += rev * busy * h
        energy += eta * kw * price * busy * h
        idle_c += eta * beta * kw * idle * price * h
        carbon += c_usd_t * eta * kw * (busy + beta * idle) * h * kg_kwh / 1000.0
    gb = xfer[_M_X_GB]
    kg = xfer[_M_X_CARBON] if include else 0.0
    usd = xfer[_M_X_COST] if mig != mig else mig * gb
    usd_gb = _div(xfer[_M_X_COST], gb) if mig != mig else mig
    retrieval = xfer[_M_X_N] * res_gb * (usd_gb + c_usd_t * _div(kg, gb) / 1000.0)
    return (revenue - energy) - idle_c - carbon - (usd + c_usd_t * kg / 1000.0) - retrieval


@njit(cache=True, nogil=True)
def _reward(terms, dc, dc_sum, xfer, raw):
    """The reward (``Reward.evaluate``'s arithmetic) and the raw value of every component into ``raw``."""
    r = 0.0
    for m in range(terms.shape[0]):
        if terms[m, 0] == TERM_TOTAL:
            v = dc_sum[int(terms[m, 2])] if terms[m, 1] == SRC_DC else xfer[int(terms[m, 2])]
        else:
            v = _masac(dc, xfer, terms[m, 4:])
        raw[m] = v
        r += terms[m, 3] * v
    return r


@njit(cache=True, nogil=True)
def step_one(e, a):
    """One step of one environment with engine action ``a`` (0 = defer, d + 1 = datacenter d): exactly
    ``Simulator._advance`` (single-action mode). Returns True when its episode is over."""
    T, S, C, info = e.T, e.S, e.C, e.info
    sc = S.sc
    j = sc[E.SC_STEP]
    s0 = info.iopt[E.IO_S0]
    n = C.n_steps
    e.acts[0] = a
    E.end_step(T, S, C, j, e.acts)
    k = s0 + j
    PH.step_energy(e.params, e.cap_cores, e.cap_gpus, e.cap_mem, S.part, S.srv, e.managed, j, e.temp_c, e.wetbulb_c,
                   e.carbon, e.price, k, e.buf, e.dc, e.dc_sum)
    X.step_transfers_sla(T.origin, S.gb, S.dest, S.decision, S.m_viol, S.pend, sc[E.SC_PEND_N],
                         sc[E.SC_NEXT_ARRIVAL], sc[E.SC_STARTED], e.wm, e.cand, C.t0, E.STEP_S, j, s0,
                         e.usd_per_gb, e.carbon, e.kwh_per_gb, e.mean, e.xfer)
    if j + 1 < n:
        E.begin_step(T, S, C, j + 1)
        E.publish(info.act, info.hist, j + 1, s0)
    # the end of the episode: Prepared.done's rule (its window run and, when draining, no work left)
    return j + 1 >= n or (j + 1 >= e.n_window and n > e.n_window and not E.work_left(S, j + 1))


@njit(cache=True, nogil=True)
def observe_one(e, out):
    """The environment's observation now (``TaskSchedulingEnv._obs``, single-action mode) into ``out``
    (float32): the latest issued forecast, then :func:`observe_single`."""
    S, C, info = e.S, e.C, e.info
    n = C.n_steps
    jj = min(S.sc[E.SC_STEP], n - 1)
    t = C.t0 + E.STEP_S * jj
    k = info.iopt[E.IO_S0] + jj
    pn = S.sc[E.SC_PEND_N]
    E.issue_all(info.act, info.fc, info.fci, info.known, info.inc, info.par, info.iopt, info.stamp, info.pub, jj)
    observe_single(e.obs_args, pn, k, t, e.obs64)
    for f in range(out.shape[0]):
        out[f] = e.obs64[f]


@njit(cache=True, nogil=True)
def _step_env(e, a, terms, obs, raw):
    """Environment ``e``'s step with engine action ``a``, its reward (into ``raw``; returned, 0 when
    ``terms`` is None) and its observation (into ``obs``). Returns (reward, terminated)."""
    done = step_one(e, a)
    r = 0.0
    if terms is not None:
        r = _reward(terms, e.dc, e.dc_sum, e.xfer, raw)
    observe_one(e, obs)
    return r, done


@njit(cache=True, nogil=True)
def step_all(slots, actions, active, terms, obs, rew, term, raw):
    """Step every environment i with ``active[i]`` (engine action ``actions[i]``), in order: its step,
    its reward (``terms``, when not None) into ``rew[i]``/``raw[i]``, ``term[i]``, its observation into
    ``obs[i]``. One call per vector step."""
    for i in range(len(slots)):
        if active[i]:
            rew[i], term[i] = _step_env(slots[i], actions[i], terms, obs[i], raw[i])


@njit(cache=True, nogil=True, parallel=True)
def step_all_parallel(slots, actions, active, terms, obs, rew, term, raw):
    """:func:`step_all` with the environments spread over Numba's threads (each environment's arrays are
    its own and no random number is drawn, so the results are those of :func:`step_all`)."""
    for ii in prange(len(slots)):
        i = np.int64(ii)  # (prange's index is unsigned; the typed list takes a signed one)
        if active[i]:
            rew[i], term[i] = _step_env(slots[i], actions[i], terms, obs[i], raw[i])


@njit(cache=True, nogil=True)
def new_slots(slot, n):
    """A typed list of ``n`` copies of ``slot`` (built here so that its compiled code is cached)."""
    out = typed.List()
    for _ in range(n):
        out.append(slot)
    return out


@njit(cache=True, nogil=True)
def set_slot(slots, i, slot):
    slots[i] = slot


#: the files whose kernels the functions above call
_DEPENDENCIES = ("engine/capacity.py", "engine/flexible.py", "engine/information.py", "engine/layout.py",
                 "engine/queues.py", "engine/servers.py", "engine/step.py", "physics", "transfer.py", "rl/env.py",
                 "rl/vector.py")


def dependencies_digest(root: Path | None = None) -> str:
    """sha256 of the files whose kernels this module's jitted functions call (a folder: each of its modules)."""
    root = Path(__file__).resolve().parents[1] if root is None else root
    h = hashlib.sha256()
    for name in _DEPENDENCIES:
        path = root / name
        for f in sorted(path.glob("*.py")) if path.is_dir() else (path,):
            h.update(f.read_bytes())
    return h.hexdigest()


# the folder Numba caches this module's kernels in (NUMBA_CACHE_DIR's when set, else __pycache__)
kernel_cache.drop_stale(kernel_cache.cache_dirs(Path(__file__).resolve().parent)[-1], "vector", dependencies_digest())


def _compiled(fn, args):
    """The compiled entry point of jitted ``fn`` for the types of ``args``: skips Numba's type dispatch at
    every call (tens of µs per vector step for a typed list of the slots' namedtuples). The types are those
    of this vector environment's arrays, fixed at its first reset (``_reset_env`` checks every later slot)."""
    return fn.compile(tuple(typeof(a) for a in args))


def _slot(env: TaskSchedulingEnv) -> Slot:
    """The arrays of a freshly reset single environment (its Simulator's and its observation's)."""
    sim = env.sim
    p = sim.prep
    o = sim.outcome
    params, cc, cg, cm, _part, _srv, managed = sim._phys_args
    temp, wet, carbon, price = sim._phys_sig
    usd, _carbon, kwh, mean = sim._xfer_net
    return Slot(T=p.tasks, S=p.state, C=p.ctx, info=p.info, acts=sim._actions,
                params=params, cap_cores=cc, cap_gpus=cg, cap_mem=cm, managed=bool(managed), temp_c=temp,
                wetbulb_c=wet, carbon=carbon, price=price, buf=sim._phys_buf, dc=o.dc, dc_sum=o.dc_sum,
                usd_per_gb=usd, kwh_per_gb=float(kwh), mean=bool(mean), wm=sim._wm, cand=sim._cand, xfer=o.xfer,
                obs_args=env._sargs, obs64=env._feat64, n_window=int(p.n_window))


class TaskSchedulingVectorEnv(VectorEnv):
    """N single-action scheduling environments of one bundle, stepped in one jitted call (module docstring).

    Arguments: ``bundle``, a bundle path or :class:`sim_core.Scenario`; ``num_envs``; ``seed`` (environment i's first
    seed is ``seed + i`` until ``reset(seed=...)`` says otherwise); ``windows`` (one dict of
    ``start``/``days``/``steps`` per environment) or the common ``start``/``days``/``steps``; ``reward``,
    ``allow_defer`` and the run options as for :class:`TaskSchedulingEnv` (``single_action`` is always True);
    ``parallel``: spread the environments over Numba's threads (same results; off by default: on a
    machine shared with other work, Numba's thread pool waits on busy cores, see BENCHMARKS.md).
    """

    metadata = {"autoreset_mode": AutoresetMode.NEXT_STEP, "render_modes": []}

    def __init__(self, bundle, num_envs: int, reward=None, allow_defer: bool = True, seed: int = 0,
                 windows: Sequence[dict] | None = None, start=None, days=None, steps=None,
                 parallel: bool = False, **sim_options):
        if isinstance(num_envs, bool) or not isinstance(num_envs, int | np.integer) or not 1 <= num_envs <= MAX_ENVS:
            raise ValueError(f"num_envs must be an integer in 1..{MAX_ENVS:,} (each environment holds its own run "
                             f"state; 4,096 is 100x a large machine's cores), got {num_envs!r}")
        if sim_options.pop("single_action", True) is not True:
            raise ValueError("TaskSchedulingVectorEnv is single-action only (one action per environment and step); "
                             "use TaskSchedulingEnv for per-task actions")
        if sim_options.get("battery") is not None:  # (its jitted step prices facility energy, sim_core.battery)
            raise ValueError("TaskSchedulingVectorEnv has no batteries: use TaskSchedulingEnv with the battery option")
        self.num_envs = int(num_envs)
        if windows is None:
            windows = [dict(start=start, days=days, steps=steps)] * self.num_envs
        windows = list(windows)
        if len(windows) != self.num_envs:
            raise ValueError(f"windows has {len(windows)} entries; num_envs is {self.num_envs}")
        for i, w in enumerate(windows):
            if not isinstance(w, dict) or set(w) - {"start", "days", "steps"}:
                raise ValueError(f"windows[{i}] must be a dict of start/days/steps, got {w!r}")
        base = check_seed(seed)
        self._seeds = [base + i for i in range(self.num_envs)]
        self.envs = [TaskSchedulingEnv(bundle, reward=reward, single_action=True,
                                       allow_defer=allow_defer, seed=self._seeds[i], **windows[i], **sim_options)
                     for i in range(self.num_envs)]
        first = self.envs[0]
        self.scenario = first.scenario
        self.reward = first.reward
        self.allow_defer = first.allow_defer
        self.n_actions = first.n_actions
        self.feature_names = first.feature_names
        self.single_observation_space = first.observation_space
        self.single_action_space = first.action_space
        self.observation_space = spaces.Box(
            np.broadcast_to(first.observation_space.low, (self.num_envs, len(self.feature_names))).copy(),
            np.broadcast_to(first.observation_space.high, (self.num_envs, len(self.feature_names))).copy(),
            dtype=np.float32)
        self.action_space = spaces.MultiDiscrete(np.full(self.num_envs, self.n_actions, np.int64))
        self._terms = compile_reward(self.reward)
        self.parallel = bool(parallel)
        self._step_all = step_all_parallel if self.parallel else step_all
        names = self.reward.names if isinstance(self.reward, Reward) else ()
        self._names = names
        n = self.num_envs
        self._obs = np.zeros((n, len(self.feature_names)), np.float32)
        self._rew = np.zeros(n)
        self._term = np.zeros(n, np.bool_)
        self._raw = np.zeros((n, max(len(names), 1)))
        self._active = np.ones(n, np.bool_)
        self._acts = np.zeros(n, np.int32)
        self._autoreset = np.zeros(n, np.bool_)
        self._slots = None
        self._slot_key = None
        self._step_entry = None  # step_all's compiled entry point for these arguments' types (_compiled)
        self._typed = np.zeros(n, np.bool_)  # environments whose slot types were checked against env 0's
        self._episode_steps = np.zeros(n, np.int64)

    # -------------------------------------------------------------- set-up
    def _reset_env(self, i: int) -> None:
        env = self.envs[i]
        obs, _ = env.reset(seed=self._seeds[i])
        self._obs[i] = obs
        slot = _slot(env)
        if self._slots is None:
            self._slots = new_slots(slot, self.num_envs)
            self._step_entry = None
            self._slot_key = arg_key(slot)  # (structural: the types of its arrays, without Numba's costly typeof)
        # (an environment's later episodes have its first one's types, as its Simulator's entry points do)
        elif not self._typed[i] and arg_key(slot) != self._slot_key and typeof(slot) != self._slots._dtype:
            raise TypeError(f"environment {i}: its arrays have other types than environment 0's "
                            f"({typeof(slot)} vs {self._slots._dtype})")
        self._typed[i] = True
        set_slot(self._slots, i, slot)
        self._episode_steps[i] = 0

    def reset(self, *, seed: int | Sequence[int] | None = None, options: dict | None = None):
        """Reset every environment: with ``seed`` (an int: environment i gets ``seed + i``; a list: one
        seed each), else each with its current seed. Returns ``(obs (N, n_features), info)``."""
        if options:
            raise ValueError("TaskSchedulingVectorEnv.reset takes no options (give windows to the constructor)")
        if seed is not None:
            if isinstance(seed, int | np.integer) and not isinstance(seed, bool):
                seeds = [check_seed(int(seed)) + i for i in range(self.num_envs)]
            else:
                seeds = [check_seed(s) for s in seed]
                if len(seeds) != self.num_envs:
                    raise ValueError(f"seed has {len(seeds)} entries; num_envs is {self.num_envs}")
            self._seeds = [check_seed(s) for s in seeds]
            self._np_random, self._np_random_seed = np.random.default_rng(self._seeds[0]), self._seeds[0]
        for i in range(self.num_envs):
            self._reset_env(i)
        self._autoreset[:] = False
        return self._obs.copy(), {"seed": np.array(self._seeds, np.int64)}

    # -------------------------------------------------------------- step
    def _engine_actions(self, actions) -> np.ndarray:
        a = np.asarray(actions)
        if a.shape != (self.num_envs,):
            raise ValueError(f"expected {self.num_envs} actions (one per environment), got shape {a.shape}")
        if a.dtype.kind not in "iu":
            if a.dtype.kind == "f" and np.all(np.isfinite(a)) and np.all(a == np.round(a)):
                a = a.astype(np.int64)
            else:
                raise TypeError(f"actions must be integers, got dtype {a.dtype}")
        bad = np.flatnonzero((a < 0) | (a >= self.n_actions))
        if bad.size:
            i = int(bad[0])
            raise ValueError(f"environment {i}: action {int(a[i])} out of range 0..{self.n_actions - 1}"
                             + (" (0 = defer, j = DC j - 1)" if self.allow_defer else " (DC index)"))
        return a if self.allow_defer else a + 1

    def step(self, actions):
        if self._slots is None:
            raise RuntimeError("call reset() before step()")
        acts = self._engine_actions(actions)
        self._acts[:] = acts
        ar = self._autoreset.copy()
        self._active[:] = ~ar
        self._term[:] = False
        self._rew[:] = 0.0
        self._raw[:] = 0.0
        args = (self._slots, self._acts, self._active, self._terms, self._obs, self._rew, self._term, self._raw)
        if self._step_entry is None:
            self._step_entry = _compiled(self._step_all, args)
        self._step_entry(*args)
        if self._terms is None:  # a reward only Python can evaluate
            for i in np.flatnonzero(self._active):
                env = self.envs[i]
                if env._evaluate is not None:
                    r, raw = env._evaluate(env.outcome)
                    for m, name in enumerate(self._names):
                        self._raw[i, m] = raw[name]
                else:
                    r = env.reward(env.outcome)
                self._rew[i] = float(r)
        if ar.any():  # NEXT_STEP autoreset: these environments start their next episode
            for i in np.flatnonzero(ar):
                self._seeds[i] += self.num_envs
                self._reset_env(int(i))
        self._episode_steps += self._active
        self._autoreset[:] = self._term
        raw = self._raw.T.copy()  # (one copy; each component's row of it)
        info = {"components": {name: raw[m] for m, name in enumerate(self._names)}}
        if ar.any():
            info["autoreset"] = ar.copy()
        return self._obs.copy(), self._rew.copy(), self._term.copy(), np.zeros(self.num_envs, np.bool_), info

    def reset_finished(self) -> np.ndarray:
        """Reset now the environments whose episode the last step ended (instead of on the next step):
        for adapters to a same-step autoreset API (stable-baselines3's ``VecEnv``). Returns their indices;
        their first observations are in :attr:`last_obs`."""
        done = np.flatnonzero(self._autoreset)
        for i in done:
            self._seeds[i] += self.num_envs
            self._reset_env(int(i))
        self._autoreset[:] = False
        return done

    @property
    def last_obs(self) -> np.ndarray:
        """The latest observation of every environment (a view: copy it to keep it)."""
        return self._obs

    # -------------------------------------------------------------- helpers
    def results(self) -> list:
        """Each environment's :class:`sim_core.RunResult` of its current episode so far."""
        return [env.result() for env in self.envs]

    def close_extras(self, **kwargs) -> None:
        self._slots = None
        self._typed[:] = False


__all__ = ["TaskSchedulingVectorEnv", "compile_reward", "step_all", "step_all_parallel"]
