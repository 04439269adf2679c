"""Run options, the run window and Python-policy actions, validated before anything reaches a kernel.

Every refusal is a :class:`RunOptionsError` (a ``ValueError``) whose message names the option (or
the pending task) and the offending value. Nothing is coerced: a value is either used as given or
refused. The rules:

* **run options**: each is checked by its declaration in ``gridshift.run_options`` (:func:`check_declared`;
  docs/simulation.md's options table lists every one): an integer is ``int`` or a NumPy integer, never
  ``bool``, a float is refused rather than truncated, and it is range-checked as a Python integer, so nothing
  wraps around in a fixed-width array; a number is real (not ``bool``), finite and inside its range (the
  refusal names the range and its reason), or one of the option's preset names; a flag is ``bool``; a choice
  one of its values. Besides, ``activity_on``/``activity_off`` are not zero at every local hour, and
  ``carbon_basis`` (checked against the bundle) is its basis; ``days`` > 0 (at least one step), ``steps`` and
  the seed are integers;
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
from typing import Any

import numpy as np

from gridshift import run_options as R
from gridshift.bounds import Bound
from gridshift.dc_params import ParamError

from . import origin as O
from .scenario import Scenario

# The options are declared in gridshift.run_options (name, type, default, range, unit, doc, citation); these
# names are views of those declarations, kept for the modules and tests that read them.
TRANSFER_KWH_PER_GB_PRESETS = R.TRANSFER_KWH_PER_GB_PRESETS
DEFAULT_TRANSFER_PRESET = R.DEFAULT_TRANSFER_PRESET
TRANSFER_KWH_PER_GB = TRANSFER_KWH_PER_GB_PRESETS[DEFAULT_TRANSFER_PRESET]
DEFAULT_SLA_MULTIPLIER = R.get("sla_multiplier").default
LOCALITY_RETENTION_DAYS = R.get("locality_retention_days").default
POWER_MODES = R.get("power").choices
REALISATIONS = R.get("workload").choices  # sim_core.realisation
FORECAST_MODELS = R.FORECAST_MODELS
MAX_INT_OPTION = R.MAX_INT_OPTION
#: seeds are stored as Int64 (run keys, the warehouse)
MAX_SEED = 2**63 - 1


def option_ranges() -> dict[str, Bound]:
    """The valid range of every real-valued run option, with its reason (docs/bundle_format.md lists them; the
    integer options' ranges are in docs/simulation.md's options table)."""
    return {o.name: o.bound for o in R.declared() if o.kind == R.FLOAT and o.bound is not None}


#: the ranges of the built-in real-valued options (:func:`option_ranges` includes those declared at run time)
OPTION_RANGES: dict[str, Bound] = option_ranges()


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
    """``v`` as a finite ``float`` inside the declared range of option ``name``; the refusal names the range and
    its reason."""
    b = R.get(name).bound
    assert b is not None
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


def _check_per_task(o: R.RunOption, v: Any) -> np.ndarray:
    """A 1-D array of valid values, one per bundle task (its length is checked against the bundle)."""
    a = np.asarray(v)
    if a.ndim != 1 or a.dtype.kind not in "iuf":
        raise RunOptionsError(f"{o.name} must be a number or a 1-D array of numbers (one per bundle "
                              f"task), got {a.dtype} array of shape {a.shape}")
    a = a.astype(np.float64)
    b = o.bound
    assert b is not None
    with np.errstate(invalid="ignore"):
        low_ok = (a >= b.low) if b.low_inclusive else (a > b.low)
        bad = np.flatnonzero(~(np.isfinite(a) & low_ok & (a <= b.high)))
    if bad.size:
        raise RunOptionsError(f"{o.name}[{bad[0]}] must be a finite number in {b.describe()} ({b.reason}), "
                              f"got {a[bad[0]]!r} ({bad.size} such value(s))")
    a.flags.writeable = False
    return a


def check_declared(o: R.RunOption, v: Any) -> Any:
    """``v`` validated by option ``o``'s declaration (``gridshift.run_options``) and normalized to a Python
    ``bool``/``int``/``float``/``str`` (a preset name as its value; a per-task array as a read-only float64
    array), or :class:`RunOptionsError` naming the option, the value and the rule."""
    if v is None and (o.nullable or o.kind == R.PARAMS):
        return None
    if o.kind == R.PARAMS:
        try:
            return o.params.from_value(dict(v) if isinstance(v, Mapping) else v)
        except ParamError as err:
            raise RunOptionsError(str(err)) from err
    if o.kind == R.BOOL:
        return check_bool(o.name, v)
    if o.kind == R.CHOICE:
        if not isinstance(v, str) or v not in o.choices:
            raise RunOptionsError(f"{o.name} must be one of {o.choices}, got {v!r}")
        return v
    if o.kind == R.TEXT:
        if not isinstance(v, str):
            raise RunOptionsError(f"{o.name} must be {'None or ' if o.nullable else ''}a string, got {v!r}")
        return v
    b = o.bound
    assert b is not None
    if o.kind == R.INT:
        i = check_int(o.name, v, int(b.low) + (0 if b.low_inclusive else 1), int(b.high))
        if o.multiple_of and i % o.multiple_of:
            raise RunOptionsError(f"{o.name} must be a multiple of {o.multiple_of}, got {v!r}")
        return i
    if isinstance(v, str) and o.presets:
        if v not in o.presets:
            raise RunOptionsError(f"{o.name} must be a finite number in {b.describe()} or one of "
                                  f"{sorted(o.presets)}, got {v!r}")
        return float(o.presets[v])
    if o.per_task and (np.ndim(v) != 0 or isinstance(v, np.ndarray)):
        return _check_per_task(o, v)
    return check_option(o.name, v)


# ---------------------------------------------------------------------------- options
class Options:
    """The run options (docs/simulation.md), one attribute per option declared in ``gridshift.run_options``.
    Constructing one validates and normalizes every value (:func:`check_declared`) or raises
    :class:`RunOptionsError`; an unknown name is a ``TypeError``, as an unknown keyword argument is."""

    def __init__(self, **kw: Any) -> None:
        specs = R.declared()
        unknown = sorted(set(kw) - {o.name for o in specs})
        if unknown:
            raise TypeError(f"unknown run options: {unknown}")
        for o in specs:
            setattr(self, o.name, check_declared(o, kw.get(o.name, o.default)))
        if not O.activity(np.arange(24), **self.activity_kw()).any():
            raise RunOptionsError(
                f"activity is 0 at every local hour (activity_on={self.activity_on!r} in business hours "
                f"[{self.business_start_h}, {self.business_end_h}), activity_off={self.activity_off!r} "
                "otherwise): no task could have an origin")

    def __getattr__(self, name: str) -> Any:  # (only for names never set: an option declared after this one)
        raise AttributeError(f"run options have no {name!r} (declared options: gridshift.run_options)")

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Options):
            return NotImplemented
        a, b = self.public(), other.public()
        return a.keys() == b.keys() and all(
            np.array_equal(getattr(self, k), getattr(other, k)) if isinstance(getattr(self, k), np.ndarray)
            else a[k] == b[k] for k in a)

    __hash__ = None  # type: ignore[assignment]  # mutable, compared by value

    def __repr__(self) -> str:
        return "Options(" + ", ".join(f"{k}={v!r}" for k, v in self.public().items()) + ")"

    def activity_kw(self) -> dict:
        """The keyword arguments of :func:`sim_core.origin.activity` these options give."""
        return dict(start_h=self.business_start_h, end_h=self.business_end_h, on=self.activity_on,
                    off=self.activity_off)

    def public(self) -> dict:
        """The options as plain values, in declaration order (a per-task array as the label ``"per-task"``, a
        parameter set as its mapping). An option that is off (``gridshift.run_options.is_off``: a feature left
        ``None``, e.g. no battery) is left out, so that a run without it keeps the options (and the run key) it had
        before the feature existed."""
        values = vars(self)
        return {k: "per-task" if isinstance(v, np.ndarray) else v.to_dict() if R.get(k).kind == R.PARAMS else v
                for k, v in values.items() if not R.is_off(R.get(k), values)}


def make_options(**kw) -> Options:
    """Validated :class:`Options` from keyword arguments (unknown names: ``TypeError``)."""
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


# ---------------------------------------------------------------------------- battery targets
def check_battery(battery: Any, run_battery: Any, n_dc: int) -> np.ndarray:
    """A Python policy's battery targets for one step, validated: one finite number (kW) for every site or one
    per site (> 0 charge, < 0 discharge, 0 idle; beyond the power limit is done at the limit). Refused in a run
    without the ``battery`` option (``run_battery`` None). Returns (n_dc,) float64."""
    if run_battery is None:
        raise RunOptionsError("battery targets given to a run without batteries (set the battery run option)")
    if isinstance(battery, bool | np.bool_ | str):
        raise RunOptionsError(f"battery must be a number or one number per site (kW), got {battery!r}")
    try:
        a = np.asarray(battery, dtype=np.float64)
    except (TypeError, ValueError):
        raise RunOptionsError(f"battery must be a number or one number per site (kW), got {battery!r}") from None
    if a.ndim == 0:
        a = np.full(n_dc, float(a))
    if a.shape != (n_dc,):
        raise RunOptionsError(f"battery must be one number or {n_dc} (one per site), got shape {a.shape}")
    bad = np.flatnonzero(~np.isfinite(a))
    if bad.size:
        raise RunOptionsError(f"battery[{bad[0]}] is {a[bad[0]]!r}: a target is a finite number of kW")
    return a
