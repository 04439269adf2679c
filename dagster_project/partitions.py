"""Partitions: region × year, policy × seed. Keys are built with MultiPartitionKey, never by
formatting strings.

A run may target one partition or a *key range*. Over a ``MultiPartitionsDefinition`` Dagster 1.13
expands a range dimension by dimension — the product of each dimension's keys from the start key's to
the end key's, in the order each dimension declares them — so a range is a rectangle of consecutive
regions (registry order) × consecutive years, never the keys between two strings. ``run_keys`` reads
the keys of the running step; ``tests/integration/dagster_project`` pins the expansion.

The year dimension is dynamic (``years``, shared by region × year and workload × year): it holds the years the
sources were asked for or can provide, not a fixed span most of which no source has. The instance stores its keys
in the order they were added; ``gridshift ui`` adds the configured mirror's years, and every CLI run adds the years
it requests (``add_years``), so a live year outside the mirror is a partition from its first ingest on.

A year key is exactly four ASCII digits naming a year of ``source_years`` (:func:`year_of_key`). Keys can also
enter through the UI's GraphQL API, which takes any string (``abc``, `` 2023``, ``02023``, ``1999``, a
5,000-character key): such a key is refused where keys are read — reported by name and removed from the instance
by :func:`add_years` (every run and ``gridshift ui``) and by the ``remove_bad_year_keys`` sensor (the UI's
daemon) — so it can never stop a run, nor be half of a key range.
"""

import logging
import re
from collections.abc import Iterable

import dagster as dg

from dagster_project.plan import source_years
from gridshift import locations
from gridshift.errors import GridshiftError, excerpt

log = logging.getLogger(__name__)

#: The year dimension of every year-partitioned asset: its keys live in the instance (``add_years``).
years = dg.DynamicPartitionsDefinition(name="year")

region_year = dg.MultiPartitionsDefinition(
    {
        "region": dg.StaticPartitionsDefinition(locations.all_codes()),
        "year": years,
    }
)


_YEAR_KEY = re.compile(r"[0-9]{4}")


class BadYearKeyError(GridshiftError, ValueError):
    """A year-partition key that is not a four-digit year any source provides."""


def year_of_key(pk: str) -> int:
    """The year a year-partition key names. Refused by name (:class:`BadYearKeyError`) unless it is exactly four
    ASCII digits of a year in :func:`dagster_project.plan.source_years` (``02023``, `` 2023`` and ``２０２３`` are
    not: ``int`` would read each as 2023, a second key for one year)."""
    span = source_years()
    if not isinstance(pk, str) or not _YEAR_KEY.fullmatch(pk) or int(pk) not in span:
        raise BadYearKeyError(f"year partition key {excerpt(pk)!r} is not a year its sources provide: a year key "
                              f"is four digits, {span[0]}..{span[-1]}")
    return int(pk)


def bad_year_keys(keys: Iterable[str]) -> list[str]:
    """The keys of ``keys`` that :func:`year_of_key` refuses, in their order."""
    bad = []
    for pk in keys:
        try:
            year_of_key(pk)
        except BadYearKeyError:
            bad.append(pk)
    return bad


def remove_bad_year_keys(instance: dg.DagsterInstance) -> list[str]:
    """Delete the instance's year keys :func:`year_of_key` refuses (added through the UI's API), each reported by
    name in a warning; returns them. Runs recorded on such a key stay in the run history."""
    bad = bad_year_keys(instance.get_dynamic_partitions(years.name))
    for pk in bad:
        log.warning("removed year partition key %r: not a year its sources provide (four digits, %d..%d)",
                    excerpt(pk), source_years()[0], source_years()[-1])
        instance.delete_dynamic_partition(years.name, pk)
    return bad


def add_years(instance: dg.DagsterInstance, wanted: Iterable[int]) -> list[int]:
    """Add the years of ``wanted`` the instance lacks (in ascending order, so consecutive years stay neighbours);
    returns the instance's years in their key order, the order a key range expands them in. A year no source can
    provide (outside :func:`dagster_project.plan.source_years`) is refused, never added; a bad key already stored
    is removed first (:func:`remove_bad_year_keys`), so it is never read as a year nor sits inside a key range."""
    span = source_years()
    bad = sorted({int(y) for y in wanted} - set(span))
    if bad:
        listed = ", ".join(map(str, bad))
        raise ValueError(f"{listed}: no source provides that year (they provide {span[0]}..{span[-1]})")
    remove_bad_year_keys(instance)
    have = {year_of_key(y) for y in instance.get_dynamic_partitions(years.name)}
    new = sorted({int(y) for y in wanted} - have)
    if new:
        instance.add_dynamic_partitions(years.name, [str(y) for y in new])
    return [year_of_key(y) for y in instance.get_dynamic_partitions(years.name)]


