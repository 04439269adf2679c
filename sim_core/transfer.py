"""Transfer cost, energy and emissions of remote assignments, and one step's transfer/SLA outcomes.

One scalar rule (:func:`transfer_one`) is the single definition of what a remote assignment
costs (docs/model.md §3): ``cost = GB x usd_per_gb[origin, dest]``, ``kWh = GB x kwh_per_gb``,
``kg = kWh x CI / 1000`` with CI the origin's intensity at the decision step (or the mean of
origin and destination). ``result._task_counters`` applies it to every task of a run (what the
run totals use); :func:`step_transfers_sla` applies it to the tasks decided in one step (what the
step API reports). Both give bit-identical per-task numbers.

All kernels live in this file (Numba's cache is keyed on the caller's file) and take plain arrays.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from gridshift import run_options

from .physics.term import Term

#: the network term: its energy is a run option's (kWh per GB moved), not a site parameter
TERM = Term("network", ("transfer_kwh_per_gb",), ("transfer_kwh", "transfer_carbon_kg", "transfer_cost_usd"),
            "energy, emissions and egress cost of moving a task's data (a run option, not a site parameter)",
            registry={"transfer_kwh_per_gb": run_options.get("transfer_kwh_per_gb").bound})

#: slots of the ``out`` vector of :func:`step_transfers_sla`
STEP_XFER_NAMES = ("transfer_cost_usd", "transfer_kwh", "transfer_carbon_kg", "transfer_gb", "transfers",
                   "sla_violations", "tasks_started", "tasks_decided")
N_STEP_XFER = len(STEP_XFER_NAMES)


@njit(cache=True, nogil=True)
def transfer_one(bw_gb, usd_per_gb, kwh_per_gb, ci_origin, ci_dest, mean):
    """(cost USD, energy kWh, emissions kg) of moving ``bw_gb`` GB for one remote assignment.

    ``usd_per_gb``: egress price origin -> destination; ``ci_*``: carbon intensity (g/kWh) of the
    origin / destination at the decision step; ``mean``: use the mean of both instead of the origin.
    """
    cost = bw_gb * usd_per_gb
    kwh = bw_gb * kwh_per_gb
    ci = 0.5 * (ci_origin + ci_dest) if mean else ci_origin
    return cost, kwh, kwh * ci / 1000.0


@njit(cache=True, nogil=True)
def sum_flags(v, lo, hi):
    """Sum of the 0/1 int8 flags v[lo:hi], eight at a time (~10x a plain loop, which Numba does not
    vectorise here)."""
    t = 0
    a = min(hi, (lo + 7) // 8 * 8)
    for i in range(lo, a):
        t += int(v[i])
    b = max(a, hi // 8 * 8)
    for i in range(b, hi):
        t += int(v[i])
    if b > a:
        w = v[a:b].view(np.uint64)
        n = w.shape[0]
        m1 = np.uint64(0x00FF00FF00FF00FF)
        m2 = np.uint64(0x0000FFFF0000FFFF)
        m3 = np.uint64(0xFFFFFFFF)
        k = 0
        while k < n:
            e = min(n, k + 255)  # at most 255 per byte lane before folding
            acc = np.uint64(0)
            for q in range(k, e):
                acc += w[q]
            acc = (acc & m1) + ((acc >> np.uint64(8)) & m1)  # 4 lanes of 16 bits
            acc = (acc & m2) + ((acc >> np.uint64(16)) & m2)  # 2 lanes of 32 bits
            t += int((acc & m3) + (acc >> np.uint64(32)))
            k = e
    return t


#: slots of the ``wm`` state vector of :func:`step_transfers_sla` (zeros at the start of a run)
WM_NEXT_ARRIVAL, WM_N_CAND, WM_PREV_STARTED = range(3)
N_WM = 3


@njit(cache=True, nogil=True)
def step_transfers_sla(origin, bw, dest, decision, m_viol, pend, pn, hi, n_started, wm, cand,
                       t0, step_s, j, s0, usd_per_gb, carbon, kwh_per_gb, mean, out):
    """Transfers decided in run step ``j``, SLA violations decided in it and tasks started in it, into
    ``out`` (``STEP_XFER_NAMES``), exactly as the run results attribute them. Call once per step, in
    step order, after the step ran (before the next one begins).

    * Transfers: the tasks that can have been decided in step ``j`` are those still pending at the
      end of step ``j - 1`` (kept in ``cand``; forced or assigned in ``j``) and those that arrived in
      step ``j`` (indices ``wm[WM_NEXT_ARRIVAL] .. hi - 1``): O(pending + arrivals).
    * Violations: the engine's per-step count ``m_viol[:, j]`` (decided at a task's start, re-decided
      at a flexible task's resume or rescale, withdrawn at its pause: a net count).
    * Starts: the increase of the engine's count of first starts ``n_started``.
    ``pend[:pn]``/``hi``/``n_started``: the engine state after the step.
    """
    for r in range(out.shape[0]):
        out[r] = 0.0
    n_b = carbon.shape[1]
    k = min(max(j + s0, 0), n_b - 1)
    na = wm[WM_NEXT_ARRIVAL]
    nc = wm[WM_N_CAND]
    for q in range(nc + (hi - na)):
        i = cand[q] if q < nc else na + (q - nc)
        d = dest[i]
        if d < 0 or decision[i] != decision[i] or (decision[i] - t0) // step_s != j:
            continue
        out[7] += 1.0
        o = origin[i]
        if d != o:
            c, e, g = transfer_one(bw[i], usd_per_gb[o, d], kwh_per_gb, carbon[o, k], carbon[d, k], mean)
            out[0] += c
            out[1] += e
            out[2] += g
            out[3] += bw[i]
            out[4] += 1.0
    v = 0
    for d in range(m_viol.shape[0]):
        v += m_viol[d, j]
    out[5] = v
    out[6] = n_started - wm[WM_PREV_STARTED]
    wm[WM_PREV_STARTED] = n_started
    # the pending tasks at the end of this step are the next step's candidates
    for q in range(pn):
        cand[q] = pend[q]
    wm[WM_N_CAND] = pn
    wm[WM_NEXT_ARRIVAL] = hi
