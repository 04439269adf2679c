"""Asset-check results built from gridshift's validation outcomes (schema and coverage).

The grid checks are partitioned like their assets (region × year): a run over many partitions (a
single-run backfill) evaluates both checks once per partition, and each evaluation names its partition and is
recorded in the run that materialized it, as a run of that one partition records it.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterator

import dagster as dg

from gridshift.errors import DataError
from gridshift.quality import MIN_COVERAGE
from warehouse.ingest import IngestReport
from warehouse.schemas import TABLES

SCHEMA_CHECK = "pandera_schema"
COVERAGE_CHECK = "coverage"


def check_specs(asset_name: str, partitions_def: dg.PartitionsDefinition | None = None) -> list[dg.AssetCheckSpec]:
    """The two blocking checks of a grid asset; with ``partitions_def`` (the asset's) they are evaluated,
    and shown in the UI, per partition."""
    table = TABLES[asset_name]
    with warnings.catch_warnings():  # partitioned check specs are a preview feature of Dagster 1.13
        warnings.simplefilter("ignore")
        return [
            dg.AssetCheckSpec(
                SCHEMA_CHECK, asset=asset_name, blocking=True, partitions_def=partitions_def,
                description=f"Pandera model {table.model.__name__}: columns, types, units, ranges, primary key "
                f"{list(table.primary_key)}. Validated before the write; a failure writes nothing.",
            ),
            dg.AssetCheckSpec(
                COVERAGE_CHECK, asset=asset_name, blocking=True, partitions_def=partitions_def,
                description=f"Share of the UTC year's intervals present (fails below {MIN_COVERAGE:.0%}, unless "
                "the partial file was allowed: then a warning); estimated share reported.",
            ),
        ]


def schema_failed(asset_name: str, err: DataError) -> dg.AssetCheckResult:
    return dg.AssetCheckResult(
        asset_key=asset_name, check_name=SCHEMA_CHECK, passed=False, severity=dg.AssetCheckSeverity.ERROR,
        metadata={
            "error": dg.MetadataValue.md(f"```\n{err}\n```"),
            "file": err.file or "",
            "column": err.column or "",
            "rows": str(err.rows),
            "values": str([str(v) for v in err.values]),
        },
    )


def passed_results(asset_name: str, report: IngestReport) -> list[dg.AssetCheckResult]:
    cov = report.coverage
    meta: dict = {"present": report.present or 0, "expected": report.expected or 0}
    if report.estimated_share is not None:
        meta["estimated_share"] = float(report.estimated_share)
    low = cov is not None and cov < MIN_COVERAGE
    return [
        dg.AssetCheckResult(asset_key=asset_name, check_name=SCHEMA_CHECK, passed=True,
                            metadata={"rows": report.rows,
                                      **({"plausibility_overridden": ",".join(report.overridden)}
                                         if report.overridden else {})}),
        dg.AssetCheckResult(
            asset_key=asset_name, check_name=COVERAGE_CHECK,
            passed=not low or report.allowed_partial,
            severity=dg.AssetCheckSeverity.ERROR if low and not report.allowed_partial else dg.AssetCheckSeverity.WARN,
            metadata={**meta, "coverage": float(cov) if cov is not None else 1.0,
                      "allowed_partial": report.allowed_partial},
        ),
    ]


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


# ----------------------------------------------------------------- per-partition results in one run
def evaluation(result: dg.AssetCheckResult, partition: str) -> dg.AssetCheckEvaluation:
    """``result`` as the (blocking) evaluation of ``partition``.

    ``AssetCheckResult`` takes its partition from a run of one partition; a run over many yields one
    ``AssetCheckEvaluation`` per partition instead. It is recorded in the run that materialized the partition,
    which is how Dagster relates it to that materialization."""
    return dg.AssetCheckEvaluation(
        asset_key=result.asset_key, check_name=result.check_name, passed=result.passed, metadata=result.metadata,
        severity=result.severity, description=result.description, blocking=True, partition=str(partition),
    )


def check_outputs(context: dg.AssetExecutionContext) -> Iterator[dg.Output]:
    """The (valueless) outputs of the asset's selected checks, once each: a step that reports its checks as
    per-partition evaluations still completes the check steps Dagster planned (a check's output is named by
    its spec's ``get_python_identifier``)."""
    selected = context.selected_asset_check_keys
    for spec in context.assets_def.check_specs:
        if spec.key in selected:
            yield dg.Output(None, output_name=spec.get_python_identifier())
