"""The jitted step loop: arrivals, decisions, transit, queues, server power states, execution,
busy-time accounting.

Everything that Numba caches together lives in this one file (the cache is keyed on the file of
the caller): the step functions, the built-in rule policies and the loops that call them.

State is a structure of arrays packed in three namedtuples:

* ``Tasks``  (read-only task inputs, restricted to the run window, arrival-sorted)
* ``Ctx``    (read-only per-run context: capacities, signals, network, options)
* ``State``  (mutable: per-task outcome arrays, per-DC counters, per-step accumulators)

Times are seconds since the bundle's ``start_utc``; step j of the run covers
[T0 + 900 j, T0 + 900 (j + 1)) with T0 = 900 x (first step of the run).

Server power states (``Ctx.opts[OPT_MANAGED]``, docs/simulation.md "Server power states"): the
scheduler starts tasks only on servers that are on (or, once up, on servers it wakes), and
:func:`servers_at_boundary` switches idle servers off and keeps the spare pool on, once per step
and datacenter; ``State.srv`` books the time-weighted servers on and waking for the physics.

Task flexibility (bundle format 2; docs/simulation.md "Flexible tasks"): a policy may pause, resume and
rescale the flexible tasks (interruptible or elastic) that have started, through the per-step controls
``State.ctl_task`` / ``State.ctl_val`` (``PolicyView.ctl_task`` / ``ctl_scale`` / ``n_controls``);
:func:`flex_controls` applies them at the start of the step (the step boundary), un-booking the busy
time a task had booked ahead to its finish, and the scheduler starts the resumed segment like any
queued task (with the checkpoint overhead). The rule policies never write controls; the published
baselines that pause and rescale (:func:`decide_baseline`) write them like a user's policy.
"""

from __future__ import annotations

import math
from collections import namedtuple

import numpy as np
from numba import njit

STEP_S = 900.0
EPS = 1e-9

# task status codes
ST_NOT_ARRIVED = 0
ST_PENDING = 1
ST_TRANSIT = 2
ST_QUEUED = 3
ST_STARTED = 4
ST_UNSCHEDULABLE = 5
ST_PAUSED = 6  # started, then paused by a control: holds nothing, waits to be resumed

# built-in policy codes: module-level ints, which Numba freezes into the kernels at compile time
POLICY_LOCAL_ONLY = 0
POLICY_ROUND_ROBIN = 1
POLICY_MOST_AVAILABLE = 2
POLICY_LEAST_PENDING = 3
POLICY_LOWEST_CARBON = 4
POLICY_LOWEST_PRICE = 5
POLICY_LOWEST_UTILIZATION = 6
POLICY_RANDOM = 7
POLICY_DEFER_TO_GREENER = 8
#: name -> code: the one table of the built-in policies (``sim_core.POLICIES`` lists its names)
POLICY_CODES = {
    "local_only": POLICY_LOCAL_ONLY,
    "round_robin": POLICY_ROUND_ROBIN,
    "most_available": POLICY_MOST_AVAILABLE,
    "least_pending": POLICY_LEAST_PENDING,
    "lowest_carbon": POLICY_LOWEST_CARBON,
    "lowest_price": POLICY_LOWEST_PRICE,
    "lowest_utilization": POLICY_LOWEST_UTILIZATION,
    "random": POLICY_RANDOM,
    "defer_to_greener": POLICY_DEFER_TO_GREENER,
}
# the published carbon-aware baselines (docs/baselines.md): stateful, they keep a plan (:data:`Plan`) and
# control flexible tasks (pause / resume / rescale); run by :func:`run_baseline`
POLICY_WAIT_AWHILE = 9
POLICY_WAIT_AWHILE_INTERRUPTING = 10
POLICY_GAIA_LOWEST_CARBON_WINDOW = 11
POLICY_GAIA_CARBON_TIME = 12
POLICY_GAIA_RES_FIRST = 13
POLICY_CARBONSCALER = 14
POLICY_VCC = 15
POLICY_CARBONFLEX = 16
BASELINE_CODES = {
    "wait_awhile": POLICY_WAIT_AWHILE,
    "wait_awhile_interrupting": POLICY_WAIT_AWHILE_INTERRUPTING,
    "gaia_lowest_carbon_window": POLICY_GAIA_LOWEST_CARBON_WINDOW,
    "gaia_carbon_time": POLICY_GAIA_CARBON_TIME,
    "gaia_res_first": POLICY_GAIA_RES_FIRST,
    "carbonscaler": POLICY_CARBONSCALER,
    "vcc": POLICY_VCC,
    "carbonflex": POLICY_CARBONFLEX,
}
#: the rule policies (stateless, never control a task): :func:`run_builtin`
RULE_CODES = dict(POLICY_CODES)
POLICY_CODES.update(BASELINE_CODES)

# option slots in Ctx.opts
OPT_ALLOW_DEFER = 0
OPT_SINGLE_ACTION = 1
OPT_MANAGED = 2  # 1: servers have power states (run option power="managed"); 0: always on
OPT_CONTROLS = 3  # 1: a policy may pause / resume / rescale flexible tasks (never for the built-in policies)
N_OPTS = 4

# per-DC server layout in Ctx.srv_cfg (n_dc, N_SRV_CFG), from physics.server_layout and the parameters
CFG_N_C = 0  # CPU-only servers
CFG_N_G = 1  # GPU servers
CFG_CPS = 2  # cores per server
CFG_GPS = 3  # GPUs per GPU server
CFG_MPS = 4  # memory GB per server
CFG_WAKE_S = 5  # wake latency (s)
CFG_SPARE = 6  # spare servers kept on, per kind
CFG_HOSTED = 7  # 1 if the DC has servers (else its capacity is always on)
N_SRV_CFG = 8
# server kinds (columns of State.srv_on; rows 0-1 on, 2-3 waking of State.srv)
K_CPU = 0
K_GPU = 1
# wake groups: columns WK_A + kind and WK_B + kind of State.srv_wk, up at State.srv_twk[:, 0 / 1].
# B is the latest wake, A every earlier one still under way (up at the latest of their times).
WK_A = 0
WK_B = 2

# scalar slots in State.sc
SC_PEND_N = 0
SC_NEXT_ARRIVAL = 1
SC_SEQ = 2
SC_RR = 3
SC_INVALID = 4
SC_FORCED = 5
SC_STEP = 6  # next step to begin
SC_STARTED = 7  # tasks started (first starts; a resume is not a start)
SC_FLEX_N = 8  # length of State.flex (flexible tasks started and not finished)
SC_CTL_N = 9  # controls written for this step (State.ctl_task / ctl_val), reset when applied
SC_PAUSES = 10
SC_RESUMES = 11
SC_RESCALES = 12
SC_FORCED_RESUMES = 13  # paused tasks resumed by the engine so that they can still meet their deadline
SC_BAD_CTL = 14  # controls ignored (not a controllable task, or a value it cannot take)
SC_RSEQ = 15  # queue order of resumed / rescaled tasks (they go before the queued tasks)
N_SC = 16
#: queue order of a resumed or rescaled task: RSEQ_BASE + SC_RSEQ, below every first-join order (>= 0)
RSEQ_BASE = -(1 << 62)

Tasks = namedtuple("Tasks", ["arrival", "duration", "cores", "gpus", "mem", "bw", "deadline",
                             "origin", "u_rand",
                             # flexibility (bundle format 2): allowed delay (s, folded into ``deadline``),
                             # interruptible, checkpoint overhead per resume/rescale (s), scale range,
                             # marginal throughput of the scaling curve, and whether any of it applies (``flexible``)
                             "max_delay", "interruptible", "ckpt", "smin", "smax", "mthr", "flexible"])
#: ``carbon``/``price``: the window's actual signals (never handed to a policy: what a policy may see is
#: in :data:`Info`)
Ctx = namedtuple("Ctx", ["cap", "carbon", "price", "delay_s_per_gb", "rtt_s", "t0",
                         "n_steps", "opts", "qmin", "srv_cfg"])
State = namedtuple("State", [
    # per task
    "status", "dest", "decision", "ready", "start", "delay", "forced", "violated", "nxt", "seq",
    # per dc
    "free", "commit", "q_head", "q_tail", "q_len", "transit_n", "acc", "acc_run",
    # per dc: server power states (servers on and waking per kind, time all waking are up) and the
    # requests of the queued tasks
    "srv_on", "srv_wk", "srv_twk", "qdem",
    # per step: time-weighted servers on / waking per kind (4, n_dc, n_steps + 1)
    "srv",
    # per step
    "rel", "part", "diff", "run_part", "run_diff", "bucket_head", "bucket_tail",
    "m_queue", "m_transit", "m_pending",
    # misc
    "pend", "sc",
    # per task: finish of the current run segment (NaN until started, and while paused or waiting to resume)
    "fin",
    # flexible tasks (full size only when the run has flexible tasks and controls, else length 1): scale
    # (allocation / request), start of the current run segment, remaining work at its start (s at scale 1),
    # seconds booked in all segments, segments started, pauses, rescales
    "scale", "segs", "rem", "run_s", "nseg", "npause", "nrescale",
    # controllable tasks (started, not finished; first SC_FLEX_N entries) and this step's controls
    "flex", "ctl_task", "ctl_val",
    # per dc: tasks paused; per step: SLA violations decided (net), tasks paused at the end
    "n_paused", "m_viol", "m_paused",
])
# ---------------------------------------------------------------------------- information
# What a policy may know at run step j (bundle step k = s0 + j), docs/simulation.md "Information":
# the actual signals of every step <= k (the current step's value is a real-time signal), the prices
# a market has already published, and the latest issued forecast (issued at k_i = k - k mod IO_EVERY for
# steps k_i + 1 .. k_i + H, seen re-indexed to leads from k). Policies get only ``Info.hist`` (filled step
# by step: a column is written when its step begins, the columns after k hold NaN) and ``Info.fc``
# (rewritten from ``Info.fci`` at every step it is asked for): buffers that never hold a future
# actual unless the run's forecast model is ``oracle``. ``Info.act`` (the actual series) stays inside
# the kernels below.
N_SIG = 4  # signals in act/hist: carbon, price, temperature, wet-bulb
SIG_CARBON = 0
SIG_PRICE = 1
SIG_TEMP = 2
SIG_WETBULB = 3
N_FC = 2  # signals with a forecast: carbon, price (rows 0, 1 of act)
# forecast models (run option ``forecast``; sim_core.forecast.MODELS maps the names)
FC_ORACLE = 0
FC_PERSISTENCE = 1
FC_SEASONAL_DAY = 2
FC_SEASONAL_WEEK = 3
FC_CALIBRATED = 4
STEPS_PER_DAY = 96
# integer slots in Info.iopt
IO_MODEL = 0
IO_H = 1  # horizon in steps
IO_S0 = 2  # bundle step of run step 0
IO_KEY = 3  # 63-bit key of the forecast-error stream (from the run seed)
IO_WINDOW = 4  # defer_to_greener window in steps (clipped to the horizon + 1)
IO_EVERY = 5  # issue cadence in steps: forecasts are issued at bundle steps that are multiples of it
IO_KPAD = 6  # run steps of ``known`` before run step 0 (back to the issue step in force at the window's start)
N_IOPT = 7
# float slots in Info.fopt
FO_DEFER_Q = 0  # defer_to_greener quantile
N_FOPT = 1
# per-signal parameters in Info.par (N_FC, N_PAR)
PAR_MULT = 0  # 1: multiplicative error (forecast = actual x (1 + e)); 0: additive (actual + e)
PAR_FLOOR = 1  # smallest value a forecast takes (0 for carbon intensity, -inf for prices)
N_PAR = 2
#: ``act``/``hist`` (N_SIG, n_dc, bundle steps); ``fc`` (N_FC, n_dc, H): fc[s, d, h - 1] is what is
#: known at k of step k + h -- the forecast issued at the latest issue step k_i <= k (k_i = k - k mod
#: IO_EVERY), re-indexed to leads from now, NaN past the issued horizon k_i + H and past the bundle's end;
#: ``fci`` (N_FC, n_dc, H): that issued forecast, indexed by its own leads (fci[s, d, h - 1]: step k_i + h);
#: ``known`` (N_FC, n_dc, IO_KPAD + n): the last bundle step whose actual is known at run step j (index
#: IO_KPAD + j; >= k; beyond k for published day-ahead prices); ``inc`` (N_FC, n_dc, H): standard
#: deviations of the calibrated error's increments per lead; ``stamp`` (N_FC, 4): issue step and number of
#: leads of the forecast in ``fci``, bundle step and number of leads of the view in ``fc``.
Info = namedtuple("Info", ["act", "hist", "fc", "known", "inc", "par", "iopt", "fopt", "stamp", "pub", "fci"])

#: what a jitted policy receives: ``policy(view, actions)`` writes actions[q] for q < n_pending
#: (0 = defer, j + 1 = assign to datacenter j). Signals: ``now`` is the bundle step of this decision;
#: ``history[s, d, t]`` the actual of signal s (0 carbon g/kWh, 1 price USD/MWh, 2 temperature,
#: 3 wet-bulb degC) at bundle step t <= now (NaN for t > now); ``forecast[s, d, h - 1]`` (s = 0, 1) the
#: forecast of step now + h, h = 1..H, from the latest issue (run option ``forecast_issue_every_min``; NaN
#: past that issue's horizon and past the bundle's end); ``published[s, d]``
#: how many of those leads are published actuals (day-ahead prices); ``carbon_now``/``price_now`` =
#: history[0 / 1, :, now]; ``oracle``: True only when the run's forecast model is ``oracle``.
#: Flexible tasks (docs/simulation.md "Flexible tasks"): per-task attributes ``max_delay``,
#: ``interruptible``, ``checkpoint_s``, ``min_scale``, ``max_scale``, ``marginal_throughput`` (index by task,
#: like ``arrival``); ``flex``: the controllable tasks (started, not finished: running, paused or waiting to
#: resume), whose state is ``status[i]`` (``ST_*``), ``scale[i]``, ``finish[i]`` (of the current run
#: segment, NaN while paused or waiting) and ``remaining[i]`` (work left, s at scale 1, as of the start of
#: the current segment or the pause). Controls: write task indices into ``ctl_task[k]`` and target scales
#: into ``ctl_scale[k]`` (0 = pause, s > 0 = run at scale s: resume or rescale) for k < K <= len(ctl_task)
#: and set ``n_controls[0] = K``; they take effect at the start of the step.
PolicyView = namedtuple("PolicyView", [
    "step", "t", "pending", "arrival", "duration", "cores", "gpus", "mem", "bw", "deadline",
    "origin", "cap", "avail", "carbon_now", "price_now", "queue_len", "transit_n",
    "delay_s_per_gb", "rtt_s", "allow_defer", "now", "history", "forecast", "published", "oracle",
    "max_delay", "interruptible", "checkpoint_s", "min_scale", "max_scale", "marginal_throughput",
    "flex", "status", "scale", "finish", "remaining", "ctl_task", "ctl_scale", "n_controls",
])


