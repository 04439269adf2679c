"""Server power states (docs/simulation.md "Server power states"): servers on, waking and asleep per
datacenter and kind, wakes for the work the scheduler starts, and the switch-off at each step boundary."""

from __future__ import annotations

import numpy as np
from numba import njit

from .layout import (
    CFG_CPS,
    CFG_GPS,
    CFG_HOSTED,
    CFG_MPS,
    CFG_N_C,
    CFG_N_G,
    CFG_SPARE,
    CFG_WAKE_S,
    EPS,
    K_CPU,
    K_GPU,
    STEP_S,
    WK_A,
    WK_B,
)


# ---------------------------------------------------------------------------- server power states
# Managed power (docs/model.md §4a): a datacenter's servers are CPU-only or GPU servers
# (physics.server_layout), each on, waking or asleep. The scheduler starts a task only on capacity
# that is on, or on capacity that is waking once it is up; the work is consolidated onto as few
# servers as hold it (the allocation is an aggregate per DC, so "consolidated" means the capacity of
# the servers on must cover the allocated cores, GPUs and memory); idle servers beyond a spare pool
# are switched off at step boundaries. Counts are whole numbers held as floats.
@njit(cache=True, nogil=True, inline="always")
def _cap_of(cfg, cap, d, nc, ng, r):
    """Capacity of resource r (cores, GPUs, GB) on nc CPU-only and ng GPU servers of datacenter d."""
    if cfg[d, CFG_HOSTED] < 0.5:
        return cap[d, r]
    if r == 0:
        return min((nc + ng) * cfg[d, CFG_CPS], cap[d, 0])
    if r == 1:
        return min(ng * cfg[d, CFG_GPS], cap[d, 1])
    return min((nc + ng) * cfg[d, CFG_MPS], cap[d, 2])


@njit(cache=True, nogil=True, inline="always")
def _servers_for(cfg, d, c, g, m):
    """(GPU servers, servers in all) that hold an allocation of c cores, g GPUs and m GB when the work
    is packed onto as few servers as possible (GPU work on GPU servers), capped at what exists."""
    ng = 0.0
    if g > EPS and cfg[d, CFG_GPS] > 0.0:
        ng = min(np.ceil(g / cfg[d, CFG_GPS] - EPS), cfg[d, CFG_N_G])
    nt = ng
    if c > EPS:
        nt = max(nt, np.ceil(c / cfg[d, CFG_CPS] - EPS))
    if m > EPS and cfg[d, CFG_MPS] > 0.0:
        nt = max(nt, np.ceil(m / cfg[d, CFG_MPS] - EPS))
    nt = min(nt, cfg[d, CFG_N_C] + cfg[d, CFG_N_G])
    # CPU-only servers first for the non-GPU part; GPU servers when those run out
    ng = max(ng, nt - cfg[d, CFG_N_C])
    return ng, nt


@njit(cache=True, nogil=True, inline="always")
def _book_wake(srv, d, kind, cnt, s, wake_s, t1, j):
    """Book ``cnt`` servers of ``kind`` woken at time s of step j (which ends at t1): waking for
    ``wake_s`` seconds, then on (a wake at most one step long spills at most into step j + 1)."""
    w_end = s + wake_s
    w_in = min(w_end, t1) - s
    srv[kind, d, j] += cnt * (t1 - s - w_in) / STEP_S
    srv[2 + kind, d, j] += cnt * w_in / STEP_S
    if w_end > t1:
        carry = cnt * (w_end - t1) / STEP_S
        srv[2 + kind, d, j + 1] += carry
        srv[kind, d, j + 1] -= carry  # (the boundary count of step j + 1 includes them as on)


@njit(cache=True, nogil=True, inline="always")
def _waking(srv_wk, d, kind):
    """Servers of ``kind`` waking in DC d (both wake groups)."""
    return srv_wk[d, kind] + srv_wk[d, 2 + kind]


@njit(cache=True, nogil=True, inline="always")
def _wake_for(cfg, d, c, g, m, srv_on, srv_wk):
    """Servers (CPU-only, GPU) to wake so that the servers on or waking hold c cores, g GPUs, m GB."""
    ng, nt = _servers_for(cfg, d, c, g, m)
    a_c = srv_on[d, K_CPU] + _waking(srv_wk, d, K_CPU)
    a_g = srv_on[d, K_GPU] + _waking(srv_wk, d, K_GPU)
    dg = max(ng - a_g, 0.0)
    rest = max(nt - a_g - dg - a_c, 0.0)
    dc = min(rest, max(cfg[d, CFG_N_C] - a_c, 0.0))
    dg = min(dg + rest - dc, max(cfg[d, CFG_N_G] - a_g, 0.0))
    return dc, dg


