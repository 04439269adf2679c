"""ENTSO-E day-ahead prices, live, through ``entsoe-py`` (Transparency Platform API, document A44).

One query per location and UTC year (the API's one-year limit), through the shared cached session;
the token (``ENTSOE_API_KEY``) travels as the ``securityToken`` query parameter, which the session
keeps out of cache keys and stored responses. The landed raw file is the XML document as returned.

Parsing uses entsoe-py's own ``parse_prices`` (handles curve type A03, where repeated values are
omitted), then:

- **mixed resolution**: day-ahead (SDAC) moved from 60-minute to 15-minute products on
  2025-10-01 (business day Europe/Amsterdam). A query across that date returns both. When a
  document mixes resolutions, every coarser price is held over each finer interval it covers
  (forward-fill, never interpolation): an hourly price becomes four quarter-hour rows carrying
  ``resolution_min=60`` (the market interval the price was set for). A native finer price always
  wins over a held coarser one.
- **DST**: periods are given in UTC, so a 23- or 25-hour local day is 23 or 25 distinct UTC
  hours; nothing is shifted, lost or doubled.
- **currency**: EUR from the document is converted with :mod:`pipelines.fx` (rate per row in
  ``usd_per_local``).

Base URL: ``ENTSOE_ENDPOINT_URL`` (entsoe-py reads it at import; this module re-applies it at call
time so a later setting, e.g. a test's fake server, takes effect).
"""

from __future__ import annotations

import os
import re
import warnings
from datetime import UTC, datetime, timedelta

import polars as pl
import requests

from gridshift.errors import DataError, SourceUnavailableError
from gridshift.locations import Location
from pipelines import http
from pipelines.prices import grid_price_rows
from pipelines.raw import RawFile
from pipelines.tabular import DEFAULT_MAX_GAP, check_time_grid

SOURCE = "entsoe-day-ahead"
LICENSE = "ENTSO-E Transparency Platform data, reusable with attribution (ENTSO-E Transparency Platform)"
DEFAULT_URL = "https://web-api.tp.entsoe.eu/api"
TOKEN_ENV = "ENTSOE_API_KEY"
TOKEN_HELP = (
    "set ENTSOE_API_KEY (environment or .env): register at https://transparency.entsoe.eu and request "
    "'Restful API access' by e-mail to transparency@entsoe.eu"
)
QUARTER_GOLIVE = datetime(2025, 9, 30, 22, 0, tzinfo=UTC)  # 2025-10-01 00:00 Europe/Amsterdam
SEQUENCE_ONE = ("DE_LU", "AT")  # areas with several auctions: ask for SDAC (as entsoe-py does)
_RES = {"15min": 15, "30min": 30, "60min": 60}


def base_url() -> str:
    return os.environ.get("ENTSOE_ENDPOINT_URL") or DEFAULT_URL


def window(year: int) -> tuple[datetime, datetime]:
    return datetime(year, 1, 1, tzinfo=UTC), datetime(year + 1, 1, 1, tzinfo=UTC)


class _ExpiringSession:
    """What entsoe-py needs of a session (``get``, ``headers``), with our cache lifetime added."""

    def __init__(self, session: requests.Session, expire_after) -> None:
        self._session = session
        self._expire = expire_after
        self.headers = session.headers

    def get(self, url, **kwargs):
        if hasattr(self._session, "cache"):
            kwargs["expire_after"] = self._expire
        return self._session.get(url, **kwargs)


def fetch(
    location: Location,
    year: int,
    *,
    session: requests.Session,
    api_key: str | None = None,
    start: datetime | None = None,
    end: datetime | None = None,
) -> RawFile:
    """Fetch the day-ahead price document for one area and window (default: the UTC year)."""
    if not location.entsoe_area:
        raise SourceUnavailableError(f"{SOURCE}: {location.location} is not an ENTSO-E bidding zone")
    api_key = api_key or http.get_token(TOKEN_ENV)
    if not api_key:
        raise SourceUnavailableError(f"{SOURCE}: no API token for {location.location} {year}: {TOKEN_HELP}")
    import entsoe.entsoe as entsoe_mod
    import pandas as pd
    from entsoe import EntsoeRawClient
    from entsoe.exceptions import NoMatchingDataError

    entsoe_mod.URL = base_url()
    lo, hi = window(year)
    start, end = start or lo, end or hi
    client = EntsoeRawClient(
        api_key=api_key, session=_ExpiringSession(session, http.expire_for(end)),
        retry_count=1, retry_delay=0,  # our session already retries with backoff
    )
    area = location.entsoe_area
    what = f"{location.location} ({area}) {start:%Y-%m-%d}..{end:%Y-%m-%d}"
    try:
        text = client.query_day_ahead_prices(
            area, start=pd.Timestamp(start), end=pd.Timestamp(end),
            sequence=1 if area in SEQUENCE_ONE else None,
        )
    except NoMatchingDataError:
        raise SourceUnavailableError(f"{SOURCE}: no day-ahead prices published for {what}") from None
    except Exception as exc:  # requests errors, HTTPError with the token in its URL, entsoe errors
        raise http.DownloadError(f"{SOURCE}: {what}: {http.redact(str(exc), [api_key])}") from None
    content = text.encode("utf-8")
    _check_document(content, f"{SOURCE}: {what}")
    uri = (f"{_strip(base_url())}?documentType=A44&in_Domain={area}&out_Domain={area}"
           f"&periodStart={start:%Y%m%d%H%M}&periodEnd={end:%Y%m%d%H%M}")
    return RawFile(source=SOURCE, uri=uri, content=content)