def steps_major(shape, dtype=np.float64, fill=0) -> np.ndarray:
    """An array of logical shape ``(..., n_dc, n_steps)`` stored step-major: memory order
    ``(..., n_steps, n_dc)``, returned as the swapped view. The kernels touch every datacenter's value
    of one step together (the per-step loops over datacenters), so with this layout those values are
    adjacent in memory instead of one row of ``n_steps`` values apart: at 100+ datacenters a year's rows
    are ~280 kB apart and every access would miss the cache and the TLB. Values, indexing and the
    order of every sum are unchanged; only where each value lives in memory differs."""
    *lead, n_dc, n_steps = shape
    return np.swapaxes(np.full((*lead, n_steps, n_dc), fill, dtype), -1, -2)


def new_state(n_tasks: int, n_dc: int, n_steps: int, n_flex: int = 1) -> State:
    """Zeroed state; ``n_flex``: the size of the flexible-task arrays (the task count when the run has
    flexible tasks and controls, else 1). The per-step arrays are step-major (:func:`steps_major`)."""
    f = np.float64
    k = max(n_flex, 1)
    return State(
        status=np.zeros(n_tasks, np.int8), dest=np.full(n_tasks, -1, np.int32),
        decision=np.full(n_tasks, np.nan), ready=np.full(n_tasks, np.nan),
        start=np.full(n_tasks, np.nan), delay=np.zeros(n_tasks), forced=np.zeros(n_tasks, np.int8),
        violated=np.zeros(n_tasks, np.int8), nxt=np.full(n_tasks, -1, np.int32),
        seq=np.zeros(n_tasks, np.int64),
        free=np.zeros((n_dc, 3), f), commit=np.zeros((n_dc, 3), f),
        q_head=np.full((n_dc, 2), -1, np.int32), q_tail=np.full((n_dc, 2), -1, np.int32),
        q_len=np.zeros(n_dc, np.int64), transit_n=np.zeros(n_dc, np.int64),
        acc=np.zeros((3, n_dc), f), acc_run=np.zeros(n_dc, np.int64),
        srv_on=np.zeros((n_dc, 2), f), srv_wk=np.zeros((n_dc, 4), f), srv_twk=np.full((n_dc, 2), -np.inf),
        qdem=np.zeros((n_dc, 3), f), srv=steps_major((4, n_dc, n_steps + 1)),
        rel=steps_major((3, n_dc, n_steps + 1)), part=steps_major((3, n_dc, n_steps)),
        diff=steps_major((3, n_dc, n_steps + 1)), run_part=steps_major((n_dc, n_steps), np.int64),
        run_diff=steps_major((n_dc, n_steps + 1), np.int64),
        bucket_head=np.full(n_steps + 1, -1, np.int32), bucket_tail=np.full(n_steps + 1, -1, np.int32),
        m_queue=steps_major((n_dc, n_steps), np.int64), m_transit=steps_major((n_dc, n_steps), np.int64),
        m_pending=steps_major((n_dc, n_steps), np.int64),
        pend=np.zeros(max(n_tasks, 1), np.int32), sc=np.zeros(N_SC, np.int64),
        fin=np.full(n_tasks, np.nan),
        scale=np.ones(k), segs=np.full(k, np.nan), rem=np.zeros(k), run_s=np.zeros(k),
        nseg=np.zeros(k, np.int32), npause=np.zeros(k, np.int32), nrescale=np.zeros(k, np.int32),
        flex=np.zeros(k, np.int32), ctl_task=np.zeros(k, np.int32), ctl_val=np.zeros(k),
        n_paused=np.zeros(n_dc, np.int64), m_viol=steps_major((n_dc, n_steps), np.int64),
        m_paused=steps_major((n_dc, n_steps), np.int64),
    )


# ---------------------------------------------------------------------------- helpers
# Numba increfs/decrefs an array each time it is read from a tuple field inside a branchy loop
# (that was half of the stepping time). So every kernel below takes plain arrays: the public
# entry points read the namedtuple fields once per step and pass the arrays down.
@njit(cache=True, nogil=True, inline="always")
def fits(c, g, m, a, d):
    """A request (c cores, g GPUs, m GB) fits in row d of the (n_dc, 3) capacity array a."""
    return (c <= a[d, 0] + EPS) and (g <= a[d, 1] + EPS) and (m <= a[d, 2] + EPS)


@njit(cache=True, nogil=True, inline="always")
def fits_any(c, g, m, a):
    for d in range(a.shape[0]):  # noqa: SIM110 - generators are slow in Numba
        if fits(c, g, m, a, d):
            return True
    return False


@njit(cache=True, nogil=True, inline="always")
def _slack(need, avail, cap):
    return (avail - need) / cap if (need > 0.0 and cap > 0.0) else np.inf


@njit(cache=True, nogil=True, inline="always")
def fallback_dc(c, g, m, cap, avail):
    """DC (that can hold the request when empty) left least over-committed after taking it."""
    best = -1
    best_score = -np.inf
    for d in range(cap.shape[0]):
        if not fits(c, g, m, cap, d):
            continue
        score = min(_slack(c, avail[d, 0], cap[d, 0]), _slack(g, avail[d, 1], cap[d, 1]),
                    _slack(m, avail[d, 2], cap[d, 2]))
        if score > best_score:
            best_score = score
            best = d
    return best


@njit(cache=True, nogil=True, inline="always")
def _book(i, d, tdec, forced_flag, c, g, m, dest, decision, forced, commit):
    """Record the decision to run task i at datacenter d and commit its request there."""
    dest[i] = d
    decision[i] = tdec
    forced[i] = forced_flag
    commit[d, 0] += c
    commit[d, 1] += g
    commit[d, 2] += m


@njit(cache=True, nogil=True, inline="always")
def speedup(x, m):
    """Speed of an elastic task at scale x (allocation / request) relative to its speed at its request:
    1 + m (x - 1), with m the throughput each extra unit of allocation adds relative to the throughput per
    unit at the request (the task's ``marginal_throughput``: 1 = linear speed-up, 0 = none); exactly 1 at
    x = 1. This is CarbonScaler's marginal capacity curve (Hanafy et al., SIGMETRICS 2024: the
    throughput each additional server adds) with a constant marginal throughput, i.e. a linear curve
    (docs/simulation.md "Flexible tasks" states the simplification)."""
    return 1.0 + m * (x - 1.0)


# ---------------------------------------------------------------------------- server power states
# Managed power (SIMULATION.md §4a): a datacenter's servers are CPU-only or GPU servers
# (physics.server_layout), each on, waking or asleep. The scheduler starts a task only on capacity
# that is on, or on capacity that is waking once it is up; the work is consolidated onto as few
# servers as hold it (the allocation is an aggregate per DC, so "consolidated" means the capacity of
# the servers on must cover the allocated cores, GPUs and memory); idle servers beyond a spare pool
# are switched off at step boundaries. Counts are whole numbers held as floats.
@njit(cache=True, nogil=True, inline="always")
def _cap_of(cfg, cap, d, nc, ng, r):
    """Capacity of resource r (cores, GPUs, GB) on nc CPU-only and ng GPU servers of datacenter d."""
    if cfg[d, CFG_HOSTED] < 0.5:
        return cap[d, r]
    if r == 0:
        return min((nc + ng) * cfg[d, CFG_CPS], cap[d, 0])
    if r == 1:
        return min(ng * cfg[d, CFG_GPS], cap[d, 1])
    return min((nc + ng) * cfg[d, CFG_MPS], cap[d, 2])


@njit(cache=True, nogil=True, inline="always")
def _servers_for(cfg, d, c, g, m):
    """(GPU servers, servers in all) that hold an allocation of c cores, g GPUs and m GB when the work
    is packed onto as few servers as possible (GPU work on GPU servers), capped at what exists."""
    ng = 0.0
    if g > EPS and cfg[d, CFG_GPS] > 0.0:
        ng = min(np.ceil(g / cfg[d, CFG_GPS] - EPS), cfg[d, CFG_N_G])
    nt = ng
    if c > EPS:
        nt = max(nt, np.ceil(c / cfg[d, CFG_CPS] - EPS))
    if m > EPS and cfg[d, CFG_MPS] > 0.0:
        nt = max(nt, np.ceil(m / cfg[d, CFG_MPS] - EPS))
    nt = min(nt, cfg[d, CFG_N_C] + cfg[d, CFG_N_G])
    # CPU-only servers first for the non-GPU part; GPU servers when those run out
    ng = max(ng, nt - cfg[d, CFG_N_C])
    return ng, nt


@njit(cache=True, nogil=True, inline="always")
def _book_wake(srv, d, kind, cnt, s, wake_s, t1, j):
    """Book ``cnt`` servers of ``kind`` woken at time s of step j (which ends at t1): waking for
    ``wake_s`` seconds, then on (a wake at most one step long spills at most into step j + 1)."""
    w_end = s + wake_s
    w_in = min(w_end, t1) - s
    srv[kind, d, j] += cnt * (t1 - s - w_in) / STEP_S
    srv[2 + kind, d, j] += cnt * w_in / STEP_S
    if w_end > t1:
        carry = cnt * (w_end - t1) / STEP_S
        srv[2 + kind, d, j + 1] += carry
        srv[kind, d, j + 1] -= carry  # (the boundary count of step j + 1 includes them as on)


@njit(cache=True, nogil=True, inline="always")
def _waking(srv_wk, d, kind):
    """Servers of ``kind`` waking in DC d (both wake groups)."""
    return srv_wk[d, kind] + srv_wk[d, 2 + kind]


@njit(cache=True, nogil=True, inline="always")
def _wake_for(cfg, d, c, g, m, srv_on, srv_wk):
    """Servers (CPU-only, GPU) to wake so that the servers on or waking hold c cores, g GPUs, m GB."""
    ng, nt = _servers_for(cfg, d, c, g, m)
    a_c = srv_on[d, K_CPU] + _waking(srv_wk, d, K_CPU)
    a_g = srv_on[d, K_GPU] + _waking(srv_wk, d, K_GPU)
    dg = max(ng - a_g, 0.0)
    rest = max(nt - a_g - dg - a_c, 0.0)
    dc = min(rest, max(cfg[d, CFG_N_C] - a_c, 0.0))
    dg = min(dg + rest - dc, max(cfg[d, CFG_N_G] - a_g, 0.0))
    return dc, dg


@njit(cache=True, nogil=True)
def _caps_on(cfg, cap, d, srv_on, srv_wk, out):
    """Capacity (cores, GPUs, GB) of DC d's servers on (out[0:3]), on or in wake group A (out[3:6]),
    on or in group B (out[6:9]) and on or waking (out[9:12])."""
    nc, ng = srv_on[d, K_CPU], srv_on[d, K_GPU]
    for grp in range(4):
        xc = nc + (srv_wk[d, WK_A + K_CPU] if grp & 1 else 0.0) + (srv_wk[d, WK_B + K_CPU] if grp & 2 else 0.0)
        xg = ng + (srv_wk[d, WK_A + K_GPU] if grp & 1 else 0.0) + (srv_wk[d, WK_B + K_GPU] if grp & 2 else 0.0)
        k = 3 * grp
        out[k] = _cap_of(cfg, cap, d, xc, xg, 0)
        out[k + 1] = _cap_of(cfg, cap, d, xc, xg, 1)
        out[k + 2] = _cap_of(cfg, cap, d, xc, xg, 2)


@njit(cache=True, nogil=True, inline="always")
def _start_after_wake(caps, a0, a1, a2, s, t_a, t_b):
    """Earliest start, not before s, on the servers on plus wake group A (up at t_a), group B (up at
    t_b) or both, for an allocation a0/a1/a2; inf when even both groups are too small."""
    t = np.inf
    if a0 <= caps[3] + EPS and a1 <= caps[4] + EPS and a2 <= caps[5] + EPS:
        t = max(s, t_a)
    if a0 <= caps[6] + EPS and a1 <= caps[7] + EPS and a2 <= caps[8] + EPS:
        t = min(t, max(s, t_b))
    if t == np.inf and a0 <= caps[9] + EPS and a1 <= caps[10] + EPS and a2 <= caps[11] + EPS:
        t = max(s, max(t_a, t_b))
    return t


@njit(cache=True, nogil=True, inline="always")
def _new_wake_group(srv_wk, srv_twk, d, dc, dg, t_up):
    """Start waking dc CPU-only and dg GPU servers, up at t_up: they become group B; an earlier
    group B joins group A (which is then up at the later of the two times)."""
    if srv_wk[d, WK_B + K_CPU] + srv_wk[d, WK_B + K_GPU] > 0.0:
        srv_wk[d, WK_A + K_CPU] += srv_wk[d, WK_B + K_CPU]
        srv_wk[d, WK_A + K_GPU] += srv_wk[d, WK_B + K_GPU]
        srv_twk[d, 0] = max(srv_twk[d, 0], srv_twk[d, 1])
    srv_wk[d, WK_B + K_CPU] = dc
    srv_wk[d, WK_B + K_GPU] = dg
    srv_twk[d, 1] = t_up


