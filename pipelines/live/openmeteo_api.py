"""Open-Meteo historical weather, live: the archive API in FlatBuffers via ``openmeteo-requests``.

One request per location and UTC year: the registry's weather coordinates, hourly
``temperature_2m``, ``relative_humidity_2m`` (what the cooling model's wet-bulb needs) plus
``cloud_cover`` and ``wind_speed_10m``, ``timezone=GMT``. FlatBuffers carry absolute unix times, so
no offset arithmetic is needed. Values travel as float32; each is turned back into the shortest
decimal that round-trips float32 (what the JSON API prints), so a live fetch and a mirror JSON of
the same data give identical rows. The landed raw file is the response body itself.

Base URL: ``GRIDSHIFT_OPENMETEO_URL`` (default the public archive endpoint). Licence CC-BY-4.0.
"""

from __future__ import annotations

import os
from datetime import UTC, date, datetime, timedelta

import numpy as np
import polars as pl
import requests

from gridshift.errors import DataError
from gridshift.locations import Location
from pipelines import http, openmeteo
from pipelines.raw import RawFile
from pipelines.tabular import DEFAULT_MAX_GAP

SOURCE = "open-meteo-archive-api"
LICENSE = "CC-BY-4.0; attribution: Weather data by Open-Meteo.com (https://open-meteo.com)"
DEFAULT_URL = "https://archive-api.open-meteo.com/v1/archive"
ARCHIVE_LAG = timedelta(days=2)  # the archive trails real time by a few days
MAX_COORD_DIFF_DEG = 0.5
# requested name -> (openmeteo_sdk Variable enum, altitude, column)
HOURLY = {
    "temperature_2m": (47, 2, "temp_c"),
    "relative_humidity_2m": (29, 2, "rh_pct"),
    "cloud_cover": (3, 0, "cloudcover_pct"),
    "wind_speed_10m": (59, 10, "windspeed_kmh"),
}


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
        "hourly": ",".join(HOURLY),
        "timezone": "GMT",
    }


class _Recorder:
    """Session proxy for ``openmeteo_requests.Client``: keeps the raw response, never closes ours."""

    def __init__(self, session: requests.Session, expire_after) -> None:
        self._session = session
        self._expire = expire_after
        self.response: requests.Response | None = None

    def request(self, method, url, **kwargs):
        if hasattr(self._session, "cache"):
            kwargs["expire_after"] = self._expire
        self.response = self._session.request(method, url, **kwargs)
        return self.response

    def close(self) -> None:  # the Client closes its session on __del__; ours is shared
        pass


def fetch(location: Location, year: int, *, session: requests.Session, url: str | None = None) -> RawFile:
    """Fetch one location-year through ``openmeteo_requests.Client`` and return the raw body."""
    import openmeteo_requests

    url = url or base_url()
    params = request_params(location, year)
    end = datetime.fromisoformat(params["end_date"]).replace(tzinfo=UTC) + timedelta(days=1)
    rec = _Recorder(session, http.expire_for(end))
    what = f"{location.location} {year} from {url}"
    try:
        openmeteo_requests.Client(session=rec).weather_api(url, params=params)
    except Exception as exc:  # the client raises its own error type, requests' or a decode error
        if rec.response is not None:
            http.forget(session, rec.response)
        raise http.DownloadError(f"{SOURCE}: {what}: {http.redact(str(exc))}") from None
    resp = rec.response
    assert resp is not None
    try:
        http.check_body(resp.content, http.Expect(kind="flatbuffers"), what=f"{SOURCE}: {what}",
                        headers=resp.headers)
        _messages(resp.content, what)
    except (http.DownloadError, DataError):
        http.forget(session, resp)
        raise
    return RawFile(source=SOURCE, uri=f"{url}?latitude={location.lat}&longitude={location.lon}"
                   f"&start_date={params['start_date']}&end_date={params['end_date']}", content=resp.content)


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


def parse(raw: RawFile, location: Location, *, max_gap: timedelta = DEFAULT_MAX_GAP) -> pl.DataFrame:
    """Parse one FlatBuffers archive response into ``weather`` rows (UTC, with Stull wet-bulb)."""
    file = raw.uri
    resp = _messages(raw.content, file)[0]
    for axis, got, want in (("latitude", resp.Latitude(), location.lat), ("longitude", resp.Longitude(), location.lon)):
        if abs(float(got) - want) > MAX_COORD_DIFF_DEG:
            raise DataError(f"response {axis} {got} is not the registry's {want} for {location.location}",
                            file=file, column=axis)
    hourly = resp.Hourly()
    if hourly is None:
        raise DataError("response has no hourly block", file=file, column="hourly")
    t0, t1, step = hourly.Time(), hourly.TimeEnd(), hourly.Interval()
    if step != 3600 or t1 <= t0 or (t1 - t0) % step:
        raise DataError(f"unexpected hourly time axis ({t0}, {t1}, {step})", file=file, column="hourly.time")
    n = (t1 - t0) // step
    if hourly.VariablesLength() != len(HOURLY):
        raise DataError(f"expected {len(HOURLY)} hourly variables, got {hourly.VariablesLength()}",
                        file=file, column="hourly")
    cols: dict[str, pl.Series] = {}
    for j, (name, (var, alt, col)) in enumerate(HOURLY.items()):
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
    df = pl.DataFrame({"ts_utc": ts, **cols})
    return openmeteo.to_weather_rows(df, raw, location, source=SOURCE, max_gap=max_gap)
