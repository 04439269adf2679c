"""Grid signal assets: carbon intensity, price and weather, partitioned by region × year.
# No "from __future__ import annotations": Dagster inspects the context annotation at runtime.

A run materializes any number of partitions of an asset in ONE step (``BackfillPolicy.single_run()``:
a UI backfill, or ``gridshift ingest --regions all``, is one run per key range, not one per
partition), with the guarantees of a run per partition:

1. every partition is checked on its own before anything is written (``warehouse.ingest.prepare_grid``:
   its parser, the table's Pandera model, the coverage minimum); a refused one writes nothing;
2. the accepted partitions are written in one transaction (``warehouse.ingest.write_grid``: rows, raw-file
   lineage and ``partition_quality``, each partition whole), then each gets its own materialization
   (metadata: rows, raw sha256 and URI, coverage, estimated share; the partition's dimension tags, from
   which Dagster reads a multi-partition key back), so the UI's partition status and lineage are what
   per-partition runs recorded;
3. the two blocking checks are evaluated once for the step, over all its partitions
   (``dagster_project.checks``: each partition's figures in the metadata; a refused partition fails the
   schema check, which names it with its file, column, rows and values);
4. if any partition was refused, the step then fails, naming every refused partition and its cause
   (``failures`` in the failure's metadata): the run fails *after* the good partitions are written —
   as a backfill of per-partition runs ends with those written and the bad ones failed. The UI shows
   the refused partitions as failed (planned in a failed run, not materialized), the others as
   materialized.
"""


import warnings
from collections.abc import Iterator

import dagster as dg

from dagster_project import checks
from dagster_project.assets.raw import feeding
from dagster_project.partitions import dimension_tags, region_year, run_keys, year_of_key
from dagster_project.resources import GridshiftResource
from gridshift.errors import DataError
from gridshift.sources import SIGNAL_TABLES
from warehouse.ingest import SIGNAL_SOURCES, PreparedGrid, prepare_grid, write_grid


def _materialization(table: str, pk: dg.MultiPartitionKey, prepared: PreparedGrid) -> dg.AssetMaterialization:
    """The materialization of one partition: its metadata, and its dimension tags (``dagster/partition/region``,
    ``dagster/partition/year``: what Dagster reads a multi-partition key and the UI's per-dimension status
    back from), taken from the partitions definition."""
    return dg.AssetMaterialization(asset_key=table, partition=pk, metadata=checks.report_metadata(prepared.report),
                                   tags=dimension_tags(pk))


def _failure(table: str, refused: dict[dg.MultiPartitionKey, Exception]) -> dg.Failure:
    labels = [f"{table} {pk.keys_by_dimension['region']} {pk.keys_by_dimension['year']}" for pk in refused]
    first_pk, first = next(iter(refused.items()))
    more = f" and {len(refused) - 1} more ({', '.join(labels[1:4])})" if len(refused) > 1 else ""
    return dg.Failure(
        description=f"{labels[0]}{more} refused; nothing was written for {'it' if len(refused) == 1 else 'them'}. "
                    f"{labels[0]}: {first}",
        metadata={
            "refused": len(refused),
            "file": getattr(first, "file", None) or "",
            # partition key -> {type, message}: what the CLI reports per partition
            "failures": dg.MetadataValue.json({
                str(pk): {"type": type(err).__name__, "message": str(err)} for pk, err in refused.items()
            }),
        },
    )


def _grid_asset(kind: str) -> dg.AssetsDefinition:
    table = SIGNAL_TABLES[kind]

    with warnings.catch_warnings():  # BackfillPolicy is "beta" in Dagster 1.13
        warnings.simplefilter("ignore", dg.BetaWarning)
        decorator = dg.asset(
            name=table,
            group_name="grid",
            partitions_def=region_year,
            deps=feeding(table),  # the raw files of its sources: the head of the lineage
            check_specs=checks.check_specs(table),
            kinds={"duckdb", "polars"},
            description=f"Canonical `{table}` rows for one region and year (sources, in order: "
            f"{', '.join(SIGNAL_SOURCES[kind])}). Any set of partitions runs as one step; each partition is "
            "checked, written and recorded on its own.",
            pool="warehouse_write",
            backfill_policy=dg.BackfillPolicy.single_run(),
            output_required=False,  # materializations are reported per partition, only for those written
        )

    @decorator
    def _asset(context: dg.AssetExecutionContext, gridshift: GridshiftResource) -> Iterator:
        keys = run_keys(context)
        parts = {(pk.keys_by_dimension["region"], year_of_key(pk.keys_by_dimension["year"])): pk for pk in keys}
        home = gridshift.home_obj()
        batch = prepare_grid(kind, list(parts), home=home, mirror=gridshift.mirror_path(), live=gridshift.live,
                             allow_partial=gridshift.allow_partial, allow_implausible=gridshift.allow_implausible)
        refused: dict[dg.MultiPartitionKey, Exception] = {parts[p]: err for p, err in batch.refused.items()}
        invalid = {str(pk): err for pk, err in refused.items() if isinstance(err, DataError)}
        try:
            write_grid(home, batch.ready)
        except Exception as err:  # the database failed: the transaction wrote none of the batch
            if invalid:
                yield checks.schema_result(table, {}, invalid)
            refused.update({parts[(p.location, p.year)]: err for p in batch.ready})
            raise _failure(table, refused) from err
        written = {str(parts[(p.location, p.year)]): p.report for p in batch.ready}
        for p in batch.ready:
            yield _materialization(table, parts[(p.location, p.year)], p)
        if written or invalid:
            yield checks.schema_result(table, written, invalid)
        if written:
            yield checks.coverage_result(table, written)
        if refused:
            first = next(iter(refused.values()))
            raise _failure(table, refused) from first

    return _asset


grid_carbon = _grid_asset("carbon")
grid_price = _grid_asset("price")
weather = _grid_asset("weather")

ASSETS = [grid_carbon, grid_price, weather]
