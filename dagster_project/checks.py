"""Asset-check results built from gridshift's validation outcomes (schema and coverage).

A grid check is evaluated once per step, over every partition the step ingested (``BackfillPolicy.single_run``:
one step per asset and run, any number of partitions), not once per partition: Dagster's SQLite storage records
each evaluation in the run's shard, in the cross-run index and in the check's execution table, about fifteen
``fdatasync`` calls, so per-partition evaluations were near half the syncs of a whole-mirror ingest (6,948 ->
3,888: ``benchmarks/bench_ingest.py``).
The evaluation's metadata names every partition it judged (``partitions``: partition key -> its figures) and,
when it fails, the first refused partition's file, column, rows and values and every refused partition's cause
(``refused``); the per-partition status stays on the partitions themselves (materialized, or planned in a failed
run).
"""

from __future__ import annotations

from collections.abc import Mapping

import dagster as dg

from gridshift.errors import DataError
from gridshift.quality import MIN_COVERAGE
from warehouse.ingest import IngestReport
from warehouse.schemas import TABLES

SCHEMA_CHECK = "pandera_schema"
COVERAGE_CHECK = "coverage"


def check_specs(asset_name: str) -> list[dg.AssetCheckSpec]:
    """The two blocking checks of a grid asset, each evaluated once per step over the partitions it ingested."""
    table = TABLES[asset_name]
    return [
        dg.AssetCheckSpec(
            SCHEMA_CHECK, asset=asset_name, blocking=True,
            description=f"Pandera model {table.model.__name__}: columns, types, units, ranges, primary key "
            f"{list(table.primary_key)}, for every partition of the run. Validated before the write; a refused "
            "partition writes nothing and is named in the evaluation's metadata (`refused`).",
        ),
        dg.AssetCheckSpec(
            COVERAGE_CHECK, asset=asset_name, blocking=True,
            description=f"Share of each partition's UTC year present (fails below {MIN_COVERAGE:.0%}, unless the "
            "partial file was allowed: then a warning), for every partition the run wrote; per partition in "
            "the evaluation's metadata (`partitions`).",
        ),
    ]


def _error_metadata(err: DataError) -> dict:
    """Where ``err`` was found: the file, column, rows and values (what the UI shows of a refused partition)."""
    return {
        "error": dg.MetadataValue.md(f"```\n{err}\n```"),
        "file": err.file or "",
        "column": err.column or "",
        "rows": str(err.rows),
        "values": str([str(v) for v in err.values]),
    }


def schema_failed(asset_name: str, err: DataError) -> dg.AssetCheckResult:
    """The failed schema check of an asset with one partition refused (``err``)."""
    return dg.AssetCheckResult(asset_key=asset_name, check_name=SCHEMA_CHECK, passed=False,
                               severity=dg.AssetCheckSeverity.ERROR, metadata=_error_metadata(err))


def schema_result(asset_name: str, written: Mapping[str, IngestReport],
                  refused: Mapping[str, DataError]) -> dg.AssetCheckResult:
    """The schema check over a step's partitions (partition key -> report of each written one, -> error of each
    refused one): passed when none was refused; else the first refused one's file, column, rows and values, and
    every refused one's message."""
    parts = {pk: {"rows": r.rows, **({"plausibility_overridden": r.overridden} if r.overridden else {})}
             for pk, r in written.items()}
    meta: dict = {"partitions_checked": len(written) + len(refused), "partitions": dg.MetadataValue.json(parts)}
    if not refused:
        overridden = sorted({c for r in written.values() for c in r.overridden})
        return dg.AssetCheckResult(
            asset_key=asset_name, check_name=SCHEMA_CHECK, passed=True,
            metadata={**meta, "rows": sum(r.rows for r in written.values()),
                      **({"plausibility_overridden": ",".join(overridden)} if overridden else {})})
    first = next(iter(refused.values()))
    return dg.AssetCheckResult(
        asset_key=asset_name, check_name=SCHEMA_CHECK, passed=False, severity=dg.AssetCheckSeverity.ERROR,
        metadata={**meta, **_error_metadata(first),
                  "refused": dg.MetadataValue.json({pk: str(err) for pk, err in refused.items()})},
    )


def coverage_result(asset_name: str, written: Mapping[str, IngestReport]) -> dg.AssetCheckResult:
    """The coverage check over the partitions a step wrote (partition key -> report): fails if any is below
    ``MIN_COVERAGE`` without being allowed; a warning if only allowed ones are; the lowest share and each
    partition's figures in the metadata."""
    parts, low, allowed = {}, [], []
    for pk, r in written.items():
        cov = r.coverage
        parts[pk] = {"present": r.present or 0, "expected": r.expected or 0,
                     "coverage": float(cov) if cov is not None else 1.0, "allowed_partial": r.allowed_partial,
                     **({"estimated_share": float(r.estimated_share)} if r.estimated_share is not None else {})}
        if cov is not None and cov < MIN_COVERAGE:
            (allowed if r.allowed_partial else low).append(pk)
    return dg.AssetCheckResult(
        asset_key=asset_name, check_name=COVERAGE_CHECK, passed=not low,
        severity=dg.AssetCheckSeverity.ERROR if low else dg.AssetCheckSeverity.WARN,
        metadata={"coverage": min((p["coverage"] for p in parts.values()), default=1.0),
                  "allowed_partial": bool(allowed), "partitions": dg.MetadataValue.json(parts),
                  **({"below_minimum": ",".join(low + allowed)} if low or allowed else {})},
    )


def report_metadata(report: IngestReport) -> dict:
    meta = {
        "rows": report.rows,
        "raw_sha256": report.raw_sha256,
        "raw_uri": report.raw_uri,
    }
    if report.coverage is not None:
        meta["coverage"] = float(report.coverage)
    if report.estimated_share is not None:
        meta["estimated_share"] = float(report.estimated_share)
    if report.allowed_partial:
        meta["allowed_partial"] = True
    return meta
