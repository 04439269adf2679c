"""The LP's task classes: each window task's fluid cells (datacenter x step shares of its allowed
interval), then tasks merged into classes whose cells, work and per-step capacities are the sums of
their members' (docs/optimum.md "Aggregation").

Why the classes keep the LP a lower bound: a class's constraints are sums of its members' constraints
(work, per-step caps), so every member schedule projects onto a feasible class schedule (the class LP
is a relaxation of the member LP); the class's per-unit-work resources and transfer share are the
smallest of its members' (the power bound is non-decreasing in the busy resources and the transfer
emissions are non-negative), so a class unit never costs more than any member's unit.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numba import njit

from .. import engine as E
from .model import Cells, _range_min

#: default relative width of the geometric buckets of the class key's transfer share per resource-step (a
#: class's unit carries its members' smallest share, so this is the most a class understates a member's);
#: chosen for solve time (BENCHMARKS.md), never on any policy's result
SHAPE_TOL = 1.0
#: the same for the cumulative formulation (base-4 buckets, each holding whole base-2 buckets): on the 7-day
#: benchmark window 1.0 -> 3.0 cut the LP columns 660k -> 396k and HiGHS 55 -> 37 s for a bound 0.14 % lower
#: (BENCHMARKS.md); chosen for the issue's one-minute target, never on any policy's result
SHAPE_TOL_CUMULATIVE = 3.0
#: default number of steps the class key's arrival and deadline steps are coarsened to (1 h); on a 1-day
#: window of the benchmark bundle (1, 0.25) -> (4, 1.0) lowered the bound by 0.03 % and the classes by 25 %
TIME_STEPS = 4
#: relative width of the geometric buckets of an elastic task's marginal throughput m in the class key (a class
#: prices its speed-up at its members' largest m, the cheapest); the benchmark bundle's two values fall apart
M_TOL = 0.1


@dataclass
class WindowTasks:
    """The tasks an LP window holds: every run task whose allowed interval meets the window."""

    arrival: np.ndarray  # s since the bundle start
    deadline: np.ndarray  # the engine's deadline (s since the bundle start)
    work: np.ndarray  # s of work at scale 1 (the duration)
    rate: np.ndarray  # most work per second of wall time (speed-up at the largest scale)
    rho: np.ndarray  # least resource-seconds per second of work (scale / speed-up at the smallest scale)
    smax: np.ndarray  # largest scale (resource per second at most smax x the request)
    mthr: np.ndarray  # marginal throughput m: scale x runs 1 + m (x - 1) times faster
    cores: np.ndarray
    gpus: np.ndarray
    mem: np.ndarray
    bw: np.ndarray
    origin: np.ndarray


@dataclass
class ClassCells:
    """Classes and their cells (``cells.task`` indexes classes)."""

    cells: Cells
    resources: tuple[np.ndarray, np.ndarray, np.ndarray]  # per class, per unit of work: cores, GPUs, GB
    n_tasks: int  # tasks with cells
    n_classes: int
    unschedulable: int  # fit no datacenter
    impossible: int  # no datacenter can finish them by their deadline (limit dropped, reported)
    #: cumulative formulation only, (n_classes, n) resource-s: work released by the end of step k (upper
    #: bound of the class's work done by then) and work due by the end of step k (lower bound), with rate curves
    #: each member's share held to what its rate allows since its arrival and before its deadline; None: classes
    avail: np.ndarray | None = None
    due: np.ndarray | None = None
    #: per class: the extra resource-steps per step of work run faster than scale 1 (1/m - 1 at the members'
    #: largest marginal throughput m; 0: not elastic), and per cell: the scale-1 resource-steps its members'
    #: shares of the step hold (work up to this runs at scale 1, at no extra resource)
    speedup_cost: np.ndarray | None = None
    scale1: np.ndarray | None = None
    #: (3, n tasks): each task's class per resource (cores, GPUs, GB; -1: none), for ``optimum.follow``
    member_class: np.ndarray | None = None


def _bucket(x: np.ndarray, tol: float) -> np.ndarray:
    """Geometric bucket of non-negative values (0 its own bucket; ``tol`` 0: exact values)."""
    if tol <= 0:
        return np.unique(x, return_inverse=True)[1].astype(np.int64) + 1
    with np.errstate(divide="ignore"):
        b = np.floor(np.log(np.where(x > 0, x, 1.0)) / np.log1p(tol)).astype(np.int64)
    return np.where(x > 0, b + (1 << 20), 0)


#: key spaces up to this size are made unique by marking a dense table (no sort); larger ones by sorting
_DENSE_KEYS = 1 << 25


def _unique_codes(code: np.ndarray, size: int) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(code, return_inverse=True)`` for non-negative int64 codes below ``size``: the same sorted
    values and inverse, by marking a table of ``size`` entries when it is small enough (linear time)."""
    if code.size == 0:
        return code.astype(np.int64), np.zeros(0, np.int64)
    if size > _DENSE_KEYS:
        uk, inv = np.unique(code, return_inverse=True)
        return uk, inv.ravel()
    present = np.zeros(size, bool)
    present[code] = True
    rank = np.cumsum(present, dtype=np.int32) - 1  # size <= _DENSE_KEYS < 2**31
    return np.flatnonzero(present), rank[code].astype(np.int64)


