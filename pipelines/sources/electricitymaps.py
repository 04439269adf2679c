"""Electricity Maps hourly carbon intensity: the yearly per-zone CSV (mirror or download) and API v3.

Two registered sources, one publisher:

1. ``electricitymaps-csv`` — the yearly per-zone CSV export (free, ODbL-1.0).
   **Mirror**: ``electricitymaps/<LOCATION>/<LOCATION>_<YEAR>_hourly.csv``. **Live**: the same file
   downloaded; ``GRIDSHIFT_EMAPS_CSV_URL`` is a URL template with ``{zone}`` (the Electricity Maps
   zone id, e.g. ``DE`` for DE-LU) and ``{year}``; default :data:`DEFAULT_CSV_URL`,
   ``https://data.electricitymaps.com/2025-04-03/{zone}_{year}_hourly.csv``, the pattern of the
   portal's download links (https://portal.electricitymaps.com/datasets; the release segment
   changes with each yearly release, so set the variable to the current link's template when a
   newer release exists; ``off`` disables the download). The downloaded bytes are the mirror's
   file, so both give identical rows (same sha256). A 404 (e.g. the current year, not yet
   published) passes on to the API.
2. ``electricitymaps-api-v3`` — ``/v3/carbon-intensity/past-range`` (``ELECTRICITYMAPS_TOKEN``, sent
   as the ``auth-token`` header, never a query parameter; base ``GRIDSHIFT_EMAPS_API_URL``, default
   ``https://api.electricitymaps.com``) in windows of at most ``API_WINDOW``, for both the direct and
   the life-cycle factor, with ``shouldUseFallbackCallerLookup=false`` so an unknown zone is an
   error instead of an answer for the caller's IP location. The chunk responses are landed as one
   JSON document (``{"zone", "responses": [...]}``, keys sorted). Historical ``past-range`` access is
   a paid feature upstream; the CSV is the free route.

For both, the zone id and the year are checked before any request: the zone must be a registry zone
id, the year within :data:`CSV_FIRST_YEAR` .. the current UTC year. The ``Zone Id`` inside a file can
differ from the location code (BR-SP carries BR-CS, DE-LU carries DE): it must match the registry's
``emaps_zone``. Estimated rows are kept and flagged, never dropped.
"""

from __future__ import annotations

import json
import os
import re
import string
from datetime import UTC, datetime, timedelta

import polars as pl
import requests

from gridshift import locations
from gridshift.errors import DataError, SourceUnavailableError
from gridshift.locations import Location
from pipelines.core import http
from pipelines.core.raw import RawFile
from pipelines.core.redact import redact_uri
from pipelines.core.source import GridSource, NotPublished, year_bounds
from pipelines.core.tabular import bad_rows, check_time_grid, json_numbers, read_csv_strings, to_float, to_utc

COL_TS = "Datetime (UTC)"
COL_ZONE = "Zone Id"
COL_DIRECT = "Carbon Intensity gCO₂eq/kWh (direct)"
COL_LCA = "Carbon Intensity gCO₂eq/kWh (LCA)"
COL_LOW = "Low Carbon Percentage"
COL_RENEW = "Renewable Percentage"
COL_EST = "Data Estimated"
COL_METHOD = "Data Estimation Method"
REQUIRED = [COL_TS, COL_ZONE, COL_DIRECT, COL_LCA, COL_LOW, COL_RENEW, COL_EST, COL_METHOD]

DEFAULT_API_URL = "https://api.electricitymaps.com"
# The yearly per-zone CSV download: the pattern of the portal's links, release 2025-04-03 (the latest
# release seen in public download scripts; newer releases get a new date segment).
DEFAULT_CSV_URL = "https://data.electricitymaps.com/2025-04-03/{zone}_{year}_hourly.csv"
CSV_URL_ENV = "GRIDSHIFT_EMAPS_CSV_URL"
CSV_FIRST_YEAR = 2021  # the first year of the free yearly datasets
CSV_HELP = (
    f"set {CSV_URL_ENV} to the yearly CSV URL template with {{zone}} and {{year}} "
    f"(default {DEFAULT_CSV_URL}; see https://portal.electricitymaps.com/datasets for the current release)"
)
_ZONE_ID = re.compile(r"^[A-Z]{2}(-[A-Z0-9]+)*$")
API_WINDOW = timedelta(days=10)
FACTORS = {"direct": "carbon_direct_g_per_kwh", "lifecycle": "carbon_lca_g_per_kwh"}


