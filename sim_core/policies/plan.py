"""What the published baselines share (docs/baselines.md): the parts of the state a baseline keeps between steps
(each baseline's own state is declared in its module), the carbon it knows now, and the steps of its decision
that are the same for every paper.

Like every policy they see only what was known at the decision: the carbon intensity of the current step
(history) and the latest issued forecast (``Info.fc``, issued here for carbon only); CarbonFlex's learning
reads the history of the steps before now. They are single-site (temporal shifting: every task runs at its
origin, as in the papers), keep their own state between steps (their module's ``new_state``) and control the
flexible tasks through the same per-step controls as a user's policy (``State.ctl_task`` / ``ctl_val``).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ..engine.capacity import speedup
from ..engine.information import issue_forecast
from ..engine.layout import IO_H, SIG_CARBON, ST_STARTED, STEP_S


# ------------------------------------------------------------------- the parts of a baseline's state
# Each stateful baseline keeps its own state (a namedtuple of arrays its module's ``new_state`` makes, passed to its
# kernels as ``P``): a new baseline adds its own, never a field to another's. These make the parts several share.
def task_slots(n_tasks: int) -> np.ndarray:
    """Per task, a start planned at first sight (bundle step; NaN: not seen yet) or, CarbonScaler's and
    CarbonFlex's, a target scale (NaN: none)."""
    return np.full(max(n_tasks, 1), np.nan)


def carbon_buffer(n_dc: int, horizon_steps: int) -> np.ndarray:
    """(n_dc, H + 1): the carbon intensity known now, filled by :func:`know_carbon` (+inf where unknown)."""
    return np.full((n_dc, horizon_steps + 1), np.inf)


def site_plan(n_dc: int, n_steps: int) -> np.ndarray:
    """(n_dc, 3, n_steps + 1): the capacity-aware variants' plan of each site's cores / GPUs / GB per run step
    (every task they planned or started, over the steps they expect it to run; :func:`room_for`, :func:`reserve`)."""
    return np.zeros((n_dc, 3, n_steps + 1))


def start_plan(n_tasks: int, n_dc: int, n_steps: int, horizon_steps: int) -> dict[str, np.ndarray]:
    """The state parts of a baseline that plans each task's start (Wait Awhile, GAIA): ``start``
    (:func:`task_slots`), ``cb`` (:func:`carbon_buffer`) and ``resv`` (:func:`site_plan`), empty."""
    return {"start": task_slots(n_tasks), "cb": carbon_buffer(n_dc, horizon_steps), "resv": site_plan(n_dc, n_steps)}


def resource_book(n_dc: int, n_steps: int) -> dict[str, np.ndarray]:
    """The per-resource booking VCC's and CarbonFlex's states share, empty: ``vload`` (2, n_dc, 3) fractions of each
    site's cores / GPUs / GB booked now, ``vbook`` (2, n_dc, 3, n_steps + 1) those to release at a run step
    (:func:`release_vload`)."""
    return {"vload": np.zeros((2, n_dc, 3)), "vbook": np.zeros((2, n_dc, 3, n_steps + 1))}


@njit(cache=True, nogil=True)
def carbon_known(hist, fc, k, cb):
    """cb[d, h]: the carbon intensity of bundle step k + h as known at k -- the actual for h = 0, the
    latest issued forecast for h >= 1 -- and +inf where nothing is known (past the issue's horizon or the
    bundle's end)."""
    for d in range(cb.shape[0]):
        cb[d, 0] = hist[SIG_CARBON, d, k]
        for h in range(1, cb.shape[1]):
            v = fc[SIG_CARBON, d, h - 1]
            cb[d, h] = v if v == v else np.inf


@njit(cache=True, nogil=True, inline="always")
def know_carbon(info, j, k, cb):
    """Issue the carbon forecast of run step j (bundle step k) over the whole horizon and fill ``cb``."""
    issue_forecast(info.act, info.fc, info.fci, info.known, info.inc, info.par, info.iopt, info.stamp, info.pub,
                   SIG_CARBON, j, info.iopt[IO_H])
    carbon_known(info.hist, info.fc, k, cb)


# (Per-step helpers. A per-task step is written out in each policy's loop: an inlined helper that takes arrays
# and branches costs an atomic reference count per array at every call.)
@njit(cache=True, nogil=True, inline="always")
def needs_forecast(T_md, T_flex, pend, pn, elastic, controlling):
    """Whether this step's decision reads the forecast: a pending task with an allowed delay (or, ``elastic``,
    a flexible one), or ``controlling`` (flexible tasks to control)."""
    for q in range(pn):
        i = pend[q]
        if T_md[i] > 0.0 or (elastic and T_flex[i]):
            return True
    return controlling


