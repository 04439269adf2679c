"""Run set-up, the whole-run entry point ``run`` and the step API ``Simulator``.

Every option, the window and every action of a Python policy is validated (``sim_core.options``)
before it reaches a kernel; a jitted policy writes straight into the kernel's action array, where
any value is safe (a value <= 0 defers, one beyond the last datacenter is replaced by the fallback
datacenter and counted in ``totals["invalid_actions"]``).
"""

from __future__ import annotations

import importlib
import numbers
from collections.abc import Mapping
from pathlib import Path

import numpy as np
from numba.core.registry import CPUDispatcher

from . import battery as B
from . import chunks as K
from . import engine as E
from . import forecast as F
from . import origin as O
from .drain import drain_steps, run_drained, work_left_now
from .locality import n_datasets, window_datasets
from .options import (
    RunOptionsError,
    check_actions,
    check_battery,
    check_controls,
    check_seed,
    make_options,
    resolve_window,
)
from .physics import P_SPARE_MIN, P_WAKE_S, server_layout
from .physics import compute as physics_compute
from .policies import registry
from .realisation import ID_STRIDE, realise_window, uniforms_from
from .scenario import Scenario, load, shared
from .sla import task_deadline


def as_scenario(x) -> Scenario:
    if isinstance(x, Scenario):
        return x
    if isinstance(x, str | Path):
        return load(x)
    raise TypeError(f"expected a Scenario or a bundle path, got {type(x).__name__}")


def check_chunk_steps(chunk_steps) -> None:
    """``chunk_steps`` (:func:`run`, once "auto" is resolved): None or a whole number of steps >= 1 (a NumPy integer
    too), else a :class:`RunOptionsError`."""
    if chunk_steps is not None and (isinstance(chunk_steps, bool | np.bool_)
                                    or not isinstance(chunk_steps, numbers.Integral) or chunk_steps < 1):
        raise RunOptionsError(f"chunk_steps must be a whole number of steps >= 1, None or 'auto', got {chunk_steps!r}")