def _strip(url: str) -> str:
    return url.split("?", 1)[0]


def _check_document(content: bytes, what: str) -> None:
    http.check_body(content, http.Expect(kind="xml"), what=what)
    head = content[:2000]
    if b"Acknowledgement_MarketDocument" in head:
        reason = re.search(rb"<text>(.*?)</text>", content, re.S)
        raise SourceUnavailableError(f"{what}: ENTSO-E refused: {reason.group(1).decode() if reason else 'no reason'}")
    if b"Publication_MarketDocument" not in head:
        raise http.DownloadError(f"{what}: not an ENTSO-E Publication_MarketDocument; nothing landed")
    if not content.rstrip().endswith(b"</Publication_MarketDocument>"):
        raise http.DownloadError(f"{what}: truncated XML document; nothing landed")


def parse(
    raw: RawFile,
    location: Location,
    *,
    year: int | None = None,
    start: datetime | None = None,
    end: datetime | None = None,
    max_gap: timedelta = DEFAULT_MAX_GAP,
    rates: dict[tuple[str, int], float] | None = None,
) -> pl.DataFrame:
    """Parse an A44 document into ``grid_price`` rows, restricted to ``[start, end)`` (or the year)."""
    from entsoe.parsers import parse_prices

    file = raw.uri
    try:
        _check_document(raw.content, file)
    except SourceUnavailableError as exc:
        raise DataError(str(exc), file=file) from None
    text = raw.content.decode("utf-8")
    currencies = set(re.findall(r"<currency_Unit\.name>(\w+)</currency_Unit\.name>", text))
    if currencies and currencies != {location.price_currency}:
        raise DataError(f"document currency {sorted(currencies)} is not {location.price_currency}",
                        file=file, column="currency_Unit.name")
    try:
        with warnings.catch_warnings():  # entsoe-py parses XML with bs4's HTML parser, by design
            warnings.simplefilter("ignore")
            parsed = parse_prices(text)
    except Exception as exc:  # malformed document: entsoe-py raises assorted errors
        raise DataError(f"cannot parse ENTSO-E price document: {exc}", file=file) from None
    frames = []
    for key, minutes in _RES.items():
        s = parsed.get(key)
        if s is None or len(s) == 0:
            continue
        idx = s.index.tz_convert("UTC") if s.index.tz is not None else s.index.tz_localize("UTC")
        frames.append(pl.DataFrame({
            "ts_utc": pl.Series(idx.to_pydatetime().tolist(), dtype=pl.Datetime("us", "UTC")),
            "price_local_per_mwh": pl.Series(s.to_numpy(dtype=float), dtype=pl.Float64),
            "resolution_min": pl.Series([minutes] * len(s), dtype=pl.Int64),
        }))
    if not frames:
        raise DataError("document holds no price points", file=file)
    df = _hold_coarser(pl.concat(frames))
    if year is not None and start is None and end is None:
        start, end = window(year)
    if start is not None:
        df = df.filter(pl.col("ts_utc") >= start)
    if end is not None:
        df = df.filter(pl.col("ts_utc") < end)
    if df.height == 0:
        raise DataError("no price points inside the requested window", file=file)
    if df["price_local_per_mwh"].is_null().any() or df["price_local_per_mwh"].is_nan().any():
        raise DataError("empty price value(s)", file=file, column="price.amount")
    check_time_grid(df["ts_utc"], file, "ts_utc", step=_grid_step(df), max_gap=max_gap)
    return grid_price_rows(df["ts_utc"], df["price_local_per_mwh"], df["resolution_min"],
                           location.price_currency, location=location, source=SOURCE, raw=raw, rates=rates)


def _grid_step(df: pl.DataFrame) -> timedelta:
    """The row spacing: the finest market interval present (held coarser rows sit on that grid)."""
    d = df["ts_utc"].diff().drop_nulls()
    d = d.filter(d > timedelta(0))
    return min(d.min(), timedelta(minutes=int(df["resolution_min"].min()))) if d.len() else timedelta(hours=1)


def _hold_coarser(df: pl.DataFrame) -> pl.DataFrame:
    """Mixed resolutions → one grid at the finest: hold coarser prices over their sub-intervals."""
    finest = int(df["resolution_min"].min())
    if df["resolution_min"].n_unique() > 1:
        df = (
            df.with_columns(
                pl.int_ranges(0, pl.col("resolution_min") // finest).alias("_k")
            )
            .explode("_k")
            .with_columns(pl.col("ts_utc") + pl.duration(minutes=pl.col("_k") * finest))
            .drop("_k")
        )
    # a native finer price wins over a held coarser one at the same instant
    return df.sort(["ts_utc", "resolution_min"]).unique("ts_utc", keep="first", maintain_order=True)
