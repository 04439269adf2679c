"""Flexible tasks (docs/simulation.md "Flexible tasks"): the per-step controls that pause, resume and
rescale started tasks, and the list of tasks a policy may control."""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from .capacity import speedup
from .layout import (
    RSEQ_BASE,
    SC_BAD_CTL,
    SC_CTL_N,
    SC_FLEX_N,
    SC_FORCED_RESUMES,
    SC_PAUSES,
    SC_RESCALES,
    SC_RESUMES,
    SC_RSEQ,
    ST_PAUSED,
    ST_QUEUED,
    ST_STARTED,
    STEP_S,
)


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
def _requeue(i, T_cores, T_gpus, T_mem, status, dest, scale, nxt, seq, q_head, q_tail, q_rlast, q_len, qdem, qmin,
             commit, sc):
    """Queue task i again at its datacenter, at its scale, ahead of the tasks queued for the first time
    (after the resumed ones already waiting, linked in after the last of them, ``q_rlast``): its request
    joins the queued demand and the commitment."""
    d = dest[i]
    x = scale[i]
    c, g, m = T_cores[i] * x, T_gpus[i] * x, T_mem[i] * x
    status[i] = ST_QUEUED
    seq[i] = RSEQ_BASE + sc[SC_RSEQ]
    sc[SC_RSEQ] += 1
    cls = 1 if T_gpus[i] > 0.0 else 0
    prev = q_rlast[d, cls]
    cur = q_head[d, cls] if prev < 0 else nxt[prev]
    nxt[i] = cur
    q_rlast[d, cls] = i
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
                  ctl_task, ctl_val, nxt, seq, q_head, q_tail, q_rlast, q_len, qdem, qmin, free, commit, rel, part,
                  diff, run_part, run_diff, n_paused, m_viol, sc):
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
                    _requeue(i, T_cores, T_gpus, T_mem, status, dest, scale, nxt, seq, q_head, q_tail, q_rlast,
                             q_len, qdem, qmin, commit, sc)
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
                        _requeue(i, T_cores, T_gpus, T_mem, status, dest, scale, nxt, seq, q_head, q_tail,
                                 q_rlast, q_len, qdem, qmin, commit, sc)
                        sc[SC_RESCALES] += 1
        if not ok:
            sc[SC_BAD_CTL] += 1
    for q in range(sc[SC_FLEX_N]):
        i = flex[q]
        if status[i] == ST_PAUSED and segs[i] < t and \
                t + STEP_S + T_ckpt[i] + rem[i] / speedup(scale[i], T_mthr[i]) > T_deadline[i]:
            n_paused[dest[i]] -= 1
            _requeue(i, T_cores, T_gpus, T_mem, status, dest, scale, nxt, seq, q_head, q_tail, q_rlast, q_len, qdem,
                     qmin, commit, sc)
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
