"""Workload ingest: fetch → parse → validate → derive → validate → land raw → write.

``ingest_workload("alibaba-2020", 2023, home=..., trace_dir=...)`` turns a trace into the
``workload_tasks`` of one UTC year. Each workload is a registered source
(``pipelines.sources.registry.workload``) that loads its trace: the PAI 2020 tables come from
``trace_dir``, else the mirror, else (``live=True``) the trace's public download
(``pipelines.workload.alibaba2020.fetch_table``). Everything is parsed, derived and validated
before anything is written, so bad input (a malformed table, a value out of range in
``trace_tasks``, a failed check) writes nothing. Then:

1. the trace table's raw bytes are landed and its ``trace_tasks`` rows upserted, with the raw file's
   lineage row, in one transaction (``warehouse.ingest._commit``, as every other source);
2. the other raw inputs (job table, reference tables) are landed, and the (workload, year) set of
   ``workload_tasks`` and its ``workload_runs`` row are *replaced* (delete-then-insert, one
   transaction, ``warehouse.replace``), so a re-derivation never merges with an older one.

A failure in step 2 leaves step 1 in place (the trace's own table is valid on its own) and removes
the files step 2 landed. Same inputs + parameters + seed ⇒ identical ``workload_tasks``.
"""

from __future__ import annotations

import json
import shutil
import tempfile
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import polars as pl

from gridshift.home import Home
from pipelines.core.raw import RawFile, land
from pipelines.sources import registry
from pipelines.workload import derive as wd
from pipelines.workload.alibaba2020 import trace_frame
from pipelines.workload.alibaba2023 import DEFAULT_RELPATH as POD_LIST
from pipelines.workload.base import Inputs
from pipelines.workload.chunked import (
    STAGING_PARQUET_OPTIONS,
    ChunkedDerivation,
    TraceChunks,
    derive_in_memory,
    write_tasks_parquet,
)
from pipelines.workload.derive import REFERENCE
from warehouse.db import read_table
from warehouse.ingest import _commit, landing
from warehouse.load import validate
from warehouse.replace import Replacement, replace_partitions

WORKLOADS = registry.workloads()


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
    return registry.workload(workload).default_params()


def _nonzero(d: dict[str, int]) -> dict[str, int]:
    return {k: int(v) for k, v in sorted(d.items()) if v}


@dataclass
class _Loaded:
    """A source's trace parsed and validated, and its derivation by chunks (not yet run)."""

    trace_raw: RawFile | None
    trace_tasks: pl.DataFrame | None
    parsed: object | None  # ParsedTrace
    others: list[RawFile]
    chunks: ChunkedDerivation
    extra: dict


def _load(workload: str, year: int, *, trace_dir: Path | None, mirror: Path | None, seed: int,
          load_factor: float, params: wd.DeriveParams | None, bandwidth_model: str | None, pod_list: str,
          synthetic: dict | None, live: bool, home: Home | None) -> _Loaded:
    src = registry.workload(workload)
    base = params or src.default_params()
    if bandwidth_model is not None:
        base = base.with_(bandwidth_model=bandwidth_model)
    # the ai model draws the sizes of tasks that run no published workload from the reference histogram
    needs_hist = src.needs_histograms or base.bandwidth_model in ("ai", "reference")
    hist_raw, hists = REFERENCE.histograms(mirror) if needs_hist else (None, None)
    inputs = Inputs(mirror=mirror, trace_dir=trace_dir, live=live, home=home, pod_list=pod_list,
                    synthetic=synthetic or {})
    got = src.load(year, base, seed=seed, load_factor=load_factor, inputs=inputs, histograms=hists)
    parsed, p, frame = got.parsed, got.params, got.frame
    trace_tasks = None
    if parsed is not None:
        trace_tasks = validate("trace_tasks", parsed.tasks, file=parsed.file, line_column="line")
        frame = trace_frame(trace_tasks)
    others = [*got.others, *([hist_raw] if hist_raw is not None else [])]
    bw_ref = hists["bandwidth"] if hists is not None else None
    chunks = got.chunks if got.chunks is not None else TraceChunks(
        frame, workload=workload, year=year, params=p, bandwidth_reference=bw_ref)
    return _Loaded(got.trace_raw, trace_tasks, parsed, others, chunks, got.extra)


def _report(ld: _Loaded, der: wd.Derivation, n_tasks: int, summary: dict[str, float]
            ) -> tuple[pl.DataFrame, WorkloadReport]:
    """The ``workload_runs`` row and the report of a derivation."""
    workload, year, p, parsed = ld.chunks.workload, ld.chunks.year, der.params, ld.parsed
    dropped = _nonzero({**(parsed.dropped if parsed else {}), **der.dropped})
    n_source = parsed.n_rows if parsed else der.n_source_rows
    raws = ([ld.trace_raw] if ld.trace_raw else []) + ld.others
    raw_shas = [r.sha256 for r in raws]
    run = validate("workload_runs", pl.DataFrame({
        "workload": [workload], "year": [year], "params_json": [p.to_json()], "params_sha256": [p.sha256],
        "n_tasks": [n_tasks], "n_source_rows": [n_source], "n_kept": [der.n_kept],
        "dropped_json": [wd.counts_json(dropped)], "raw_sha256s": [json.dumps(raw_shas)],
        "created_at": [datetime.now(UTC)],
    }, schema_overrides={"created_at": pl.Datetime("us", "UTC")}))
    report = WorkloadReport(
        workload=workload, year=year, n_tasks=n_tasks, n_source_rows=n_source, n_kept=der.n_kept,
        dropped=dropped, adjustments=_nonzero(der.adjustments), issues=_nonzero(parsed.issues if parsed else {}),
        summary=summary, params_sha256=p.sha256, params_json=p.to_json(),
        raw_sha256s=raw_shas, source_weeks=der.extension.source_weeks, layers=der.extension.layers,
        extra=ld.extra | {"outside_year": der.extension.outside_year, "thinned": der.extension.thinned},
    )
    return run, report


