"""Rounding the LP bound's solution to a schedule: one (datacenter, dispatch step) per task, in a jitted
kernel (docs/optimum.md "The upper bound"); the same slot search moves a run's tasks into capacity it leaves free
(:func:`refill_kernel`, ``optimum.refill``).

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

from typing import TYPE_CHECKING

import numpy as np
from numba import njit

from gridshift import timestep

from ..physics import P_WAKE_S

if TYPE_CHECKING:
    from ..simulator import Prepared

STEP_S = float(timestep.STEP_S)  # (a float: the kernels divide times in seconds by it)
#: wake latencies a plan keeps to spare before a task's deadline (managed power)
WAKE_SPARE = 2.0


def transfer_weights(prep: Prepared, n: int, w_c: float, w_u: float) -> np.ndarray:
    """The objective per GB moved (n_dc origin, n_dc destination, n steps of the window), by dispatch step: the
    engine's transfer emissions and egress price."""
    sc, opts, s0 = prep.scenario, prep.options, prep.s0
    carbon = sc.carbon_g_per_kwh[:, s0:s0 + n]
    ci = 0.5 * (carbon[:, None, :] + carbon[None, :, :]) if opts.transfer_emissions == "mean" else \
        np.broadcast_to(carbon[:, None, :], (sc.n_dc, sc.n_dc, n))
    return np.ascontiguousarray(w_c * float(opts.transfer_kwh_per_gb) * ci / 1000.0
                                + w_u * np.asarray(sc.usd_per_gb, dtype=np.float64)[:, :, None])


def wake_latency_s(prep: Prepared) -> np.ndarray:
    """Each datacenter's server wake latency (s; 0 with every server always on). A task that needs a sleeping
    server waits for its wake, and for a wake group requested later in the same step (docs/simulation.md
    "Server power states"): a plan keeps ``WAKE_SPARE`` of them to spare (measured: the longest wait past a
    dispatch on the benchmark bundle was 1.3 wakes)."""
    sc = prep.scenario
    return np.array([float(sc.params[d][P_WAKE_S]) if prep.managed else 0.0 for d in range(sc.n_dc)])


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
def _delay(o, d, b, delay_s_per_gb, rtt_s):
    """The transfer delay (s) of a task of ``b`` GB from its origin o to datacenter d (0 at its origin)."""
    return 0.0 if d == o else b * delay_s_per_gb[o, d] + rtt_s[o, d]


@njit(cache=True, nogil=True)
def _share(tau, end, k, t0):
    """The share of window step k that a run over [tau, end) takes."""
    ks = t0 + STEP_S * k
    return max(0.0, min(end, ks + STEP_S) - max(tau, ks)) / STEP_S