@njit(cache=True, nogil=True)
def _caps_on(cfg, cap, d, srv_on, srv_wk, out):
    """Capacity (cores, GPUs, GB) of DC d's servers on (out[0:3]), on or in wake group A (out[3:6]),
    on or in group B (out[6:9]) and on or waking (out[9:12])."""
    nc, ng = srv_on[d, K_CPU], srv_on[d, K_GPU]
    for grp in range(4):
        xc = nc + (srv_wk[d, WK_A + K_CPU] if grp & 1 else 0.0) + (srv_wk[d, WK_B + K_CPU] if grp & 2 else 0.0)
        xg = ng + (srv_wk[d, WK_A + K_GPU] if grp & 1 else 0.0) + (srv_wk[d, WK_B + K_GPU] if grp & 2 else 0.0)
        k = 3 * grp
        out[k] = _cap_of(cfg, cap, d, xc, xg, 0)
        out[k + 1] = _cap_of(cfg, cap, d, xc, xg, 1)
        out[k + 2] = _cap_of(cfg, cap, d, xc, xg, 2)


@njit(cache=True, nogil=True, inline="always")
def _start_after_wake(caps, a0, a1, a2, s, t_a, t_b):
    """Earliest start, not before s, on the servers on plus wake group A (up at t_a), group B (up at
    t_b) or both, for an allocation a0/a1/a2; inf when even both groups are too small."""
    t = np.inf
    if a0 <= caps[3] + EPS and a1 <= caps[4] + EPS and a2 <= caps[5] + EPS:
        t = max(s, t_a)
    if a0 <= caps[6] + EPS and a1 <= caps[7] + EPS and a2 <= caps[8] + EPS:
        t = min(t, max(s, t_b))
    if t == np.inf and a0 <= caps[9] + EPS and a1 <= caps[10] + EPS and a2 <= caps[11] + EPS:
        t = max(s, max(t_a, t_b))
    return t


@njit(cache=True, nogil=True, inline="always")
def _new_wake_group(srv_wk, srv_twk, d, dc, dg, t_up):
    """Start waking dc CPU-only and dg GPU servers, up at t_up: they become group B; an earlier
    group B joins group A (which is then up at the later of the two times)."""
    if srv_wk[d, WK_B + K_CPU] + srv_wk[d, WK_B + K_GPU] > 0.0:
        srv_wk[d, WK_A + K_CPU] += srv_wk[d, WK_B + K_CPU]
        srv_wk[d, WK_A + K_GPU] += srv_wk[d, WK_B + K_GPU]
        srv_twk[d, 0] = max(srv_twk[d, 0], srv_twk[d, 1])
    srv_wk[d, WK_B + K_CPU] = dc
    srv_wk[d, WK_B + K_GPU] = dg
    srv_twk[d, 1] = t_up


@njit(cache=True, nogil=True)
def _wake_now(cfg, cap, d, c, g, m, s, t1, j, srv_on, srv_wk, srv_twk, srv, caps):
    """Wake, at time s of step j, the servers DC d lacks to hold c cores, g GPUs and m GB on servers
    on or waking (consolidated); refreshes ``caps`` (:func:`_caps_on`). (Out of the scheduler's loop:
    it runs only when servers must be woken.)"""
    dc, dg = _wake_for(cfg, d, c, g, m, srv_on, srv_wk)
    wake_s = cfg[d, CFG_WAKE_S]
    if dc > 0.0 or dg > 0.0:
        if wake_s > 0.0:
            _new_wake_group(srv_wk, srv_twk, d, dc, dg, s + wake_s)
            _book_wake(srv, d, K_CPU, dc, s, wake_s, t1, j)
            _book_wake(srv, d, K_GPU, dg, s, wake_s, t1, j)
        else:  # instant wake
            srv_on[d, K_CPU] += dc
            srv_on[d, K_GPU] += dg
            srv[K_CPU, d, j] += dc * (t1 - s) / STEP_S
            srv[K_GPU, d, j] += dg * (t1 - s) / STEP_S
    _caps_on(cfg, cap, d, srv_on, srv_wk, caps)


