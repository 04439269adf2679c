"""The jitted step loop: arrivals, decisions, transit, queues, execution, busy-time accounting.

Everything that Numba caches together lives in this one file (the cache is keyed on the file of
the caller): the step functions, the built-in rule policies and the loops that call them.

State is a structure of arrays packed in three namedtuples:

* ``Tasks``  (read-only task inputs, restricted to the run window, arrival-sorted)
* ``Ctx``    (read-only per-run context: capacities, signals, network, options)
* ``State``  (mutable: per-task outcome arrays, per-DC counters, per-step accumulators)

Times are seconds since the bundle's ``start_utc``; step j of the run covers
[T0 + 900 j, T0 + 900 (j + 1)) with T0 = 900 x (first step of the run).
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

# built-in policy codes
POLICY_CODES = {
    "local_only": 0,
    "round_robin": 1,
    "most_available": 2,
    "least_pending": 3,
    "lowest_carbon": 4,
    "lowest_price": 5,
    "lowest_utilization": 6,
    "random": 7,
    "defer_to_greener": 8,
}

# option slots in Ctx.opts
OPT_ALLOW_DEFER = 0
OPT_SINGLE_ACTION = 1
N_OPTS = 2

# scalar slots in State.sc
SC_PEND_N = 0
SC_NEXT_ARRIVAL = 1
SC_SEQ = 2
SC_RR = 3
SC_INVALID = 4
SC_FORCED = 5
SC_STEP = 6  # next step to begin
N_SC = 7

Tasks = namedtuple("Tasks", ["arrival", "duration", "cores", "gpus", "mem", "bw", "deadline",
                             "origin", "u_rand"])
Ctx = namedtuple("Ctx", ["cap", "carbon", "price", "defer_thr", "delay_s_per_gb", "rtt_s", "t0",
                         "n_steps", "opts", "qmin"])
State = namedtuple("State", [
    # per task
    "status", "dest", "decision", "ready", "start", "delay", "forced", "violated", "nxt", "seq",
    # per dc
    "free", "commit", "q_head", "q_tail", "q_len", "transit_n", "acc", "acc_run",
    # per step
    "rel", "part", "diff", "run_part", "run_diff", "bucket_head", "bucket_tail",
    "m_queue", "m_transit", "m_pending",
    # misc
    "pend", "sc",
])
#: what a jitted policy receives: ``policy(view, actions)`` writes actions[q] for q < n_pending
#: (0 = defer, j + 1 = assign to datacenter j).
PolicyView = namedtuple("PolicyView", [
    "step", "t", "pending", "arrival", "duration", "cores", "gpus", "mem", "bw", "deadline",
    "origin", "cap", "avail", "carbon_now", "price_now", "queue_len", "transit_n",
    "delay_s_per_gb", "rtt_s", "allow_defer",
])


def new_state(n_tasks: int, n_dc: int, n_steps: int) -> State:
    f = np.float64
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
        rel=np.zeros((3, n_dc, n_steps + 1), f), part=np.zeros((3, n_dc, n_steps), f),
        diff=np.zeros((3, n_dc, n_steps + 1), f), run_part=np.zeros((n_dc, n_steps), np.int64),
        run_diff=np.zeros((n_dc, n_steps + 1), np.int64),
        bucket_head=np.full(n_steps + 1, -1, np.int32), bucket_tail=np.full(n_steps + 1, -1, np.int32),
        m_queue=np.zeros((n_dc, n_steps), np.int64), m_transit=np.zeros((n_dc, n_steps), np.int64),
        m_pending=np.zeros((n_dc, n_steps), np.int64),
        pend=np.zeros(max(n_tasks, 1), np.int32), sc=np.zeros(N_SC, np.int64),
    )


# ---------------------------------------------------------------------------- helpers
@njit(cache=True, nogil=True, inline="always")
def _res(T, i, r):
    if r == 0:
        return T.cores[i]
    if r == 1:
        return T.gpus[i]
    return T.mem[i]


@njit(cache=True, nogil=True, inline="always")
def fits(c, g, m, a, d):
    """A request (c cores, g GPUs, m GB) fits in row d of the (n_dc, 3) capacity array a."""
    return (c <= a[d, 0] + EPS) and (g <= a[d, 1] + EPS) and (m <= a[d, 2] + EPS)


@njit(cache=True, nogil=True, inline="always")
def fits_any_empty(T, C, i):
    cap = C.cap
    c, g, m = T.cores[i], T.gpus[i], T.mem[i]
    for d in range(cap.shape[0]):  # noqa: SIM110 - generators are slow in Numba
        if fits(c, g, m, cap, d):
            return True
    return False


@njit(cache=True, nogil=True, inline="always")
def fallback_dc(T, C, avail, i):
    """DC (that can hold task i when empty) left least over-committed after taking it."""
    best = -1
    best_score = -np.inf
    cap = C.cap
    c, g, m = T.cores[i], T.gpus[i], T.mem[i]
    for d in range(cap.shape[0]):
        if not fits(c, g, m, cap, d):
            continue
        score = np.inf
        for r in range(3):
            need = _res(T, i, r)
            if need > 0.0 and C.cap[d, r] > 0.0:
                s = (avail[d, r] - need) / C.cap[d, r]
                if s < score:
                    score = s
        if score > best_score:
            best_score = score
            best = d
    return best


@njit(cache=True, nogil=True, inline="always")
def _enqueue(T, S, i, d):
    cls = 1 if T.gpus[i] > 0.0 else 0
    S.seq[i] = S.sc[SC_SEQ]
    S.sc[SC_SEQ] += 1
    S.nxt[i] = -1
    tail = S.q_tail[d, cls]
    if tail < 0:
        S.q_head[d, cls] = i
    else:
        S.nxt[tail] = i
    S.q_tail[d, cls] = i
    S.q_len[d] += 1
    S.status[i] = ST_QUEUED


@njit(cache=True, nogil=True, inline="always")
def assign(T, S, C, i, d, tdec, j, forced):
    """Assign task i to datacenter d at time tdec (step j); starts its transfer if remote."""
    o = T.origin[i]
    S.dest[i] = d
    S.decision[i] = tdec
    S.forced[i] = forced
    for r in range(3):
        S.commit[d, r] += _res(T, i, r)
    delay = 0.0 if d == o else T.bw[i] * C.delay_s_per_gb[o, d] + C.rtt_s[o, d]
    S.delay[i] = delay
    ready = tdec + delay
    S.ready[i] = ready
    t1 = C.t0 + STEP_S * (j + 1)
    if ready < t1:
        _enqueue(T, S, i, d)
        return
    S.status[i] = ST_TRANSIT
    S.transit_n[d] += 1
    x = (ready - C.t0) / STEP_S
    if x < C.n_steps:
        jb = int(math.floor(x))
        S.nxt[i] = -1
        tail = S.bucket_tail[jb]
        if tail < 0:
            S.bucket_head[jb] = i
        else:
            S.nxt[tail] = i
        S.bucket_tail[jb] = i


@njit(cache=True, nogil=True, inline="always")
def _start(T, S, C, i, d, j):
    t = C.t0 + STEP_S * j
    s = max(t, S.ready[i])
    f = s + T.duration[i]
    S.start[i] = s
    S.status[i] = ST_STARTED
    if f > T.deadline[i]:
        S.violated[i] = 1
    S.q_len[d] -= 1
    n = C.n_steps
    # capacity is held until the first step boundary at or after the finish
    xr = (f - C.t0) / STEP_S
    jr = int(math.ceil(xr))
    js = j
    jf = jr - 1  # last step overlapped
    for r in range(3):
        v = _res(T, i, r)
        S.free[d, r] -= v
        if jr < n:
            S.rel[r, d, jr] += v
        if v == 0.0:
            continue
        if jf == js:
            S.part[r, d, js] += v * (f - s) / STEP_S
        else:
            S.part[r, d, js] += v * (C.t0 + STEP_S * (js + 1) - s) / STEP_S
            if jf < n:
                S.part[r, d, jf] += v * (f - (C.t0 + STEP_S * jf)) / STEP_S
            S.diff[r, d, js + 1] += v
            S.diff[r, d, min(jf, n)] -= v
    S.run_part[d, js] += 1
    if jf > js:
        if jf < n:
            S.run_part[d, jf] += 1
        S.run_diff[d, js + 1] += 1
        S.run_diff[d, min(jf, n)] -= 1


@njit(cache=True, nogil=True)
def schedule_dc(T, S, C, d, j):
    """FCFS with backfill: in queue order, start every task that fits the free capacity.

    The queue is kept as two FCFS lists (CPU-only and GPU tasks) merged by join order; a list is
    skipped once the free capacity is below the smallest request of any task in it (exactly the
    same starts as a single-list scan, without walking tasks that cannot fit).
    """
    cur0 = S.q_head[d, 0]
    cur1 = S.q_head[d, 1]
    prev0 = -1
    prev1 = -1
    free = S.free
    q = C.qmin
    while True:
        if cur0 >= 0 and (free[d, 0] < q[0] - EPS or free[d, 2] < q[2] - EPS):
            cur0 = -1
        if cur1 >= 0 and (free[d, 0] < q[3] - EPS or free[d, 1] < q[4] - EPS or free[d, 2] < q[5] - EPS):
            cur1 = -1
        if cur0 < 0 and cur1 < 0:
            break
        if cur1 < 0 or (cur0 >= 0 and S.seq[cur0] < S.seq[cur1]):
            nx = S.nxt[cur0]
            prev0 = _try_start(T, S, C, d, j, 0, cur0, prev0)
            cur0 = nx
        else:
            nx = S.nxt[cur1]
            prev1 = _try_start(T, S, C, d, j, 1, cur1, prev1)
            cur1 = nx


@njit(cache=True, nogil=True, inline="always")
def _try_start(T, S, C, d, j, k, i, prev):
    """Start task i (in queue list k of DC d) if it fits, unlinking it; return the list's new prev."""
    if not fits(T.cores[i], T.gpus[i], T.mem[i], S.free, d):
        return i
    nx = S.nxt[i]
    if prev < 0:
        S.q_head[d, k] = nx
    else:
        S.nxt[prev] = nx
    if S.q_tail[d, k] == i:
        S.q_tail[d, k] = prev
    S.nxt[i] = -1
    _start(T, S, C, i, d, j)
    return prev


