"""Electricity Maps, live: the yearly per-zone CSV download and API v3 for recent history.

1. **CSV** (the historical source; free, ODbL-1.0): ``GRIDSHIFT_EMAPS_CSV_URL`` is a URL template
   with ``{zone}`` (the Electricity Maps zone id, e.g. ``DE`` for DE-LU) and ``{year}``; default
   :data:`DEFAULT_CSV_URL`, ``https://data.electricitymaps.com/2025-04-03/{zone}_{year}_hourly.csv``.
   The pattern ``https://data.electricitymaps.com/<release date>/<ZONE>_<YEAR>_hourly.csv`` is the
   one the portal's download links use (https://portal.electricitymaps.com/datasets); the release
   segment (``2025-04-03``) changes with each yearly release, so set the variable to the current
   link's template when a newer release exists (``off`` disables the CSV route). The zone id and
   the year are checked before any request: the zone must be a registry zone id, the year within
   :data:`CSV_FIRST_YEAR` .. the current UTC year. The body is exactly the mirror's file, so it is
   parsed by :func:`pipelines.electricitymaps.parse` and gives byte-identical rows (same sha256).
   A 404 (e.g. the current year, not yet published) falls through to the API.
2. **API v3** (``ELECTRICITYMAPS_TOKEN``, sent as the ``auth-token`` header, never a query
   parameter; base ``GRIDSHIFT_EMAPS_API_URL``, default ``https://api.electricitymaps.com``):
   ``/v3/carbon-intensity/past-range`` in windows of at most ``API_WINDOW`` for both the direct
   and the life-cycle factor, ``shouldUseFallbackCallerLookup=false`` so an unknown zone is an
   error instead of an answer for the caller's IP location. The chunk responses are landed as one
   JSON document (``{"zone", "responses": [...]}``, keys sorted) and parsed by :func:`parse_api`.
   Historical ``past-range`` access is a paid feature upstream; the CSV is the free route.
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
from pipelines import electricitymaps, http
from pipelines.raw import RawFile
from pipelines.tabular import DEFAULT_MAX_GAP, check_time_grid

CSV_SOURCE = electricitymaps.SOURCE
API_SOURCE = "electricitymaps-api-v3"
DEFAULT_API_URL = "https://api.electricitymaps.com"
TOKEN_ENV = "ELECTRICITYMAPS_TOKEN"
TOKEN_HELP = "set ELECTRICITYMAPS_TOKEN (environment or .env): create one at https://portal.electricitymaps.com"
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
    """``GRIDSHIFT_EMAPS_CSV_URL`` (unset or empty: :data:`DEFAULT_CSV_URL`; ``off``: no CSV route)."""
    template = os.environ.get(CSV_URL_ENV, "").strip() or DEFAULT_CSV_URL
    if template.lower() in ("off", "none", "0", "false"):
        return None
    fields = {f for _, f, _, _ in string.Formatter().parse(template) if f is not None}
    if fields != {"zone", "year"}:
        raise SourceUnavailableError(
            f"{CSV_SOURCE}: {CSV_URL_ENV}={template!r} must contain exactly the placeholders {{zone}} and "
            f"{{year}} (found {sorted(fields) or 'none'})"
        )
    return template


def check_zone_year(location: Location, year: int, *, now: datetime | None = None) -> None:
    """Refuse, before any request, a zone id that is not the registry's or a year with no yearly file."""
    zone = location.emaps_zone
    known = {locations.get(code).emaps_zone for code in locations.all_codes()}
    if not zone or not _ZONE_ID.match(zone) or zone not in known:
        raise SourceUnavailableError(
            f"{CSV_SOURCE}: unknown Electricity Maps zone id {zone!r} for {location.location} "
            "(not a zone of gridshift/data/locations.csv)"
        )
    last = (now or datetime.now(UTC)).year
    if not CSV_FIRST_YEAR <= year <= last:
        raise SourceUnavailableError(
            f"{CSV_SOURCE}: no yearly data for {location.location} ({zone}) in {year}: Electricity Maps "
            f"publishes {CSV_FIRST_YEAR}..{last} (the current year through the API)"
        )


def csv_url(location: Location, year: int) -> str | None:
    """The yearly CSV's URL with ``{zone}`` and ``{year}`` filled (None when the CSV route is off)."""
    template = csv_template()
    if template is None:
        return None
    check_zone_year(location, year)
    return template.format(zone=location.emaps_zone, year=year)


def api_url() -> str:
    return (os.environ.get("GRIDSHIFT_EMAPS_API_URL") or DEFAULT_API_URL).rstrip("/")


