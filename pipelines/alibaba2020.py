"""Alibaba PAI GPU cluster trace 2020 (cluster-trace-gpu-v2020, CC-BY-4.0).

The trace ships headerless CSVs inside ``*.tar.gz``; the column names are those of the
``*.header`` files next to them (``alibaba/gpu-v2020/`` in the mirror). Read straight from the
tar.gz bytes — nothing is unpacked to disk. Units: times in seconds from the trace origin,
``plan_cpu`` in percent of a core (600 = 6 cores), ``plan_gpu`` in percent of a GPU (50 = half a
GPU), ``plan_mem`` in GB; the requests are per instance (a task runs ``inst_num`` instances).

Structural faults fail the whole file with a :class:`DataError` naming the file and line: a line
with the wrong number of fields, or a time that is not a number. Row faults never crash the load
and are never silently dropped: a duplicated task row (same job and task name; the first is kept)
or a row without a job name is counted per reason, and an unparseable resource value becomes null
and is counted (the derivation then drops the row under a named reason).
"""

from __future__ import annotations

import io
import tarfile
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import polars as pl

from gridshift.errors import DataError, SourceUnavailableError
from gridshift.home import safe_join
from pipelines.raw import RawFile, read_mirror

SOURCE = "alibaba-2020"
LICENSE = "CC-BY-4.0; attribution: Alibaba Group, cluster-trace-gpu-v2020 (https://github.com/alibaba/clusterdata)"
MIRROR_DIR = "alibaba/gpu-v2020"

# Verbatim from the trace's ``*.header`` files (a test checks them against the mirror).
TASK_COLUMNS = ["job_name", "task_name", "inst_num", "status", "start_time", "end_time", "plan_cpu",
                "plan_mem", "plan_gpu", "gpu_type"]
JOB_COLUMNS = ["job_name", "inst_id", "user", "status", "start_time", "end_time"]
MACHINE_COLUMNS = ["machine", "gpu_type", "cap_cpu", "cap_mem", "cap_gpu"]
TABLES = {
    "task": ("pai_task_table.tar.gz", TASK_COLUMNS),
    "job": ("pai_job_table.tar.gz", JOB_COLUMNS),
    "machine": ("pai_machine_spec.tar.gz", MACHINE_COLUMNS),
}

TRACE_TASKS_COLUMNS = [
    "source", "raw_sha256", "task_key", "line", "job_name", "task_name", "inst_num", "status", "arrival_s",
    "start_s", "end_s", "cpu_cores_per_inst", "gpus_per_inst", "mem_gb_per_inst", "gpu_type", "job_status",
    "job_user",
]


# --------------------------------------------------------------------------- fetch
def fetch_table(table: str, *, trace_dir: Path | None = None, mirror: Path | None = None) -> RawFile:
    """The raw ``.tar.gz`` of one trace table: from ``trace_dir`` (a folder holding the trace's
    files) or else from the mirror's ``alibaba/gpu-v2020/``. A live download plugs in here."""
    name = TABLES[table][0]
    if trace_dir is not None:
        path = safe_join(Path(trace_dir), name)
        if not path.is_file():
            raise SourceUnavailableError(f"{SOURCE}: {name} not found in trace dir {trace_dir} (looked for {path})")
        return RawFile(source=SOURCE, uri=path.as_uri(), content=path.read_bytes())
    return read_mirror(mirror, f"{MIRROR_DIR}/{name}", SOURCE)


# --------------------------------------------------------------------------- read
def extract_csv(raw: RawFile) -> tuple[str, bytes]:
    """The one ``.csv`` member of a tar.gz, read in memory. Returns (file label, bytes)."""
    try:
        with tarfile.open(fileobj=io.BytesIO(raw.content), mode="r:gz") as tf:
            members = [m for m in tf.getmembers() if m.isfile() and m.name.endswith(".csv")]
            if len(members) != 1:
                raise DataError(
                    f"expected exactly one .csv member in the archive, found {[m.name for m in members]}",
                    file=raw.uri,
                )
            fh = tf.extractfile(members[0])
            assert fh is not None
            return f"{raw.uri}!{members[0].name}", fh.read()
    except (tarfile.TarError, OSError, EOFError) as exc:
        raise DataError(f"not a readable tar.gz archive: {exc}", file=raw.uri) from exc


