"""Partitions: region × year, policy × seed. Keys are built with MultiPartitionKey, never by
formatting strings."""


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


def dimensions(context: dg.AssetExecutionContext) -> dict[str, str]:
    """Dimension -> key of the running multi-partition. Runs launched from tags (backfills,
    execute_job) carry the key as its string form, so parse it through the asset's definition
    rather than by hand."""
    pk = context.partition_key
    if not isinstance(pk, dg.MultiPartitionKey):
        pk = context.assets_def.partitions_def.get_partition_key_from_str(pk)
    return pk.keys_by_dimension


def split(context: dg.AssetExecutionContext) -> tuple[str, int]:
    """(region, year) of the running partition."""
    dims = dimensions(context)
    return dims["region"], int(dims["year"])


# ------------------------------------------------------------------ benchmark sweeps: policy × seed
#: Seeds offered to sweeps (a static set, so partitions need no instance state; extend as needed).
SWEEP_SEEDS = [str(s) for s in range(10)]


def _policies() -> list[str]:
    from sim_core.engine import POLICY_CODES  # the built-in policy names (no kernel is compiled here)

    return list(POLICY_CODES)


policy_seed = dg.MultiPartitionsDefinition(
    {
        "policy": dg.StaticPartitionsDefinition(_policies()),
        "seed": dg.StaticPartitionsDefinition(SWEEP_SEEDS),
    }
)


def sweep_key(policy: str, seed: int) -> dg.MultiPartitionKey:
    return dg.MultiPartitionKey({"policy": policy, "seed": str(seed)})


def split_sweep(context: dg.AssetExecutionContext) -> tuple[str, int]:
    """(policy, seed) of the running partition."""
    dims = dimensions(context)
    return dims["policy"], int(dims["seed"])