@njit(cache=True, nogil=True, inline="always")
def _compact_pending(S):
    n = S.sc[SC_PEND_N]
    k = 0
    for q in range(n):
        i = S.pend[q]
        if S.status[i] == ST_PENDING:
            S.pend[k] = i
            k += 1
    S.sc[SC_PEND_N] = k


@njit(cache=True, nogil=True)
def begin_step(T, S, C, j):
    """Releases, transit arrivals, new tasks, forced assignments. Returns the pending count."""
    t = C.t0 + STEP_S * j
    t1 = t + STEP_S
    n_dc = C.cap.shape[0]
    for d in range(n_dc):
        for r in range(3):
            v = S.rel[r, d, j]
            S.free[d, r] += v
            S.commit[d, r] -= v
    # transfers that complete during this step join their destination queue
    i = S.bucket_head[j]
    while i >= 0:
        nx = S.nxt[i]
        d = S.dest[i]
        S.transit_n[d] -= 1
        _enqueue(T, S, i, d)
        i = nx
    S.bucket_head[j] = -1
    S.bucket_tail[j] = -1
    # new arrivals
    nt = T.arrival.shape[0]
    p = S.sc[SC_NEXT_ARRIVAL]
    pn = S.sc[SC_PEND_N]
    while p < nt and T.arrival[p] < t1:
        if fits_any_empty(T, C, p):
            S.status[p] = ST_PENDING
            S.pend[pn] = p
            pn += 1
        else:
            S.status[p] = ST_UNSCHEDULABLE
        p += 1
    S.sc[SC_NEXT_ARRIVAL] = p
    S.sc[SC_PEND_N] = pn
    # tasks still undecided after their deadline go to their origin
    forced_any = False
    for q in range(pn):
        i = S.pend[q]
        if T.deadline[i] <= t:
            d = T.origin[i]
            if not fits(T.cores[i], T.gpus[i], T.mem[i], C.cap, d):
                d = fallback_dc(T, C, S.commit, i)
            assign(T, S, C, i, d, max(t, T.arrival[i]), j, 1)
            S.sc[SC_FORCED] += 1
            forced_any = True
    if forced_any:
        _compact_pending(S)
    return S.sc[SC_PEND_N]


