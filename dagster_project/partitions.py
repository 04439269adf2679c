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
    """(region, year) of the running partition. Runs launched from tags (backfills, execute_job)
    carry the key as its string form, so parse it through the definition rather than by hand."""
    pk = context.partition_key
    if not isinstance(pk, dg.MultiPartitionKey):
        pk = region_year.get_partition_key_from_str(pk)
    dims = pk.keys_by_dimension
    return dims["region"], int(dims["year"])
