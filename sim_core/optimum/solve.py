"""The offline optimum of a run window: set-up from the engine's own run preparation, the LP per
horizon, HiGHS, and the :class:`OptimumResult` (docs/optimum.md).

What it bounds: the carbon (kg CO2, the datacenters' facility energy x grid intensity plus the
transfers' emissions, the engine's ``carbon_incl_transfer_kg``), the cost (USD, electricity plus
egress, ``cost_incl_transfer_usd``) or a weighted sum, of every schedule of the run's tasks (same
bundle, window, seed, so the same workload realisation and origins, and run options) that finishes
every task by the engine's deadline. It is a lower bound, not a schedule: the LP relaxes (1) tasks to
fluids (a task may split over steps, sites and rates, as if interruptible and resumable anywhere at no
checkpoint cost, its transfer share priced with the fraction that runs remotely), (2) the engine's
queues (FCFS with backfill) and server wake latency to per-step capacity, (3) the power model to a
convex piecewise-linear minorant (``optimum.power``), (4) tasks to classes (``optimum.classes``) with
cumulative work curves (``formulation="cumulative"``) or one work row each (``"classes"``), and
with rolling horizons (5) each task belongs to the horizon of its arrival, whose LP runs on to the task's
deadline and pays for its load in the later horizons' steps at their LP's marginal prices (a Lagrangian
bound: linked horizons). Schedules that miss deadlines are outside its scope: compare reports SLA violations
next to the gap. Work: the run's own. With ``drain=True`` (a run's default: arrivals stop at the window's
end and the run goes on until its last task has finished, sim_core.drain) the bound covers the window's
steps and the drain's up to the last deadline, so every task's whole work (the drained run's work); in the
drain's steps it counts only the power above the least state's (a run stops paying when its work ends).
With ``drain=False`` it covers the window's steps and the work that must run inside them.
"""

from __future__ import annotations

import datetime as dt
import time
from dataclasses import dataclass, field, fields
from pathlib import Path

import highspy
import numpy as np

from .. import engine as E
from ..physics import P_SPARE_MIN
from ..simulator import Prepared, as_scenario
from .battery import net_kw as battery_net_kw
from .checkpoint import SOLUTION_KEYS, Checkpoints, lp_key
from .classes import SHAPE_TOL, SHAPE_TOL_CUMULATIVE, TIME_STEPS, WindowTasks, build_classes
from .follow import follow_cells
from .model import N_DK, STEP_H, V_AC, V_AG, V_BC, V_BG, V_BM, V_P, assemble
from .power import bound_at, facility_pieces, site_power

OBJECTIVES = ("carbon", "cost", "weighted")
#: default rolling horizon: "auto", one LP over the window and its drain (what docs/optimum_table.md and
#: BENCHMARKS.md report) when the bound's steps span at most ONE_LP_MAX_DAYS, else rolling AUTO_HORIZON_DAYS
#: horizons. Rolling horizons loosen the bound (linked: two 3.5-day horizons lowered the README week's by 4.6 %,
#: docs/optimum.md), and are for windows one LP cannot hold in time and memory
HORIZON_DAYS: float | str | None = "auto"
#: the longest bound (days, window and drain) "auto" solves as one LP: the README week drained (8.24 days,
#: 180k columns) took 57 CPU s (568 s wall at load 15, BENCHMARKS.md); a year (8 M columns) is out of reach
ONE_LP_MAX_DAYS = 14.0
AUTO_HORIZON_DAYS = 7.0
#: the LP's task aggregation (docs/optimum.md): "cumulative" (default: classes per resource, origin and
#: transfer bucket with cumulative release/deadline curves) or "classes" (per arrival and deadline hour too)
FORMULATIONS = ("cumulative", "classes")
FORMULATION = "cumulative"
#: default steps between the cumulative curves' checkpoints (1 h): checking the curves at fewer steps is a
#: relaxation; chosen for solve time (BENCHMARKS.md: 4x fewer curve variables), never on a policy's result
CURVE_STEPS = 4
#: the figures of one horizon's outcome summed over the horizons
HORIZON_SUMS = ("value", "kwh", "fac_kg", "fac_usd", "x_kg", "x_usd", "x_kwh", "solve", "build", "tasks", "classes",
                "cols", "rows", "nnz", "imp")


@dataclass
class LPProfile:
    """What the rounding to a schedule (``optimum.upper``) reads of the LP's solution, per datacenter, window
    step and resource (cores, GPUs, GB): the time-weighted busy resources ``busy`` of the LP's optimum, and
    ``price``, the objective's marginal value of one more resource-step there (kg, USD or their weighted sum,
    clipped at 0): the slope of the power bound's own terms at the LP's point, with the servers that hold the
    resource (:func:`marginal_price`). Not the LP's duals: where the idle floor holds P, the dual is 0 (more
    load is free to the LP up to the floor), which the engine's power is not."""

    busy: np.ndarray  # (n_dc, n, 3)
    price: np.ndarray  # (n_dc, n, 3)
    #: per task of the run: the (datacenter, window step) where its class's fluid work puts it (``optimum.follow``;
    #: -1: none), from the first horizon that places it
    site: np.ndarray
    step: np.ndarray


