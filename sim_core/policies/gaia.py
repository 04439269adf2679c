"""GAIA (Hanafy et al., ASPLOS 2024; docs/baselines.md): two queues by job length, each with a waiting
time; a job starts at the hour of least carbon for a job of its queue's mean length
(``gaia_lowest_carbon_window``), or of the most carbon saved per unit of completion time
(``gaia_carbon_time``), or at once on free reserved capacity (``gaia_res_first``). The capacity-aware Carbon-Time
(``gaia_carbon_time_capacity``) considers only the starts with room left at the site in the policy's own plan of
the jobs it has started and planned (``plan.room_for``)."""

from __future__ import annotations

import math
from collections import namedtuple

import numpy as np
from numba import njit

from ..engine.capacity import fallback_dc, fits
from ..engine.layout import IO_S0, K_CPU, K_GPU, OPT_ALLOW_DEFER, OPT_MANAGED, SC_PEND_N, STEP_S
from ..engine.loop import policy_loop
from ..engine.servers import _cap_of
from . import registry
from .plan import available, know_carbon, needs_forecast, reserve, room_for, start_plan, steps_of

LOWEST_CARBON_WINDOW = registry.code("gaia_lowest_carbon_window")
CARBON_TIME = registry.code("gaia_carbon_time")
RES_FIRST = registry.code("gaia_res_first")
CARBON_TIME_CAPACITY = registry.code("gaia_carbon_time_capacity")
#: GAIA's two queues (artifact umassos/GAIA ``src/task.py`` ``TwoQueues``): short jobs are shorter than 2 h;
#: the waiting times of the artifact's default ``-w 6x24`` (``src/run.py``, the setting of the paper's
#: Figures 8-9): 6 h for the short queue, 24 h for the long one
GAIA_SHORT_S = registry.param("gaia_carbon_time", "short_s")
GAIA_WAIT_SHORT_S = registry.param("gaia_carbon_time", "wait_short_s")
GAIA_WAIT_LONG_S = registry.param("gaia_carbon_time", "wait_long_s")
#: start times GAIA considers: every hour of the waiting time (artifact ``carbon_waiting_policy.py``:
#: ``range(0, waiting_time + 1, 3600 // TIME_FACTOR)``)
GAIA_GRID_STEPS = registry.param("gaia_carbon_time", "grid_steps")

#: GAIA's state between steps (:func:`new_state`): ``start`` per task (its planned start, bundle step; NaN: not
#: seen yet), ``cls`` (2, 2) the running sum and count of job lengths per queue, ``cb`` the carbon known now
#: (``plan.carbon_buffer``), ``resv`` the capacity-aware variant's plan of each site (``plan.site_plan``): the
#: parts but ``cls`` are ``plan.start_plan``'s.
GaiaState = namedtuple("GaiaState", ["start", "cls", "cb", "resv"])


def new_state(n_tasks: int, n_dc: int, n_steps: int, horizon_steps: int, past) -> GaiaState:
    """A run's empty state: nothing planned, empty queues (``past``: unused)."""
    return GaiaState(cls=np.zeros((2, 2)), **start_plan(n_tasks, n_dc, n_steps, horizon_steps))


@njit(cache=True, nogil=True)
def gaia_start_offset(cb, t, arrival, wait, expected_s, carbon_time, resv, cap, d, j, c, g, m, room):
    """GAIA (Hanafy et al., ASPLOS 2024; artifact umassos/GAIA ``src/scheduling/carbon_waiting_policy.py``):
    the start offset
    (steps, on the hourly grid s = 0, 1 h, 2 h, ... up to the waiting time) for a job of the queue's
    expected length (its mean, the job's own length being unknown at submission). Lowest-Carbon-Window
    (``best_waiting_time``): the least carbon C(s) = sum of the intensity over [s, s + expected).
    Carbon-Time (``average_carbon_slot_waiting``): the most carbon saved per unit of completion time,
    (C(0) - C(s)) / (s + expected). Only starts whose window lies in the forecast are considered. ``room``
    (the capacity-aware variant): only the starts whose window [s, s + expected) holds the request (c cores,
    g GPUs, m GB) beside the plan ``resv`` of site d (run step j = now); none: 0 (at once)."""
    L = steps_of(expected_s)
    smax = int(math.floor((arrival + wait - t) / STEP_S + 1e-9))
    smax = min(smax, cb.shape[0] - L)
    if smax < GAIA_GRID_STEPS:
        return 0
    c0 = 0.0
    for h in range(L):
        c0 += cb[h]
    best_s = 0
    best = c0 if not carbon_time else 0.0
    free0 = not room or room_for(resv, cap, d, j, L, c, g, m)
    if not free0:  # (no room at once: the best start with room, whatever it scores)
        best_s = -1
    for s in range(GAIA_GRID_STEPS, smax + 1, GAIA_GRID_STEPS):
        if room and not room_for(resv, cap, d, j + s, L, c, g, m):
            continue
        v = 0.0
        for h in range(s, s + L):
            v += cb[h]
        if carbon_time:
            score = (c0 - v) / (s * STEP_S + expected_s)
            if best_s < 0 or score > best:
                best = score
                best_s = s
        elif best_s < 0 or v < best:
            best = v
            best_s = s
    return max(best_s, 0)