def _unique_rows(*cols: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """``np.unique(np.stack(cols, axis=1), axis=0, return_inverse=True)`` for integer columns: the same rows in
    the same (lexicographic) order and the same inverse, computed on one int64 code per row (mixed radix,
    the first column most significant), which is much faster than numpy's sort of rows as raw bytes."""
    n = cols[0].shape[0]
    if n == 0:
        return np.zeros((0, len(cols)), np.int64), np.zeros(0, np.int64)
    lows = [int(c.min()) for c in cols]
    spans = [int(c.max()) - lo + 1 for c, lo in zip(cols, lows, strict=True)]
    size = math.prod(spans)  # (exact: Python integers)
    if size >= 2**62:  # no int64 code: numpy's row sort
        uk, inv = np.unique(np.stack(cols, axis=1), axis=0, return_inverse=True)
        return uk, inv.ravel()
    code = np.zeros(n, np.int64)
    for c, lo, span in zip(cols, lows, spans, strict=True):
        code = code * span + (c.astype(np.int64) - lo)
    uk, inv = _unique_codes(code, size)
    rows = np.empty((uk.shape[0], len(cols)), np.int64)
    for k in range(len(cols) - 1, -1, -1):
        rows[:, k] = uk % spans[k] + lows[k]
        uk = uk // spans[k]
    return rows, inv


def build_classes(tw: WindowTasks, *, cap: np.ndarray, delay_s_per_gb: np.ndarray, rtt_s: np.ndarray,
                  usd_per_gb: np.ndarray, carbon: np.ndarray, t0: float, n: int, kwh_per_gb: float,
                  mean_emissions: bool, w_carbon: float, w_cost: float, shape_tol: float = SHAPE_TOL,
                  time_steps: int = 1, energy_weight=(1.0, 1.0, 1.0), cumulative: bool = False,
                  rate_curves: bool = True) -> ClassCells:
    """Cells of every task, merged into classes keyed by (origin, arrival step, deadline step, resource
    shape bucket, transfer-share bucket); ``time_steps`` coarsens the two steps of the key.

    A task may run at datacenter d (that holds its shape) in [arrival + transfer delay (0 at its origin),
    deadline), at up to ``rate`` work per second; a cell is one window step of that interval, capped at
    rate x the share of the step inside it. The work that must run inside the window is the work minus
    the most that fits in the part of the interval outside it (so a window of a longer run bounds the
    energy of its own steps only: rolling horizons). ``carbon`` (n_dc, n): the window's intensities; a
    remote cell carries its share of the task's transfer (GB x kWh/GB / work steps), priced at the least
    origin intensity (or origin/destination mean) between the arrival step and the cell's step.

    ``cumulative``: the classes are keyed by (resource, origin, transfer-share bucket) only, and instead of
    one work row per class the LP gets its cumulative curves (``avail``, ``due``); a remote cell's transfer
    is priced from the earliest arrival among the members with a cell there. ``rate_curves``: by the end of a
    step a member has done at most its largest rate x the time since its arrival and at least its need less its
    rate x the time left to its deadline (a task runs at one site at a time), summed into both curves.

    A class's key depends on its members only (never on a cell), so the classes are formed per task and
    resource, and the class cells are summed from each member's interval at each datacenter (:func:`_class_cells`)
    without one array entry per member cell: memory grows with the tasks and the class cells, not with their
    product (a week of the source cluster's 0.8 M tasks has ~10^8 member cells)."""
    step_s = E.STEP_S
    n_dc = cap.shape[0]
    a, o, W = tw.arrival, tw.origin, tw.work
    t_end = t0 + step_s * n
    fits, sched, impossible, f, need, (ii, dd, ee, ff) = _member_ranges(tw, cap, delay_s_per_gb, rtt_s, t0, n)
    j_lo = np.clip(np.floor((ee - t0) / step_s).astype(np.int64), 0, n - 1)
    j_hi = np.clip((np.ceil((ff - t0) / step_s) - 1).astype(np.int64), 0, n - 1)
    has = np.zeros(a.shape[0], bool)  # tasks with a cell (a step share above 1e-9 somewhere)
    _tasks_with_cells(ii, ee, ff, j_lo, j_hi, float(t0), float(step_s), tw.rate, has)

    # commodities: every task's cores, GPUs and memory as three separate resource-time demands
    units = W / step_s  # work in steps
    amount = np.stack([tw.cores, tw.gpus, tw.mem]) * tw.rho  # (3, tasks): resource per unit of work
    peak = np.stack([tw.cores, tw.gpus, tw.mem]) * tw.smax  # resource per step at the largest scale
    # elastic tasks that never use less than their request per second of work (rho 1): their cells count work
    # (at most rate x the step share), and work run faster than scale 1 costs 1/m - 1 extra resource per unit
    # (``model._speedup_rows``); the others' cells count resource-steps up to the largest scale's, as before
    elastic = (tw.rate > 1.0) & (tw.rho == 1.0)
    m_el = np.where(elastic, tw.mthr, 0.0)
    unit = np.where(elastic[None, :], amount * tw.rate, peak)  # a cell's cap per unit of step share
    lam = amount * np.asarray(energy_weight, dtype=np.float64)[:, None]
    tot = lam.sum(axis=0)
    pres = (amount > 0).sum(axis=0)
    lam = np.where(tot > 0, lam / np.where(tot > 0, tot, 1.0), (amount > 0) / np.maximum(pres, 1))
    # transfer share per resource-step of commodity r at a remote site: lam_r x GB / (r x work steps)
    with np.errstate(divide="ignore", invalid="ignore"):
        gb_per = np.where(amount > 0, lam * tw.bw / (amount * np.where(units > 0, units, 1.0)), 0.0)
    a_step = np.clip(np.floor((a - t0) / step_s).astype(np.int64), -1, n) // max(time_steps, 1)
    f_step = np.clip(np.floor((np.minimum(f, t_end) - t0) / step_s).astype(np.int64), 0, n) // max(time_steps, 1)
    # member commodities (resource r of task t), r-major, tasks ascending within r
    pr, pt = np.nonzero((amount > 0) & has[None, :])
    m_key = _bucket(m_el[pt], M_TOL)  # 0: not elastic
    if cumulative:
        keys = (pr, o[pt], _bucket(gb_per[pr, pt], shape_tol), m_key)
    else:
        keys = (pr, o[pt], a_step[pt], f_step[pt], _bucket(gb_per[pr, pt], shape_tol), m_key)
    _, pc = _unique_rows(*keys)
    n_cls = int(pc.max()) + 1 if pc.size else 0
    cls_rt = np.full((3, a.shape[0]), -1, np.int64)
    cls_rt[pr, pt] = pc
    c_r = np.zeros(n_cls, np.int64)
    c_r[pc] = pr
    c_origin = np.zeros(n_cls, np.int64)
    c_origin[pc] = o[pt]
    # per class: need and work (resource-s) over its members, least arrival, least transfer share
    w_pair = np.where(elastic[pt], amount[pr, pt], np.maximum(amount[pr, pt], peak[pr, pt] / tw.rate[pt])) * W[pt]
    m_max = np.zeros(n_cls)
    np.maximum.at(m_max, pc, m_el[pt])
    with np.errstate(divide="ignore"):
        speedup_cost = np.where(m_max > 0, 1.0 / np.where(m_max > 0, m_max, 1.0) - 1.0, 0.0)
    c_need = np.bincount(pc, weights=amount[pr, pt] * need[pt], minlength=n_cls)
    c_work = np.bincount(pc, weights=w_pair, minlength=n_cls)
    gb_min = np.full(n_cls, np.inf)
    np.minimum.at(gb_min, pc, gb_per[pr, pt])
    a_min_t = np.full(n_cls, np.inf)
    np.minimum.at(a_min_t, pc, a[pt])
    a_min = np.clip(np.floor((a_min_t - t0) / step_s).astype(np.int64), 0, n - 1)
    # the class cells: members' caps summed (resource-steps), the earliest member arrival per cell, in a
    # (class, dc, step) table holding each class's steps from its members' first to their last
    t_lo = np.full(a.shape[0], n, np.int64)
    t_hi = np.full(a.shape[0], -1, np.int64)
    np.minimum.at(t_lo, ii, j_lo)
    np.maximum.at(t_hi, ii, j_hi)
    c_lo = np.full(n_cls, n, np.int64)
    c_hi = np.full(n_cls, -1, np.int64)
    np.minimum.at(c_lo, pc, t_lo[pt])
    np.maximum.at(c_hi, pc, t_hi[pt])
    span = np.maximum(c_hi - c_lo + 1, 0)
    off = np.concatenate([[0], np.cumsum(n_dc * span)])
    cap_d = np.zeros(int(off[-1]))
    s1_d = np.zeros(int(off[-1]))
    present = np.zeros(int(off[-1]), bool)
    arr_d = np.full(int(off[-1]), np.inf)
    _class_cells(ii, dd, ee, ff, j_lo, j_hi, float(t0), float(step_s), tw.rate, unit, amount, a, cls_rt, off, c_lo,
                 span, cap_d, s1_d, present, arr_d)
    uk = np.flatnonzero(present)
    c_cap = cap_d[uk]
    c_s1 = s1_d[uk]
    cell_a = arr_d[uk]
    del cap_d, s1_d, present, arr_d
    c_cls = np.searchsorted(off, uk, side="right") - 1
    rel = uk - off[c_cls]
    c_dc = rel // span[c_cls]
    c_j = c_lo[c_cls] + rel % span[c_cls]
    n_members = int(has.sum())
    res = tuple((c_r == r).astype(np.float64) for r in range(3))
    # transfer share of remote cells
    co = c_origin[c_cls]
    remote = c_dc != co
    lo_a = cell_a if cumulative else a_min[c_cls]  # (the arrival that prices a remote cell's transfer)
    x_kg, x_usd, x_kwh = _transfer(remote, co, c_dc, c_j, lo_a, cumulative, gb_min[c_cls], carbon, usd_per_gb,
                                   kwh_per_gb, mean_emissions, t0, n)
    cells = Cells(task=c_cls.astype(np.int64), dc=c_dc.astype(np.int64), step=c_j.astype(np.int64), cap=c_cap,
                  cost=w_carbon * x_kg + w_cost * x_usd, carbon=x_kg, usd=x_usd, kwh=x_kwh,
                  need=np.minimum(c_need, c_work), work=c_work,
                  scheduled=np.ones(n_cls, bool), impossible=np.zeros(n_cls, bool))
    avail = due = None
    if cumulative:
        # a member's work is released at its arrival step (step 0 if before the window) and its need is
        # due by the end of the step holding its deadline (the window's last step if later)
        k_a = np.clip(np.floor((a[pt] - t0) / step_s), 0, n - 1).astype(np.int64)
        with np.errstate(invalid="ignore"):
            k_f = np.clip(np.ceil((np.minimum(f[pt], t_end) - t0) / step_s) - 1, 0, n - 1).astype(np.int64)
        n_pair = np.minimum(amount[pr, pt] * need[pt], w_pair)
        avail = np.zeros((n_cls, n))
        due = np.zeros((n_cls, n))
        np.add.at(avail, (pc, k_a), w_pair)
        np.add.at(due, (pc, k_f), n_pair)
        avail = np.cumsum(avail, axis=1)
        due = np.cumsum(due, axis=1)
        if rate_curves:
            u = unit[pr, pt]
            e = np.maximum(a[pt], t0)
            ramp = _ramp_sum(pc, e, w_pair, u, t0, step_s, n, n_cls)
            avail = np.minimum(avail, ramp * (1 + 1e-9))
            # (u > 0: every member commodity holds some resource; members with no need add nothing)
            dramp = _ramp_sum(pc, np.minimum(f[pt], t_end) - n_pair / u, n_pair, u, t0, step_s, n, n_cls)
            due = np.maximum(due, dramp * (1 - 1e-9))
        due = np.minimum(due, avail)
    return ClassCells(cells=cells, resources=res, n_tasks=n_members, n_classes=n_cls,
                      unschedulable=int((~fits.any(axis=1)).sum()), impossible=int(impossible.sum()),
                      avail=avail, due=due, speedup_cost=speedup_cost, scale1=c_s1, member_class=cls_rt)


def _ramp_sum(cls: np.ndarray, start: np.ndarray, total: np.ndarray, slope: np.ndarray, t0: float, step_s: float,
              n: int, n_cls: int) -> np.ndarray:
    """(n_cls, n): per class, at the end of each step k (time t0 + (k + 1) step_s), the sum over its members of
    clip(slope x (t - start), 0, total): the most work a member that cannot start before ``start`` and does at most
    ``slope`` per second has done by then. Each ramp is the difference of two hinge functions, summed exactly on
    the step grid by first- and second-order difference arrays."""
    out = np.zeros((n_cls, n))
    ok = np.isfinite(start) & (total > 0) & (slope > 0)
    cls, start, total, slope = cls[ok], start[ok], total[ok], slope[ok]
    for x, sign in ((start, 1.0), (start + total / slope, -1.0)):
        z = (x - t0) / step_s
        q = np.maximum(np.floor(z), 0.0)
        keep = q < n
        c, qi, zk, sl = cls[keep], q[keep].astype(np.int64), z[keep], slope[keep]
        A = np.zeros((n_cls, n + 1))
        B = np.zeros((n_cls, n + 1))
        np.add.at(A, (c, qi), sign * sl * step_s * (qi + 1 - zk))
        np.add.at(B, (c, qi + 1), sign * sl * step_s)
        out += (np.cumsum(A, axis=1) + np.cumsum(np.cumsum(B, axis=1), axis=1))[:, :n]
    return np.maximum(out, 0.0)


def _member_ranges(tw: WindowTasks, cap, delay_s_per_gb, rtt_s, t0: float, n: int):
    """Every task's allowed interval at each datacenter that holds its shape, clipped to the window: [max(arrival
    + transfer delay, t0), min(deadline, window end)). Returns (fits, scheduled, impossible, deadline used, work
    that must run inside the window, (task, dc, start, end) of the non-empty intervals, task-major)."""
    step_s = E.STEP_S
    a, o, W = tw.arrival, tw.origin, tw.work
    fits = ((tw.cores[:, None] <= cap[None, :, 0] + E.EPS) & (tw.gpus[:, None] <= cap[None, :, 1] + E.EPS)
            & (tw.mem[:, None] <= cap[None, :, 2] + E.EPS))
    sched = fits.any(axis=1) & (W > 0)
    with np.errstate(invalid="ignore"):
        delay = np.where(tw.bw[:, None] > 0, tw.bw[:, None] * delay_s_per_gb[o], 0.0) + rtt_s[o]
    delay[np.arange(o.shape[0]), o] = 0.0
    delay = np.where(np.isnan(delay), np.inf, delay)
    e = a[:, None] + delay  # earliest start per datacenter
    f = tw.deadline.copy()
    ok = fits & (e + W[:, None] / tw.rate[:, None] <= f[:, None] + 1e-6)
    impossible = sched & ~ok.any(axis=1)
    f[impossible] = np.inf  # no schedule meets this deadline: the task keeps only its work (reported)
    ok = fits & (e < f[:, None])
    t_end = t0 + step_s * n
    # work that must run inside the window: at most rate x (time of the interval outside it) runs outside
    e_min = np.where(ok, e, np.inf).min(axis=1)
    outside = np.clip(t0 - e_min, 0.0, None) + np.clip(f - t_end, 0.0, None)
    with np.errstate(invalid="ignore"):
        need = np.where(sched, np.clip(W - tw.rate * outside, 0.0, None), 0.0)
    need = np.where(np.isnan(need), 0.0, need)
    lo_t = np.maximum(e, t0)
    hi_t = np.minimum(f[:, None], t_end)
    ii, dd = np.nonzero(ok & sched[:, None] & (hi_t > lo_t))
    return fits, sched, impossible, f, need, (ii, dd, lo_t[ii, dd], hi_t[ii, 0])


@njit(cache=True, nogil=True)
def _step_share(ee, ff, ts, step_s):
    """The share of the step starting at ``ts`` inside [ee, ff), in [0, 1]."""
    return min(max((min(ff, ts + step_s) - max(ee, ts)) / step_s, 0.0), 1.0)


@njit(cache=True, nogil=True)
def _tasks_with_cells(ii, ee, ff, j_lo, j_hi, t0, step_s, rate, has):
    """has[task] = 1 where one of its intervals holds a step share x rate above 1e-9 (a cell)."""
    for p in range(ii.shape[0]):
        i = ii[p]
        if has[i]:
            continue
        for j in range(j_lo[p], j_hi[p] + 1):
            if _step_share(ee[p], ff[p], t0 + step_s * j, step_s) * rate[i] > 1e-9:
                has[i] = True
                break


@njit(cache=True, nogil=True)
def _class_cells(ii, dd, ee, ff, j_lo, j_hi, t0, step_s, rate, unit, amount, arrival, cls_rt, off, c_lo, span, cap,
                 scale1, present, arr):
    """Sum the members' cells into the class cells: a member's cell of step j at datacenter d is capped at its
    step share x rate (kept above 1e-9), i.e. the share x ``unit`` in its class's resource (an elastic task's
    work per step at its largest speed-up; any other's peak resource per step); ``scale1`` sums the share x its
    resource per unit of work (what it holds at scale 1) and ``arr`` keeps the earliest member arrival with a
    cell there. Class c's cell (d, j) sits at off[c] + d x span[c] + j - c_lo[c] (classes, then datacenters,
    then steps: the cells' order). Intervals are visited task-major, so each class cell's sum is taken in the
    tasks' order."""
    for p in range(ii.shape[0]):
        i = ii[p]
        d = dd[p]
        for j in range(j_lo[p], j_hi[p] + 1):
            c_i = _step_share(ee[p], ff[p], t0 + step_s * j, step_s) * rate[i]
            if c_i <= 1e-9:
                continue
            for r in range(3):
                c = cls_rt[r, i]
                if c < 0:
                    continue
                k = off[c] + d * span[c] + j - c_lo[c]
                cap[k] += c_i / rate[i] * unit[r, i]
                scale1[k] += c_i / rate[i] * amount[r, i]
                present[k] = True
                if arrival[i] < arr[k]:
                    arr[k] = arrival[i]


def _transfer(remote, co, c_dc, c_j, lo_a, cumulative: bool, gb, carbon, usd_per_gb, kwh_per_gb: float,
              mean_emissions: bool, t0: float, n: int):
    """Transfer share of each class cell (carbon kg, USD, kWh; 0 at the origin): ``gb`` per cell, priced at
    the least origin (or origin/destination mean) intensity between the arrival (``lo_a``: a time when
    ``cumulative``, else a step) and the cell's step."""
    step_s = E.STEP_S
    n_dc = carbon.shape[0]
    x_kg = np.zeros(c_dc.shape[0])
    x_usd = np.zeros(c_dc.shape[0])
    x_kwh = np.zeros(c_dc.shape[0])
    if remote.any():
        r = np.nonzero(remote)[0]
        oi, di = co[r], c_dc[r]
        if cumulative:
            lo = np.clip(np.floor((lo_a[r] - t0) / step_s).astype(np.int64), 0, n - 1)
            lo = np.minimum(lo, c_j[r])
        else:
            lo = np.minimum(lo_a[r], c_j[r])
        if mean_emissions:
            series = 0.5 * (carbon[:, None, :] + carbon[None, :, :])
            ci = _range_min(series.reshape(n_dc * n_dc, n), oi * n_dc + di, lo, c_j[r])
        else:
            ci = _range_min(carbon, oi, lo, c_j[r])
        g = gb[r]
        x_kwh[r] = g * kwh_per_gb
        x_kg[r] = x_kwh[r] * ci / 1000.0
        x_usd[r] = g * usd_per_gb[oi, di]
    return x_kg, x_usd, x_kwh