@njit(cache=True, nogil=True)
def _wake_now(cfg, cap, d, c, g, m, s, t1, j, srv_on, srv_wk, srv_twk, srv, caps):
    """Wake, at time s of step j, the servers DC d lacks to hold c cores, g GPUs and m GB on servers
    on or waking (consolidated); refreshes ``caps`` (:func:`_caps_on`). (Out of the scheduler's loop:
    it runs only when servers must be woken.)"""
    dc, dg = _wake_for(cfg, d, c, g, m, srv_on, srv_wk)
    wake_s = cfg[d, CFG_WAKE_S]
    if dc > 0.0 or dg > 0.0:
        if wake_s > 0.0:
            _new_wake_group(srv_wk, srv_twk, d, dc, dg, s + wake_s)
            _book_wake(srv, d, K_CPU, dc, s, wake_s, t1, j)
            _book_wake(srv, d, K_GPU, dg, s, wake_s, t1, j)
        else:  # instant wake
            srv_on[d, K_CPU] += dc
            srv_on[d, K_GPU] += dg
            srv[K_CPU, d, j] += dc * (t1 - s) / STEP_S
            srv[K_GPU, d, j] += dg * (t1 - s) / STEP_S
    _caps_on(cfg, cap, d, srv_on, srv_wk, caps)


@njit(cache=True, nogil=True, inline="always")
def servers_at_boundary(d, j, t0, n, cap, free, rel, qdem, cfg, srv_on, srv_wk, srv_twk, srv):
    """Power states of datacenter d at the end of step j (boundary t_{j+1}), once per step.

    Wakes that are complete by then turn on (a wake still under way becomes group A). The demand
    after the boundary is the allocation still running then plus the queued requests (capped at
    the capacity); the target is the consolidated server count for it plus the spare pool, per
    kind. Servers on beyond the target are switched off, never below what the running allocation
    needs (no running task is interrupted); servers short of it are woken at the boundary (group B).
    Books the count of step j + 1 into ``srv``.
    """
    tb = t0 + STEP_S * (j + 1)
    for grp in range(2):
        if srv_twk[d, grp] <= tb:
            for k in range(2):
                srv_on[d, k] += srv_wk[d, 2 * grp + k]
                srv_wk[d, 2 * grp + k] = 0.0
            srv_twk[d, grp] = -np.inf
    if srv_wk[d, WK_B + K_CPU] + srv_wk[d, WK_B + K_GPU] > 0.0:  # still waking: joins group A
        srv_wk[d, WK_A + K_CPU] += srv_wk[d, WK_B + K_CPU]
        srv_wk[d, WK_A + K_GPU] += srv_wk[d, WK_B + K_GPU]
        srv_wk[d, WK_B + K_CPU] = 0.0
        srv_wk[d, WK_B + K_GPU] = 0.0
        srv_twk[d, 0] = max(srv_twk[d, 0], srv_twk[d, 1])
        srv_twk[d, 1] = -np.inf
    wk_c = _waking(srv_wk, d, K_CPU)
    wk_g = _waking(srv_wk, d, K_GPU)
    run0 = cap[d, 0] - free[d, 0]
    run1 = cap[d, 1] - free[d, 1]
    run2 = cap[d, 2] - free[d, 2]
    if j + 1 < n:
        run0 -= rel[0, d, j + 1]
        run1 -= rel[1, d, j + 1]
        run2 -= rel[2, d, j + 1]
    # servers on that the running work needs
    rg, rt = _servers_for(cfg, d, run0, run1, run2)
    # target: running + queued, plus the spare pool, per kind
    tg, tt = _servers_for(cfg, d, min(run0 + max(qdem[d, 0], 0.0), cap[d, 0]),
                          min(run1 + max(qdem[d, 1], 0.0), cap[d, 1]), min(run2 + max(qdem[d, 2], 0.0), cap[d, 2]))
    spare = cfg[d, CFG_SPARE]
    tgt_g = min(tg + spare, cfg[d, CFG_N_G]) if cfg[d, CFG_N_G] > 0.0 else 0.0
    tgt_c = min(tt - tg + spare, cfg[d, CFG_N_C])
    # switch off servers on beyond the target (waking ones finish waking)
    on_c = max(min(srv_on[d, K_CPU], tgt_c - wk_c), 0.0)
    on_g = max(min(srv_on[d, K_GPU], tgt_g - wk_g), 0.0)
    # ... but never the servers that hold running work
    on_g = max(on_g, min(rg, srv_on[d, K_GPU]))
    short = rt - on_c - on_g
    if short > 0.0:
        add = min(short, srv_on[d, K_CPU] - on_c)
        on_c += add
        on_g = min(on_g + short - add, srv_on[d, K_GPU])
    srv_on[d, K_CPU] = on_c
    srv_on[d, K_GPU] = on_g
    # the count of step j + 1 (servers on or still waking at the boundary) ...
    srv[K_CPU, d, j + 1] += on_c + wk_c
    srv[K_GPU, d, j + 1] += on_g + wk_g
    # ... and wakes at the boundary up to the target
    wake_s = cfg[d, CFG_WAKE_S]
    dc = max(tgt_c - on_c - wk_c, 0.0)
    dg = max(tgt_g - on_g - wk_g, 0.0)
    if (dc > 0.0 or dg > 0.0) and j + 1 < n:
        if wake_s > 0.0:
            _new_wake_group(srv_wk, srv_twk, d, dc, dg, tb + wake_s)
            _book_wake(srv, d, K_CPU, dc, tb, wake_s, tb + STEP_S, j + 1)
            _book_wake(srv, d, K_GPU, dg, tb, wake_s, tb + STEP_S, j + 1)
        else:
            srv_on[d, K_CPU] += dc
            srv_on[d, K_GPU] += dg
            srv[K_CPU, d, j + 1] += dc
            srv[K_GPU, d, j + 1] += dg


@njit(cache=True, nogil=True)
def _route_decided(j, T_origin, T_bw, delay_s_per_gb, rtt_s, t0, n_steps, pend, status, dest, decision,
                   delay, ready, nxt, transit_n, bucket_head, bucket_tail, sc):
    """Send the pending tasks just decided on their way and drop them from the pending list.

    Each is appended, in pending order, to the arrival bucket of the step in which it is ready:
    this step's bucket (drained right after) when local or the transfer ends within the step.
    """
    t1 = t0 + STEP_S * (j + 1)
    n = sc[SC_PEND_N]
    k = 0
    for q in range(n):
        i = pend[q]
        d = dest[i]
        if d < 0:
            pend[k] = i
            k += 1
            continue
        o = T_origin[i]
        dl = 0.0 if d == o else T_bw[i] * delay_s_per_gb[o, d] + rtt_s[o, d]
        delay[i] = dl
        rdy = decision[i] + dl
        ready[i] = rdy
        if rdy < t1:
            jb = j
            status[i] = ST_QUEUED  # joins its queue when this step's bucket is drained
        else:
            status[i] = ST_TRANSIT
            transit_n[d] += 1
            # Guard: the bucket index comes from data (a huge, infinite or NaN delay from a bad
            # network row). Compare as a float first, so that only values in [j + 1, n_steps) are
            # ever converted to an integer; identical to max(floor(x), j + 1) for valid delays.
            x = (rdy - t0) / STEP_S
            if not x < n_steps:  # still in transit when the run ends (also inf and NaN)
                continue
            jb = int(math.floor(x)) if x >= j + 1 else j + 1
            if jb >= n_steps:
                continue
        nxt[i] = -1
        tail = bucket_tail[jb]
        if tail < 0:
            bucket_head[jb] = i
        else:
            nxt[tail] = i
        bucket_tail[jb] = i
    sc[SC_PEND_N] = k


@njit(cache=True, nogil=True)
def _drain_bucket(j, T_cores, T_gpus, T_mem, status, dest, nxt, seq, q_head, q_tail, q_len, transit_n, qdem,
                  bucket_head, bucket_tail, sc):
    """Append the tasks of step j's arrival bucket, in order, to their destination's FCFS queue
    (CPU-only or GPU list) and add their requests to its queued demand; a task arriving from
    transit stops counting as in transit."""
    i = bucket_head[j]
    while i >= 0:
        nx = nxt[i]
        d = dest[i]
        if status[i] == ST_TRANSIT:
            transit_n[d] -= 1
        qdem[d, 0] += T_cores[i]
        qdem[d, 1] += T_gpus[i]
        qdem[d, 2] += T_mem[i]
        cls = 1 if T_gpus[i] > 0.0 else 0
        seq[i] = sc[SC_SEQ]
        sc[SC_SEQ] += 1
        nxt[i] = -1
        tail = q_tail[d, cls]
        if tail < 0:
            q_head[d, cls] = i
        else:
            nxt[tail] = i
        q_tail[d, cls] = i
        q_len[d] += 1
        status[i] = ST_QUEUED
        i = nx
    bucket_head[j] = -1
    bucket_tail[j] = -1


@njit(cache=True, nogil=True, inline="always")
def _min_nan(m, v):
    """min(m, v) as numpy's ``min`` reduces: a NaN on either side is the result."""
    if m != m:
        return m
    return v if (v != v or v < m) else m


@njit(cache=True, nogil=True)
def queue_minima(cores, gpus, mem, out):
    """``out`` = the smallest request per queue class, [cpu: cores, -, mem, gpu: cores, gpus, mem] (the
    scheduler's ``qmin``), each 0 when the class has no task; a task is a GPU task when it asks gpus > 0."""
    m0 = m2 = m3 = m4 = m5 = np.inf
    n_cpu = 0
    n_gpu = 0
    for i in range(cores.shape[0]):
        if gpus[i] <= 0.0:
            n_cpu += 1
            m0 = _min_nan(m0, cores[i])
            m2 = _min_nan(m2, mem[i])
        else:  # (also a NaN gpus: numpy's ``~(gpus <= 0)``)
            n_gpu += 1
            m3 = _min_nan(m3, cores[i])
            m4 = _min_nan(m4, gpus[i])
            m5 = _min_nan(m5, mem[i])
    out[:] = 0.0
    if n_cpu:
        out[0] = m0
        out[2] = m2
    if n_gpu:
        out[3] = m3
        out[4] = m4
        out[5] = m5


@njit(cache=True, nogil=True, inline="always")
def schedule(T, S, C, j, managed, ctl_on):
    """Every datacenter's queue, FCFS with backfill: in queue order, start every task that fits the
    free capacity. (One call per step for all datacenters: the arrays are passed once.)

    The queue is kept as two FCFS lists (CPU-only and GPU tasks) merged by join order; a list is
    skipped once the free capacity is below the smallest request of any task in it (exactly the
    same starts as a single-list scan, without walking tasks that cannot fit). A started task holds
    its capacity until the first step boundary at or after its finish; its busy time is booked
    exactly: fractions of its first and last steps in ``part``, whole steps between via ``diff``.

    ``managed`` (server power states): a task that fits the free capacity starts at
    max(step start, ready time) if it fits on the servers that are on; else, if it fits on the
    servers on or waking, when the waking servers are up; else servers are woken now (at its ready
    time) for it and for the tasks before it still waiting for servers in this step, and it starts
    when they are up. A start that would fall after this step leaves the task queued (it starts in
    the next step, when the servers are up; its capacity is not held meanwhile), so that start time,
    busy time, SLA and the per-step counters all follow the real start. Without ``managed`` every
    server is on and this is the plain FCFS with backfill.

    A queued task that started before (a resumed or rescaled flexible task, ahead of the first-time
    tasks in its list) asks its request x its scale and runs a segment of checkpoint overhead +
    remaining work / speed-up at its scale (:func:`speedup`); its first start time is kept, its SLA is
    re-decided (``m_viol`` counts the net change in the step). ``ctl_on``: flexible tasks that start join
    the controllable list ``flex``.

    Inlined into its caller (Numba IR; ``benchmarks/bench_vector_env.py`` prints the step's fixed cost): a
    call passing these ~45 arrays cost ≈ 0.6 µs a step (measured with no datacenter at all), more than an
    empty step's queue work.
    """
    T_cores, T_gpus, T_mem, T_duration, T_deadline = T.cores, T.gpus, T.mem, T.duration, T.deadline
    T_ckpt, T_mthr, T_flexible = T.ckpt, T.mthr, T.flexible
    ready, start, status, violated, nxt, seq = S.ready, S.start, S.status, S.violated, S.nxt, S.seq
    q_head, q_tail, q_len, free, rel, part, diff = S.q_head, S.q_tail, S.q_len, S.free, S.rel, S.part, S.diff
    run_part, run_diff, qdem, srv_on, srv_wk, srv_twk, srv = (S.run_part, S.run_diff, S.qdem, S.srv_on, S.srv_wk,
                                                              S.srv_twk, S.srv)
    fin, scale, segs, rem, run_s, nseg, flex, m_viol, sc = (S.fin, S.scale, S.segs, S.rem, S.run_s, S.nseg, S.flex,
                                                            S.m_viol, S.sc)
    qmin, t0, n, cap, cfg = C.qmin, C.t0, C.n_steps, C.cap, C.srv_cfg
    caps = np.empty(12)
    for d in range(cap.shape[0]):
        cur0 = q_head[d, 0]
        cur1 = q_head[d, 1]
        if cur0 < 0 and cur1 < 0:  # empty queue: nothing to start (what the loop below would conclude)
            if q_len[d] == 0:
                qdem[d, 0] = 0.0
                qdem[d, 1] = 0.0
                qdem[d, 2] = 0.0
            continue
        prev0 = -1
        prev1 = -1
        q = qmin
        t_j = t0 + STEP_S * j
        t1 = t_j + STEP_S
        # managed: capacities on / on or waking (caps), requests waiting for servers in this step
        w0 = w1 = w2 = 0.0
        if managed:
            _caps_on(cfg, cap, d, srv_on, srv_wk, caps)
        while True:
            if cur0 >= 0 and (free[d, 0] < q[0] - EPS or free[d, 2] < q[2] - EPS):
                cur0 = -1
            if cur1 >= 0 and (free[d, 0] < q[3] - EPS or free[d, 1] < q[4] - EPS or free[d, 2] < q[5] - EPS):
                cur1 = -1
            if cur0 < 0 and cur1 < 0:
                break
            if cur1 < 0 or (cur0 >= 0 and seq[cur0] < seq[cur1]):
                k, i, prev = 0, cur0, prev0
            else:
                k, i, prev = 1, cur1, prev1
            nx = nxt[i]
            c, g, m = T_cores[i], T_gpus[i], T_mem[i]
            resumed = start[i] == start[i]  # started before: a flexible task resuming (or rescaled)
            if resumed:
                x = scale[i]
                c, g, m = c * x, g * x, m * x
            ok = fits(c, g, m, free, d)
            if ok:
                s = max(t_j, ready[i])
                if managed:
                    a0 = cap[d, 0] - free[d, 0] + c  # allocation with this task
                    a1 = cap[d, 1] - free[d, 1] + g
                    a2 = cap[d, 2] - free[d, 2] + m
                    if a0 > caps[0] + EPS or a1 > caps[1] + EPS or a2 > caps[2] + EPS:  # not on the servers on
                        if a0 + w0 > caps[9] + EPS or a1 + w1 > caps[10] + EPS or a2 + w2 > caps[11] + EPS:
                            _wake_now(cfg, cap, d, a0 + w0, a1 + w1, a2 + w2, s, t1, j, srv_on, srv_wk, srv_twk, srv,
                                      caps)
                        if a0 > caps[0] + EPS or a1 > caps[1] + EPS or a2 > caps[2] + EPS:
                            # on servers that are waking: when (the first group that holds it) is up
                            s = _start_after_wake(caps, a0, a1, a2, s, srv_twk[d, 0], srv_twk[d, 1])
                    if s >= t1:  # up only after this step: stays queued, counted as waiting for servers
                        ok = False
                        w0 += c
                        w1 += g
                        w2 += m
            if ok:
                # unlink from list k
                if prev < 0:
                    q_head[d, k] = nx
                else:
                    nxt[prev] = nx
                if q_tail[d, k] == i:
                    q_tail[d, k] = prev
                nxt[i] = -1
                # start (at s: max(step start, ready time), or later for a server that was waking)
                if resumed:  # a new run segment: checkpoint overhead + the remaining work at this scale
                    seg = T_ckpt[i] + rem[i] / speedup(scale[i], T_mthr[i])
                    f = s + seg
                    segs[i] = s
                    nseg[i] += 1
                    run_s[i] += seg
                    late = 1 if f > T_deadline[i] else 0
                    m_viol[d, j] += late - violated[i]
                    violated[i] = late
                else:
                    f = s + T_duration[i]
                    start[i] = s
                    sc[SC_STARTED] += 1
                    if f > T_deadline[i]:
                        violated[i] = 1
                        m_viol[d, j] += 1
                    if ctl_on and T_flexible[i]:  # controllable from now on
                        flex[sc[SC_FLEX_N]] = i
                        sc[SC_FLEX_N] += 1
                        segs[i] = s
                        rem[i] = T_duration[i]
                        nseg[i] = 1
                        run_s[i] = T_duration[i]
                fin[i] = f
                status[i] = ST_STARTED
                q_len[d] -= 1
                qdem[d, 0] -= c
                qdem[d, 1] -= g
                qdem[d, 2] -= m
                # first boundary at or after the finish. Guard: f comes from data (an infinite or
                # huge duration): only values in (j, n] are converted to an integer, the rest is
                # clamped to j + 1 (a finish at or before this step's start) or n + 1 (past the window,
                # also NaN), which books exactly what any boundary beyond n would; so jr is in
                # j + 1 .. n + 1 and every index below (jr < n, jf = jr - 1, min(jf, n)) is in range.
                y = (f - t0) / STEP_S
                if y <= j:
                    jr = j + 1
                elif y <= n:
                    jr = int(math.ceil(y))
                else:
                    jr = n + 1
                jf = jr - 1  # last step overlapped
                for r in range(3):
                    v = c if r == 0 else (g if r == 1 else m)
                    free[d, r] -= v
                    if jr < n:
                        rel[r, d, jr] += v
                    if v == 0.0:
                        continue
                    if jf == j:
                        part[r, d, j] += v * (f - s) / STEP_S
                    else:
                        part[r, d, j] += v * (t0 + STEP_S * (j + 1) - s) / STEP_S
                        if jf < n:
                            part[r, d, jf] += v * (f - (t0 + STEP_S * jf)) / STEP_S
                        diff[r, d, j + 1] += v
                        diff[r, d, min(jf, n)] -= v
                run_part[d, j] += 1
                if jf > j:
                    if jf < n:
                        run_part[d, jf] += 1
                    run_diff[d, j + 1] += 1
                    run_diff[d, min(jf, n)] -= 1
            else:
                prev = i
            if k == 0:
                cur0, prev0 = nx, prev
            else:
                cur1, prev1 = nx, prev
        if q_len[d] == 0:  # (no rounding residue of the running sums survives an empty queue)
            qdem[d, 0] = 0.0
            qdem[d, 1] = 0.0
            qdem[d, 2] = 0.0


