"""Requests against capacity: does a request fit, where it goes when it fits nowhere it was sent,
booking a decision, and the speed-up of an elastic task at a scale."""

from __future__ import annotations

import numpy as np
from numba import njit

from .layout import EPS


# ---------------------------------------------------------------------------- helpers
# Numba increfs/decrefs an array each time it is read from a tuple field inside a branchy loop
# (that was half of the stepping time). So every kernel below takes plain arrays: the public
# entry points read the namedtuple fields once per step and pass the arrays down.
# A policy's per-task placement (its choice, else `fallback_dc`, else the origin; the request debited) is written
# out in each policy's loop, not called from here: one inlined helper taking `cap` and `avail` for it made the
# stepping 5-20 % slower (rule policies and baselines, 1.3 M tasks, best of 5 runs in one process, 2026-12-01;
# policies/plan.py says why). The narrower `place_at_origin(c, g, m, cap, avail, o)` of the temporal-shifting
# baselines alone (commit 00a189b), timed against the written-out lines on 14 days of the main job's bundle (best
# of 10 runs over two alternating processes per tree, same totals): gaia_carbon_time +4.8 %, gaia_res_first +11.6 %,
# vcc +5.9 %, wait_awhile +8.4 %, carbonflex +11.5 %, carbonscaler -0.5 %, wait_awhile_capacity -5.4 % (2026-12-01).
@njit(cache=True, nogil=True, inline="always")
def fits(c, g, m, a, d):
    """A request (c cores, g GPUs, m GB) fits in row d of the (n_dc, 3) capacity array a."""
    return (c <= a[d, 0] + EPS) and (g <= a[d, 1] + EPS) and (m <= a[d, 2] + EPS)


@njit(cache=True, nogil=True, inline="always")
def site_max_scale(c, g, m, smin, smax, a, d):
    """The largest scale of an elastic request (c cores, g GPUs, m GB at scale 1) that row d of the capacity
    array a can ever hold: its smax, but never more than the site (a larger request could never start again),
    and never below smin."""
    x = smax
    if c > 0.0:
        x = min(x, a[d, 0] / c)
    if g > 0.0:
        x = min(x, a[d, 1] / g)
    if m > 0.0:
        x = min(x, a[d, 2] / m)
    return max(x, smin)


@njit(cache=True, nogil=True, inline="always")
def fits_any(c, g, m, a):
    for d in range(a.shape[0]):  # noqa: SIM110 - generators are slow in Numba
        if fits(c, g, m, a, d):
            return True
    return False


@njit(cache=True, nogil=True, inline="always")
def _slack(need, avail, cap):
    return (avail - need) / cap if (need > 0.0 and cap > 0.0) else np.inf


@njit(cache=True, nogil=True, inline="always")
def fallback_dc(c, g, m, cap, avail):
    """DC (that can hold the request when empty) left least over-committed after taking it."""
    best = -1
    best_score = -np.inf
    for d in range(cap.shape[0]):
        if not fits(c, g, m, cap, d):
            continue
        score = min(_slack(c, avail[d, 0], cap[d, 0]), _slack(g, avail[d, 1], cap[d, 1]),
                    _slack(m, avail[d, 2], cap[d, 2]))
        if score > best_score:
            best_score = score
            best = d
    return best


@njit(cache=True, nogil=True, inline="always")
def _book(i, d, tdec, forced_flag, c, g, m, dest, decision, forced, commit):
    """Record the decision to run task i at datacenter d and commit its request there."""
    dest[i] = d
    decision[i] = tdec
    forced[i] = forced_flag
    commit[d, 0] += c
    commit[d, 1] += g
    commit[d, 2] += m


@njit(cache=True, nogil=True, inline="always")
def speedup(x, m):
    """Speed of an elastic task at scale x (allocation / request) relative to its speed at its request:
    1 + m (x - 1), with m the throughput each extra unit of allocation adds relative to the throughput per
    unit at the request (the task's ``marginal_throughput``: 1 = linear speed-up, 0 = none); exactly 1 at
    x = 1. This is CarbonScaler's marginal capacity curve (Hanafy et al., SIGMETRICS 2024: the
    throughput each additional server adds) with a constant marginal throughput, i.e. a linear curve
    (docs/simulation.md "Flexible tasks" states the simplification)."""
    return 1.0 + m * (x - 1.0)
