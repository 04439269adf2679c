"""Open-Meteo historical weather: the archive API's JSON response (CC-BY-4.0).

Mirror layout: ``open-meteo/<LOCATION>/<YEAR>.json``. The ``hourly.time`` values carry no offset
but are a uniform grid shifted by the response's one fixed ``utc_offset_seconds`` (not the zone's
DST rules): UTC = time − utc_offset_seconds. A local-year file therefore starts a few hours off
00:00 UTC; the neighbouring year's file supplies the edge hours (rows are keyed by UTC time).
"""

from __future__ import annotations

from datetime import timedelta

import polars as pl

from gridshift.errors import DataError
from gridshift.locations import Location
from gridshift.wetbulb import stull_wetbulb
from pipelines.raw import RawFile
from pipelines.tabular import DEFAULT_MAX_GAP, check_time_grid

SOURCE = "open-meteo-archive"
LICENSE = "CC-BY-4.0; attribution: Weather data by Open-Meteo.com (https://open-meteo.com)"
HOURLY = {
    "temperature_2m": "temp_c",
    "relative_humidity_2m": "rh_pct",
    "cloudcover": "cloudcover_pct",
    "windspeed_10m": "windspeed_kmh",
}
REQUIRED_HOURLY = ("time", "temperature_2m", "relative_humidity_2m")
MAX_COORD_DIFF_DEG = 0.5


def mirror_relpath(location: Location, year: int) -> str:
    return f"open-meteo/{location.location}/{year}.json"


def parse(raw: RawFile, location: Location, *, max_gap: timedelta = DEFAULT_MAX_GAP) -> pl.DataFrame:
    """Parse one archive response into ``weather`` rows (UTC, with Stull wet-bulb)."""
    file = raw.uri
    body = raw.json()
    for key in ("utc_offset_seconds", "hourly", "latitude", "longitude"):
        if key not in body:
            raise DataError(f"missing key {key!r} in Open-Meteo response", file=file, column=key)
    hourly = body["hourly"]
    for key in REQUIRED_HOURLY:
        if key not in hourly:
            raise DataError(f"missing hourly array {key!r}", file=file, column=f"hourly.{key}")
    lengths = {k: len(v) for k, v in hourly.items()}
    if len(set(lengths.values())) != 1:
        raise DataError(f"hourly arrays have unequal lengths: {lengths}", file=file, column="hourly")
    for axis, want in (("latitude", location.lat), ("longitude", location.lon)):
        if abs(float(body[axis]) - want) > MAX_COORD_DIFF_DEG:
            raise DataError(
                f"response {axis} {body[axis]} is not the registry's {want} for {location.location}",
                file=file,
                column=axis,
            )
    offset = int(body["utc_offset_seconds"])
    cols = {"time": pl.Series(hourly["time"], dtype=pl.String)}
    for key, name in HOURLY.items():
        values = hourly.get(key, [None] * lengths["time"])
        try:
            cols[name] = pl.Series(values, dtype=pl.Float64, strict=True)
        except (TypeError, ValueError, pl.exceptions.PolarsError):
            # error path only: locate the offending entries for the message
            bad = [i for i, v in enumerate(values) if v is not None and not isinstance(v, int | float)]
            raise DataError(
                "non-numeric value(s)", file=file, column=f"hourly.{key}",
                rows=bad, values=[values[i] for i in bad],
            ) from None
    df = pl.DataFrame(cols).with_row_index("_i")
    local = df["time"].str.to_datetime("%Y-%m-%dT%H:%M", strict=False, time_unit="us")
    if local.null_count():
        bad = df.filter(local.is_null())
        raise DataError(
            "unparseable time value(s)", file=file, column="hourly.time",
            rows=bad["_i"].head(10).to_list(), values=bad["time"].head(10).to_list(),
        )
    ts = (local - timedelta(seconds=offset)).dt.replace_time_zone("UTC")
    df = df.with_columns(ts_utc=ts)
    return to_weather_rows(df, raw, location, source=SOURCE, max_gap=max_gap)


def to_weather_rows(
    df: pl.DataFrame, raw: RawFile, location: Location, *, source: str, max_gap: timedelta
) -> pl.DataFrame:
    """Finish a frame with ``ts_utc`` (UTC) and the hourly value columns into ``weather`` rows.

    Shared by the archive-JSON parser and the live FlatBuffers client, so both give identical rows.
    Rows without a temperature or humidity are missing hours (the gap check sees them), not zeros.
    """
    df = df.filter(pl.col("temp_c").is_not_null() & pl.col("rh_pct").is_not_null())
    check_time_grid(df["ts_utc"], raw.uri, "hourly.time", step=timedelta(hours=1), max_gap=max_gap)
    return (
        df.with_columns(
            location=pl.lit(location.location, dtype=pl.String),
            wetbulb_c=stull_wetbulb(pl.col("temp_c"), pl.col("rh_pct")),
            source=pl.lit(source, dtype=pl.String),
            raw_sha256=pl.lit(raw.sha256, dtype=pl.String),
        )
        .select(
            "location", "ts_utc", "temp_c", "rh_pct", "wetbulb_c", "cloudcover_pct", "windspeed_kmh",
            "source", "raw_sha256",
        )
        .sort("ts_utc")
    )
