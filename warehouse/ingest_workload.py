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

import contextlib
import json
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
from pipelines.workload.derive import REFERENCE
from warehouse.db import read_table
from warehouse.ingest import _commit
from warehouse.load import validate
from warehouse.replace import Replacement, replace_partitions

WORKLOADS = registry.WORKLOADS


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


def prepare_workload(
    workload: str, year: int, *, trace_dir: Path | None = None, mirror: Path | None = None, seed: int = 0,
    load_factor: float = 1.0, params: wd.DeriveParams | None = None, bandwidth_model: str | None = None,
    pod_list: str = POD_LIST, synthetic: dict | None = None,
    live: bool = False, home: Home | None = None,
) -> PreparedWorkload:
    """Fetch, parse, derive and validate one (workload, year). Raises before any write.

    ``live``: download PAI 2020 tables that neither ``trace_dir`` nor the mirror holds (checksummed;
    a copy already landed under ``home`` is reused without a request)."""
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
    der = wd.derive(frame, workload=workload, year=year, params=p, bandwidth_reference=bw_ref)
    tasks = validate("workload_tasks", der.tasks, file=f"derived {workload} {year}")
    dropped = _nonzero({**(parsed.dropped if parsed else {}), **der.dropped})
    n_source = parsed.n_rows if parsed else der.n_source_rows
    raws = ([got.trace_raw] if got.trace_raw else []) + others
    raw_shas = [r.sha256 for r in raws]
    run = validate("workload_runs", pl.DataFrame({
        "workload": [workload], "year": [year], "params_json": [p.to_json()], "params_sha256": [p.sha256],
        "n_tasks": [tasks.height], "n_source_rows": [n_source], "n_kept": [der.n_kept],
        "dropped_json": [wd.counts_json(dropped)], "raw_sha256s": [json.dumps(raw_shas)],
        "created_at": [datetime.now(UTC)],
    }, schema_overrides={"created_at": pl.Datetime("us", "UTC")}))
    report = WorkloadReport(
        workload=workload, year=year, n_tasks=tasks.height, n_source_rows=n_source, n_kept=der.n_kept,
        dropped=dropped, adjustments=_nonzero(der.adjustments), issues=_nonzero(parsed.issues if parsed else {}),
        summary=wd.summarize(tasks, year), params_sha256=p.sha256, params_json=p.to_json(),
        raw_sha256s=raw_shas, source_weeks=der.extension.source_weeks, layers=der.extension.layers,
        extra=got.extra | {"outside_year": der.extension.outside_year, "thinned": der.extension.thinned},
    )
    return PreparedWorkload(workload, year, got.trace_raw, trace_tasks, others, der, tasks, run, report)


def commit_workload(home: Home, prep: PreparedWorkload) -> None:
    """Write a prepared workload (see the module docstring for the two transactions)."""
    home.ensure()
    if prep.trace_raw is not None and prep.trace_tasks is not None:
        _commit(home, prep.trace_raw, {"trace_tasks": prep.trace_tasks})
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
    bandwidth_model: str | None = None,
    pod_list: str = POD_LIST, synthetic: dict | None = None, live: bool = False,
) -> WorkloadReport:
    """Derive and store the ``workload_tasks`` of one (workload, year); returns the summary."""
    prep = prepare_workload(workload, year, trace_dir=trace_dir, mirror=mirror, seed=seed,
                            load_factor=load_factor, params=params, bandwidth_model=bandwidth_model,
                            pod_list=pod_list, synthetic=synthetic,
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
