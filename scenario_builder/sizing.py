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
from pipelines.core.source import year_bounds

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


def _steps(tasks: pl.DataFrame, start_us: int, n_steps: int):
    """Each task's start and finish (s from the year's start), first and last step, whether they are one step,
    whether the last step is a part step inside the year, and the end of its time in its first step (the engine's
    booking: the first and last steps get their fractions, the whole steps between go through a difference array)."""
    a = (tasks["arrival_ts_utc"].dt.epoch("us").to_numpy() - start_us) / 1e6
    f = a + tasks["duration_s"].to_numpy()
    ja = np.clip((a // STEP_S).astype(np.int64), 0, n_steps - 1)
    jf = np.floor(f / STEP_S).astype(np.int64)
    same = jf == ja
    end_first = np.where(same, f, (ja + 1) * STEP_S)
    inside = ~same & (jf < n_steps)
    return a, f, ja, jf, same, inside, end_first


def _year_steps(year: int) -> tuple[dt.datetime, int]:
    """The year's first instant (UTC) and its number of steps."""
    start, end = year_bounds(year)
    return start, int((end - start).total_seconds()) // STEP_S


class Demand:
    """Expected time-weighted demand per site and step of every request column (module docstring, steps 1-2),
    accumulated batch by batch (:meth:`add`, in task order) so that a workload too large to hold is sized as it
    streams by. A step's partial sums are taken in task order whatever the batches; only the ends of the whole steps
    between (the difference array's + and -) interleave by batch, so batches change the last bits of a step's
    demand, never a capacity (tests/unit/scenario_builder/test_sizing.py)."""

    def __init__(self, probs: np.ndarray, year: int):
        #: (n_dc, n_steps): each site's origin probability at each step of the year
        self.probs = probs
        self.start, self.n_steps = _year_steps(year)
        if probs.shape[1] != self.n_steps:
            raise ValueError(f"origin probabilities for {probs.shape[1]} steps, the year has {self.n_steps}")
        self.start_us = int(self.start.timestamp()) * 1_000_000
        shape = (len(RESOURCES), probs.shape[0], self.n_steps)
        self._first, self._last, self._diff = np.zeros(shape), np.zeros(shape), np.zeros((*shape[:2], self.n_steps + 1))
        self.biggest = np.full(len(RESOURCES), -np.inf)
        self.n_tasks = 0

    @classmethod
    def of_sites(cls, timezones: list[str], weights: list[float], year: int) -> Demand:
        """The demand the simulator's origin model sends sites of these time zones and population weights."""
        start, n_steps = _year_steps(year)
        return cls(probabilities(weights, local_hours(timezones, start, n_steps, STEP_S)), year)

    def add(self, tasks: pl.DataFrame) -> None:
        """Add ``tasks`` (the next ones in the workload's order)."""
        if not tasks.height:
            return
        self.n_tasks += tasks.height
        n = self.n_steps
        a, f, ja, jf, same, inside, end_first = _steps(tasks, self.start_us, n)
        whole = ~same
        j_last, j_in, j_out = np.where(inside, jf, 0), ja[whole] + 1, np.minimum(jf[whole], n)
        for k, (column, _) in enumerate(RESOURCES):
            r = tasks[column].to_numpy().astype(np.float64)
            self.biggest[k] = max(self.biggest[k], float(r.max()))
            first = r * (end_first - a) / STEP_S
            last = np.where(inside, r * (f - jf * STEP_S) / STEP_S, 0.0)
            for d in range(self.probs.shape[0]):
                w = self.probs[d, ja]
                np.add.at(self._first[k, d], ja, w * first)
                np.add.at(self._last[k, d], j_last, w * last)
                np.add.at(self._diff[k, d], j_in, (w * r)[whole])
                np.add.at(self._diff[k, d], j_out, -(w * r)[whole])

    def of(self, column: str) -> np.ndarray:
        """(n_dc, n_steps): the demand of request column ``column``."""
        k = [c for c, _ in RESOURCES].index(column)
        return (self._first[k] + self._last[k]) + np.cumsum(self._diff[k], axis=1)[:, :self.n_steps]


def size_sites(demand: Demand, codes: list[str], *, target_utilization: float = TARGET_UTILIZATION,
               cores_per_server: float = 64.0) -> list[SiteSizing]:
    """Capacities of the sites ``codes`` (the order of ``demand``'s) for the workload whose demand is ``demand``
    at ``target_utilization`` (see the module docstring)."""
    if not 0 < target_utilization <= 1:
        raise GridshiftError(f"--target-utilization must be in (0, 1], got {target_utilization}")
    if demand.n_tasks == 0:
        raise GridshiftError("cannot size datacenters from a workload without tasks (use --datacenters reference "
                             "or a file)")
    sites = {code: SiteSizing(code, {}, {}, {}) for code in codes}
    for k, (column, key) in enumerate(RESOURCES):
        by_site = demand.of(column)
        biggest = float(demand.biggest[k])
        for d, code in enumerate(codes):
            mean = float(by_site[d].mean())
            cap = max(mean / target_utilization, biggest)
            if key == "total_cores":
                cap = math.ceil(cap / cores_per_server - 1e-9) * cores_per_server
            else:
                cap = float(math.ceil(cap - 1e-9))
            sites[code].capacity[key] = max(cap, cores_per_server if key == "total_cores" else 0.0)
            sites[code].mean_demand[column] = mean
            sites[code].p99_demand[column] = float(np.quantile(by_site[d], 0.99))
    for s in sites.values():
        if s.capacity["total_mem_gb"] <= 0:
            s.capacity["total_mem_gb"] = 1.0
    return [sites[c] for c in codes]
