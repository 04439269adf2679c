"""RunResult: per-step-and-DC metrics, per-task outcomes, transfers and totals."""

from __future__ import annotations

import contextlib
import functools
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import polars as pl
from numba import njit

from gridshift.atomic import atomic_file

from . import battery as B
from . import engine as E
from .drain import WORK_TERMS, work_terms, work_totals
from .engine.cache import digest
from .physics import OUT_NAMES, STEP_HOURS, priced
from .physics import compute as physics_compute
from .transfer import transfer_one

STEP_S = E.STEP_S
#: engine.ST_* codes, in order ("paused": a flexible task paused by a control, not resumed by the end)
STATUS_NAMES = ["not_arrived", "pending", "in_transit", "queued", "started", "unschedulable", "paused"]


#: subpackages of ``sim_core`` a run never imports (``tests/unit/sim_core/test_version.py`` walks the import graph
#: from ``sim_core``): the offline optimum's search, versioned apart by ``sim_core.optimum.optimum_version``
RUN_EXCLUDES = ("optimum",)


def _sources(root: Path, pkgs: tuple[str, ...], exclude: tuple[str, ...] = ()) -> list[Path]:
    """The ``.py`` files of the packages ``pkgs`` below ``root``, without the subpackages ``exclude`` (paths
    relative to ``root``), sorted."""
    skip = tuple(root / e for e in exclude)
    return sorted(p for pkg in pkgs for p in (root / pkg).rglob("*.py")
                  if "__pycache__" not in p.parts and not any(p.is_relative_to(s) for s in skip))


@functools.cache
def gridshift_version() -> str:
    """The version a run's results come from, recorded with every run and part of its run key: the installed
    gridshift version plus a digest of the code a run depends on (every module of ``sim_core`` but the offline
    optimum's, :data:`RUN_EXCLUDES`, and of the ground floor ``gridshift``), as a PEP 440 local label, e.g.
    ``0.1.0+sim.3f9a1c2e4b7d``. So a stored run is reused only by the code that made it: an edit that changes a
    result (a policy, a charge, a parameter) is a new version, without anyone remembering to bump one; an edit
    of the optimum's search, which no run imports, is not. (A bundle records the plain package version: its bytes
    do not depend on this code.)"""
    try:
        from gridshift import __version__  # type: ignore[attr-defined]

        base = str(__version__)
    except (ImportError, AttributeError):
        base = "0+unknown"
    root = Path(__file__).resolve().parents[1]
    files = _sources(root, ("sim_core", "gridshift"), tuple(f"sim_core/{e}" for e in RUN_EXCLUDES))
    return f"{base}+sim.{digest(files, root)[:12]}"


@functools.cache
def optimum_version() -> str:
    """The version of results that use the offline optimum (a bracket, a leaderboard row): the run version
    (:func:`gridshift_version`) plus a digest of ``sim_core.optimum``, e.g. ``0.1.0+sim.3f9a1c2e4b7d.opt.
    5b0e2d7a9c41``; an improvement of the search changes it and leaves stored runs valid."""
    root = Path(__file__).resolve().parents[1]
    files = _sources(root, tuple(f"sim_core/{e}" for e in RUN_EXCLUDES))
    return f"{gridshift_version()}.opt.{digest(files, root)[:12]}"


