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


@dataclass
class WindowTasks:
    """The tasks an LP window holds: every run task whose allowed interval meets the window."""

    arrival: np.ndarray  # s since the bundle start
    deadline: np.ndarray  # the engine's deadline (s since the bundle start)
    work: np.ndarray  # s of work at scale 1 (the duration)
    rate: np.ndarray  # most work per second of wall time (speed-up at the largest scale)
    rho: np.ndarray  # least resource-seconds per second of work (scale / speed-up at the smallest scale)
    smax: np.ndarray  # largest scale (resource per second at most smax x the request)
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
    #: bound of the class's work done by then) and work due by the end of step k (lower bound); None: classes
    avail: np.ndarray | None = None
    due: np.ndarray | None = None


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
                  time_steps: int = 1, energy_weight=(1.0, 1.0, 1.0), cumulative: bool = False) -> ClassCells:
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
    is priced from the earliest arrival among the members with a cell there."""
    step_s = E.STEP_S
    n_dc = cap.shape[0]
    a, o, W = tw.arrival, tw.origin, tw.work
    t_end = t0 + step_s * n
    fits, sched, impossible, f, need, (ti, dc, j, cap_cell) = _member_cells(tw, cap, delay_s_per_gb, rtt_s, t0, n)

    # commodities: every task's cores, GPUs and memory as three separate resource-time demands
    units = W / step_s  # work in steps
    amount = np.stack([tw.cores, tw.gpus, tw.mem]) * tw.rho  # (3, tasks): resource per unit of work
    peak = np.stack([tw.cores, tw.gpus, tw.mem]) * tw.smax  # resource per step at the largest scale
    lam = amount * np.asarray(energy_weight, dtype=np.float64)[:, None]
    tot = lam.sum(axis=0)
    pres = (amount > 0).sum(axis=0)
    lam = np.where(tot > 0, lam / np.where(tot > 0, tot, 1.0), (amount > 0) / np.maximum(pres, 1))
    # transfer share per resource-step of commodity r at a remote site: lam_r x GB / (r x work steps)
    with np.errstate(divide="ignore", invalid="ignore"):
        gb_per = np.where(amount > 0, lam * tw.bw / (amount * np.where(units > 0, units, 1.0)), 0.0)
    a_step = np.clip(np.floor((a - t0) / step_s).astype(np.int64), -1, n) // max(time_steps, 1)
    f_step = np.clip(np.floor((np.minimum(f, t_end) - t0) / step_s).astype(np.int64), 0, n) // max(time_steps, 1)
    # member-commodity cells: every member cell once per commodity the task has
    r_of, cell_of = np.nonzero(amount[:, ti] > 0)
    mt = ti[cell_of]  # task of each commodity cell
    if cumulative:
        keys = (r_of, o[mt], _bucket(gb_per[r_of, mt], shape_tol))
    else:
        keys = (r_of, o[mt], a_step[mt], f_step[mt], _bucket(gb_per[r_of, mt], shape_tol))
    _, cls_of = _unique_rows(*keys)
    n_cls = int(cls_of.max()) + 1 if cls_of.size else 0
    c_r = np.zeros(n_cls, np.int64)
    c_r[cls_of] = r_of
    c_origin = np.zeros(n_cls, np.int64)
    c_origin[cls_of] = o[mt]
    # per class: need and work (resource-s) over its distinct members, least arrival, least transfer share
    pair, _ = _unique_rows(cls_of, r_of, mt)
    pc, pr, pt = pair[:, 0], pair[:, 1], pair[:, 2]
    c_need = np.bincount(pc, weights=amount[pr, pt] * need[pt], minlength=n_cls)
    c_work = np.bincount(pc, weights=np.maximum(amount[pr, pt], peak[pr, pt] / tw.rate[pt]) * W[pt], minlength=n_cls)
    gb_min = np.full(n_cls, np.inf)
    np.minimum.at(gb_min, pc, gb_per[pr, pt])
    a_min_t = np.full(n_cls, np.inf)
    np.minimum.at(a_min_t, pc, a[pt])
    a_min = np.clip(np.floor((a_min_t - t0) / step_s).astype(np.int64), 0, n - 1)
    # merge member cells into class cells (summed caps in resource-steps)
    ck = (cls_of * n_dc + dc[cell_of]) * n + j[cell_of]
    uk, inv = _unique_codes(ck, n_cls * n_dc * n)
    c_cap = np.bincount(inv.ravel(), weights=cap_cell[cell_of] / tw.rate[mt] * peak[r_of, mt],
                        minlength=uk.shape[0])
    c_j = uk % n
    if cumulative:  # earliest member arrival per class cell (prices its transfer)
        cell_a = np.full(uk.shape[0], np.inf)
        np.minimum.at(cell_a, inv.ravel(), a[mt])
    c_dc = (uk // n) % n_dc
    c_cls = uk // (n * n_dc)
    n_members = int(np.count_nonzero(np.bincount(ti))) if ti.size else 0
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
        w_pair = np.maximum(amount[pr, pt], peak[pr, pt] / tw.rate[pt]) * W[pt]
        n_pair = np.minimum(amount[pr, pt] * need[pt], w_pair)
        avail = np.zeros((n_cls, n))
        due = np.zeros((n_cls, n))
        np.add.at(avail, (pc, k_a), w_pair)
        np.add.at(due, (pc, k_f), n_pair)
        avail = np.cumsum(avail, axis=1)
        due = np.minimum(np.cumsum(due, axis=1), avail)
    return ClassCells(cells=cells, resources=res, n_tasks=n_members, n_classes=n_cls,
                      unschedulable=int((~fits.any(axis=1)).sum()), impossible=int(impossible.sum()),
                      avail=avail, due=due)


def _member_cells(tw: WindowTasks, cap, delay_s_per_gb, rtt_s, t0: float, n: int):
    """Every task's cells: the window steps of [arrival + transfer delay, deadline) at each datacenter that
    holds its shape, each capped at rate x the share of the step inside the interval. Returns (fits,
    scheduled, impossible, deadline used, work that must run inside the window, (task, dc, step, cap) of the
    cells)."""
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
    # member cells: [max(e, t0), min(f, t_end)) per feasible pair, in window steps
    lo_t = np.maximum(e, t0)
    hi_t = np.minimum(f[:, None], t_end)
    ii, dd = np.nonzero(ok & sched[:, None] & (hi_t > lo_t))
    ee, ff = lo_t[ii, dd], hi_t[ii, 0]
    j_lo = np.clip(np.floor((ee - t0) / step_s).astype(np.int64), 0, n - 1)
    j_hi = np.clip((np.ceil((ff - t0) / step_s) - 1).astype(np.int64), 0, n - 1)
    cnt = np.maximum(j_hi - j_lo + 1, 0)
    rep = np.repeat(np.arange(ii.shape[0]), cnt)
    off = np.arange(rep.shape[0]) - np.repeat(np.cumsum(cnt) - cnt, cnt)
    j = j_lo[rep] + off
    ti, dc = ii[rep], dd[rep]
    ts = t0 + step_s * j
    share = np.clip((np.minimum(ff[rep], ts + step_s) - np.maximum(ee[rep], ts)) / step_s, 0.0, 1.0)
    cap_cell = share * tw.rate[ti]
    keep = cap_cell > 1e-9
    ti, dc, j, cap_cell = ti[keep], dc[keep], j[keep], cap_cell[keep]
    return fits, sched, impossible, f, need, (ti, dc, j, cap_cell)


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