class OptimumError(ValueError):
    """A bad argument, or a window HiGHS could not solve to optimality."""


@dataclass
class OptimumResult:
    """The optimum's bound of one run window. ``value`` is the objective's lower bound (kg CO2 for
    ``carbon``, USD for ``cost``, kg + USD x weight for ``weighted``); the other figures are those of the
    LP's solution (its carbon is the bound when ``objective == "carbon"``, its cost when ``"cost"``; with linked
    rolling horizons the load a horizon runs in a later one's steps is priced there, in ``value`` only)."""

    objective: str
    value: float
    carbon_kg: float  # facility + transfer emissions at the LP solution
    cost_usd: float  # electricity + egress at the LP solution
    energy_kwh: float  # facility energy (bound) at the LP solution
    facility_carbon_kg: float
    transfer_carbon_kg: float
    facility_cost_usd: float
    transfer_cost_usd: float
    transfer_kwh: float
    baseline_kwh: float  # the bound's energy with no work at all: no schedule changes it (included above)
    baseline_carbon_kg: float
    baseline_cost_usd: float
    status: str  # HiGHS model status of every horizon ("Optimal")
    kind: str  # "relaxation" (a bound: see the module docstring; an exact optimum is not offered), or "planning"
    # (``capacity_scale`` < 1: a plan's prices and assignment for the upper end's search, not a bound)
    solve_s: float  # HiGHS time, summed over horizons
    build_s: float  # set-up and LP assembly
    start_utc: str
    start_step: int
    steps: int  # the bound's steps: the window's, and with drain the drain's to the last deadline
    horizon_steps: int
    rolling: bool  # solved as consecutive horizons (linked unless an objective weight is negative)
    n_horizons: int
    n_tasks: int  # tasks with cells (summed over horizons: once each when linked, else once per horizon it meets)
    n_classes: int
    n_cols: int
    n_rows: int
    nnz: int
    unschedulable: int  # tasks that fit no datacenter (left out, as the engine leaves them unscheduled)
    impossible: int  # tasks no datacenter can finish by their deadline (deadline dropped)
    seed: int
    weights: dict = field(default_factory=dict)  # kg and USD weights of the objective
    shape_tol: float = SHAPE_TOL_CUMULATIVE
    formulation: str = FORMULATION  # the LP's task aggregation ("cumulative" or "classes")
    rate_curves: bool = True  # the cumulative curves also limit each member to its largest rate
    options: dict = field(default_factory=dict)  # the run options the window was prepared with
    window_steps: int = 0  # the window's steps (arrivals); steps - window_steps: the drain's
    #: horizons whose LP's solution was read from ``optimum(..., checkpoint=...)`` instead of solved (their solve
    #: seconds are those of the first solve)
    resumed_horizons: int = 0
    capacity_scale: float = 1.0  # each site's capacity in the LP x this (below 1: a planning LP, not a bound)
    #: the LP's busy resources and their marginal prices (``optimum(..., profile=True)``; not in :meth:`to_dict`)
    profile: LPProfile | None = field(default=None, repr=False)

    @property
    def days(self) -> float:
        """The window's days (the drain's steps not included)."""
        return (self.window_steps or self.steps) * E.STEP_S / 86400.0

    def describe(self) -> str:
        how = f"rolling {self.horizon_steps * E.STEP_S / 86400:g}-day horizons" if self.rolling else "one LP"
        what = "lower bound" if self.kind == "relaxation" else "LP, not a bound"
        return (f"{self.kind} {what} ({how}, HiGHS {self.status}, {self.solve_s:.1f} s): "
                f"{self.objective} = {self.value:,.3f}")

    def to_dict(self) -> dict:
        return {f.name: getattr(self, f.name) for f in fields(self) if f.name != "profile"}


def _weights(objective: str, carbon_weight: float, cost_weight: float) -> tuple[float, float]:
    if objective not in OBJECTIVES:
        raise OptimumError(f"objective must be one of {OBJECTIVES}, got {objective!r}")
    if objective == "carbon":
        return 1.0, 0.0
    if objective == "cost":
        return 0.0, 1.0
    w = (float(carbon_weight), float(cost_weight))
    if not all(np.isfinite(x) and x >= 0 for x in w) or w == (0.0, 0.0):
        raise OptimumError(f"weighted objective needs finite weights >= 0, not both 0; got {w}")
    return w


