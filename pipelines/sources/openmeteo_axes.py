"""What an Open-Meteo archive response says about its own axes: its time offset and its units.

- ``utc_offset_seconds`` is the one fixed shift of the response's local ``hourly.time`` grid. It must be
  an offset the response's own IANA ``timezone`` (absent: the registry's zone of the location) takes at
  some time in the partition's year, per ``zoneinfo``: US-CAL-CISO 2023 says −25200 (PDT) for the whole
  year, which Los Angeles takes in summer; an offset the zone never takes (Berlin at +3 h) would shift
  every row of the year by the difference, and is refused. The zone itself must be the location's own
  (its offsets in the year those of the registry's zone) or UTC (``GMT``, what the live client asks for): a
  response that names another zone with that zone's offset — a time-zone field that lies consistently —
  would shift every row just the same.
- ``hourly_units`` names each array's unit. The canonical columns are °C, % and km/h: an array in a
  unit Open-Meteo offers instead (°F; m/s, mph, kn) is converted, any other unit refused. A response
  without ``hourly_units`` is read in the API's default units.
"""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import polars as pl

from gridshift.errors import DataError
from gridshift.locations import Location

#: canonical column -> {unit as Open-Meteo writes it: conversion to the canonical unit}
UNITS: dict[str, dict[str, pl.Expr]] = {
    "temp_c": {"°C": pl.col("temp_c"), "°F": (pl.col("temp_c") - 32.0) * (5.0 / 9.0)},
    "rh_pct": {"%": pl.col("rh_pct")},
    "cloudcover_pct": {"%": pl.col("cloudcover_pct")},
    "windspeed_kmh": {"km/h": pl.col("windspeed_kmh"), "m/s": pl.col("windspeed_kmh") * 3.6,
                      "mp/h": pl.col("windspeed_kmh") * 1.609344, "mph": pl.col("windspeed_kmh") * 1.609344,
                      "kn": pl.col("windspeed_kmh") * 1.852},
}


def zone_offsets(zone: str, year: int) -> set[int]:
    """Every UTC offset (s) ``zone`` takes during ``year`` (sampled daily at noon UTC: DST periods last months)."""
    tz = ZoneInfo(zone)
    start = datetime(year, 1, 1, 12, tzinfo=UTC)
    days = (datetime(year + 1, 1, 1, tzinfo=UTC) - datetime(year, 1, 1, tzinfo=UTC)).days
    return {int((start + timedelta(days=k)).astimezone(tz).utcoffset().total_seconds()) for k in range(days)}


def check_offset(body: dict, offset: int, location: Location, year: int, file: str) -> None:
    """Refuse an ``utc_offset_seconds`` that the response's time zone never takes in ``year``."""
    zone = body.get("timezone", location.timezone)
    try:
        if not isinstance(zone, str) or not zone:
            raise ValueError(zone)
        allowed = zone_offsets(zone, year)
    except (ZoneInfoNotFoundError, ValueError):
        raise DataError("timezone is not an IANA time zone", file=file, column="timezone", values=[zone]) from None
    utc = {"GMT", "UTC", "Etc/UTC", "Etc/GMT"}
    if zone not in utc and zone != location.timezone and allowed != zone_offsets(location.timezone, year):
        raise DataError(
            f"the response's time zone {zone} (offsets {sorted(allowed)} s in {year}) is not the location's "
            f"{location.location} ({location.timezone}, offsets {sorted(zone_offsets(location.timezone, year))} s) nor "
            "UTC: its local times would be read shifted by the difference",
            file=file, column="timezone", values=[zone],
        )
    if offset not in allowed:
        raise DataError(
            f"utc_offset_seconds {offset} is not an offset of the response's time zone {zone} in {year} "
            f"(it takes {sorted(allowed)} s): every hour would be shifted by the difference",
            file=file, column="utc_offset_seconds", values=[offset],
        )


def unit_conversions(body: dict, columns: dict[str, str], file: str) -> list[pl.Expr]:
    """The expressions that bring each ``hourly`` array (``columns``: array key -> canonical column) to its
    canonical unit, from ``hourly_units``; a unit that is not known for the column is refused by name."""
    units = body.get("hourly_units")
    if units is None:
        return []
    if not isinstance(units, dict):
        raise DataError("'hourly_units' is not an object", file=file, column="hourly_units", values=[units])
    out = []
    for key, col in columns.items():
        if key not in units:
            continue
        unit = units[key]
        known = UNITS[col]
        if unit not in known:
            raise DataError(f"unit {unit!r} of hourly.{key} is not one of {sorted(known)} (canonical column "
                            f"{col})", file=file, column=f"hourly_units.{key}", values=[unit])
        out.append(known[unit].alias(col))
    return out
