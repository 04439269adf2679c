"""Cloud regions as datacenter sites: a data file (``gridshift/data/cloud_regions.csv``), not code.

Each row names a provider's region (provider, region id, the city the provider's public region list
gives, coordinates) and the Electricity Maps zone of the grid that supplies it. A site placed in a
region takes its signals from the registry location (``gridshift/data/locations.csv``) with that
zone -- the zone's carbon intensity, the location's market price and weather -- and keeps its own
coordinates for the network model (``scenario_builder.sites``). A region whose zone no location
covers is refused with the row to add. The file cites the providers' region lists; a user may pass
another file of the same columns (``--cloud-regions``, tests), checked the same way.
"""

from __future__ import annotations

import io
import re
from dataclasses import dataclass
from functools import cache
from importlib.resources import files
from pathlib import Path

import polars as pl

from gridshift import locations
from gridshift.errors import DataError, GridshiftError

DATA_FILE = "data/cloud_regions.csv"
COLUMNS = ["provider", "region_id", "emaps_zone", "city", "lat", "lon", "coord_source", "source_url"]
COORD_SOURCES = ("city", "azure-metadata", "user")
REGION_ID = re.compile(r"^[a-z0-9][a-z0-9-]{1,40}$")
ZONE = re.compile(r"^[A-Z]{2}(-[A-Z0-9]{1,8}){0,3}$")


@dataclass(frozen=True)
class CloudRegion:
    provider: str
    region_id: str
    emaps_zone: str
    city: str
    lat: float
    lon: float
    coord_source: str
    source_url: str

    @property
    def key(self) -> str:
        """``provider:region_id``, how a sites file names it."""
        return f"{self.provider}:{self.region_id}"


def _bad(file: str, column: str, df: pl.DataFrame, mask: pl.Series, why: str) -> DataError:
    rows = df.with_row_index("_i").filter(mask)
    # rows are numbered as data rows of the file (1 = the first row after the header)
    return DataError(f"{why}", file=file, column=column, rows=[i + 1 for i in rows["_i"].head(5).to_list()],
                     values=rows[column].head(5).to_list())


def parse(content: bytes, file: str) -> dict[str, CloudRegion]:
    """Read and check a cloud-region file; ``provider:region_id`` -> region. Every problem is a
    :class:`DataError` naming the file, the column, the data rows (1-based) and the values."""
    try:
        df = pl.read_csv(io.BytesIO(content), comment_prefix="#", infer_schema=False)
    except Exception as exc:  # noqa: BLE001 - polars raises several types for malformed CSV
        raise DataError(f"cannot parse the cloud-region file: {exc}", file=file) from None
    if df.columns != COLUMNS:
        raise DataError(f"columns {df.columns} are not {COLUMNS}", file=file)
    df = df.with_columns(pl.col(c).str.strip_chars() for c in COLUMNS)
    for c in COLUMNS:
        if df[c].null_count() or (df[c] == "").any():
            raise _bad(file, c, df, df[c].is_null() | (df[c] == ""), "empty value")
    checks = [
        ("provider", ~df["provider"].is_in(locations.PROVIDERS), f"provider must be one of {locations.PROVIDERS}"),
        ("region_id", ~df["region_id"].str.contains(REGION_ID.pattern), f"region id must match {REGION_ID.pattern}"),
        ("emaps_zone", ~df["emaps_zone"].str.contains(ZONE.pattern), "not an Electricity Maps zone id"),
        ("coord_source", ~df["coord_source"].is_in(COORD_SOURCES), f"coord_source must be one of {COORD_SOURCES}"),
        ("source_url", ~df["source_url"].str.starts_with("https://"), "source_url must be an https:// address"),
    ]
    for col, mask, why in checks:
        if mask.any():
            raise _bad(file, col, df, mask, why)
    for col, lim in (("lat", 90.0), ("lon", 180.0)):
        x = df[col].cast(pl.Float64, strict=False)
        bad = x.is_null() | x.is_nan() | (x.abs() > lim)
        if bad.any():
            raise _bad(file, col, df, bad, f"{col} must be a number in [-{lim:g}, {lim:g}] degrees")
    key = df["provider"] + ":" + df["region_id"]
    dup = key.is_duplicated()
    if dup.any():
        raise _bad(file, "region_id", df, dup, "region listed twice for its provider")
    out = {}
    for r in df.iter_rows(named=True):  # tens of rows
        reg = CloudRegion(**{**r, "lat": float(r["lat"]), "lon": float(r["lon"])})
        out[reg.key] = reg
    return out


@cache
def _default() -> dict[str, CloudRegion]:
    return parse(files("gridshift").joinpath(DATA_FILE).read_bytes(), "gridshift/" + DATA_FILE)


def registry(path: str | Path | None = None) -> dict[str, CloudRegion]:
    """The cloud regions of ``path`` (default: the repository's file)."""
    if path is None:
        return _default()
    p = Path(path)
    try:
        content = p.read_bytes()
    except OSError as exc:
        raise DataError(f"cannot read the cloud-region file: {exc}", file=str(p)) from None
    return parse(content, str(p))


def get(key: str, path: str | Path | None = None) -> CloudRegion:
    """A region by ``provider:region_id``; the error lists the provider's known regions."""
    reg = registry(path)
    if key in reg:
        return reg[key]
    prov = key.split(":", 1)[0]
    known = sorted(k for k in reg if k.startswith(prov + ":")) or sorted(reg)
    raise GridshiftError(f"unknown cloud region {key!r}; known: {', '.join(known)} "
                         f"(add a row to {path or 'gridshift/' + DATA_FILE})")


def location_of(region: CloudRegion) -> str:
    """The registry location whose Electricity Maps zone supplies ``region``: its signals are the site's."""
    codes = [c for c in locations.all_codes() if locations.get(c).emaps_zone == region.emaps_zone]
    if not codes:
        raise GridshiftError(
            f"cloud region {region.key} is in zone {region.emaps_zone}, which no location of "
            "gridshift/data/locations.csv covers; add a location row for that zone (its market, time zone and "
            "weather place) and ingest its signals (scenario_builder ingest ... --live) to use it")
    if len(codes) > 1:  # (the registry maps each zone once; two rows would make the choice ambiguous)
        raise GridshiftError(f"zone {region.emaps_zone} of {region.key} is covered by several locations {codes}")
    return codes[0]