def optimum(scenario, *, seed: int = 0, start=None, days=None, steps=None, objective: str = "carbon",
            carbon_weight: float = 1.0, cost_weight: float = 0.0, horizon_days: float | str | None = HORIZON_DAYS,
            shape_tol: float | None = None, time_steps: int = TIME_STEPS, threads: int = 2, solver: str = "simplex",
            formulation: str = FORMULATION, curve_steps: int = CURVE_STEPS, profile: bool = False,
            idle_floor: bool = True, checkpoint: str | Path | None = None, rate_curves: bool = True,
            capacity_scale: float = 1.0, **options) -> OptimumResult:
    """The offline optimum's lower bound of a run window (same arguments as :func:`sim_core.run`: the
    window, the seed and the run options select the tasks, origins, deadlines and power mode exactly as
    a run does). ``objective``: ``carbon``, ``cost`` or ``weighted`` (``carbon_weight`` per kg CO2 +
    ``cost_weight`` per USD). Windows longer than ``horizon_days`` are solved as rolling horizons
    (``None``: one LP; default ``"auto"``: one LP up to ``ONE_LP_MAX_DAYS`` of bound, 7-day horizons beyond).
    ``formulation``: ``cumulative`` (classes per resource, origin and transfer bucket with cumulative
    release/deadline curves checked every ``curve_steps`` steps) or ``classes`` (also keyed by arrival and
    deadline step, one work row per class). ``shape_tol`` / ``time_steps``: the class key's resolution
    (``optimum.classes``; ``shape_tol`` None: 3.0 for ``cumulative``, 1.0 for ``classes``; ``time_steps`` only
    for ``classes``).
    ``solver``: HiGHS's ``solver`` option (dual simplex by default: 5x faster than its interior point on
    these LPs, measured on a 1-day window of the benchmark bundle, BENCHMARKS.md). ``profile``: keep the
    LP's busy resources and their marginal prices (:class:`LPProfile`, what ``optimum.upper`` rounds to a schedule).
    ``idle_floor``: P >= the engine's own power in the site's least state (:func:`idle_floor_kw`; False: the
    earlier bound, to measure what the floor buys). ``rate_curves`` (``cumulative`` only): the curves also hold
    each member to its largest rate — by the end of a step a member has done at most its rate x the time since its
    arrival, and at least its need less its rate x the time left to its deadline (docs/optimum.md; False: the
    earlier curves, to measure what this buys). ``checkpoint``: a folder where each horizon's LP solution is
    kept under a digest of the LP itself (``optimum.checkpoint``), so that a bound interrupted between horizons (a
    year: hours of LPs) resumes where it stopped, and a bound whose LPs are unchanged (another search, a code edit
    outside the LP) reads them, with the same result as one uninterrupted run. ``capacity_scale``: each site's
    capacity in the LP's busy resources x this; 1 (the default) is the bound, below 1 a planning LP (``kind``
    "planning", not a bound): the upper end's search plans whole tasks on it (``upper.PLAN_HOLD``: the engine holds a
    task's resources to the step boundary after its finish, which the bound's capacity does not count)."""
    t_build = time.perf_counter()
    if not (np.isfinite(capacity_scale) and 0.0 < capacity_scale <= 1.0):
        raise OptimumError(f"capacity_scale must be in (0, 1], got {capacity_scale!r}")
    if formulation not in FORMULATIONS:
        raise OptimumError(f"formulation must be one of {FORMULATIONS}, got {formulation!r}")
    if shape_tol is None:
        shape_tol = SHAPE_TOL_CUMULATIVE if formulation == "cumulative" else SHAPE_TOL
    sc = as_scenario(scenario)
    w_c, w_u = _weights(objective, carbon_weight, cost_weight)
    # the run's own window and work: with drain (the default) the window's tasks, run to their end
    prep = Prepared(sc, seed, start=start, days=days, steps=steps, **options)
    T, C = prep.tasks, prep.ctx
    s0, n_win = prep.s0, prep.n_window
    n = bound_steps(prep)
    opts = prep.options
    managed = prep.managed
    if horizon_days == "auto":
        horizon_days = None if n * E.STEP_S / 86400.0 <= ONE_LP_MAX_DAYS else AUTO_HORIZON_DAYS
    if horizon_days is None:
        h_steps = n
    else:
        if isinstance(horizon_days, str) or not (np.isfinite(horizon_days) and horizon_days > 0):
            raise OptimumError(f"horizon_days must be > 0, None or 'auto', got {horizon_days!r}")
        h_steps = max(1, int(round(horizon_days * 86400 / E.STEP_S)))
    cap = C.cap
    sites = [site_power(sc.params[d], cap[d, 0], cap[d, 1], cap[d, 2], managed) for d in range(sc.n_dc)]
    sl = slice(s0, s0 + n)
    fac = facility_pieces(sc.params, sites, sc.temp_c[:, sl], sc.wetbulb_c[:, sl])
    carbon, price = sc.carbon_g_per_kwh[:, sl], sc.price_usd_per_mwh[:, sl]
    w_kwh = w_c * carbon / 1000.0 + w_u * price / 1000.0  # objective weight per kWh of facility energy
    # a negative weight (negative prices) needs an upper bound of P: the engine's power at full load
    p_upper = np.full(w_kwh.shape, np.inf)
    if (w_kwh < 0).any():
        p_upper = _full_load_kw(sc, sl, managed)
    p_floor = idle_floor_kw(sc, sl, managed, fac) if idle_floor else np.zeros(w_kwh.shape)
    # elastic tasks: at most speedup(max_scale) work per second; at least min_scale / speedup(min_scale)
    # resource-seconds per second of work (scale / speed-up rises with the scale for m <= 1)
    rate = np.maximum(1.0, 1.0 + T.mthr * (T.smax - 1.0))
    rho = np.minimum(1.0, T.smin / (1.0 + T.mthr * (T.smin - 1.0)))
    # with data locality a move ships at least the task's checkpoint (its dataset only to a site without a
    # replica; docs/simulation.md "Data locality"): the least GB keeps the bound a bound
    bw = T.bw - T.ds_gb if opts.locality else T.bw
    tw_all = WindowTasks(arrival=T.arrival, deadline=T.deadline, work=T.duration, rate=rate, rho=rho, smax=T.smax,
                         mthr=T.mthr, cores=T.cores, gpus=T.gpus, mem=T.mem, bw=bw, origin=T.origin)
    usd = np.ascontiguousarray(sc.usd_per_gb, dtype=np.float64)
    # how a task's transfer is shared among its commodities (any split keeps the bound): by its busy power
    energy_w = (np.mean([s.h_bc for s in sites]), np.mean([s.h_bg for s in sites]), np.mean([s.h_bm for s in sites]))
    mean_ci = opts.transfer_emissions == "mean"
    build_s = time.perf_counter() - t_build

    acc = dict(value=0.0, fac_kg=0.0, fac_usd=0.0, kwh=0.0, x_kg=0.0, x_usd=0.0, x_kwh=0.0, solve=0.0, build=build_s,
               tasks=0, classes=0, cols=0, rows=0, nnz=0, imp=0)
    statuses = []
    m = T.arrival.shape[0]
    prof = LPProfile(busy=np.zeros((sc.n_dc, n, 3)), price=np.zeros((sc.n_dc, n, 3)), site=np.full(m, -1, np.int64),
                     step=np.full(m, -1, np.int64)) if profile else None
    # linked rolling horizons (docs/optimum.md "Rolling horizons"): each task belongs to the horizon of its arrival,
    # whose LP runs on to the task's deadline; past its own steps (its tail) it pays the busy resources at the later
    # horizons' duals of their busy-resource rows (a Lagrangian bound), so the later horizons are solved first.
    # With a negative objective weight somewhere (negative prices) the horizons are not linked: each holds every
    # task whose allowed interval meets it, with the work that cannot run outside it
    starts = horizon_starts(n, h_steps)
    ends = starts[1:] + [n]
    linked = len(starts) > 1 and bool((w_kwh >= 0).all())
    k_arr = np.clip(np.floor((T.arrival - C.t0) / E.STEP_S), 0, n - 1).astype(np.int64)
    owner = np.searchsorted(np.asarray(starts), k_arr, side="right") - 1
    with np.errstate(invalid="ignore"):
        last = np.clip(np.ceil((T.deadline - C.t0) / E.STEP_S), 1, n)  # (NaN or inf deadline: n)
    last = np.where(np.isfinite(last), last, n).astype(np.int64)

    dual_b = np.zeros((sc.n_dc, n, 3))  # each step's horizon's duals of its busy-resource rows (linked: a price)

    def solve_horizon(h: int) -> dict:
        """Horizon ``h``'s LP solved: its figures, its duals and, with ``profile``, what the profile keeps of it."""
        t_b = time.perf_counter()
        h0, hn = starts[h], ends[h] - starts[h]
        t0 = C.t0 + E.STEP_S * h0
        if linked:
            sel = np.nonzero(owner == h)[0]
            h_end = max(h0 + hn, int(last[sel].max(initial=0)))
        else:
            sel = np.nonzero((T.arrival < t0 + E.STEP_S * hn) & (T.deadline > t0))[0]  # interval meets it
            h_end = h0 + hn
        tw = WindowTasks(**{k: v[sel] for k, v in vars(tw_all).items()})
        hs = slice(h0, h0 + hn)
        cc = build_classes(tw, cap=cap, delay_s_per_gb=C.delay_s_per_gb, rtt_s=C.rtt_s, usd_per_gb=usd,
                           carbon=np.ascontiguousarray(carbon[:, h0:h_end]), t0=t0, n=h_end - h0,
                           kwh_per_gb=float(opts.transfer_kwh_per_gb), mean_emissions=mean_ci, w_carbon=w_c,
                           w_cost=w_u, shape_tol=shape_tol, time_steps=time_steps,
                           energy_weight=energy_w, cumulative=formulation == "cumulative", rate_curves=rate_curves)
        fac_h = type(fac)(slope=fac.slope[:, hs], icpt=fac.icpt[:, hs], count=fac.count[:, hs],
                          short=fac.short[:, hs], fallback=fac.fallback[:, hs])
        lp = assemble(cc.cells, cc.resources, sites, fac_h, cap * capacity_scale, np.ascontiguousarray(w_kwh[:, hs]),
                      np.ascontiguousarray(p_upper[:, hs]), avail=cc.avail, due=cc.due,
                      curve_steps=curve_steps, battery=None if prep.battery is None else prep.battery.vec,
                      battery_free_start=h0 > 0, speedup=(cc.speedup_cost, cc.scale1),
                      tail_price=dual_b[:, h0 + hn:h_end] if h_end > h0 + hn else None)
        _floor_p(lp, p_floor[:, hs])
        build = time.perf_counter() - t_b
        x, row_dual, obj, status, secs, read = _solve_kept(lp, threads, solver, ck)
        dk = x[lp.dk_base:lp.dk_base + sc.n_dc * hn * N_DK]
        kwh = STEP_H * dk.reshape(sc.n_dc, hn, N_DK)[:, :, V_P]
        if lp.batt_base >= 0:  # grid energy: + charge - discharge (optimum.battery)
            kwh = kwh + STEP_H * battery_net_kw(x, lp.batt_base, sc.n_dc, hn)
        y = x[:lp.n_cells]
        out = dict(
            value=obj, kwh=float(kwh.sum()), fac_kg=float((kwh * carbon[:, hs]).sum() / 1000.0),
            fac_usd=float((kwh * price[:, hs]).sum() / 1000.0), x_kg=float(y @ cc.cells.carbon),
            x_usd=float(y @ cc.cells.usd), x_kwh=float(y @ cc.cells.kwh), solve=secs, build=build, status=status,
            tasks=cc.n_tasks, classes=cc.n_classes, cols=lp.n_col, rows=lp.n_row, nnz=lp.nnz, imp=cc.impossible,
            # duals below 0 are the solver's noise where every weight is >= 0 (more load never lowers the bound)
            dual=np.maximum(row_dual[lp.b_row:lp.b_row + sc.n_dc * hn * 3].reshape(sc.n_dc, hn, 3), 0.0),
            read=read)
        if profile:
            out.update(_profile_part(h0, hn, h_end, t0, sel, tw, cc, y, dk, sites, fac_h, w_kwh[:, hs]))
        return out

    ck = None if checkpoint is None else Checkpoints(checkpoint, error=OptimumError)
    resumed = 0
    for h in (range(len(starts) - 1, -1, -1) if linked else range(len(starts))):
        out = solve_horizon(h)
        resumed += int(out["read"])
        h0, hn = starts[h], ends[h] - starts[h]
        dual_b[:, h0:h0 + hn] = out["dual"]
        if prof is not None:
            _keep_profile_part(prof, h0, hn, out)
        statuses.append(str(out["status"]))
        for k in HORIZON_SUMS:
            acc[k] += out[k]
    base = np.maximum(baseline_kw(sites, fac), p_floor)
    b_kwh = STEP_H * base
    # the drain's steps (a drained run's steps past the window): a run pays a step only while work is left,
    # which every schedule has until the last task's earliest finish (``drain_paid``); past it the LP does not
    # know when the run ends, so there the bound keeps only the power above the least state's (each step's LP
    # power at no load, ``base``, is taken off: a valid bound whether the run still runs at that step or not)
    k0 = max(n_win, drain_paid(T, cap, C.t0, n))
    d_kwh = b_kwh[:, k0:]
    acc["value"] -= float((np.maximum(w_kwh[:, k0:], 0.0) * d_kwh).sum())
    acc["kwh"] -= float(d_kwh.sum())
    acc["fac_kg"] -= float((d_kwh * carbon[:, k0:]).sum() / 1000.0)
    acc["fac_usd"] -= float((d_kwh * price[:, k0:]).sum() / 1000.0)
    b_kwh, carbon_w, price_w = b_kwh[:, :n_win], carbon[:, :n_win], price[:, :n_win]
    status = statuses[0] if len(set(statuses)) == 1 else ",".join(statuses)
    start_utc = (sc.start_utc + dt.timedelta(seconds=float(C.t0))).isoformat()
    return OptimumResult(
        objective=objective, value=acc["value"], carbon_kg=acc["fac_kg"] + acc["x_kg"],
        cost_usd=acc["fac_usd"] + acc["x_usd"], energy_kwh=acc["kwh"], facility_carbon_kg=acc["fac_kg"],
        transfer_carbon_kg=acc["x_kg"], facility_cost_usd=acc["fac_usd"], transfer_cost_usd=acc["x_usd"],
        transfer_kwh=acc["x_kwh"], baseline_kwh=float(b_kwh.sum()),
        baseline_carbon_kg=float((b_kwh * carbon_w).sum() / 1000.0),
        baseline_cost_usd=float((b_kwh * price_w).sum() / 1000.0), status=status,
        kind="relaxation" if capacity_scale == 1.0 else "planning", capacity_scale=float(capacity_scale),
        solve_s=acc["solve"], build_s=acc["build"], start_utc=start_utc, start_step=int(s0), steps=int(n),
        window_steps=int(n_win), horizon_steps=int(h_steps if len(starts) > 1 else n), rolling=len(starts) > 1,
        n_horizons=len(statuses), resumed_horizons=resumed, n_tasks=acc["tasks"],
        n_classes=acc["classes"], n_cols=acc["cols"], n_rows=acc["rows"], nnz=acc["nnz"],
        unschedulable=_unschedulable(T, cap), impossible=acc["imp"], seed=int(prep.seed),
        weights={"per_kg": w_c, "per_usd": w_u}, shape_tol=float(shape_tol), formulation=formulation,
        rate_curves=bool(rate_curves) and formulation == "cumulative", options=opts.public(), profile=prof)


