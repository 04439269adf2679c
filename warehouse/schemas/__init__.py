"""The table registry: each canonical table as a list of fields of ``gridshift.fields`` and a primary key.

Everything else derives from it: the Pandera models (generated, ``warehouse.schemas.models``), the DuckDB
DDL (``warehouse.ddl``), the validation before every write (``warehouse.load``), and the Dagster asset
checks.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandera.polars as pa

from gridshift.fields import TableSpec
from warehouse.schemas.benchmark import (
    BENCHMARK_METRICS,
    BENCHMARK_RUNS,
    BENCHMARK_SERIES,
    BenchmarkMetrics,
    BenchmarkRuns,
    BenchmarkSeries,
)
from warehouse.schemas.grid import (
    GRID_CARBON,
    GRID_PRICE,
    PARTITION_QUALITY,
    WEATHER,
    GridCarbon,
    GridPrice,
    PartitionQuality,
    Weather,
)
from warehouse.schemas.reference import (
    EGRESS_PRICE,
    LOCATIONS,
    NETWORK_PATH,
    RAW_FILES,
    EgressPrice,
    Locations,
    NetworkPath,
    RawFiles,
)
from warehouse.schemas.workload import (
    TRACE_TASKS,
    WORKLOAD_RUNS,
    WORKLOAD_TASKS,
    TraceTasks,
    WorkloadRuns,
    WorkloadTasks,
)


@dataclass(frozen=True)
class Table:
    spec: TableSpec
    model: type[pa.DataFrameModel]  # generated from ``spec``

    @property
    def name(self) -> str:
        return self.spec.name

    @property
    def primary_key(self) -> tuple[str, ...]:
        return self.spec.primary_key

    @property
    def columns(self) -> list[str]:
        return self.spec.columns

    @property
    def description(self) -> str:
        return self.spec.description


TABLES: dict[str, Table] = {
    t.name: t
    for t in (
        Table(RAW_FILES, RawFiles),
        Table(LOCATIONS, Locations),
        Table(GRID_CARBON, GridCarbon),
        Table(GRID_PRICE, GridPrice),
        Table(WEATHER, Weather),
        Table(PARTITION_QUALITY, PartitionQuality),
        Table(EGRESS_PRICE, EgressPrice),
        Table(NETWORK_PATH, NetworkPath),
        Table(TRACE_TASKS, TraceTasks),
        Table(WORKLOAD_TASKS, WorkloadTasks),
        Table(WORKLOAD_RUNS, WorkloadRuns),
        Table(BENCHMARK_RUNS, BenchmarkRuns),
        Table(BENCHMARK_METRICS, BenchmarkMetrics),
    )
}


#: frames validated by the same models before they are written outside the warehouse (no DuckDB table)
FRAMES: dict[str, Table] = {t.name: t for t in (Table(BENCHMARK_SERIES, BenchmarkSeries),)}


def table(name: str) -> Table:
    return TABLES[name]
