"""Grid signal assets: carbon intensity, price and weather, partitioned by region × year.
# No "from __future__ import annotations": Dagster inspects the context annotation at runtime.

Each asset calls ``warehouse.ingest.ingest_grid`` (fetch → parse → validate → land → write) and
reports the Pandera and coverage checks. A validation failure fails the blocking check and the
step, and writes nothing.
"""


from collections.abc import Iterator

import dagster as dg

from dagster_project import checks
from dagster_project.partitions import region_year, split
from dagster_project.resources import GridshiftResource
from gridshift.errors import DataError
from gridshift.sources import SIGNAL_TABLES
from warehouse.ingest import SIGNAL_SOURCES, ingest_grid


def _grid_asset(kind: str) -> dg.AssetsDefinition:
    table = SIGNAL_TABLES[kind]

    @dg.asset(
        name=table,
        group_name="grid",
        partitions_def=region_year,
        check_specs=checks.check_specs(table),
        kinds={"duckdb", "polars"},
        description=f"Canonical `{table}` rows for one region and year (sources, in order: "
        f"{', '.join(SIGNAL_SOURCES[kind])}).",
        pool="warehouse_write",
    )
    def _asset(context: dg.AssetExecutionContext, gridshift: GridshiftResource) -> Iterator:
        region, year = split(context)
        try:
            report = ingest_grid(kind, region, year, home=gridshift.home_obj(), mirror=gridshift.mirror_path(),
                                 live=gridshift.live, allow_partial=gridshift.allow_partial)
        except DataError as err:
            yield checks.schema_failed(table, err)
            raise dg.Failure(description=str(err), metadata={"file": err.file or ""}) from err
        yield dg.Output(None, metadata=checks.report_metadata(report))
        yield from checks.passed_results(table, report)

    return _asset


grid_carbon = _grid_asset("carbon")
grid_price = _grid_asset("price")
weather = _grid_asset("weather")

ASSETS = [grid_carbon, grid_price, weather]
