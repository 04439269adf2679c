"""Wait Awhile (Wiesner et al., Middleware 2021; docs/baselines.md): delay-tolerant tasks start in the
lowest-carbon window within their allowed delay (``wait_awhile``; ``wait_awhile_capacity``: among the windows
with room left in the policy's own plan of the site), or interruptible ones run in the lowest-carbon steps before
their deadline, paused in the others (``wait_awhile_interrupting``), or every delay-tolerant task runs while the
carbon intensity is at most the 30th percentile of the next 24 h of forecast and waits (or is paused) above it
until its allowed delay is spent, then runs to completion (``wait_awhile_threshold``, the threshold rule as
CarbonFlex §6.1 ran it)."""

from __future__ import annotations

import math
from collections import namedtuple

import numpy as np
from numba import njit

from ..engine.capacity import fallback_dc, fits
from ..engine.information import greener_threshold
from ..engine.layout import (
    IO_S0,
    OPT_ALLOW_DEFER,
    SC_CTL_N,
    SC_FLEX_N,
    SC_PEND_N,
    ST_PAUSED,
    ST_STARTED,
    STEP_S,
)
from ..engine.loop import policy_loop
from . import registry
from .plan import available, ctl, know_carbon, needs_forecast, reserve, room_for, start_plan, steps_of, work_left

WAIT_AWHILE = registry.code("wait_awhile")
WAIT_AWHILE_INTERRUPTING = registry.code("wait_awhile_interrupting")
WAIT_AWHILE_THRESHOLD = registry.code("wait_awhile_threshold")
WAIT_AWHILE_CAPACITY = registry.code("wait_awhile_capacity")
#: the threshold rule's quantile and window (CarbonFlex §6.1: the 30th percentile of the next 24 h of forecast)
THRESHOLD_Q = registry.param("wait_awhile_threshold", "quantile")
THRESHOLD_WINDOW = registry.param("wait_awhile_threshold", "window_steps")

#: Wait Awhile's state between steps (:func:`new_state`): ``start`` per task (its planned start, bundle step; NaN:
#: not planned), ``cb`` the carbon known now (``plan.carbon_buffer``), ``resv`` the capacity-aware variant's plan
#: of each site (``plan.site_plan``): ``plan.start_plan``'s parts.
WaitAwhileState = namedtuple("WaitAwhileState", ["start", "cb", "resv"])


def new_state(n_tasks: int, n_dc: int, n_steps: int, horizon_steps: int, past) -> WaitAwhileState:
    """A run's empty state: nothing planned (``past``: unused)."""
    return WaitAwhileState(**start_plan(n_tasks, n_dc, n_steps, horizon_steps))


@njit(cache=True, nogil=True)
def wa_start_offset(cb, t, arrival, duration, max_delay, resv, cap, d, j, c, g, m, room):
    """Wait Awhile, non-interrupting (Wiesner et al., Middleware 2021, ad hoc workloads; artifact
    dos-group/lets-wait-awhile ``strategy.py`` ``AdHocStrategy``): the start offset s (steps from now)
    whose window [s, s + L) has the lowest mean
    forecast carbon intensity, over the starts that keep the task within its allowed delay
    (start <= arrival + max_delay) and its window within the forecast; ties go to the earliest. ``room``
    (``wait_awhile_capacity``): only the windows in which the request (c cores, g GPUs, m GB) fits beside the
    plan ``resv`` of site d (run step j = now; ``plan.room_for``); none: 0 (at once)."""
    L = steps_of(duration)
    smax = int(math.floor((arrival + max_delay - t) / STEP_S + 1e-9))
    smax = min(smax, cb.shape[0] - L)
    if smax <= 0:
        return 0
    best_s = -1
    best = math.inf
    for s in range(0, smax + 1):
        if room and not room_for(resv, cap, d, j + s, L, c, g, m):
            continue
        v = 0.0
        for h in range(s, s + L):
            v += cb[h]
        if best_s < 0 or v < best:
            best = v
            best_s = s
    return max(best_s, 0)


@njit(cache=True, nogil=True)
def greener_counts(cb, out):
    """``out[d, e]``: how many of site d's forecast steps 1..e are greener than step 0 (``out[d, 0]`` = 0): the
    prefix counts :func:`wa_run_now` reads, once per step for every task (O(1) per task, not O(horizon))."""
    for d in range(cb.shape[0]):
        c0 = cb[d, 0]
        n = 0
        out[d, 0] = 0
        for s in range(1, cb.shape[1]):
            if cb[d, s] < c0:
                n += 1
            out[d, s] = n


@njit(cache=True, nogil=True)
def wa_run_now(greener, t, deadline, work):
    """Wait Awhile, interrupting (Wiesner et al. 2021; ``AdHocStrategy(interruptible=True)``): a task
    with ``work`` seconds left runs in the ceil(work / step) steps of lowest forecast carbon intensity
    that end by its deadline (within the forecast); is the current step one of them? (The plan is redone
    every step with the forecast issued then; with the oracle forecast it is the plan made at arrival.)
    Ties go to the earliest step, so the current step wins them: it is one of them unless ``need`` steps
    before the deadline are strictly greener (``greener``: the site's :func:`greener_counts`)."""
    need = steps_of(work)
    h = greener.shape[0]
    y = (deadline - t) / STEP_S + 1e-9
    if not y < h:  # (an infinite or NaN deadline: the forecast's end)
        y = float(h)
    e = min(int(math.floor(y)) - 1, h - 1)
    if e + 1 <= need:
        return True
    return greener[e] < need


