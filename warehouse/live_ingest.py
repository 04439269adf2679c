"""Live fetch + parse dispatch for grid partitions (the mirror formats stay in ``ingest.parse_grid``).

Per kind:

- ``carbon``: Electricity Maps yearly CSV (same bytes as the mirror's file → parsed by the mirror
  parser), else API v3 ``past-range`` with ``ELECTRICITYMAPS_TOKEN``.
- ``price``: ENTSO-E day-ahead (``entsoe_area`` in the registry, ``ENTSOE_API_KEY``), or the
  ISO adapter (``iso_market``: CAISO, ERCOT, NYISO, PJM with ``PJM_API_KEY``, IESO) over gridstatus.
- ``weather``: Open-Meteo archive API (FlatBuffers).

Each fetch returns the raw bytes to land; :func:`parse_live` turns a live-format raw file into the
validated canonical frame. One cached session is made per call unless the caller passes one.
"""

from __future__ import annotations

from datetime import timedelta

import polars as pl
import requests

from gridshift import locations
from gridshift.errors import SourceUnavailableError
from gridshift.home import Home
from pipelines import http
from pipelines.live import emaps_live, entsoe_api, iso_prices, openmeteo_api
from pipelines.raw import RawFile
from pipelines.tabular import DEFAULT_MAX_GAP
from warehouse.load import validate

TABLES = {"carbon": "grid_carbon", "price": "grid_price", "weather": "weather"}
LIVE_SOURCES = {emaps_live.API_SOURCE, entsoe_api.SOURCE, iso_prices.SOURCE, openmeteo_api.SOURCE}


def how_to(kind: str, location: str) -> str:
    """What a user can do to make this partition available live (token / package / URL)."""
    loc = locations.get(location)
    if kind == "carbon":
        return f"{emaps_live.CSV_HELP}, or {emaps_live.TOKEN_HELP}"
    if kind == "price":
        if loc.entsoe_area:
            return entsoe_api.TOKEN_HELP
        if loc.iso_market in iso_prices.SPECS:
            spec = iso_prices.SPECS[loc.iso_market]
            extra = f" and set {spec.token_env}" if spec.token_env else ""
            return f"install gridstatus{extra}"
        return f"no live price source for {location} (market {loc.market}): provide the mirror file"
    return "no token needed (Open-Meteo); check the network or GRIDSHIFT_OPENMETEO_URL"


def fetch_live(
    kind: str, location: str, year: int, *, home: Home, session: requests.Session | None = None
) -> RawFile:
    """Fetch one partition from its publisher (through the shared cached session)."""
    loc = locations.get(location)
    own = session is None
    if kind == "price" and not loc.entsoe_area:
        if loc.iso_market in iso_prices.SPECS:
            return iso_prices.fetch(loc, year, home=home)
        raise SourceUnavailableError(
            f"grid_price {location} {year}: no live source for market {loc.market!r} "
            "(only ENTSO-E zones and CAISO/ERCOT/NYISO/PJM/IESO); provide "
            f"prices/standardized/{location}/{location}_electricity_prices_{year}.csv in a mirror"
        )
    session = session or http.make_session(home)
    try:
        if kind == "carbon":
            return emaps_live.fetch(loc, year, session=session)
        if kind == "price":
            return entsoe_api.fetch(loc, year, session=session)
        if kind == "weather":
            return openmeteo_api.fetch(loc, year, session=session)
        raise ValueError(f"unknown grid kind {kind!r}")
    finally:
        if own:
            session.close()


def is_live_raw(raw: RawFile) -> bool:
    return raw.source in LIVE_SOURCES


def parse_live(
    kind: str, raw: RawFile, location: str, year: int, *, max_gap: timedelta = DEFAULT_MAX_GAP
) -> pl.DataFrame:
    """Parse and validate a live-format raw file (raises DataError naming file, column, rows)."""
    loc = locations.get(location)
    if raw.source == openmeteo_api.SOURCE:
        df = openmeteo_api.parse(raw, loc, max_gap=max_gap)
    elif raw.source == entsoe_api.SOURCE:
        df = entsoe_api.parse(raw, loc, year=year, max_gap=max_gap)
    elif raw.source == iso_prices.SOURCE:
        df = iso_prices.parse(raw, loc, year=year, max_gap=max_gap)
    elif raw.source == emaps_live.API_SOURCE:
        df = emaps_live.parse_api(raw, loc, max_gap=max_gap)
    else:
        raise ValueError(f"{raw.source!r} is not a live format")
    return validate(TABLES[kind], df, file=raw.uri)
