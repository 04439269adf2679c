"""Workload ingest: fetch → parse → validate → derive → validate → land raw → write.

``ingest_workload("alibaba-2020", 2023, home=..., trace_dir=...)`` turns a trace into the
``workload_tasks`` of one UTC year. The PAI 2020 tables come from ``trace_dir``, else the mirror,
else (``live=True``) the trace's public download (``pipelines.alibaba2020.fetch_table``).
Everything is parsed, derived and validated before anything is written, so bad input (a malformed
table, a failed check) writes nothing. Then:

1. the trace table's raw bytes are landed and its ``trace_tasks`` rows upserted, with the raw file's
   lineage row, in one transaction (``warehouse.ingest._commit``, as every other source);
2. the other raw inputs (job table, reference tables) are landed, and the (workload, year) set of
   ``workload_tasks`` and its ``workload_runs`` row are *replaced* (delete-then-insert, one
   transaction, ``warehouse.replace``), so a re-derivation never merges with an older one.

A failure in step 2 leaves step 1 in place (the trace's own table is valid on its own) and removes
the files step 2 landed. Same inputs + parameters + seed ⇒ identical ``workload_tasks``.
"""

from __future__ import annotations

import contextlib
import json
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import polars as pl

from gridshift.home import Home
from pipelines import alibaba2020, alibaba2023, synthetic_workload
from pipelines import workload_derive as wd
from pipelines.alibaba2020 import ParsedTrace
from pipelines.raw import RawFile, land, read_mirror
from warehouse.db import read_table
from warehouse.ingest import _commit
from warehouse.load import validate
from warehouse.replace import Replacement, replace_partitions

WORKLOADS = ("alibaba-2020", "alibaba-2023", "synthetic")


@dataclass
class WorkloadReport:
    """What one workload derivation kept, dropped (per reason) and produced."""

    workload: str
    year: int
    n_tasks: int
    n_source_rows: int
    n_kept: int
    dropped: dict[str, int]
    adjustments: dict[str, int]
    issues: dict[str, int]
    summary: dict[str, float]
    params_sha256: str
    params_json: str
    raw_sha256s: list[str]
    source_weeks: int
    layers: int
    extra: dict = field(default_factory=dict)

    @property
    def n_dropped(self) -> int:
        return sum(self.dropped.values())

    def to_dict(self) -> dict:
        return asdict(self)


@dataclass
class PreparedWorkload:
    """Everything an ingest writes, parsed, derived and validated; nothing written yet."""

    workload: str
    year: int
    trace_raw: RawFile | None
    trace_tasks: pl.DataFrame | None
    other_raws: list[RawFile]
    derivation: wd.Derivation
    tasks: pl.DataFrame
    run: pl.DataFrame
    report: WorkloadReport


def default_params(workload: str) -> wd.DeriveParams:
    """The documented defaults per source (docs/workload.md)."""
    if workload == "alibaba-2023":
        return wd.DeriveParams(statuses=alibaba2023.FINISHED_PHASES, **alibaba2023.MAX_NODE)
    if workload in WORKLOADS:
        return wd.DeriveParams()
    raise ValueError(f"unknown workload {workload!r}; expected one of {WORKLOADS}")


def _reference(mirror: Path | None, relpath: str) -> RawFile:
    return read_mirror(mirror, relpath, wd.REFERENCE_SOURCE)


def _nonzero(d: dict[str, int]) -> dict[str, int]:
    return {k: int(v) for k, v in sorted(d.items()) if v}


