"""The location registry: a data file (``gridshift/data/locations.csv``), not code.

Adding a location is adding a row. Each row maps the benchmark's location code to its
Electricity Maps zone id, price market and currency, ENTSO-E area, IANA time zone, weather
coordinates, macro-cluster (network model) and the cloud region used per provider.
Sources: SustainCluster's location table (``reference/locations_reference.csv`` of the data mirror), the zone ids
found inside the Electricity Maps files, and IANA zone names. Weather coordinates for the
European markets without a reference place are their capitals/financial centres.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass
from functools import cache
from importlib.resources import files
from zoneinfo import ZoneInfo

import polars as pl

from gridshift.errors import GridshiftError

LOCATION_CODE = re.compile(r"^[A-Z]{2}(-[A-Z0-9]{1,8}){0,3}$")
PROVIDERS = ("aws", "gcp", "azure")
MACRO_CLUSTERS = ("US", "EU", "SA", "AP")


class UnknownLocationError(GridshiftError):
    pass


@dataclass(frozen=True)
class Location:
    location: str
    emaps_zone: str
    market: str
    price_currency: str
    entsoe_area: str | None
    iso_market: str | None
    timezone: str
    weather_place: str
    lat: float
    lon: float
    macro_cluster: str
    aws_region: str
    gcp_region: str
    azure_region: str

    def cloud_region(self, provider: str) -> str:
        if provider not in PROVIDERS:
            raise GridshiftError(f"unknown cloud provider {provider!r}; expected one of {PROVIDERS}")
        return getattr(self, f"{provider}_region")


def registry_frame() -> pl.DataFrame:
    """The registry as a polars frame (the ``locations`` warehouse table is loaded from this)."""
    text = files("gridshift").joinpath("data/locations.csv").read_bytes()
    df = pl.read_csv(text, infer_schema=False).with_columns(
        pl.col("lat").cast(pl.Float64), pl.col("lon").cast(pl.Float64)
    )
    return df.with_columns(
        [pl.when(pl.col(c) == "").then(None).otherwise(pl.col(c)).alias(c) for c in ("entsoe_area", "iso_market")]
    )


@cache
def _registry() -> dict[str, Location]:
    out: dict[str, Location] = {}
    for row in registry_frame().iter_rows(named=True):  # 23 rows: fine to iterate
        fields = {k: row[k] for k in Location.__dataclass_fields__}
        loc = Location(**fields)
        if not LOCATION_CODE.match(loc.location):
            raise GridshiftError(f"locations.csv: malformed location code {loc.location!r}")
        ZoneInfo(loc.timezone)  # raises for a non-IANA zone
        if loc.macro_cluster not in MACRO_CLUSTERS:
            raise GridshiftError(f"locations.csv: {loc.location}: unknown macro cluster {loc.macro_cluster!r}")
        out[loc.location] = loc
    return out


def all_codes() -> list[str]:
    return list(_registry())


def get(code: str) -> Location:
    """Look a location up by code, in any letter case (``de-lu`` is ``DE-LU``); the error for an unknown
    code suggests the closest known ones and lists them all."""
    canonical = code.strip().upper() if isinstance(code, str) else code
    if not isinstance(canonical, str) or not LOCATION_CODE.match(canonical):
        raise UnknownLocationError(f"malformed location code {code!r} (expected e.g. DE-LU or US-CAL-CISO)")
    try:
        return _registry()[canonical]
    except KeyError:
        close = difflib.get_close_matches(canonical, all_codes(), n=3, cutoff=0.6)
        hint = f"did you mean {' or '.join(close)}? " if close else ""
        raise UnknownLocationError(
            f"unknown location {code!r}; {hint}known: {', '.join(all_codes())} "
            "(add a row to gridshift/data/locations.csv to add one)"
        ) from None


def parse_codes(text: str) -> list[str]:
    """Parse ``A,B,C`` (or ``all``; any letter case) into validated, de-duplicated, canonical location codes
    in the given order."""
    if text.strip().lower() == "all":
        return all_codes()
    codes: list[str] = []
    for part in text.split(","):
        if part.strip():
            code = get(part).location
            if code not in codes:
                codes.append(code)
    if not codes:
        raise UnknownLocationError("no location codes given")
    return codes
