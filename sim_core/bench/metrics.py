"""What a benchmark run measures: the metric table (name, unit, meaning) and its per-run values.

Metric values are the run's ``RunResult.totals`` unchanged (a drained run's: every policy over the same work,
docs/simulation.md "How a run ends"), plus three utilisation means computed
from ``RunResult.steps`` (:func:`run_metrics`). :func:`run_series` keeps the per-step, per-DC columns
the time-series figure needs (stored with a run so that a figure never needs a re-run).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
import polars as pl

from ..result import RunResult
from ..scenario import Scenario

#: The policy every savings percentage is relative to (paired per seed).
BASELINE = "local_only"


@dataclass(frozen=True)
class Metric:
    name: str  # column in runs.parquet, metric name in the warehouse; = the RunResult.totals key
    unit: str
    description: str
    source: str = "totals"  # "totals" or "steps"


#: Every metric of a run, in output order. Names carry their unit; counts and fractions are
#: dimensionless (unit "count" / "fraction").
METRICS: tuple[Metric, ...] = (
    Metric("total_kwh", "kWh", "facility energy (IT + cooling + pumps), all DCs"),
    Metric("it_kwh", "kWh", "IT energy (CPU, GPU, memory, server fans), all DCs"),
    Metric("pue", "ratio", "total_kwh / it_kwh"),
    Metric("it_idle_kwh", "kWh", "IT energy of servers on but unused (the idle baseline)"),
    Metric("it_sleep_kwh", "kWh", "IT energy of servers asleep or off"),
    Metric("it_wake_kwh", "kWh", "IT energy of servers waking up"),
    Metric("idle_share_of_it", "fraction", "it_idle_kwh / it_kwh: IT energy of capacity on but unused"),
    Metric("cost_usd", "USD", "electricity cost: Σ total_kwh × price"),
    Metric("carbon_kg", "kg CO2eq", "operational emissions: Σ total_kwh × carbon intensity"),
    Metric("water_l", "L", "site cooling water (tower evaporation, drift, blowdown; hybrid pad evaporation)"),
    Metric("wue_l_per_kwh", "L/kWh", "water_l / it_kwh"),
    Metric("transfer_cost_usd", "USD", "egress cost of remote assignments"),
    Metric("transfer_kwh", "kWh", "network energy of remote assignments"),
    Metric("transfer_carbon_kg", "kg CO2eq", "emissions of that network energy"),
    Metric("cost_incl_transfer_usd", "USD", "cost_usd + charged_cost_usd + transfer_cost_usd (all arrived work)"),
    Metric("carbon_incl_transfer_kg", "kg CO2eq",
           "carbon_kg + charged_carbon_kg + transfer_carbon_kg (all arrived work)"),
    Metric("work_gpu_hours", "GPU-h", "GPU-hours of work done (nominal: GPUs x duration)"),
    Metric("work_core_hours", "core-h", "core-hours of work done (nominal: cores x duration)"),
    Metric("work_left_gpu_hours", "GPU-h", "GPU-hours left undone at the run's end (drain cap or window end)"),
    Metric("drain_steps", "count", "steps run past the window's end until the work finished (or the cap)"),
    Metric("charged_carbon_kg", "kg CO2eq", "carbon charged for the work left at the drain cap (run's own rate)"),
    Metric("carbon_kg_per_gpu_hour", "kg CO2eq/GPU-h", "carbon_kg / work_gpu_hours"),
    Metric("carbon_kg_per_core_hour", "kg CO2eq/core-h", "carbon_kg / work_core_hours"),
    Metric("kwh_per_gpu_hour", "kWh/GPU-h", "total_kwh / work_gpu_hours"),
    Metric("cost_usd_per_gpu_hour", "USD/GPU-h", "cost_usd / work_gpu_hours"),
    Metric("sla_violation_rate", "fraction", "tasks started that are late: sla_violations / tasks_started"),
    Metric("sla_violations", "count", "tasks late: finishing after their deadline (sim_core.sla.late_rule)"),
    Metric("mean_wait_s", "s", "mean arrival → start time of started tasks"),
    Metric("tasks", "count", "tasks arriving in the window"),
    Metric("tasks_started", "count", "tasks started in the window"),
    Metric("tasks_completed", "count", "tasks finished by the end of the run (its drain included)"),
    Metric("tasks_remote", "count", "tasks assigned to a DC other than their origin"),
    Metric("tasks_unschedulable", "count", "tasks that fit no DC"),
    Metric("tasks_forced", "count", "tasks assigned by force at the deferral limit"),
    Metric("unmet_cooling_kwh", "kWh", "cooling demand the plant could not meet"),
    Metric("mean_cpu_util_frac", "fraction", "busy cores / core capacity, capacity-weighted over DCs and steps",
           "steps"),
    Metric("mean_gpu_util_frac", "fraction", "busy GPUs / GPU capacity, capacity-weighted over DCs and steps",
           "steps"),
    Metric("mean_mem_util_frac", "fraction", "busy memory / memory capacity, capacity-weighted over DCs and steps",
           "steps"),
)
METRIC_NAMES: tuple[str, ...] = tuple(m.name for m in METRICS)
UNITS: dict[str, str] = {m.name: m.unit for m in METRICS}

#: Resource metrics where less is better: these get a savings-vs-local_only percentage.
SAVINGS_METRICS = ("total_kwh", "it_kwh", "cost_usd", "carbon_kg", "water_l", "transfer_cost_usd",
                   "cost_incl_transfer_usd", "carbon_incl_transfer_kg")

#: Per-step, per-DC columns kept for the time-series figure (and stored with a run), with their types.
SERIES_SCHEMA: dict[str, pl.DataType] = {
    "location": pl.String, "dc": pl.Int64, "step": pl.Int64, "ts_utc": pl.Datetime("us", "UTC"),
    "carbon_g_per_kwh": pl.Float64, "price_usd_per_mwh": pl.Float64, "total_kwh": pl.Float64,
    "assigned": pl.Int64, "started": pl.Int64,
    "busy_cores": pl.Float64, "cpu_util": pl.Float64, "gpu_util": pl.Float64, "mem_util": pl.Float64,
}


def run_metrics(result: RunResult, scenario: Scenario) -> dict[str, float]:
    """Every metric of ``METRICS`` for one run, as floats.

    Totals are copied from ``result.totals`` (``float()`` of the same value, exact). The
    utilisation means are capacity-weighted over DCs and steps:
    ``mean_cpu_util_frac = Σ_dc,step busy_cores / (steps × Σ_dc cap_cores)`` — the share of the
    cluster's core-steps in use (same for GPUs and memory); NaN if the cluster has no such capacity.
    """
    t = result.totals
    out: dict[str, float] = {}
    n_steps = int(t["steps"])
    caps = {"cpu": scenario.cap_cores, "gpu": scenario.cap_gpus, "mem": scenario.cap_mem_gb}
    busy = {"cpu": "busy_cores", "gpu": "busy_gpus", "mem": "busy_mem_gb"}
    for m in METRICS:
        if m.source == "totals":
            out[m.name] = float(t[m.name])
        else:
            r = m.name.split("_")[1]
            cap = math.fsum(float(c) for c in np.asarray(caps[r], dtype=np.float64)) * n_steps
            used = math.fsum(result.steps[busy[r]].to_list())
            out[m.name] = used / cap if cap > 0 else float("nan")
    return out


def run_series(result: RunResult) -> pl.DataFrame:
    """The ``SERIES_SCHEMA`` columns of a run's steps frame, in that order and with those types."""
    return result.steps.select(pl.col(c).cast(t) for c, t in SERIES_SCHEMA.items())