# ---------------------------------------------------------------------------- flexible tasks
# Controls take effect at the start t_j of the step that applies them (a step boundary, where capacity is
# released anyway): a pause stops a running segment at t_j and un-books what it had booked ahead; a
# resume or a rescale puts the task back at the head of its datacenter's queue (after the resumed tasks
# already waiting), where the scheduler starts its next segment when the capacity (and the servers) hold
# it. A task is never moved to another datacenter.
@njit(cache=True, nogil=True)
def _unbook(d, j, t0, n, c, g, m, f, free, commit, rel, part, diff, run_part, run_diff):
    """Take back what a run segment (allocation c, g, m at datacenter d, finishing at f, after the start
    t_j of step j, started before t_j) booked for steps j onward: its busy time and running count there,
    and the release of its capacity, which is freed now. The indices and amounts are computed exactly as
    the scheduler computed them when it booked the segment (``schedule``), so the booking from t_j on
    cancels to rounding error, and nothing before t_j changes."""
    y = (f - t0) / STEP_S  # > j (f > t_j); past the window (also inf, NaN): n + 1
    jr = int(math.ceil(y)) if y <= n else n + 1
    jf = jr - 1  # last step overlapped, >= j
    te = t0 + STEP_S * jf
    for r in range(3):
        v = c if r == 0 else (g if r == 1 else m)
        free[d, r] += v
        commit[d, r] -= v
        if jr < n:
            rel[r, d, jr] -= v
        if v == 0.0:
            continue
        diff[r, d, j] -= v  # whole steps j .. jf - 1 (a no-op pair when jf == j)
        diff[r, d, min(jf, n)] += v
        if jf < n:
            part[r, d, jf] -= v * (f - te) / STEP_S
    run_diff[d, j] -= 1
    run_diff[d, min(jf, n)] += 1
    if jf < n:
        run_part[d, jf] -= 1


@njit(cache=True, nogil=True)
def _stop_segment(i, j, t0, n, T_cores, T_gpus, T_mem, T_ckpt, T_mthr, dest, violated, fin, scale, segs, rem,
                  run_s, nseg, free, commit, rel, part, diff, run_part, run_diff, m_viol):
    """Stop task i's running segment at the start t_j of step j: its remaining work (s at scale 1) is what
    the segment had not done by t_j (nothing during the checkpoint overhead a resumed segment starts
    with), the booking from t_j on is taken back, and its SLA is undecided again (a violation decided at
    its start is withdrawn in this step, ``m_viol``)."""
    t = t0 + STEP_S * j
    d = dest[i]
    x = scale[i]
    f = fin[i]
    w0 = segs[i] + (T_ckpt[i] if nseg[i] > 1 else 0.0)  # the work starts after the overhead
    if t > w0:
        rem[i] = max(rem[i] - (t - w0) * speedup(x, T_mthr[i]), 0.0)
    run_s[i] -= f - t
    _unbook(d, j, t0, n, T_cores[i] * x, T_gpus[i] * x, T_mem[i] * x, f, free, commit, rel, part, diff, run_part,
            run_diff)
    if violated[i]:
        violated[i] = 0
        m_viol[d, j] -= 1
    fin[i] = np.nan


@njit(cache=True, nogil=True)
def _requeue(i, T_cores, T_gpus, T_mem, status, dest, scale, nxt, seq, q_head, q_tail, q_len, qdem, qmin, commit, sc):
    """Queue task i again at its datacenter, at its scale, ahead of the tasks queued for the first time
    (after the resumed ones already waiting): its request joins the queued demand and the commitment."""
    d = dest[i]
    x = scale[i]
    c, g, m = T_cores[i] * x, T_gpus[i] * x, T_mem[i] * x
    status[i] = ST_QUEUED
    seq[i] = RSEQ_BASE + sc[SC_RSEQ]
    sc[SC_RSEQ] += 1
    cls = 1 if T_gpus[i] > 0.0 else 0
    prev = -1
    cur = q_head[d, cls]
    while cur >= 0 and seq[cur] < 0:
        prev = cur
        cur = nxt[cur]
    nxt[i] = cur
    if prev < 0:
        q_head[d, cls] = i
    else:
        nxt[prev] = i
    if cur < 0:
        q_tail[d, cls] = i
    q_len[d] += 1
    qdem[d, 0] += c
    qdem[d, 1] += g
    qdem[d, 2] += m
    commit[d, 0] += c
    commit[d, 1] += g
    commit[d, 2] += m
    # the scheduler skips a list once the free capacity is below its smallest request: a task scaled
    # down can be smaller than any first-time request
    if cls == 0:
        qmin[0] = min(qmin[0], c)
        qmin[2] = min(qmin[2], m)
    else:
        qmin[3] = min(qmin[3], c)
        qmin[4] = min(qmin[4], g)
        qmin[5] = min(qmin[5], m)


@njit(cache=True, nogil=True)
def flex_controls(j, t0, n, T_deadline, T_cores, T_gpus, T_mem, T_ckpt, T_mthr, T_intr, T_smin, T_smax,
                  T_flexible, status, dest, violated, fin, scale, segs, rem, run_s, nseg, npause, nrescale, flex,
                  ctl_task, ctl_val, nxt, seq, q_head, q_tail, q_len, qdem, qmin, free, commit, rel, part, diff,
                  run_part, run_diff, n_paused, m_viol, sc):
    """At the start t_j of step j: apply this step's controls
    (``ctl_task[k]`` -> target scale ``ctl_val[k]``: 0 pauses a running interruptible task; s in
    [min_scale, max_scale] resumes a paused task at scale s, or rescales a running one (a stop and a
    resume at the new scale); anything else is ignored and counted in ``SC_BAD_CTL``), then resume every
    task paused in an earlier step that could not meet its deadline if it waited one more step
    (``SC_FORCED_RESUMES``; a pause therefore lasts at least until the next step)."""
    t = t0 + STEP_S * j
    n_tasks = status.shape[0]
    nc = min(sc[SC_CTL_N], ctl_task.shape[0])
    sc[SC_CTL_N] = 0
    for q in range(nc):
        i = ctl_task[q]
        x = ctl_val[q]
        ok = False
        if 0 <= i < n_tasks and T_flexible[i]:
            running = status[i] == ST_STARTED and fin[i] > t
            paused = status[i] == ST_PAUSED
            if x == 0.0:
                if running and T_intr[i]:
                    _stop_segment(i, j, t0, n, T_cores, T_gpus, T_mem, T_ckpt, T_mthr, dest, violated, fin, scale,
                                  segs, rem, run_s, nseg, free, commit, rel, part, diff, run_part, run_diff, m_viol)
                    status[i] = ST_PAUSED
                    segs[i] = t  # (while paused: the pause time)
                    npause[i] += 1
                    n_paused[dest[i]] += 1
                    sc[SC_PAUSES] += 1
                    ok = True
            elif x >= T_smin[i] and x <= T_smax[i]:  # (False for NaN)
                if paused:
                    n_paused[dest[i]] -= 1
                    scale[i] = x
                    _requeue(i, T_cores, T_gpus, T_mem, status, dest, scale, nxt, seq, q_head, q_tail, q_len, qdem,
                             qmin, commit, sc)
                    sc[SC_RESUMES] += 1
                    ok = True
                elif running:
                    ok = True
                    if x != scale[i]:
                        _stop_segment(i, j, t0, n, T_cores, T_gpus, T_mem, T_ckpt, T_mthr, dest, violated, fin,
                                      scale, segs, rem, run_s, nseg, free, commit, rel, part, diff, run_part, run_diff,
                                      m_viol)
                        scale[i] = x
                        nrescale[i] += 1
                        _requeue(i, T_cores, T_gpus, T_mem, status, dest, scale, nxt, seq, q_head, q_tail, q_len,
                                 qdem, qmin, commit, sc)
                        sc[SC_RESCALES] += 1
        if not ok:
            sc[SC_BAD_CTL] += 1
    for q in range(sc[SC_FLEX_N]):
        i = flex[q]
        if status[i] == ST_PAUSED and segs[i] < t and \
                t + STEP_S + T_ckpt[i] + rem[i] / speedup(scale[i], T_mthr[i]) > T_deadline[i]:
            n_paused[dest[i]] -= 1
            _requeue(i, T_cores, T_gpus, T_mem, status, dest, scale, nxt, seq, q_head, q_tail, q_len, qdem, qmin,
                     commit, sc)
            sc[SC_FORCED_RESUMES] += 1


@njit(cache=True, nogil=True)
def flex_forget_finished(t, status, fin, flex, sc):
    """Drop from the controllable list the tasks whose last segment has ended by time t."""
    k = 0
    for q in range(sc[SC_FLEX_N]):
        i = flex[q]
        if status[i] == ST_STARTED and not fin[i] > t:
            continue
        flex[k] = i
        k += 1
    sc[SC_FLEX_N] = k


