"""The rule policies (docs/simulation.md, "Built-in policies"): stateless, they decide only the pending
tasks, each reserving the capacity it hands out within the step. They read the information a policy may
have (``info``): the current signals from the history, and ``defer_to_greener`` its threshold from the
latest issued forecast. When no datacenter has room, a task goes to the one left least over-committed."""

from __future__ import annotations

import numpy as np
from numba import njit

from ..engine.capacity import fallback_dc, fits
from ..engine.information import greener_threshold, issue_forecast
from ..engine.layout import (
    FO_DEFER_Q,
    IO_S0,
    IO_WINDOW,
    OPT_ALLOW_DEFER,
    OPT_SINGLE_ACTION,
    SC_PEND_N,
    SC_RR,
    SIG_CARBON,
    SIG_PRICE,
    STEP_S,
)
from ..engine.loop import policy_loop
from . import registry

# the codes (registry.py), module-level ints that Numba freezes into the kernels at compile time
LOCAL_ONLY = registry.code("local_only")
ROUND_ROBIN = registry.code("round_robin")
MOST_AVAILABLE = registry.code("most_available")
LEAST_PENDING = registry.code("least_pending")
LOWEST_CARBON = registry.code("lowest_carbon")
LOWEST_PRICE = registry.code("lowest_price")
LOWEST_UTILIZATION = registry.code("lowest_utilization")
RANDOM = registry.code("random")
DEFER_TO_GREENER = registry.code("defer_to_greener")


@njit(cache=True, nogil=True)
def decide(T, S, C, info, P, code, j, actions):
    """The actions of the pending tasks of run step j under rule policy ``code`` (``P``: unused, the rules keep
    no plan; the argument makes the signature every policy's ``decide`` has). (One loop, no helper that
    takes arrays: an inlined helper with branches costs a reference count per array at every call.)"""
    T_arrival, T_cores, T_gpus, T_mem, T_deadline, T_origin = T.arrival, T.cores, T.gpus, T.mem, T.deadline, T.origin
    T_bw, T_duration, T_u = T.bw, T.duration, T.u_rand
    cap, delay_s_per_gb, rtt_s = C.cap, C.delay_s_per_gb, C.rtt_s
    pend, sc = S.pend, S.sc

    n_dc = cap.shape[0]
    pn = sc[SC_PEND_N]
    t = C.t0 + STEP_S * j
    t1 = t + STEP_S
    allow_defer = C.opts[OPT_ALLOW_DEFER] > 0.5
    single = C.opts[OPT_SINGLE_ACTION] > 0.5
    hist, iopt = info.hist, info.iopt
    k = iopt[IO_S0] + j
    avail, cnt, carbon, price = _sites_now(cap, S.commit, S.q_len, S.transit_n, hist, k)
    thr = np.empty(n_dc)
    if code == DEFER_TO_GREENER and pn > 0:
        window = iopt[IO_WINDOW]
        issue_forecast(info.act, info.fc, info.fci, info.known, info.inc, info.par, iopt, info.stamp, info.pub,
                       SIG_CARBON, j, window - 1)
        greener_threshold(hist, info.fc, k, window, info.fopt[FO_DEFER_Q], thr)
    n_eval = min(pn, 1) if single else pn
    for q in range(n_eval):
        i = pend[q]
        o = T_origin[i]
        ci, gi, mi = T_cores[i], T_gpus[i], T_mem[i]
        best = -1
        if code == LOCAL_ONLY:
            if fits(ci, gi, mi, cap, o):
                best = o
        elif code == DEFER_TO_GREENER:
            if allow_defer and carbon[o] > thr[o] and t1 + T_duration[i] <= T_deadline[i]:
                actions[q] = 0
                continue
            bs = np.inf
            tdec = max(t, T_arrival[i])
            for d in range(n_dc):  # greenest DC with room that can still meet the deadline
                if fits(ci, gi, mi, avail, d):
                    dl = 0.0 if d == o else T_bw[i] * delay_s_per_gb[o, d] + rtt_s[o, d]
                    if tdec + dl + T_duration[i] <= T_deadline[i] and carbon[d] < bs:
                        bs = carbon[d]
                        best = d
            if best < 0:
                for d in range(n_dc):
                    if fits(ci, gi, mi, avail, d) and carbon[d] < bs:
                        bs = carbon[d]
                        best = d
        elif code == ROUND_ROBIN:
            rr = sc[SC_RR]
            for kk in range(n_dc):
                d = (rr + kk) % n_dc
                if fits(ci, gi, mi, avail, d):
                    best = d
                    break
            sc[SC_RR] = ((best if best >= 0 else rr) + 1) % n_dc
        elif code == RANDOM:  # uniform among the DCs with room
            nc = 0
            for d in range(n_dc):
                if fits(ci, gi, mi, avail, d):
                    nc += 1
            if nc > 0:
                # u is in [0, 1) by construction (Generator.random); the float is checked before
                # the conversion all the same, so pick is in 0 .. nc - 1 whatever u holds
                x = T_u[i] * nc
                if x >= nc - 1:
                    pick = nc - 1
                elif x > 0.0:
                    pick = int(x)
                else:  # (also NaN)
                    pick = 0
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
                if code == MOST_AVAILABLE:  # most free cores
                    s = -avail[d, 0]
                elif code == LEAST_PENDING:  # fewest queued + in transit
                    s = cnt[d]
                elif code == LOWEST_CARBON:
                    s = carbon[d]
                elif code == LOWEST_PRICE:
                    s = price[d]
                else:  # LOWEST_UTILIZATION: lowest mean committed fraction
                    s = 0.0
                    m = 0
                    for r in range(3):
                        if cap[d, r] > 0.0:
                            s += 1.0 - avail[d, r] / cap[d, r]
                            m += 1
                    s = s / max(m, 1)
                if s < bs:
                    bs = s
                    best = d
        if best < 0:
            best = fallback_dc(ci, gi, mi, cap, avail)
        if best < 0:
            best = o
        avail[best, 0] -= ci
        avail[best, 1] -= gi
        avail[best, 2] -= mi
        cnt[best] += 1
        actions[q] = best + 1


@njit(cache=True, nogil=True, inline="always")
def _sites_now(cap, commit, q_len, transit_n, hist, k):
    """What the rules read of each datacenter at bundle step k: capacity available (not committed), tasks
    queued or in transit, carbon and price now (once per step: arrays, never the namedtuples, which a call
    would reference-count member by member)."""
    n_dc = cap.shape[0]
    avail = np.empty((n_dc, 3))
    cnt = np.empty(n_dc)
    carbon = np.empty(n_dc)
    price = np.empty(n_dc)
    for d in range(n_dc):
        for r in range(3):
            avail[d, r] = cap[d, r] - commit[d, r]
        cnt[d] = q_len[d] + transit_n[d]
        carbon[d] = hist[SIG_CARBON, d, k]
        price[d] = hist[SIG_PRICE, d, k]
    return avail, cnt, carbon, price


#: The run loop: steps S.sc[SC_STEP] .. j_end - 1 with rule policy ``code`` (``P``: unused, the rules keep no plan).
run = policy_loop(decide, pending_only=True)
