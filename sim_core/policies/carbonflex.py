"""CarbonFlex (Hanafy, Wu, Irwin, Shenoy, arXiv:2505.18357, 2025; docs/baselines.md): at the start of each
day it learns, per site, how an oracle would have provisioned each one-hour slot of the past week as a
function of the slot's carbon rank; then it provisions the flexible load of each slot from the forecast's
rank, and scales or suspends the flexible tasks that run."""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ..engine.capacity import fallback_dc, fits, speedup
from ..engine.information import publish
from ..engine.layout import (
    IO_S0,
    OPT_ALLOW_DEFER,
    SC_CTL_N,
    SC_FLEX_N,
    SC_PEND_N,
    SC_STEP,
    SIG_CARBON,
    ST_PAUSED,
    ST_STARTED,
    STEP_S,
    STEPS_PER_DAY,
)
from ..engine.step import begin_step, end_step
from . import registry
from .plan import (
    available,
    ctl,
    know_carbon,
    needs_forecast,
    record_inflexible,
    release_load,
    roll_day,
    share,
    steps_of,
    work_left,
)

CARBONFLEX = registry.code("carbonflex")
#: one-hour provisioning slots (1-hour slots in the paper)
SLOT_STEPS = registry.param("carbonflex", "slot_steps")
#: the past window it learns from (7 days) and the bins of the carbon-rank feature (24: one per hourly rank
#: among the 24 one-hour slots of the lookahead)
CF_WINDOW_DAYS = registry.param("carbonflex", "window_days")
CF_BINS = registry.param("carbonflex", "bins")
#: lookahead of the carbon-rank feature (24 h: the default forecast horizon)
CF_RANK_STEPS = registry.param("carbonflex", "rank_steps")


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
            w = share(T_cores[i], T_gpus[i], T_mem[i], cap, d) * T_duration[i] / slot_s  # share x slots
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


@njit(cache=True, nogil=True)
def decide(T, S, C, info, P, code, j, actions):
    """One step: the actions of the pending tasks (a delay-tolerant task waits while running it would exceed
    its slot's provisioning, never past the last step from which it can still finish by its deadline) and,
    at each hour, the scale / suspend controls of the flexible tasks that have started."""
    cap = C.cap
    n_dc = cap.shape[0]
    k = info.iopt[IO_S0] + j
    t = C.t0 + STEP_S * j
    t1 = t + STEP_S
    pn = S.sc[SC_PEND_N]
    pend = S.pend
    allow_defer = C.opts[OPT_ALLOW_DEFER] > 0.5
    T_arr, T_dur, T_dl, T_o, T_md = T.arrival, T.duration, T.deadline, T.origin, T.max_delay
    T_c, T_g, T_m = T.cores, T.gpus, T.mem
    nflex = S.sc[SC_FLEX_N]
    cb, P_start, P_load, P_book, P_dem, P_rate, P_table = P.cb, P.start, P.load, P.book, P.dem, P.rate, P.table
    day_start = k % STEPS_PER_DAY == 0
    release_load(P_load, P_book, j)
    if day_start or j == 0:
        if j > 0:  # a day has ended: roll the demand and the inflexible load
            roll_day(P_dem, P.infl, P.isc)
        know_carbon(info, j, k, cb)
        if day_start:
            carbonflex_learn(info.hist, k, T_arr, T_dur, T_dl, T_o, T_c, T_g, T_m, T_md, cap, t, P_table, P_rate)
    need_fc = needs_forecast(T_md, T.flexible, pend, pn, False, nflex > 0)
    if need_fc and not (day_start or j == 0):
        know_carbon(info, j, k, cb)
    # the provisioning of this slot at each site, from the learned table and the forecast
    prov = np.empty(n_dc)
    mult = np.ones(n_dc)
    for d in range(n_dc):
        if P_rate[d] > 0.0 and need_fc:
            f = carbon_rank(cb[d], CF_RANK_STEPS)
            mult[d] = P_table[d, min(int(f * CF_BINS), CF_BINS - 1)]
            prov[d] = mult[d] * P_rate[d]
        else:
            prov[d] = np.inf
    avail = available(cap, S.commit)
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
            lim = prov[o]
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
    if nflex > 0:
        S.sc[SC_CTL_N] = controls(T, S, P_rate, mult, t, t1, k % SLOT_STEPS == 0)


@njit(cache=True, nogil=True, inline="always")
def controls(T, S, P_rate, mult, t, t1, hour_start):
    """At the start of an hour (``hour_start``): elastic scaling and suspension of the started flexible tasks by
    their site's learned provisioning (``mult``: this slot's multiple of the mean demand); returns the count."""
    T_dl, T_intr, T_smin, T_smax, T_mthr, T_ckpt = T.deadline, T.interruptible, T.smin, T.smax, T.mthr, T.ckpt
    status, fin, scale = S.status, S.fin, S.scale
    S_flex, S_dest, S_segs, S_rem, S_nseg = S.flex, S.dest, S.segs, S.rem, S.nseg
    n_ctl = 0
    for q in range(S.sc[SC_FLEX_N]):
        i = S_flex[q]
        d = S_dest[i]
        running = status[i] == ST_STARTED and fin[i] > t
        paused = status[i] == ST_PAUSED
        st = 1 if running else (2 if paused else 0)
        if running and fin[i] <= t1:  # finishing within this step (left alone); waiting to resume: no control
            st = 0
        if st == 0 or not hour_start or P_rate[d] <= 0.0:
            continue
        # never slow a task down so far that it cannot finish by its deadline (a slot later, at full scale)
        w = work_left(i, t, status, fin, S_segs, S_rem, S_nseg, scale, T_ckpt, T_mthr)
        x = T_smax[i] if mult[d] >= 1.0 else T_smin[i]
        if t + SLOT_STEPS * STEP_S + T_ckpt[i] + w / speedup(x, T_mthr[i]) > T_dl[i]:
            x = T_smax[i]
        if mult[d] <= 0.0:  # the oracle ran nothing in such slots: suspend (interruptible) or scale down
            late = t + SLOT_STEPS * STEP_S + T_ckpt[i] + w / speedup(T_smax[i], T_mthr[i]) > T_dl[i]
            if st == 1 and T_intr[i] and not late:
                n_ctl = ctl(S, n_ctl, i, 0.0)
            elif st == 1 and x != scale[i]:
                n_ctl = ctl(S, n_ctl, i, x)
        elif st == 2 or (st == 1 and x != scale[i]):
            n_ctl = ctl(S, n_ctl, i, x)
    return n_ctl


@njit(cache=True, nogil=True)
def run(T, S, C, info, P, code, j_end):
    """Run steps S.sc[SC_STEP] .. j_end - 1 with CarbonFlex (its plan in ``P``)."""
    actions = np.zeros(S.pend.shape[0], np.int32)
    act, hist, s0 = info.act, info.hist, info.iopt[IO_S0]
    for j in range(S.sc[SC_STEP], j_end):
        begin_step(T, S, C, j)
        publish(act, hist, j, s0)
        decide(T, S, C, info, P, code, j, actions)
        end_step(T, S, C, j, actions)