@njit(cache=True, nogil=True)
def decide(T, S, C, info, P, code, j, actions):
    """One step: the actions of the pending tasks (0 = defer; a task is never deferred past the last step
    from which it can still finish by its deadline, nor, threshold, past its allowed delay) and, interrupting or
    threshold, the pause / resume controls of the interruptible tasks that have started."""
    cap = C.cap
    k = info.iopt[IO_S0] + j
    t = C.t0 + STEP_S * j
    t1 = t + STEP_S
    pn = S.sc[SC_PEND_N]
    pend = S.pend
    allow_defer = C.opts[OPT_ALLOW_DEFER] > 0.5
    T_arr, T_dur, T_dl, T_o, T_md, T_intr = T.arrival, T.duration, T.deadline, T.origin, T.max_delay, T.interruptible
    T_c, T_g, T_m = T.cores, T.gpus, T.mem
    nflex = S.sc[SC_FLEX_N]
    cb, P_start, P_resv = P.cb, P.start, P.resv
    threshold = code == WAIT_AWHILE_THRESHOLD
    room = code == WAIT_AWHILE_CAPACITY
    controls = code == WAIT_AWHILE_INTERRUPTING or threshold
    thr = np.full(cap.shape[0], np.inf)  # (threshold: this step's threshold per site)
    greener = np.zeros((cb.shape[0], cb.shape[1]), np.int64)  # (interrupting: greener_counts)
    if needs_forecast(T_md, T.flexible, pend, pn, False, controls and nflex > 0):
        know_carbon(info, j, k, cb)
        if threshold:
            greener_threshold(info.hist, info.fc, k, THRESHOLD_WINDOW, THRESHOLD_Q, thr)
        elif controls:
            greener_counts(cb, greener)
    avail = available(cap, S.commit)
    for q in range(pn):
        i = pend[q]
        o = T_o[i]
        run = True
        if T_md[i] > 0.0:
            if threshold:  # at or below the threshold, or the allowed delay spent (waiting through this step)
                run = cb[o, 0] <= thr[o] or t1 - T_arr[i] > T_md[i]
            elif controls and T_intr[i]:
                run = wa_run_now(greener[o], t, T_dl[i], T_dur[i])
            else:
                if P_start[i] != P_start[i]:  # (first seen)
                    s = wa_start_offset(cb[o], t, T_arr[i], T_dur[i], T_md[i], P_resv, cap, o, j, T_c[i], T_g[i],
                                        T_m[i], room)
                    P_start[i] = k + s
                    if room:
                        reserve(P_resv, o, j + s, steps_of(T_dur[i]), T_c[i], T_g[i], T_m[i])
                run = k >= P_start[i]
        if not run and allow_defer and t1 + T_dur[i] <= T_dl[i]:
            actions[q] = 0
            continue
        best = o  # temporal shifting: at the origin (else the datacenter left least over-committed)
        if not fits(T_c[i], T_g[i], T_m[i], cap, o):
            best = fallback_dc(T_c[i], T_g[i], T_m[i], cap, avail)
            if best < 0:
                best = o
        for r in range(3):
            avail[best, r] -= T_c[i] if r == 0 else (T_g[i] if r == 1 else T_m[i])
        actions[q] = best + 1
        if room and P_start[i] != P_start[i]:  # started at once unplanned: held in the plan from now
            reserve(P_resv, best, j, steps_of(T_dur[i]), T_c[i], T_g[i], T_m[i])
    if not controls or nflex == 0:
        return
    n_ctl = 0
    status, fin, scale = S.status, S.fin, S.scale
    T_ckpt, T_mthr = T.ckpt, T.mthr
    S_flex, S_dest, S_segs, S_rem, S_nseg = S.flex, S.dest, S.segs, S.rem, S.nseg
    for q in range(nflex):
        i = S_flex[q]
        running = status[i] == ST_STARTED and fin[i] > t
        paused = status[i] == ST_PAUSED
        st = 1 if running else (2 if paused else 0)
        if running and fin[i] <= t1:  # finishing within this step (left alone); waiting to resume: no control
            st = 0
        if st == 0 or not T_intr[i]:
            continue
        w = work_left(i, t, status, fin, S_segs, S_rem, S_nseg, scale, T_ckpt, T_mthr)
        d = S_dest[i]
        if threshold:  # runs at or below the threshold; once its delay is spent (paused through this step, it
            # would have waited longer than allowed), to completion
            go = T_md[i] <= 0.0 or cb[d, 0] <= thr[d] or t1 - T_arr[i] - (T_dur[i] - w) > T_md[i]
        else:
            go = wa_run_now(greener[d], t, T_dl[i], w)
        if st == 1 and not go:
            n_ctl = ctl(S, n_ctl, i, 0.0)
        elif st == 2 and go:
            n_ctl = ctl(S, n_ctl, i, 1.0)
    S.sc[SC_CTL_N] = n_ctl


#: The run loop: steps S.sc[SC_STEP] .. j_end - 1 with Wait Awhile variant ``code`` (its state in ``P``).
run = policy_loop(decide)
