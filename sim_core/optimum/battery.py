"""The sites' batteries in the LP (``sim_core.battery``'s model, whose every schedule is feasible here, so the bound
stays a bound): per (site, step) a charge ``ch`` and a discharge ``dis`` (kW, each in [0, power]) and the energy
held at the step's end ``e`` (kWh, in [soc_min, soc_max]), with

    e_j = keep e_(j-1) + 0.25 eta_c ch_j - 0.25 dis_j / eta_d       (e_(-1) = soc_min: the run starts empty)
    dis_j <= P_j                                                    (no export: at most the site's load)

and ``w (ch - dis) 0.25`` in the objective (grid energy = facility energy + charge - discharge). A rolling
horizon after the first starts from a free e_(-1) in [soc_min, soc_max] (what the previous horizon left is not
known to this one; a free start only relaxes). Called by ``model.assemble``; kept apart so that the LP's own
rows and the battery's can change independently."""

from __future__ import annotations

import numpy as np

from gridshift.timestep import STEP_H

from .. import battery as B

#: per (site, step) battery variables, in this order (after the LP's other columns)
BATT_VARS = ("ch", "dis", "e")
N_BV = len(BATT_VARS)


def add_battery(rows, bvec: np.ndarray, p_col: np.ndarray, weight_kwh: np.ndarray, n_col: int, col_lower, col_upper,
                col_cost, free_start: bool):
    """Append the battery columns and rows. ``rows``: the LP's row builder (``model._Rows``); ``bvec`` (n_dc, 7)
    the batteries (``sim_core.battery.VEC_NAMES``); ``p_col`` (n_dc, n) the column of each P; ``weight_kwh``
    (n_dc, n). Returns (first battery column, n_col, col_lower, col_upper, col_cost) with the columns added;
    variable v of (d, j) is first + (d * n + j) * N_BV + v, then one start column per site when ``free_start``."""
    n_dc, n = weight_kwh.shape
    first = n_col
    n_new = n_dc * n * N_BV + (n_dc if free_start else 0)
    lo = np.zeros(n_new)
    hi = np.full(n_new, np.inf)
    cost = np.zeros(n_new)
    add_rows, add_entries = rows.add_rows, rows.add_entries
    for d in range(n_dc):
        b = bvec[d]
        idx = first + (d * n + np.arange(n)) * N_BV
        rel = idx - first
        hi[rel + 0] = b[B.B_P]
        hi[rel + 1] = b[B.B_P]
        lo[rel + 2] = b[B.B_LO]
        hi[rel + 2] = b[B.B_HI]
        cost[rel + 0] = weight_kwh[d] * STEP_H
        cost[rel + 1] = -weight_kwh[d] * STEP_H
        # e_j - keep e_(j-1) - 0.25 eta_c ch_j + 0.25 / eta_d dis_j = (j = 0: keep soc_min, or free start)
        rhs = np.zeros(n)
        if not free_start:
            rhs[0] = b[B.B_KEEP] * b[B.B_LO]
        r0 = add_rows(rhs, rhs)
        rr = r0 + np.arange(n)
        add_entries(rr, idx + 2, 1.0)
        add_entries(rr[1:], idx[:-1] + 2, -b[B.B_KEEP])
        add_entries(rr, idx + 0, -STEP_H * b[B.B_ETA_C])
        add_entries(rr, idx + 1, STEP_H / b[B.B_ETA_D])
        if free_start:
            s = n_dc * n * N_BV + d
            lo[s], hi[s] = b[B.B_LO], b[B.B_HI]
            add_entries(rr[0], first + s, -b[B.B_KEEP])
        # P_j - dis_j >= 0
        r0 = add_rows(np.zeros(n), np.full(n, np.inf))
        rr = r0 + np.arange(n)
        add_entries(rr, p_col[d], 1.0)
        add_entries(rr, idx + 1, -1.0)
    return (first, n_col + n_new, np.concatenate([col_lower, lo]), np.concatenate([col_upper, hi]),
            np.concatenate([col_cost, cost]))


def net_kw(x: np.ndarray, first: int, n_dc: int, n: int) -> np.ndarray:
    """(n_dc, n) charge - discharge (kW) of the LP's solution ``x``."""
    v = x[first:first + n_dc * n * N_BV].reshape(n_dc, n, N_BV)
    return v[:, :, 0] - v[:, :, 1]
