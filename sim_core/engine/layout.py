"""Slot layouts of the engine's arrays: task status codes, option and server-configuration slots,
the scalar counters of ``State.sc``, the information slots, and the namedtuples the kernels take
(``Tasks``, ``Ctx``, ``State``, ``Info``, ``PolicyView``) with their constructors. Module-level ints:
Numba freezes them into the kernels at compile time."""

from __future__ import annotations

from collections import namedtuple

import numpy as np

from gridshift import timestep

STEP_S = float(timestep.STEP_S)  # (a float: the kernels divide times in seconds by it)
EPS = 1e-9

# task status codes
ST_NOT_ARRIVED = 0
ST_PENDING = 1
ST_TRANSIT = 2
ST_QUEUED = 3
ST_STARTED = 4
ST_UNSCHEDULABLE = 5
ST_PAUSED = 6  # started, then paused by a control: holds nothing, waits to be resumed


# option slots in Ctx.opts
OPT_ALLOW_DEFER = 0
OPT_SINGLE_ACTION = 1
OPT_MANAGED = 2  # 1: servers have power states (run option power="managed"); 0: always on
OPT_CONTROLS = 3  # 1: a policy may pause / resume / rescale flexible tasks (never for the built-in policies)
OPT_LOCALITY = 4  # 1: a task's dataset moves only to a site that holds no replica of it (run option ``locality``)
OPT_RETAIN_S = 5  # how long a site keeps a dataset replica after its last use (s; ``locality_retention_days``)
N_OPTS = 6

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
                             "max_delay", "interruptible", "ckpt", "smin", "smax", "mthr", "flexible",
                             # data locality (sim_core.locality): the task's input dataset (-1: none shared,
                             # its whole ``bw`` always moves) and that dataset's GB (part of ``bw``)
                             "ds", "ds_gb"])
#: ``carbon``/``price``: the window's actual signals (never handed to a policy: what a policy may see is
#: in :data:`Info`)
Ctx = namedtuple("Ctx", ["cap", "carbon", "price", "delay_s_per_gb", "rtt_s", "t0",
                         "n_steps", "opts", "qmin", "srv_cfg"])