def prepare_workload(
    workload: str, year: int, *, trace_dir: Path | None = None, mirror: Path | None = None, seed: int = 0,
    load_factor: float = 1.0, params: wd.DeriveParams | None = None,
    pod_list: str = alibaba2023.DEFAULT_RELPATH, synthetic: dict | None = None,
    live: bool = False, home: Home | None = None,
) -> PreparedWorkload:
    """Fetch, parse, derive and validate one (workload, year). Raises before any write.

    ``live``: download PAI 2020 tables that neither ``trace_dir`` nor the mirror holds (checksummed;
    a copy already landed under ``home`` is reused without a request)."""
    base = params or default_params(workload)
    parsed: ParsedTrace | None = None
    trace_raw: RawFile | None = None
    others: list[RawFile] = []
    issues: dict[str, int] = {}
    extra: dict = {}
    hist_raw = _reference(mirror, wd.REFERENCE_HISTOGRAMS_RELPATH) if (
        workload == "synthetic" or base.bandwidth_model == "reference") else None
    hists = wd.parse_histograms(hist_raw) if hist_raw is not None else None
    if hist_raw is not None:
        others.append(hist_raw)

    if workload == "alibaba-2020":
        src = {"trace_dir": trace_dir, "mirror": mirror, "live": live, "home": home}
        trace_raw = alibaba2020.fetch_table("task", **src)
        job_raw = alibaba2020.fetch_table("job", **src)
        parsed = alibaba2020.parse_task_table(trace_raw)
        jobs, job_counts = alibaba2020.parse_job_table(job_raw)
        parsed = alibaba2020.attach_jobs(parsed, jobs)
        others.insert(0, job_raw)
        extra["job_table"] = job_counts
        p = base.with_(seed=seed, load_factor=load_factor)
    elif workload == "alibaba-2023":
        trace_raw = alibaba2023.fetch(mirror=mirror, relpath=pod_list)
        parsed = alibaba2023.parse(trace_raw)
        p = base.with_(seed=seed, load_factor=load_factor)
    elif workload == "synthetic":
        prof_raw = _reference(mirror, wd.REFERENCE_WEEKDAY_HOUR_RELPATH)
        others.insert(0, prof_raw)
        sp = synthetic_workload.SyntheticParams(year=year, load_factor=load_factor, seed=seed, **(synthetic or {}))
        trace = synthetic_workload.generate(sp, wd.parse_weekday_hour(prof_raw), hists)
        p = trace.derive_params(base.with_(seed=seed))
        frame = synthetic_workload.to_trace_frame(trace)
        del trace  # peak memory: the generated table is not needed past this point
        extra["synthetic_params"] = json.loads(sp.to_json())
    else:
        raise ValueError(f"unknown workload {workload!r}; expected one of {WORKLOADS}")

    trace_tasks = None
    if parsed is not None:
        trace_tasks = validate("trace_tasks", parsed.tasks, file=parsed.file)
        frame = alibaba2020.trace_frame(trace_tasks)
        issues = dict(parsed.issues)

    bw_ref = hists["bandwidth"] if hists is not None else None
    der = wd.derive(frame, workload=workload, year=year, params=p, bandwidth_reference=bw_ref)
    tasks = validate("workload_tasks", der.tasks, file=f"derived {workload} {year}")
    dropped = _nonzero({**(parsed.dropped if parsed else {}), **der.dropped})
    n_source = parsed.n_rows if parsed else der.n_source_rows
    raws = ([trace_raw] if trace_raw else []) + others
    raw_shas = [r.sha256 for r in raws]
    run = validate("workload_runs", pl.DataFrame({
        "workload": [workload], "year": [year], "params_json": [p.to_json()], "params_sha256": [p.sha256],
        "n_tasks": [tasks.height], "n_source_rows": [n_source], "n_kept": [der.n_kept],
        "dropped_json": [wd.counts_json(dropped)], "raw_sha256s": [json.dumps(raw_shas)],
        "created_at": [datetime.now(UTC)],
    }, schema_overrides={"created_at": pl.Datetime("us", "UTC")}))
    report = WorkloadReport(
        workload=workload, year=year, n_tasks=tasks.height, n_source_rows=n_source, n_kept=der.n_kept,
        dropped=dropped, adjustments=_nonzero(der.adjustments), issues=_nonzero(issues),
        summary=wd.summarize(tasks, year), params_sha256=p.sha256, params_json=p.to_json(),
        raw_sha256s=raw_shas, source_weeks=der.extension.source_weeks, layers=der.extension.layers,
        extra=extra | {"outside_year": der.extension.outside_year, "thinned": der.extension.thinned},
    )
    return PreparedWorkload(workload, year, trace_raw, trace_tasks, others, der, tasks, run, report)


def commit_workload(home: Home, prep: PreparedWorkload) -> None:
    """Write a prepared workload (see the module docstring for the two transactions)."""
    home.ensure()
    if prep.trace_raw is not None and prep.trace_tasks is not None:
        _commit(home, prep.trace_raw, "trace_tasks", prep.trace_tasks)
    created: list[Path] = []
    try:
        rows = []
        for raw in prep.other_raws:
            row, path = land(home.root, raw)
            rows.append(row)
            if path is not None:
                created.append(path)
        raw_rows = validate("raw_files", pl.concat(rows).unique("sha256", keep="first", maintain_order=True)) \
            if rows else None
        key = {"workload": prep.workload, "year": prep.year}
        replace_partitions(
            home.warehouse_path,
            [Replacement("workload_tasks", key, prep.tasks), Replacement("workload_runs", key, prep.run)],
            upserts={"raw_files": raw_rows} if raw_rows is not None else None,
        )
    except BaseException:
        for path in created:
            with contextlib.suppress(FileNotFoundError):
                path.chmod(0o644)
                path.unlink()
        raise


def ingest_workload(
    workload: str, year: int, *, home: Home, trace_dir: Path | None = None, mirror: Path | None = None,
    seed: int = 0, load_factor: float = 1.0, params: wd.DeriveParams | None = None,
    pod_list: str = alibaba2023.DEFAULT_RELPATH, synthetic: dict | None = None, live: bool = False,
) -> WorkloadReport:
    """Derive and store the ``workload_tasks`` of one (workload, year); returns the summary."""
    prep = prepare_workload(workload, year, trace_dir=trace_dir, mirror=mirror, seed=seed,
                            load_factor=load_factor, params=params, pod_list=pod_list, synthetic=synthetic,
                            live=live, home=home)
    commit_workload(home, prep)
    return prep.report


def read_workload_tasks(home: Home, workload: str, year: int) -> pl.DataFrame:
    """The bundle's tasks.parquet columns for one (workload, year), sorted by arrival then task_id."""
    cols = ", ".join(f'"{c}"' for c in wd.BUNDLE_COLUMNS)
    return read_table(
        home.warehouse_path,
        f"SELECT {cols} FROM workload_tasks WHERE workload = ? AND year = ? ORDER BY arrival_ts_utc, task_id",
        [workload, year],
    )