class Prepared:
    """Everything a run needs as arrays (one object per run)."""

    def __init__(self, scenario, seed: int = 0, *, start=None, days=None, steps=None,
                 policy_code: int = -1, controls: bool = False, consume: bool = False, chunk_steps: int | None = None,
                 task_results: bool = True, **options):
        # ``consume``: the scenario is this run's alone (``run`` loaded it from a path): its year of task columns is
        # consumed as the run's window is taken from it (:func:`window_tasks`), not held beside the run's own.
        # ``chunk_steps``: the window's tasks are taken that many steps of arrivals at a time (sim_core.chunks; None:
        # all at once); a run with flexible-task controls takes them all at once
        check_chunk_steps(chunk_steps)
        # (a chunked run's own scenario reads its task columns as its chunks ask for them: sim_core.chunks)
        sc = load(scenario, lazy_tasks=True) if (consume and chunk_steps is not None and not controls
                                                 and isinstance(scenario, str | Path)) else as_scenario(scenario)
        if sc.arrival_s is None:
            raise RunOptionsError(f"the scenario of bundle {sc.bundle_id} ({sc.path}) holds no tasks (loaded with "
                                  "sim_core.load(path, tasks=False), as a sweep's is): run from the bundle's path or "
                                  "a scenario loaded with its tasks")
        self.scenario = sc
        self.seed = check_seed(seed)
        self.options = make_options(**options)
        opts = self.options
        if opts.carbon_basis is not None and sc.carbon_basis is not None and opts.carbon_basis != sc.carbon_basis:
            raise RunOptionsError(f"carbon_basis={opts.carbon_basis!r}: the bundle's basis is {sc.carbon_basis!r} "
                                  "and cannot be re-based (build a bundle with that basis)")
        self.s0, self.n = resolve_window(sc, start, days, steps)
        s0, n = self.s0, self.n
        t0 = float(s0 * sc.step_s)
        self.t0 = t0

        spec = registry.by_code(policy_code) if policy_code >= 0 else None
        # (a stateful policy's job history first: an owned scenario's task columns are gone once the window is taken)
        past = past_tasks(sc, self.seed, opts, t0, spec) if spec is not None and spec.stateful else None
        #: steps of arrivals per chunk (sim_core.chunks): the whole window when it is one chunk
        self.chunk_steps = n if chunk_steps is None or controls else min(int(chunk_steps), n)
        self._consume = consume
        t_end = t0 + n * sc.step_s
        if self.chunk_steps < n:  # the window's count and queue minima first (the chunks come one at a time)
            n_w, qmin = window_summary(sc, self.seed, opts, t0, t_end, self.chunk_steps * float(sc.step_s))
            if consume:
                sc.gpu_mem_gb = None  # (no kernel reads it)
        self.tasks, self.lo, ids = window_tasks(sc, self.seed, opts, t0, t0 + self.chunk_steps * sc.step_s,
                                                consume=consume and self.chunk_steps == n)
        arr_w = self.tasks.arrival
        if self.chunk_steps == n:
            n_w, qmin = arr_w.shape[0], _queue_minima(self.tasks)
            self.task_id, self._out, self._gidx = ids, None, None
        else:  # (ids and per-task outputs in files; the engine's arrays hold the live tasks)
            self.task_id = None  # (the ids are the outputs' too: columns().whole("task_id"))
            self._out, self._gidx = None, np.arange(arr_w.shape[0], dtype=np.int64)  # (the outputs made last)
        #: the first step whose arrivals are not taken yet, and the window index of the last chunk's first task
        self._next, self._fresh = self.chunk_steps, 0
        self.hi = self.lo + n_w
        #: the window's steps (arrivals) and the steps a run may take, its drain included (sim_core.drain)
        self.n_window = n
        n = self.n = n + drain_steps(opts, s0, n, sc.n_steps, float(sc.step_s), n_w)
        #: the step count at which the run ended (set when it has; None before)
        self.n_end = None
        flexible = self.tasks.flexible
        cap = np.ascontiguousarray(np.stack([sc.cap_cores, sc.cap_gpus, sc.cap_mem_gb], axis=1))
        with np.errstate(divide="ignore", over="ignore"):  # (no or negative throughput: never arrives)
            delay_per_gb = np.where(sc.throughput_mbps > 0, 8000.0 / sc.throughput_mbps, np.inf)
        np.fill_diagonal(delay_per_gb, 0.0)
        carbon = np.ascontiguousarray(sc.carbon_g_per_kwh[:, s0:s0 + n])
        # what a policy may know, step by step (sim_core.forecast): history, forecasts, publications
        self.info = F.build_info(sc, s0, n, opts, self.seed)
        cfg = server_config(sc)
        self.managed = opts.power == "managed"
        #: the sites' batteries (sim_core.battery; None without one): their targets for every step of the run
        self.battery = B.setup(opts.battery, opts.battery_policy, sc.carbon_g_per_kwh, sc.price_usd_per_mwh, s0, n)
        self.ctx = E.Ctx(cap=cap, carbon=carbon, price=np.ascontiguousarray(sc.price_usd_per_mwh[:, s0:s0 + n]),
                         delay_s_per_gb=np.ascontiguousarray(delay_per_gb),
                         rtt_s=np.ascontiguousarray(sc.rtt_ms / 1000.0), t0=t0, n_steps=n,
                         opts=_ctx_opts(opts, controls), qmin=qmin, srv_cfg=cfg)
        #: whether a policy may pause / resume / rescale flexible tasks (not the built-in policies)
        self.controls = bool(controls)
        self.n_flexible = int(flexible.sum())
        n_c = arr_w.shape[0]
        self.state = E.new_state(n_c, sc.n_dc, n, n_flex=n_c if (controls and self.n_flexible) else 1,
                                 n_ds=n_datasets(sc, opts.catalogue, opts.catalogue_tenants))
        #: a stateful policy's own state (its module's ``new_state``), None for the rule policies
        self.plan = spec.new_state(n_c, sc.n_dc, n, self.info.fc.shape[2], past) if past is not None else None
        self.state.free[:] = cap
        S = self.state
        if self.managed:  # the run starts empty: only the spare pool is on
            S.srv_on[:, E.K_CPU] = np.minimum(cfg[:, E.CFG_SPARE], cfg[:, E.CFG_N_C])
            S.srv_on[:, E.K_GPU] = np.minimum(cfg[:, E.CFG_SPARE], cfg[:, E.CFG_N_G])
        else:
            S.srv_on[:, E.K_CPU] = cfg[:, E.CFG_N_C]
            S.srv_on[:, E.K_GPU] = cfg[:, E.CFG_N_G]
        S.srv[E.K_CPU, :, 0] = S.srv_on[:, E.K_CPU]
        S.srv[E.K_GPU, :, 0] = S.srv_on[:, E.K_GPU]
        if self._gidx is not None:  # (last: a set-up that fails leaves no files behind)
            if task_results:
                self._out = K.Outputs(n_w)
            else:  # (its part of the results folded as each task leaves: sim_core.chunks.Tallies)
                from .result import TaskFold

                self._out = K.Tallies(TaskFold(self, self.n, K.Sums()))
            self._out.put_ids(0, ids)

    def close(self) -> None:
        """Remove a chunked run's per-task output files now (``run``, on an exception), not when collected."""
        if self._out is not None:
            self._out.close()

    def servers(self) -> np.ndarray | None:
        """The time-weighted server states of the window, (4, n_dc, n) [CPU-only on, GPU servers on,
        CPU-only waking, GPU waking] (``physics.compute``'s ``servers``), or None when every server is
        always on."""
        n = self.n_out
        return self.state.srv[:, :, :n] if self.managed else None

    def step_to(self, j_end: int, advance) -> None:
        """Run to step ``j_end`` with ``advance(j)`` (the policy's loop to step j), taking each next chunk of
        arrivals at its first step (sim_core.chunks: the done tasks leave the arrays, the chunk's join them)."""
        sc = self.scenario
        while self._next < min(j_end, self.n_window):
            b = self._next
            advance(b)
            e = min(b + self.chunk_steps, self.n_window)
            new, lo, ids = window_tasks(sc, self.seed, self.options, self.t0 + b * sc.step_s,
                                        self.t0 + e * sc.step_s, consume=self._consume and e == self.n_window)
            first = lo - self.lo
            self._out.put_ids(first, ids)
            self.n_flexible += int(new.flexible.sum())
            self.tasks, self.state, self._gidx = K.compact(self.tasks, self.state, self._gidx, self._out, new, first,
                                                           self._fresh)
            self._fresh = first
            self._next = e
        advance(j_end)

    def end_stepping(self) -> None:
        """The run will not step again (``run``, once its loop has ended): drop the per-task arrays that only the
        engine reads (the queues' links and order, the pending list, the inputs no result reads), so that the
        results' per-task passes (``sim_core.result``) take their place rather than adding to the run's peak. A
        chunked run's results read its window's per-task outputs (sim_core.chunks)."""
        if self._gidx is not None:
            self.tasks, self.state = K.finish(self.tasks, self.state, self._gidx, self._out, self.n_out)
            self._gidx = None
            return
        self.tasks = self.tasks._replace(**dict.fromkeys(ENGINE_ONLY_TASK_FIELDS))
        self.state = self.state._replace(**dict.fromkeys(ENGINE_ONLY_STATE_FIELDS))

    def columns(self):
        """The run's per-task columns for its results (``sim_core.chunks``): its own arrays, or a chunked run's
        outputs once it has stepped."""
        return K.ArrayColumns(self.tasks, self.state, self.task_id) if self._out is None else self._out

    @property
    def n_out(self) -> int:
        """The steps the results cover: where the run ended (its drain included), else the whole run."""
        return self.n if self.n_end is None else self.n_end

    @property
    def done(self) -> bool:
        """Whether the run has ended: all its steps run, or (draining) past the window with no work left."""
        if self.n_end is not None:
            return True
        j = int(self.state.sc[E.SC_STEP])
        if j >= self.n or (j >= self.n_window and self.n > self.n_window and not work_left_now(self.state)):
            self.n_end = j
            return True
        return False


#: the fields of ``engine.Tasks`` and ``engine.State`` that no result reads (:meth:`Prepared.end_stepping`)
ENGINE_ONLY_TASK_FIELDS = K.ENGINE_ONLY_TASK_FIELDS
ENGINE_ONLY_STATE_FIELDS = K.ENGINE_ONLY_STATE_FIELDS


