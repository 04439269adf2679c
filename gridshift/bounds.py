"""Plausibility bounds of every numeric value that crosses a contract: declared once.

The field registry (``gridshift.fields``) gives these ranges to its fields, and the warehouse's
Pandera models and the bundle validator (``gridshift.bundle``) both take them from there, so a value
the warehouse refuses can never reach the simulator through a bundle edited by hand, and the two
never drift apart. Each bound is (low, high, inclusive-low) with the
reason for it; values outside are refused by name, never clipped.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass


@dataclass(frozen=True)
class Bound:
    low: float
    high: float
    reason: str
    low_inclusive: bool = True

    def admits(self, x: float) -> bool:
        lo_ok = x >= self.low if self.low_inclusive else x > self.low
        return lo_ok and x <= self.high

    def describe(self) -> str:
        return f"{'[' if self.low_inclusive else '('}{self.low:g}, {self.high:g}]"


BOUNDS: dict[str, Bound] = {
    # grid signals
    "carbon_g_per_kwh": Bound(0.0, 5000.0, "no grid emits more than ~1,700 gCO2eq/kWh (coal, lifecycle); 5,000 "
                                           "leaves room for marginal-emission series"),
    "price_usd_per_mwh": Bound(-10_000.0, 100_000.0, "day-ahead price caps: EU harmonised max 4,000 EUR/MWh and "
                                                     "min -500 EUR/MWh, AEMO market price cap ~17,500 AUD/MWh"),
    "temp_c": Bound(-90.0, 60.0, "beyond the recorded extremes of surface air temperature (-89.2 / 56.7 degC)"),
    "wetbulb_c": Bound(-90.0, 60.0, "a wet-bulb never exceeds the dry-bulb"),
    "rh_pct": Bound(0.0, 100.0, "relative humidity is a percentage"),
    # network
    "usd_per_gb": Bound(0.0, 10.0, "published inter-region egress prices are below 0.25 USD/GB"),
    "throughput_mbps": Bound(0.0, 1e7, "a path carries data (> 0) and no WAN path exceeds 10 Tbit/s",
                             low_inclusive=False),
    "rtt_ms": Bound(0.0, 10_000.0, "0 is a datacenter to itself (a bundle's diagonal) or two sites closer than "
                                    "the model's resolution; the longest great-circle round trip is ~270 ms; 10 s "
                                    "is a broken path"),
    # tasks (sanity, not physics: orders of magnitude beyond any job in the published traces, and small
    # enough that every sum over a year of tasks stays finite)
    "duration_s": Bound(0.0, 1e9, "a task runs for some time (> 0) and for less than ~30 years",
                        low_inclusive=False),
    "cpu_cores": Bound(0.0, 1e7, "cores requested"),
    "gpus": Bound(0.0, 1e6, "GPUs requested (fractional allowed)"),
    "mem_gb": Bound(0.0, 1e9, "memory requested"),
    "gpu_mem_gb": Bound(0.0, 1e9, "GPU memory requested"),
    "bandwidth_gb": Bound(0.0, 1e9, "input data moved (1 EB at most)"),
    # task flexibility (bundle format 2; docs/workload.md "Flexibility")
    "max_delay_s": Bound(0.0, 1e9, "allowed delay before a task must start (its queue class); less than ~30 years"),
    "checkpoint_s": Bound(0.0, 86_400.0, "extra work per resume or rescale (checkpoint-restart); published "
                                          "checkpoint-restart delays are seconds to minutes, a day is a broken value"),
    "min_scale": Bound(1.0 / 1024.0, 1.0, "smallest allocation of an elastic task, as a fraction of its request (1 "
                                          "for a task that cannot shrink); at least 1/1024, the reciprocal of "
                                          "max_scale's ceiling, so that its speed 1 + m (min_scale - 1) >= min_scale "
                                          "stays > 0 (m = marginal_throughput <= 1): the engine divides work by it"),
    "max_scale": Bound(1.0, 1024.0, "largest allocation of an elastic task, as a multiple of its request (1 for a "
                                    "task that cannot grow)"),
    "marginal_throughput": Bound(0.0, 1.0, "throughput an extra unit of allocation adds, relative to the throughput "
                                           "per unit at the request (1 = linear speed-up)"),
    # raw traces (trace_tasks): times are seconds from the trace's own origin
    "trace_time_s": Bound(0.0, 1e9, "the published traces span weeks to months (PAI 2020 about 2 months, the 2023 "
                                    "pod lists about 5) from their origin; ~30 years is a broken value"),
    # datacenters
    "population_weight": Bound(0.0, 1e9, "relative weight of a location as task origin"),
    "total_cores": Bound(0.0, 1e9, "cores installed", low_inclusive=False),
    "total_gpus": Bound(0.0, 1e8, "GPUs installed (0 allowed)"),
    "total_mem_gb": Bound(0.0, 1e12, "memory installed", low_inclusive=False),
}


def get(name: str) -> Bound:
    return BOUNDS[name]


def markdown_table(ranges: Mapping[str, Bound | None], *, flag: str = "True or False") -> str:
    """A Markdown table of declared ranges (``None``: a flag), as docs/bundle_format.md lists them (a test
    checks the document equals this rendering of every declaration)."""
    rows = ["| parameter | valid range | why |", "|---|---|---|"]
    for name, b in ranges.items():
        rng, why = (flag, "a flag") if b is None else (b.describe(), b.reason.replace("|", "/"))
        rows.append(f"| `{name}` | {rng} | {why} |")
    return "\n".join(rows)
