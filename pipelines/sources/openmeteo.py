"""Open-Meteo historical weather (CC-BY-4.0): the archive API's JSON (mirror) and FlatBuffers (live).

Two registered sources, one publisher, identical rows for the same hours:

1. ``open-meteo-archive`` — the archive API's JSON response, one file per location and local year.
   **Mirror**: ``open-meteo/<LOCATION>/<YEAR>.json``. The ``hourly.time`` values carry no offset
   but are a uniform grid shifted by the response's one fixed ``utc_offset_seconds`` (not the
   zone's DST rules): UTC = time − utc_offset_seconds. A local-year file therefore starts a few
   hours off 00:00 UTC; the neighbouring year's file supplies the edge hours (rows are keyed by
   UTC time). The offset must be a whole number of seconds within ±14 h (the widest offsets in use),
   and one its own time zone takes in the year, the units those ``hourly_units`` state (°F, m/s...
   converted to °C and km/h; see :mod:`pipelines.sources.openmeteo_axes`),
   the coordinates the registry's (±0.5°), every value a number (``true`` is not 1 °C), and no
   key may appear twice in one object (a reader would keep the last one, shifting the data).
2. ``open-meteo-archive-api`` — **live**, one request per location and UTC year through
   ``openmeteo-requests`` (FlatBuffers): the registry's weather coordinates, hourly
   ``temperature_2m``, ``relative_humidity_2m`` (what the cooling model's wet-bulb needs) plus
   ``cloud_cover`` and ``wind_speed_10m``, ``timezone=GMT``. FlatBuffers carry absolute unix times,
   so no offset arithmetic is needed. Values travel as float32; each is turned back into the
   shortest decimal that round-trips float32 (what the JSON API prints). The landed raw file is
   the response body itself. Base URL: ``GRIDSHIFT_OPENMETEO_URL`` (default the public archive).
"""

from __future__ import annotations

import os
from datetime import UTC, date, datetime, timedelta

import numpy as np
import polars as pl
import requests

from gridshift.errors import DataError
from gridshift.locations import Location
from gridshift.wetbulb import stull_wetbulb
from pipelines.core import http
from pipelines.core.raw import RawFile
from pipelines.core.redact import redact_uri
from pipelines.core.source import YEAR_EDGE, GridSource
from pipelines.core.tabular import check_time_grid, json_numbers
from pipelines.sources.openmeteo_axes import check_offset, unit_conversions

HOURLY = {
    "temperature_2m": "temp_c",
    "relative_humidity_2m": "rh_pct",
    "cloudcover": "cloudcover_pct",
    "windspeed_10m": "windspeed_kmh",
}
REQUIRED_HOURLY = ("time", "temperature_2m", "relative_humidity_2m")
MAX_COORD_DIFF_DEG = 0.5
MAX_UTC_OFFSET_S = int(YEAR_EDGE.total_seconds())  # UTC-12 .. UTC+14 are the offsets in use

DEFAULT_URL = "https://archive-api.open-meteo.com/v1/archive"
ARCHIVE_LAG = timedelta(days=2)  # the archive trails real time by a few days
# requested name -> (openmeteo_sdk Variable enum, altitude, column)
API_HOURLY = {
    "temperature_2m": (47, 2, "temp_c"),
    "relative_humidity_2m": (29, 2, "rh_pct"),
    "cloud_cover": (3, 0, "cloudcover_pct"),
    "wind_speed_10m": (59, 10, "windspeed_kmh"),
}


def _check_coordinates(lat: object, lon: object, location: Location, file: str) -> None:
    for axis, got, want in (("latitude", lat, location.lat), ("longitude", lon, location.lon)):
        if isinstance(got, bool) or not isinstance(got, int | float) or abs(float(got) - want) > MAX_COORD_DIFF_DEG:
            raise DataError(f"response {axis} {got!r} is not the registry's {want} for {location.location}",
                            file=file, column=axis, values=[got])


def to_weather_rows(df: pl.DataFrame, raw: RawFile, location: Location, *, source: str, max_gap: timedelta,
                    column: str = "hourly.time") -> pl.DataFrame:
    """Finish a frame with ``ts_utc`` (UTC), the hourly value columns and ``_i`` (each hour's position in
    the response's arrays, named in errors) into ``weather`` rows.

    Shared by the archive JSON and the live FlatBuffers, so both give identical rows. Rows without
    a temperature or humidity are missing hours (the gap check sees them), not zeros.
    """
    df = df.filter(pl.col("temp_c").is_not_null() & pl.col("rh_pct").is_not_null())
    check_time_grid(df["ts_utc"], raw.uri, column, step=timedelta(hours=1), max_gap=max_gap, rows=df["_i"])
    wetbulb = stull_wetbulb(df["temp_c"].cast(pl.Float64).to_numpy(), df["rh_pct"].cast(pl.Float64).to_numpy())
    return (
        df.with_columns(
            location=pl.lit(location.location, dtype=pl.String),
            wetbulb_c=pl.Series(wetbulb, dtype=pl.Float64),
            source=pl.lit(source, dtype=pl.String),
            raw_sha256=pl.lit(raw.sha256, dtype=pl.String),
        )
        .select(
            "location", "ts_utc", "temp_c", "rh_pct", "wetbulb_c", "cloudcover_pct", "windspeed_kmh",
            "source", "raw_sha256",
        )
    )


