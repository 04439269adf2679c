"""What a benchmark run measures: the per-run values of the metrics declared in ``gridshift.metrics``.

Metric values are the run's ``RunResult.totals`` unchanged (a drained run's: every policy over the same work,
docs/simulation.md "How a run ends"), plus three utilisation means computed
from ``RunResult.steps`` (:func:`run_metrics`). :func:`run_series` keeps the per-step, per-DC columns
the time-series figure needs (stored with a run so that a figure never needs a re-run).
"""

from __future__ import annotations

import math

import numpy as np
import polars as pl

from gridshift import metrics as M
from gridshift.results import SERIES

from ..result import RunResult
from ..scenario import Scenario

#: The policy every savings percentage is relative to (paired per seed).
BASELINE = "local_only"


# Every metric is declared in gridshift.metrics (name, unit, aggregation, range, meaning); these are its views.
#: the built-in metrics (``gridshift.metrics.declared()`` adds those declared at run time)
METRICS: tuple[M.Metric, ...] = M.METRICS


def metric_names() -> tuple[str, ...]:
    """Every declared metric's name, in output order."""
    return M.names()


METRIC_NAMES: tuple[str, ...] = tuple(m.name for m in METRICS)
#: Resource metrics where less is better: these get a savings-vs-local_only percentage.
SAVINGS_METRICS = tuple(m.name for m in METRICS if m.savings)
#: Per-step, per-DC columns kept for the time-series figure (and stored with a run), with their types
#: (declared with the run object's format: ``gridshift.results.SERIES``).
SERIES_SCHEMA: dict[str, pl.DataType] = SERIES.polars_schema()


def run_metrics(result: RunResult, scenario: Scenario) -> dict[str, float]:
    """Every declared metric (``gridshift.metrics``) for one run, as floats.

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
    for m in M.declared():
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
