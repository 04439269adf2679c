"""The LP of one window: fluid cells of the task classes (classes.py), per (datacenter, step) resources,
servers and the power bound, assembled column-wise with NumPy into one sparse matrix for HiGHS (docs/optimum.md).

Variables
  y[c]      cell c = (task i, datacenter d, step j): the share of step j that task i runs at d
            (0 <= y <= the share of the step inside the task's allowed interval at d)
  per (d, j): B_c, B_g, B_m (time-weighted busy cores, allocated GPUs, GB in use), A_c, A_g (CPU-only
            and GPU servers on or waking), H (IT heat), I (IT power), C (CRAC fans), P (total power),
            U (UPS loss), Q (the load behind the transformer)
  E[g]      per (d, j, resource, speed-up cost): the extra resource-steps the elastic cells' work run above
            scale 1 takes
Rows
  task i:   need_i / 900 <= sum_c y[c] <= D_i / 900              (its work, in steps)
  (d, j):   B_r = sum_c r_i y[c] + sum_g E[g]                    (r = cores, GPUs, GB)
  group g:  E[g] >= (1/m - 1) sum_(c in g) r_i (y[c] - s1[c])     (elastic work beyond the scale-1 share s1)
            cps (A_c + A_g) >= B_c, gps A_g >= B_g, mps (A_c + A_g) >= B_m      (managed power)
            H = h0 + h_Ac A_c + h_Ag A_g + h_Bc B_c + h_Bg B_g + h_Bm B_m
            I >= H + fan plane (each), C >= CRAC plane (each), U >= UPS plane (each)
            Q >= (1 + s) (I + C + L) + c + U (each facility line; L lighting)
            P >= (1 + t) Q + e (each transformer plane)
Objective
  sum_(d,j) w[d, j] 0.25 P[d, j] + sum_c t[c] y[c], w = weights of kg CO2 and USD per kWh, t = the
  transfer emissions / egress cost a remote cell carries (its share of the task's transfer).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gridshift.timestep import STEP_H

from .. import engine as E
from .battery import add_battery
from .power import FacilityPieces, SitePower

#: per (datacenter, step) variables, in this order
DK_VARS = ("B_c", "B_g", "B_m", "A_c", "A_g", "H", "I", "C", "P", "U", "Q")
V_BC, V_BG, V_BM, V_AC, V_AG, V_H, V_I, V_C, V_P, V_U, V_Q = range(len(DK_VARS))
N_DK = len(DK_VARS)


@dataclass
class Cells:
    """Every (task, datacenter, step) cell of the LP, columnar."""

    task: np.ndarray  # index into the window's tasks (classes.WindowTasks) or classes
    dc: np.ndarray
    step: np.ndarray  # window-local step
    cap: np.ndarray  # upper bound of y (share of the step)
    cost: np.ndarray  # objective coefficient (transfer share)
    carbon: np.ndarray  # transfer kg CO2 per unit y
    usd: np.ndarray  # transfer USD per unit y
    kwh: np.ndarray  # transfer kWh per unit y
    need: np.ndarray  # per task: work that must run inside the window (s)
    work: np.ndarray  # per task: its whole work, the most that can run inside the window (s)
    scheduled: np.ndarray  # per task: fits some datacenter
    impossible: np.ndarray  # per task: no datacenter can start it by its limit (limit dropped)


def _range_min(series: np.ndarray, idx: np.ndarray, lo: np.ndarray, hi: np.ndarray) -> np.ndarray:
    """min(series[idx, lo..hi]) for each query (inclusive bounds, lo <= hi), by a sparse table."""
    n = series.shape[1]
    levels = [series]
    k = 1
    while 2 * k <= n:
        prev = levels[-1]
        levels.append(np.minimum(prev[:, :-k], prev[:, k:]))
        k *= 2
    length = hi - lo + 1
    lev = np.floor(np.log2(np.maximum(length, 1))).astype(np.int64)
    out = np.empty(idx.shape[0])
    for L in np.unique(lev):
        m = lev == L
        t = levels[L]
        out[m] = np.minimum(t[idx[m], lo[m]], t[idx[m], hi[m] - (1 << L) + 1])
    return out


@dataclass
class LPModel:
    """The assembled LP (CSC) and where everything sits in it."""

    n_col: int
    n_row: int
    col_cost: np.ndarray
    col_lower: np.ndarray
    col_upper: np.ndarray
    row_lower: np.ndarray
    row_upper: np.ndarray
    start: np.ndarray
    index: np.ndarray
    value: np.ndarray
    n_cells: int
    dk_base: int  # first per-(d, j) variable; variable v of (d, j) is dk_base + (d * n + j) * N_DK + v
    task_rows: np.ndarray  # row of each task with cells (-1: none)
    p_weight: np.ndarray  # (n_dc, n): objective weight of P per kW (0.25 h x per-kWh weights)
    batt_base: int = -1  # first battery column (optimum.battery), -1 without batteries
    b_row: int = -1  # first busy-resource row; (d, j, r)'s is b_row + (d * n + j) * 3 + r (dual: its unit price)

    @property
    def nnz(self) -> int:
        return int(self.index.shape[0])


def assemble(cells: Cells, resources: tuple[np.ndarray, np.ndarray, np.ndarray], sites: list[SitePower],
             fac: FacilityPieces, cap: np.ndarray, weight_kwh: np.ndarray, p_upper: np.ndarray,
             avail: np.ndarray | None = None, due: np.ndarray | None = None, curve_steps: int = 1,
             battery: np.ndarray | None = None, battery_free_start: bool = False,
             speedup: tuple[np.ndarray, np.ndarray] | None = None, tail_price: np.ndarray | None = None) -> LPModel:
    """Assemble the LP. ``resources``: cores, GPUs, GB of every task; ``weight_kwh`` (n_dc, n): objective
    weight per kWh of facility energy; ``p_upper`` (n_dc, n): upper bound of P (inf except where the
    weight is negative). ``avail``/``due`` (n_tasks, n, s): the cumulative formulation — instead of one work
    row per task (class), its work done by the end of each step, S[i, k] = S[i, k - 1] + sum_d y[i, d, k],
    lies in [due[i, k], avail[i, k]] (S: columns after the per-(d, j) variables), checked at the end of
    every ``curve_steps`` steps only (a subset of the constraints: a relaxation, 4x fewer S on hourly checks).
    ``battery`` (n_dc, 7): the sites' batteries (``optimum.battery``; ``battery_free_start``: a later rolling
    horizon's). ``speedup`` (per class: extra resource-steps per step of work run above scale 1, 0 if none;
    per cell: the scale-1 resource-steps its members' step shares hold): an elastic class's cell y counts work,
    and its (d, j, cost) group adds E >= cost x (y - scale-1 share) to the busy resources (:func:`_speedup_rows`).
    ``tail_price`` (n_dc, n_tail, 3): a linked rolling horizon's tail (docs/optimum.md "Rolling horizons"): cells
    may also lie in the n_tail steps after the n of ``weight_kwh``, where a later horizon owns the power; there a
    cell has no power rows, pays its busy resources at these prices (that horizon's duals of its busy-resource
    rows) and no speed-up resources (a relaxation), and the tail's cells of a site and step hold at most its
    capacity (:func:`_tail_capacity_rows`)."""
    n_tasks = resources[0].shape[0]
    n_dc, n = weight_kwh.shape
    n_all = n + (0 if tail_price is None else tail_price.shape[1])  # the cells' and curves' steps
    nc = cells.task.shape[0]
    own = cells.step < n
    base = nc
    n_dk = n_dc * n
    n_col = nc + n_dk * N_DK
    cumulative = avail is not None
    s_base = n_col
    cs = max(int(curve_steps), 1)
    n_h = -(-n_all // cs)  # curve checkpoints: the ends of steps cs - 1, 2 cs - 1, ..., n_all - 1
    if cumulative:
        n_col += n_tasks * n_h
    e_base = n_col
    groups = _speedup_groups(cells, resources, speedup, n, own)
    n_col += sum(g[0].shape[0] for g in groups)

    rows = _Rows()
    add_rows, add_entries = rows.add_rows, rows.add_entries

    # task rows
    has = np.bincount(cells.task, minlength=n_tasks) > 0
    task_rows = np.full(n_tasks, -1, np.int64)
    if cumulative:
        # S[i, h] - S[i, h - 1] - sum_d sum_(k in checkpoint h) y[i, d, k] = 0
        first = add_rows(np.zeros(n_tasks * n_h), np.zeros(n_tasks * n_h))
        s_col = s_base + np.arange(n_tasks * n_h)
        add_entries(first + np.arange(n_tasks * n_h), s_col, 1.0)
        prev = (np.arange(n_tasks * n_h) % n_h) > 0
        add_entries(first + np.nonzero(prev)[0], s_col[prev] - 1, -1.0)
        add_entries(first + cells.task * n_h + cells.step // cs, np.arange(nc), -1.0)
        task_rows[has] = first + np.nonzero(has)[0] * n_h + n_h - 1  # the row of the last checkpoint
    else:
        t_with = np.nonzero(has)[0]
        first = add_rows(cells.need[t_with] / E.STEP_S, cells.work[t_with] / E.STEP_S)
        task_rows[t_with] = first + np.arange(t_with.shape[0])
        add_entries(task_rows[cells.task], np.arange(nc), 1.0)

    dj = np.arange(n_dk)  # flat (d, j) = d * n + j
    # B definitions: B_r - sum r_i y = 0
    first = add_rows(np.zeros(3 * n_dk), np.zeros(3 * n_dk))
    brow = first + np.arange(3 * n_dk).reshape(n_dk, 3)  # row of (d, j, r)
    add_entries(brow.ravel(), (base + dj[:, None] * N_DK + np.arange(3)[None, :]).ravel(), 1.0)
    flat = cells.dc * n + cells.step
    for r, per_task in enumerate(resources):
        amount = per_task[cells.task]
        m = (amount != 0) & own
        add_entries(brow[flat[m], r], np.nonzero(m)[0], -amount[m])
    if tail_price is not None:
        _tail_capacity_rows(rows, cells, resources, cap, n, tail_price.shape[1], own)
    e_col = e_base
    for r, (g_dk, g_cost, cell, g_of, coef) in enumerate(groups):
        if g_dk.shape[0] == 0:
            continue
        cols = e_col + np.arange(g_dk.shape[0])
        add_entries(brow[g_dk, r], cols, -1.0)
        _speedup_rows(rows, cols, g_cost, cell, g_of, coef, speedup[1][cell])
        e_col += g_dk.shape[0]

    col_lower = np.zeros(n_col)
    col_upper = np.full(n_col, np.inf)
    col_cost = np.zeros(n_col)
    col_upper[:nc] = cells.cap
    col_cost[:nc] = cells.cost
    if tail_price is not None:
        t = np.flatnonzero(~own)
        for r, per_task in enumerate(resources):
            col_cost[t] += per_task[cells.task[t]] * tail_price[cells.dc[t], cells.step[t] - n, r]
    if cumulative:
        k_end = np.minimum(np.arange(n_h) * cs + cs - 1, n_all - 1)
        col_lower[s_base:e_base] = (due[:, k_end] / E.STEP_S).ravel()
        col_upper[s_base:e_base] = (avail[:, k_end] / E.STEP_S).ravel()
    for d, s in enumerate(sites):
        _site_rows(rows, d, s, base, n, cap, p_upper, weight_kwh, fac, col_lower, col_upper, col_cost)
    batt_base = -1
    if battery is not None:
        p_col = base + np.arange(n_dk).reshape(n_dc, n) * N_DK + V_P
        batt_base, n_col, col_lower, col_upper, col_cost = add_battery(
            rows, battery, p_col, weight_kwh, n_col, col_lower, col_upper, col_cost, battery_free_start)

    start, index, value = rows.csc(n_col)
    return LPModel(n_col=n_col, n_row=rows.n_row, col_cost=col_cost, col_lower=col_lower, col_upper=col_upper,
                   row_lower=np.concatenate(rows.rlo), row_upper=np.concatenate(rows.rhi), start=start,
                   index=index, value=value, n_cells=nc, dk_base=base, task_rows=task_rows,
                   p_weight=weight_kwh * STEP_H, batt_base=batt_base, b_row=int(brow[0, 0]) if n_dk else -1)


def _tail_capacity_rows(rows: _Rows, cells: Cells, resources, cap: np.ndarray, n: int, n_tail: int,
                        own: np.ndarray) -> None:
    """A linked horizon's tail holds at most each site's capacity: per (datacenter, tail step, resource) the
    tail cells' resources <= the site's capacity. Valid: in any schedule this horizon's tasks share the site with
    the later horizon's, whose own load is >= 0 (an elastic cell counts its work: at most its resources). Without
    it the tail, priced at the later horizon's duals at no carried load, takes any amount of work into the
    cheapest later steps."""
    t = np.flatnonzero(~own)
    for r, per_task in enumerate(resources):
        amount = per_task[cells.task[t]]
        m = amount != 0
        if not m.any():
            continue
        key = cells.dc[t[m]] * n_tail + (cells.step[t[m]] - n)
        keys, which = np.unique(key, return_inverse=True)
        first = rows.add_rows(np.full(keys.shape[0], -np.inf), cap[keys // n_tail, r])
        rows.add_entries(first + which, t[m], amount[m])


class _Rows:
    """The rows (bounds) and entries (row, column, value) of the LP matrix, appended in order."""

    def __init__(self) -> None:
        self.rows_i: list[np.ndarray] = []
        self.cols_i: list[np.ndarray] = []
        self.vals: list[np.ndarray] = []
        self.rlo: list[np.ndarray] = []
        self.rhi: list[np.ndarray] = []
        self.n_row = 0

    def add_rows(self, lo, hi) -> int:
        """Append rows with bounds [lo, hi]; returns the index of the first."""
        lo = np.asarray(lo, dtype=np.float64).ravel()
        hi = np.asarray(hi, dtype=np.float64).ravel()
        first = self.n_row
        self.rlo.append(lo)
        self.rhi.append(hi)
        self.n_row += lo.shape[0]
        return first

    def add_entries(self, r, c, v) -> None:
        r, c, v = np.broadcast_arrays(np.asarray(r, np.int64), np.asarray(c, np.int64), np.asarray(v, np.float64))
        self.rows_i.append(r.ravel())
        self.cols_i.append(c.ravel())
        self.vals.append(v.ravel())

    def csc(self, n_col: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """The entries as a column-wise matrix of ``n_col`` columns (HiGHS's ``kColwise``): column starts (int32),
        row indices (int32, rising within a column) and values."""
        r = np.concatenate(self.rows_i)
        c = np.concatenate(self.cols_i)
        v = np.concatenate(self.vals)
        order = np.lexsort((r, c))
        start = np.searchsorted(c[order], np.arange(n_col + 1)).astype(np.int32)
        return start, r[order].astype(np.int32), v[order]


def _site_rows(rows: _Rows, d: int, s: SitePower, base: int, n: int, cap, p_upper, weight_kwh, fac: FacilityPieces,
               col_lower, col_upper, col_cost) -> None:
    """Datacenter d's column bounds and costs and its rows: servers on hold the busy resources (managed power),
    heat, fans, CRAC and the facility power lines in use, for each of its n steps."""
    add_rows, add_entries = rows.add_rows, rows.add_entries
    dj = np.arange(d * n, (d + 1) * n)
    idx = base + dj * N_DK
    col_upper[idx + V_BC] = cap[d, 0]
    col_upper[idx + V_BG] = cap[d, 1]
    col_upper[idx + V_BM] = cap[d, 2]
    col_lower[idx + V_AC] = s.spare_c
    col_upper[idx + V_AC] = s.n_c
    col_lower[idx + V_AG] = s.spare_g
    col_upper[idx + V_AG] = s.n_g
    col_upper[idx + V_P] = p_upper[d]
    col_cost[idx + V_P] = weight_kwh[d] * STEP_H
    if s.managed and s.hosted:
        # servers on hold the busy resources
        r0 = add_rows(np.zeros(n), np.full(n, np.inf))
        rr = r0 + np.arange(n)
        add_entries(rr, idx + V_AC, s.cps)
        add_entries(rr, idx + V_AG, s.cps)
        add_entries(rr, idx + V_BC, -1.0)
        if s.n_g > 0:
            r0 = add_rows(np.zeros(n), np.full(n, np.inf))
            rr = r0 + np.arange(n)
            add_entries(rr, idx + V_AG, s.gps)
            add_entries(rr, idx + V_BG, -1.0)
        if s.mps > 0:
            r0 = add_rows(np.zeros(n), np.full(n, np.inf))
            rr = r0 + np.arange(n)
            add_entries(rr, idx + V_AC, s.mps)
            add_entries(rr, idx + V_AG, s.mps)
            add_entries(rr, idx + V_BM, -1.0)
    # H = h0 + ...
    r0 = add_rows(np.full(n, s.h0), np.full(n, s.h0))
    rr = r0 + np.arange(n)
    add_entries(rr, idx + V_H, 1.0)
    for v, coef in ((V_AC, s.h_ac), (V_AG, s.h_ag), (V_BC, s.h_bc), (V_BG, s.h_bg), (V_BM, s.h_bm)):
        if coef != 0.0:
            add_entries(rr, idx + v, -coef)
    # I >= H (fans >= 0) and I >= H + fan plane
    _ge_rows(rows, np.zeros(n), (idx + V_I, 1.0), (idx + V_H, -1.0))
    for aH, aA, c in s.fan_planes:
        _ge_rows(rows, np.full(n, c - aH * s.sleep_floor), (idx + V_I, 1.0), (idx + V_H, -(1.0 + aH)),
                 (idx + V_AC, -aA), (idx + V_AG, -aA))
    # C >= CRAC plane
    for aH, c in s.crac_planes:
        _ge_rows(rows, np.full(n, c), (idx + V_C, 1.0), (idx + V_H, -aH))
    # U >= a I + c (UPS loss)
    for a, c in s.ups_planes:
        _ge_rows(rows, np.full(n, c), (idx + V_U, 1.0), (idx + V_I, -a))
    # Q >= (1 + s) (I + C + L) + c + U for the facility lines in use
    k_used = fac.count[d]
    for q in range(fac.slope.shape[2]):
        jj = np.nonzero(k_used > q)[0]
        if jj.shape[0] == 0:
            break
        sq = fac.slope[d, jj, q]
        r0 = add_rows(fac.icpt[d, jj, q] + (1.0 + sq) * s.light, np.full(jj.shape[0], np.inf))
        rr = r0 + np.arange(jj.shape[0])
        ix = base + (d * n + jj) * N_DK
        add_entries(rr, ix + V_Q, 1.0)
        add_entries(rr, ix + V_I, -(1.0 + sq))
        add_entries(rr, ix + V_C, -(1.0 + sq))
        add_entries(rr, ix + V_U, -1.0)
    # P >= (1 + t) Q + e (transformer loss)
    for a, c in s.tr_planes:
        _ge_rows(rows, np.full(n, c), (idx + V_P, 1.0), (idx + V_Q, -(1.0 + a)))


def _speedup_groups(cells: Cells, resources, speedup, n: int, own: np.ndarray) -> list[tuple]:
    """The elastic cells (a class with a speed-up cost) of the ``own`` steps grouped per resource by (datacenter,
    step, cost): per resource r, (each group's flat (d, j), its cost, the cells, each cell's group, each cell's
    amount of r); none without ``speedup``."""
    if speedup is None:
        return []
    cost = speedup[0][cells.task]
    out = []
    for per_task in resources:
        amount = per_task[cells.task]
        cell = np.flatnonzero((cost > 0) & (amount != 0) & own)
        _, c_code = np.unique(cost[cell], return_inverse=True)
        code = (cells.dc[cell] * n + cells.step[cell]) * (int(c_code.max(initial=0)) + 1) + c_code.ravel()
        _, at, g_of = np.unique(code, return_index=True, return_inverse=True)
        first = cell[at]  # a member of each group (the group's (d, j) and cost are its)
        out.append((cells.dc[first] * n + cells.step[first], cost[first], cell, g_of.ravel(), amount[cell]))
    return out


def _speedup_rows(rows: _Rows, cols: np.ndarray, g_cost: np.ndarray, cell: np.ndarray, g_of: np.ndarray,
                  amount: np.ndarray, scale1: np.ndarray) -> None:
    """Elastic work: scale x runs 1 + m (x - 1) times faster on x times the resources, so a step's work w of an
    elastic task needs at least max(w, s1 + (w - s1) / m) resource-steps (s1: its scale-1 share of the step),
    i.e. w + e with e >= (1/m - 1) (w - s1), e >= 0. Summed over the cells (classes at the members' largest m)
    of one (datacenter, step, cost) group, E >= cost x sum a (y - s1), E >= 0 (column bound) is a bound of
    the sum of the cells' e: a valid cut of every schedule, one column per group."""
    lo = np.zeros(cols.shape[0])
    np.add.at(lo, g_of, -g_cost[g_of] * amount * scale1)
    rr = rows.add_rows(lo, np.full(cols.shape[0], np.inf))
    rows.add_entries(rr + np.arange(cols.shape[0]), cols, 1.0)
    rows.add_entries(rr + g_of, cell, -g_cost[g_of] * amount)


def _ge_rows(rows: _Rows, lower: np.ndarray, *terms: tuple[np.ndarray, float]) -> None:
    """One row per entry of ``lower``: sum of coef x column >= lower, for the ``(columns, coef)`` terms (a zero
    coefficient adds no entry)."""
    rr = rows.add_rows(lower, np.full(lower.shape[0], np.inf)) + np.arange(lower.shape[0])
    for cols, coef in terms:
        if coef != 0.0:
            rows.add_entries(rr, cols, coef)