def window_tasks(sc: Scenario, seed: int, opts, t_lo: float, t_hi: float, *,
                 consume: bool = False) -> tuple[E.Tasks, int, np.ndarray]:
    """The tasks of the run's realised year (seed ``seed``, options ``opts``) that arrive in ``[t_lo, t_hi)`` s
    from the bundle's start: (their ``Tasks``, the index of the first in the whole year, their ids). The same
    for every interval: a task has the origin and uniform it has in the whole year, whichever window holds it.
    ``consume`` (a scenario loaded for one run, :class:`Prepared`): each of the scenario's task columns is dropped
    (set to None) as soon as the window's is taken from it, so that the bundle's year and the run's window are
    never both held whole; the scenario then serves no other window."""
    n_bundle = sc.n_tasks

    def take(name: str, rows: np.ndarray) -> np.ndarray:
        a = getattr(sc, name)[rows]
        if consume:
            setattr(sc, name, None)
        return a

    g_origin, g_policy, g_workload = _streams(seed)
    # the run's workload realisation (which of the bundle's weeks make up its year, sim_core.realisation):
    # only the window's tasks are built, each with the origin and the uniform it has in the whole year
    # (one draw per realised task in arrival order; the draws before the window are skipped, not made)
    win = realise_window(sc.arrival_s, float(sc.n_steps * sc.step_s), g_workload, opts.workload, t_lo, t_hi)
    rows, arr_w, slot_w = win.rows
    if consume:
        sc.arrival_s = None
    lo = win.first
    step_of_task = np.clip(floor_div(arr_w, float(sc.step_s)).astype(np.int64), 0, sc.n_steps - 1)
    probs = origin_probabilities(sc, opts)
    origin_w = O.sample_origins(g_origin, step_of_task, probs, first=lo)
    u_w = uniforms_from(g_policy, lo, rows.shape[0])
    # the datasets the window's tasks read (sim_core.locality: memoised per scenario, dropped when consumed)
    ds_w, ds_gb_w = window_datasets(sc, rows, origin_w, opts.catalogue, opts.catalogue_tenants)
    if consume:
        for memo in ("task_datasets", "task_tenants"):
            shared(sc).pop(memo, None)
        sc.gpu_mem_gb = None  # (no kernel reads it)
    realised = not win.identity  # ("origins" and a too-short bundle keep the bundle's tasks as they are)
    # ids of the window's tasks: the bundle's, or ``bundle id * ID_STRIDE + week slot`` for a resampled year
    task_id = take("task_id", rows)
    if realised:  # (in place: a year's ids are 10 MB; the dtype numpy gives id * stride + slot)
        task_id = task_id.astype(np.result_type(task_id, slot_w), copy=False)
        task_id *= ID_STRIDE
        task_id += slot_w
    mult = opts.sla_multiplier  # (validated: a float, or a float64 array)
    if isinstance(mult, np.ndarray):
        if mult.shape != (n_bundle,):
            raise RunOptionsError(f"sla_multiplier has {mult.shape[0]} per-task values; the bundle has "
                                  f"{n_bundle} tasks")
        mult = mult[rows]
    arr_w = np.ascontiguousarray(arr_w)
    dur_w = take("duration_s", rows)
    delay_w = take("max_delay_s", rows)
    with np.errstate(over="ignore", invalid="ignore"):  # (a huge duration: an infinite deadline, never missed)
        deadline = task_deadline(arr_w, dur_w, delay_w, mult)
    intr, smin, smax = take("interruptible", rows), take("min_scale", rows), take("max_scale", rows)
    flexible = intr | (smin < 1.0) | (smax > 1.0)
    tasks = E.Tasks(
        arrival=arr_w, duration=dur_w, cores=take("cpu_cores", rows),
        gpus=take("gpus", rows), mem=take("mem_gb", rows), bw=take("bandwidth_gb", rows),
        deadline=np.ascontiguousarray(deadline, dtype=np.float64),
        origin=origin_w, u_rand=u_w,
        max_delay=delay_w, interruptible=intr, ckpt=take("checkpoint_s", rows), smin=smin, smax=smax,
        mthr=take("marginal_throughput", rows), flexible=np.ascontiguousarray(flexible),
        ds=ds_w, ds_gb=ds_gb_w)
    return tasks, lo, task_id


def _streams(seed: int) -> tuple[np.random.Generator, ...]:
    """The run's random streams (origins, the policy's uniforms, the workload realisation): one Generator per
    purpose, spawned from the run seed (child i is the same whatever the count, so adding a stream never changes
    the others)."""
    return tuple(np.random.Generator(np.random.PCG64(c)) for c in np.random.SeedSequence(seed).spawn(3))


def window_summary(sc: Scenario, seed: int, opts, t_lo: float, t_hi: float, chunk_s: float) -> tuple[int, np.ndarray]:
    """What a chunked run needs of its whole window before its first chunk (sim_core.chunks): the count of the
    realised tasks arriving in ``[t_lo, t_hi)`` and their queue minima (``Ctx.qmin``), exactly those
    :func:`window_tasks` and :func:`_queue_minima` give for the whole window, taken ``chunk_s`` seconds of
    arrivals at a time (so that no window-sized array is held: :func:`combine_minima`)."""
    n, q = 0, None
    horizon = float(sc.n_steps * sc.step_s)
    lo = t_lo
    while lo < t_hi:
        hi = min(lo + chunk_s, t_hi)
        rows = realise_window(sc.arrival_s, horizon, _streams(seed)[2], opts.workload, lo, hi).rows[0]
        g = sc.gpus[rows]
        part = np.zeros(6)
        E.queue_minima(sc.cpu_cores[rows], g, sc.mem_gb[rows], part)
        has = (bool((g <= 0.0).any()), bool((~(g <= 0.0)).any()))
        q = (part, has) if q is None else combine_minima(q, (part, has))
        n += int(rows.shape[0])
        lo = hi
    return n, (np.zeros(6) if q is None else q[0])