def prepare_workload(
    workload: str, year: int, *, trace_dir: Path | None = None, mirror: Path | None = None, seed: int = 0,
    load_factor: float = 1.0, params: wd.DeriveParams | None = None, bandwidth_model: str | None = None,
    pod_list: str = POD_LIST, synthetic: dict | None = None,
    live: bool = False, home: Home | None = None,
) -> PreparedWorkload:
    """Fetch, parse, derive and validate one (workload, year) in memory. Raises before any write.

    ``live``: download PAI 2020 tables that neither ``trace_dir`` nor the mirror holds (checksummed;
    a copy already landed under ``home`` is reused without a request)."""
    ld = _load(workload, year, trace_dir=trace_dir, mirror=mirror, seed=seed, load_factor=load_factor,
               params=params, bandwidth_model=bandwidth_model, pod_list=pod_list, synthetic=synthetic,
               live=live, home=home)
    der = derive_in_memory(ld.chunks)
    tasks = validate("workload_tasks", der.tasks, file=f"derived {workload} {year}")
    run, report = _report(ld, der, tasks.height, wd.summarize(tasks, year))
    return PreparedWorkload(workload, year, ld.trace_raw, ld.trace_tasks, ld.others, der, tasks, run, report)


def commit_workload(home: Home, prep: PreparedWorkload) -> None:
    """Write a prepared workload (see the module docstring for the two transactions)."""
    _write(home, prep.workload, prep.year, prep.trace_raw, prep.trace_tasks, prep.other_raws,
           Replacement("workload_tasks", {"workload": prep.workload, "year": prep.year}, prep.tasks), prep.run)


def _write(home: Home, workload: str, year: int, trace_raw: RawFile | None, trace_tasks: pl.DataFrame | None,
           other_raws: list[RawFile], tasks: Replacement, run: pl.DataFrame) -> None:
    if trace_raw is not None and trace_tasks is not None:
        _commit(home, trace_raw, {"trace_tasks": trace_tasks})
    with landing(home) as created:
        rows = []
        for raw in other_raws:
            row, path = land(home.root, raw)
            rows.append(row)
            if path is not None:
                created.append(path)
        raw_rows = validate("raw_files", pl.concat(rows).unique("sha256", keep="first", maintain_order=True)) \
            if rows else None
        key = {"workload": workload, "year": year}
        replace_partitions(
            home.warehouse_path, [tasks, Replacement("workload_runs", key, run)],
            upserts={"raw_files": raw_rows} if raw_rows is not None else None,
        )


def ingest_workload(
    workload: str, year: int, *, home: Home, trace_dir: Path | None = None, mirror: Path | None = None,
    seed: int = 0, load_factor: float = 1.0, params: wd.DeriveParams | None = None,
    bandwidth_model: str | None = None,
    pod_list: str = POD_LIST, synthetic: dict | None = None, live: bool = False,
) -> WorkloadReport:
    """Derive and store the ``workload_tasks`` of one (workload, year); returns the summary.

    The derivation streams: chunk by chunk, each part validated (Pandera) and written to a staging
    Parquet file under the home, which DuckDB then reads in one transaction (``warehouse.replace``).
    Memory does not grow with the load factor; the stored rows are those of
    :func:`prepare_workload` + :func:`commit_workload` (tests/integration/pipelines/workload)."""
    ld = _load(workload, year, trace_dir=trace_dir, mirror=mirror, seed=seed, load_factor=load_factor,
               params=params, bandwidth_model=bandwidth_model, pod_list=pod_list, synthetic=synthetic,
               live=live, home=home)
    home.ensure()
    staging = Path(tempfile.mkdtemp(prefix=".workload-staging-", dir=home.root))
    try:
        name = f"derived {workload} {year}"
        out = write_tasks_parquet(ld.chunks, staging / "workload_tasks.parquet",
                                  on_part=lambda part: validate("workload_tasks", part, file=name),
                                  options=STAGING_PARQUET_OPTIONS)  # read once by DuckDB, then deleted
        run, report = _report(ld, out.derivation, out.n_tasks, out.summary)
        _write(home, workload, year, ld.trace_raw, ld.trace_tasks, ld.others,
               Replacement("workload_tasks", {"workload": workload, "year": year}, parquet=out.path), run)
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return report


def read_workload_tasks(home: Home, workload: str, year: int) -> pl.DataFrame:
    """The bundle's tasks.parquet columns for one (workload, year), sorted by arrival then task_id."""
    cols = ", ".join(f'"{c}"' for c in wd.BUNDLE_COLUMNS)
    return read_table(
        home.warehouse_path,
        f"SELECT {cols} FROM workload_tasks WHERE workload = ? AND year = ? ORDER BY arrival_ts_utc, task_id",
        [workload, year],
    )
