"""Workload tables: trace tasks as the trace has them, and the derived tasks of a target year.

The tables list fields of the registry (``gridshift.fields``); their Pandera models are generated from it.
"""

from __future__ import annotations

from gridshift.fields import FIELDS, table
from warehouse.schemas.models import dataframe_model

TRACE_TASKS = table(
    "trace_tasks",
    "One row per task of a raw trace file, as the trace has it, in normalized units.\n\n"
    "Requests are per instance (a task runs ``inst_num`` instances); times are seconds from the trace's origin. "
    "Nothing is filtered here: failed, unfinished and odd rows are kept (a duplicated task row keeps its first "
    "occurrence, and the duplicates are counted by the ingest), but every value must be possible: finite, "
    "non-negative, within ``gridshift.bounds`` (the same bounds as ``workload_tasks``). A file with an "
    "impossible value is refused as a whole.",
    [FIELDS["source"].but(description="trace id, e.g. alibaba-2020"), "raw_sha256", "task_key", "line", "job_name",
     "task_name", "inst_num", "status", "arrival_s", "start_s", "end_s", "cpu_cores_per_inst", "gpus_per_inst",
     "mem_gb_per_inst", "gpu_type", "job_status", "job_user"],
    ["source", "raw_sha256", "task_key"])

WORKLOAD_TASKS = table(
    "workload_tasks",
    "The tasks of one workload for one UTC year; the bundle's tasks.parquet is a selection.\n\n"
    "Derivation (docs/workload.md): filter → normalize → bandwidth → extend to the year → arrivals. A "
    "(workload, year) set is replaced as a whole; its parameters are in ``workload_runs``.",
    ["workload", "year", "task_id", "arrival_ts_utc", "duration_s", "cpu_cores", "gpus", "mem_gb", "gpu_mem_gb",
     "bandwidth_gb", "source_line", "layer"],
    ["workload", "year", "task_id"])

WORKLOAD_RUNS = table(
    "workload_runs", "The parameters and inputs of the derivation stored for each (workload, year).",
    ["workload", "year", "params_json", "params_sha256", "n_tasks", "n_source_rows", "n_kept", "dropped_json",
     "raw_sha256s", "created_at"],
    ["workload", "year"])

TraceTasks = dataframe_model(TRACE_TASKS, "TraceTasks")
WorkloadTasks = dataframe_model(WORKLOAD_TASKS, "WorkloadTasks")
WorkloadRuns = dataframe_model(WORKLOAD_RUNS, "WorkloadRuns")
