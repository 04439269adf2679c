"""The step: what happens at the start of a step (releases, transit arrivals, new tasks, forced
assignments) and at its end (the actions applied, the queues run, the step's counters, the server
power states at the boundary), the view a jitted policy gets, and the run loop of a user's jitted policy.

A policy's run loop (``engine.loop.policy_loop``) is, per step: :func:`begin_step`, ``information.publish``,
the policy's decision, :func:`end_step`.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .capacity import _book, fallback_dc, fits, fits_any
from .flexible import flex_controls, flex_forget_finished
from .information import issue_all, publish
from .layout import (
    FC_ORACLE,
    IO_MODEL,
    IO_S0,
    OPT_ALLOW_DEFER,
    OPT_CONTROLS,
    OPT_LOCALITY,
    OPT_MANAGED,
    OPT_RETAIN_S,
    OPT_SINGLE_ACTION,
    SC_CTL_N,
    SC_FLEX_N,
    SC_FORCED,
    SC_INVALID,
    SC_NEXT_ARRIVAL,
    SC_PEND_N,
    SC_STEP,
    SIG_CARBON,
    SIG_PRICE,
    ST_PENDING,
    ST_UNSCHEDULABLE,
    STEP_S,
    PolicyView,
)
from .queues import _drain_bucket, _route_decided, schedule
from .servers import servers_at_boundary


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
        _route_decided(j, T_origin, T.bw, T.ds, T.ds_gb, C.delay_s_per_gb, C.rtt_s, t0, C.n_steps, pend, status,
                       dest, decision, S.delay, S.ready, S.gb, S.rep, C.opts[OPT_LOCALITY] > 0.5, C.opts[OPT_RETAIN_S],
                       nxt, transit_n, bucket_head, bucket_tail, sc)
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
                      S.npause, S.nrescale, S.flex, S.ctl_task, S.ctl_val, nxt, seq, q_head, q_tail, S.q_rlast, q_len,
                      qdem, C.qmin, free, commit, rel, part, diff, run_part, run_diff, S.n_paused, S.m_viol, sc)

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
        _route_decided(j, T_origin, T.bw, T.ds, T.ds_gb, C.delay_s_per_gb, C.rtt_s, t0, n_steps, pend, status,
                       dest, decision, S.delay, S.ready, S.gb, S.rep, C.opts[OPT_LOCALITY] > 0.5, C.opts[OPT_RETAIN_S],
                       nxt, transit_n, bucket_head, bucket_tail, sc)
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


@njit(cache=True, nogil=True)
def work_left(S, j):
    """Whether, at the start of step j, any task that arrived is pending, in transit, queued, paused or runs in
    step j (those running on: the accumulated count and step j's change; those that finish in step j: booked
    straight into its column when they started). A drained run ends at the first step past its window where
    none is (sim_core.drain)."""
    sc = S.sc
    if sc[SC_PEND_N] > 0:
        return True
    n_dc = S.q_len.shape[0]
    for d in range(n_dc):
        if S.q_len[d] > 0 or S.transit_n[d] > 0 or S.n_paused[d] > 0:
            return True
    if j >= S.run_part.shape[1]:
        return False
    running = 0
    for d in range(n_dc):  # (a loop, not any() over a generator: a jitted kernel)
        running += abs(S.acc_run[d] + S.run_diff[d, j] + S.run_part[d, j])
    return running > 0


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