@njit(cache=True, nogil=True)
def best_slot(a, dur, dl, o, b, req, cap, delay_s_per_gb, rtt_s, t0, n, price, hi_price, busy, load, occ, xfer_w,
              wake_s, hold_s, over_w, cost, bad, cum, nbad):
    """The cheapest (datacenter, dispatch step) of one task (arrival ``a``, duration ``dur``, deadline ``dl``,
    origin ``o``, GB ``b``, request ``req``) that meets its deadline with ``wake_s`` to spare and fits the capacity
    left (``cap`` - ``occ``) at every step it touches (docs in the module). Returns (its cost, datacenter,
    step, the datacenter that finishes it first): datacenter -1 if none fits; step ``n`` if it can wait past
    the window's end."""
    n_dc = cap.shape[0]
    t_end = t0 + STEP_S * n
    s_lo = min(max(int((a - t0) // STEP_S), 0), n - 1)
    best, best_d, best_s = np.inf, -1, 0
    early, early_d = np.inf, -1
    for d in range(n_dc):
        if req[0] > cap[d, 0] + 1e-9 or req[1] > cap[d, 1] + 1e-9 or req[2] > cap[d, 2] + 1e-9:
            continue
        delay = _delay(o, d, b, delay_s_per_gb, rtt_s)
        if not np.isfinite(delay):
            continue
        fin = max(t0 + STEP_S * s_lo, a) + delay + wake_s[d] + dur
        if fin < early:
            early, early_d = fin, d
        # latest dispatch step that still meets the deadline
        last = dl - dur - delay - wake_s[d]
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
                c += b * xfer_w[o, d, s]
            if c < best:
                best, best_d, best_s = c, d, s
    return best, best_d, best_s, early_d


@njit(cache=True, nogil=True)
def book(occ, load, d, s, a, dur, delay, hold, req, t0, n):
    """Book a task at datacenter d from dispatch step s: its request in ``occ`` over every step from s to its
    finish + ``hold``, and its busy share of each step in ``load``."""
    tau = max(t0 + STEP_S * s, a) + delay
    end = tau + dur
    k_last = min(n - 1, int((end + hold - 1e-6 - t0) // STEP_S))
    for k in range(s, k_last + 1):
        frac = _share(tau, end, k, t0)
        for r in range(3):
            occ[d, k, r] += req[r]
            load[d, k, r] += req[r] * frac


@njit(cache=True, nogil=True)
def _scratch(n):
    """The per-task work arrays of :func:`best_slot` (step costs, misfits, their prefix sums) and a request."""
    return (np.zeros(n + 1), np.zeros(n + 1, np.int64), np.zeros(n + 2), np.zeros(n + 2, np.int64), np.zeros(3))


@njit(cache=True, nogil=True)
def _hi_price(price):
    n_dc, n = price.shape[0], price.shape[1]
    hi = np.zeros((n_dc, 3))
    for d in range(n_dc):
        for r in range(3):
            for k in range(n):
                hi[d, r] = max(hi[d, r], price[d, k, r])
    return hi


@njit(cache=True, nogil=True)
def plan_kernel(order, arrival, duration, cores, gpus, mem, bw, origin, deadline, cap, delay_s_per_gb, rtt_s,
                t0, n, price, busy, xfer_w, wake_s, hold_s, over_w, site, step, late):
    """Place every task of ``order`` (docs in the module): writes ``site`` (-1: fits no datacenter), ``step``
    (the window step to dispatch it at; >= n: not inside the window) and ``late`` (1: no candidate met its
    deadline). ``xfer_w`` (n_dc origin, n_dc destination, n): the objective per GB moved, by dispatch step."""
    n_dc = cap.shape[0]
    hi_price = _hi_price(price)
    load = np.zeros((n_dc, n, 3))
    occ = np.zeros((n_dc, n, 3))
    cost, bad, cum, nbad, req = _scratch(n)
    for i in order:
        req[0], req[1], req[2] = cores[i], gpus[i], mem[i]
        o = origin[i]
        _, best_d, best_s, early_d = best_slot(arrival[i], duration[i], deadline[i], o, bw[i], req, cap,
                                               delay_s_per_gb, rtt_s, t0, n, price, hi_price, busy, load, occ,
                                               xfer_w, wake_s, hold_s, over_w, cost, bad, cum, nbad)
        if best_d < 0:  # no candidate: the earliest finish, capacity or not
            best_d, best_s = early_d, min(max(int((arrival[i] - t0) // STEP_S), 0), n - 1)
            late[i] = 1 if early_d >= 0 else 0
        site[i] = best_d
        step[i] = best_s
        if best_d < 0 or best_s >= n:
            continue
        delay = _delay(o, best_d, bw[i], delay_s_per_gb, rtt_s)
        book(occ, load, best_d, best_s, arrival[i], duration[i], delay, hold_s[best_d], req, t0, n)


@njit(cache=True, nogil=True)
def _slot_cost(o, d, s, a, dur, b, req, price, xfer_w, delay_s_per_gb, rtt_s, t0, n):
    """What :func:`best_slot` scores a task run at datacenter d from dispatch step s: its share of each step it
    runs in x sum_r request_r x price[d, k, r] (the part past the window's end costs 0), plus its transfer."""
    delay = _delay(o, d, b, delay_s_per_gb, rtt_s)
    tau = max(t0 + STEP_S * s, a) + delay
    end = tau + dur
    c = 0.0
    k = s
    while k < n and t0 + STEP_S * k < end:
        frac = _share(tau, end, k, t0)
        for r in range(3):
            c += frac * req[r] * price[d, k, r]
        k += 1
    return c + (b * xfer_w[o, d, s] if d != o else 0.0)


@njit(cache=True, nogil=True)
def _hold(occ, d, k_lo, k_hi, req, sign):
    """Add (``sign`` 1) or take away (-1) a request held at datacenter d over steps k_lo..k_hi."""
    for k in range(k_lo, k_hi + 1):
        for r in range(3):
            occ[d, k, r] += sign * req[r]


@njit(cache=True, nogil=True)
def refill_kernel(order, arrival, duration, cores, gpus, mem, bw, origin, deadline, cap, delay_s_per_gb, rtt_s,
                  t0, n, price, xfer_w, wake_s, hold_s, occ, k0, k1, margin, force, site, step):
    """Move tasks of a run to cheaper free capacity (``refill``, docs/optimum.md): ``occ`` (n_dc, n, 3) is the
    run's capacity held per datacenter, step and resource, task i holding its request at ``site[i]`` over steps
    ``k0[i]``..``k1[i]`` (none if k0 > k1). In ``order``, each task's hold is taken out and its cheapest slot
    that fits what is left (:func:`best_slot`, every step at its own price) replaces its (``site``, ``step``)
    when it costs less than ``1 - margin`` x its present one (``force``: whenever one fits, the repair's move of a
    late task); it is booked there (dispatch step to finish + ``hold_s``), else its hold is put back. Returns the
    number of tasks moved."""
    n_dc = cap.shape[0]
    # every step at its own price (over_w 0): the LP's profile (busy), the load against it and the largest price
    # are never read; ``load`` stands in for the profile
    hi_price = _hi_price(price)
    load = np.zeros((n_dc, n, 3))
    cost, bad, cum, nbad, req = _scratch(n)
    moved = 0
    for i in order:
        d0, s0 = site[i], step[i]
        if d0 < 0 or s0 >= n or k0[i] > k1[i]:
            continue
        req[0], req[1], req[2] = cores[i], gpus[i], mem[i]
        o, a, dur = origin[i], arrival[i], duration[i]
        cur = _slot_cost(o, d0, s0, a, dur, bw[i], req, price, xfer_w, delay_s_per_gb, rtt_s, t0, n)
        _hold(occ, d0, k0[i], k1[i], req, -1.0)
        best, d, s, _ = best_slot(a, dur, deadline[i], o, bw[i], req, cap, delay_s_per_gb, rtt_s, t0, n, price,
                                  hi_price, load, load, occ, xfer_w, wake_s, hold_s, 0.0, cost, bad, cum, nbad)
        if d >= 0 and (force or best < cur * (1.0 - margin)):
            site[i], step[i] = d, s
            moved += 1
            if s < n:
                book(occ, load, d, s, a, dur, _delay(o, d, bw[i], delay_s_per_gb, rtt_s), hold_s[d], req, t0, n)
        else:
            _hold(occ, d0, k0[i], k1[i], req, 1.0)
    return moved