def horizon_starts(n: int, h_steps: int) -> list[int]:
    """The first steps of the rolling horizons of ``h_steps`` over ``n`` steps; a remainder shorter than a horizon
    joins the last whole one (so the drain, which ends the bound's steps, is never a horizon of its own: lightly
    loaded, its duals are 0 where its idle floor holds, and the linked horizon before it would run work there for
    nothing; on the README week, 7-day horizons linked with a 1.26-day last one gave 124,611.7 kg against one LP's
    135,231.6, both before the rate curves)."""
    starts = list(range(0, n, max(int(h_steps), 1)))
    if len(starts) > 1 and n - starts[-1] < h_steps:
        starts.pop()
    return starts


def bound_steps(prep: Prepared) -> int:
    """The steps the bound covers: the window's, and with drain (``prep.n > prep.n_window``) the drain's up to
    the last deadline of the window's tasks (every task's whole work is then inside the bound's steps), capped
    where the run's drain is (``drain_max_days`` or the bundle's end)."""
    n_win, n_cap = prep.n_window, prep.n
    if n_cap == n_win:
        return n_win
    dl = prep.tasks.deadline
    dl = dl[np.isfinite(dl)]
    if dl.size < prep.tasks.deadline.size:
        return n_cap
    last = int(np.ceil((float(dl.max()) - prep.t0) / E.STEP_S)) if dl.size else n_win
    return int(min(n_cap, max(n_win, last)))


