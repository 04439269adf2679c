"""ENTSO-E day-ahead prices (EU zones with ``entsoe_area``): the Transparency API, and its mirror file.

**Live**, through ``entsoe-py`` (Transparency Platform API, document A44): one query per location
and UTC year (the API's one-year limit), through the shared cached session; the token
(``ENTSOE_API_KEY``) travels as the ``securityToken`` query parameter, which the session keeps out
of cache keys, stored URLs and logs. The landed raw file is the XML document as returned; only a
``Publication_MarketDocument`` is cached (an HTML page, an acknowledgement or an error is not).
Parsing uses entsoe-py's own ``parse_prices`` (handles curve type A03, where repeated values are
omitted), then:

- **area**: every time series must be for the location's bidding zone (``in_Domain.mRID``);
- **mixed resolution**: day-ahead (SDAC) moved from 60-minute to 15-minute products on
  2025-10-01 (business day Europe/Amsterdam). A query across that date returns both. When a
  document mixes resolutions, every coarser price is held over each finer interval it covers
  (forward-fill, never interpolation): an hourly price becomes four quarter-hour rows carrying
  ``resolution_min=60`` (the market interval the price was set for). A native finer price always
  wins over a held coarser one;
- **DST**: periods are given in UTC, so a 23- or 25-hour local day is 23 or 25 distinct UTC
  hours; nothing is shifted, lost or doubled;
- **currency**: EUR from the document is converted with :mod:`pipelines.core.fx` (rate per row in
  ``usd_per_local``).

**Mirror**: ``prices/local_currency/<LOCATION>/<LOCATION>_electricity_prices_<YEAR>.csv``
(``Datetime,Price (EUR/MWh)``), the same auction prices in the market's currency. Its naive times
are a uniform hourly grid at the zone's standard-time UTC offset (CET, UTC+1, all year: no DST gap
or repeat), so UTC = time − that offset; a 2023 file starts at 2022-12-31T23:00Z. For the same
hours, live rows and mirror rows are equal. The currency in the header must be the market's.

Base URL: ``ENTSOE_ENDPOINT_URL`` (entsoe-py reads it at import; it is re-applied at call time so a
later setting, e.g. a test's fake server, takes effect).
"""

from __future__ import annotations

import os
import re
import warnings
from datetime import UTC, datetime, timedelta
from zoneinfo import ZoneInfo

import polars as pl
import requests

from gridshift.errors import DataError, SourceUnavailableError
from gridshift.locations import Location
from pipelines.core import http
from pipelines.core.fx import grid_price_rows
from pipelines.core.raw import RawFile
from pipelines.core.redact import redact_uri
from pipelines.core.source import GridSource, NotPublished, year_bounds
from pipelines.core.tabular import bad_rows, check_time_grid, read_csv_strings, to_float

DEFAULT_URL = "https://web-api.tp.entsoe.eu/api"
QUARTER_GOLIVE = datetime(2025, 9, 30, 22, 0, tzinfo=UTC)  # 2025-10-01 00:00 Europe/Amsterdam
SEQUENCE_ONE = ("DE_LU", "AT")  # areas with several auctions: ask for SDAC (as entsoe-py does)
_RES = {"15min": 15, "30min": 30, "60min": 60}
MIRROR_TIME = "Datetime"
_MIRROR_PRICE = re.compile(r"^Price \(([A-Z]{3})/MWh\)$")


def base_url() -> str:
    return os.environ.get("ENTSOE_ENDPOINT_URL") or DEFAULT_URL


def area_code(area: str) -> str:
    """The bidding zone's EIC code (``in_Domain.mRID`` of its documents)."""
    from entsoe.mappings import lookup_area

    return lookup_area(area).code


class _ExpiringSession:
    """What entsoe-py needs of a session (``get``, ``headers``), through our cache policy."""

    def __init__(self, session: http.GridshiftSession, expire_after, accept: http.Accept) -> None:
        self._session = session
        self._expire = expire_after
        self._accept = accept
        self.headers = session.headers

    def get(self, url, params=None, **kwargs):
        return self._session.fetch(url, params=params, expire_after=self._expire, accept=self._accept, **kwargs)


