"""Size each site's datacenter for the demand the model sends it: the default cluster of a bundle.

A cluster much larger than its load measures idle power, not scheduling (docs/model.md §4a). So the
default capacities are derived from the bundle's own workload:

1. **Demand over time.** Every task's request (cores, GPUs, memory) is spread over the 15-minute
   steps it runs in, weighted by the seconds it runs inside each (the simulator's own accounting):
   ``D_r(t)`` for resource ``r``.
2. **Each site's share.** A task originates at site ``d`` with the simulator's origin probability
   (``gridshift.origin``: population weight × local-time activity at its arrival step), so under
   ``local_only`` site ``d`` sees ``S_{d,r}(t) = Σ_i p_d(arrival_i) r_i overlap_i(t)`` in expectation.
3. **Capacity.** ``cap_{d,r} = mean_t S_{d,r}(t) / target_utilization``, never below the largest single
   request (so every task fits at its origin), rounded up to whole CPU servers (``cores_per_server``),
   whole GPUs and whole GB.

The default target utilization, **0.5** (``gridshift.export_defaults.TARGET_UTILIZATION``, with its
sources), is a mean allocated share of half the installed capacity. It leaves 2× headroom over the
mean for the peaks; the p99/mean ratio of each site's demand is recorded so a user can see
whether that covers them (docs/bundles.md).
"""

from __future__ import annotations

import datetime as dt
import math
from dataclasses import dataclass

import numpy as np
import polars as pl

from gridshift.errors import GridshiftError
from gridshift.export_defaults import TARGET_UTILIZATION
from gridshift.origin import local_hours, probabilities
from gridshift.timestep import STEP_S

RESOURCES = (("cpu_cores", "total_cores"), ("gpus", "total_gpus"), ("mem_gb", "total_mem_gb"))


@dataclass(frozen=True)
class SiteSizing:
    """The sized capacities of one site and the demand they were derived from."""

    location: str
    capacity: dict[str, float]  # total_cores / total_gpus / total_mem_gb
    mean_demand: dict[str, float]  # per request column, time-weighted mean over the year
    p99_demand: dict[str, float]

    def record(self) -> dict:
        """What the manifest keeps about this site's sizing (rounded: the content is hashed)."""
        return {
            "capacity": {k: round(v, 6) for k, v in self.capacity.items()},
            "mean_demand": {k: round(v, 6) for k, v in self.mean_demand.items()},
            "p99_demand": {k: round(v, 6) for k, v in self.p99_demand.items()},
        }


def demand_by_site(tasks: pl.DataFrame, probs: np.ndarray, start_us: int, n_steps: int, column: str) -> np.ndarray:
    """Expected time-weighted demand of ``column`` per site and step, (n_dc, n_steps).

    Vectorised like the engine's booking: the first and last steps of a task get their fractions, the
    whole steps between go through a difference array.
    """
    a = (tasks["arrival_ts_utc"].dt.epoch("us").to_numpy() - start_us) / 1e6
    f = a + tasks["duration_s"].to_numpy()
    r = tasks[column].to_numpy().astype(np.float64)
    ja = np.clip((a // STEP_S).astype(np.int64), 0, n_steps - 1)
    jf = np.floor(f / STEP_S).astype(np.int64)
    same = jf == ja
    end_first = np.where(same, f, (ja + 1) * STEP_S)
    first = r * (end_first - a) / STEP_S
    inside = ~same & (jf < n_steps)
    last = np.where(inside, r * (f - jf * STEP_S) / STEP_S, 0.0)
    out = np.empty((probs.shape[0], n_steps))
    for d in range(probs.shape[0]):
        w = probs[d, ja]
        part = np.bincount(ja, weights=w * first, minlength=n_steps)
        part += np.bincount(np.where(inside, jf, 0), weights=w * last, minlength=n_steps)
        diff = np.zeros(n_steps + 1)
        whole = ~same
        np.add.at(diff, ja[whole] + 1, (w * r)[whole])
        np.add.at(diff, np.minimum(jf[whole], n_steps), -(w * r)[whole])
        out[d] = part[:n_steps] + np.cumsum(diff)[:n_steps]
    return out


def size_sites(tasks: pl.DataFrame, codes: list[str], timezones: list[str], weights: list[float], year: int, *,
               target_utilization: float = TARGET_UTILIZATION, cores_per_server: float = 64.0) -> list[SiteSizing]:
    """Capacities per site for ``tasks`` at ``target_utilization`` (see the module docstring)."""
    if not 0 < target_utilization <= 1:
        raise GridshiftError(f"--target-utilization must be in (0, 1], got {target_utilization}")
    if tasks.height == 0:
        raise GridshiftError("cannot size datacenters from a workload without tasks (use --datacenters reference "
                             "or a file)")
    start = dt.datetime(year, 1, 1, tzinfo=dt.UTC)
    n_steps = int((dt.datetime(year + 1, 1, 1, tzinfo=dt.UTC) - start).total_seconds()) // STEP_S
    probs = probabilities(weights, local_hours(timezones, start, n_steps, STEP_S))
    start_us = int(start.timestamp()) * 1_000_000
    sites = {code: SiteSizing(code, {}, {}, {}) for code in codes}
    for column, key in RESOURCES:
        demand = demand_by_site(tasks, probs, start_us, n_steps, column)
        biggest = float(tasks[column].max())
        for d, code in enumerate(codes):
            mean = float(demand[d].mean())
            cap = max(mean / target_utilization, biggest)
            if key == "total_cores":
                cap = math.ceil(cap / cores_per_server - 1e-9) * cores_per_server
            else:
                cap = float(math.ceil(cap - 1e-9))
            sites[code].capacity[key] = max(cap, cores_per_server if key == "total_cores" else 0.0)
            sites[code].mean_demand[column] = mean
            sites[code].p99_demand[column] = float(np.quantile(demand[d], 0.99))
    for s in sites.values():
        if s.capacity["total_mem_gb"] <= 0:
            s.capacity["total_mem_gb"] = 1.0
    return [sites[c] for c in codes]