@njit(cache=True, nogil=True, inline="always")
def servers_at_boundary(d, j, t0, n, cap, free, rel, qdem, cfg, srv_on, srv_wk, srv_twk, srv):
    """Power states of datacenter d at the end of step j (boundary t_{j+1}), once per step.

    Wakes that are complete by then turn on (a wake still under way becomes group A). The demand
    after the boundary is the allocation still running then plus the queued requests (capped at
    the capacity); the target is the consolidated server count for it plus the spare pool, per
    kind. Servers on beyond the target are switched off, never below what the running allocation
    needs (no running task is interrupted); servers short of it are woken at the boundary (group B).
    Books the count of step j + 1 into ``srv``.
    """
    tb = t0 + STEP_S * (j + 1)
    for grp in range(2):
        if srv_twk[d, grp] <= tb:
            for k in range(2):
                srv_on[d, k] += srv_wk[d, 2 * grp + k]
                srv_wk[d, 2 * grp + k] = 0.0
            srv_twk[d, grp] = -np.inf
    if srv_wk[d, WK_B + K_CPU] + srv_wk[d, WK_B + K_GPU] > 0.0:  # still waking: joins group A
        srv_wk[d, WK_A + K_CPU] += srv_wk[d, WK_B + K_CPU]
        srv_wk[d, WK_A + K_GPU] += srv_wk[d, WK_B + K_GPU]
        srv_wk[d, WK_B + K_CPU] = 0.0
        srv_wk[d, WK_B + K_GPU] = 0.0
        srv_twk[d, 0] = max(srv_twk[d, 0], srv_twk[d, 1])
        srv_twk[d, 1] = -np.inf
    wk_c = _waking(srv_wk, d, K_CPU)
    wk_g = _waking(srv_wk, d, K_GPU)
    run0 = cap[d, 0] - free[d, 0]
    run1 = cap[d, 1] - free[d, 1]
    run2 = cap[d, 2] - free[d, 2]
    if j + 1 < n:
        run0 -= rel[0, d, j + 1]
        run1 -= rel[1, d, j + 1]
        run2 -= rel[2, d, j + 1]
    # servers on that the running work needs
    rg, rt = _servers_for(cfg, d, run0, run1, run2)
    # target: running + queued, plus the spare pool, per kind
    tg, tt = _servers_for(cfg, d, min(run0 + max(qdem[d, 0], 0.0), cap[d, 0]),
                          min(run1 + max(qdem[d, 1], 0.0), cap[d, 1]), min(run2 + max(qdem[d, 2], 0.0), cap[d, 2]))
    spare = cfg[d, CFG_SPARE]
    tgt_g = min(tg + spare, cfg[d, CFG_N_G]) if cfg[d, CFG_N_G] > 0.0 else 0.0
    tgt_c = min(tt - tg + spare, cfg[d, CFG_N_C])
    # switch off servers on beyond the target (waking ones finish waking)
    on_c = max(min(srv_on[d, K_CPU], tgt_c - wk_c), 0.0)
    on_g = max(min(srv_on[d, K_GPU], tgt_g - wk_g), 0.0)
    # ... but never the servers that hold running work
    on_g = max(on_g, min(rg, srv_on[d, K_GPU]))
    short = rt - on_c - on_g
    if short > 0.0:
        add = min(short, srv_on[d, K_CPU] - on_c)
        on_c += add
        on_g = min(on_g + short - add, srv_on[d, K_GPU])
    srv_on[d, K_CPU] = on_c
    srv_on[d, K_GPU] = on_g
    # the count of step j + 1 (servers on or still waking at the boundary) ...
    srv[K_CPU, d, j + 1] += on_c + wk_c
    srv[K_GPU, d, j + 1] += on_g + wk_g
    # ... and wakes at the boundary up to the target
    wake_s = cfg[d, CFG_WAKE_S]
    dc = max(tgt_c - on_c - wk_c, 0.0)
    dg = max(tgt_g - on_g - wk_g, 0.0)
    if (dc > 0.0 or dg > 0.0) and j + 1 < n:
        if wake_s > 0.0:
            _new_wake_group(srv_wk, srv_twk, d, dc, dg, tb + wake_s)
            _book_wake(srv, d, K_CPU, dc, tb, wake_s, tb + STEP_S, j + 1)
            _book_wake(srv, d, K_GPU, dg, tb, wake_s, tb + STEP_S, j + 1)
        else:
            srv_on[d, K_CPU] += dc
            srv_on[d, K_GPU] += dg
            srv[K_CPU, d, j + 1] += dc
            srv[K_GPU, d, j + 1] += dg