class OpenMeteoArchive(GridSource):
    """The archive API's JSON response for one location and local year, from a mirror."""

    name = "open-meteo-archive"
    time_column = "hourly.time"
    row_base = 0  # JSON array positions

    def mirror_relpath(self, location: Location, year: int) -> str:
        return f"open-meteo/{location.location}/{year}.json"

    def rows(self, raw: RawFile, location: Location, year: int, *, max_gap: timedelta) -> pl.DataFrame:
        """One archive response → ``weather`` rows (UTC, with Stull wet-bulb)."""
        file = raw.uri
        body = raw.json()
        if not isinstance(body, dict):
            raise DataError("an Open-Meteo response is a JSON object", file=file)
        for key in ("utc_offset_seconds", "hourly", "latitude", "longitude"):
            if key not in body:
                raise DataError(f"missing key {key!r} in Open-Meteo response", file=file, column=key)
        hourly = body["hourly"]
        if not isinstance(hourly, dict):
            raise DataError("'hourly' is not an object", file=file, column="hourly")
        for key in REQUIRED_HOURLY:
            if not isinstance(hourly.get(key), list):
                raise DataError(f"missing hourly array {key!r}", file=file, column=f"hourly.{key}")
        lengths = {k: len(v) for k, v in hourly.items() if isinstance(v, list)}
        if len(set(lengths.values())) != 1 or len(lengths) != len(hourly):
            raise DataError(f"hourly arrays have unequal lengths: {lengths}", file=file, column="hourly")
        _check_coordinates(body["latitude"], body["longitude"], location, file)
        offset = body["utc_offset_seconds"]
        if isinstance(offset, bool) or not isinstance(offset, int) or abs(offset) > MAX_UTC_OFFSET_S:
            raise DataError(f"utc_offset_seconds must be whole seconds within ±{MAX_UTC_OFFSET_S} (±14 h)",
                            file=file, column="utc_offset_seconds", values=[offset])
        check_offset(body, offset, location, year, file)
        converted = unit_conversions(body, HOURLY, file)
        try:
            cols = {"time": pl.Series(hourly["time"], dtype=pl.String, strict=True)}
        except (TypeError, ValueError, pl.exceptions.PolarsError):
            raise DataError("time values must be text", file=file, column="hourly.time") from None
        n = lengths["time"]
        for key, name in HOURLY.items():
            cols[name] = json_numbers(hourly.get(key, [None] * n), file, f"hourly.{key}")
        df = pl.DataFrame(cols).with_columns(converted).with_row_index("_i")
        local = df["time"].str.to_datetime("%Y-%m-%dT%H:%M", strict=False, time_unit="us")
        if local.null_count():
            bad = df.filter(local.is_null())
            raise DataError(
                "unparseable time value(s)", file=file, column="hourly.time",
                rows=bad["_i"].head(10).to_list(), values=bad["time"].head(10).to_list(),
            )
        ts = (local - timedelta(seconds=offset)).dt.replace_time_zone("UTC")
        return to_weather_rows(df.with_columns(ts_utc=ts), raw, location, source=self.name, max_gap=max_gap)


def base_url() -> str:
    return os.environ.get("GRIDSHIFT_OPENMETEO_URL") or DEFAULT_URL


def request_params(location: Location, year: int, *, today: date | None = None) -> dict:
    today = today or datetime.now(UTC).date()
    end = min(date(year, 12, 31), today - ARCHIVE_LAG)
    return {
        "latitude": location.lat,
        "longitude": location.lon,
        "start_date": f"{year}-01-01",
        "end_date": end.isoformat(),
        "hourly": ",".join(API_HOURLY),
        "timezone": "GMT",
    }


class _Recorder:
    """Session proxy for ``openmeteo_requests.Client``: our cache policy, the raw response kept, ours never closed."""

    def __init__(self, session: http.GridshiftSession, expire_after, accept: http.Accept) -> None:
        self._session = session
        self._expire = expire_after
        self._accept = accept
        self.response: requests.Response | None = None

    def request(self, method, url, params=None, verify=None, **kwargs):
        if method.upper() != "GET":
            raise ValueError(f"the archive is read with GET, not {method}")
        if verify is not None:
            kwargs["verify"] = verify
        self.response = self._session.fetch(url, params=params, expire_after=self._expire, accept=self._accept,
                                            **kwargs)
        return self.response

    def close(self) -> None:  # the Client closes its session on __del__; ours is shared
        pass


