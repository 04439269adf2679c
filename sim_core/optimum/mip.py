"""An integer model of a small window (HiGHS MIP), to measure the integrality gap of the fluid LP
(docs/optimum.md "The integrality gap").

The fluid LP (``optimum.solve``) lets a task split over steps, sites and rates. Here each task is one whole
run: a binary column per (task, datacenter, start time) — starts at the task's earliest time there (arrival +
transfer delay, 0 at its origin) and at every later step boundary, scale 1, finishing by its deadline — whose
busy resources enter the same per-(datacenter, step) rows as the LP's (capacity, servers on, the power bound,
the idle floor, the drain's idle as ``optimum`` counts it), its transfer priced at its origin's intensity in
its dispatch step. It keeps the LP's other relaxations (no queues or wake latency, the power minorant), and
adds one restriction (starts on the step grid, scale 1), so it is a measurement, not a bound: the MIP's value
against its own LP relaxation is the gap integrality alone opens, and against the fluid LP's bound the gap
the fluid tasks leave. Sized for 1–2-day windows of small bundles (one column per start).
"""

from __future__ import annotations

import time
from dataclasses import dataclass

import highspy
import numpy as np

from gridshift.timestep import STEP_H

from .. import engine as E
from ..simulator import Prepared, as_scenario
from .model import N_DK, V_P, _Rows, _site_rows
from .power import facility_pieces, site_power
from .solve import _weights, baseline_kw, bound_steps, drain_paid, idle_floor_kw, optimum


@dataclass
class IntegralityGap:
    """The integer model of a window against its LP relaxation and against the fluid LP's bound."""

    fluid_lp: float  # optimum()'s bound of the window (one LP, the default formulation)
    fixed: float  # the part of it no schedule changes (the window's idle, ``OptimumResult.baseline_*``)
    relaxation: float  # the integer model with its binaries relaxed to [0, 1]
    mip: float  # the best integer schedule HiGHS found (inf: none in the time limit)
    mip_bound: float  # HiGHS's dual bound of the MIP (= mip when solved to optimality)
    status: str  # HiGHS's model status of the MIP
    n_tasks: int
    n_columns: int  # binary columns (task, datacenter, start)
    relax_s: float
    mip_s: float

    @property
    def gap(self) -> float:
        """(MIP - relaxation) / relaxation: the integrality gap of the integer model."""
        return (self.mip - self.relaxation) / self.relaxation

    @property
    def gap_of_changeable(self) -> float:
        """(MIP - relaxation) / (relaxation - fixed): the gap as a share of what a schedule can change."""
        return (self.mip - self.relaxation) / (self.relaxation - self.fixed)

    @property
    def gap_to_fluid(self) -> float:
        """(MIP - fluid LP bound) / fluid LP bound."""
        return (self.mip - self.fluid_lp) / self.fluid_lp


def _patterns(prep: Prepared, n: int, bw: np.ndarray, cap: np.ndarray):
    """Every (task, datacenter, start) of the window's tasks that fits the datacenter and finishes by the
    deadline (a task that cannot: its earliest start at each datacenter that holds it). Returns arrays task,
    dc, start (s since the bundle start), dispatch step (window step)."""
    T, C = prep.tasks, prep.ctx
    t0, step_s = C.t0, E.STEP_S
    t_end = t0 + step_s * n
    out = ([], [], [], [])
    for i in range(T.arrival.shape[0]):
        a, w, dl, o = T.arrival[i], T.duration[i], T.deadline[i], int(T.origin[i])
        if w <= 0:
            continue
        fits = ((T.cores[i] <= cap[:, 0] + E.EPS) & (T.gpus[i] <= cap[:, 1] + E.EPS)
                & (T.mem[i] <= cap[:, 2] + E.EPS))
        rows = []
        for d in np.nonzero(fits)[0]:
            delay = 0.0 if d == o else (bw[i] * C.delay_s_per_gb[o, d] if bw[i] > 0 else 0.0) + C.rtt_s[o, d]
            e = a + delay
            k0 = int(np.floor((e - t0) / step_s)) + 1
            starts = [e] + [t0 + step_s * k for k in range(max(k0, 0), n)]
            starts = [s for s in starts if s + w <= dl + 1e-6 and s + w <= t_end + 1e-6]
            for s in starts:
                disp = s - delay if s > e else a
                rows.append((d, s, int(np.clip(np.floor((disp - t0) / step_s), 0, n - 1))))
        if not rows:  # no start meets the deadline inside the window: the earliest one at each datacenter
            for d in np.nonzero(fits)[0]:
                delay = 0.0 if d == o else (bw[i] * C.delay_s_per_gb[o, d] if bw[i] > 0 else 0.0) + C.rtt_s[o, d]
                if a + delay + w <= t_end + 1e-6:
                    rows.append((d, a + delay, int(np.clip(np.floor((a - t0) / step_s), 0, n - 1))))
        for d, s, k in rows:
            out[0].append(i)
            out[1].append(d)
            out[2].append(s)
            out[3].append(k)
    return tuple(np.asarray(x) for x in out)


