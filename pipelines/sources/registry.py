"""Every source implementation, keyed by its ``gridshift.sources`` name, and the order they are asked in.

``implementations()`` holds one instance per registered source name (a test checks the set equals
``gridshift.sources.names()``). For a grid partition (signal kind × location × UTC year),
:func:`fetch` asks, in the order of :data:`GRID_ORDER`:

1. the **mirror** of every source of the kind that covers the location and has a mirror layout,
   when a mirror folder is given and holds the file;
2. then, with ``live``, the **live** route of every source of the kind that covers the location.

A live source that does not hold the partition (:class:`NotPublished`: 404, no token, route off)
passes to the next; any other failure (a bad body, a refused token, a zone it does not know) stops
the search. When nothing provides the partition, ``SourceUnavailableError`` names every source
tried and how to provide each (mirror path, ``--live``, token, URL or package). The raw file's
``source`` names the implementation that parses it (:func:`for_raw`); a live file carries the keys of
the HTTP cache entries it was answered from (``RawFile.cache_keys``), so a caller that refuses it can
remove them (``pipelines.core.http.forget``).
"""

from __future__ import annotations

from dataclasses import replace
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING

from gridshift import locations
from gridshift.errors import SourceUnavailableError
from gridshift.home import Home, safe_join
from gridshift.locations import Location
from gridshift.sources import SIGNAL_TABLES
from pipelines.core import http
from pipelines.core.raw import RawFile
from pipelines.core.source import GridSource, NotPublished, Source
from pipelines.sources import (
    azure_latency,
    egress,
    electricitymaps,
    entsoe,
    iso,
    openmeteo,
    persico,
    sustaincluster_prices,
)

if TYPE_CHECKING:
    from pipelines.workload.base import WorkloadSource

#: Grid sources per signal kind, in the order they are asked (the mirror of each first, then live).
GRID_ORDER: dict[str, tuple[GridSource, ...]] = {
    "carbon": (electricitymaps.CSV, electricitymaps.API),
    "price": (sustaincluster_prices.SOURCE, entsoe.SOURCE, iso.SOURCE),
    "weather": (openmeteo.ARCHIVE, openmeteo.API),
}
assert set(GRID_ORDER) == set(SIGNAL_TABLES)

#: The grid and reference sources (the workload sources are added by :func:`implementations`).
_DATA_SOURCES: dict[str, Source] = {
    s.name: s
    for s in (*(s for kind in GRID_ORDER.values() for s in kind), egress.SOURCE, persico.SOURCE, azure_latency.SOURCE)
}


@cache
def implementations() -> dict[str, Source]:
    """Every source by name: the grid and reference sources, then the workload sources. The workload
    modules are imported here, on first use, not with this module: they load Numba and the compiled
    kernels (about 0.4 CPU-seconds), which a grid or reference ingest never calls."""
    from pipelines.workload import alibaba2020, alibaba2023, derive, synthetic

    return {**_DATA_SOURCES, **{s.name: s for s in (alibaba2020.TRACE, alibaba2023.TRACE, synthetic.GENERATOR,
                                                     derive.REFERENCE)}}


def workloads() -> tuple[str, ...]:
    """The workloads ``warehouse.ingest_workload`` can derive (a source each), by name."""
    from pipelines.workload.base import WorkloadSource

    return tuple(n for n, s in implementations().items() if isinstance(s, WorkloadSource))


def get(name: str) -> Source:
    src = _DATA_SOURCES.get(name) or implementations().get(name)
    if src is None:
        raise SourceUnavailableError(f"no implementation of source {name!r}; known: {sorted(implementations())}")
    return src


def workload(name: str) -> WorkloadSource:
    from pipelines.workload.base import WorkloadSource

    src = implementations().get(name)
    if not isinstance(src, WorkloadSource):
        raise ValueError(f"unknown workload {name!r}; expected one of {workloads()}")
    return src


def grid(kind: str) -> tuple[GridSource, ...]:
    if kind not in GRID_ORDER:
        raise ValueError(f"unknown grid signal {kind!r}; expected one of {tuple(GRID_ORDER)}")
    return GRID_ORDER[kind]


def for_raw(raw: RawFile) -> GridSource:
    """The grid source that parses ``raw`` (by the source name it was landed under)."""
    src = get(raw.source)
    if not isinstance(src, GridSource):
        raise SourceUnavailableError(f"{raw.source!r} is not a grid signal source")
    return src


def mirror_files(kind: str, location: Location, year: int) -> list[tuple[GridSource, str]]:
    """(source, mirror path) of every source of ``kind`` with a mirror layout for ``location``, in order."""
    out = []
    for src in grid(kind):
        rel = src.mirror_relpath(location, year) if src.covers(location) else None
        if rel is not None:
            out.append((src, rel))
    return out


def in_mirror(kind: str, location: str, year: int, mirror: Path | None) -> bool:
    """Whether a mirror holds a file of this partition (checked without reading it)."""
    if mirror is None:
        return False
    return any(safe_join(Path(mirror), *rel.split("/")).is_file()
               for _, rel in mirror_files(kind, locations.get(location), year))


def how_to(kind: str, location: Location) -> str:
    """What a user can do to make this partition available live (token / package / URL)."""
    hints = [h for src in grid(kind) if src.live and src.covers(location) and (h := src.how_to(location))]
    return ", or ".join(hints) or f"no live source serves {location.location}: provide the mirror file"


def fetch(kind: str, location: Location, year: int, *, mirror: Path | None, live: bool = False,
          home: Home | None = None, session=None) -> RawFile:
    """The raw file of one grid partition, from the first source that has it (see the module docstring).

    ``session``: a :func:`pipelines.core.http.make_session` session to reuse (else one is made under
    ``home`` for the live sources and closed afterwards).
    """
    table = SIGNAL_TABLES[kind]
    tried: list[str] = []
    mirrored = mirror_files(kind, location, year)
    if mirror is None:
        tried.append(f"no local mirror configured for {' or '.join(rel for _, rel in mirrored)} "
                     "(pass --mirror DIR, set GRIDSHIFT_MIRROR, or set the home's mirror once with "
                     "`gridshift ui --mirror DIR`)")
    else:
        for src, rel in mirrored:
            try:
                return src.read_mirror(mirror, rel)
            except SourceUnavailableError as exc:
                tried.append(str(exc))
    unavailable = f"{table} {location.location} {year} is unavailable: "
    if not live:
        raise SourceUnavailableError(unavailable + "; ".join(tried)
                                     + f"; live fetching is off (pass --live; it needs: {how_to(kind, location)})")
    live_sources = [s for s in grid(kind) if s.live and s.covers(location)]
    if not live_sources:
        raise SourceUnavailableError(unavailable + "; ".join([*tried, f"live: {how_to(kind, location)}"]))
    home = home or Home.resolve()
    own = session is None
    session = session or http.make_session(home)
    answered = getattr(session, "answered", [])
    try:
        for src in live_sources:
            try:
                first = len(answered)
                raw = src.fetch(location, year, home=home, session=session)
                # the HTTP cache entries it was answered from: removed if a later check refuses the file
                return replace(raw, cache_keys=(*raw.cache_keys, *answered[first:]))
            except NotPublished as exc:
                tried.append(f"live: {exc}")
            except SourceUnavailableError as exc:
                raise SourceUnavailableError(unavailable + "; ".join([*tried, f"live: {exc}"])) from None
    finally:
        if own:
            session.close()
    raise SourceUnavailableError(unavailable + "; ".join(tried))
