"""Reference assets: the location registry, cloud egress prices and network paths (unpartitioned)."""


import dagster as dg

from dagster_project.assets.raw import LOCATION_REGISTRY, feeding
from dagster_project.resources import GridshiftResource
from warehouse.ingest import ingest_egress, ingest_locations, ingest_network


@dg.asset(group_name="reference", kinds={"duckdb"}, pool="warehouse_write", deps=[LOCATION_REGISTRY],
          description="The location registry (gridshift/data/locations.csv) as a table.")
def locations(gridshift: GridshiftResource) -> dg.MaterializeResult:
    return dg.MaterializeResult(metadata={"rows": ingest_locations(home=gridshift.home_obj())})


@dg.asset(group_name="reference", kinds={"duckdb"}, pool="warehouse_write", deps=feeding("egress_price"),
          description="Cloud inter-region egress prices (USD/GB) for AWS, GCP and Azure.")
def egress_price(gridshift: GridshiftResource) -> dg.MaterializeResult:
    reports = ingest_egress(home=gridshift.home_obj(), mirror=gridshift.mirror_path())
    return dg.MaterializeResult(
        metadata={"rows": sum(r.rows for r in reports), **{f"rows_{r.extra['provider']}": r.rows for r in reports}}
    )


@dg.asset(group_name="reference", kinds={"duckdb"}, pool="warehouse_write", deps=feeding("network_path"),
          description="Throughput/RTT between every pair of registry locations: Persico et al. 2016 between "
                      "macro-regions; inside one, RTT from distance (fit to Azure's P50 RTTs) and throughput "
                      "from Persico's fitted TCP window.")
def network_path(gridshift: GridshiftResource) -> dg.MaterializeResult:
    report = ingest_network(home=gridshift.home_obj(), mirror=gridshift.mirror_path())
    fits = {k: v for k, v in report.extra.items() if k.startswith(("rtt_", "window_"))}
    return dg.MaterializeResult(metadata={"rows": report.rows, "bases": str(report.extra["bases"]), **fits})


ASSETS = [locations, egress_price, network_path]