@dg.sensor(name="remove_bad_year_keys", minimum_interval_seconds=30, default_status=dg.DefaultSensorStatus.RUNNING,
           description="Removes year partition keys that are not four-digit years its sources provide (keys the "
                       "UI's API accepted): such a key would stop every run over a key range holding it")
def remove_bad_year_keys_sensor(context: dg.SensorEvaluationContext) -> dg.SensorResult | dg.SkipReason:
    bad = bad_year_keys(context.instance.get_dynamic_partitions(years.name))
    if not bad:
        return dg.SkipReason("every year key is a year")
    context.log.warning("removing year partition keys that are not years: "
                        + ", ".join(repr(excerpt(pk)) for pk in bad))
    return dg.SensorResult(dynamic_partitions_requests=[years.build_delete_request(bad)])


def key(region: str, year: int) -> dg.MultiPartitionKey:
    return dg.MultiPartitionKey({"region": region, "year": str(year)})


#: The prefix of the asset-event tags naming a multi-partition key's dimensions (Dagster's ``dagster/partition/<dim>``).
DIMENSION_TAG_PREFIX = "dagster/partition/"


def dimension_tags(pk: dg.MultiPartitionKey) -> dict[str, str]:
    """The dimension tags of ``pk`` as the region × year definition gives them (its run tags also hold the whole
    key, ``dagster/partition``, which is a run's tag, not an asset event's)."""
    return {k: v for k, v in region_year.get_tags_for_partition_key(pk).items() if k.startswith(DIMENSION_TAG_PREFIX)}


def as_key(partitions_def: dg.MultiPartitionsDefinition, pk: str) -> dg.MultiPartitionKey:
    """A key as the definition's MultiPartitionKey (runs launched from tags carry its string form)."""
    return pk if isinstance(pk, dg.MultiPartitionKey) else partitions_def.get_partition_key_from_str(pk)


def dimensions(context: dg.AssetExecutionContext) -> dict[str, str]:
    """Dimension -> key of the running multi-partition. Runs launched from tags (backfills,
    execute_job) carry the key as its string form, so parse it through the asset's definition
    rather than by hand."""
    return as_key(context.assets_def.partitions_def, context.partition_key).keys_by_dimension


def run_keys(context: dg.AssetExecutionContext) -> list[dg.MultiPartitionKey]:
    """Every partition key the running step targets: one, or all those of the run's key range."""
    pdef = context.assets_def.partitions_def
    return [as_key(pdef, pk) for pk in context.partition_keys]


def split(context: dg.AssetExecutionContext) -> tuple[str, int]:
    """(region, year) of the running partition."""
    dims = dimensions(context)
    return dims["region"], year_of_key(dims["year"])


# ------------------------------------------------------------------ benchmark sweeps: policy × seed
#: Seeds offered to sweeps (a static set, so partitions need no instance state; extend as needed).
SWEEP_SEEDS = [str(s) for s in range(10)]


def _policies() -> list[str]:
    from sim_core.policies import registry  # the built-in policy names (pure Python: no kernel is imported)

    return [s.name for s in registry.BUILTIN]


def _policy_seed() -> dg.MultiPartitionsDefinition:
    return dg.MultiPartitionsDefinition(
        {
            "policy": dg.StaticPartitionsDefinition(_policies()),
            "seed": dg.StaticPartitionsDefinition(SWEEP_SEEDS),
        }
    )


_LAZY = {"policy_seed": _policy_seed}


def __getattr__(name: str):
    """``policy_seed`` is built on first use: its policy names come from ``sim_core.engine``, whose
    import (Numba) the grid ingest does not need (PEP 562)."""
    if name in _LAZY:
        value = globals()[name] = _LAZY[name]()
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def sweep_key(policy: str, seed: int) -> dg.MultiPartitionKey:
    return dg.MultiPartitionKey({"policy": policy, "seed": str(seed)})


def split_sweep(context: dg.AssetExecutionContext) -> tuple[str, int]:
    """(policy, seed) of the running partition."""
    dims = dimensions(context)
    return dims["policy"], int(dims["seed"])