@njit(cache=True, nogil=True)
def begin_step(T, S, C, j):
    """Releases, transit arrivals, new tasks, forced assignments. Returns the pending count."""
    T_arrival, T_cores, T_gpus, T_mem, T_deadline, T_origin = T.arrival, T.cores, T.gpus, T.mem, T.deadline, T.origin
    cap, t0 = C.cap, C.t0
    status, dest, decision, forced, nxt, seq = S.status, S.dest, S.decision, S.forced, S.nxt, S.seq
    q_head, q_tail, q_len, transit_n = S.q_head, S.q_tail, S.q_len, S.transit_n
    bucket_head, bucket_tail, free, commit, rel = S.bucket_head, S.bucket_tail, S.free, S.commit, S.rel
    pend, sc, qdem = S.pend, S.sc, S.qdem

    t = t0 + STEP_S * j
    t1 = t + STEP_S
    n_dc = cap.shape[0]
    for d in range(n_dc):
        for r in range(3):
            v = rel[r, d, j]
            free[d, r] += v
            commit[d, r] -= v
    # transfers that complete during this step join their destination queue
    _drain_bucket(j, T_cores, T_gpus, T_mem, status, dest, nxt, seq, q_head, q_tail, q_len, transit_n,
                  qdem, bucket_head, bucket_tail, sc)
    # new arrivals
    nt = T_arrival.shape[0]
    p = sc[SC_NEXT_ARRIVAL]
    pn = sc[SC_PEND_N]
    while p < nt and T_arrival[p] < t1:
        if fits_any(T_cores[p], T_gpus[p], T_mem[p], cap):
            status[p] = ST_PENDING
            pend[pn] = p
            pn += 1
        else:
            status[p] = ST_UNSCHEDULABLE
        p += 1
    sc[SC_NEXT_ARRIVAL] = p
    sc[SC_PEND_N] = pn
    # tasks still undecided after their deadline go to their origin
    n_forced = 0
    for q in range(pn):
        i = pend[q]
        if T_deadline[i] <= t:
            c, g, m = T_cores[i], T_gpus[i], T_mem[i]
            d = T_origin[i]
            if not fits(c, g, m, cap, d):
                d = fallback_dc(c, g, m, cap, commit)
            _book(i, d, max(t, T_arrival[i]), 1, c, g, m, dest, decision, forced, commit)
            n_forced += 1
    if n_forced:
        sc[SC_FORCED] += n_forced
        _route_decided(j, T_origin, T.bw, C.delay_s_per_gb, C.rtt_s, t0, C.n_steps, pend, status, dest, decision,
                       S.delay, S.ready, nxt, transit_n, bucket_head, bucket_tail, sc)
        _drain_bucket(j, T_cores, T_gpus, T_mem, status, dest, nxt, seq, q_head, q_tail, q_len, transit_n,
                      qdem, bucket_head, bucket_tail, sc)
    return sc[SC_PEND_N]


@njit(cache=True, nogil=True)
def end_step(T, S, C, j, actions):
    """Apply the actions of the pending tasks, run the queues, record the step's counters."""
    T_arrival, T_cores, T_gpus, T_mem, T_origin = T.arrival, T.cores, T.gpus, T.mem, T.origin
    cap, t0, n_steps = C.cap, C.t0, C.n_steps
    status, dest, decision, forced, nxt, seq = S.status, S.dest, S.decision, S.forced, S.nxt, S.seq
    q_head, q_tail, q_len, transit_n = S.q_head, S.q_tail, S.q_len, S.transit_n
    bucket_head, bucket_tail, free, commit = S.bucket_head, S.bucket_tail, S.free, S.commit
    rel, part, diff, run_part, run_diff = S.rel, S.part, S.diff, S.run_part, S.run_diff
    acc, acc_run, m_pending, m_queue, m_transit = S.acc, S.acc_run, S.m_pending, S.m_queue, S.m_transit
    pend, sc, qdem = S.pend, S.sc, S.qdem
    cfg, srv_on, srv_wk, srv_twk, srv = C.srv_cfg, S.srv_on, S.srv_wk, S.srv_twk, S.srv
    managed = C.opts[OPT_MANAGED] > 0.5
    ctl_on = C.opts[OPT_CONTROLS] > 0.5
    if ctl_on and (sc[SC_FLEX_N] > 0 or sc[SC_CTL_N] > 0):  # flexible tasks: this step's controls first
        flex_controls(j, t0, n_steps, T.deadline, T_cores, T_gpus, T_mem, T.ckpt, T.mthr, T.interruptible, T.smin,
                      T.smax, T.flexible, status, dest, S.violated, S.fin, S.scale, S.segs, S.rem, S.run_s, S.nseg,
                      S.npause, S.nrescale, S.flex, S.ctl_task, S.ctl_val, nxt, seq, q_head, q_tail, q_len, qdem,
                      C.qmin, free, commit, rel, part, diff, run_part, run_diff, S.n_paused, S.m_viol, sc)

    t = t0 + STEP_S * j
    n_dc = cap.shape[0]
    pn = sc[SC_PEND_N]
    allow_defer = C.opts[OPT_ALLOW_DEFER] > 0.5
    single = C.opts[OPT_SINGLE_ACTION] > 0.5
    any_assigned = False
    for q in range(pn):
        i = pend[q]
        a = actions[0] if single else actions[q]
        if a <= 0:
            if allow_defer:
                continue
            a = T_origin[i] + 1
        d = a - 1
        c, g, m = T_cores[i], T_gpus[i], T_mem[i]
        if d >= n_dc or not fits(c, g, m, cap, d):
            d = fallback_dc(c, g, m, cap, commit)
            sc[SC_INVALID] += 1
        _book(i, d, max(t, T_arrival[i]), 0, c, g, m, dest, decision, forced, commit)
        any_assigned = True
    if any_assigned:
        _route_decided(j, T_origin, T.bw, C.delay_s_per_gb, C.rtt_s, t0, n_steps, pend, status, dest, decision,
                       S.delay, S.ready, nxt, transit_n, bucket_head, bucket_tail, sc)
        _drain_bucket(j, T_cores, T_gpus, T_mem, status, dest, nxt, seq, q_head, q_tail, q_len, transit_n,
                      qdem, bucket_head, bucket_tail, sc)
    schedule(T, S, C, j, managed, ctl_on)
    # counters at the end of the step
    pn = sc[SC_PEND_N]
    for q in range(pn):
        m_pending[T_origin[pend[q]], j] += 1
    n_paused, m_paused = S.n_paused, S.m_paused
    for d in range(n_dc):
        m_queue[d, j] = q_len[d]
        m_transit[d, j] = transit_n[d]
        m_paused[d, j] = n_paused[d]
        for r in range(3):
            acc[r, d] += diff[r, d, j]
            part[r, d, j] += acc[r, d]
        acc_run[d] += run_diff[d, j]
        run_part[d, j] += acc_run[d]
        if managed:  # server power states at the boundary that ends this step
            servers_at_boundary(d, j, t0, n_steps, cap, free, rel, qdem, cfg, srv_on, srv_wk, srv_twk, srv)
    if ctl_on and sc[SC_FLEX_N] > 0:  # the next step's policy sees only tasks it can still control
        flex_forget_finished(t + STEP_S, status, S.fin, S.flex, sc)
    sc[SC_STEP] = j + 1


# ---------------------------------------------------------------------------- information kernels
# The forecast error of the ``calibrated`` model is a pure function of (run key, signal, datacenter,
# issue step, lead): a counter-based hash (SplitMix64's finaliser) turns each such tuple into a
# uniform, two uniforms into two standard normals (Box-Muller). No generator state is carried from
# step to step, so the forecast issued at a step is the same whatever the policy did before, whether
# or not earlier steps issued one, and whichever interface asks for it.
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_TWO_M53 = 1.0 / 9007199254740992.0  # 2**-53


@njit(cache=True, nogil=True, inline="always")
def _mix64(z):
    """SplitMix64's output function (Steele, Lea & Flood, OOPSLA 2014): a bijection of uint64."""
    z = (z ^ (z >> np.uint64(30))) * _MIX1
    z = (z ^ (z >> np.uint64(27))) * _MIX2
    return z ^ (z >> np.uint64(31))


@njit(cache=True, nogil=True, inline="always")
def _unit(z):
    """A uint64 hash -> a double uniform on (0, 1) (53 bits, never 0 nor 1)."""
    return (float(z >> np.uint64(11)) + 0.5) * _TWO_M53


@njit(cache=True, nogil=True)
def stream_base(key, s, d, k):
    """The hash of (run key, signal s, datacenter d, issue step k): the start of that issue's stream."""
    h = _mix64(np.uint64(key) + _GOLDEN * (np.uint64(k) + np.uint64(1)))
    return _mix64(h ^ ((np.uint64(s) << np.uint64(32)) + np.uint64(d)))


@njit(cache=True, nogil=True, inline="always")
def _normal_pair(base, p):
    """Standard normals number 2p and 2p + 1 of the stream ``base`` (Box-Muller on two uniforms)."""
    u1 = _unit(_mix64(base + _GOLDEN * np.uint64(2 * p + 1)))
    u2 = _unit(_mix64(base + _GOLDEN * np.uint64(2 * p + 2)))
    r = math.sqrt(-2.0 * math.log(u1))
    return r * math.cos(2.0 * math.pi * u2), r * math.sin(2.0 * math.pi * u2)


@njit(cache=True, nogil=True)
def publish(act, hist, j, s0):
    """Make the actuals of run step j (bundle step s0 + j) known: the step has begun."""
    k = s0 + j
    for s in range(act.shape[0]):
        for d in range(act.shape[1]):
            hist[s, d, k] = act[s, d, k]