@njit(cache=True, nogil=True, inline="always")
def available(cap, commit):
    """Capacity not committed (running, queued, in transit), (n_dc, 3)."""
    n_dc = cap.shape[0]
    avail = np.empty((n_dc, 3))
    for d in range(n_dc):
        for r in range(3):
            avail[d, r] = cap[d, r] - commit[d, r]
    return avail


@njit(cache=True, nogil=True, inline="always")
def share(c, g, m, cap, d):
    """Dominant share of datacenter d's capacity a request takes (VCC measures load in it)."""
    s = 0.0
    if cap[d, 0] > 0.0:
        s = max(s, c / cap[d, 0])
    if cap[d, 1] > 0.0:
        s = max(s, g / cap[d, 1])
    if cap[d, 2] > 0.0:
        s = max(s, m / cap[d, 2])
    return s


@njit(cache=True, nogil=True, inline="always")
def site_fractions(c, g, m, cap, d, out):
    """A request of c cores, g GPUs and m GB as fractions of datacenter d's cores, GPUs and GB, into ``out``
    (3; returned): the per-resource load VCC's curve and CarbonFlex's provisioning check."""
    out[0] = c / cap[d, 0] if cap[d, 0] > 0.0 else 0.0
    out[1] = g / cap[d, 1] if cap[d, 1] > 0.0 else 0.0
    out[2] = m / cap[d, 2] if cap[d, 2] > 0.0 else 0.0
    return out


@njit(cache=True, nogil=True, inline="always")
def steps_of(x):
    """Whole steps that x seconds of work occupy (at least 1; 2**40 for a duration beyond any bundle, also
    an infinite or NaN one: the float is compared before it is converted)."""
    y = x / STEP_S
    if not y < 1e12:
        return 1 << 40
    return max(int(math.ceil(y - 1e-9)), 1)


@njit(cache=True, nogil=True, inline="always")
def ctl(S, n_ctl, i, x):
    """Append the control (task i -> scale x) to this step's controls; returns the new count."""
    if n_ctl < S.ctl_task.shape[0]:
        S.ctl_task[n_ctl] = i
        S.ctl_val[n_ctl] = x
        return n_ctl + 1
    return n_ctl


# ---------------------------------------------------------------------------- load booking (VCC, CarbonFlex)
@njit(cache=True, nogil=True, inline="always")
def release_load(P_load, P_book, j):
    """Take the shares (and, CarbonFlex, the servers and jobs) whose tasks end at run step j off the booked load."""
    for d in range(P_load.shape[1]):
        for r in range(P_load.shape[0]):
            P_load[r, d] -= P_book[r, d, j]
            if P_load[r, d] < 1e-12:
                P_load[r, d] = 0.0


@njit(cache=True, nogil=True, inline="always")
def release_vload(P_vload, P_vbook, j):
    """Take the per-resource fractions whose tasks end at run step j off the booked load (``vload``)."""
    for r in range(2):
        for d in range(P_vload.shape[1]):
            for x in range(3):
                P_vload[r, d, x] -= P_vbook[r, d, x, j]
                if P_vload[r, d, x] < 1e-12:
                    P_vload[r, d, x] = 0.0


@njit(cache=True, nogil=True)
def work_left(i, t, status, fin, segs, rem, nseg, scale, T_ckpt, T_mthr):
    """Work (s at scale 1) a started flexible task has left at time t (a running segment has done
    (t - start - overhead) x its speed-up since it began; a paused or waiting task: what it had left)."""
    if status[i] == ST_STARTED and fin[i] > t:
        w0 = segs[i] + (T_ckpt[i] if nseg[i] > 1 else 0.0)
        if t > w0:
            return max(rem[i] - (t - w0) * speedup(scale[i], T_mthr[i]), 0.0)
    return rem[i]


# ---------------------------------------------------------------------------- capacity-aware plans
@njit(cache=True, nogil=True)
def room_for(resv, cap, d, j, n, c, g, m):
    """Whether a request of c cores, g GPUs and m GB fits in site d's capacity beside what the plan already holds
    there (``resv``, :func:`site_plan`) in every run step j .. j + n - 1 (steps past the plan's end hold nothing)."""
    e = min(j + n, resv.shape[2])
    for x in range(j, e):
        if (resv[d, 0, x] + c > cap[d, 0] + 1e-9 or resv[d, 1, x] + g > cap[d, 1] + 1e-9
                or resv[d, 2, x] + m > cap[d, 2] + 1e-9):
            return False
    return True


@njit(cache=True, nogil=True)
def reserve(resv, d, j, n, c, g, m):
    """Hold c cores, g GPUs and m GB of site d in the plan over run steps j .. j + n - 1."""
    e = min(j + n, resv.shape[2])
    for x in range(max(j, 0), e):
        resv[d, 0, x] += c
        resv[d, 1, x] += g
        resv[d, 2, x] += m