def combine_minima(a: tuple[np.ndarray, tuple[bool, bool]], b: tuple[np.ndarray, tuple[bool, bool]]):
    """The queue minima (``engine.queue_minima``) of two consecutive runs of tasks, each with whether it has CPU
    and GPU tasks, as of their concatenation: per class, the later part's minimum only where it is smaller or NaN
    and the earlier's is not NaN (``queues._min_nan`` in task order; a class with no task is 0)."""
    (qa, (ca, ga)), (qb, (cb, gb)) = a, b
    out = qa.copy()
    for slots, has_a, has_b in (((0, 2), ca, cb), ((3, 4, 5), ga, gb)):
        for k in slots:
            if not has_a or (has_b and out[k] == out[k] and (qb[k] != qb[k] or qb[k] < out[k])):
                out[k] = qb[k]
    return out, (ca or cb, ga or gb)


def past_tasks(sc: Scenario, seed: int, opts, t0: float, spec) -> E.Tasks:
    """The tasks of the realised year that arrived in the ``spec.past_days`` days before the run's start ``t0``
    (clipped at the bundle's start): the job history a policy that learns from past jobs replays (CarbonFlex's
    learning phase, §4.2: "the job arrival logs ... over a window of length T"). None arrive for a policy
    that learns from none."""
    days = spec.past_days()
    return window_tasks(sc, seed, opts, max(t0 - days * 86400.0, 0.0) if days > 0 else t0, t0)[0]


def origin_probabilities(sc: Scenario, opts) -> np.ndarray:
    """P(origin = d) at every step of the bundle (``sim_core.origin.probabilities``) under the run options'
    activity profile: the same for every run with that profile, so computed once per scenario and profile."""
    kw = opts.activity_kw()
    memo = shared(sc).setdefault("origin_probabilities", {})
    key = tuple(sorted(kw.items()))
    if key not in memo:
        try:
            memo[key] = O.probabilities(sc.population_weight, sc.local_hour, **kw)
        except ValueError as err:  # weights x activity zero at some step of this bundle
            raise RunOptionsError(f"{err} at some step of the bundle with business hours [{opts.business_start_h}, "
                                  f"{opts.business_end_h}), activity_on={opts.activity_on!r}, "
                                  f"activity_off={opts.activity_off!r}") from None
    return memo[key]


def _ctx_opts(opts, controls: bool = False) -> np.ndarray:
    """The option slots the kernels read (``Ctx.opts``, ``engine.OPT_*``)."""
    o = np.zeros(E.N_OPTS)
    o[E.OPT_ALLOW_DEFER] = float(opts.allow_defer)
    o[E.OPT_SINGLE_ACTION] = float(opts.single_action)
    o[E.OPT_MANAGED] = float(opts.power == "managed")
    o[E.OPT_LOCALITY] = float(opts.locality)
    o[E.OPT_RETAIN_S] = opts.locality_retention_days * 86400.0
    o[E.OPT_CONTROLS] = float(controls)
    return o


def floor_div(t: np.ndarray, step_s: float) -> np.ndarray:
    """``t // step_s`` (``step_s`` > 0) exactly as numpy's floor division gives it, at the cost of a division
    (numpy's goes through ``fmod``: 70 ms for a year's tasks on a loaded machine). ``floor(t / step_s)``
    exceeds the exact floor only where the rounded quotient reaches the next integer; ``q * step_s`` is then
    exact (an integer below 2**53) and larger than ``t``, and one is taken off."""
    q = np.floor(t / step_s)
    q -= q * step_s > t
    return q


def server_config(sc: Scenario) -> np.ndarray:
    """Per-DC server layout and power-state parameters the engine reads (``Ctx.srv_cfg``,
    ``engine.CFG_*``): CPU-only and GPU servers, cores / GPUs / GB per server, wake latency, spare
    pool per kind, whether the DC has servers at all (``physics.server_layout``)."""
    cfg = np.zeros((sc.n_dc, E.N_SRV_CFG))
    for d in range(sc.n_dc):
        p = sc.params[d]
        n, ng, gps, mps = server_layout(p, float(sc.cap_cores[d]), float(sc.cap_gpus[d]), float(sc.cap_mem_gb[d]))
        cfg[d, E.CFG_N_C] = n - ng
        cfg[d, E.CFG_N_G] = ng
        cfg[d, E.CFG_CPS] = sc.physics[d].cores_per_server
        cfg[d, E.CFG_GPS] = gps
        cfg[d, E.CFG_MPS] = mps
        cfg[d, E.CFG_WAKE_S] = p[P_WAKE_S]
        cfg[d, E.CFG_SPARE] = p[P_SPARE_MIN]
        cfg[d, E.CFG_HOSTED] = 1.0 if n > 0 else 0.0
    return cfg


def _queue_minima(T) -> np.ndarray:
    """Smallest request per queue class: [cpu: cores, -, mem, gpu: cores, gpus, mem] (0 for an empty class;
    NaN propagates as in numpy's ``min``), in one jitted pass (a run set-up per episode makes this a
    per-reset cost)."""
    q = np.zeros(6)
    E.queue_minima(T.cores, T.gpus, T.mem, q)
    return q


def policy_spec(name: str) -> registry.PolicySpec:
    """The registry entry of policy ``name`` (:class:`RunOptionsError` for a name the registry lacks)."""
    try:
        return registry.get(name)
    except KeyError as err:
        raise RunOptionsError(err.args[0]) from None


def policy_code(name: str) -> int:
    """The code of built-in policy ``name`` (:class:`RunOptionsError` for any other name)."""
    return policy_spec(name).code


def policy_name(policy) -> str:
    if isinstance(policy, str):
        return policy
    return getattr(policy, "__name__", type(policy).__name__)


def _no_phase(name: str) -> None:
    """The default ``on_phase`` of :func:`run`: nothing."""