def fetch_csv(location: Location, year: int, *, session: requests.Session, url: str | None = None) -> RawFile:
    """Download the yearly CSV export; rejected unless it is the CSV (header, complete body)."""
    check_zone_year(location, year)
    url = url or csv_url(location, year)
    if not url:
        raise SourceUnavailableError(f"{CSV_SOURCE}: no CSV URL for {location.location} {year}: {CSV_HELP}")
    end = datetime(year + 1, 1, 1, tzinfo=UTC)
    return http.download(
        session, url, source=CSV_SOURCE,
        expect=http.Expect(kind="csv", csv_header_startswith=electricitymaps.COL_TS),
        expire_after=http.expire_for(end),
    )


def fetch_api(
    location: Location,
    start: datetime,
    end: datetime,
    *,
    session: requests.Session,
    token: str | None = None,
    window: timedelta = API_WINDOW,
) -> RawFile:
    """Fetch ``[start, end)`` hourly from API v3 ``past-range``, both factors, as one landed JSON."""
    token = token or http.get_token(TOKEN_ENV)
    if not token:
        raise SourceUnavailableError(
            f"{API_SOURCE}: no token for {location.location} {start:%Y-%m-%d}..{end:%Y-%m-%d}: {TOKEN_HELP}"
        )
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
            resp = http.get(session, url, source=API_SOURCE, what=what, params=params,
                            headers={"auth-token": token}, expire_after=http.expire_for(hi), secrets=[token])
            try:
                body = resp.json()
            except ValueError:
                http.forget(session, resp)
                raise http.DownloadError(f"{API_SOURCE}: {what}: response is not JSON; nothing landed") from None
            if not isinstance(body, dict) or not isinstance(body.get("data"), list):
                http.forget(session, resp)
                raise http.DownloadError(f"{API_SOURCE}: {what}: unexpected response shape; nothing landed")
            zone = body.get("zone")
            if zone is not None and zone != location.emaps_zone:
                raise http.DownloadError(
                    f"{API_SOURCE}: {what}: answered for zone {zone!r}, not {location.emaps_zone!r}"
                )
            responses.append({"factor": factor, "start": params["start"], "end": params["end"], "body": body})
        lo = hi
    doc = {"zone": location.emaps_zone, "api": f"{base}/v3/carbon-intensity/past-range", "responses": responses}
    content = json.dumps(doc, sort_keys=True, separators=(",", ":")).encode()
    uri = f"{url}?zone={location.emaps_zone}&start={start:%Y-%m-%dT%H:%MZ}&end={end:%Y-%m-%dT%H:%MZ}"
    return RawFile(source=API_SOURCE, uri=uri, content=content)


def fetch(location: Location, year: int, *, session: requests.Session, now: datetime | None = None) -> RawFile:
    """CSV if a URL template is configured and the file exists, else API v3 with the token."""
    check_zone_year(location, year, now=now)
    problems = []
    if csv_url(location, year):
        try:
            return fetch_csv(location, year, session=session)
        except http.DownloadError as exc:
            if "HTTP 404" not in str(exc):
                raise
            problems.append(str(exc))
    else:
        problems.append(f"{CSV_SOURCE}: {CSV_HELP}")
    now = now or datetime.now(UTC)
    start = datetime(year, 1, 1, tzinfo=UTC)
    end = min(datetime(year + 1, 1, 1, tzinfo=UTC), now.replace(minute=0, second=0, microsecond=0))
    if end <= start:
        raise SourceUnavailableError(f"{API_SOURCE}: {location.location} {year} is in the future")
    try:
        return fetch_api(location, start, end, session=session)
    except SourceUnavailableError as exc:
        problems.append(str(exc))
        raise SourceUnavailableError("; ".join(problems)) from None


def parse_api(raw: RawFile, location: Location, *, max_gap: timedelta = DEFAULT_MAX_GAP) -> pl.DataFrame:
    """Parse a landed API v3 document into ``grid_carbon`` rows (direct + LCA joined on the hour)."""
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
        df = pl.DataFrame({
            "ts": [p.get("datetime") for p in points],
            "ci": [p.get("carbonIntensity") for p in points],
            "est": [p.get("isEstimated") for p in points],
            "method": [p.get("estimationMethod") for p in points],
            "zone": [p.get("zone", doc.get("zone")) for p in points],
        }, schema={"ts": pl.String, "ci": pl.Float64, "est": pl.Boolean, "method": pl.String, "zone": pl.String})
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
        "source": pl.Series([API_SOURCE] * n, dtype=pl.String),
        "raw_sha256": pl.Series([raw.sha256] * n, dtype=pl.String),
    })