@njit(cache=True, nogil=True)
def end_step(T, S, C, j, actions):
    """Apply the actions of the pending tasks, run the queues, record the step's counters."""
    t = C.t0 + STEP_S * j
    n_dc = C.cap.shape[0]
    pn = S.sc[SC_PEND_N]
    allow_defer = C.opts[OPT_ALLOW_DEFER] > 0.5
    single = C.opts[OPT_SINGLE_ACTION] > 0.5
    any_assigned = False
    for q in range(pn):
        i = S.pend[q]
        a = actions[0] if single else actions[q]
        if a <= 0:
            if allow_defer:
                continue
            a = T.origin[i] + 1
        d = a - 1
        if d >= n_dc or not fits(T.cores[i], T.gpus[i], T.mem[i], C.cap, d):
            d = fallback_dc(T, C, S.commit, i)
            S.sc[SC_INVALID] += 1
        assign(T, S, C, i, d, max(t, T.arrival[i]), j, 0)
        any_assigned = True
    if any_assigned:
        _compact_pending(S)
    for d in range(n_dc):
        schedule_dc(T, S, C, d, j)
    # counters at the end of the step
    pn = S.sc[SC_PEND_N]
    for q in range(pn):
        S.m_pending[T.origin[S.pend[q]], j] += 1
    for d in range(n_dc):
        S.m_queue[d, j] = S.q_len[d]
        S.m_transit[d, j] = S.transit_n[d]
        for r in range(3):
            S.acc[r, d] += S.diff[r, d, j]
            S.part[r, d, j] += S.acc[r, d]
        S.acc_run[d] += S.run_diff[d, j]
        S.run_part[d, j] += S.acc_run[d]
    S.sc[SC_STEP] = j + 1