def run(bundle_or_scenario, policy="lowest_carbon", *, seed: int = 0, start=None, days=None,
        steps=None, on_phase=_no_phase, chunk_steps: int | str | None = "auto", task_results: bool = True,
        **options):
    """Run a whole window with a policy and return a :class:`~sim_core.result.RunResult`.

    ``policy``: a policy's name (``sim_core.policies.registry``), a Numba-jitted function
    ``policy(view, actions)`` (see ``engine.PolicyView``; it may also write flexible-task controls), or
    any Python callable ``policy(obs) -> actions`` or ``-> (actions, controls)`` (the step-by-step path of
    :class:`Simulator`; ``controls`` as in :meth:`Simulator.step`; ``-> (actions, controls, battery)`` also sets the
    batteries' targets, ``battery`` as in :meth:`Simulator.step`). ``on_phase(name)`` is called as each
    phase begins: ``"set-up"``, ``"stepping"``, ``"results"`` (a command line's progress: on a cold cache
    each phase compiles its kernels, ``sim_core.precompile``). ``chunk_steps``: take the window's tasks that many
    steps of arrivals at a time (``sim_core.chunks``; the same result, bit for bit, with the arrays holding the live
    tasks); None: all at once; "auto": chunks of a week for a bundle's path of at least ``chunks.AUTO_MIN_TASKS``
    tasks. A policy with flexible-task controls, and a Python callable, keep one chunk. ``task_results=False``: a
    chunked run keeps no per-task results (no ``tasks`` or ``transfers`` frames, nothing written per task; its totals
    and steps the same, the sums of floats to the last bits: ``sim_core.chunks.Tallies``), for a study too large for
    its per-task outputs (~130 bytes per task on disk: 54 GB at ×10 of the source cluster); a run in one chunk holds
    its tasks anyway and keeps them.
    """
    from .chunks import resolve_chunk_steps
    from .result import build_result

    chunk_steps = resolve_chunk_steps(chunk_steps, bundle_or_scenario)
    check_chunk_steps(chunk_steps)  # (a Python callable keeps one chunk, but a bad value is refused)
    on_phase("set-up")
    own = isinstance(bundle_or_scenario, str | Path)  # (loaded here for this run alone: Prepared's ``consume``)
    prep = None
    try:
        if isinstance(policy, str):
            spec = policy_spec(policy)
            prep = Prepared(bundle_or_scenario, seed, start=start, days=days, steps=steps, policy_code=spec.code,
                            controls=spec.stateful, consume=own, chunk_steps=chunk_steps, task_results=task_results,
                            **options)
            # the policy's own jitted loop (a stateful one keeps its plan in prep.plan and controls flexible tasks)
            kern = spec.kernel()
            on_phase("stepping")
            run_drained(prep, lambda j_end: prep.step_to(
                j_end, lambda j: kern(prep.tasks, prep.state, prep.ctx, prep.info, prep.plan, spec.code, j)))
            prep.end_stepping()
        elif isinstance(policy, CPUDispatcher):
            prep = Prepared(bundle_or_scenario, seed, start=start, days=days, steps=steps, controls=True, consume=own,
                            chunk_steps=chunk_steps, task_results=task_results, **options)
            on_phase("stepping")
            run_drained(prep, lambda j_end: prep.step_to(
                j_end, lambda j: E.run_custom(prep.tasks, prep.state, prep.ctx, prep.info, policy, j)))
            prep.end_stepping()
        elif callable(policy):
            sim = Simulator(bundle_or_scenario, seed, start=start, days=days, steps=steps, **options)
            obs = sim.reset()
            on_phase("stepping")
            while not sim.done:
                out = policy(obs)
                # (actions, controls) with controls a mapping: flexible-task controls (Simulator.step); (actions,
                # controls, battery): also the batteries' targets
                if isinstance(out, tuple) and len(out) == 3 and (out[1] is None or isinstance(out[1], Mapping)):
                    obs, _ = sim.step(out[0], controls=out[1], battery=out[2])
                elif isinstance(out, tuple) and len(out) == 2 and (out[1] is None or isinstance(out[1], Mapping)):
                    obs, _ = sim.step(out[0], controls=out[1])
                else:
                    obs, _ = sim.step(out)
            prep = sim.prep
        else:
            raise TypeError("policy must be a built-in name, a jitted function or a callable")
        on_phase("results")
        return build_result(prep, policy_name(policy), lazy_tasks=True)
    except BaseException:  # (a chunked run's output files go with it, not when the traceback is collected)
        if prep is not None:
            prep.close()
        raise


_ENTRY_MEMO: dict = {}


def arg_key(x):
    """What Numba's type of ``x`` depends on, cheaply: arrays by dtype, dimensions, layout (C, F or
    any), writability and alignment; tuples (and namedtuples, by class) element by element; anything
    else by its Python type."""
    if isinstance(x, np.ndarray):
        f = x.flags
        return (np.ndarray, x.dtype.str, x.ndim, f.c_contiguous, f.f_contiguous, f.writeable, f.aligned)
    if isinstance(x, tuple):
        return (type(x), tuple(arg_key(v) for v in x))
    return type(x)