@dataclass
class RunResult:
    """One run's results. ``tasks`` and ``transfers`` (one row per task / remote assignment, about
    180 MB for a 1.3 M-task year) are built on first access, so a sweep that reads only ``totals``
    and ``steps`` never pays for them."""

    steps: pl.DataFrame
    totals: dict
    seed: int
    bundle_id: str
    gridshift_version: str
    policy: str
    options: dict = field(default_factory=dict)
    task_frames: Callable[[], tuple[pl.DataFrame, pl.DataFrame]] | tuple[pl.DataFrame, pl.DataFrame] = field(
        default=(pl.DataFrame(), pl.DataFrame()), repr=False, compare=False)
    #: one row per site over the window: IT/total kWh, water, PUE, WUE, free-cooling hours (``site_summary``)
    sites: pl.DataFrame = field(default_factory=pl.DataFrame, repr=False, compare=False)

    def _frames(self) -> tuple[pl.DataFrame, pl.DataFrame]:
        if callable(self.task_frames):
            self.task_frames = self.task_frames()
        return self.task_frames

    @property
    def tasks(self) -> pl.DataFrame:
        """Per-task outcomes (window tasks in arrival order)."""
        return self._frames()[0]

    @property
    def transfers(self) -> pl.DataFrame:
        """One row per remote assignment: bytes, delay, cost, energy, emissions."""
        return self._frames()[1]

    def to_parquet(self, out_dir: str | Path) -> Path:
        """Write steps/tasks/transfers as Parquet and totals (with run metadata) as ``run.json``, all or nothing:
        each file is written to a temporary name beside its own (``gridshift.atomic.atomic_file``) and renamed into
        place only once all four are written, ``run.json`` last; a write that fails leaves the folder as it was."""
        d = Path(out_dir)
        d.mkdir(parents=True, exist_ok=True)
        meta = {"seed": self.seed, "bundle_id": self.bundle_id, "gridshift_version": self.gridshift_version,
                "policy": self.policy, "options": self.options, "totals": self.totals,
                "sites": self.sites.to_dicts()}
        with contextlib.ExitStack() as files:  # (renamed in the reverse order of entering: run.json last)
            tmp = {name: files.enter_context(atomic_file(d / name))
                   for name in ("run.json", "transfers.parquet", "tasks.parquet", "steps.parquet")}
            self.steps.write_parquet(tmp["steps.parquet"])
            self.tasks.write_parquet(tmp["tasks.parquet"])
            self.transfers.write_parquet(tmp["transfers.parquet"])
            tmp["run.json"].write_text(json.dumps(meta, indent=2, sort_keys=True, default=str))
        return d


#: times further than this from the bundle start (about 31,700 years) are reported as null
MAX_ABS_TIME_S = 1e12


def _ts(t0_us: int, sec: np.ndarray) -> pl.Series:
    """Seconds since the bundle start -> Datetime(us, UTC). NaN, infinite or beyond
    ``MAX_ABS_TIME_S`` (e.g. the finish of a task of infinite duration) -> null."""
    sec = np.where(np.abs(sec) < MAX_ABS_TIME_S, sec, np.nan)
    us = pl.Series(np.round(sec * 1e6)).fill_nan(None).cast(pl.Int64) + t0_us
    return us.cast(pl.Datetime("us", "UTC"))


def _enum(codes: np.ndarray, dtype: pl.Enum) -> pl.Series:
    """Category codes (negative = missing) -> an Enum series, without a string per row."""
    cats = pl.Series(dtype.categories.to_list(), dtype=dtype)
    idx = pl.Series(codes.astype(np.int64, copy=False))
    return cats.gather(idx.set(idx < 0, None) if (codes < 0).any() else idx)


def effectiveness(num, den, zero_value: float):
    """PUE/WUE-style ratio ``num / den`` (arrays or scalars), never NaN: where the IT energy ``den`` is 0
    the ratio is ``zero_value`` if ``num`` is 0 too (nothing drew power or water) and +inf otherwise
    (overhead with no IT energy). A zero-IT step has weight 0 in every IT-energy-weighted aggregate, so
    sum(ratio * it) / sum(it) equals sum(num) / sum(den) whenever sum(den) > 0."""
    num = np.asarray(num, dtype=np.float64)
    den = np.asarray(den, dtype=np.float64)
    pos = den > 0
    out = np.where(num == 0, zero_value, np.inf)
    out = np.where(pos, num / np.where(pos, den, 1.0), out)
    return out if out.ndim else float(out)


#: rows of the per-(dc, step) counter block filled by ``_task_counters``
COUNTERS = ("arrived", "unschedulable", "assigned", "forced", "started", "sla_violations", "transfers_out",
            "finished")
FLOWS = ("transfer_cost_usd", "transfer_kwh", "transfer_carbon_kg")


@njit(cache=True, nogil=True, inline="always")
def _floor_div(x, step):
    """``x // step`` for a float ``x`` and a ``step`` > 0, exactly as Python's (and Numba's) floor division gives
    it, at the cost of a division: Numba's ``//`` on floats goes through ``fmod`` (~30 ns, a quarter of a
    year's result building). ``floor(x / step)`` exceeds the exact floor only where the rounded quotient
    reaches the next integer; ``q * step`` is then exact (an integer below 2**53) and larger than ``x``,
    and one is taken off. NaN and infinities come out non-finite, as from ``//``."""
    q = np.floor(x / step)
    if q * step > x:
        q -= 1.0
    return q