def drain_paid(T, cap, t0: float, n: int) -> int:
    """The steps every schedule runs: up to the step in which the last task's earliest finish falls (arrival +
    duration at its largest speed-up, no wait, no transfer), over the tasks that fit a datacenter; a step
    with work running is paid whole by a drained run."""
    fits = ((T.cores[:, None] <= cap[None, :, 0] + E.EPS) & (T.gpus[:, None] <= cap[None, :, 1] + E.EPS)
            & (T.mem[:, None] <= cap[None, :, 2] + E.EPS)).any(axis=1)
    rate = np.maximum(1.0, 1.0 + T.mthr * (T.smax - 1.0))
    with np.errstate(invalid="ignore", over="ignore"):
        fin = (T.arrival + T.duration / rate)[fits & (T.duration > 0)]
    fin = fin[np.isfinite(fin)]
    if fin.size == 0:
        return 0
    return int(min(n, np.ceil((float(fin.max()) - t0) / E.STEP_S)))


def _profile_part(h0: int, hn: int, h_end: int, t0: float, sel: np.ndarray, tw: WindowTasks, cc, y: np.ndarray,
                  dk_flat: np.ndarray, sites, fac, w_kwh: np.ndarray) -> dict:
    """What the LP profile keeps of one horizon's solution (its own steps ``h0 .. h0 + hn``, its cells to
    ``h_end``): its busy resources and their marginal prices in its own steps; ``tail``, its busy resources in
    its tail (a linked horizon's cells past its own steps, in later horizons' steps); and where its classes put
    their members (``optimum.follow``, released from their arrival step; ``t0``: the horizon's first second) for
    its tasks ``sel``: a task follows the class of its GPUs, else of its cores, else of its memory (``step`` from
    ``h0``)."""
    n_dc = w_kwh.shape[0]
    dk = dk_flat.reshape(n_dc, hn, N_DK)
    c = cc.cells
    tail = np.zeros((n_dc, h_end - h0 - hn, 3))
    t = np.flatnonzero(c.step >= hn)
    for r, per in enumerate(cc.resources):
        np.add.at(tail[:, :, r], (c.dc[t], c.step[t] - hn), per[c.task[t]] * y[t])
    req = np.stack([tw.cores, tw.gpus, tw.mem])
    r = np.where(tw.gpus > 0, 1, np.where(tw.cores > 0, 0, 2))
    idx = np.arange(r.shape[0])
    weight = req[r, idx] * tw.rho * tw.work / E.STEP_S
    release = np.maximum(np.floor((tw.arrival - t0) / E.STEP_S), 0).astype(np.int64)
    site, step = follow_cells(cc.member_class[r, idx], release, tw.deadline, weight, c.task, c.dc, c.step, y)
    return dict(busy=dk[:, :, V_BC:V_BM + 1], price=marginal_price(sites, fac, dk, w_kwh), tail=tail, sel=sel,
                site=site, step=step)


