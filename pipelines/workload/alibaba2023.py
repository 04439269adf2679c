"""Alibaba GPU cluster trace 2023 pod lists (cluster-trace-gpu-v2023, CC-BY-4.0).

``openb_pod_list_*.csv`` (with a header): ``name,cpu_milli,memory_mib,num_gpu,gpu_milli,gpu_spec,
qos,pod_phase,creation_time,deletion_time,scheduled_time``; times in seconds from the trace origin.
Normalized to the same ``trace_tasks`` rows as the PAI 2020 trace: one pod = one task with one
instance; arrival = ``creation_time``, run = ``scheduled_time`` → ``deletion_time``;
cores = cpu_milli / 1000; GPUs = num_gpu × gpu_milli / 1000 (``gpu_milli`` is the share of each
GPU); GB = memory_mib / 1024 (binary GB, as the 2020 trace's ``plan_mem``).
"""

from __future__ import annotations

import polars as pl

from gridshift.errors import DataError
from pipelines.core.raw import RawFile
from pipelines.core.tabular import read_csv_strings
from pipelines.workload.alibaba2020 import TRACE_TASKS_COLUMNS, dedupe
from pipelines.workload.base import Inputs, ParsedTrace, TraceInput, WorkloadSource
from pipelines.workload.derive import DeriveParams, Histogram

SOURCE = "alibaba-2023"
DEFAULT_RELPATH = "alibaba/gpu-v2023/openb_pod_list_default.csv"
COLUMNS = ["name", "cpu_milli", "memory_mib", "num_gpu", "gpu_milli", "gpu_spec", "qos", "pod_phase",
           "creation_time", "deletion_time", "scheduled_time"]
TIME_COLUMNS = ("creation_time", "deletion_time", "scheduled_time")
# Pods are observed until their deletion; "Running" pods carry a deletion time too, so their run
# interval is complete in the list. Only Pending (never scheduled) and Failed pods are not work done.
FINISHED_PHASES = ("Succeeded", "Running")
# Largest node of the 2023 cluster (openb_node_list_all_node.csv): 128 cores, 1 TiB, 8 GPUs.
MAX_NODE = {"max_instance_cpu_cores": 128.0, "max_instance_mem_gb": 1024.0, "max_instance_gpus": 8.0}


def parse(raw: RawFile) -> ParsedTrace:
    """One pod list → ``trace_tasks`` rows. Non-numeric times fail with the file and line;
    non-numeric requests become null and are counted; a repeated pod name keeps its first row."""
    file = raw.uri
    df = read_csv_strings(raw.content, file, COLUMNS).with_columns(
        line=pl.int_range(2, pl.len() + 2, dtype=pl.Int64)  # line 1 is the header
    )
    issues: dict[str, int] = {}
    num = {}
    for col in (*TIME_COLUMNS, "cpu_milli", "memory_mib", "num_gpu", "gpu_milli"):
        txt = df[col].str.strip_chars()
        val = txt.cast(pl.Float64, strict=False)
        bad = val.is_null() & txt.is_not_null() & (txt != "")
        if bad.any():
            rows = df.filter(bad)
            if col in TIME_COLUMNS:
                raise DataError(f"{int(bad.sum())} value(s) are not numbers (seconds from the trace origin)",
                                file=file, column=col, rows=rows["line"].head(10).to_list(),
                                values=rows[col].head(10).to_list())
            issues[f"unparseable_{col}"] = int(bad.sum())
        num[col] = val.fill_nan(None)
    text = {c: df[c].str.strip_chars().replace("", None) for c in ("name", "pod_phase", "gpu_spec")}
    out = pl.DataFrame({
        "line": df["line"],
        "job_name": text["name"],
        "status": text["pod_phase"],
        "arrival_s": num["creation_time"],
        "start_s": num["scheduled_time"],
        "end_s": num["deletion_time"],
        "cpu_cores_per_inst": num["cpu_milli"] / 1000.0,
        "gpus_per_inst": num["num_gpu"] * num["gpu_milli"] / 1000.0,
        "mem_gb_per_inst": num["memory_mib"] / 1024.0,
        "gpu_type": text["gpu_spec"],
    }).with_columns(
        source=pl.lit(SOURCE, dtype=pl.String),
        raw_sha256=pl.lit(raw.sha256, dtype=pl.String),
        task_key=pl.col("job_name"),
        task_name=pl.lit(None, dtype=pl.String),
        inst_num=pl.lit(1, dtype=pl.Int64),
        job_status=pl.lit(None, dtype=pl.String),
        job_user=pl.lit(None, dtype=pl.String),
    )
    dropped = {"missing_job_name": int(out["job_name"].null_count())}
    out = dedupe(out.filter(pl.col("job_name").is_not_null()), "task_key", dropped)
    return ParsedTrace(out.select(TRACE_TASKS_COLUMNS), df.height, dropped, issues, file)


class Alibaba2023(WorkloadSource):
    """A 2023 pod list from the mirror (``Inputs.pod_list``, default the default scheduler's list)."""

    name = SOURCE

    def default_params(self) -> DeriveParams:
        return DeriveParams(statuses=FINISHED_PHASES, **MAX_NODE)

    def load(self, year: int, base: DeriveParams, *, seed: int, load_factor: float, inputs: Inputs,
             histograms: dict[str, Histogram] | None) -> TraceInput:
        raw = self.read_mirror(inputs.mirror, inputs.pod_list or DEFAULT_RELPATH)
        return TraceInput(base.with_(seed=seed, load_factor=load_factor), trace_raw=raw, parsed=parse(raw))


TRACE = Alibaba2023()