def csv_template() -> str | None:
    """``GRIDSHIFT_EMAPS_CSV_URL`` (unset or empty: :data:`DEFAULT_CSV_URL`; ``off``: no CSV download)."""
    template = os.environ.get(CSV_URL_ENV, "").strip() or DEFAULT_CSV_URL
    if template.lower() in ("off", "none", "0", "false"):
        return None
    fields = {f for _, f, _, _ in string.Formatter().parse(template) if f is not None}
    if fields != {"zone", "year"}:
        raise SourceUnavailableError(
            f"{CSV.name}: {CSV_URL_ENV}={redact_uri(template)!r} must contain exactly the placeholders {{zone}} and "
            f"{{year}} (found {sorted(fields) or 'none'})"
        )
    return template


def check_zone_year(location: Location, year: int, *, now: datetime | None = None) -> None:
    """Refuse, before any request, a zone id that is not the registry's or a year with no yearly file."""
    zone = location.emaps_zone
    known = {locations.get(code).emaps_zone for code in locations.all_codes()}
    if not zone or not _ZONE_ID.match(zone) or zone not in known:
        raise SourceUnavailableError(
            f"{CSV.name}: unknown Electricity Maps zone id {zone!r} for {location.location} "
            "(not a zone of gridshift/data/locations.csv)"
        )
    last = (now or datetime.now(UTC)).year
    if not CSV_FIRST_YEAR <= year <= last:
        raise SourceUnavailableError(
            f"{CSV.name}: no yearly data for {location.location} ({zone}) in {year}: Electricity Maps "
            f"publishes {CSV_FIRST_YEAR}..{last} (the current year through the API)"
        )


def csv_url(location: Location, year: int) -> str | None:
    """The yearly CSV's URL with ``{zone}`` and ``{year}`` filled (None when the download is off)."""
    template = csv_template()
    if template is None:
        return None
    check_zone_year(location, year)
    return template.format(zone=location.emaps_zone, year=year)


def api_url() -> str:
    return (os.environ.get("GRIDSHIFT_EMAPS_API_URL") or DEFAULT_API_URL).rstrip("/")


class ElectricityMapsCsv(GridSource):
    """The yearly per-zone CSV export, from a mirror or downloaded."""

    name = "electricitymaps-csv"
    time_column = COL_TS
    year_edge = timedelta(0)  # UTC timestamps of the UTC year only

    def mirror_relpath(self, location: Location, year: int) -> str:
        code = location.location
        return f"electricitymaps/{code}/{code}_{year}_hourly.csv"

    def how_to(self, location: Location) -> str:
        return CSV_HELP

    def fetch(self, location: Location, year: int, *, home=None, session: requests.Session | None = None,
              url: str | None = None) -> RawFile:
        """Download the yearly CSV export; refused unless it is the CSV (header, complete body)."""
        check_zone_year(location, year)
        url = url or csv_url(location, year)
        if not url:
            raise NotPublished(f"{self.name}: the CSV download is off for {location.location} {year}: {CSV_HELP}")
        return http.download(
            session, url, source=self.name,
            expect=http.Expect(kind="csv", csv_header_startswith=COL_TS),
            expire_after=http.expire_for(year_bounds(year)[1]),
        )

    def rows(self, raw: RawFile, location: Location, year: int, *, max_gap: timedelta) -> pl.DataFrame:
        """One export → ``grid_carbon`` rows (UTC, explicit units), in file order."""
        file = raw.uri
        df = read_csv_strings(raw.content, file, REQUIRED)
        zone_ok = (df[COL_ZONE] == location.emaps_zone).fill_null(False)  # an empty zone id is not this zone
        if not zone_ok.all():
            raise bad_rows(df, ~zone_ok, f"zone id does not match location {location.location} (expected "
                           f"{location.emaps_zone!r})", file=file, column=COL_ZONE)
        est = df[COL_EST].str.strip_chars().str.to_lowercase()
        est_ok = est.is_in(["true", "false"]).fill_null(False)  # an empty flag is not "false"
        if not est_ok.all():
            raise bad_rows(df, ~est_ok, "estimated flag must be true or false", file=file, column=COL_EST)
        ts = to_utc(df, COL_TS, file, "%Y-%m-%d %H:%M:%S")
        check_time_grid(ts, file, COL_TS, step=timedelta(hours=1), max_gap=max_gap)
        method = df[COL_METHOD].str.strip_chars()
        return pl.DataFrame(
            {
                "location": pl.Series([location.location] * df.height, dtype=pl.String),
                "ts_utc": ts,
                "carbon_direct_g_per_kwh": to_float(df, COL_DIRECT, file, required=True),
                "carbon_lca_g_per_kwh": to_float(df, COL_LCA, file),
                "low_carbon_pct": to_float(df, COL_LOW, file),
                "renewable_pct": to_float(df, COL_RENEW, file),
                "is_estimated": est == "true",
                "estimation_method": method.replace("", None),
                "emaps_zone": df[COL_ZONE],
                "source": pl.Series([self.name] * df.height, dtype=pl.String),
                "raw_sha256": pl.Series([raw.sha256] * df.height, dtype=pl.String),
            }
        )


