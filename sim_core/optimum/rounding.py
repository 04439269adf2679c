"""Rounding the LP bound's solution to a schedule: one (datacenter, dispatch step) per task, in a jitted
kernel (docs/optimum.md "The upper bound").

The LP (``optimum.solve``) gives, per datacenter d, step k and resource r (cores, GPUs, GB), the busy
resources of its optimum ``busy[d, k, r]`` and ``price[d, k, r]``: the objective's marginal value of one
more resource-step there (the power bound's slope at the LP's point, ``solve.marginal_price``). Tasks are
placed one at a time, the least slack first (the tasks with the fewest choices choose first). A
candidate is a datacenter that holds the task and a dispatch step s from the task's arrival step on;
it runs at scale 1 over
[tau, tau + duration), tau = max(step start, arrival) + the transfer delay (0 at the origin), and it must
finish by its deadline with ``wake_s`` to spare (a sleeping server's wake) and fit the capacity left at
every step it touches, from its dispatch step to the step of its finish after the transfer and ``hold_s``
(capacity is booked for whole steps, as the engine holds it until the step boundary after a finish). Its
score is its transfer (GB x the objective's weight per GB at the dispatch step) plus, per step it runs in,
its share of the step x sum_r request_r x price[d, k, r] while the load placed there stays within the LP's busy profile,
or x (``over_w`` x the site's largest price of that resource + (1 - ``over_w``) x the step's) where it would
exceed it (``over_w`` 1: tasks fill the LP's profile first and overflow where the LP says a resource-step is
cheapest; 0: up to the capacity, every step at its own price). A candidate whose dispatch step lies
past the window's end (allowed when the task can still finish by its deadline from there) costs 0 inside
the window, as in the LP, which counts only the work that must run inside it. A task with no candidate
(no datacenter can finish it by its deadline within the capacity left) is dispatched at its arrival step
to the datacenter that finishes it first and counted in ``late``.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from gridshift import timestep

STEP_S = float(timestep.STEP_S)  # (a float: the kernels divide times in seconds by it)


@njit(cache=True, nogil=True)
def _task_costs(d, s_lo, s_hi, req, price, hi_price, busy, load, occ, cap, cost, bad, over_w):
    """Per window step k in [s_lo, s_hi] of datacenter d: the cost of a whole step of the task's request
    (``cost[k - s_lo]``; beyond the LP's profile weighted by ``over_w``, the module's docs) and whether the
    request no longer fits there (``bad``)."""
    for k in range(s_lo, s_hi + 1):
        c = 0.0
        b = 0
        for r in range(3):
            if req[r] <= 0.0:
                continue
            over = load[d, k, r] + req[r] > busy[d, k, r] + 1e-9
            c += req[r] * ((over_w * hi_price[d, r] + (1.0 - over_w) * price[d, k, r]) if over else price[d, k, r])
            if occ[d, k, r] + req[r] > cap[d, r] + 1e-9:
                b = 1
        cost[k - s_lo] = c
        bad[k - s_lo] = b


@njit(cache=True, nogil=True)
def _integral(cum, s_lo, t0, t):
    """Integral of the per-step costs (prefix sums ``cum`` from step s_lo) from step s_lo's start to time t,
    in step-fractions x cost (the part past the window's end costs 0)."""
    x = (t - t0) / STEP_S - s_lo
    if x <= 0.0:
        return 0.0
    m = cum.shape[0] - 1
    if x >= m:
        return cum[m]
    k = int(x)
    return cum[k] + (x - k) * (cum[k + 1] - cum[k])


@njit(cache=True, nogil=True)
def plan_kernel(order, arrival, duration, cores, gpus, mem, bw, origin, deadline, cap, delay_s_per_gb, rtt_s,
                t0, n, price, busy, xfer_w, wake_s, hold_s, over_w, site, step, late):
    """Place every task of ``order`` (docs in the module): writes ``site`` (-1: fits no datacenter), ``step``
    (the window step to dispatch it at; >= n: not inside the window) and ``late`` (1: no candidate met its
    deadline). ``xfer_w`` (n_dc origin, n_dc destination, n): the objective per GB moved, by dispatch step."""
    n_dc = cap.shape[0]
    hi_price = np.zeros((n_dc, 3))
    for d in range(n_dc):
        for r in range(3):
            for k in range(n):
                hi_price[d, r] = max(hi_price[d, r], price[d, k, r])
    load = np.zeros((n_dc, n, 3))
    occ = np.zeros((n_dc, n, 3))
    cost = np.zeros(n + 1)
    bad = np.zeros(n + 1, np.int64)
    cum = np.zeros(n + 2)
    nbad = np.zeros(n + 2, np.int64)
    req = np.zeros(3)
    t_end = t0 + STEP_S * n
    for i in order:
        req[0], req[1], req[2] = cores[i], gpus[i], mem[i]
        o = origin[i]
        a = arrival[i]
        dur = duration[i]
        s_lo = min(max(int((a - t0) // STEP_S), 0), n - 1)
        best, best_d, best_s = np.inf, -1, 0
        early, early_d = np.inf, -1
        for d in range(n_dc):
            if req[0] > cap[d, 0] + 1e-9 or req[1] > cap[d, 1] + 1e-9 or req[2] > cap[d, 2] + 1e-9:
                continue
            delay = 0.0 if d == o else bw[i] * delay_s_per_gb[o, d] + rtt_s[o, d]
            if not np.isfinite(delay):
                continue
            fin = max(t0 + STEP_S * s_lo, a) + delay + wake_s[d] + dur
            if fin < early:
                early, early_d = fin, d
            # latest dispatch step that still meets the deadline
            last = deadline[i] - dur - delay - wake_s[d]
            if last < a:
                continue
            if last >= t_end:  # it may wait past the window's end: nothing of it runs inside the window
                best, best_d, best_s = 0.0, d, n
                break
            s_max = int((last - t0) // STEP_S)
            # the last step any dispatch step up to s_max touches (transfer delay included: a remote task runs
            # from max(step start, arrival) + delay)
            k_hi = min(n - 1, int((max(t0 + STEP_S * s_max, a) + delay + hold_s[d] + dur - 1e-6 - t0) // STEP_S))
            _task_costs(d, s_lo, k_hi, req, price, hi_price, busy, load, occ, cap, cost, bad, over_w)
            cum[0] = 0.0
            nbad[0] = 0
            for k in range(k_hi - s_lo + 1):
                cum[k + 1] = cum[k] + cost[k]
                nbad[k + 1] = nbad[k] + bad[k]
            cum_v = cum[:k_hi - s_lo + 2]
            for s in range(s_lo, s_max + 1):
                tau = max(t0 + STEP_S * s, a) + delay
                k_last = min(n - 1, int((tau + hold_s[d] + dur - 1e-6 - t0) // STEP_S))
                if nbad[k_last - s_lo + 1] - nbad[s - s_lo] > 0:
                    continue
                c = _integral(cum_v, s_lo, t0, tau + dur) - _integral(cum_v, s_lo, t0, tau)
                if d != o:
                    c += bw[i] * xfer_w[o, d, s]
                if c < best:
                    best, best_d, best_s = c, d, s
        if best_d < 0:  # no candidate: the earliest finish, capacity or not
            best_d, best_s = early_d, s_lo
            late[i] = 1 if early_d >= 0 else 0
        site[i] = best_d
        step[i] = best_s
        if best_d < 0 or best_s >= n:
            continue
        d = best_d
        delay = 0.0 if d == o else bw[i] * delay_s_per_gb[o, d] + rtt_s[o, d]
        tau = max(t0 + STEP_S * best_s, a) + delay
        end = tau + dur
        k_last = min(n - 1, int((end + hold_s[d] - 1e-6 - t0) // STEP_S))
        for k in range(best_s, k_last + 1):
            ks = t0 + STEP_S * k
            frac = max(0.0, min(end, ks + STEP_S) - max(tau, ks)) / STEP_S
            for r in range(3):
                occ[d, k, r] += req[r]
                load[d, k, r] += req[r] * frac