# ---------------------------------------------------------------------------- built-in policies
@njit(cache=True, nogil=True)
def decide_builtin(T, S, C, code, j, actions):
    """Rule policies. Each reserves the capacity it hands out within the step."""
    n_dc = C.cap.shape[0]
    pn = S.sc[SC_PEND_N]
    t = C.t0 + STEP_S * j
    t1 = t + STEP_S
    allow_defer = C.opts[OPT_ALLOW_DEFER] > 0.5
    single = C.opts[OPT_SINGLE_ACTION] > 0.5
    avail = np.empty((n_dc, 3))
    cnt = np.empty(n_dc)
    for d in range(n_dc):
        for r in range(3):
            avail[d, r] = C.cap[d, r] - S.commit[d, r]
        cnt[d] = S.q_len[d] + S.transit_n[d]
    n_eval = min(pn, 1) if single else pn
    for q in range(n_eval):
        i = S.pend[q]
        o = T.origin[i]
        ci, gi, mi = T.cores[i], T.gpus[i], T.mem[i]
        best = -1
        if code == 0:  # local_only
            if fits(ci, gi, mi, C.cap, o):
                best = o
        elif code == 8:  # defer_to_greener
            if (allow_defer and C.carbon[o, j] > C.defer_thr[o, j]
                    and t1 + T.duration[i] <= T.deadline[i]):
                actions[q] = 0
                continue
            bs = np.inf
            tdec = max(t, T.arrival[i])
            for d in range(n_dc):  # greenest DC with room that can still meet the deadline
                if fits(ci, gi, mi, avail, d):
                    dl = 0.0 if d == o else T.bw[i] * C.delay_s_per_gb[o, d] + C.rtt_s[o, d]
                    if tdec + dl + T.duration[i] <= T.deadline[i] and C.carbon[d, j] < bs:
                        bs = C.carbon[d, j]
                        best = d
            if best < 0:
                for d in range(n_dc):
                    if fits(ci, gi, mi, avail, d) and C.carbon[d, j] < bs:
                        bs = C.carbon[d, j]
                        best = d
        elif code == 1:  # round_robin
            rr = S.sc[SC_RR]
            for k in range(n_dc):
                d = (rr + k) % n_dc
                if fits(ci, gi, mi, avail, d):
                    best = d
                    break
            S.sc[SC_RR] = ((best if best >= 0 else rr) + 1) % n_dc
        elif code == 7:  # random among DCs with room
            nc = 0
            for d in range(n_dc):
                if fits(ci, gi, mi, avail, d):
                    nc += 1
            if nc > 0:
                pick = min(int(T.u_rand[i] * nc), nc - 1)
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
                if code == 2:  # most_available: most free cores
                    s = -avail[d, 0]
                elif code == 3:  # least_pending: fewest queued + in transit
                    s = cnt[d]
                elif code == 4:
                    s = C.carbon[d, j]
                elif code == 5:
                    s = C.price[d, j]
                else:  # lowest_utilization: mean committed fraction
                    s = 0.0
                    m = 0
                    for r in range(3):
                        if C.cap[d, r] > 0.0:
                            s += 1.0 - avail[d, r] / C.cap[d, r]
                            m += 1
                    s = s / max(m, 1)
                if s < bs:
                    bs = s
                    best = d
        if best < 0:
            best = fallback_dc(T, C, avail, i)
        if best < 0:
            best = o
        for r in range(3):
            avail[best, r] -= _res(T, i, r)
        cnt[best] += 1
        actions[q] = best + 1


