"""VCC, virtual capacity curves (Radovanović et al., IEEE Trans. Power Systems 2023; docs/baselines.md): at the
start of each day a curve per site, from the day-ahead carbon forecast, caps the flexible load of each hour;
a delay-tolerant task waits while running it would exceed its hour's cap."""

from __future__ import annotations

import numpy as np
from numba import njit

from ..engine.capacity import fallback_dc, fits
from ..engine.information import publish
from ..engine.layout import IO_S0, OPT_ALLOW_DEFER, SC_PEND_N, SC_STEP, STEP_S, STEPS_PER_DAY
from ..engine.step import begin_step, end_step
from . import registry
from .plan import (
    PI_DAYS,
    available,
    know_carbon,
    needs_forecast,
    record_inflexible,
    release_load,
    roll_day,
    share,
    steps_of,
)

VCC = registry.code("vcc")
#: one-hour slots: VCC's hourly capacity curve
SLOT_STEPS = registry.param("vcc", "slot_steps")


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


@njit(cache=True, nogil=True, inline="always")
def new_curves(P, cb, day_start):
    """Each site's curve for the day: from the largest daily flexible demand of the days recorded (none yet,
    or a run that starts within a day: no cap)."""
    P_curve, P_dem, P_isc, P_infl = P.curve, P.dem, P.isc, P.infl
    for d in range(P_curve.shape[0]):
        if P_isc[PI_DAYS] == 0 or not day_start:
            for h in range(24):
                P_curve[d, h] = np.inf
        else:
            dmax = 0.0
            for x in range(P_isc[PI_DAYS]):
                dmax = max(dmax, P_dem[d, x])
            vcc_curve(cb[d], dmax, P_infl[0, d], P_curve[d])


@njit(cache=True, nogil=True)
def decide(T, S, C, info, P, code, j, actions):
    """One step: the actions of the pending tasks (0 = defer, never past the last step from which a task can
    still finish by its deadline). VCC never pauses or rescales a task."""
    cap = C.cap
    k = info.iopt[IO_S0] + j
    t = C.t0 + STEP_S * j
    t1 = t + STEP_S
    pn = S.sc[SC_PEND_N]
    pend = S.pend
    allow_defer = C.opts[OPT_ALLOW_DEFER] > 0.5
    T_dur, T_dl, T_o, T_md = T.duration, T.deadline, T.origin, T.max_delay
    T_c, T_g, T_m = T.cores, T.gpus, T.mem
    cb, P_start, P_load, P_book, P_dem, P_curve = P.cb, P.start, P.load, P.book, P.dem, P.curve
    day_start = k % STEPS_PER_DAY == 0
    release_load(P_load, P_book, j)
    if day_start or j == 0:
        if j > 0:  # a day has ended: roll the demand and the inflexible load
            roll_day(P_dem, P.infl, P.isc)
        know_carbon(info, j, k, cb)
        new_curves(P, cb, day_start)
    elif needs_forecast(T_md, T.flexible, pend, pn, False, False):
        know_carbon(info, j, k, cb)
    avail = available(cap, S.commit)
    h_now = (k % STEPS_PER_DAY) // SLOT_STEPS
    for q in range(pn):
        i = pend[q]
        o = T_o[i]
        can_wait = allow_defer and t1 + T_dur[i] <= T_dl[i]
        # a flexible task runs when the flexible load stays within the cap (or nothing flexible runs and the cap
        # is positive); its share is booked until it ends when it runs or cannot wait
        run = True
        sh = share(T_c[i], T_g[i], T_m[i], cap, o)
        flex = T_md[i] > 0.0
        if P_start[i] != P_start[i]:  # (first seen: its demand joins today's)
            P_start[i] = k
            if flex:
                P_dem[o, P_dem.shape[1] - 1] += sh * steps_of(T_dur[i])
        if flex:
            lim = P_curve[o, h_now]
            run = P_load[0, o] + sh <= lim + 1e-9 or (P_load[0, o] <= 1e-12 and lim > 0.0)
        if run or not can_wait:
            r = 0 if flex else 1
            P_load[r, o] += sh
            jr = j + steps_of(T_dur[i])
            if jr < P_book.shape[2]:
                P_book[r, o, jr] += sh
        if not run and can_wait:
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
    record_inflexible(P.infl, P_load, k)


@njit(cache=True, nogil=True)
def run(T, S, C, info, P, code, j_end):
    """Run steps S.sc[SC_STEP] .. j_end - 1 with VCC (its plan in ``P``)."""
    actions = np.zeros(S.pend.shape[0], np.int32)
    act, hist, s0 = info.act, info.hist, info.iopt[IO_S0]
    for j in range(S.sc[SC_STEP], j_end):
        begin_step(T, S, C, j)
        publish(act, hist, j, s0)
        decide(T, S, C, info, P, code, j, actions)
        end_step(T, S, C, j, actions)