@njit(cache=True, nogil=True)
def issue_at(act, fci, known, inc, par, iopt, s, ki, n_leads):
    """The forecast of signal s (0 carbon, 1 price) issued at bundle step ki (an issue step) for leads
    1..n_leads, into ``fci[s]`` (lead h at index h - 1).

    Lead h targets bundle step t = ki + h: NaN past the bundle's end; the actual when t was known at ki
    (a published day-ahead price); otherwise the model's value -- ``oracle``: the actual;
    ``persistence``: the last value known at ki; ``seasonal_naive`` (period P = 1 day or 1 week): the
    value at the latest step t - m P known at ki (persistence when that is before the bundle's start);
    ``calibrated``: the actual with the error e(h) = sum over l <= h of inc[l - 1] z_l, z_l standard
    normals of this issue's stream, applied as actual (1 + e) or actual + e (par), never below the floor."""
    model = iopt[IO_MODEL]
    jk = ki - iopt[IO_S0] + iopt[IO_KPAD]  # index of the issue step in ``known``
    n_all = act.shape[2]
    period = STEPS_PER_DAY if model == FC_SEASONAL_DAY else 7 * STEPS_PER_DAY
    mult = par[s, PAR_MULT] > 0.5
    floor = par[s, PAR_FLOOR]
    for d in range(act.shape[1]):
        kn = min(max(known[s, d, jk], ki), n_all - 1)
        last = act[s, d, kn]
        base = stream_base(iopt[IO_KEY], s, d, ki) if model == FC_CALIBRATED else np.uint64(0)
        e = 0.0
        z2 = 0.0
        for h in range(1, n_leads + 1):
            t = ki + h
            if t >= n_all:
                fci[s, d, h - 1] = np.nan
                continue
            if model == FC_CALIBRATED:
                if h % 2 == 1:
                    z1, z2 = _normal_pair(base, (h - 1) // 2)
                    e += inc[s, d, h - 1] * z1
                else:
                    e += inc[s, d, h - 1] * z2
            if t <= kn or model == FC_ORACLE:
                v = act[s, d, t]
            elif model == FC_PERSISTENCE:
                v = last
            elif model == FC_CALIBRATED:
                v = act[s, d, t] * (1.0 + e) if mult else act[s, d, t] + e
                if v < floor:
                    v = floor
            else:  # seasonal naive
                tp = t - ((t - kn + period - 1) // period) * period
                v = act[s, d, tp] if tp >= 0 else last
            fci[s, d, h - 1] = v


@njit(cache=True, nogil=True)
def issue_forecast(act, fc, fci, known, inc, par, iopt, stamp, pub, s, j, n_leads):
    """What is known at run step j (bundle step k) of signal s's next n_leads steps, into ``fc[s]`` (and
    the count of published leads into ``pub[s]``): the forecast issued at the latest issue step
    k_i = k - k mod IO_EVERY (:func:`issue_at`, kept in ``fci`` until the next issue), re-indexed to
    leads from now -- lead h is the issued lead h + k - k_i, NaN beyond the issued horizon H -- except
    the steps whose actual is known now (day-ahead prices published since k_i), which are actuals.
    Does nothing when ``fc`` already holds this step's view for at least as many leads. With an issue
    every step (IO_EVERY = 1) this is the forecast issued now."""
    hmax = iopt[IO_H]
    k = iopt[IO_S0] + j
    n_leads = min(max(n_leads, 0), hmax)
    if stamp[s, 2] == k and stamp[s, 3] >= n_leads:
        return
    every = max(iopt[IO_EVERY], 1)
    ki = k - k % every
    age = k - ki
    if not (stamp[s, 0] == ki and stamp[s, 1] >= min(n_leads + age, hmax)):
        # issue enough leads for this view and the same view at every step until the next issue
        want = min(n_leads + every - 1, hmax)
        issue_at(act, fci, known, inc, par, iopt, s, ki, want)
        stamp[s, 0] = ki
        stamp[s, 1] = want
    n_all = act.shape[2]
    jk = j + iopt[IO_KPAD]
    for d in range(act.shape[1]):
        kn = min(max(known[s, d, jk], k), n_all - 1)
        pub[s, d] = min(kn - k, hmax)
        for h in range(1, n_leads + 1):
            t = k + h
            if t >= n_all:
                v = np.nan
            elif t <= kn:
                v = act[s, d, t]
            elif h + age <= hmax:
                v = fci[s, d, h + age - 1]
            else:
                v = np.nan
            fc[s, d, h - 1] = v
    stamp[s, 2] = k
    stamp[s, 3] = n_leads


@njit(cache=True, nogil=True)
def issue_all(act, fc, fci, known, inc, par, iopt, stamp, pub, j):
    """Every signal's forecast known at run step j over the whole horizon (what the policy views get)."""
    for s in range(fc.shape[0]):
        issue_forecast(act, fc, fci, known, inc, par, iopt, stamp, pub, s, j, iopt[IO_H])


@njit(cache=True, nogil=True)
def greener_threshold(hist, fc, k, window, q, thr):
    """thr[d] = the q-quantile (linear, as numpy) of datacenter d's carbon intensity over the window
    of ``window`` steps starting now: the known value of step k and the forecast of the next
    window - 1 steps (leads past the bundle's end are left out), i.e. what was known at step k.
    With the ``oracle`` model this is exactly :func:`rolling_quantile` of the actual series."""
    window = max(window, 1)
    qq = q if q >= 0.0 else 0.0  # (NaN -> 0)
    if qq > 1.0:
        qq = 1.0
    buf = np.empty(window)
    for d in range(hist.shape[1]):
        buf[0] = hist[SIG_CARBON, d, k]
        m = 1
        for h in range(1, min(window, fc.shape[2] + 1)):
            v = fc[SIG_CARBON, d, h - 1]
            if v == v:  # (not NaN: past the bundle's end)
                buf[m] = v
                m += 1
        pos = qq * (m - 1)
        lo = int(math.floor(pos))
        # the lo-th smallest value, then the next one (the smallest of the rest): the two order statistics a
        # full sort would give, in linear time (this runs for every datacenter at every step)
        a = _select(buf, m, lo)
        b = a
        if lo + 1 < m:
            b = buf[lo + 1]
            for r in range(lo + 2, m):
                if buf[r] < b:
                    b = buf[r]
        thr[d] = a + (b - a) * (pos - lo)


@njit(cache=True, nogil=True)
def _select(a, m, kth):
    """Rearrange a[:m] in place so that a[kth] is its kth smallest value (quickselect, Hoare partition,
    median-of-three pivot), everything before it <= it and everything after it >= it; returns a[kth]."""
    lo, hi = 0, m - 1
    while hi > lo:
        mid = (lo + hi) // 2
        if a[mid] < a[lo]:
            a[mid], a[lo] = a[lo], a[mid]
        if a[hi] < a[lo]:
            a[hi], a[lo] = a[lo], a[hi]
        if a[hi] < a[mid]:
            a[hi], a[mid] = a[mid], a[hi]
        pivot = a[mid]
        i, j = lo, hi
        while i <= j:
            while a[i] < pivot:
                i += 1
            while a[j] > pivot:
                j -= 1
            if i <= j:
                a[i], a[j] = a[j], a[i]
                i += 1
                j -= 1
        if kth <= j:
            hi = j
        elif kth >= i:
            lo = i
        else:
            break
    return a[kth]


# ---------------------------------------------------------------------------- built-in policies
@njit(cache=True, nogil=True)
def decide_builtin(T, S, C, info, code, j, actions):
    """Rule policies. Each reserves the capacity it hands out within the step. They read the
    information a policy may have (``info``): the current signals from the history, and
    ``defer_to_greener`` its threshold from the latest issued forecast."""
    T_arrival, T_cores, T_gpus, T_mem, T_deadline, T_origin = T.arrival, T.cores, T.gpus, T.mem, T.deadline, T.origin
    T_bw, T_duration, T_u = T.bw, T.duration, T.u_rand
    cap, delay_s_per_gb, rtt_s = C.cap, C.delay_s_per_gb, C.rtt_s
    hist, iopt = info.hist, info.iopt
    pend, sc = S.pend, S.sc

    n_dc = cap.shape[0]
    pn = sc[SC_PEND_N]
    k = iopt[IO_S0] + j
    t = C.t0 + STEP_S * j
    t1 = t + STEP_S
    allow_defer = C.opts[OPT_ALLOW_DEFER] > 0.5
    single = C.opts[OPT_SINGLE_ACTION] > 0.5
    avail = np.empty((n_dc, 3))
    cnt = np.empty(n_dc)
    carbon = np.empty(n_dc)
    price = np.empty(n_dc)
    for d in range(n_dc):
        for r in range(3):
            avail[d, r] = cap[d, r] - S.commit[d, r]
        cnt[d] = S.q_len[d] + S.transit_n[d]
        carbon[d] = hist[SIG_CARBON, d, k]
        price[d] = hist[SIG_PRICE, d, k]
    thr = np.empty(n_dc)
    if code == POLICY_DEFER_TO_GREENER and pn > 0:
        window = iopt[IO_WINDOW]
        issue_forecast(info.act, info.fc, info.fci, info.known, info.inc, info.par, iopt, info.stamp, info.pub,
                           SIG_CARBON, j,
                       window - 1)
        greener_threshold(hist, info.fc, k, window, info.fopt[FO_DEFER_Q], thr)
    n_eval = min(pn, 1) if single else pn
    for q in range(n_eval):
        i = pend[q]
        o = T_origin[i]
        ci, gi, mi = T_cores[i], T_gpus[i], T_mem[i]
        best = -1
        if code == POLICY_LOCAL_ONLY:
            if fits(ci, gi, mi, cap, o):
                best = o
        elif code == POLICY_DEFER_TO_GREENER:
            if allow_defer and carbon[o] > thr[o] and t1 + T_duration[i] <= T_deadline[i]:
                actions[q] = 0
                continue
            bs = np.inf
            tdec = max(t, T_arrival[i])
            for d in range(n_dc):  # greenest DC with room that can still meet the deadline
                if fits(ci, gi, mi, avail, d):
                    dl = 0.0 if d == o else T_bw[i] * delay_s_per_gb[o, d] + rtt_s[o, d]
                    if tdec + dl + T_duration[i] <= T_deadline[i] and carbon[d] < bs:
                        bs = carbon[d]
                        best = d
            if best < 0:
                for d in range(n_dc):
                    if fits(ci, gi, mi, avail, d) and carbon[d] < bs:
                        bs = carbon[d]
                        best = d
        elif code == POLICY_ROUND_ROBIN:
            rr = sc[SC_RR]
            for kk in range(n_dc):
                d = (rr + kk) % n_dc
                if fits(ci, gi, mi, avail, d):
                    best = d
                    break
            sc[SC_RR] = ((best if best >= 0 else rr) + 1) % n_dc
        elif code == POLICY_RANDOM:  # uniform among the DCs with room
            nc = 0
            for d in range(n_dc):
                if fits(ci, gi, mi, avail, d):
                    nc += 1
            if nc > 0:
                # u is in [0, 1) by construction (Generator.random); the float is checked before
                # the conversion all the same, so pick is in 0 .. nc - 1 whatever u holds
                x = T_u[i] * nc
                if x >= nc - 1:
                    pick = nc - 1
                elif x > 0.0:
                    pick = int(x)
                else:  # (also NaN)
                    pick = 0
                for d in range(n_dc):
                    if fits(ci, gi, mi, avail, d):
                        if pick == 0:
                            best = d
                            break
                        pick -= 1
        else:
            bs = np.inf
            for d in range(n_dc):
                if not fits(ci, gi, mi, avail, d):
                    continue
                if code == POLICY_MOST_AVAILABLE:  # most free cores
                    s = -avail[d, 0]
                elif code == POLICY_LEAST_PENDING:  # fewest queued + in transit
                    s = cnt[d]
                elif code == POLICY_LOWEST_CARBON:
                    s = carbon[d]
                elif code == POLICY_LOWEST_PRICE:
                    s = price[d]
                else:  # POLICY_LOWEST_UTILIZATION: lowest mean committed fraction
                    s = 0.0
                    m = 0
                    for r in range(3):
                        if cap[d, r] > 0.0:
                            s += 1.0 - avail[d, r] / cap[d, r]
                            m += 1
                    s = s / max(m, 1)
                if s < bs:
                    bs = s
                    best = d
        if best < 0:
            best = fallback_dc(ci, gi, mi, cap, avail)
        if best < 0:
            best = o
        avail[best, 0] -= ci
        avail[best, 1] -= gi
        avail[best, 2] -= mi
        cnt[best] += 1
        actions[q] = best + 1


@njit(cache=True, nogil=True)
def run_builtin(T, S, C, info, code, j_end):
    """Run steps S.sc[SC_STEP] .. j_end - 1 with a built-in policy."""
    actions = np.zeros(S.pend.shape[0], np.int32)
    act, hist, s0 = info.act, info.hist, info.iopt[IO_S0]
    for j in range(S.sc[SC_STEP], j_end):
        pn = begin_step(T, S, C, j)
        publish(act, hist, j, s0)
        if pn > 0:
            decide_builtin(T, S, C, info, code, j, actions)
        end_step(T, S, C, j, actions)


@njit(cache=True, nogil=True)
def policy_view(T, S, C, info, j):
    """What a jitted policy receives at run step j (:data:`PolicyView`): the latest issued forecast (into
    ``info.fc``), the history buffer (no column after now is filled), the pending tasks and the
    datacenters' state."""
    iopt = info.iopt
    s0 = iopt[IO_S0]
    k = s0 + j
    hist, fc = info.hist, info.fc
    issue_all(info.act, fc, info.fci, info.known, info.inc, info.par, iopt, info.stamp, info.pub, j)
    n_dc = C.cap.shape[0]
    avail = np.empty((n_dc, 3))
    for d in range(n_dc):
        for r in range(3):
            avail[d, r] = C.cap[d, r] - S.commit[d, r]
    pn = S.sc[SC_PEND_N]
    return PolicyView(j, C.t0 + STEP_S * j, S.pend[:pn], T.arrival, T.duration, T.cores,
                      T.gpus, T.mem, T.bw, T.deadline, T.origin, C.cap, avail,
                      hist[SIG_CARBON, :, k], hist[SIG_PRICE, :, k], S.q_len, S.transit_n,
                      C.delay_s_per_gb, C.rtt_s, C.opts[OPT_ALLOW_DEFER] > 0.5, k, hist, fc, info.pub,
                      iopt[IO_MODEL] == FC_ORACLE,
                      T.max_delay, T.interruptible, T.ckpt, T.smin, T.smax, T.mthr,
                      S.flex[:S.sc[SC_FLEX_N]], S.status, S.scale, S.fin, S.rem, S.ctl_task, S.ctl_val,
                      S.sc[SC_CTL_N:SC_CTL_N + 1])


def _run_custom_py(T, S, C, info, policy, j_end):
    actions = np.zeros(S.pend.shape[0], np.int32)
    act, hist, s0 = info.act, info.hist, info.iopt[IO_S0]
    for j in range(S.sc[SC_STEP], j_end):
        pn = begin_step(T, S, C, j)
        publish(act, hist, j, s0)
        if pn > 0 or S.sc[SC_FLEX_N] > 0:  # (flexible tasks to control: the policy is asked every step)
            policy(policy_view(T, S, C, info, j), actions)
        end_step(T, S, C, j, actions)


# A loop specialised on a user's jitted policy: not cached (the cache cannot key on it).
run_custom = njit(nogil=True)(_run_custom_py)


@njit(cache=True, nogil=True)
def rolling_quantile(x, window, q):
    """q-quantile (linear, as numpy) of x[k : k + window] (clipped at the end), per row."""
    n_dc, n = x.shape
    out = np.empty((n_dc, n))
    # Guards (the options are validated before a run; the kernel does not rely on it): a window
    # of at least 1 step, a buffer no longer than the series, and q in [0, 1] (NaN -> 0), so that
    # lo and hi below are always in 0 .. m - 1. None of these changes a valid call's result.
    window = max(window, 1)
    qq = q if q >= 0.0 else 0.0  # (NaN -> 0)
    if qq > 1.0:
        qq = 1.0
    buf = np.empty(min(window, max(n, 1)))
    for d in range(n_dc):
        for k in range(n):
            m = min(window, n - k)
            for t in range(m):
                buf[t] = x[d, k + t]
            v = np.sort(buf[:m])
            pos = qq * (m - 1)  # in [0, m - 1]: lo in 0 .. m - 1 (m >= 1)
            lo = int(math.floor(pos))
            hi = min(lo + 1, m - 1)
            out[d, k] = v[lo] + (v[hi] - v[lo]) * (pos - lo)
    return out


# ---------------------------------------------------------------------------- published baselines
# The carbon-aware scheduling policies the literature compares against (docs/baselines.md lists each
# paper, its rule, its defaults and every choice made here). Like every policy they see only what was
# known at the decision: the carbon intensity of the current step (history) and the latest issued forecast
# (``Info.fc``, issued here for carbon only); CarbonFlex's learning reads the history of the steps
# before now. They are single-site (temporal shifting: every task runs at its origin, as in the papers),
# keep their own plan between steps (:data:`Plan`) and control the flexible tasks through the same
# per-step controls as a user's policy (``State.ctl_task`` / ``ctl_val``).

#: GAIA's two queues (Hanafy et al., ASPLOS 2024; artifact umassos/GAIA ``src/task.py`` ``TwoQueues``): short
#: jobs are shorter than 2 h; the waiting times of the artifact's default ``-w 6x24`` (``src/run.py``, the
#: setting of the paper's Figures 8-9): 6 h for the short queue, 24 h for the long one
GAIA_SHORT_S = 7200.0
GAIA_WAIT_SHORT_S = 6.0 * 3600.0
GAIA_WAIT_LONG_S = 24.0 * 3600.0
#: start times GAIA considers: every hour of the waiting time (artifact ``carbon_waiting_policy.py``:
#: ``range(0, waiting_time + 1, 3600 // TIME_FACTOR)``)
GAIA_GRID_STEPS = 4
#: one-hour slots: CarbonScaler's scaling slot (Hanafy et al., SIGMETRICS 2024: hourly carbon intensity; artifact
#: umassos/CarbonScaler ``carbon_scaler.go`` ``timeSlot``), VCC's hourly capacity curve (Radovanović et al. 2023)
#: and CarbonFlex's provisioning slot (Hanafy et al. 2025, arXiv:2505.18357: 1-hour slots)
SLOT_STEPS = 4
#: VCC: the daily flexible demand forecast is the largest daily flexible demand of the last 7 days (our
#: choice standing for the paper's risk-aware, high-quantile forecast of the daily flexible usage)
VCC_HISTORY_DAYS = 7
#: CarbonFlex: the past window it learns from (7 days) and the bins of the carbon-rank feature (24: one per
#: hourly rank among the 24 one-hour slots of the lookahead)
CF_WINDOW_DAYS = 7
CF_BINS = 24
#: lookahead of the carbon-rank feature (24 h: the default forecast horizon)
CF_RANK_STEPS = STEPS_PER_DAY

# integer slots in Plan.isc
PI_DAYS = 0  # complete days of demand recorded (VCC / CarbonFlex), at most VCC_HISTORY_DAYS
PI_DAY = 1  # bundle day of the current curve (-1: none yet)
N_PI = 2

#: A baseline's state between steps: ``start`` per task (planned start, bundle step; NaN = not planned),
#: ``tgt`` per task (CarbonScaler's target scale), ``cls`` GAIA's running sum / count of durations per
#: queue, ``book`` (2, n_dc, n + 1) shares booked to be released at a run step (0 flexible, 1 inflexible),
#: ``load`` (2, n_dc) shares booked now, ``curve`` (n_dc, 24) flexible capacity share per hour of the
#: current day (VCC; CarbonFlex: the provisioned share), ``dem`` (n_dc, VCC_HISTORY_DAYS + 1) daily
#: flexible demand (share x steps; the last column is today's), ``infl`` (2, n_dc, 96) inflexible share per
#: step of yesterday / today, ``table`` (n_dc, CF_BINS) CarbonFlex's learned provision per carbon-rank bin
#: (a multiple of the mean demand), ``rate`` (n_dc) its mean flexible demand per step (share), ``cb``
#: (n_dc, H + 1) carbon known now (h = 0 the actual, h >= 1 the latest issued forecast; +inf where unknown),
#: ``isc`` integer slots (``PI_*``).
Plan = namedtuple("Plan", ["start", "tgt", "cls", "book", "load", "curve", "dem", "infl", "table", "rate", "cb",
                           "isc"])


def new_plan(n_tasks: int, n_dc: int, n_steps: int, horizon_steps: int) -> Plan:
    """An empty plan (no task planned, no curve, nothing learned)."""
    return Plan(start=np.full(max(n_tasks, 1), np.nan), tgt=np.full(max(n_tasks, 1), np.nan), cls=np.zeros((2, 2)),
                book=np.zeros((2, n_dc, n_steps + 1)), load=np.zeros((2, n_dc)), curve=np.full((n_dc, 24), np.inf),
                dem=np.zeros((n_dc, VCC_HISTORY_DAYS + 1)), infl=np.zeros((2, n_dc, STEPS_PER_DAY)),
                table=np.ones((n_dc, CF_BINS)), rate=np.zeros(n_dc), cb=np.full((n_dc, horizon_steps + 1), np.inf),
                isc=np.array([0, -1], np.int64))


@njit(cache=True, nogil=True)
def carbon_known(hist, fc, k, cb):
    """cb[d, h]: the carbon intensity of bundle step k + h as known at k -- the actual for h = 0, the
    latest issued forecast for h >= 1 -- and +inf where nothing is known (past the issue's horizon or the
    bundle's end)."""
    for d in range(cb.shape[0]):
        cb[d, 0] = hist[SIG_CARBON, d, k]
        for h in range(1, cb.shape[1]):
            v = fc[SIG_CARBON, d, h - 1]
            cb[d, h] = v if v == v else np.inf


@njit(cache=True, nogil=True, inline="always")
def _share(c, g, m, cap, d):
    """Dominant share of datacenter d's capacity a request takes (VCC and CarbonFlex measure load in it)."""
    s = 0.0
    if cap[d, 0] > 0.0:
        s = max(s, c / cap[d, 0])
    if cap[d, 1] > 0.0:
        s = max(s, g / cap[d, 1])
    if cap[d, 2] > 0.0:
        s = max(s, m / cap[d, 2])
    return s


@njit(cache=True, nogil=True, inline="always")
def _steps_of(x):
    """Whole steps that x seconds of work occupy (at least 1; 2**40 for a duration beyond any bundle, also
    an infinite or NaN one: the float is compared before it is converted)."""
    y = x / STEP_S
    if not y < 1e12:
        return 1 << 40
    return max(int(math.ceil(y - 1e-9)), 1)


@njit(cache=True, nogil=True)
def work_left(i, t, status, fin, segs, rem, nseg, scale, T_ckpt, T_mthr):
    """Work (s at scale 1) a started flexible task has left at time t (a running segment has done
    (t - start - overhead) x its speed-up since it began; a paused or waiting task: what it had left)."""
    if status[i] == ST_STARTED and fin[i] > t:
        w0 = segs[i] + (T_ckpt[i] if nseg[i] > 1 else 0.0)
        if t > w0:
            return max(rem[i] - (t - w0) * speedup(scale[i], T_mthr[i]), 0.0)
    return rem[i]


@njit(cache=True, nogil=True)
def wa_start_offset(cb, t, arrival, duration, max_delay):
    """Wait Awhile, non-interrupting (Wiesner et al., Middleware 2021, ad hoc workloads; artifact
    dos-group/lets-wait-awhile ``strategy.py`` ``AdHocStrategy``): the start offset s (steps from now)
    whose window [s, s + L) has the lowest mean
    forecast carbon intensity, over the starts that keep the task within its allowed delay
    (start <= arrival + max_delay) and its window within the forecast; ties go to the earliest."""
    L = _steps_of(duration)
    smax = int(math.floor((arrival + max_delay - t) / STEP_S + 1e-9))
    smax = min(smax, cb.shape[0] - L)
    if smax <= 0:
        return 0
    best_s = 0
    best = 0.0
    for h in range(L):
        best += cb[h]
    for s in range(1, smax + 1):
        v = 0.0
        for h in range(s, s + L):
            v += cb[h]
        if v < best:
            best = v
            best_s = s
    return best_s


@njit(cache=True, nogil=True)
def wa_run_now(cb, t, deadline, work):
    """Wait Awhile, interrupting (Wiesner et al. 2021; ``AdHocStrategy(interruptible=True)``): a task
    with ``work`` seconds left runs in the ceil(work / step) steps of lowest forecast carbon intensity
    that end by its deadline (within the forecast); is the current step one of them? (The plan is redone
    every step with the forecast issued then; with the oracle forecast it is the plan made at arrival.)
    Ties go to the earliest step, so the current step wins them."""
    need = _steps_of(work)
    y = (deadline - t) / STEP_S + 1e-9
    if not y < cb.shape[0]:  # (an infinite or NaN deadline: the forecast's end)
        y = float(cb.shape[0])
    e = min(int(math.floor(y)) - 1, cb.shape[0] - 1)
    if e + 1 <= need:
        return True
    c0 = cb[0]
    greener = 0
    for s in range(1, e + 1):
        if cb[s] < c0:
            greener += 1
            if greener >= need:
                return False
    return True


@njit(cache=True, nogil=True)
def gaia_start_offset(cb, t, arrival, wait, expected_s, carbon_time):
    """GAIA (Hanafy et al., ASPLOS 2024; artifact umassos/GAIA ``src/scheduling/carbon_waiting_policy.py``):
    the start offset
    (steps, on the hourly grid s = 0, 1 h, 2 h, ... up to the waiting time) for a job of the queue's
    expected length (its mean, the job's own length being unknown at submission). Lowest-Carbon-Window
    (``best_waiting_time``): the least carbon C(s) = sum of the intensity over [s, s + expected).
    Carbon-Time (``average_carbon_slot_waiting``): the most carbon saved per unit of completion time,
    (C(0) - C(s)) / (s + expected). Only starts whose window lies in the forecast are considered."""
    L = _steps_of(expected_s)
    smax = int(math.floor((arrival + wait - t) / STEP_S + 1e-9))
    smax = min(smax, cb.shape[0] - L)
    if smax < GAIA_GRID_STEPS:
        return 0
    c0 = 0.0
    for h in range(L):
        c0 += cb[h]
    best_s = 0
    best = c0 if not carbon_time else 0.0
    for s in range(GAIA_GRID_STEPS, smax + 1, GAIA_GRID_STEPS):
        v = 0.0
        for h in range(s, s + L):
            v += cb[h]
        if carbon_time:
            score = (c0 - v) / (s * STEP_S + expected_s)
            if score > best:
                best = score
                best_s = s
        elif v < best:
            best = v
            best_s = s
    return best_s


@njit(cache=True, nogil=True)
def carbonscaler_scale(cb, t, k, deadline, work, smin, smax, m, interruptible):
    """CarbonScaler (Hanafy et al., SIGMETRICS 2024, its greedy carbon-scaling algorithm; artifact
    umassos/CarbonScaler ``src/controllers/carbon_scaler.go`` ``ComputeSchedule``): the greedy marginal
    allocation over one-hour slots up to the deadline. Each
    slot offers its first unit (the minimum scale, throughput speedup(smin)) and extra allocation
    (throughput m per unit); each is worth its throughput per unit of allocation / the slot's forecast
    carbon intensity (power is proportional to allocation). Units are taken best first until the
    work is covered (continuous in the extra allocation: the last one is partial). Slots follow the
    hours of the bundle (k: the bundle step now): slot 0 is what is left of the current hour. Returns
    the scale of the current slot: 0 (suspended), or in [smin, smax]; smax when the work cannot be
    covered before the deadline within the forecast. A task that cannot be suspended gets at least smin."""
    r0 = SLOT_STEPS - k % SLOT_STEPS  # steps left in the current hour
    n_h = cb.shape[0]
    q = 0
    while True:  # slots that end by the deadline and lie in the forecast
        e = r0 + q * SLOT_STEPS
        if e > n_h or t + e * STEP_S > deadline + 1e-6:
            break
        q += 1
    if q <= 0 or work <= 0.0:
        return smax if work > 0.0 else smin
    base = speedup(smin, m)
    val = np.empty(2 * q)
    for s in range(q):
        a0 = 0 if s == 0 else r0 + (s - 1) * SLOT_STEPS
        a1 = r0 + s * SLOT_STEPS
        c = 0.0
        for h in range(a0, a1):
            c += cb[h]
        c /= a1 - a0
        inv = 1.0 / c if c > 0.0 else np.inf
        val[2 * s] = base / smin * inv if smin > 0.0 else inv
        val[2 * s + 1] = m * inv
    order = np.argsort(-val, kind="mergesort")  # best first; ties: earlier slot, base before extra
    sched = np.zeros(q)
    done = 0.0
    for o in order:
        if done >= work - 1e-9:
            break
        s = o // 2
        slot_s = (r0 if s == 0 else SLOT_STEPS) * STEP_S
        if o % 2 == 0:
            sched[s] = smin
            done += base * slot_s
        elif sched[s] > 0.0 and m > 0.0 and smax > smin:
            a = min(smax - smin, (work - done) / (m * slot_s))
            sched[s] += a
            done += m * a * slot_s
    if done < work - 1e-9:
        return smax
    x = sched[0]
    if x <= 0.0 and not interruptible:
        x = smin
    return x


@njit(cache=True, nogil=True)
def vcc_curve(cb_d, dem_max, infl_prev, out):
    """VCC (Radovanović et al., IEEE Trans. Power Systems 2023, day-ahead virtual capacity curves): the
    day's virtual capacity curve of
    one site, from the carbon forecast issued at the day's start: the flexible demand forecast
    (``dem_max``, share x steps) is placed in the hours of lowest forecast carbon intensity, each hour
    holding at most the capacity the inflexible load leaves (1 - yesterday's largest inflexible share in
    that hour); out[h] is the flexible share allowed in hour h (0 in the hours that get nothing). When
    the capacity left cannot hold the demand, every hour gets what is left (the curve then limits
    nothing beyond the capacity)."""
    n_h = out.shape[0]
    ch = np.empty(n_h)
    room = np.empty(n_h)
    for h in range(n_h):
        c = 0.0
        r = 0.0
        for s in range(h * SLOT_STEPS, (h + 1) * SLOT_STEPS):
            c += cb_d[s] if s < cb_d.shape[0] else np.inf
            r = max(r, infl_prev[s])
        ch[h] = c
        room[h] = max(1.0 - r, 0.0)
        out[h] = 0.0
    order = np.argsort(ch, kind="mergesort")
    left = dem_max
    for h in order:
        if left <= 1e-12:
            break
        a = min(room[h], left / SLOT_STEPS)
        out[h] = a
        left -= a * SLOT_STEPS
    if left > 1e-12:
        for h in range(n_h):
            out[h] = room[h]


@njit(cache=True, nogil=True)
def carbon_rank(cb_d, n):
    """Fraction of the next n - 1 steps (forecast, finite values) greener than now: 0 = the greenest."""
    c0 = cb_d[0]
    g = 0
    m = 0
    for h in range(1, min(n, cb_d.shape[0])):
        v = cb_d[h]
        if v < np.inf:
            m += 1
            if v < c0:
                g += 1
    return g / m if m > 0 else 0.5


@njit(cache=True, nogil=True)
def carbonflex_learn(hist, k, T_arrival, T_duration, T_deadline, T_origin, T_cores, T_gpus, T_mem, T_max_delay,
                     cap, t0k, table, rate):
    """CarbonFlex's learning step (at the start of a day): run its oracle over the past window (the
    CF_WINDOW_DAYS days before bundle step k, clipped at the bundle's start) with the past window's
    actual carbon (history only) and the flexible tasks that arrived in it (their true lengths), then
    learn, per site, the oracle's provisioning as a function of the carbon rank.

    Oracle (fluid relaxation): in arrival order, each flexible task's work (share x duration) is put
    into the one-hour slots of its window [arrival, deadline) (clipped at now) with the lowest actual
    carbon intensity, each slot holding at most the whole site (share 1), never before its arrival. The
    provisioning of a slot is the share the oracle runs in it. Feature of a slot: the fraction of the 23
    slots after it (its 24-h lookahead, which must lie in the past window) greener than it; table[d, b] =
    the mean provisioning of the slots whose feature falls in bin b, as a multiple of the window's mean
    flexible demand rate[d] (share per slot); a bin no slot fell into takes the nearest bin's value. With
    less than two days of history nothing is learned (rate stays as it was: 0 = act carbon-agnostic)."""
    n_dc = cap.shape[0]
    n_slot = (CF_WINDOW_DAYS * STEPS_PER_DAY) // SLOT_STEPS
    k_lo = k - n_slot * SLOT_STEPS
    if k_lo < 0:
        n_slot = k // SLOT_STEPS
        k_lo = k - n_slot * SLOT_STEPS
    if n_slot < 48:  # (a slot is learned from only when its whole 24-h lookahead is in the past window)
        return
    t_lo = t0k - (k - k_lo) * STEP_S  # time of bundle step k_lo (seconds since the bundle's start)
    slot_s = SLOT_STEPS * STEP_S
    lo = np.searchsorted(T_arrival, t_lo)
    hi = np.searchsorted(T_arrival, t0k)
    for d in range(n_dc):
        ch = np.empty(n_slot)
        for q in range(n_slot):
            c = 0.0
            for s in range(SLOT_STEPS):
                c += hist[SIG_CARBON, d, k_lo + q * SLOT_STEPS + s]
            ch[q] = c / SLOT_STEPS
        occ = np.zeros(n_slot)
        total = 0.0
        for i in range(lo, hi):
            if T_origin[i] != d or T_max_delay[i] <= 0.0:
                continue
            w = _share(T_cores[i], T_gpus[i], T_mem[i], cap, d) * T_duration[i] / slot_s  # share x slots
            if not w < 1e12:  # (a task that never ends is no demand to learn from)
                continue
            total += w
            a = int(math.floor((T_arrival[i] - t_lo) / slot_s))
            x = (T_deadline[i] - t_lo) / slot_s
            b = int(math.ceil(x)) if x < n_slot else n_slot  # (the float is compared before the conversion)
            if b <= a:
                continue
            order = np.argsort(ch[a:b], kind="mergesort")
            for o in order:
                if w <= 1e-12:
                    break
                q = a + o
                x = min(1.0 - occ[q], w)
                if x > 0.0:
                    occ[q] += x
                    w -= x
        if total <= 0.0:
            rate[d] = 0.0
            continue
        rate[d] = total / n_slot
        acc = np.zeros(CF_BINS)
        cnt = np.zeros(CF_BINS)
        for q in range(n_slot - 23):
            g = 0
            for q2 in range(q + 1, q + 24):
                if ch[q2] < ch[q]:
                    g += 1
            b = min(int(g / 23.0 * CF_BINS), CF_BINS - 1)
            acc[b] += occ[q]
            cnt[b] += 1.0
        for b in range(CF_BINS):  # a bin no slot fell into: the nearest bin that has slots (the greener on a tie)
            bb = -1
            for dist in range(CF_BINS):
                if b - dist >= 0 and cnt[b - dist] > 0:
                    bb = b - dist
                    break
                if b + dist < CF_BINS and cnt[b + dist] > 0:
                    bb = b + dist
                    break
            table[d, b] = acc[bb] / cnt[bb] / rate[d] if bb >= 0 else 1.0


@njit(cache=True, nogil=True, inline="always")
def _ctl(S, n_ctl, i, x):
    """Append the control (task i -> scale x) to this step's controls; returns the new count."""
    if n_ctl < S.ctl_task.shape[0]:
        S.ctl_task[n_ctl] = i
        S.ctl_val[n_ctl] = x
        return n_ctl + 1
    return n_ctl


@njit(cache=True, nogil=True)
def decide_baseline(T, S, C, info, P, code, j, actions):
    """One step of a published baseline: the actions of the pending tasks (0 = defer, origin + 1 = run
    at the origin; a task that fits not there goes to the datacenter left least over-committed) and the
    controls of the flexible tasks it runs. A task is never deferred past the last step from which it
    can still finish by its deadline (t1 + duration > deadline: it is started now)."""
    cap = C.cap
    n_dc = cap.shape[0]
    iopt = info.iopt
    k = iopt[IO_S0] + j
    t = C.t0 + STEP_S * j
    t1 = t + STEP_S
    pn = S.sc[SC_PEND_N]
    pend = S.pend
    allow_defer = C.opts[OPT_ALLOW_DEFER] > 0.5
    T_arr, T_dur, T_dl, T_o = T.arrival, T.duration, T.deadline, T.origin
    T_c, T_g, T_m, T_md = T.cores, T.gpus, T.mem, T.max_delay
    status, fin, scale = S.status, S.fin, S.scale
    nflex = S.sc[SC_FLEX_N]
    cb = P.cb
    # (every tuple field read in a loop is read once here: Numba increfs an array at each field read)
    P_start, P_tgt, P_cls, P_load, P_book, P_dem = P.start, P.tgt, P.cls, P.load, P.book, P.dem
    P_curve, P_infl, P_table, P_rate, P_isc = P.curve, P.infl, P.table, P.rate, P.isc
    T_flex, T_intr, T_smin, T_smax, T_mthr, T_ckpt = T.flexible, T.interruptible, T.smin, T.smax, T.mthr, T.ckpt
    S_flex, S_dest, S_commit, S_segs, S_rem, S_nseg = S.flex, S.dest, S.commit, S.segs, S.rem, S.nseg
    hour_start = k % SLOT_STEPS == 0
    day_start = k % STEPS_PER_DAY == 0

    # bookkeeping of booked shares (VCC, CarbonFlex)
    book_load = code >= POLICY_VCC  # (VCC, CarbonFlex)
    if book_load:
        for d in range(n_dc):
            for r in range(2):
                P_load[r, d] -= P_book[r, d, j]
                if P_load[r, d] < 1e-12:
                    P_load[r, d] = 0.0
        if day_start or j == 0:
            if j > 0:  # a day has ended: roll the demand and the inflexible load
                nd = min(P_isc[PI_DAYS] + 1, VCC_HISTORY_DAYS)
                for d in range(n_dc):
                    for x in range(VCC_HISTORY_DAYS - 1, 0, -1):
                        P_dem[d, x] = P_dem[d, x - 1]
                    P_dem[d, 0] = P_dem[d, VCC_HISTORY_DAYS]
                    P_dem[d, VCC_HISTORY_DAYS] = 0.0
                    for s in range(STEPS_PER_DAY):
                        P_infl[0, d, s] = P_infl[1, d, s]
                P_isc[PI_DAYS] = nd
            issue_forecast(info.act, info.fc, info.fci, info.known, info.inc, info.par, iopt, info.stamp, info.pub,
                           SIG_CARBON,
                           j, iopt[IO_H])
            carbon_known(info.hist, info.fc, k, cb)
            if code == POLICY_VCC:
                for d in range(n_dc):
                    if P_isc[PI_DAYS] == 0 or not day_start:
                        for h in range(24):
                            P_curve[d, h] = np.inf
                    else:
                        dmax = 0.0
                        for x in range(P_isc[PI_DAYS]):
                            dmax = max(dmax, P_dem[d, x])
                        vcc_curve(cb[d], dmax, P_infl[0, d], P_curve[d])
            elif day_start:
                carbonflex_learn(info.hist, k, T_arr, T_dur, T_dl, T_o, T_c, T_g, T_m, T_md, cap, t, P.table, P.rate)

    # what is to be decided: pending tasks, and (for the controlling policies) the flexible tasks running
    controls = code == POLICY_WAIT_AWHILE_INTERRUPTING or code == POLICY_CARBONSCALER  # noqa: SIM109
    controls = controls or code == POLICY_CARBONFLEX  # (the baselines that pause, resume, rescale)
    need_fc = False
    for q in range(pn):
        i = pend[q]
        if T_md[i] > 0.0 or (code == POLICY_CARBONSCALER and T_flex[i]):
            need_fc = True
            break
    if controls and nflex > 0:
        need_fc = True
    if need_fc and not (book_load and (day_start or j == 0)):
        issue_forecast(info.act, info.fc, info.fci, info.known, info.inc, info.par, iopt, info.stamp, info.pub,
                           SIG_CARBON, j,
                       iopt[IO_H])
        carbon_known(info.hist, info.fc, k, cb)

    # CarbonFlex: the provisioning of this slot at each site, from the learned table and the forecast
    prov = np.empty(n_dc)
    mult = np.ones(n_dc)
    if code == POLICY_CARBONFLEX:
        for d in range(n_dc):
            if P_rate[d] > 0.0 and need_fc:
                f = carbon_rank(cb[d], CF_RANK_STEPS)
                mult[d] = P_table[d, min(int(f * CF_BINS), CF_BINS - 1)]
                prov[d] = mult[d] * P_rate[d]
            else:
                prov[d] = np.inf

    avail = np.empty((n_dc, 3))
    for d in range(n_dc):
        for r in range(3):
            avail[d, r] = cap[d, r] - S_commit[d, r]
    if code == POLICY_GAIA_RES_FIRST:  # reserved = the capacity of the servers on, less what is committed
        managed = C.opts[OPT_MANAGED] > 0.5
        for d in range(n_dc):
            for r in range(3):
                on = _cap_of(C.srv_cfg, cap, d, S.srv_on[d, K_CPU], S.srv_on[d, K_GPU], r) if managed else cap[d, r]
                avail[d, r] = on - S_commit[d, r]
    h_now = (k % STEPS_PER_DAY) // SLOT_STEPS

    for q in range(pn):
        i = pend[q]
        o = T_o[i]
        run = True
        can_wait = allow_defer and t1 + T_dur[i] <= T_dl[i]
        first = P_start[i] != P_start[i]
        if POLICY_WAIT_AWHILE <= code <= POLICY_WAIT_AWHILE_INTERRUPTING:
            if T_md[i] > 0.0:
                if code == POLICY_WAIT_AWHILE_INTERRUPTING and T_intr[i]:
                    run = wa_run_now(cb[o], t, T_dl[i], T_dur[i])
                else:
                    if first:
                        P_start[i] = k + wa_start_offset(cb[o], t, T_arr[i], T_dur[i], T_md[i])
                    run = k >= P_start[i]
        elif POLICY_GAIA_LOWEST_CARBON_WINDOW <= code <= POLICY_GAIA_RES_FIRST:
            if first:
                cls = 0 if T_dur[i] < GAIA_SHORT_S else 1
                P_cls[cls, 0] += T_dur[i]
                P_cls[cls, 1] += 1.0
                wait = min(T_md[i], GAIA_WAIT_SHORT_S if cls == 0 else GAIA_WAIT_LONG_S)
                if wait > 0.0:
                    P_start[i] = k + gaia_start_offset(cb[o], t, T_arr[i], wait, P_cls[cls, 0] / P_cls[cls, 1],
                                                       code != POLICY_GAIA_LOWEST_CARBON_WINDOW)
                else:
                    P_start[i] = k
            run = k >= P_start[i]
            if not run and code == POLICY_GAIA_RES_FIRST and fits(T_c[i], T_g[i], T_m[i], avail, o):
                run = True  # RES-First: a waiting job starts at once on reserved capacity that is free
        elif code == POLICY_CARBONSCALER:
            if T_flex[i]:
                x = carbonscaler_scale(cb[o], t, k, T_dl[i], T_dur[i], T_smin[i], T_smax[i], T_mthr[i],
                                       T_intr[i])
                P_tgt[i] = x
                run = x > 0.0
        elif code >= POLICY_VCC:  # (VCC, CarbonFlex)
            sh = _share(T_c[i], T_g[i], T_m[i], cap, o)
            flex = T_md[i] > 0.0
            if first:
                P_start[i] = k
                if flex:
                    P_dem[o, VCC_HISTORY_DAYS] += sh * _steps_of(T_dur[i])
            if flex:
                lim = P_curve[o, h_now] if code == POLICY_VCC else prov[o]
                run = P_load[0, o] + sh <= lim + 1e-9 or (P_load[0, o] <= 1e-12 and lim > 0.0)
            if run or not can_wait:
                r = 0 if flex else 1
                P_load[r, o] += sh
                jr = j + _steps_of(T_dur[i])
                if jr < P_book.shape[2]:
                    P_book[r, o, jr] += sh
        if not run and can_wait:
            actions[q] = 0
            continue
        best = o
        if not fits(T_c[i], T_g[i], T_m[i], cap, o):
            best = fallback_dc(T_c[i], T_g[i], T_m[i], cap, avail)
            if best < 0:
                best = o
        for r in range(3):
            avail[best, r] -= T_c[i] if r == 0 else (T_g[i] if r == 1 else T_m[i])
        actions[q] = best + 1
    if book_load:
        for d in range(n_dc):
            P_infl[1, d, k % STEPS_PER_DAY] = P_load[1, d]

    # controls of the flexible tasks that have started
    if not controls or nflex == 0:
        return
    n_ctl = 0
    for q in range(nflex):
        i = S_flex[q]
        d = S_dest[i]
        running = status[i] == ST_STARTED and fin[i] > t
        paused = status[i] == ST_PAUSED
        if not (running or paused) or (running and fin[i] <= t1):
            continue  # waiting to resume (takes no control), or finishing within this step (left alone)
        if code == POLICY_WAIT_AWHILE_INTERRUPTING:
            if not T_intr[i]:
                continue
            w = work_left(i, t, status, fin, S_segs, S_rem, S_nseg, scale, T_ckpt, T_mthr)
            go = wa_run_now(cb[d], t, T_dl[i], w)
            if running and not go:
                n_ctl = _ctl(S, n_ctl, i, 0.0)
            elif paused and go:
                n_ctl = _ctl(S, n_ctl, i, 1.0)
        elif code == POLICY_CARBONSCALER:
            x = P_tgt[i]
            if hour_start or x != x:
                w = work_left(i, t, status, fin, S_segs, S_rem, S_nseg, scale, T_ckpt, T_mthr)
                x = carbonscaler_scale(cb[d], t, k, T_dl[i], w, T_smin[i], T_smax[i], T_mthr[i], T_intr[i])
                P_tgt[i] = x
            if running and x != scale[i]:
                n_ctl = _ctl(S, n_ctl, i, x if (x > 0.0 or T_intr[i]) else T_smin[i])
            elif paused and x > 0.0:
                n_ctl = _ctl(S, n_ctl, i, x)
        else:  # CarbonFlex: elastic scaling and suspension by the slot's learned provisioning
            if not hour_start or P_rate[d] <= 0.0:
                continue
            # never slow a task down so far that it cannot finish by its deadline (a slot later, at full scale)
            w = work_left(i, t, status, fin, S_segs, S_rem, S_nseg, scale, T_ckpt, T_mthr)
            x = T_smax[i] if mult[d] >= 1.0 else T_smin[i]
            if t + SLOT_STEPS * STEP_S + T_ckpt[i] + w / speedup(x, T_mthr[i]) > T_dl[i]:
                x = T_smax[i]
            if mult[d] <= 0.0:  # the oracle ran nothing in such slots: suspend (interruptible) or scale down
                late = t + SLOT_STEPS * STEP_S + T_ckpt[i] + w / speedup(T_smax[i], T_mthr[i]) > T_dl[i]
                if running and T_intr[i] and not late:
                    n_ctl = _ctl(S, n_ctl, i, 0.0)
                elif running and x != scale[i]:
                    n_ctl = _ctl(S, n_ctl, i, x)
            elif paused or (running and x != scale[i]):
                n_ctl = _ctl(S, n_ctl, i, x)
    S.sc[SC_CTL_N] = n_ctl


@njit(cache=True, nogil=True)
def run_baseline(T, S, C, info, P, code, j_end):
    """Run steps S.sc[SC_STEP] .. j_end - 1 with a published baseline (its plan in ``P``)."""
    actions = np.zeros(S.pend.shape[0], np.int32)
    act, hist, s0 = info.act, info.hist, info.iopt[IO_S0]
    for j in range(S.sc[SC_STEP], j_end):
        begin_step(T, S, C, j)
        publish(act, hist, j, s0)
        decide_baseline(T, S, C, info, P, code, j, actions)
        end_step(T, S, C, j, actions)
