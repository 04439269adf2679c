"""CarbonScaler (Hanafy et al., SIGMETRICS 2024; docs/baselines.md): elastic tasks are scaled, hour by
hour, by the greedy marginal allocation of throughput per unit of carbon over the forecast, so that they
finish by their deadline; interruptible ones are suspended in the hours that get nothing."""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

from ..engine.capacity import fallback_dc, fits, site_max_scale, speedup
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
from .plan import available, carbon_buffer, ctl, know_carbon, needs_forecast, task_slots, work_left

CARBONSCALER = registry.code("carbonscaler")
#: one-hour slots: CarbonScaler's scaling slot (hourly carbon intensity; artifact umassos/CarbonScaler
#: ``carbon_scaler.go`` ``timeSlot``)
SLOT_STEPS = registry.param("carbonscaler", "slot_steps")

#: CarbonScaler's state between steps (:func:`new_state`): ``tgt`` per task, the scale its plan gives it now
#: (NaN: none), ``cb`` the carbon known now (``plan.carbon_buffer``).
CarbonScalerState = namedtuple("CarbonScalerState", ["tgt", "cb"])


def new_state(n_tasks: int, n_dc: int, n_steps: int, horizon_steps: int, past) -> CarbonScalerState:
    """A run's empty state (``n_steps``, ``past``: unused)."""
    return CarbonScalerState(tgt=task_slots(n_tasks), cb=carbon_buffer(n_dc, horizon_steps))


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
def decide(T, S, C, info, P, code, j, actions):
    """One step: the actions of the pending tasks (an elastic task waits while its plan gives the current
    hour nothing, never past the last step from which it can still finish by its deadline) and the scale
    controls of the flexible tasks that have started (recomputed at every hour)."""
    cap = C.cap
    k = info.iopt[IO_S0] + j
    t = C.t0 + STEP_S * j
    t1 = t + STEP_S
    pn = S.sc[SC_PEND_N]
    pend = S.pend
    allow_defer = C.opts[OPT_ALLOW_DEFER] > 0.5
    T_dur, T_dl, T_o, T_md = T.duration, T.deadline, T.origin, T.max_delay
    T_flex, T_intr, T_smin, T_smax, T_mthr, T_ckpt = T.flexible, T.interruptible, T.smin, T.smax, T.mthr, T.ckpt
    T_c, T_g, T_m = T.cores, T.gpus, T.mem
    nflex = S.sc[SC_FLEX_N]
    cb, P_tgt = P.cb, P.tgt
    if needs_forecast(T_md, T_flex, pend, pn, True, nflex > 0):
        know_carbon(info, j, k, cb)
    avail = available(cap, S.commit)
    for q in range(pn):
        i = pend[q]
        o = T_o[i]
        run = True
        if T_flex[i]:
            xm = site_max_scale(T_c[i], T_g[i], T_m[i], T_smin[i], T_smax[i], cap, o)
            x = carbonscaler_scale(cb[o], t, k, T_dl[i], T_dur[i], T_smin[i], xm, T_mthr[i], T_intr[i])
            P_tgt[i] = x
            run = x > 0.0
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
    if nflex == 0:
        return
    hour_start = k % SLOT_STEPS == 0
    n_ctl = 0
    status, fin, scale = S.status, S.fin, S.scale
    S_flex, S_dest, S_segs, S_rem, S_nseg = S.flex, S.dest, S.segs, S.rem, S.nseg
    for q in range(nflex):
        i = S_flex[q]
        running = status[i] == ST_STARTED and fin[i] > t
        paused = status[i] == ST_PAUSED
        st = 1 if running else (2 if paused else 0)
        if running and fin[i] <= t1:  # finishing within this step (left alone); waiting to resume: no control
            st = 0
        if st == 0:
            continue
        x = P_tgt[i]
        if hour_start or x != x:
            w = work_left(i, t, status, fin, S_segs, S_rem, S_nseg, scale, T_ckpt, T_mthr)
            d = S_dest[i]
            xm = site_max_scale(T_c[i], T_g[i], T_m[i], T_smin[i], T_smax[i], cap, d)
            x = carbonscaler_scale(cb[d], t, k, T_dl[i], w, T_smin[i], xm, T_mthr[i], T_intr[i])
            P_tgt[i] = x
        if st == 1 and x != scale[i]:
            n_ctl = ctl(S, n_ctl, i, x if (x > 0.0 or T_intr[i]) else T_smin[i])
        elif st == 2 and x > 0.0:
            n_ctl = ctl(S, n_ctl, i, x)
    S.sc[SC_CTL_N] = n_ctl


#: The run loop: steps S.sc[SC_STEP] .. j_end - 1 with CarbonScaler (its state in ``P``).
run = policy_loop(decide)