State = namedtuple("State", [
    # per task
    "status", "dest", "decision", "ready", "start", "delay", "forced", "violated", "nxt", "seq",
    # per dc
    "free", "commit", "q_head", "q_tail", "q_len", "transit_n", "acc", "acc_run",
    # per dc and list: the last resumed (or rescaled) task in the queue (-1: none); the resumed tasks are the
    # queue's first entries, so a resume is linked in after it in O(1)
    "q_rlast",
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
    # per task: GB moved by its transfer (``bw``, less its dataset when the destination holds a replica; 0 when
    # it runs at its origin or is undecided); per (dc, dataset): last use of the site's replica (s; -inf: none)
    "gb", "rep",
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
    order of every sum are unchanged; only where each value lives in memory differs.

    Each step's row holds one spare datacenter slot, never used: the view is then strided whatever the number
    of datacenters (unless it holds one value), and Numba types it with the same layout (any, 'A'). Without it a
    one-datacenter view would be contiguous (a size-1 axis has no stride), typed 'C', and every kernel that takes
    it would compile a second time, and be cached a second time, for one-site scenarios."""
    *lead, n_dc, n_steps = shape
    return np.swapaxes(np.full((*lead, n_steps, n_dc + 1), fill, dtype)[..., :n_dc], -1, -2)


#: the per-task fields of ``State`` and their initial values (dtype, fill): one place for :func:`new_state` and
#: for the tasks a chunked run appends (``sim_core.chunks``)
TASK_INIT = {
    "status": (np.int8, 0), "dest": (np.int32, -1), "decision": (np.float64, np.nan),
    "ready": (np.float64, np.nan), "start": (np.float64, np.nan), "delay": (np.float64, 0.0),
    "forced": (np.int8, 0), "violated": (np.int8, 0), "nxt": (np.int32, -1), "seq": (np.int64, 0),
    "fin": (np.float64, np.nan), "gb": (np.float64, 0.0),
}
#: the flexible-task fields of ``State`` (one slot per task when the run has flexible tasks and controls, else one
#: slot in all) and their initial values
FLEX_INIT = {
    "scale": (np.float64, 1.0), "segs": (np.float64, np.nan), "rem": (np.float64, 0.0), "run_s": (np.float64, 0.0),
    "nseg": (np.int32, 0), "npause": (np.int32, 0), "nrescale": (np.int32, 0),
    "flex": (np.int32, 0), "ctl_task": (np.int32, 0), "ctl_val": (np.float64, 0.0),
}

# ---------------------------------------------------------------------------- what compaction does to each field
# A chunked run (``sim_core.chunks``) drops the tasks that are done from its arrays and appends the next
# arrivals; every field of ``Tasks`` and ``State`` is declared here once by what it holds, so that the
# compaction is one generic function and a new field cannot be forgotten (tests/unit/sim_core/test_chunks.py).
K_VALUE = "value"  # one value per task (gathered with the tasks kept)
K_LINK = "link"  # one task index per task (-1: none): gathered, and its values renumbered
K_INDEX = "index"  # task indices that are not per task (-1: none): renumbered in place
K_LIST = "list"  # a list of task indices, its first ``State.sc[slot]`` entries live (slot: :data:`LIST_COUNT`)
K_FLEX = "flex"  # per task only when the run has flexible tasks and controls (else one slot): a run that
#                  has them keeps one chunk
K_RUN = "run"  # per run: datacenters, steps, counters (no task index)
TASK_KIND = dict.fromkeys(Tasks._fields, K_VALUE)
STATE_KIND = {
    **dict.fromkeys(("status", "dest", "decision", "ready", "start", "delay", "forced", "violated", "seq", "fin",
                     "gb"), K_VALUE),
    "nxt": K_LINK,
    **dict.fromkeys(("q_head", "q_tail", "q_rlast", "bucket_head", "bucket_tail"), K_INDEX),
    "pend": K_LIST,
    **dict.fromkeys(FLEX_INIT, K_FLEX),
    **dict.fromkeys(("free", "commit", "q_len", "transit_n", "acc", "acc_run", "srv_on", "srv_wk", "srv_twk", "qdem",
                     "srv", "rel", "part", "diff", "run_part", "run_diff", "m_queue", "m_transit", "m_pending", "sc",
                     "n_paused", "m_viol", "m_paused", "rep"), K_RUN),
}
#: the count slot in ``State.sc`` of each list of task indices
LIST_COUNT = {"pend": SC_PEND_N, "flex": SC_FLEX_N, "ctl_task": SC_CTL_N}
#: the slots of ``State.sc`` that hold a task index (renumbered by a compaction); every other slot is a count
SC_TASK_INDEX = (SC_NEXT_ARRIVAL,)
#: statuses in which the engine writes nothing more of a task unless an index field still refers to it (a started
#: task is final at its start without controls; with them it stays on the ``flex`` list until it has finished)
ST_FINAL = (ST_STARTED, ST_UNSCHEDULABLE)


def task_arrays(n_tasks: int) -> dict[str, np.ndarray]:
    """The per-task fields of a fresh ``State`` (:data:`TASK_INIT`) for ``n_tasks`` tasks."""
    return {k: np.full(n_tasks, v, dt) for k, (dt, v) in TASK_INIT.items()}


def new_state(n_tasks: int, n_dc: int, n_steps: int, n_flex: int = 1, n_ds: int = 0) -> State:
    """Zeroed state; ``n_flex``: the size of the flexible-task arrays (the task count when the run has
    flexible tasks and controls, else 1); ``n_ds``: the datasets of the run (no site holds a replica yet).
    The per-step arrays are step-major (:func:`steps_major`)."""
    f = np.float64
    k = max(n_flex, 1)
    return State(
        **task_arrays(n_tasks), **{name: np.full(k, v, dt) for name, (dt, v) in FLEX_INIT.items()},
        free=np.zeros((n_dc, 3), f), commit=np.zeros((n_dc, 3), f),
        q_head=np.full((n_dc, 2), -1, np.int32), q_tail=np.full((n_dc, 2), -1, np.int32),
        q_rlast=np.full((n_dc, 2), -1, np.int32),
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
        n_paused=np.zeros(n_dc, np.int64), m_viol=steps_major((n_dc, n_steps), np.int64),
        m_paused=steps_major((n_dc, n_steps), np.int64),
        rep=np.full((n_dc, max(n_ds, 1)), -np.inf),
    )