@njit(cache=True, nogil=True, inline="always")
def _step_in(x, n):
    """int(x) if the whole number x is a step of the window (0 <= x < n), else -1 (also for NaN
    and infinities, which are never converted: converting them to an integer is undefined)."""
    return int(x) if 0.0 <= x < n else -1


@njit(cache=True, nogil=True)
def _task_counters(origin, dest, status, forced, arrival, decision, start, fin, bw, usd_per_gb,
                   carbon, kwh_per_gb, mean_ci, t0, s0, n, cnt, flow):
    """One pass over the tasks: per-(dc, step) event counts and transfer flows (added to ``cnt``, ``flow``, in task
    order: a run's tasks passed in consecutive parts give its one pass's sums), per-task transfer
    cost/energy/emissions and finish times.

    Arrivals count at the origin, decisions/starts/finishes at the destination, transfers at the
    origin in the decision step, each priced by ``transfer.transfer_one``. A start is a task's first
    start; its finish is the end of its last run segment (``fin``; NaN while a flexible task is paused
    or waiting to resume). SLA violations are counted by the engine (``State.m_viol``). Step indices come
    from task times (data): each is range-checked as a float by :func:`_step_in` before it becomes an
    integer, so a non-finite or huge time (a task that never finishes) counts nowhere.
    """
    n_all = carbon.shape[1]
    m = origin.shape[0]
    x_cost = np.zeros(m)
    x_kwh = np.zeros(m)
    x_kg = np.zeros(m)
    finish = np.full(m, np.nan)
    for i in range(m):
        o = origin[i]
        d = dest[i]
        ja = _step_in(_floor_div(arrival[i] - t0, STEP_S), n)
        if ja >= 0:
            cnt[0, o, ja] += 1
            if status[i] == E.ST_UNSCHEDULABLE:
                cnt[1, o, ja] += 1
        if d < 0 or not np.isfinite(decision[i]):
            continue
        xd = _floor_div(decision[i] - t0, STEP_S)
        jd = _step_in(xd, n)
        if jd >= 0:
            cnt[2, d, jd] += 1
            if forced[i]:
                cnt[3, d, jd] += 1
        if d != o:
            # signal step of the decision, clamped to the bundle (as transfer.step_transfers_sla)
            k = 0 if not xd + s0 > 0.0 else (n_all - 1 if xd + s0 >= n_all - 1 else int(xd) + s0)
            x_cost[i], x_kwh[i], x_kg[i] = transfer_one(bw[i], usd_per_gb[o, d], kwh_per_gb, carbon[o, k],
                                                        carbon[d, k], mean_ci)
            if 0 <= jd < n:
                cnt[6, o, jd] += 1
                flow[0, o, jd] += x_cost[i]
                flow[1, o, jd] += x_kwh[i]
                flow[2, o, jd] += x_kg[i]
        if start[i] != start[i]:  # never started (NaN)
            continue
        f = fin[i]
        finish[i] = f
        js = _step_in(_floor_div(start[i] - t0, STEP_S), n)
        if js >= 0:
            cnt[4, d, js] += 1
        jf = _step_in(np.ceil((f - t0) / STEP_S) - 1, n)
        if jf >= 0:
            cnt[7, d, jf] += 1
    return x_cost, x_kwh, x_kg, finish


#: the per-task counts of :func:`_task_tallies`, in the order it returns them (keys of ``RunResult.totals``)
TALLIES = ("tasks_started", "tasks_completed", "tasks_unschedulable", "tasks_pending_at_end", "tasks_queued_at_end",
           "tasks_paused_at_end", "tasks_resuming_at_end", "tasks_in_transit_at_end", "tasks_remote",
           "sla_violations", "n_waits")


