"""Workload tables: trace tasks as the trace has them, and the derived tasks of a target year."""

from __future__ import annotations

import pandera.polars as pa

from gridshift import columns as C
from gridshift.columns import UtcDatetime


class TraceTasks(pa.DataFrameModel):
    """One row per task of a raw trace file, as the trace has it, in normalized units.

    Requests are per instance (a task runs ``inst_num`` instances); times are seconds from the
    trace's origin. Nothing is filtered here: failed, unfinished and odd rows are kept (a
    duplicated task row keeps its first occurrence, and the duplicates are counted by the ingest),
    but every value must be possible: finite, non-negative, within ``gridshift.bounds`` (the same
    bounds as ``workload_tasks``). A file with an impossible value is refused as a whole.
    """

    source: str = pa.Field(description="trace id, e.g. alibaba-2020")
    raw_sha256: str = C.sha256("sha256 of the raw file the row came from")
    task_key: str = pa.Field(description="job_name/task_name (2020) or pod name (2023)")
    line: int = pa.Field(ge=1, description="line of the row in the raw CSV")
    job_name: str
    task_name: str = pa.Field(nullable=True)
    inst_num: int = pa.Field(ge=0, nullable=True, description="instances of the task")
    status: str = pa.Field(nullable=True, description="task status / pod phase as in the trace")
    arrival_s: float = C.bounded("trace_time_s", nullable=True, metadata={"unit": "s from trace origin"})
    start_s: float = C.bounded("trace_time_s", nullable=True, metadata={"unit": "s from trace origin"})
    end_s: float = C.bounded("trace_time_s", nullable=True, metadata={"unit": "s from trace origin"})
    cpu_cores_per_inst: float = C.bounded("cpu_cores", nullable=True,
                                          metadata={"unit": "cores", "raw": "plan_cpu / 100, cpu_milli / 1000"})
    gpus_per_inst: float = C.bounded("gpus", nullable=True,
                                     metadata={"unit": "GPUs", "raw": "plan_gpu / 100, num_gpu × gpu_milli / 1000"})
    mem_gb_per_inst: float = C.bounded("mem_gb", nullable=True, metadata={"unit": "GB"})
    gpu_type: str = pa.Field(nullable=True)
    job_status: str = pa.Field(nullable=True, description="status of the task's job (job table)")
    job_user: str = pa.Field(nullable=True)

    class Config:
        strict = True
        unique = ["source", "raw_sha256", "task_key"]


class WorkloadTasks(pa.DataFrameModel):
    """The tasks of one workload for one UTC year; the bundle's tasks.parquet is a selection.

    Derivation (docs/workload.md): filter → normalize → bandwidth → extend to the year → arrivals.
    A (workload, year) set is replaced as a whole; its parameters are in ``workload_runs``.
    """

    workload: str = C.workload_name()
    year: int = C.year()
    task_id: int = pa.Field(ge=0, description="0.. in arrival order")
    arrival_ts_utc: UtcDatetime = C.utc("arrival time, UTC")
    duration_s: float = C.bounded("duration_s", metadata={"unit": "s", "derivation": "end - start of the source task"})
    cpu_cores: float = C.bounded("cpu_cores", metadata={"unit": "cores", "derivation": "plan_cpu/100 × inst_num"})
    gpus: float = C.bounded("gpus", metadata={"unit": "GPUs", "derivation": "plan_gpu/100 × inst_num (NaN → 0)"})
    mem_gb: float = C.bounded("mem_gb", metadata={"unit": "GB", "derivation": "plan_mem × inst_num"})
    gpu_mem_gb: float = C.bounded("gpu_mem_gb", metadata={"unit": "GB",
                                                          "derivation": "gpus × memory of the GPU type"})
    bandwidth_gb: float = C.bounded("bandwidth_gb", metadata={"unit": "GB", "derivation": "input-size model"})
    source_line: int = pa.Field(ge=1, description="line of the source task in the raw table")
    layer: int = pa.Field(ge=0, description="load-factor layer (0 = the trace itself)")

    class Config:
        strict = True
        unique = ["workload", "year", "task_id"]


class WorkloadRuns(pa.DataFrameModel):
    """The parameters and inputs of the derivation stored for each (workload, year)."""

    workload: str = C.workload_name()
    year: int = C.year()
    params_json: str = pa.Field(description="canonical JSON of every derivation parameter")
    params_sha256: str = C.sha256("sha256 of params_json")
    n_tasks: int = pa.Field(ge=0)
    n_source_rows: int = pa.Field(ge=0)
    n_kept: int = pa.Field(ge=0, description="source tasks kept by the filter")
    dropped_json: str = pa.Field(description="source rows dropped, per reason")
    raw_sha256s: str = pa.Field(description="JSON list of the raw files used (sha256)")
    created_at: UtcDatetime = C.utc("UTC")

    class Config:
        strict = True
        unique = ["workload", "year"]
