"""Workload assets: ``workload_tasks`` partitioned by workload × year (wiring only).
# No "from __future__ import annotations": Dagster inspects the context annotation at runtime.

The asset calls ``warehouse.ingest_workload.ingest_workload`` (fetch → parse → validate → derive
→ validate → land → replace the (workload, year) set). Seed, load factor and the PAI 2020 trace
folder come from run config. A DataError fails the blocking schema check and writes nothing.
"""


from collections.abc import Iterator
from pathlib import Path
from typing import Optional

import dagster as dg

from dagster_project import checks
from dagster_project.assets.raw import feeding
from dagster_project.partitions import dimensions, year_of_key, years
from dagster_project.resources import GridshiftResource
from gridshift.errors import DataError
from scenario_builder.bundle import default_load_factor
from warehouse.ingest_workload import WORKLOADS, WorkloadReport, ingest_workload

workload_year = dg.MultiPartitionsDefinition(
    {"workload": dg.StaticPartitionsDefinition(list(WORKLOADS)), "year": years}
)


def workload_key(workload: str, year: int) -> dg.MultiPartitionKey:
    return dg.MultiPartitionKey({"workload": workload, "year": str(year)})


class WorkloadConfig(dg.Config):
    seed: int = 0
    # None: what a default bundle needs (scenario_builder.bundle.default_load_factor: the synthetic year at the
    # default scale, a trace at its own load)
    load_factor: Optional[float] = None  # noqa: UP045
    bandwidth_model: str = "ai"  # pipelines.workload.derive.BANDWIDTH_MODELS (docs/workload.md)
    trace_dir: str = ""  # folder with pai_task_table.tar.gz / pai_job_table.tar.gz (alibaba-2020)


def _split(context: dg.AssetExecutionContext) -> tuple[str, int]:
    dims = dimensions(context)
    return dims["workload"], year_of_key(dims["year"])


def report_metadata(report: WorkloadReport) -> dict:
    s = report.summary
    return {
        "tasks": report.n_tasks,
        "source_rows": report.n_source_rows,
        "kept": report.n_kept,
        "dropped": dg.MetadataValue.json(report.dropped),
        "issues": dg.MetadataValue.json(report.issues),
        "tasks_per_15min_mean": s["tasks_per_15min_mean"],
        "tasks_per_15min_p95": s["tasks_per_15min_p95"],
        "tasks_per_15min_max": s["tasks_per_15min_max"],
        "mean_cpu_cores": s["mean_cpu_cores"],
        "mean_gpus": s["mean_gpus"],
        "mean_mem_gb": s["mean_mem_gb"],
        "mean_bandwidth_gb": s["mean_bandwidth_gb"],
        "params_sha256": report.params_sha256,
        "raw_sha256s": dg.MetadataValue.json(report.raw_sha256s),
    }


@dg.asset(
    name="workload_tasks",
    group_name="workload",
    partitions_def=workload_year,
    deps=feeding("trace_tasks", "workload_tasks"),  # the traces and the reference shapes it derives from
    check_specs=[dg.AssetCheckSpec(
        checks.SCHEMA_CHECK, asset="workload_tasks", blocking=True,
        description="Pandera models TraceTasks / WorkloadTasks / WorkloadRuns, validated before the write; "
        "a failure writes nothing.",
    )],
    kinds={"duckdb", "polars"},
    description="Tasks of one workload for one UTC year (docs/workload.md): filter → normalize → "
    "input size → extend to the year → arrivals. The (workload, year) set is replaced as a whole.",
    pool="warehouse_write",
)
def workload_tasks(context: dg.AssetExecutionContext, config: WorkloadConfig,
                   gridshift: GridshiftResource) -> Iterator:
    workload, year = _split(context)
    try:
        report = ingest_workload(
            workload, year, home=gridshift.home_obj(), mirror=gridshift.mirror_path(),
            trace_dir=Path(config.trace_dir).expanduser() if config.trace_dir else None,
            seed=config.seed, load_factor=default_load_factor(workload) if config.load_factor is None
            else config.load_factor, bandwidth_model=config.bandwidth_model,
            live=gridshift.live,
        )
    except DataError as err:
        yield checks.schema_failed("workload_tasks", err)
        raise dg.Failure(description=str(err), metadata={"file": err.file or ""}) from err
    yield dg.Output(None, metadata=report_metadata(report))
    yield dg.AssetCheckResult(asset_key="workload_tasks", check_name=checks.SCHEMA_CHECK, passed=True,
                              metadata={"rows": report.n_tasks})


ASSETS = [workload_tasks]