@njit(cache=True, nogil=True)
def _task_tallies(status, dest, origin, start, arrival, finish, violated, t_end):
    """One pass over the tasks: the counts of :data:`TALLIES` (a task has started when its first start is not
    NaN; ``n_waits`` counts the started tasks whose wait is not NaN) and each task's wait with 0.0 for the rest,
    the array ``np.nanmean`` sums (the caller sums it with numpy: the same pairwise sum, the same mean); a
    dozen numpy passes over a year's 1.3 M tasks before."""
    m = status.shape[0]
    c = np.zeros(len(TALLIES), np.int64)
    wait = np.zeros(m)
    for i in range(m):
        st = status[i]
        started = start[i] == start[i]
        if started:
            c[0] += 1
            if finish[i] <= t_end:
                c[1] += 1
            w = start[i] - arrival[i]
            if w == w:
                wait[i] = w
                c[10] += 1
        if st == E.ST_UNSCHEDULABLE:
            c[2] += 1
        elif st == E.ST_PENDING:
            c[3] += 1
        elif st == E.ST_QUEUED:
            c[6 if started else 4] += 1
        elif st == E.ST_PAUSED:
            c[5] += 1
        elif st == E.ST_TRANSIT:
            c[7] += 1
        if dest[i] >= 0 and dest[i] != origin[i]:
            c[8] += 1
        if violated[i] != 0:
            c[9] += 1
    return c, wait


def flex_task_state(cols, finish: np.ndarray) -> dict[str, np.ndarray]:
    """Per window task: scale at the end, pauses, resumes (forced ones included), rescales, and the
    seconds it ran (booked, checkpoint overheads included; NaN if it never started). Without controls
    (or without flexible tasks) every task ran once at scale 1 for its duration. ``cols``: the run's per-task
    columns (``sim_core.chunks``)."""
    m = cols.n
    start = cols.whole("start")
    if cols.flex_per_task and m:
        nseg = cols.whole("nseg").astype(np.int64)
        nrescale = cols.whole("nrescale")
        return {"scale": cols.whole("scale").copy(), "n_pauses": cols.whole("npause").astype(np.int64),
                "n_resumes": np.maximum(nseg - 1 - nrescale, 0), "n_rescales": nrescale.astype(np.int64),
                "run_s": np.where(nseg > 0, cols.whole("run_s"), finish - start)}
    zeros = np.zeros(m, np.int64)
    return {"scale": np.ones(m), "n_pauses": zeros, "n_resumes": zeros, "n_rescales": zeros,
            "run_s": finish - start}


def site_summary(locations, ph: dict) -> pl.DataFrame:
    """One row per site over the window, from the physics outputs (``physics.compute``'s dict of
    (n_dc, n) arrays): IT and total kWh, water, PUE and WUE (IT-energy weighted: sums, then the ratio),
    the hours with the chiller off, outside air or the water-side economizer carrying all of the cooling load
    (``free_cooling_h``), an economizer carrying part of it (``partial_free_cooling_h``), outside air carrying
    some or all (``outside_air_h``), and the hours a hybrid cooler's adiabatic pads were wetted
    (``adiabatic_h``, 0 for any other heat rejection)."""
    it = ph["it_kw"].sum(axis=1) * STEP_HOURS
    total = ph["total_kw"].sum(axis=1) * STEP_HOURS
    water = ph["water_l"].sum(axis=1)
    f, a = ph["econ_frac"], ph["air_econ_frac"]
    full = (f >= 1.0) | (a >= 1.0)
    return pl.DataFrame({
        "location": [str(loc) for loc in locations],
        "it_kwh": it, "total_kwh": total, "water_l": water,
        "pue": effectiveness(total, it, 1.0), "wue_l_per_kwh": effectiveness(water, it, 0.0),
        "free_cooling_h": full.sum(axis=1) * STEP_HOURS,
        "partial_free_cooling_h": (~full & ((f > 0.0) | (a > 0.0))).sum(axis=1) * STEP_HOURS,
        "outside_air_h": (a > 0.0).sum(axis=1) * STEP_HOURS,
        "adiabatic_h": (ph["adiabatic_on"] > 0.5).sum(axis=1) * STEP_HOURS,
    })