@njit(cache=True, nogil=True)
def run_builtin(T, S, C, code, j_end):
    """Run steps S.sc[SC_STEP] .. j_end - 1 with a built-in policy."""
    actions = np.zeros(S.pend.shape[0], np.int32)
    for j in range(S.sc[SC_STEP], j_end):
        pn = begin_step(T, S, C, j)
        if pn > 0:
            decide_builtin(T, S, C, code, j, actions)
        end_step(T, S, C, j, actions)


def _run_custom_py(T, S, C, policy, j_end):
    actions = np.zeros(S.pend.shape[0], np.int32)
    allow = C.opts[OPT_ALLOW_DEFER] > 0.5
    for j in range(S.sc[SC_STEP], j_end):
        pn = begin_step(T, S, C, j)
        if pn > 0:
            n_dc = C.cap.shape[0]
            avail = np.empty((n_dc, 3))
            for d in range(n_dc):
                for r in range(3):
                    avail[d, r] = C.cap[d, r] - S.commit[d, r]
            view = PolicyView(j, C.t0 + STEP_S * j, S.pend[:pn], T.arrival, T.duration, T.cores,
                              T.gpus, T.mem, T.bw, T.deadline, T.origin, C.cap, avail,
                              C.carbon[:, j], C.price[:, j], S.q_len, S.transit_n,
                              C.delay_s_per_gb, C.rtt_s, allow)
            policy(view, actions)
        end_step(T, S, C, j, actions)


# A loop specialised on a user's jitted policy: not cached (the cache cannot key on it).
run_custom = njit(nogil=True)(_run_custom_py)


@njit(cache=True, nogil=True)
def rolling_quantile(x, window, q):
    """q-quantile (linear, as numpy) of x[k : k + window] (clipped at the end), per row."""
    n_dc, n = x.shape
    out = np.empty((n_dc, n))
    buf = np.empty(window)
    for d in range(n_dc):
        for k in range(n):
            m = min(window, n - k)
            for t in range(m):
                buf[t] = x[d, k + t]
            v = np.sort(buf[:m])
            pos = q * (m - 1)
            lo = int(math.floor(pos))
            hi = min(lo + 1, m - 1)
            out[d, k] = v[lo] + (v[hi] - v[lo]) * (pos - lo)
    return out