def _keep_profile_part(prof: LPProfile, h0: int, hn: int, part: dict) -> None:
    """Store one horizon's :func:`_profile_part` in ``prof``: its own steps' busy resources and prices, its tail
    added to the later horizons' steps (stored before it: linked horizons are solved last first), and the
    placement of its tasks that no horizon stored before placed (linked horizons hold disjoint tasks; unlinked
    ones, solved in order, keep the first placement)."""
    prof.busy[:, h0:h0 + hn] = part["busy"]
    prof.price[:, h0:h0 + hn] = part["price"]
    tail = part["tail"]
    prof.busy[:, h0 + hn:h0 + hn + tail.shape[1]] += tail
    sel, site = part["sel"], part["site"]
    new = (prof.site[sel] < 0) & (site >= 0)
    prof.site[sel[new]] = site[new]
    prof.step[sel[new]] = part["step"][new] + h0


def _floor_p(lp, floor: np.ndarray) -> None:
    """P[d, j] >= floor[d, j] (the idle floor, (n_dc, n) kW): the lower bounds of the LP's P columns."""
    n_dk = floor.size
    lp.col_lower[lp.dk_base + np.arange(n_dk) * N_DK + V_P] = floor.ravel()


def marginal_price(sites, fac, dk: np.ndarray, w_kwh: np.ndarray) -> np.ndarray:
    """(n_dc, n, 3) the objective's marginal value of one more busy core, GPU or GB for one step at the LP's
    point ``dk`` (n_dc, n, N_DK): the slope of the power bound's terms (:func:`power.bound_at`, without the
    idle floor) over 0.1 % of the site's capacity, with managed power the servers that hold it switched on
    too, x 0.25 h x the objective's weight per kWh; clipped at 0."""
    out = np.zeros(dk.shape[:2] + (3,))
    for d, s in enumerate(sites):
        b = [dk[d, :, v] for v in (V_BC, V_BG, V_BM)]
        a = [dk[d, :, V_AC], dk[d, :, V_AG]]
        p0 = bound_at(s, fac.slope[d], fac.icpt[d], *b, *a)[3]
        per = (s.cps, s.gps, s.mps)
        for r in range(3):
            delta = max(1e-3 * s.cap[r], 1e-6)
            b1 = list(b)
            b1[r] = b[r] + delta
            a1 = list(a)
            if s.managed and s.hosted and per[r] > 0:
                k = 1 if r == 1 else 0  # GPUs sit on GPU servers; cores and memory on CPU-only ones
                a1[k] = a[k] + delta / per[r]
            p1 = bound_at(s, fac.slope[d], fac.icpt[d], *b1, *a1)[3]
            out[d, :, r] = np.maximum(w_kwh[d] * STEP_H * (p1 - p0) / delta, 0.0)
    return out