def build_result(prep, policy: str, *, lazy_tasks: bool = False) -> RunResult:
    """Results of a finished (or paused) run. ``lazy_tasks``: build the per-task frames on first
    access; only for a ``prep`` that will not step any further (their arrays are read then)."""
    sc = prep.scenario
    S = prep.state
    n, s0 = prep.n_out, prep.s0
    ks = slice(s0, s0 + n)

    # ---------------------------------------------------------------- physics per (dc, step)
    # (the engine stores per-step arrays step-major, engine.steps_major: C-ordered copies for the physics;
    # a drained run's arrays are cut where its work ended, sim_core.drain)
    busy = tuple(np.ascontiguousarray(np.maximum(S.part[r][:, :n], 0.0)) for r in range(3))
    srv = prep.servers()
    ph = physics_compute(sc.params, sc.cap_cores, sc.cap_gpus, sc.cap_mem_gb, *busy,
                         sc.temp_c[:, ks], sc.wetbulb_c[:, ks],
                         servers=None if srv is None else np.ascontiguousarray(srv))

    # ---------------------------------------------------------------- per-task events and transfers
    cols = prep.columns()
    cnt, flow, tally, der = _task_passes(prep, cols, n)
    cnt[5] = S.m_viol[:, :n]  # violations decided in each step, net (a pause withdraws one decided at the start)
    # the batteries (sim_core.battery): grid energy = facility energy + charge - discharge
    bat = None if prep.battery is None else B.apply(prep.battery, ph["total_kw"])
    steps = _steps_frame(prep, ph, busy, cnt, flow, bat)

    def task_frames() -> tuple[pl.DataFrame, pl.DataFrame]:
        return _task_frames(prep, cols, der)

    totals = _totals(prep, ph, steps, tally, der)
    if bat is not None:
        totals.update(battery_totals(prep.battery.params, bat))
    return RunResult(steps=steps, task_frames=task_frames if lazy_tasks else task_frames(), totals=totals,
                     sites=site_summary(sc.locations, ph),
                     seed=prep.seed, bundle_id=sc.bundle_id, gridshift_version=gridshift_version(), policy=policy,
                     options={**prep.options.public(), "start_step": s0, "steps": prep.n_window})


#: the per-task columns the result passes derive (:func:`_task_passes`): transfers, finish, wait, work terms
XFER = ("transfer_cost_usd", "transfer_kwh", "transfer_carbon_kg")


class TaskFold:
    """The per-task passes of a run (:func:`_task_counters`, :func:`_task_tallies`, ``drain.work_terms``) over its
    tasks part by part: the per-(dc, step) counters and flows over ``n_steps`` steps, the tallies, and the derived
    per-task columns (:data:`XFER`, ``finish``, ``wait``, ``drain.WORK_TERMS``) added to ``der`` (kept per task,
    :class:`sim_core.chunks.Derived`, or folded into their sums, :class:`sim_core.chunks.Sums`)."""

    def __init__(self, prep, n_steps: int, der):
        self.prep, self.der = prep, der
        n_dc = prep.scenario.n_dc
        self.cnt = np.zeros((len(COUNTERS), n_dc, n_steps), np.int64)
        self.flow = np.zeros((len(FLOWS), n_dc, n_steps))
        self.tally = np.zeros(len(TALLIES), np.int64)

    def add(self, c, n: int, flex_per_task: bool) -> None:
        """Pass the tasks of columns ``c`` (a mapping of the per-task fields) for a run whose results cover ``n``
        steps (at most the fold's: an event past ``n`` counts nowhere)."""
        prep = self.prep
        sc, C, opts = prep.scenario, prep.ctx, prep.options
        usd, kwh_gb, mean = sc.usd_per_gb, float(opts.transfer_kwh_per_gb), opts.transfer_emissions == "mean"
        x_cost, x_kwh, x_kg, finish = _task_counters(
            c["origin"], c["dest"], c["status"], c["forced"], c["arrival"], c["decision"], c["start"], c["fin"],
            c["gb"], usd, sc.carbon_g_per_kwh, kwh_gb, mean, float(C.t0), prep.s0, n, self.cnt, self.flow)
        k, wait = _task_tallies(c["status"], c["dest"], c["origin"], c["start"], c["arrival"], finish, c["violated"],
                                C.t0 + n * float(sc.step_s))
        self.tally += k
        rem_p = c["rem"] if flex_per_task else c["duration"]  # (the remainders are per task only with controls)
        terms = work_terms(c["status"], c["start"], finish, rem_p, c["duration"], c["cores"], c["gpus"],
                           C.t0 + n * E.STEP_S)
        for name, v in (*zip(XFER, (x_cost, x_kwh, x_kg), strict=True), ("finish", finish), ("wait", wait),
                        *terms.items()):
            self.der.add(name, v)


