"""Partitions: region × year. Keys are built with MultiPartitionKey, never by formatting strings."""


from datetime import UTC, datetime

import dagster as dg

from gridshift import locations

FIRST_YEAR = 2015
YEARS = [str(y) for y in range(FIRST_YEAR, datetime.now(UTC).year + 1)]

region_year = dg.MultiPartitionsDefinition(
    {
        "region": dg.StaticPartitionsDefinition(locations.all_codes()),
        "year": dg.StaticPartitionsDefinition(YEARS),
    }
)


def key(region: str, year: int) -> dg.MultiPartitionKey:
    return dg.MultiPartitionKey({"region": region, "year": str(year)})


def split(context: dg.AssetExecutionContext) -> tuple[str, int]:
    dims = context.partition_key.keys_by_dimension
    return dims["region"], int(dims["year"])