def _messages(content: bytes, file: str) -> list:
    """Split the size-prefixed FlatBuffers stream; a truncated stream is rejected."""
    from openmeteo_sdk.WeatherApiResponse import WeatherApiResponse

    out, pos = [], 0
    while pos < len(content):
        if pos + 4 > len(content):
            raise http.DownloadError(f"{file}: truncated FlatBuffers stream; nothing landed")
        length = int.from_bytes(content[pos:pos + 4], "little")
        if length == 0x78656E55:  # "Unex..." : an error message in the stream
            raise http.DownloadError(f"{file}: {content[pos:pos + 300].decode('utf-8', 'replace')}")
        if pos + 4 + length > len(content):
            raise http.DownloadError(
                f"{file}: truncated FlatBuffers message ({len(content) - pos - 4} of {length} bytes); nothing landed"
            )
        out.append(WeatherApiResponse.GetRootAs(content, pos + 4))
        pos += 4 + length
    if len(out) != 1:
        raise DataError(f"expected one location in the response, found {len(out)}", file=file)
    return out


def _decimal(values: np.ndarray) -> np.ndarray:
    """float32 → the shortest decimal that round-trips float32 (what the JSON API prints), NaN kept."""
    v = np.asarray(values, dtype=np.float32)
    return v.astype(str).astype(np.float64)


class OpenMeteoArchiveApi(GridSource):
    """The archive API in FlatBuffers, live, one request per location and UTC year."""

    name = "open-meteo-archive-api"
    time_column = "hourly.time"

    def how_to(self, location: Location) -> str:
        return "no token needed (Open-Meteo); check the network or GRIDSHIFT_OPENMETEO_URL"

    def fetch(self, location: Location, year: int, *, home=None, session: requests.Session | None = None,
              url: str | None = None) -> RawFile:
        """Fetch one location-year through ``openmeteo_requests.Client`` and return the raw body."""
        import openmeteo_requests

        http.guard_loggers()
        url = url or base_url()
        params = request_params(location, year)
        end = datetime.fromisoformat(params["end_date"]).replace(tzinfo=UTC) + timedelta(days=1)
        what = f"{self.name}: {location.location} {year} from {redact_uri(url)}"

        def accept(resp: requests.Response) -> None:
            http.check_body(resp.content, http.Expect(kind="flatbuffers"), what=what, headers=resp.headers)
            _messages(resp.content, what)

        rec = _Recorder(session, http.expire_for(end), accept)
        try:
            openmeteo_requests.Client(session=rec).weather_api(url, params=params)
        except (http.DownloadError, DataError):
            raise
        except Exception as exc:  # the client raises its own error type, requests' or a decode error
            raise http.DownloadError(f"{what}: {http.redact(str(exc))}") from None
        assert rec.response is not None
        return RawFile(source=self.name, uri=f"{url}?latitude={location.lat}&longitude={location.lon}"
                       f"&start_date={params['start_date']}&end_date={params['end_date']}",
                       content=rec.response.content)

    def rows(self, raw: RawFile, location: Location, year: int, *, max_gap: timedelta) -> pl.DataFrame:
        """One FlatBuffers archive response → ``weather`` rows (UTC, with Stull wet-bulb)."""
        file = raw.uri
        resp = _messages(raw.content, file)[0]
        _check_coordinates(float(resp.Latitude()), float(resp.Longitude()), location, file)
        hourly = resp.Hourly()
        if hourly is None:
            raise DataError("response has no hourly block", file=file, column="hourly")
        t0, t1, step = hourly.Time(), hourly.TimeEnd(), hourly.Interval()
        if step != 3600 or t1 <= t0 or (t1 - t0) % step:
            raise DataError(f"unexpected hourly time axis ({t0}, {t1}, {step})", file=file, column="hourly.time")
        n = (t1 - t0) // step
        if hourly.VariablesLength() != len(API_HOURLY):
            raise DataError(f"expected {len(API_HOURLY)} hourly variables, got {hourly.VariablesLength()}",
                            file=file, column="hourly")
        cols: dict[str, pl.Series] = {}
        for j, (name, (var, alt, col)) in enumerate(API_HOURLY.items()):
            v = hourly.Variables(j)
            if v.Variable() != var or v.Altitude() != alt:
                raise DataError(f"variable {j} is ({v.Variable()}, {v.Altitude()} m), expected {name}",
                                file=file, column=f"hourly.{name}")
            arr = v.ValuesAsNumpy()
            if len(arr) != n:
                raise DataError(f"{name}: {len(arr)} values for {n} hours", file=file, column=f"hourly.{name}")
            cols[col] = pl.Series(col, _decimal(arr), dtype=pl.Float64, nan_to_null=True)
        ts = pl.Series("ts_utc", (np.int64(t0) + np.arange(n, dtype=np.int64) * step) * 1_000_000).cast(
            pl.Datetime("us")).dt.replace_time_zone("UTC")
        df = pl.DataFrame({"ts_utc": ts, **cols}).with_row_index("_i")  # array positions, named in errors
        return to_weather_rows(df, raw, location, source=self.name, max_gap=max_gap)


ARCHIVE = OpenMeteoArchive()
API = OpenMeteoArchiveApi()