def integrality_gap(scenario, *, seed: int = 0, start=None, days=None, steps=None, objective: str = "carbon",
                    carbon_weight: float = 1.0, cost_weight: float = 0.0, time_limit_s: float = 300.0,
                    threads: int = 2, **options) -> IntegralityGap:
    """The integer model of a run window (the same tasks, deadlines and run options as ``sim_core.run``),
    solved as an LP (binaries relaxed) and as a MIP (``time_limit_s``), beside ``optimum``'s fluid bound."""
    sc = as_scenario(scenario)
    w_c, w_u = _weights(objective, carbon_weight, cost_weight)
    prep = Prepared(sc, seed, start=start, days=days, steps=steps, **options)
    T, C, opts = prep.tasks, prep.ctx, prep.options
    n, s0 = bound_steps(prep), prep.s0
    cap = C.cap
    sites = [site_power(sc.params[d], cap[d, 0], cap[d, 1], cap[d, 2], prep.managed) for d in range(sc.n_dc)]
    sl = slice(s0, s0 + n)
    fac = facility_pieces(sc.params, sites, sc.temp_c[:, sl], sc.wetbulb_c[:, sl])
    carbon = sc.carbon_g_per_kwh[:, sl]
    w_kwh = w_c * carbon / 1000.0 + w_u * sc.price_usd_per_mwh[:, sl] / 1000.0
    if (w_kwh < 0).any():
        raise ValueError("integrality_gap: a negative objective weight (negative prices) is not supported")
    floor = idle_floor_kw(sc, sl, prep.managed, fac)
    bw = T.bw - T.ds_gb if opts.locality else T.bw
    ti, dc, st, kd = _patterns(prep, n, bw, cap)
    m = ti.shape[0]
    # transfer: GB x kWh/GB x the origin's intensity at the dispatch step, and egress
    o = T.origin[ti].astype(np.int64)
    remote = dc != o
    usd = np.asarray(sc.usd_per_gb, dtype=np.float64)
    x_cost = np.where(remote, bw[ti] * (w_c * float(opts.transfer_kwh_per_gb) * carbon[o, kd] / 1000.0
                                        + w_u * usd[o, dc]), 0.0)
    rows = _Rows()
    n_dk = sc.n_dc * n
    n_col = m + n_dk * N_DK
    col_lower, col_upper, col_cost = np.zeros(n_col), np.full(n_col, np.inf), np.zeros(n_col)
    col_upper[:m] = 1.0
    col_cost[:m] = x_cost
    tasks = np.unique(ti)
    first = rows.add_rows(np.ones(tasks.shape[0]), np.ones(tasks.shape[0]))
    rows.add_entries(first + np.searchsorted(tasks, ti), np.arange(m), 1.0)
    # busy resources: B_r[d, j] = sum r_i x occupancy of step j
    brow = rows.add_rows(np.zeros(3 * n_dk), np.zeros(3 * n_dk))
    rows.add_entries(brow + np.arange(3 * n_dk), m + (np.arange(3 * n_dk) // 3) * N_DK + np.arange(3 * n_dk) % 3, 1.0)
    dur = T.duration[ti]
    res = (T.cores, T.gpus, T.mem)
    for c in range(m):
        j0 = int((st[c] - C.t0) // E.STEP_S)
        j1 = int(np.ceil((st[c] + dur[c] - C.t0) / E.STEP_S))
        j = np.arange(j0, min(j1, n))
        ts = C.t0 + E.STEP_S * j
        occ = (np.minimum(st[c] + dur[c], ts + E.STEP_S) - np.maximum(st[c], ts)) / E.STEP_S
        for r in range(3):
            amt = res[r][ti[c]]
            if amt:
                rows.add_entries(brow + (dc[c] * n + j) * 3 + r, c, -amt * occ)
    for d, s in enumerate(sites):
        _site_rows(rows, d, s, m, n, cap, np.full((sc.n_dc, n), np.inf), w_kwh, fac, col_lower, col_upper, col_cost)
    col_lower[m + np.arange(n_dk) * N_DK + V_P] = floor.ravel()
    # the drain's idle past the last task's earliest finish, as optimum() counts it (a constant)
    k0 = max(prep.n_window, drain_paid(T, cap, C.t0, n))
    base = np.maximum(baseline_kw(sites, fac), floor)
    offset = -float((w_kwh[:, k0:] * STEP_H * base[:, k0:]).sum())

    lp = highspy.HighsLp()
    lp.num_col_, lp.num_row_ = int(n_col), int(rows.n_row)
    lp.col_cost_, lp.col_lower_, lp.col_upper_ = col_cost, col_lower, col_upper
    lp.row_lower_, lp.row_upper_ = np.concatenate(rows.rlo), np.concatenate(rows.rhi)
    lp.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    lp.a_matrix_.start_, lp.a_matrix_.index_, lp.a_matrix_.value_ = rows.csc(n_col)
    relax, relax_s, _, _ = _run(lp, threads, None)
    lp.integrality_ = [highspy.HighsVarType.kInteger] * m + [highspy.HighsVarType.kContinuous] * (n_col - m)
    mip, mip_s, bound, status = _run(lp, threads, time_limit_s)
    fl = optimum(sc, seed=seed, start=start, days=days, steps=steps, objective=objective,
                 carbon_weight=carbon_weight, cost_weight=cost_weight, threads=threads, **options)
    fixed = w_c * fl.baseline_carbon_kg + w_u * fl.baseline_cost_usd
    return IntegralityGap(fluid_lp=fl.value, fixed=fixed, relaxation=relax + offset, mip=mip + offset,
                          mip_bound=bound + offset, status=status, n_tasks=int(tasks.shape[0]),
                          n_columns=int(m), relax_s=relax_s, mip_s=mip_s)


def _run(lp, threads: int, time_limit_s: float | None):
    """Solve ``lp`` (a MIP when it has integrality); returns (objective, seconds, MIP dual bound, status)."""
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.setOptionValue("threads", int(threads))
    if time_limit_s is not None:
        h.setOptionValue("time_limit", float(time_limit_s))
        h.setOptionValue("mip_rel_gap", 1e-4)
    h.passModel(lp)
    t = time.perf_counter()
    h.run()
    secs = time.perf_counter() - t
    status = h.modelStatusToString(h.getModelStatus())
    info = h.getInfo()
    if time_limit_s is None:
        if h.getModelStatus() != highspy.HighsModelStatus.kOptimal:
            raise ValueError(f"integrality_gap: the relaxation did not solve: {status}")
        return float(info.objective_function_value), secs, float(info.objective_function_value), status
    has = info.primal_solution_status == 2  # a feasible integer solution was found
    val = float(info.objective_function_value) if has else float("inf")
    return val, secs, float(info.mip_dual_bound), status


__all__ = ["IntegralityGap", "integrality_gap"]
