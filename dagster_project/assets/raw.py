"""The raw upstream files as external assets (``dg.AssetSpec``): the head of the lineage.

One asset per source of ``gridshift.sources`` that delivers files (every access but ``generated``), keyed
``raw/<source name>``, plus the location registry shipped in the repository. Dagster does not materialize
them: they stand for the publishers' files (in the mirror, or fetched live), and the warehouse tables
declare them as dependencies, so the asset graph runs from the raw files through the warehouse tables to
the bundle and the benchmark runs. What each ingested partition read (its raw file's sha256 and URI) is in
that partition's materialization metadata.
"""

from __future__ import annotations

import dagster as dg

from gridshift import sources

GROUP = "raw"


def raw_key(source: str) -> dg.AssetKey:
    """The asset key of a source's raw files (asset names allow letters, digits and ``_`` only)."""
    return dg.AssetKey([GROUP, source.replace("-", "_")])


def _spec(info: sources.SourceInfo) -> dg.AssetSpec:
    return dg.AssetSpec(
        raw_key(info.name), group_name=GROUP, kinds={"file"},
        description=f"Raw files of {info.name} ({info.kind}; {', '.join(info.access)}): {info.attribution}",
        metadata={"source": info.name, "feeds": info.table, "access": ", ".join(info.access),
                  "licence": info.licence, "url": dg.MetadataValue.url(info.url)},
    )


#: source name -> its external asset
SPECS: dict[str, dg.AssetSpec] = {s.name: _spec(s) for s in sources.SOURCES if "generated" not in s.access}
LOCATION_REGISTRY = dg.AssetSpec(
    dg.AssetKey([GROUP, "location_registry"]), group_name=GROUP, kinds={"csv"},
    description="The location registry shipped in the repository (gridshift/data/locations.csv): codes, "
    "coordinates, time zones and the zones of each source.",
)


def feeding(*tables: str) -> list[dg.AssetSpec]:
    """The raw assets of the sources that feed any of ``tables`` (a workload's trace feeds its tasks too)."""
    return [spec for name, spec in SPECS.items() if sources.get(name).table in tables]


ASSETS = [*SPECS.values(), LOCATION_REGISTRY]