def _task_passes(prep, cols, n: int):
    """The per-task passes over the run's tasks, part by part in task order (``cols.parts()``: one part for a run
    whose arrays held its window, sim_core.chunks; a run that kept no per-task results folded them as its tasks
    left, ``cols.fold``): the per-(dc, step) counters and flows, the tallies, and the derived per-task columns."""
    fold = getattr(cols, "fold", None)
    if fold is None:
        fold = TaskFold(prep, n, cols.derived())
        for lo, hi in cols.parts():
            fold.add(cols.part(lo, hi), n, cols.flex_per_task)
    return (np.ascontiguousarray(fold.cnt[:, :, :n]), np.ascontiguousarray(fold.flow[:, :, :n]), fold.tally,
            fold.der)


def battery_totals(params, bat: dict) -> dict:
    """The run's battery totals: energy in, out, lost, grid energy, and the wear of what was discharged
    (``sim_core.battery.wear``: reported beside cost and carbon, not in them)."""
    t = {name: float(bat[name].sum()) for name in B.OUT_NAMES if name != "battery_soc_kwh"}
    t["battery_soc_end_kwh"] = float(bat["battery_soc_kwh"][:, -1].sum())
    t["battery_degradation_usd"], t["battery_embodied_carbon_kg"] = B.wear(params, t["battery_discharge_kwh"])
    return t


def _steps_frame(prep, ph: dict, busy: tuple, cnt, flow, bat: dict | None = None) -> pl.DataFrame:
    """The per-step frame: one row per (datacenter, step), datacenter-major; with batteries, their columns and
    cost and carbon of the grid energy."""
    sc, S = prep.scenario, prep.state
    n_dc, n, s0 = sc.n_dc, prep.n_out, prep.s0
    ks = slice(s0, s0 + n)
    busy_c, busy_g, busy_m = busy
    carbon = sc.carbon_g_per_kwh[:, ks]
    price = sc.price_usd_per_mwh[:, ks]
    it_kwh = ph["it_kw"] * STEP_HOURS
    total_kwh = ph["total_kw"] * STEP_HOURS

    # ---------------------------------------------------------------- steps frame (dc-major rows)
    def flat(a):
        return np.ascontiguousarray(a).reshape(-1)

    step_idx = np.tile(np.arange(s0, s0 + n, dtype=np.int32), n_dc)
    times = sc.step_times()[ks]
    loc_enum = pl.Enum(sc.locations)
    cols: dict[str, object] = {
        "step": step_idx,
        "ts_utc": pl.Series(np.tile(times, n_dc)).dt.replace_time_zone("UTC"),
        "location": _enum(np.repeat(np.arange(n_dc), n), loc_enum),
        "dc": np.repeat(np.arange(n_dc, dtype=np.int16), n),
        "local_hour": flat(sc.local_hour[:, ks]),
        "carbon_g_per_kwh": flat(carbon), "price_usd_per_mwh": flat(price),
        "temp_c": flat(sc.temp_c[:, ks]), "wetbulb_c": flat(sc.wetbulb_c[:, ks]),
        "busy_cores": flat(busy_c), "busy_gpus": flat(busy_g), "busy_mem_gb": flat(busy_m),
        "cpu_util": flat(busy_c / np.where(sc.cap_cores > 0, sc.cap_cores, 1.0)[:, None]),
        "gpu_util": flat(busy_g / np.where(sc.cap_gpus > 0, sc.cap_gpus, 1.0)[:, None]),
        "mem_util": flat(busy_m / np.where(sc.cap_mem_gb > 0, sc.cap_mem_gb, 1.0)[:, None]),
    }
    for name in OUT_NAMES:
        cols[name] = flat(ph[name])
    cols["pue"] = flat(effectiveness(ph["total_kw"], ph["it_kw"], 1.0))
    cols["it_kwh"] = flat(it_kwh)
    cols["total_kwh"] = flat(total_kwh)
    grid_kwh = total_kwh if bat is None else bat["grid_kwh"]
    cols["cost_usd"] = flat(priced(grid_kwh, price))
    cols["carbon_kg"] = flat(priced(grid_kwh, carbon))
    cols["wue_l_per_kwh"] = flat(effectiveness(ph["water_l"], it_kwh, 0.0))
    cols["unmet_cooling_kwh"] = flat(ph["unmet_cooling_kw"] * STEP_HOURS)
    for name in ("idle", "sleep", "wake"):  # IT energy of capacity on but unused, asleep, waking
        cols[f"it_{name}_kwh"] = flat(ph[f"it_{name}_kw"] * STEP_HOURS)
    counters = dict(zip(COUNTERS, cnt, strict=True))
    ints = {
        **{k: counters[k] for k in ("arrived", "unschedulable", "assigned", "forced", "started", "finished")},
        "running": S.run_part[:, :n], "queue_len": S.m_queue[:, :n], "in_transit": S.m_transit[:, :n],
        "deferred": S.m_pending[:, :n], "paused": S.m_paused[:, :n],
        "sla_violations": counters["sla_violations"], "transfers_out": counters["transfers_out"],
    }
    for k, v in ints.items():
        cols[k] = flat(v).astype(np.int64)
    for k, v in zip(FLOWS, flow, strict=True):
        cols[k] = flat(v)
    if bat is not None:
        for name in B.OUT_NAMES:
            cols[name] = flat(bat[name])
    if prep.options.drain:  # the steps past the window's end (no arrivals; sim_core.drain)
        cols["draining"] = np.tile(np.arange(n) >= prep.n_window, n_dc)
    return pl.DataFrame(cols)