def _unschedulable(T, cap) -> int:
    """Tasks of the window that fit no datacenter."""
    fits = ((T.cores[:, None] <= cap[None, :, 0] + E.EPS) & (T.gpus[:, None] <= cap[None, :, 1] + E.EPS)
            & (T.mem[:, None] <= cap[None, :, 2] + E.EPS))
    return int((~fits.any(axis=1)).sum())


def baseline_kw(sites, fac) -> np.ndarray:
    """(n_dc, n) the power bound with nothing busy and only the spare servers on: the part of the bound
    that no schedule changes (kW)."""
    out = np.zeros(fac.slope.shape[:2])
    for d, s in enumerate(sites):
        out[d] = bound_at(s, fac.slope[d], fac.icpt[d], 0.0, 0.0, 0.0, s.spare_c, s.spare_g)[3]
    return out


def _servers_on(sc, n: int, managed: bool, spare_only: bool) -> np.ndarray | None:
    """(4, n_dc, n) server states for ``physics.compute`` (on, on, waking, waking: CPU-only and GPU servers):
    every server on, or only the spare pool (``spare_only``); None with ``power="always_on"``."""
    from ..physics import server_layout

    if not managed:
        return None
    srv = np.zeros((4, sc.n_dc, n))
    for d in range(sc.n_dc):
        ns, ng, _, _ = server_layout(sc.params[d], float(sc.cap_cores[d]), float(sc.cap_gpus[d]),
                                     float(sc.cap_mem_gb[d]))
        spare = float(sc.params[d][P_SPARE_MIN]) if spare_only else np.inf
        srv[0, d], srv[1, d] = min(spare, ns - ng), min(spare, ng)
    return srv