@njit(cache=True, nogil=True, inline="always")
def reserved(cap, commit, cfg, srv_on, managed):
    """RES-First's reserved capacity: the capacity of the servers that are on (every server, always on), less
    what is committed."""
    avail = np.empty((cap.shape[0], 3))
    for d in range(cap.shape[0]):
        for r in range(3):
            on = _cap_of(cfg, cap, d, srv_on[d, K_CPU], srv_on[d, K_GPU], r) if managed else cap[d, r]
            avail[d, r] = on - commit[d, r]
    return avail


@njit(cache=True, nogil=True)
def decide(T, S, C, info, P, code, j, actions):
    """One step: the actions of the pending tasks (0 = defer; a task is never deferred past the last step
    from which it can still finish by its deadline). GAIA never pauses or rescales a task."""
    cap = C.cap
    k = info.iopt[IO_S0] + j
    t = C.t0 + STEP_S * j
    t1 = t + STEP_S
    pn = S.sc[SC_PEND_N]
    pend = S.pend
    allow_defer = C.opts[OPT_ALLOW_DEFER] > 0.5
    T_arr, T_dur, T_dl, T_o, T_md = T.arrival, T.duration, T.deadline, T.origin, T.max_delay
    T_c, T_g, T_m = T.cores, T.gpus, T.mem
    cb, P_start, P_cls, P_resv = P.cb, P.start, P.cls, P.resv
    room = code == CARBON_TIME_CAPACITY
    if needs_forecast(T_md, T.flexible, pend, pn, False, False):
        know_carbon(info, j, k, cb)
    if code == RES_FIRST:  # reserved = the capacity of the servers on, less what is committed
        avail = reserved(cap, S.commit, C.srv_cfg, S.srv_on, C.opts[OPT_MANAGED] > 0.5)
    else:
        avail = available(cap, S.commit)
    for q in range(pn):
        i = pend[q]
        o = T_o[i]
        if P_start[i] != P_start[i]:  # first seen: its queue, and its planned start
            cls = 0 if T_dur[i] < GAIA_SHORT_S else 1
            P_cls[cls, 0] += T_dur[i]
            P_cls[cls, 1] += 1.0
            wait = min(T_md[i], GAIA_WAIT_SHORT_S if cls == 0 else GAIA_WAIT_LONG_S)
            expected = P_cls[cls, 0] / P_cls[cls, 1]
            s = 0
            if wait > 0.0:
                s = gaia_start_offset(cb[o], t, T_arr[i], wait, expected,
                                      code != LOWEST_CARBON_WINDOW,
                                      P_resv, cap, o, j, T_c[i], T_g[i], T_m[i], room)
            P_start[i] = k + s
            if room:  # held in the plan over the steps a job of the queue's mean length takes
                reserve(P_resv, o, j + s, steps_of(expected), T_c[i], T_g[i], T_m[i])
        run = k >= P_start[i]
        if not run and code == RES_FIRST and fits(T_c[i], T_g[i], T_m[i], avail, o):
            run = True  # RES-First: a waiting job starts at once on reserved capacity that is free
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


#: The run loop: steps S.sc[SC_STEP] .. j_end - 1 with GAIA variant ``code`` (its state in ``P``).
run = policy_loop(decide)