def _task_frames(prep, cols, der) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The per-task frame and the transfers frame (one row per task sent away from its origin), from the run's
    per-task columns ``cols`` and those the result passes derived ``der``."""
    sc, w = prep.scenario, cols.whole
    origin, dest, status = w("origin"), w("dest"), w("status")
    xfer_cost, xfer_kwh, xfer_kg = (der.whole(x) for x in XFER)
    finish = der.whole("finish")
    start, arrival = w("start"), w("arrival")
    t0_us = int(sc.start_utc.timestamp()) * 1_000_000
    loc_enum = pl.Enum(sc.locations)
    started = ~np.isnan(start)  # started at least once (a paused task has started)
    remote = (dest >= 0) & (dest != origin)
    violated = w("violated").astype(bool)
    forced_m = w("forced").astype(bool)
    # ---------------------------------------------------------------- tasks frame
    tid = w("task_id")
    flex = flex_task_state(cols, finish)
    tasks = pl.DataFrame({
        "task_id": tid,
        "origin": _enum(origin, loc_enum),
        "dest": _enum(dest, loc_enum),
        "status": _enum(status, pl.Enum(STATUS_NAMES)),
        "arrival_ts_utc": _ts(t0_us, arrival),
        "decision_ts_utc": _ts(t0_us, w("decision")),
        "ready_ts_utc": _ts(t0_us, w("ready")),
        "start_ts_utc": _ts(t0_us, start),
        "finish_ts_utc": _ts(t0_us, finish),
        "deadline_ts_utc": _ts(t0_us, w("deadline")),
        "duration_s": w("duration"),
        "wait_s": np.where(started, start - arrival, np.nan),
        "transit_delay_s": w("delay"),
        "violated": violated,
        "forced": forced_m,
        "remote": remote,
        "transfer_cost_usd": xfer_cost,
        # flexibility: attributes, and what the controls did (docs/simulation.md "Flexible tasks")
        "max_delay_s": w("max_delay"),
        "interruptible": w("interruptible"),
        "elastic": (w("smin") < 1.0) | (w("smax") > 1.0),
        "scale": flex["scale"],
        "n_pauses": flex["n_pauses"],
        "n_resumes": flex["n_resumes"],
        "n_rescales": flex["n_rescales"],
        "run_s": flex["run_s"],
    }).with_columns(pl.col("wait_s").fill_nan(None), pl.col("run_s").fill_nan(None))

    # ---------------------------------------------------------------- transfers frame
    rm = np.nonzero(remote)[0]
    transfers = pl.DataFrame({
        "task_id": tid[rm],
        "src_location": _enum(origin[rm], loc_enum),
        "dst_location": _enum(dest[rm], loc_enum),
        "decision_ts_utc": _ts(t0_us, w("decision")[rm]),
        "bandwidth_gb": w("gb")[rm],  # GB moved: the task's size less a dataset the destination held
        "delay_s": w("delay")[rm],
        "cost_usd": xfer_cost[rm],
        "energy_kwh": xfer_kwh[rm],
        "carbon_kg": xfer_kg[rm],
    })
    return tasks, transfers



def _totals(prep, ph: dict, steps: pl.DataFrame, tally_counts: np.ndarray, der) -> dict:
    """The run's totals (``RunResult.totals``)."""
    S = prep.state
    n, n_dc = prep.n_out, prep.scenario.n_dc
    it_kwh = ph["it_kw"] * STEP_HOURS
    total_kwh = ph["total_kw"] * STEP_HOURS
    tally = dict(zip(TALLIES, (int(v) for v in tally_counts), strict=True))
    n_waits = tally.pop("n_waits")
    it_tot = float(it_kwh.sum())
    tot_kwh = float(total_kwh.sum())
    water = float(ph["water_l"].sum())
    n_started = tally["tasks_started"]
    n_viol = tally["sla_violations"]
    totals = {
        "steps": n, "n_dc": n_dc, "tasks": int(prep.hi - prep.lo),
        **{k: tally[k] for k in TALLIES[:7]},
        "tasks_flexible": int(prep.n_flexible),
        "pauses": int(S.sc[E.SC_PAUSES]), "resumes": int(S.sc[E.SC_RESUMES]),
        "forced_resumes": int(S.sc[E.SC_FORCED_RESUMES]), "rescales": int(S.sc[E.SC_RESCALES]),
        "invalid_controls": int(S.sc[E.SC_BAD_CTL]),
        "tasks_in_transit_at_end": tally["tasks_in_transit_at_end"],
        "tasks_remote": tally["tasks_remote"],
        "tasks_forced": int(S.sc[E.SC_FORCED]),
        "invalid_actions": int(S.sc[E.SC_INVALID]),
        "sla_violations": n_viol,
        "sla_violation_rate": n_viol / n_started if n_started else 0.0,
        # (np.nanmean: the sum of the waits with 0.0 for the rest, over the count of waits)
        "mean_wait_s": float(np.divide(der.sum("wait"), n_waits)) if n_started else 0.0,
        "it_kwh": it_tot, "total_kwh": tot_kwh, "pue": effectiveness(tot_kwh, it_tot, 1.0),
        "cost_usd": float(steps["cost_usd"].sum()), "carbon_kg": float(steps["carbon_kg"].sum()),
        "water_l": water, "wue_l_per_kwh": effectiveness(water, it_tot, 0.0),
        "unmet_cooling_kwh": float((ph["unmet_cooling_kw"] * STEP_HOURS).sum()),
        "it_idle_kwh": float((ph["it_idle_kw"] * STEP_HOURS).sum()),
        "it_sleep_kwh": float((ph["it_sleep_kw"] * STEP_HOURS).sum()),
        "it_wake_kwh": float((ph["it_wake_kw"] * STEP_HOURS).sum()),
        **{x: der.sum(x) for x in XFER},
    }
    # share of the IT energy drawn by capacity that was on but unused (server fans excluded)
    totals["idle_share_of_it"] = totals["it_idle_kwh"] / it_tot if it_tot else float("nan")
    gpu_kwh = float((ph["it_gpu_kw"] * STEP_HOURS).sum())
    sums = {name: der.sum(name) for name in WORK_TERMS}
    totals.update(work_totals(prep, n, sums, totals, gpu_kwh / it_tot if it_tot > 0 else 0.0))
    # over all the work that arrived: the work left at a drain's cap is charged in (0.0 with drain=False, where
    # these are carbon_kg + transfer_carbon_kg exactly as before; sim_core.drain)
    totals["carbon_incl_transfer_kg"] = totals["carbon_kg_equal_work"] + totals["transfer_carbon_kg"]
    totals["cost_incl_transfer_usd"] = totals["cost_usd_equal_work"] + totals["transfer_cost_usd"]
    return totals