def _api_accept(location: Location, what: str) -> http.Accept:
    """An API v3 answer is cached only if it is JSON of the expected shape for the zone asked for."""

    def accept(resp: requests.Response) -> None:
        try:
            body = resp.json()
        except ValueError:
            raise http.DownloadError(f"{API.name}: {what}: response is not JSON; nothing landed") from None
        if not isinstance(body, dict) or not isinstance(body.get("data"), list):
            raise http.DownloadError(f"{API.name}: {what}: unexpected response shape; nothing landed")
        zone = body.get("zone")
        if zone is not None and zone != location.emaps_zone:
            raise http.DownloadError(f"{API.name}: {what}: answered for zone {zone!r}, not {location.emaps_zone!r}")

    return accept


class ElectricityMapsApi(GridSource):
    """API v3 ``past-range``, hourly, both factors, landed as one JSON document per partition."""

    name = "electricitymaps-api-v3"
    time_column = "datetime"
    year_edge = timedelta(0)  # UTC timestamps of the UTC year only

    def how_to(self, location: Location) -> str:
        return f"set {self.info.token_env} (environment or .env): create one at https://portal.electricitymaps.com"

    def fetch(self, location: Location, year: int, *, home=None, session: requests.Session | None = None,
              now: datetime | None = None) -> RawFile:
        """The UTC year up to the last full hour before ``now``."""
        check_zone_year(location, year, now=now)
        start, end = year_bounds(year)
        now = now or datetime.now(UTC)
        end = min(end, now.replace(minute=0, second=0, microsecond=0))
        if end <= start:
            raise SourceUnavailableError(f"{self.name}: {location.location} {year} is in the future")
        return self.fetch_window(location, start, end, session=session)

    def fetch_window(self, location: Location, start: datetime, end: datetime, *, session: requests.Session,
                     window: timedelta = API_WINDOW) -> RawFile:
        """Fetch ``[start, end)`` hourly from API v3 ``past-range``, both factors, as one landed JSON."""
        token = http.get_token(self.info.token_env)
        if not token:
            raise NotPublished(f"{self.name}: no token for {location.location} {start:%Y-%m-%d}..{end:%Y-%m-%d}: "
                               f"{self.how_to(location)}")
        base = api_url()
        url = f"{base}/v3/carbon-intensity/past-range"
        responses = []
        lo = start
        while lo < end:
            hi = min(lo + window, end)
            for factor in FACTORS:
                params = {
                    "zone": location.emaps_zone,
                    "start": lo.strftime("%Y-%m-%dT%H:%MZ"),
                    "end": hi.strftime("%Y-%m-%dT%H:%MZ"),
                    "emissionFactorType": factor,
                    "temporalGranularity": "hourly",
                    "shouldUseFallbackCallerLookup": "false",
                }
                what = f"{location.location} {params['start']}..{params['end']} ({factor})"
                resp = http.get(session, url, source=self.name, what=what, params=params,
                                headers={"auth-token": token}, expire_after=http.expire_for(hi), secrets=[token],
                                accept=_api_accept(location, what))
                responses.append({"factor": factor, "start": params["start"], "end": params["end"],
                                  "body": resp.json()})
            lo = hi
        doc = {"zone": location.emaps_zone, "api": redact_uri(url), "responses": responses}
        content = json.dumps(doc, sort_keys=True, separators=(",", ":")).encode()
        uri = f"{url}?zone={location.emaps_zone}&start={start:%Y-%m-%dT%H:%MZ}&end={end:%Y-%m-%dT%H:%MZ}"
        return RawFile(source=self.name, uri=uri, content=content)

    def rows(self, raw: RawFile, location: Location, year: int, *, max_gap: timedelta) -> pl.DataFrame:
        """A landed API v3 document → ``grid_carbon`` rows (direct + LCA joined on the hour)."""
        file = raw.uri
        doc = raw.json()
        per_factor: dict[str, list[dict]] = {f: [] for f in FACTORS}
        for r in doc.get("responses", []):
            for point in r["body"]["data"]:
                per_factor[r["factor"]].append(point)
        frames = {}
        for factor, points in per_factor.items():
            if not points:
                raise DataError(f"no {factor} data points", file=file, column=factor)
            ci = json_numbers([p.get("carbonIntensity") for p in points], file, f"{factor}.carbonIntensity")
            df = pl.DataFrame({
                "ts": [p.get("datetime") for p in points],
                "est": [p.get("isEstimated") for p in points],
                "method": [p.get("estimationMethod") for p in points],
                "zone": [p.get("zone", doc.get("zone")) for p in points],
            }, schema={"ts": pl.String, "est": pl.Boolean, "method": pl.String, "zone": pl.String}).with_columns(ci=ci)
            ts = df["ts"].str.to_datetime("%Y-%m-%dT%H:%M:%S%.fZ", strict=False, time_unit="us")
            if ts.null_count():
                bad = df.filter(ts.is_null())
                raise DataError("unparseable datetime(s)", file=file, column="datetime",
                                values=bad["ts"].head(10).to_list())
            frames[factor] = df.with_columns(ts_utc=ts.dt.replace_time_zone("UTC")).unique("ts_utc", keep="last")
        direct, lca = frames["direct"], frames["lifecycle"]
        df = direct.join(lca.select("ts_utc", pl.col("ci").alias("ci_lca"), pl.col("est").alias("est_lca")),
                         on="ts_utc", how="full", coalesce=True).sort("ts_utc")
        wrong = df.filter(pl.col("zone").is_not_null() & (pl.col("zone") != location.emaps_zone))
        if wrong.height:
            raise DataError(f"zone id does not match location {location.location}", file=file, column="zone",
                            values=wrong["zone"].head(10).to_list())
        check_time_grid(df["ts_utc"], file, "datetime", step=timedelta(hours=1), max_gap=max_gap)
        n = df.height
        return pl.DataFrame({
            "location": pl.Series([location.location] * n, dtype=pl.String),
            "ts_utc": df["ts_utc"],
            "carbon_direct_g_per_kwh": df["ci"],
            "carbon_lca_g_per_kwh": df["ci_lca"],
            "low_carbon_pct": pl.Series([None] * n, dtype=pl.Float64),
            "renewable_pct": pl.Series([None] * n, dtype=pl.Float64),
            "is_estimated": (df["est"].fill_null(False) | df["est_lca"].fill_null(False)),
            "estimation_method": df["method"],
            "emaps_zone": pl.Series([location.emaps_zone] * n, dtype=pl.String),
            "source": pl.Series([self.name] * n, dtype=pl.String),
            "raw_sha256": pl.Series([raw.sha256] * n, dtype=pl.String),
        })


CSV = ElectricityMapsCsv()
API = ElectricityMapsApi()