def idle_floor_kw(sc, sl, managed: bool, fac) -> np.ndarray:
    """(n_dc, n) the engine's own total power (``physics.compute``) in the least state a datacenter can be in
    at a step: nothing busy and, with managed power, only the spare pool on (the engine never switches it
    off), every other server asleep; every server on with ``power="always_on"``. The engine's power is
    non-decreasing in the busy resources and the servers on or waking (docs/optimum.md "The idle floor"),
    so every state of that step draws at least this; a step whose facility tail is not non-decreasing on
    the bound's grid (``fac.fallback``) gets no floor. x (1 - 1e-9): a hair below, for rounding."""
    from ..physics import compute

    n = sl.stop - sl.start
    zero = np.zeros((sc.n_dc, n))
    out = compute(sc.params, sc.cap_cores, sc.cap_gpus, sc.cap_mem_gb, zero, zero, zero, sc.temp_c[:, sl],
                  sc.wetbulb_c[:, sl], servers=_servers_on(sc, n, managed, spare_only=True))
    return np.where(fac.fallback, 0.0, (1.0 - 1e-9) * out["total_kw"])


def _full_load_kw(sc, sl, managed: bool) -> np.ndarray:
    """(n_dc, n) the engine's total power with every resource busy and every server on, x 1.05: the P
    upper bound where an objective weight is negative (negative prices)."""
    from ..physics import compute

    srv = _servers_on(sc, sl.stop - sl.start, managed, spare_only=False)
    out = compute(sc.params, sc.cap_cores, sc.cap_gpus, sc.cap_mem_gb, sc.cap_cores[:, None] + 0 * sc.temp_c[:, sl],
                  sc.cap_gpus[:, None], sc.cap_mem_gb[:, None], sc.temp_c[:, sl], sc.wetbulb_c[:, sl], servers=srv)
    return 1.05 * out["total_kw"]


def _solve_kept(lp, threads: int, solver: str, ck: Checkpoints | None):
    """:func:`_solve`'s outcome and whether it was read from the checkpoint ``ck``: an LP solved before (the same
    arrays, solver, threads and HiGHS: ``checkpoint.lp_key``) is read, any other solved and written there."""
    if ck is None:
        return (*_solve(lp, threads, solver), False)
    key = lp_key(lp, solver, threads)
    kept = ck.load(key, lp.n_col, lp.n_row)
    if kept is not None:
        return (*(kept[k] for k in SOLUTION_KEYS), True)
    out = _solve(lp, threads, solver)
    ck.save(key, dict(zip(SOLUTION_KEYS, out, strict=True)))
    return (*out, False)


def _solve(lp, threads: int, solver: str = "choose"):
    """Solve with HiGHS; returns (column values, row duals, objective, status string, seconds)."""
    h = highspy.Highs()
    h.setOptionValue("output_flag", False)
    h.setOptionValue("threads", int(threads))
    h.setOptionValue("solver", solver)
    m = highspy.HighsLp()
    m.num_col_, m.num_row_ = int(lp.n_col), int(lp.n_row)
    m.col_cost_, m.col_lower_, m.col_upper_ = lp.col_cost, lp.col_lower, lp.col_upper
    m.row_lower_, m.row_upper_ = lp.row_lower, lp.row_upper
    m.a_matrix_.format_ = highspy.MatrixFormat.kColwise
    m.a_matrix_.start_, m.a_matrix_.index_, m.a_matrix_.value_ = lp.start, lp.index, lp.value
    h.passModel(m)
    t = time.perf_counter()
    h.run()
    secs = time.perf_counter() - t
    st = h.getModelStatus()
    status = h.modelStatusToString(st)
    if st != highspy.HighsModelStatus.kOptimal:
        raise OptimumError(f"HiGHS did not solve the window's LP to optimality: {status}")
    sol = h.getSolution()
    return (np.asarray(sol.col_value), np.asarray(sol.row_dual), float(h.getInfo().objective_function_value), status,
            secs)


__all__ = ["LPProfile", "OptimumResult", "OptimumError", "optimum", "OBJECTIVES", "baseline_kw",
           "V_BC", "V_BG", "V_BM", "V_AC", "V_AG"]
