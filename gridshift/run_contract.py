"""The contract of a run object's metrics: every metric's range and the identities the totals hold.

Why: a run object under a shared results URL is reused by every home pointed at that URL, and a home that
did not write it has no sha256 of its own to check it against. What it can check is that the object is a
run the simulator could have produced: each metric within its range (energies, carbon, water and work
non-negative; fractions in [0, 1]; counts whole), and the totals' own identities (``pue = total_kwh /
it_kwh``, ``carbon_incl_transfer_kg = carbon_kg + charged_carbon_kg + transfer_carbon_kg``, a carbon total
within the grid's carbon-intensity bound of its energy, ...). A rewritten figure that keeps every
identity and range is caught only by re-simulating (``gridshift compare --verify-reuse N``;
docs/distributed.md, "Trust").

The names are those of ``sim_core.bench.metrics.METRICS`` (a test keeps the two equal); the ranges are
:class:`gridshift.bounds.Bound`, the grid bounds come from :data:`gridshift.bounds.BOUNDS`. Stdlib only.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping

from gridshift.bounds import BOUNDS, Bound
from gridshift.errors import DataError

__all__ = ["METRIC_BOUNDS", "NAN_ALLOWED", "check_metrics"]

_KWH = Bound(0.0, 1e13, "an energy: 256 sites drawing 100 MW for a year are 2.2e11 kWh")
_KG = Bound(0.0, 1e14, "emissions: at most 5 kg/kWh of the largest energy")
_USD = Bound(-1e15, 1e15, "a cost: prices lie in -10..100 USD/kWh (gridshift.bounds), so -10..100 x the energy")
_COUNT = Bound(0.0, 1e12, "a whole count (tasks, steps): 20 M tasks per bundle at most (gridshift.limits)")
_FRAC = Bound(0.0, 1.0, "a fraction")
_HOURS = Bound(0.0, 1e15, "work done or left: 20 M tasks x 1e6 GPUs x 30 years bounds it")
_PER = Bound(0.0, 1e15, "a non-negative total per unit of work (0 when no such work was done)")
_RATIO = Bound(1.0, math.inf, "facility energy / IT energy: the facility includes IT (+inf: overhead without IT)")

#: Every metric's range (values outside are refused by name, never clipped).
METRIC_BOUNDS: dict[str, Bound] = {
    "total_kwh": _KWH, "it_kwh": _KWH, "pue": _RATIO, "it_idle_kwh": _KWH, "it_sleep_kwh": _KWH,
    "it_wake_kwh": _KWH, "idle_share_of_it": _FRAC, "cost_usd": _USD, "carbon_kg": _KG,
    "water_l": Bound(0.0, 1e15, "site cooling water"),
    "wue_l_per_kwh": Bound(0.0, math.inf, "water / IT energy (+inf: water without IT energy)"),
    "transfer_cost_usd": Bound(0.0, 1e15, "egress prices are non-negative (gridshift.bounds usd_per_gb)"),
    "transfer_kwh": _KWH, "transfer_carbon_kg": _KG, "cost_incl_transfer_usd": _USD, "carbon_incl_transfer_kg": _KG,
    "work_gpu_hours": _HOURS, "work_core_hours": _HOURS, "work_left_gpu_hours": _HOURS, "drain_steps": _COUNT,
    "charged_carbon_kg": _KG, "carbon_kg_per_gpu_hour": _PER, "carbon_kg_per_core_hour": _PER,
    "kwh_per_gpu_hour": _PER, "cost_usd_per_gpu_hour": Bound(-1e15, 1e15, "a cost per GPU-hour (prices may be < 0)"),
    "sla_violation_rate": _FRAC, "sla_violations": _COUNT, "mean_wait_s": Bound(0.0, 1e12, "a wait in seconds"),
    "tasks": _COUNT, "tasks_started": _COUNT, "tasks_completed": _COUNT, "tasks_remote": _COUNT,
    "tasks_unschedulable": _COUNT, "tasks_forced": _COUNT, "unmet_cooling_kwh": _KWH,
    "mean_cpu_util_frac": _FRAC, "mean_gpu_util_frac": _FRAC, "mean_mem_util_frac": _FRAC,
}
#: Metrics that are NaN when undefined (no IT energy, no capacity of that kind); every other one is a number.
NAN_ALLOWED = frozenset({"pue", "idle_share_of_it", "mean_cpu_util_frac", "mean_gpu_util_frac", "mean_mem_util_frac"})
_COUNTS = frozenset(k for k, b in METRIC_BOUNDS.items() if b is _COUNT)
_KG_PER_KWH = BOUNDS["carbon_g_per_kwh"].high / 1000.0
_USD_PER_KWH = (BOUNDS["price_usd_per_mwh"].low / 1000.0, BOUNDS["price_usd_per_mwh"].high / 1000.0)


def _ratio(num: str, den: str, zero: float) -> Callable[[Mapping[str, float]], float]:
    return lambda m: m[num] / m[den] if m[den] > 0 else zero


#: metric = f(metrics), as the simulator computes it (sim_core.result, sim_core.drain), checked to 1e-9
_IDENTITIES: tuple[tuple[str, tuple[str, ...], Callable[[Mapping[str, float]], float]], ...] = (
    ("pue", ("total_kwh", "it_kwh"), lambda m: m["total_kwh"] / m["it_kwh"] if m["it_kwh"] > 0 else m["pue"]),
    ("wue_l_per_kwh", ("water_l", "it_kwh"),
     lambda m: m["water_l"] / m["it_kwh"] if m["it_kwh"] > 0 else m["wue_l_per_kwh"]),
    ("idle_share_of_it", ("it_idle_kwh", "it_kwh"),
     lambda m: m["it_idle_kwh"] / m["it_kwh"] if m["it_kwh"] > 0 else m["idle_share_of_it"]),
    ("carbon_incl_transfer_kg", ("carbon_kg", "charged_carbon_kg", "transfer_carbon_kg"),
     lambda m: m["carbon_kg"] + m["charged_carbon_kg"] + m["transfer_carbon_kg"]),
    ("carbon_kg_per_gpu_hour", ("carbon_kg", "work_gpu_hours"), _ratio("carbon_kg", "work_gpu_hours", 0.0)),
    ("carbon_kg_per_core_hour", ("carbon_kg", "work_core_hours"), _ratio("carbon_kg", "work_core_hours", 0.0)),
    ("kwh_per_gpu_hour", ("total_kwh", "work_gpu_hours"), _ratio("total_kwh", "work_gpu_hours", 0.0)),
    ("cost_usd_per_gpu_hour", ("cost_usd", "work_gpu_hours"), _ratio("cost_usd", "work_gpu_hours", 0.0)),
    ("sla_violation_rate", ("sla_violations", "tasks_started"), _ratio("sla_violations", "tasks_started", 0.0)),
)
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
        b = METRIC_BOUNDS.get(name)
        if b is None:
            raise bad(name, "is not a metric of the run contract (gridshift.run_contract)")
        if math.isnan(v):
            if name not in NAN_ALLOWED:
                raise bad(name, "is NaN (only undefined ratios may be)")
            continue
        if not b.admits(v):
            raise bad(name, f"is outside {b.describe()} ({b.reason})")
        if name in _COUNTS and v != int(v):
            raise bad(name, "is a count and not a whole number")
    known = {k: v for k, v in metrics.items() if not math.isnan(v)}
    for name, terms, f, why in _CEILINGS:
        if name in known and all(t in known for t in terms):
            ceiling = f(known)
            if known[name] > ceiling and not _close(known[name], ceiling):
                raise bad(name, f"is above {ceiling!r}: {why}")
    for name, terms, f in _IDENTITIES:
        if name in known and all(t in known for t in terms):
            want = f(known)
            if not _close(known[name], want):
                raise bad(name, f"breaks its identity with {', '.join(terms)} (expected {want!r})")
