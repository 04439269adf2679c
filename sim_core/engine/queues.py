"""Queues: pending tasks on their way to a datacenter (transit buckets), the FCFS queues with backfill per
datacenter, and the scheduler that starts queued tasks on free capacity (and on the servers that are on,
under managed power) and books their busy time exactly."""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from .capacity import fits, speedup
from .layout import EPS, SC_FLEX_N, SC_PEND_N, SC_SEQ, SC_STARTED, ST_QUEUED, ST_STARTED, ST_TRANSIT, STEP_S
from .servers import _caps_on, _start_after_wake, _wake_now


@njit(cache=True, nogil=True, inline="always")
def _moved_gb(i, o, d, t, T_bw, T_ds, T_ds_gb, rep, locality, retain_s):
    """GB task ``i`` (decided at ``t``, origin ``o``) moves to ``d``, and the replica sets it updates
    (docs/simulation.md "Data locality"): without locality, or without a shared dataset, its whole ``bw``;
    with locality its origin holds its dataset, and the dataset moves only when ``d`` has no replica used
    within ``retain_s`` (else only the rest: checkpoint and outputs); both sites then hold it, last used at ``t``."""
    k = T_ds[i]
    if not locality or k < 0:
        return 0.0 if d == o else T_bw[i]
    g = 0.0
    if d != o:
        g = T_bw[i] if rep[d, k] < t - retain_s else T_bw[i] - T_ds_gb[i]
        rep[d, k] = max(rep[d, k], t)
    rep[o, k] = max(rep[o, k], t)
    return g