def check_document(content: bytes, what: str) -> None:
    """A complete A44 ``Publication_MarketDocument``, or an error saying why not."""
    http.check_body(content, http.Expect(kind="xml"), what=what)
    head = content[:2000]
    if b"Acknowledgement_MarketDocument" in head:
        reason = re.search(rb"<text>(.*?)</text>", content, re.S)
        raise SourceUnavailableError(f"{what}: ENTSO-E refused: {reason.group(1).decode() if reason else 'no reason'}")
    if b"Publication_MarketDocument" not in head:
        raise http.DownloadError(f"{what}: not an ENTSO-E Publication_MarketDocument; nothing landed")
    if not content.rstrip().endswith(b"</Publication_MarketDocument>"):
        raise http.DownloadError(f"{what}: truncated XML document; nothing landed")


class EntsoeDayAhead(GridSource):
    """ENTSO-E day-ahead prices: the Transparency API live, the local-currency file from a mirror."""

    name = "entsoe-day-ahead"
    time_column = MIRROR_TIME

    def covers(self, location: Location) -> bool:
        return bool(location.entsoe_area)

    def mirror_relpath(self, location: Location, year: int) -> str:
        code = location.location
        return f"prices/local_currency/{code}/{code}_electricity_prices_{year}.csv"

    def how_to(self, location: Location) -> str:
        return (f"set {self.info.token_env} (environment or .env): register at https://transparency.entsoe.eu "
                "and request 'Restful API access' by e-mail to transparency@entsoe.eu")

    def fetch(self, location: Location, year: int, *, home=None, session: requests.Session | None = None,
              start: datetime | None = None, end: datetime | None = None) -> RawFile:
        """The day-ahead price document for one area and window (default: the UTC year)."""
        if not location.entsoe_area:
            raise NotPublished(f"{self.name}: {location.location} is not an ENTSO-E bidding zone")
        api_key = http.get_token(self.info.token_env)
        if not api_key:
            raise NotPublished(f"{self.name}: no API token for {location.location} {year}: {self.how_to(location)}")
        import entsoe.entsoe as entsoe_mod
        import pandas as pd
        from entsoe import EntsoeRawClient
        from entsoe.exceptions import NoMatchingDataError

        http.guard_loggers()
        entsoe_mod.URL = base_url()
        lo, hi = year_bounds(year)
        start, end = start or lo, end or hi
        area = location.entsoe_area
        what = f"{self.name}: {location.location} ({area}) {start:%Y-%m-%d}..{end:%Y-%m-%d}"

        def accept(resp: requests.Response) -> None:
            check_document(resp.content, what)

        client = EntsoeRawClient(
            api_key=api_key, session=_ExpiringSession(session, http.expire_for(end), accept),
            retry_count=1, retry_delay=0,  # our session already retries with backoff
        )
        try:
            text = client.query_day_ahead_prices(
                area, start=pd.Timestamp(start), end=pd.Timestamp(end),
                sequence=1 if area in SEQUENCE_ONE else None,
            )
        except NoMatchingDataError:
            raise SourceUnavailableError(f"{what}: no day-ahead prices published") from None
        except SourceUnavailableError as exc:  # refused by our check (HTML page, acknowledgement...)
            raise type(exc)(http.redact(str(exc), [api_key])) from None
        except Exception as exc:  # requests errors, HTTPError with the token in its URL, entsoe errors
            raise http.DownloadError(f"{what}: {http.redact(str(exc), [api_key])}") from None
        content = text.encode("utf-8")
        check_document(content, what)
        uri = (f"{redact_uri(base_url()).split('?', 1)[0]}?documentType=A44&in_Domain={area}&out_Domain={area}"
               f"&periodStart={start:%Y%m%d%H%M}&periodEnd={end:%Y%m%d%H%M}")
        return RawFile(source=self.name, uri=uri, content=content)

    def rows(self, raw: RawFile, location: Location, year: int, *, max_gap: timedelta,
             start: datetime | None = None, end: datetime | None = None,
             rates: dict[tuple[str, int], float] | None = None) -> pl.DataFrame:
        if raw.content.lstrip()[:1] == b"<":
            return self.rows_document(raw, location, year, max_gap=max_gap, start=start, end=end, rates=rates)
        return self.rows_mirror(raw, location, year, max_gap=max_gap, rates=rates)

    def rows_document(self, raw: RawFile, location: Location, year: int, *, max_gap: timedelta,
                      start: datetime | None = None, end: datetime | None = None,
                      rates: dict[tuple[str, int], float] | None = None) -> pl.DataFrame:
        """An A44 document → ``grid_price`` rows within ``[start, end)`` (default: the UTC year)."""
        from entsoe.parsers import parse_prices

        file = raw.uri
        try:
            check_document(raw.content, file)
        except SourceUnavailableError as exc:
            raise DataError(str(exc), file=file) from None
        text = raw.content.decode("utf-8")
        domains = set(re.findall(r"<in_Domain\.mRID[^>]*>([^<]+)</in_Domain\.mRID>", text))
        want = area_code(location.entsoe_area) if location.entsoe_area else None
        if not domains or domains != {want}:
            raise DataError(f"document is for bidding zone(s) {sorted(domains)}, not {location.location} ({want})",
                            file=file, column="in_Domain.mRID", values=sorted(domains))
        currencies = set(re.findall(r"<currency_Unit\.name>(\w+)</currency_Unit\.name>", text))
        if currencies and currencies != {location.price_currency}:
            raise DataError(f"document currency {sorted(currencies)} is not {location.price_currency}",
                            file=file, column="currency_Unit.name")
        try:
            with warnings.catch_warnings():  # entsoe-py parses XML with bs4's HTML parser, by design
                warnings.simplefilter("ignore")
                parsed = parse_prices(text)
        except Exception as exc:  # malformed document: entsoe-py raises assorted errors
            raise DataError(f"cannot parse ENTSO-E price document: {exc}", file=file, column="price.amount"
                            if isinstance(exc, ValueError) else None) from None
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
        lo, hi = year_bounds(year)
        df = df.filter((pl.col("ts_utc") >= (start or lo)) & (pl.col("ts_utc") < (end or hi)))
        if df.height == 0:
            raise DataError("no price points inside the requested window", file=file)
        if df["price_local_per_mwh"].is_null().any() or df["price_local_per_mwh"].is_nan().any():
            raise DataError("empty price value(s)", file=file, column="price.amount")
        check_time_grid(df["ts_utc"], file, "ts_utc", step=_grid_step(df), max_gap=max_gap)
        return grid_price_rows(df["ts_utc"], df["price_local_per_mwh"], df["resolution_min"],
                               location.price_currency, location=location, source=self.name, raw=raw, rates=rates)

    def rows_mirror(self, raw: RawFile, location: Location, year: int, *, max_gap: timedelta,
                    rates: dict[tuple[str, int], float] | None = None) -> pl.DataFrame:
        """The mirror's local-currency file → ``grid_price`` rows, in file order."""
        file = raw.uri
        df = read_csv_strings(raw.content, file, [MIRROR_TIME])
        prices = [c for c in df.columns if _MIRROR_PRICE.match(c)]
        if len(prices) != 1 or df.width != 2:
            raise DataError(f"expected columns {MIRROR_TIME!r} and 'Price (<CUR>/MWh)', found {df.columns}",
                            file=file, column=prices[0] if prices else None)
        currency = _MIRROR_PRICE.match(prices[0]).group(1)
        if currency != location.price_currency:
            raise DataError(f"prices in {currency}, but {location.location}'s market trades in "
                            f"{location.price_currency}", file=file, column=prices[0])
        tz = ZoneInfo(location.timezone)
        standard = min(tz.utcoffset(datetime(year, 1, 1)), tz.utcoffset(datetime(year, 7, 1)))
        local = df[MIRROR_TIME].str.strip_chars().str.to_datetime("%Y-%m-%d %H:%M:%S", strict=False, time_unit="us")
        if local.null_count():
            raise bad_rows(df, local.is_null(), "timestamps must be naive 'YYYY-MM-DD HH:MM:SS' (the zone's "
                           "standard time)", file=file, column=MIRROR_TIME)
        ts = (local - standard).dt.replace_time_zone("UTC")
        check_time_grid(ts, file, MIRROR_TIME, step=timedelta(hours=1), max_gap=max_gap)
        price = to_float(df, prices[0], file, required=True)
        minutes = pl.Series([60] * df.height, dtype=pl.Int64)
        return grid_price_rows(ts, price, minutes, currency, location=location, source=self.name, raw=raw,
                               rates=rates)


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


SOURCE = EntsoeDayAhead()