class Simulator:
    """Step API for external control (what a Gymnasium environment wraps).

    ``obs = sim.reset()``; then ``obs, info = sim.step(actions)`` until ``sim.done``.
    ``actions``: one int per pending task in ``obs["pending_task_id"]`` order (0 = defer,
    j + 1 = run at datacenter j), or one int for all of them in single-action mode.

    ``info`` (and :attr:`outcome`) report what happened **during** the step just run, exactly as
    the run results attribute it: per-DC energy, cost, carbon and water; the transfers decided in
    the step (cost, energy, emissions, GB) and the SLA violations of the tasks that started in it.
    Summed over a run they equal ``result().totals``.

    Lean path (for environments): ``sim.step_fast(actions)`` runs the step and returns
    :attr:`outcome` (a :class:`sim_core.outcome.StepOutcome` whose buffers are reused every step)
    without building the observation dict or the info dict.
    """

    def __init__(self, scenario, seed: int = 0, *, start=None, days=None, steps=None,
                 policy: str | None = None, **options):
        self._args = dict(seed=seed, start=start, days=days, steps=steps, **options)
        self.scenario = as_scenario(scenario)
        self._code = -1 if policy is None else policy_code(policy)  # (prepares what that policy needs)
        self.prep: Prepared | None = None
        self._actions = None
        self.outcome = None
        self._entries: dict = {}  # compiled entry points by kernel (:meth:`kernel`)

    # -------------------------------------------------------------- control
    def reset(self, seed: int | None = None, **window) -> dict:
        """Start a new run and return its first observation: with the constructor's seed and window, or the
        ``seed`` and the window (``start``/``days``/``steps``, the unnamed ones None) given here, which later
        resets then keep. Nothing changes when the new run's set-up fails (a bad window)."""
        unknown = set(window) - {"start", "days", "steps"}
        if unknown:
            raise TypeError(f"Simulator.reset takes a seed and start/days/steps, got {sorted(unknown)}")
        args = dict(self._args)
        if window:  # (a window replaces the previous one whole, as in the constructor)
            args.update({"start": None, "days": None, "steps": None, **window})
        if seed is not None:
            args["seed"] = seed
        a = dict(args)
        self.prep = Prepared(self.scenario, a.pop("seed"), policy_code=self._code, controls=True, **a)
        self._args = args
        self._actions = np.zeros(max(self.prep.hi - self.prep.lo, 1), np.int32)
        E.begin_step(self.prep.tasks, self.prep.state, self.prep.ctx, 0)
        info = self.prep.info
        E.publish(info.act, info.hist, 0, self.prep.s0)
        self._setup_fast()
        return self.observation()

    @staticmethod
    def _entry(fn, *args):
        """The compiled entry point of jitted ``fn`` for these argument types (skips Numba's
        per-call type dispatch, ~10 µs for the engine's namedtuples); ``fn`` itself without JIT.
        Memoised per process on a structural key of the arguments (:func:`arg_key`: every array's
        dtype, dimensions, layout and writability, every other value's type), which Numba's own type
        inference costs milliseconds per run set-up to recompute."""
        compile_ = getattr(fn, "compile", None)
        typeof = getattr(fn, "typeof_pyval", None)
        if compile_ is None or typeof is None:
            return fn
        try:
            key = (fn, arg_key(args))
        except TypeError:  # (an unhashable argument: no memo)
            key = None
        hit = _ENTRY_MEMO.get(key) if key is not None else None
        if hit is not None:
            return hit
        try:
            entry = compile_(tuple(typeof(a) for a in args))
        except Exception:  # noqa: BLE001 - any failure: fall back to the dispatcher
            return fn
        if key is not None:
            _ENTRY_MEMO[key] = entry
        return entry

    def kernel(self, fn, *args):
        """The compiled entry point of jitted ``fn`` for these arguments (:meth:`_entry`), looked up at this
        Simulator's first reset only: every later reset builds arrays of the same types (Prepared makes each
        with a fixed dtype, dimensions and layout from the same options), and the structural key of ~100
        arrays costs ~1 ms per look-up. For kernels that take this Simulator's run arrays (its own, and an
        environment's feature kernels)."""
        if fn not in self._entries:
            self._entries[fn] = self._entry(fn, *args)
        return self._entries[fn]

    def _setup_fast(self) -> None:
        from . import transfer as X
        from .outcome import StepOutcome
        from .physics import N_OUT, step_energy

        p, sc = self.prep, self.scenario
        T, S, C = p.tasks, p.state, p.ctx
        self.outcome = StepOutcome(sc.n_dc, cap_gpus=sc.cap_gpus, locations=sc.locations)
        o = self.outcome
        self._phys_buf = np.empty(N_OUT)
        entry = self.kernel
        self._end = entry(E.end_step, T, S, C, 0, self._actions)
        self._begin = entry(E.begin_step, T, S, C, 0)
        info = p.info
        self._publish_args = (info.act, info.hist)
        self._publish = entry(E.publish, info.act, info.hist, 0, int(p.s0))
        self._issue_args = (info.act, info.fc, info.fci, info.known, info.inc, info.par, info.iopt, info.stamp,
                            info.pub)
        self._issue = entry(E.issue_all, *self._issue_args, 0)
        caps = tuple(np.ascontiguousarray(c, dtype=np.float64) for c in (sc.cap_cores, sc.cap_gpus, sc.cap_mem_gb))
        self._phys_args = (sc.params, *caps, S.part, S.srv, bool(p.managed))
        self._phys_sig = (sc.temp_c, sc.wetbulb_c, sc.carbon_g_per_kwh, sc.price_usd_per_mwh)
        self._phys = entry(step_energy, *self._phys_args, 0, *self._phys_sig, 0, self._phys_buf, o.dc, o.dc_sum)
        self._wm = np.zeros(X.N_WM, np.int64)
        self._cand = np.zeros_like(S.pend)
        self._xfer_pre = (T.origin, S.gb, S.dest, S.decision, S.m_viol, S.pend)
        usd = np.ascontiguousarray(sc.usd_per_gb, dtype=np.float64)
        self._xfer_net = (usd, sc.carbon_g_per_kwh, float(p.options.transfer_kwh_per_gb),
                          p.options.transfer_emissions == "mean")
        self._xfer = entry(X.step_transfers_sla, *self._xfer_pre, 0, 0, 0, self._wm, self._cand,
                           float(C.t0), float(E.STEP_S), 0, int(p.s0), *self._xfer_net, o.xfer)

    @property
    def done(self) -> bool:
        return self.prep is not None and self.prep.done

    @property
    def step_index(self) -> int:
        return int(self.prep.state.sc[E.SC_STEP])

    def _advance(self, actions, controls=None, battery=None) -> int:
        """Validate and apply ``actions`` (and ``controls``, ``battery``), run the step, fill :attr:`outcome`;
        returns the step."""
        p = self.prep
        if p is None:
            raise RuntimeError("call reset() first")
        S = p.state
        j = int(S.sc[E.SC_STEP])
        if p.done:
            raise RuntimeError("simulation is done")
        pn = int(S.sc[E.SC_PEND_N])
        a = check_actions(actions, pn, self.scenario.n_dc, p.options.single_action, self._pending_task)
        acts = self._actions
        if controls is not None:
            self._write_controls(controls, j)
        if battery is not None:
            p.battery.target_kw[:, j] = check_battery(battery, p.battery, self.scenario.n_dc)
        if isinstance(a, int):  # one action for every pending task
            acts[:max(pn, 1)] = a
        else:
            acts[:pn] = a
        T, C = p.tasks, p.ctx
        self._end(T, S, C, j, acts)
        o = self.outcome
        k = p.s0 + j
        self._phys(*self._phys_args, j, *self._phys_sig, k, self._phys_buf, o.dc, o.dc_sum)
        if p.battery is not None:
            self._battery_step(j, k)
        sc_ = S.sc
        self._xfer(*self._xfer_pre, int(sc_[E.SC_PEND_N]), int(sc_[E.SC_NEXT_ARRIVAL]), int(sc_[E.SC_STARTED]),
                   self._wm, self._cand, C.t0, E.STEP_S, j, p.s0, *self._xfer_net, o.xfer)
        o.step = k
        if j + 1 < p.n:
            self._begin(T, S, C, j + 1)
            self._publish(*self._publish_args, j + 1, p.s0)
        return j

    def _battery_step(self, j: int, k: int) -> None:
        """Step j of the batteries: grid energy prices the step's cost and carbon (``outcome``'s rows), exactly as
        the run results compute them (``sim_core.result``)."""
        o, sc = self.outcome, self.scenario
        dc = o.dc
        r_tot, r_cost, r_kg = (o.DC_NAMES.index(n) for n in ("total_kwh", "cost_usd", "carbon_kg"))
        last = B.step(self.prep.battery, j, dc[r_tot])
        grid = last[B.O_GRID]
        dc[r_cost] = grid * sc.price_usd_per_mwh[:, k] / 1000.0
        dc[r_kg] = grid * sc.carbon_g_per_kwh[:, k] / 1000.0
        o.dc_sum[r_cost] = dc[r_cost].sum()
        o.dc_sum[r_kg] = dc[r_kg].sum()

    def _write_controls(self, controls, j: int) -> None:
        """Validate the flexible-task controls and hand them to the engine (applied at the step start)."""
        p = self.prep
        S, T = p.state, p.tasks
        nf = int(S.sc[E.SC_FLEX_N])
        idx, val = check_controls(controls, t=p.ctx.t0 + E.STEP_S * j, flex=S.flex[:nf], status=S.status,
                                  fin=S.fin, interruptible=T.interruptible, min_scale=T.smin, max_scale=T.smax,
                                  st_started=E.ST_STARTED, st_paused=E.ST_PAUSED,
                                  describe=lambda i: f"task {i} (task_id {p.task_id[i]})")
        k = idx.shape[0]
        if k > S.ctl_task.shape[0]:  # (one control per controllable task at most: duplicates in a mapping cannot be)
            raise RunOptionsError(f"{k} controls for {S.ctl_task.shape[0]} controllable tasks")
        S.ctl_task[:k] = idx
        S.ctl_val[:k] = val
        S.sc[E.SC_CTL_N] = k

    def _pending_task(self, q: int) -> str:
        """Pending task ``q`` in an error message."""
        p = self.prep
        return f"the action for pending task {q} (task_id {p.task_id[p.state.pend[q]]})"

    def step(self, actions=None, controls=None, battery=None) -> tuple[dict, dict]:
        """Run one step. ``controls``: ``None`` or ``{task index: scale}`` over ``obs["flex_index"]`` (0 =
        pause, s > 0 = run at scale s: resume or rescale; docs/simulation.md "Flexible tasks"), applied at
        the start of the step before the actions. ``battery`` (a run with the ``battery`` option): None (the run's
        battery rule) or each site's target power this step, kW (> 0 charge, < 0 discharge, 0 idle; one number
        for every site or one per site), done as far as the battery's limits allow (``sim_core.battery``)."""
        j = self._advance(actions, controls, battery)
        info = self._step_info(j)
        return self.observation(), info

    def step_fast(self, actions=None, controls=None, battery=None):
        """Run one step without building the observation or info dicts; returns :attr:`outcome`
        (its arrays are overwritten by the next step: copy what you keep)."""
        self._advance(actions, controls, battery)
        return self.outcome

    def builtin_actions(self, name: str) -> np.ndarray:
        """Actions that built-in policy ``name`` would take now (for comparison/baselines)."""
        spec = policy_spec(name)
        code = spec.code
        if spec.stateful:
            raise RunOptionsError(f"{name!r} is a published baseline: it keeps a plan across steps and controls "
                                  "flexible tasks, so it runs whole (sim_core.run), not one step on another run's "
                                  "state")
        decide = importlib.import_module(spec.module).decide
        p = self.prep
        pn = int(p.state.sc[E.SC_PEND_N])
        acts = np.zeros(max(pn, 1), np.int32)
        if pn:
            # run on a copy of the round-robin counter so that asking does not change the run
            rr = int(p.state.sc[E.SC_RR])
            decide(p.tasks, p.state, p.ctx, p.info, None, code, int(p.state.sc[E.SC_STEP]), acts)
            p.state.sc[E.SC_RR] = rr
        return acts[:pn]

    def result(self):
        from .result import build_result

        return build_result(self.prep, "external")

    # -------------------------------------------------------------- views
    def forecast(self) -> dict:
        """What the policy is told now of the signals (the ``forecast``/``history`` part of
        :meth:`observation`): the latest issued forecast re-indexed to leads from the current step (lead h
        at index h - 1; NaN past that issue's horizon), fresh arrays; ``issued_step`` the bundle step it was
        issued at, ``issue_every_steps`` the cadence."""
        p = self.prep
        j = min(int(p.state.sc[E.SC_STEP]), p.n - 1)
        info = p.info
        self._issue(*self._issue_args, j)
        return {"model": p.options.forecast, "oracle": p.options.forecast == "oracle",
                "step_s": E.STEP_S, "horizon_steps": int(info.iopt[E.IO_H]),
                "issued_step": int(info.stamp[E.SIG_CARBON, 0]), "issue_every_steps": int(info.iopt[E.IO_EVERY]),
                "carbon_g_per_kwh": info.fc[E.SIG_CARBON].copy(), "price_usd_per_mwh": info.fc[E.SIG_PRICE].copy(),
                "published_steps": {"carbon_g_per_kwh": info.pub[E.SIG_CARBON].copy(),
                                    "price_usd_per_mwh": info.pub[E.SIG_PRICE].copy()}}

    def history(self) -> dict:
        """The actual signals of every bundle step up to now, (n_dc, now + 1) read-only views of the run's
        history buffer (the columns after now hold NaN until their step begins)."""
        p = self.prep
        k = p.s0 + min(int(p.state.sc[E.SC_STEP]), p.n - 1)
        out = {}
        for name, s in (("carbon_g_per_kwh", E.SIG_CARBON), ("price_usd_per_mwh", E.SIG_PRICE),
                        ("temp_c", E.SIG_TEMP), ("wetbulb_c", E.SIG_WETBULB)):
            v = p.info.hist[s, :, :k + 1]
            v.flags.writeable = False
            out[name] = v
        return out

    def observation(self) -> dict:
        """What a Python policy sees now: the pending tasks, the datacenters' state, the current
        signals, their history and the latest issued forecast (docs/simulation.md, "Information")."""
        p = self.prep
        S, T, C = p.state, p.tasks, p.ctx
        j = min(int(S.sc[E.SC_STEP]), p.n - 1)
        pn = int(S.sc[E.SC_PEND_N])
        idx = S.pend[:pn].copy()
        sc = self.scenario
        hist, k = p.info.hist, p.s0 + j
        return {
            "step": j + p.s0,
            "t_s": C.t0 + E.STEP_S * j,
            "n_pending": pn,
            "pending_index": idx,
            "pending_task_id": p.task_id[idx],
            "origin": T.origin[idx],
            "cpu_cores": T.cores[idx], "gpus": T.gpus[idx], "mem_gb": T.mem[idx],
            "bandwidth_gb": T.bw[idx], "duration_s": T.duration[idx],
            "arrival_s": T.arrival[idx], "deadline_s": T.deadline[idx],
            "locations": sc.locations,
            "capacity": C.cap.copy(),
            "available": C.cap - S.commit,
            "free_now": S.free.copy(),
            "servers_on": S.srv_on.sum(axis=1), "servers_waking": S.srv_wk.sum(axis=1),
            "queue_len": S.q_len.copy(), "in_transit": S.transit_n.copy(),
            "carbon_g_per_kwh": hist[E.SIG_CARBON, :, k].copy(), "price_usd_per_mwh": hist[E.SIG_PRICE, :, k].copy(),
            "temp_c": hist[E.SIG_TEMP, :, k].copy(), "wetbulb_c": hist[E.SIG_WETBULB, :, k].copy(),
            "history": self.history(), "forecast": self.forecast(),
            "delay_s_per_gb": C.delay_s_per_gb.copy(), "rtt_s": C.rtt_s.copy(),
            "usd_per_gb": sc.usd_per_gb.copy(), "allow_defer": p.options.allow_defer,
            **({} if p.battery is None else {"battery_soc_kwh": p.battery.soc_kwh.copy(),
                                             "battery_power_kw": p.battery.vec[:, B.B_P].copy(),
                                             "battery_capacity_kwh": p.battery.vec[:, B.B_CAP].copy()}),
            **self._flex_observation(idx),
        }

    def _flex_observation(self, idx: np.ndarray) -> dict:
        """The pending tasks' flexibility and the controllable tasks' state (docs/simulation.md)."""
        p = self.prep
        S, T = p.state, p.tasks
        f = S.flex[:int(S.sc[E.SC_FLEX_N])].copy()
        return {
            "max_delay_s": T.max_delay[idx], "interruptible": T.interruptible[idx], "checkpoint_s": T.ckpt[idx],
            "min_scale": T.smin[idx], "max_scale": T.smax[idx], "marginal_throughput": T.mthr[idx],
            # the controllable tasks: flexible, started and not finished (running, paused or waiting to resume)
            "flex_index": f, "flex_task_id": p.task_id[f], "flex_dest": S.dest[f],
            "flex_state": np.array(["running" if S.status[i] == E.ST_STARTED else
                                    "paused" if S.status[i] == E.ST_PAUSED else "resuming" for i in f], dtype=object),
            "flex_scale": S.scale[f] if f.size else np.zeros(0), "flex_finish_s": S.fin[f],
            "flex_remaining_s": S.rem[f] if f.size else np.zeros(0), "flex_deadline_s": T.deadline[f],
            "flex_interruptible": T.interruptible[f], "flex_checkpoint_s": T.ckpt[f], "flex_min_scale": T.smin[f],
            "flex_max_scale": T.smax[f], "flex_marginal_throughput": T.mthr[f],
        }

    def step_physics(self, j: int | None = None) -> dict:
        """Every physics output (``physics.OUT_NAMES``: power by component, temperatures, airflows,
        PLR, water) per datacenter, (n_dc,) arrays, for run step ``j`` (default: the last step
        run). The complete but slower view; ``outcome``/``info`` carry the totals."""
        p = self.prep
        if j is None:
            j = self.step_index - 1
        if not 0 <= j < self.step_index:
            raise ValueError(f"step {j} has not run yet")
        sc = self.scenario
        k = p.s0 + j
        part = [np.maximum(p.state.part[r][:, j:j + 1], 0.0) for r in range(3)]
        srv = p.state.srv[:, :, j:j + 1] if p.managed else None
        ph = physics_compute(sc.params, sc.cap_cores, sc.cap_gpus, sc.cap_mem_gb, *part,
                             sc.temp_c[:, k:k + 1], sc.wetbulb_c[:, k:k + 1], servers=srv)
        return {name: v[:, 0].copy() for name, v in ph.items()}

    def _step_info(self, j: int) -> dict:
        """The step's results as a dict of fresh arrays/floats (from :attr:`outcome`)."""
        p = self.prep
        S = p.state
        o = self.outcome
        info = {"step": p.s0 + j}
        for name, row in zip(o.DC_NAMES, o.dc, strict=True):
            info[name] = row.copy()
        # (x 0.25 and / 0.25 are exact in binary floating point)
        info["it_kw"] = info["it_kwh"] / 0.25
        info["total_kw"] = info["total_kwh"] / 0.25
        for name, v in zip(o.STEP_NAMES, o.xfer, strict=True):
            info[name] = int(v) if name in o.COUNT_NAMES else float(v)
        info["queue_len"] = S.m_queue[:, j].copy()
        info["in_transit"] = S.m_transit[:, j].copy()
        if p.battery is not None:
            for name, row in zip(B.OUT_NAMES, p.battery.last, strict=True):
                info[name] = row.copy()
        return info


__all__ = ["run", "Simulator", "Prepared", "policy_code"]