@njit(cache=True, nogil=True)
def _route_decided(j, T_origin, T_bw, T_ds, T_ds_gb, delay_s_per_gb, rtt_s, t0, n_steps, pend, status, dest,
                   decision, delay, ready, gb, rep, locality, retain_s, nxt, transit_n, bucket_head, bucket_tail, sc):
    """Send the pending tasks just decided on their way and drop them from the pending list; record the
    GB each moves (``gb``, :func:`_moved_gb`) and the replicas it leaves (``rep``).

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
        g = _moved_gb(i, o, d, decision[i], T_bw, T_ds, T_ds_gb, rep, locality, retain_s)
        gb[i] = g
        dl = 0.0 if d == o else g * delay_s_per_gb[o, d] + rtt_s[o, d]
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


# ---------------------------------------------------------------------------- the scheduler
# Every datacenter's queue, FCFS with backfill: in queue order, start every task that fits the
# free capacity. (One call per step for all datacenters: the arrays are passed once.)
#
# The queue is kept as two FCFS lists (CPU-only and GPU tasks) merged by join order; a list is
# skipped once the free capacity is below the smallest request of any task in it (exactly the
# same starts as a single-list scan, without walking tasks that cannot fit). A started task holds
# its capacity until the first step boundary at or after its finish; its busy time is booked
# exactly: fractions of its first and last steps in ``part``, whole steps between via ``diff``.
#
# ``managed`` (server power states): a task that fits the free capacity starts at
# max(step start, ready time) if it fits on the servers that are on; else, if it fits on the
# servers on or waking, when the waking servers are up; else servers are woken now (at its ready
# time) for it and for the tasks before it still waiting for servers in this step, and it starts
# when they are up. A start that would fall after this step leaves the task queued (it starts in
# the next step, when the servers are up; its capacity is not held meanwhile), so that start time,
# busy time, SLA and the per-step counters all follow the real start. Without ``managed`` every
# server is on and this is the plain FCFS with backfill.
#
# A queued task that started before (a resumed or rescaled flexible task, ahead of the first-time
# tasks in its list) asks its request x its scale and runs a segment of checkpoint overhead +
# remaining work / speed-up at its scale (:func:`speedup`); its first start time is kept, its SLA is
# re-decided (``m_viol`` counts the net change in the step). ``ctl_on``: flexible tasks that start join
# the controllable list ``flex``.
#
# Inlined into its caller (Numba IR; ``benchmarks/bench_vector_env.py`` prints the step's fixed cost): a
# call passing these ~45 arrays cost ≈ 0.6 µs a step (measured with no datacenter at all), more than an
# empty step's queue work.
#
# (One monolithic loop: a helper that takes arrays, inlined or not, costs an atomic reference count per
# array at every call, more than the per-task work here.)
@njit(cache=True, nogil=True, inline="always")
def schedule(T, S, C, j, managed, ctl_on):
    """Start the queued tasks that fit, FCFS with backfill, and book their busy time (the comment above)."""
    T_cores, T_gpus, T_mem, T_duration, T_deadline = T.cores, T.gpus, T.mem, T.duration, T.deadline
    T_ckpt, T_mthr, T_flexible = T.ckpt, T.mthr, T.flexible
    ready, start, status, violated, nxt, seq = S.ready, S.start, S.status, S.violated, S.nxt, S.seq
    q_head, q_tail, q_len, free, rel, part, diff = S.q_head, S.q_tail, S.q_len, S.free, S.rel, S.part, S.diff
    q_rlast = S.q_rlast
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
                _clear_demand(qdem, d)
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
                    a0, a1, a2 = _allocation(cap, free, d, c, g, m)  # allocation with this task
                    if a0 > caps[0] + EPS or a1 > caps[1] + EPS or a2 > caps[2] + EPS:  # not on the servers on
                        if a0 + w0 > caps[9] + EPS or a1 + w1 > caps[10] + EPS or a2 + w2 > caps[11] + EPS:
                            _wake_now(cfg, cap, d, a0 + w0, a1 + w1, a2 + w2, s, t1, j, srv_on, srv_wk, srv_twk, srv,
                                      caps)
                        if a0 > caps[0] + EPS or a1 > caps[1] + EPS or a2 > caps[2] + EPS:
                            # on servers that are waking: when (the first group that holds it) is up
                            s = _start_after_wake(caps, a0, a1, a2, s, srv_twk[d, 0], srv_twk[d, 1])
                    if s >= t1:  # up only after this step: stays queued, counted as waiting for servers
                        ok = False
                        w0, w1, w2 = w0 + c, w1 + g, w2 + m
            if ok:
                # unlink from list k
                if prev < 0:
                    q_head[d, k] = nx
                else:
                    nxt[prev] = nx
                if q_tail[d, k] == i:
                    q_tail[d, k] = prev
                if q_rlast[d, k] == i:  # (the resumed tasks lead the list: prev is one of them, or none)
                    q_rlast[d, k] = prev
                nxt[i] = -1
                # start (at s: max(step start, ready time), or later for a server that was waking)
                if resumed:  # a new run segment: checkpoint overhead + the remaining work at this scale
                    f = _resume_segment(i, d, j, s, T_ckpt, T_mthr, T_deadline, rem, scale, segs, nseg, run_s, m_viol,
                                        violated)
                else:
                    f = s + T_duration[i]
                    start[i] = s
                    sc[SC_STARTED] += 1
                    if f > T_deadline[i]:
                        violated[i] = 1
                        m_viol[d, j] += 1
                    if ctl_on and T_flexible[i]:  # controllable from now on
                        _make_controllable(i, s, T_duration, flex, segs, rem, nseg, run_s, sc)
                _dequeue(i, d, f, c, g, m, fin, status, q_len, qdem)
                # first boundary at or after the finish. Guard: f comes from data (an infinite or
                # huge duration): only values in (j, n] are converted to an integer, the rest is
                # clamped to j + 1 (a finish at or before this step's start) or n + 1 (past the window,
                # also NaN), which books exactly what any boundary beyond n would; so jr is in
                # j + 1 .. n + 1 and every index below (jr < n, jf = jr - 1, min(jf, n)) is in range.
                jr = release_step(f, t0, j, n)
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
        if q_len[d] == 0:
            _clear_demand(qdem, d)


@njit(cache=True, nogil=True, inline="always")
def release_step(f, t0, j, n):
    """The first step boundary (index) at or after a finish f of a segment started in step j, clamped to
    j + 1 .. n + 1 (scalars only: an inlined helper that takes arrays costs a reference count per array at
    every call, which in the per-task loop is more than the work itself)."""
    y = (f - t0) / STEP_S
    if y <= j:
        return j + 1
    if y <= n:
        return int(math.ceil(y))
    return n + 1


# Branch-free helpers of the scheduler's per-task loop: Numba prunes the reference counts of the arrays an
# inlined helper takes only within one basic block, so these have no branch (and cost nothing).
@njit(cache=True, nogil=True, inline="always")
def _resume_segment(i, d, j, s, T_ckpt, T_mthr, T_deadline, rem, scale, segs, nseg, run_s, m_viol, violated):
    """A new run segment of resumed task i at s: checkpoint overhead + the remaining work at its scale; its SLA
    re-decided (``m_viol`` counts the net change in step j). Returns the segment's finish."""
    seg = T_ckpt[i] + rem[i] / speedup(scale[i], T_mthr[i])
    f = s + seg
    segs[i] = s
    nseg[i] += 1
    run_s[i] += seg
    late = int(f > T_deadline[i])
    m_viol[d, j] += late - violated[i]
    violated[i] = late
    return f


@njit(cache=True, nogil=True, inline="always")
def _make_controllable(i, s, T_duration, flex, segs, rem, nseg, run_s, sc):
    """Flexible task i, started at s, joins the controllable list (its first run segment)."""
    flex[sc[SC_FLEX_N]] = i
    sc[SC_FLEX_N] += 1
    segs[i] = s
    rem[i] = T_duration[i]
    nseg[i] = 1
    run_s[i] = T_duration[i]


@njit(cache=True, nogil=True, inline="always")
def _dequeue(i, d, f, c, g, m, fin, status, q_len, qdem):
    """Task i (request c, g, m) leaves datacenter d's queue, running until f."""
    fin[i] = f
    status[i] = ST_STARTED
    q_len[d] -= 1
    qdem[d, 0] -= c
    qdem[d, 1] -= g
    qdem[d, 2] -= m


@njit(cache=True, nogil=True, inline="always")
def _clear_demand(qdem, d):
    """No rounding residue of the running sums survives an empty queue."""
    qdem[d, 0] = 0.0
    qdem[d, 1] = 0.0
    qdem[d, 2] = 0.0


@njit(cache=True, nogil=True, inline="always")
def _allocation(cap, free, d, c, g, m):
    """Datacenter d's allocation (cores, GPUs, GB) with a request (c, g, m) added."""
    return cap[d, 0] - free[d, 0] + c, cap[d, 1] - free[d, 1] + g, cap[d, 2] - free[d, 2] + m