def check_field_counts(content: bytes, n_columns: int, file: str) -> int:
    """Refuse any line whose number of fields is not ``n_columns``; return the number of lines.

    Vectorized over the bytes (commas between newlines); the trace has no quoted fields.
    """
    buf = np.frombuffer(content, dtype=np.uint8)
    if buf.size == 0:
        return 0
    nl = np.flatnonzero(buf == 10)
    if buf[-1] != 10:
        nl = np.append(nl, buf.size)  # last line without a newline
    commas = np.concatenate([[0], np.cumsum(buf == 44)])
    ends = nl
    starts = np.concatenate([[0], nl[:-1] + 1])
    per_line = commas[ends] - commas[starts]
    bad = np.flatnonzero(per_line != n_columns - 1)
    if bad.size:
        lines = (bad + 1).tolist()
        values = [content[starts[i]:ends[i]].decode("utf8", "replace")[:80] for i in bad[:10]]
        raise DataError(
            f"{bad.size} line(s) do not have {n_columns} comma-separated fields "
            f"(first has {int(per_line[bad[0]]) + 1})",
            file=file, rows=lines, values=values,
        )
    return int(nl.size)


def read_headerless(raw: RawFile, columns: list[str]) -> tuple[pl.DataFrame, str]:
    """Read a headerless trace table as text columns plus ``line`` (1-based line in the CSV)."""
    file, content = extract_csv(raw)
    if b'"' in content:
        raise DataError("quoted fields are not part of this trace's format", file=file)
    n = check_field_counts(content, len(columns), file)
    if n == 0:
        return pl.DataFrame(schema={c: pl.String for c in columns} | {"line": pl.Int64}), file
    try:
        df = pl.read_csv(io.BytesIO(content), has_header=False, new_columns=columns, infer_schema=False)
    except Exception as exc:  # polars raises several types for malformed CSV
        raise DataError(f"cannot parse CSV: {exc}", file=file) from exc
    if df.height != n:
        raise DataError(f"read {df.height} rows but the file has {n} lines", file=file)
    return df.with_columns(line=pl.int_range(1, df.height + 1, dtype=pl.Int64)), file


def parse_number(df: pl.DataFrame, col: str, file: str, *, strict: bool) -> tuple[pl.Series, int]:
    """Text → Float64. Empty or NaN → null. Non-numeric text: DataError (``strict``, with the
    lines) or null and counted. Returns (values, number of unparseable values)."""
    txt = df[col].str.strip_chars()
    val = txt.cast(pl.Float64, strict=False)
    bad = val.is_null() & txt.is_not_null() & (txt != "")
    n_bad = int(bad.sum())
    if n_bad and strict:
        rows = df.filter(bad)
        raise DataError(
            f"{n_bad} value(s) are not numbers (seconds from the trace origin)",
            file=file, column=col, rows=rows["line"].head(10).to_list(), values=rows[col].head(10).to_list(),
        )
    return val.fill_nan(None), n_bad


def _text(s: pl.Series) -> pl.Series:
    """Stripped text; empty → null."""
    return s.str.strip_chars().replace("", None)


@dataclass
class ParsedTrace:
    """A trace table parsed into ``trace_tasks`` rows, with its row faults counted."""

    tasks: pl.DataFrame
    n_rows: int
    dropped: dict[str, int] = field(default_factory=dict)  # rows not in ``tasks``
    issues: dict[str, int] = field(default_factory=dict)  # values set to null, joins that missed
    file: str = ""


def dedupe(df: pl.DataFrame, key: str, dropped: dict[str, int], reason: str = "duplicate_task") -> pl.DataFrame:
    """Keep the first row (lowest line) per key; count the others."""
    first = df.sort("line").filter(pl.col(key).is_first_distinct())
    dropped[reason] = df.height - first.height
    return first


