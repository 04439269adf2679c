"""The table registry: one Pandera (polars) model per canonical table, the single declaration.

Everything else derives from these models: the DuckDB DDL (``warehouse.ddl``), the validation
before every write (``warehouse.load``), and the Dagster asset checks.
"""

from __future__ import annotations

from dataclasses import dataclass

import pandera.polars as pa

from warehouse.schemas.benchmark import BenchmarkMetrics, BenchmarkRuns, BenchmarkSeries
from warehouse.schemas.grid import GridCarbon, GridPrice, PartitionQuality, Weather
from warehouse.schemas.reference import EgressPrice, Locations, NetworkPath, RawFiles
from warehouse.schemas.workload import TraceTasks, WorkloadRuns, WorkloadTasks


@dataclass(frozen=True)
class Table:
    name: str
    model: type[pa.DataFrameModel]

    @property
    def primary_key(self) -> tuple[str, ...]:
        return tuple(self.model.Config.unique)

    @property
    def columns(self) -> list[str]:
        return list(self.model.to_schema().columns)

    @property
    def description(self) -> str:
        return (self.model.__doc__ or "").strip()


TABLES: dict[str, Table] = {
    t.name: t
    for t in (
        Table("raw_files", RawFiles),
        Table("locations", Locations),
        Table("grid_carbon", GridCarbon),
        Table("grid_price", GridPrice),
        Table("weather", Weather),
        Table("partition_quality", PartitionQuality),
        Table("egress_price", EgressPrice),
        Table("network_path", NetworkPath),
        Table("trace_tasks", TraceTasks),
        Table("workload_tasks", WorkloadTasks),
        Table("workload_runs", WorkloadRuns),
        Table("benchmark_runs", BenchmarkRuns),
        Table("benchmark_metrics", BenchmarkMetrics),
    )
}


#: frames validated by the same models before they are written outside the warehouse (no DuckDB table)
FRAMES: dict[str, Table] = {t.name: t for t in (Table("benchmark_series", BenchmarkSeries),)}


def table(name: str) -> Table:
    return TABLES[name]
