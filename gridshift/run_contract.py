"""The contract of a run object's metrics: every metric's range and the identities the totals hold.

Why: a run object under a shared results URL is reused by every home pointed at that URL, and a home that
did not write it has no sha256 of its own to check it against. What it can check is that the object is a
run the simulator could have produced: each metric within its range (energies, carbon, water and work
non-negative; fractions in [0, 1]; counts whole), and the totals' own identities (``pue = total_kwh /
it_kwh``, ``carbon_incl_transfer_kg = carbon_kg + charged_carbon_kg + transfer_carbon_kg``, a carbon total
within the grid's carbon-intensity bound of its energy, ...). A rewritten figure that keeps every
identity and range is caught only by re-simulating (``gridshift compare --verify-reuse N``;
docs/distributed.md, "Trust").

Each metric's range, whether it may be NaN, whether it is a whole count and its identity (a ratio of two
metrics, a sum of several) come from its declaration in :mod:`gridshift.metrics`; the ceilings below relate
metrics to the grid bounds of :data:`gridshift.bounds.BOUNDS`. Stdlib only.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping

from gridshift import metrics as M
from gridshift.bounds import BOUNDS, Bound
from gridshift.errors import DataError

__all__ = ["METRIC_BOUNDS", "NAN_ALLOWED", "check_metrics"]


def metric_bounds() -> dict[str, Bound]:
    """Every declared metric's range (``gridshift.metrics``; values outside are refused by name, never clipped)."""
    return {m.name: m.bound for m in M.declared()}


#: the ranges of the built-in metrics (:func:`metric_bounds` includes those declared at run time)
METRIC_BOUNDS: dict[str, Bound] = metric_bounds()
#: Metrics that are NaN when undefined (no IT energy, no capacity of that kind); every other one is a number.
NAN_ALLOWED = frozenset(m.name for m in M.METRICS if m.nan)
_KG_PER_KWH = BOUNDS["carbon_g_per_kwh"].high / 1000.0
_USD_PER_KWH = (BOUNDS["price_usd_per_mwh"].low / 1000.0, BOUNDS["price_usd_per_mwh"].high / 1000.0)


def _identities() -> list[tuple[str, tuple[str, ...], Callable[[Mapping[str, float]], float]]]:
    """metric = f(metrics), as the simulator computes it (sim_core.result, sim_core.drain), from the declarations:
    a RATIO is its numerator / denominator (``if_zero`` when the denominator is 0, unchecked when None), a SUM
    that names its terms is their sum; checked to 1e-9."""
    out = []
    for m in M.declared():
        if m.aggregate == M.RATIO:
            num, den = m.of
            out.append((m.name, m.of, lambda v, n=m.name, a=num, b=den, z=m.if_zero:
                        v[a] / v[b] if v[b] > 0 else (v[n] if z is None else z)))
        elif m.aggregate == M.SUM and m.of:
            out.append((m.name, m.of, lambda v, terms=m.of: sum(v[t] for t in terms)))
    return out


#: (metric, at most f(metrics), why)
_CEILINGS: tuple[tuple[str, tuple[str, ...], Callable[[Mapping[str, float]], float], str], ...] = (
    ("it_kwh", ("total_kwh",), lambda m: m["total_kwh"], "the facility energy includes the IT energy"),
    ("carbon_kg", ("total_kwh",), lambda m: _KG_PER_KWH * m["total_kwh"],
     f"at most {_KG_PER_KWH:g} kg/kWh (the carbon-intensity bound) of total_kwh"),
    ("transfer_carbon_kg", ("transfer_kwh",), lambda m: _KG_PER_KWH * m["transfer_kwh"],
     f"at most {_KG_PER_KWH:g} kg/kWh of transfer_kwh"),
    ("cost_usd", ("total_kwh",), lambda m: _USD_PER_KWH[1] * m["total_kwh"],
     f"at most {_USD_PER_KWH[1]:g} USD/kWh (the price bound) of total_kwh"),
    ("tasks_started", ("tasks",), lambda m: m["tasks"], "a task starts only after it arrives"),
    ("tasks_completed", ("tasks",), lambda m: m["tasks"], "a task completes only after it arrives"),
    ("tasks_remote", ("tasks",), lambda m: m["tasks"], "a remote task is an arrived task"),
    ("tasks_unschedulable", ("tasks",), lambda m: m["tasks"], "an unschedulable task is an arrived task"),
)


def _close(a: float, b: float) -> bool:
    return a == b or math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-9)


def check_metrics(metrics: Mapping[str, float], *, file: str) -> None:
    """Refuse metrics outside the contract (an unknown name, a value outside its range, a broken identity),
    naming ``file`` (the object's URL), the metric and its value."""
    def bad(name: str, why: str) -> DataError:
        return DataError(f"result object's metric {name} {why}", file=file, column=name, rows=[0],
                         values=[metrics[name]])

    for name, v in metrics.items():
        spec = M.get(name)
        if spec is None:
            raise bad(name, "is not a metric of the run contract (none is declared by that name in gridshift.metrics)")
        b = spec.bound
        if math.isnan(v):
            if not spec.nan:
                raise bad(name, "is NaN (only undefined ratios may be)")
            continue
        if not b.admits(v):
            raise bad(name, f"is outside {b.describe()} ({b.reason})")
        if spec.aggregate == M.COUNT and v != int(v):
            raise bad(name, "is a count and not a whole number")
    known = {k: v for k, v in metrics.items() if not math.isnan(v)}
    for name, terms, f, why in _CEILINGS:
        if name in known and all(t in known for t in terms):
            ceiling = f(known)
            if known[name] > ceiling and not _close(known[name], ceiling):
                raise bad(name, f"is above {ceiling!r}: {why}")
    for name, terms, f in _identities():
        if name in known and all(t in known for t in terms):
            want = f(known)
            if not _close(known[name], want):
                raise bad(name, f"breaks its identity with {', '.join(terms)} (expected {want!r})")
