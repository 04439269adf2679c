"""Ingest: fetch → parse → validate → land raw → write, one partition at a time.

These are the functions the Dagster assets call (and, through them, the CLI). Each one either
writes a whole partition together with the raw file's lineage row, or writes nothing.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

import polars as pl

from gridshift import locations
from gridshift.errors import SourceUnavailableError
from gridshift.home import Home
from pipelines import egress, electricitymaps, network, openmeteo, prices
from pipelines.raw import RawFile, land, read_mirror
from pipelines.tabular import DEFAULT_MAX_GAP
from warehouse.load import validate, write

GRID_SOURCES = ("carbon", "price", "weather")


@dataclass
class IngestReport:
    """What one partition ingest did: rows written, coverage of the UTC year, estimated share."""

    table: str
    location: str | None
    year: int | None
    rows: int
    raw_sha256: str
    raw_uri: str
    expected: int | None = None
    present: int | None = None
    estimated_share: float | None = None
    extra: dict = field(default_factory=dict)

    @property
    def coverage(self) -> float | None:
        if not self.expected:
            return None
        return self.present / self.expected


def year_bounds(year: int) -> tuple[datetime, datetime]:
    return datetime(year, 1, 1, tzinfo=UTC), datetime(year + 1, 1, 1, tzinfo=UTC)


def _commit(home: Home, raw: RawFile, table: str, df: pl.DataFrame) -> None:
    """Land the raw bytes, then write rows + lineage in one transaction; undo the landing on failure."""
    home.ensure()
    raw_row, created = land(home.root, raw)
    try:
        write(home.warehouse_path, {"raw_files": validate("raw_files", raw_row), table: df})
    except BaseException:
        if created is not None:
            with contextlib.suppress(FileNotFoundError):
                created.chmod(0o644)
                created.unlink()
        raise


@dataclass(frozen=True)
class GridSource:
    table: str
    source_name: str
    relpath: Callable[[locations.Location, int], str]
    parse: Callable[..., pl.DataFrame]
    step: timedelta
    row_base: int = 2  # error rows: CSV line numbers (2) or JSON array positions (0)


GRID: dict[str, GridSource] = {
    "carbon": GridSource("grid_carbon", electricitymaps.SOURCE, electricitymaps.mirror_relpath,
                         electricitymaps.parse, timedelta(hours=1)),
    "price": GridSource("grid_price", prices.SOURCE, prices.mirror_relpath, prices.parse, timedelta(hours=1)),
    "weather": GridSource("weather", openmeteo.SOURCE, openmeteo.mirror_relpath, openmeteo.parse,
                          timedelta(hours=1), row_base=0),
}


def fetch_grid(
    kind: str, location: str, year: int, *, mirror: Path | None, live: bool = False,
    session=None, home: Home | None = None,
) -> RawFile:
    """Fetch the raw file for one grid partition.

    Source order (docs/sources.md): valid warehouse rows (checked by the caller) → the local
    mirror, if one is given and holds the file → the live publisher, if ``live``. When nothing can
    provide it, ``SourceUnavailableError`` names every source tried and how to provide each
    (mirror folder, ``--live``, token or URL). ``session``: a :func:`pipelines.http.make_session`
    session to reuse (one is made under ``home`` otherwise).
    """
    src = GRID[kind]
    loc = locations.get(location)
    relpath = src.relpath(loc, year)
    tried: list[str] = []
    if mirror is not None:
        try:
            return read_mirror(mirror, relpath, src.source_name)
        except SourceUnavailableError as exc:
            tried.append(str(exc))
    else:
        tried.append(f"{src.source_name}: no local mirror configured for {relpath} "
                     "(pass --mirror DIR or set GRIDSHIFT_MIRROR, e.g. ../shared/data)")
    from warehouse import live_ingest

    if not live:
        raise SourceUnavailableError(
            f"{src.table} {location} {year} is unavailable: " + "; ".join(tried)
            + f"; live fetching is off (pass --live; it needs: {live_ingest.how_to(kind, location)})"
        )
    try:
        return live_ingest.fetch_live(kind, location, year, home=home or Home.resolve(), session=session)
    except SourceUnavailableError as exc:
        raise SourceUnavailableError(
            f"{src.table} {location} {year} is unavailable: " + "; ".join([*tried, f"live: {exc}"])
        ) from None


def parse_grid(kind: str, raw: RawFile, location: str, *, max_gap: timedelta = DEFAULT_MAX_GAP) -> pl.DataFrame:
    """Parse and validate (raises DataError naming file, column, rows, values)."""
    src = GRID[kind]
    df = src.parse(raw, locations.get(location), max_gap=max_gap)
    return validate(src.table, df, file=raw.uri, row_base=src.row_base)


def ingest_grid(
    kind: str, location: str, year: int, *, home: Home, mirror: Path | None,
    max_gap: timedelta = DEFAULT_MAX_GAP, live: bool = False,
) -> IngestReport:
    """Ingest one (signal, location, year) partition into its canonical table (mirror → live)."""
    src = GRID[kind]
    raw = fetch_grid(kind, location, year, mirror=mirror, live=live, home=home)
    if live:
        from warehouse import live_ingest

        if live_ingest.is_live_raw(raw):
            df = live_ingest.parse_live(kind, raw, location, year, max_gap=max_gap)
        else:
            df = parse_grid(kind, raw, location, max_gap=max_gap)
    else:
        df = parse_grid(kind, raw, location, max_gap=max_gap)
    _commit(home, raw, src.table, df)
    return partition_report(kind, location, year, df, raw)


def partition_report(kind: str, location: str, year: int, df: pl.DataFrame, raw: RawFile) -> IngestReport:
    src = GRID[kind]
    lo, hi = year_bounds(year)
    in_year = df.filter((pl.col("ts_utc") >= lo) & (pl.col("ts_utc") < hi))
    step = src.step
    if kind == "price" and df.height:
        step = timedelta(minutes=int(df["resolution_min"].min()))
    expected = int((hi - lo) / step)
    est = float(in_year["is_estimated"].mean()) if kind == "carbon" and in_year.height else None
    return IngestReport(
        table=src.table, location=location, year=year, rows=df.height, raw_sha256=raw.sha256,
        raw_uri=raw.uri, expected=expected, present=in_year.height, estimated_share=est,
    )


def ingest_egress(*, home: Home, mirror: Path | None, source: str | None = None) -> list[IngestReport]:
    """Egress prices for every provider: from the repository's rule table (default), or from the mirror's
    matrices (``source="mirror"`` or ``GRIDSHIFT_EGRESS_SOURCE=mirror``); see :mod:`pipelines.egress`."""
    source = (source or os.environ.get("GRIDSHIFT_EGRESS_SOURCE", "") or "repo").strip().lower()
    if source not in egress.EGRESS_SOURCES:
        raise SourceUnavailableError(f"GRIDSHIFT_EGRESS_SOURCE={source!r}: choose one of {egress.EGRESS_SOURCES}")
    reports = []
    for provider in egress.PROVIDERS:
        if source == "repo":
            raw = egress.rules_raw()
            df = validate("egress_price", egress.rows_from_rules(raw, provider), file=raw.uri)
        else:
            raw = read_mirror(mirror, egress.mirror_relpath(provider), egress.SOURCE)
            df = validate("egress_price", egress.parse(raw, provider), file=raw.uri)
        _commit(home, raw, "egress_price", df)
        reports.append(IngestReport("egress_price", None, None, df.height, raw.sha256, raw.uri,
                                    extra={"provider": provider, "input": source}))
    return reports


def ingest_network(*, home: Home, mirror: Path | None) -> IngestReport:
    raw = read_mirror(mirror, network.MIRROR_RELPATH, network.SOURCE)
    df = validate("network_path", network.parse(raw), file=raw.uri)
    _commit(home, raw, "network_path", df)
    return IngestReport("network_path", None, None, df.height, raw.sha256, raw.uri,
                        extra={"bases": df["basis"].value_counts().sort("basis").rows()})


def ingest_locations(*, home: Home) -> int:
    """Load the registry into the ``locations`` table (it is repository data, not a download)."""
    home.ensure()
    df = validate("locations", locations.registry_frame(), file="gridshift/data/locations.csv")
    write(home.warehouse_path, {"locations": df})
    return df.height
