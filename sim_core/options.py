"""Run options, the run window and Python-policy actions, validated before anything reaches a kernel.

Every refusal is a :class:`RunOptionsError` (a ``ValueError``) whose message names the option (or
the pending task) and the offending value. Nothing is coerced: a value is either used as given or
refused. The rules:

* **integers** (``defer_window_steps``, ``business_start_h``/``business_end_h``, ``steps``, a step
  index ``start``, the seed, an action) are ``int`` or NumPy integers, never ``bool``; a float is
  refused rather than truncated (an action may be an integral float such as ``2.0``), and every
  integer is range-checked as a Python integer, so nothing wraps around in a fixed-width array;
* **numbers** are real (not ``bool``), finite and inside their range of :data:`OPTION_RANGES` (declared
  once, each with its reason): ``sla_multiplier`` (a scalar, or one value per bundle task),
  ``transfer_kwh_per_gb`` (or a name of ``TRANSFER_KWH_PER_GB_PRESETS``),
  ``activity_on``/``activity_off`` (not zero at every local hour),
  ``defer_quantile``, ``locality_retention_days``, ``drain_max_days``; ``days`` > 0 (at least one step);
  business hours in 0..24; ``defer_window_steps`` ≥ 1;
* **flags** (``single_action``, ``allow_defer``, ``drain``, ``locality``) are ``bool``; ``transfer_emissions`` is
  ``"origin"`` or ``"mean"``; ``power`` is ``"managed"`` or ``"always_on"``; ``carbon_basis`` is
  ``None`` or the bundle's basis; ``forecast`` is a model of ``sim_core.forecast.MODELS`` and
  ``forecast_horizon_h`` an integer number of hours in 24..336; ``forecast_issue_every_min`` an integer
  number of minutes in 15..1440, a multiple of 15;
* **the window** (``start``, ``days``/``steps``) lies inside the bundle;
* **actions** of a Python policy: one per pending task (or one for all), each in ``0..n_dc``;
* **controls** of a Python policy (flexible tasks): ``{task index: scale}`` over the controllable tasks,
  0 = pause (interruptible, running), else a scale in the task's [min_scale, max_scale].

Unknown option names raise ``TypeError``, as an unknown keyword argument does.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, fields
from typing import Any

import numpy as np

from gridshift.bounds import Bound

from . import forecast as F
from . import origin as O
from .realisation import MODES
from .scenario import Scenario

#: Network energy per GB moved to another region (kWh/GB), by name; ``transfer_kwh_per_gb`` takes a number or
#: one of these names. Source of both Aslan figures: Aslan, Mayers, Koomey & France, "Electricity Intensity of
#: Internet Data Transmission: Untangling the Estimates", J. Industrial Ecology 22(4), 785-798 (2018), abstract:
#: "a new estimate of 0.06 kWh/GB for 2015" for core and fixed-line access networks (an average, attributional
#: figure: the networks' energy divided by their traffic), whose intensity "has decreased by half approximately
#: every 2 years since 2000 (for developed countries)".
#:
#: * ``"aslan2018-2023"`` (the default): that trend carried to 2023, the year of the bundles' signals:
#:   0.06 x 0.5^((2023 - 2015) / 2) = 0.00375 kWh/GB (our arithmetic on the abstract's two figures). No later
#:   peer-reviewed kWh/GB for core + fixed access was found; the later literature argues that a marginal figure is
#:   lower still: Mytton, Lundén & Malmodin, "Network energy use not directly proportional to data volume: The
#:   power model approach for more reliable network energy consumption calculations", J. Industrial Ecology
#:   28(4), 966-980 (2024), doi:10.1111/jiec.13512: network power is mostly a baseload that does not follow the
#:   data volume, so an average kWh/GB overstates what one more transfer adds. The default is therefore an upper
#:   figure for the consequence of moving a task, ``"none"`` the lower bound.
#: * ``"aslan2018-2015"``: 0.06, the 2015 figure, the spec's (docs/model.md §3) and SustainCluster's value
#:   (simulation/cluster_manager.py, "Extracted from https://onlinelibrary.wiley.com/doi/10.1111/jiec.12630"):
#:   for comparisons with results of that setup.
#: * ``"none"``: 0, a transfer adds no network energy (the power-model view's bound for a provisioned backbone).
TRANSFER_KWH_PER_GB_PRESETS: dict[str, float] = {
    "aslan2018-2023": 0.06 * 0.5 ** ((2023 - 2015) / 2),
    "aslan2018-2015": 0.06,
    "none": 0.0,
}
DEFAULT_TRANSFER_PRESET = "aslan2018-2023"
TRANSFER_KWH_PER_GB = TRANSFER_KWH_PER_GB_PRESETS[DEFAULT_TRANSFER_PRESET]
DEFAULT_SLA_MULTIPLIER = 1.5
#: How long a site keeps a replica of a dataset after the last task that used it (days; docs/simulation.md "Data
#: locality"): AWS S3 Intelligent-Tiering treats an object not accessed for 30 consecutive days as no longer in
#: use and moves it out of its frequent-access tier (AWS, "Amazon S3 Intelligent-Tiering storage class", S3 user
#: guide); we read the same 30 days as the time a site keeps a dataset no job has read.
LOCALITY_RETENTION_DAYS = 30.0
#: The valid range of every numeric run option, with its reason (docs/bundle_format.md lists them).
OPTION_RANGES: dict[str, Bound] = {
    "sla_multiplier": Bound(0.0, 1e6, "deadline = arrival + multiplier x duration: > 0; a million durations is "
                                      "beyond any run", low_inclusive=False),
    "transfer_kwh_per_gb": Bound(0.0, 100.0, "network energy per GB: 0.06 kWh/GB for 2015, halving every ~2 years "
                                             "since 2000 (Aslan et al. 2018), i.e. ~11 kWh/GB back in 2000 (our "
                                             "arithmetic); 100 is beyond any year"),
    "activity_on": Bound(0.0, 1e6, "a relative weight of task origins (only ratios matter; >= 0)"),
    "activity_off": Bound(0.0, 1e6, "a relative weight of task origins (only ratios matter; >= 0)"),
    "defer_quantile": Bound(0.0, 1.0, "a quantile"),
    "locality_retention_days": Bound(0.0, 3660.0, "how long a site keeps a dataset replica after its last use: "
                                                  ">= 0 days (0: only tasks decided at the same instant share it), "
                                                  "at most ten years"),
    "drain_max_days": Bound(0.0, 366.0, "the longest a run drains past its window (docs/simulation.md \"How a run "
                                        "ends\"): >= 0 days, at most a year"),
}
#: server power management (docs/simulation.md, "Server power states"): "managed" = servers are
#: switched off when idle beyond a spare pool and woken (with a latency) when work needs them, GPUs
#: drawn per device; "always_on" = every server on all the time, load spread over all servers and
#: GPUs (the reference cluster's model, reproduced bit for bit)
POWER_MODES = ("managed", "always_on")
REALISATIONS = MODES  # sim_core.realisation
#: forecast models (sim_core.forecast): what a policy may know of the future
FORECAST_MODELS = tuple(F.MODELS)
#: largest integer any option may take (fits every kernel integer, including int32 counters)
MAX_INT_OPTION = 2**31 - 1
#: seeds are stored as Int64 (run keys, the warehouse)
MAX_SEED = 2**63 - 1


class RunOptionsError(ValueError):
    """A run option, the run window or an action of a Python policy is invalid. The message names
    the option (or the pending task) and the offending value."""


# ---------------------------------------------------------------------------- scalar checks
def _is_int(v: Any) -> bool:
    return isinstance(v, int | np.integer) and not isinstance(v, bool | np.bool_)


def _is_real(v: Any) -> bool:
    return isinstance(v, int | float | np.integer | np.floating) and not isinstance(v, bool | np.bool_)


def check_int(name: str, v: Any, lo: int, hi: int) -> int:
    """``v`` as an ``int`` if it is an integer (not a bool, not a float) in ``lo..hi``."""
    if not _is_int(v):
        raise RunOptionsError(f"{name} must be an integer in {lo}..{hi}, got {v!r} ({type(v).__name__})")
    i = int(v)
    if not lo <= i <= hi:
        raise RunOptionsError(f"{name} must be an integer in {lo}..{hi}, got {i}")
    return i


def check_real(name: str, v: Any, *, lo: float | None = None, lo_open: bool = False,
               hi: float | None = None) -> float:
    """``v`` as a finite ``float`` (not a bool) in the given range (``lo_open``: ``> lo``)."""
    what = "a finite number" + (f" {'>' if lo_open else '>='} {lo:g}" if lo is not None else "") \
        + (f" and <= {hi:g}" if hi is not None else "")
    if not _is_real(v):
        raise RunOptionsError(f"{name} must be {what}, got {v!r} ({type(v).__name__})")
    try:
        x = float(v)
    except OverflowError:  # an int beyond the float range
        raise RunOptionsError(f"{name} must be {what}, got {v!r}") from None
    if not math.isfinite(x) or (lo is not None and (x <= lo if lo_open else x < lo)) \
            or (hi is not None and x > hi):
        raise RunOptionsError(f"{name} must be {what}, got {v!r}")
    return x


def check_option(name: str, v: Any) -> float:
    """``v`` as a finite ``float`` inside ``OPTION_RANGES[name]``; the refusal names the range and its reason."""
    b = OPTION_RANGES[name]
    try:
        return check_real(name, v, lo=b.low, lo_open=not b.low_inclusive, hi=b.high)
    except RunOptionsError as err:
        raise RunOptionsError(f"{err} (its range {b.describe()}: {b.reason})") from None


def check_bool(name: str, v: Any) -> bool:
    if not isinstance(v, bool | np.bool_):
        raise RunOptionsError(f"{name} must be True or False, got {v!r} ({type(v).__name__})")
    return bool(v)


def check_seed(seed: Any) -> int:
    return check_int("seed", seed, 0, MAX_SEED)


def _check_sla_multiplier(v: Any) -> float | np.ndarray:
    """A finite scalar > 0, or a 1-D array of them (its length is checked against the bundle)."""
    if np.ndim(v) == 0 and not isinstance(v, np.ndarray):
        return check_option("sla_multiplier", v)
    a = np.asarray(v)
    if a.ndim != 1 or a.dtype.kind not in "iuf":
        raise RunOptionsError(f"sla_multiplier must be a number or a 1-D array of numbers (one per bundle "
                              f"task), got {a.dtype} array of shape {a.shape}")
    a = a.astype(np.float64)
    b = OPTION_RANGES["sla_multiplier"]
    with np.errstate(invalid="ignore"):
        bad = np.flatnonzero(~(np.isfinite(a) & (a > b.low) & (a <= b.high)))
    if bad.size:
        raise RunOptionsError(f"sla_multiplier[{bad[0]}] must be a finite number in {b.describe()} ({b.reason}), "
                              f"got {a[bad[0]]!r} ({bad.size} such value(s))")
    a.flags.writeable = False
    return a


def _check_transfer_kwh_per_gb(v: Any) -> float:
    """A finite number >= 0, or the name of one of ``TRANSFER_KWH_PER_GB_PRESETS`` (its value)."""
    if isinstance(v, str):
        if v not in TRANSFER_KWH_PER_GB_PRESETS:
            raise RunOptionsError(f"transfer_kwh_per_gb must be a finite number >= 0 or one of "
                                  f"{sorted(TRANSFER_KWH_PER_GB_PRESETS)}, got {v!r}")
        return TRANSFER_KWH_PER_GB_PRESETS[v]
    return check_option("transfer_kwh_per_gb", v)


# ---------------------------------------------------------------------------- options
@dataclass
class Options:
    """The run options (docs/simulation.md). Constructing one validates and normalizes every field
    (Python ``bool``/``int``/``float``/``str``; a per-task ``sla_multiplier`` as a read-only float64
    array) or raises :class:`RunOptionsError`."""

    single_action: bool = False
    allow_defer: bool = True
    sla_multiplier: Any = DEFAULT_SLA_MULTIPLIER  # float or per-task array (scenario task order)
    carbon_basis: str | None = None
    transfer_emissions: str = "origin"  # or "mean"
    transfer_kwh_per_gb: float | str = TRANSFER_KWH_PER_GB  # kWh/GB, or a preset name (stored as its value)
    business_start_h: int = O.BUSINESS_START_H
    business_end_h: int = O.BUSINESS_END_H
    activity_on: float = O.ACTIVITY_ON
    activity_off: float = O.ACTIVITY_OFF
    defer_quantile: float = 0.3
    defer_window_steps: int = 96
    power: str = "managed"
    workload: str = "weeks"  # the run's workload realisation (sim_core.realisation): "weeks" | "origins"
    #: what a policy is told of the future (sim_core.forecast): the forecast model and its horizon (hours)
    forecast: str = F.DEFAULT_MODEL
    forecast_horizon_h: int = F.DEFAULT_HORIZON_H
    #: how often a forecast is issued (minutes, a whole number of 15-min steps; sim_core.forecast)
    forecast_issue_every_min: int = F.DEFAULT_ISSUE_EVERY_MIN
    #: how a run ends (docs/simulation.md "How a run ends"): True = arrivals stop at the window's end and the
    #: run goes on until every task that arrived has finished (or a cap, the rest charged); False = it stops at
    #: the window's end with work left undone (the behaviour before equal work, for comparisons)
    drain: bool = True
    #: data locality (docs/simulation.md "Data locality"): True = a task's shared dataset moves only to a site
    #: that holds no replica of it (replicas kept ``locality_retention_days`` after their last use; the task's
    #: origin holds it); checkpoints and outputs always move. False = every remote task moves its whole size
    #: (the behaviour before data locality, for comparisons)
    locality: bool = True
    locality_retention_days: float = LOCALITY_RETENTION_DAYS
    #: the cap on draining, in days past the window's end (also capped by the bundle's end); the work left
    #: there is charged at the run's own rates per GPU-hour and per core-hour (sim_core.drain)
    drain_max_days: float = 7.0

    def __post_init__(self) -> None:
        self.single_action = check_bool("single_action", self.single_action)
        self.allow_defer = check_bool("allow_defer", self.allow_defer)
        self.drain = check_bool("drain", self.drain)
        self.drain_max_days = check_option("drain_max_days", self.drain_max_days)
        self.locality = check_bool("locality", self.locality)
        self.locality_retention_days = check_option("locality_retention_days", self.locality_retention_days)
        self.sla_multiplier = _check_sla_multiplier(self.sla_multiplier)
        if self.carbon_basis is not None and not isinstance(self.carbon_basis, str):
            raise RunOptionsError(f"carbon_basis must be None or a string, got {self.carbon_basis!r}")
        if not isinstance(self.transfer_emissions, str) or self.transfer_emissions not in ("origin", "mean"):
            raise RunOptionsError(f"transfer_emissions must be 'origin' or 'mean', got {self.transfer_emissions!r}")
        self.transfer_kwh_per_gb = _check_transfer_kwh_per_gb(self.transfer_kwh_per_gb)
        self.business_start_h = check_int("business_start_h", self.business_start_h, 0, 24)
        self.business_end_h = check_int("business_end_h", self.business_end_h, 0, 24)
        self.activity_on = check_option("activity_on", self.activity_on)
        self.activity_off = check_option("activity_off", self.activity_off)
        if not O.activity(np.arange(24), **self.activity_kw()).any():
            raise RunOptionsError(
                f"activity is 0 at every local hour (activity_on={self.activity_on!r} in business hours "
                f"[{self.business_start_h}, {self.business_end_h}), activity_off={self.activity_off!r} "
                "otherwise): no task could have an origin")
        self.defer_quantile = check_option("defer_quantile", self.defer_quantile)
        self.defer_window_steps = check_int("defer_window_steps", self.defer_window_steps, 1, MAX_INT_OPTION)
        if not isinstance(self.power, str) or self.power not in POWER_MODES:
            raise RunOptionsError(f"power must be one of {POWER_MODES}, got {self.power!r}")
        if not isinstance(self.workload, str) or self.workload not in REALISATIONS:
            raise RunOptionsError(f"workload must be one of {REALISATIONS}, got {self.workload!r}")
        if not isinstance(self.forecast, str) or self.forecast not in FORECAST_MODELS:
            raise RunOptionsError(f"forecast must be one of {FORECAST_MODELS}, got {self.forecast!r}")
        self.forecast_horizon_h = check_int("forecast_horizon_h", self.forecast_horizon_h, F.MIN_HORIZON_H,
                                            F.MAX_HORIZON_H)
        self.forecast_issue_every_min = check_int("forecast_issue_every_min", self.forecast_issue_every_min,
                                                  F.STEP_MIN, F.MAX_ISSUE_EVERY_MIN)
        if self.forecast_issue_every_min % F.STEP_MIN:
            raise RunOptionsError(f"forecast_issue_every_min must be a multiple of {F.STEP_MIN} (a whole number of "
                                  f"steps), got {self.forecast_issue_every_min!r}")

    def activity_kw(self) -> dict:
        """The keyword arguments of :func:`sim_core.origin.activity` these options give."""
        return dict(start_h=self.business_start_h, end_h=self.business_end_h, on=self.activity_on,
                    off=self.activity_off)

    def public(self) -> dict:
        """The options as plain values (a per-task ``sla_multiplier`` as the label ``"per-task"``)."""
        d = {f.name: getattr(self, f.name) for f in fields(self)}
        if isinstance(d["sla_multiplier"], np.ndarray):
            d["sla_multiplier"] = "per-task"
        return d


def make_options(**kw) -> Options:
    """Validated :class:`Options` from keyword arguments (unknown names: ``TypeError``)."""
    unknown = sorted(set(kw) - {f.name for f in fields(Options)})
    if unknown:
        raise TypeError(f"unknown run options: {unknown}")
    return Options(**kw)


# ---------------------------------------------------------------------------- the window
def resolve_window(sc: Scenario, start, days, steps) -> tuple[int, int]:
    """(first step, number of steps) of a run: ``start`` (None, a step index, an ISO UTC time or a
    datetime on the step grid) and ``days`` or ``steps`` (default: to the end of the bundle)."""
    if start is None:
        s0 = 0
    elif _is_int(start):
        s0 = check_int("start", start, 0, sc.n_steps - 1)
    elif isinstance(start, str | dt.date | np.datetime64):
        try:
            ts = start if isinstance(start, dt.datetime) else dt.datetime.fromisoformat(str(start))
        except ValueError:
            raise RunOptionsError(f"start must be a step index or an ISO UTC time, got {start!r}") from None
        if ts.tzinfo is None:
            ts = ts.replace(tzinfo=dt.UTC)
        off = (ts - sc.start_utc).total_seconds()
        if off % sc.step_s:
            raise RunOptionsError(f"start {ts.isoformat()} is not on the {sc.step_s}-s step grid")
        s0 = int(off // sc.step_s)
        if not 0 <= s0 < sc.n_steps:
            raise RunOptionsError(f"start {ts.isoformat()} (step {s0}) is outside the bundle "
                                  f"(steps 0..{sc.n_steps - 1} from {sc.start_utc.isoformat()})")
    else:
        raise RunOptionsError(f"start must be a step index, an ISO UTC time or a datetime, got {start!r} "
                              f"({type(start).__name__})")
    if steps is not None and days is not None:
        raise RunOptionsError(f"give days or steps, not both (days={days!r}, steps={steps!r})")
    left = sc.n_steps - s0
    if days is not None:
        d = check_real("days", days, lo=0.0, lo_open=True)
        x = d * 86400.0 / sc.step_s
        n = int(round(x)) if x < left + 1 else left + 1  # (x may be inf: never converted)
        if n > left:
            raise RunOptionsError(f"days={days!r}: a window of {x:g} steps from step {s0} does not fit the "
                                  f"bundle ({left} steps left of {sc.n_steps})")
        if n < 1:
            raise RunOptionsError(f"days={days!r} is less than one {sc.step_s}-s step")
    elif steps is not None:
        n = check_int("steps", steps, 1, MAX_SEED)
        if n > left:
            raise RunOptionsError(f"steps={n}: a window of {n} steps from step {s0} does not fit the bundle "
                                  f"({left} steps left of {sc.n_steps})")
    else:
        n = left
    return s0, n


# ---------------------------------------------------------------------------- Python-policy actions
def _bad_action(where: str, value: Any, n_dc: int) -> RunOptionsError:
    return RunOptionsError(f"{where} is {value!r}: an action must be an integer in 0..{n_dc} "
                           "(0 = defer, j = run at datacenter j - 1)")


def _where(q: int, single_action: bool, describe: Callable[[int], str] | None) -> str:
    if single_action:
        return f"actions[{q}]"
    return describe(q) if describe is not None else f"the action for pending task {q}"


def check_actions(actions: Any, n_pending: int, n_dc: int, single_action: bool,
                  describe: Callable[[int], str] | None = None) -> int | np.ndarray:
    """The actions of a Python policy, validated: ``None`` (defer all), one integer for every
    pending task, or one per pending task (in single-action mode the first of a sequence applies to
    all). Each must be an integer (an integral float is accepted; NaN, 1.5, ``True``, strings are
    not) in ``0..n_dc``. Returns an ``int`` (one action for every pending task) or an int64 array
    of ``n_pending`` actions. ``describe(q)`` names pending task ``q`` in errors.
    """
    if actions is None:
        return 0
    if _is_int(actions):  # (the fast path of a single-action environment)
        if 0 <= actions <= n_dc:
            return int(actions)
        raise _bad_action("the action", actions, n_dc)
    if np.ndim(actions) == 0:  # any other scalar
        v = actions.item() if isinstance(actions, np.ndarray | np.generic) else actions
        if _is_int(v) and 0 <= v <= n_dc:
            return int(v)
        if isinstance(v, float) and math.isfinite(v) and v.is_integer() and 0 <= v <= n_dc:
            return int(v)
        raise _bad_action("the action", v, n_dc)
    if isinstance(actions, list | tuple):  # NumPy would read True as 1, or 1 as '1' next to a string
        for q, v in enumerate(actions):
            if not _is_real(v):
                raise _bad_action(_where(q, single_action, describe), v, n_dc)
    try:
        arr = np.asarray(actions)
    except (ValueError, TypeError, OverflowError) as err:  # ragged nesting and the like
        raise RunOptionsError(f"actions must be an integer or a sequence of integers ({err})") from None
    if arr.ndim > 1:
        raise RunOptionsError(f"actions must be an integer or a 1-D sequence of integers, got shape {arr.shape}")
    if not (single_action and arr.size >= 1) and arr.size != n_pending:
        raise RunOptionsError(f"expected {n_pending} actions (one per pending task), got {arr.size}")
    kind = arr.dtype.kind
    if kind in "iu":
        bad = np.flatnonzero((arr < 0) | (arr > n_dc)) if arr.size and (arr.min() < 0 or arr.max() > n_dc) \
            else arr[:0]
    elif kind == "f":
        with np.errstate(invalid="ignore"):
            bad = np.flatnonzero(~(np.isfinite(arr) & (arr == np.floor(arr)) & (arr >= 0) & (arr <= n_dc)))
    elif kind == "O":
        bad = np.array([q for q, v in enumerate(arr) if not (_is_int(v) and 0 <= int(v) <= n_dc)
                        and not (isinstance(v, float | np.floating) and math.isfinite(v) and float(v).is_integer()
                                 and 0 <= v <= n_dc)], dtype=np.int64)
    else:  # bool, strings, complex, dates...
        bad = np.arange(arr.size)
    if bad.size:
        q = int(bad[0])
        raise _bad_action(_where(q, single_action, describe), arr[q].item() if hasattr(arr[q], "item") else arr[q],
                          n_dc)
    if single_action and arr.size:
        return int(arr[0])
    return arr.astype(np.int64, copy=False)


# ---------------------------------------------------------------------------- flexible-task controls
def check_controls(controls: Any, *, t: float, flex: np.ndarray, status: np.ndarray, fin: np.ndarray,
                   interruptible: np.ndarray, min_scale: np.ndarray, max_scale: np.ndarray, st_started: int,
                   st_paused: int, describe: Callable[[int], str]) -> tuple[np.ndarray, np.ndarray]:
    """The flexible-task controls of a Python policy (docs/simulation.md "Flexible tasks"), validated:
    ``None`` or a mapping ``{task index: target scale}`` over the controllable tasks
    (``obs["flex_index"]``): 0 pauses a running interruptible task, a scale in [min_scale, max_scale]
    resumes a paused task at that scale or rescales a running one (its current scale: nothing). A
    task waiting to resume takes no control. Returns (task indices int32, scales float64) in the
    mapping's order; ``describe(i)`` names task ``i`` in errors.
    """
    if controls is None:
        return np.zeros(0, np.int32), np.zeros(0)
    if not isinstance(controls, Mapping):
        raise RunOptionsError("controls must be None or a mapping {task index: scale}, got "
                              f"{type(controls).__name__}")
    allowed = set(flex.tolist())
    idx = np.empty(len(controls), np.int32)
    val = np.empty(len(controls))
    for k, (i, v) in enumerate(controls.items()):
        if not _is_int(i) or int(i) not in allowed:
            raise RunOptionsError(f"control for {i!r}: not a controllable task (a flexible task that has started and "
                                  "not finished: one of obs['flex_index'])")
        i = int(i)
        where = f"the control for {describe(i)}"
        if not _is_real(v) or not math.isfinite(float(v)):
            raise RunOptionsError(f"{where} is {v!r}: a control is a finite number (0 = pause, s > 0 = run at scale s)")
        x = float(v)
        lo, hi = float(min_scale[i]), float(max_scale[i])
        running = status[i] == st_started and fin[i] > t
        if x == 0.0:
            if not interruptible[i]:
                raise RunOptionsError(f"{where} is 0 (pause): the task is not interruptible")
            if not running:
                raise RunOptionsError(f"{where} is 0 (pause): the task is not running")
        elif not lo <= x <= hi:
            raise RunOptionsError(f"{where} is {x:g}: its scale must be in [{lo:g}, {hi:g}] (0 pauses)")
        elif not (running or status[i] == st_paused):
            raise RunOptionsError(f"{where} is {x:g}: the task is waiting to resume and takes no control")
        idx[k], val[k] = i, x
    return idx, val