def parse_task_table(raw: RawFile) -> ParsedTrace:
    """``pai_task_table`` → ``trace_tasks`` rows (per-instance requests in cores, GPUs, GB)."""
    df, file = read_headerless(raw, TASK_COLUMNS)
    dropped: dict[str, int] = {}
    issues: dict[str, int] = {}
    start, _ = parse_number(df, "start_time", file, strict=True)
    end, _ = parse_number(df, "end_time", file, strict=True)
    res = {}
    for col in ("inst_num", "plan_cpu", "plan_mem", "plan_gpu"):
        res[col], n_bad = parse_number(df, col, file, strict=False)
        if n_bad:
            issues[f"unparseable_{col}"] = n_bad
    inst = res["inst_num"]
    inst_ok = inst.is_null() | ((inst == inst.round()) & (inst.abs() < 2**53))
    if not inst_ok.all():
        issues["unparseable_inst_num"] = issues.get("unparseable_inst_num", 0) + int((~inst_ok).sum())
    out = pl.DataFrame({
        "line": df["line"],
        "job_name": _text(df["job_name"]),
        "task_name": _text(df["task_name"]),
        "inst_num": pl.select(pl.when(inst_ok).then(inst)).to_series().cast(pl.Int64),
        "status": _text(df["status"]),
        "arrival_s": start,
        "start_s": start,
        "end_s": end,
        "cpu_cores_per_inst": res["plan_cpu"] / 100.0,
        "gpus_per_inst": res["plan_gpu"] / 100.0,
        "mem_gb_per_inst": res["plan_mem"],
        "gpu_type": _text(df["gpu_type"]),
    }).with_columns(
        source=pl.lit(SOURCE, dtype=pl.String),
        raw_sha256=pl.lit(raw.sha256, dtype=pl.String),
        task_key=pl.concat_str([pl.col("job_name"), pl.lit("/"), pl.col("task_name").fill_null("")]),
        job_status=pl.lit(None, dtype=pl.String),
        job_user=pl.lit(None, dtype=pl.String),
    )
    no_key = out.filter(pl.col("job_name").is_null())
    dropped["missing_job_name"] = no_key.height
    out = dedupe(out.filter(pl.col("job_name").is_not_null()), "task_key", dropped)
    return ParsedTrace(out.select(TRACE_TASKS_COLUMNS), df.height, dropped, issues, file)


def parse_job_table(raw: RawFile) -> tuple[pl.DataFrame, dict[str, int]]:
    """``pai_job_table`` → (job_name, job_user, job_status, job_start_s, job_end_s), one row per job."""
    df, file = read_headerless(raw, JOB_COLUMNS)
    start, _ = parse_number(df, "start_time", file, strict=True)
    end, _ = parse_number(df, "end_time", file, strict=True)
    jobs = pl.DataFrame({
        "job_name": _text(df["job_name"]), "job_user": _text(df["user"]), "job_status": _text(df["status"]),
        "job_start_s": start, "job_end_s": end, "line": df["line"],
    }).filter(pl.col("job_name").is_not_null())
    counts: dict[str, int] = {"job_rows": df.height}
    jobs = dedupe(jobs, "job_name", counts, "duplicate_job")
    return jobs.drop("line"), counts


def attach_jobs(parsed: ParsedTrace, jobs: pl.DataFrame) -> ParsedTrace:
    """Fill ``job_user`` and ``job_status`` from the job table; count tasks whose job is absent."""
    t = parsed.tasks.drop("job_user", "job_status").join(
        jobs.select("job_name", "job_user", "job_status"), on="job_name", how="left", maintain_order="left"
    )
    missing = int(t.filter(pl.col("job_user").is_null() & pl.col("job_status").is_null()).height)
    issues = dict(parsed.issues)
    issues["task_without_job"] = missing
    return ParsedTrace(t.select(TRACE_TASKS_COLUMNS), parsed.n_rows, parsed.dropped, issues, parsed.file)


def parse_machine_spec(raw: RawFile) -> pl.DataFrame:
    """``pai_machine_spec`` → (machine, gpu_type, cap_cpu_cores, cap_mem_gb, cap_gpus)."""
    df, file = read_headerless(raw, MACHINE_COLUMNS)
    out = {"machine": _text(df["machine"]), "gpu_type": _text(df["gpu_type"])}
    for col, name in (("cap_cpu", "cap_cpu_cores"), ("cap_mem", "cap_mem_gb"), ("cap_gpu", "cap_gpus")):
        out[name], _ = parse_number(df, col, file, strict=True)
    return pl.DataFrame(out)


def trace_frame(trace_tasks: pl.DataFrame) -> pl.DataFrame:
    """The columns the derivation reads (``workload_derive.TRACE_FRAME_COLUMNS``)."""
    return trace_tasks.select(
        source_line=pl.col("line"), status="status", inst_num="inst_num", arrival_s="arrival_s", start_s="start_s",
        end_s="end_s", cpu_cores_per_inst="cpu_cores_per_inst", gpus_per_inst="gpus_per_inst",
        mem_gb_per_inst="mem_gb_per_inst", gpu_type="gpu_type",
    )
