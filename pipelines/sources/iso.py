"""US/Canadian ISO day-ahead prices through ``gridstatus``, behind one adapter.

gridstatus makes its own HTTP calls (no shared session, no base URL to override), so the adapter
is the seam: ``IsoPriceAdapter.pull(location, start, end)`` returns a pandas/polars frame with
gridstatus' ``Interval Start`` and a price column; ``SOURCE.fetch`` normalizes it to a small CSV
(``interval_start_utc,interval_end_utc,node,price,currency``), persists that pull under
``<home>/http_cache/gridstatus/<ISO>/<LOCATION>_<YEAR>.csv`` (so a re-run needs no network) and
returns it as the raw file to land; ``SOURCE.parse`` turns it into ``grid_price`` rows.

Per market (day-ahead hourly LMP/SPP at one representative node or hub):

=========  ======================  =======================================  ========
ISO        gridstatus call         node / hub                              currency
=========  ======================  =======================================  ========
CAISO      ``CAISO.get_lmp``       ``TH_NP15_GEN-APND`` (NP15 trading hub)  USD
ERCOT      ``Ercot.get_spp``       ``HB_HUBAVG`` (hub average)              USD
NYISO      ``NYISO.get_lmp``       ``N.Y.C.`` (zone J)                      USD
PJM        ``PJM.get_lmp``         ``PJM-RTO`` (pnode 1; ``PJM_API_KEY``)   USD
IESO       ``IESO.get_lmp_day_ahead_hourly_ontario_zonal`` (from 2025-05;  CAD
           earlier years: ``get_hoep_historical_hourly``)
=========  ======================  =======================================  ========

If gridstatus is not installed, :class:`GridstatusUnavailable` (a ``SourceUnavailableError``)
says how to install it or which mirror file to provide instead. PJM's key is checked first, so a
missing ``PJM_API_KEY`` is reported whether or not gridstatus is installed.

gridstatus frames (as its own tests pin them): every ISO gives tz-aware ``Interval Start`` /
``Interval End`` in the ISO's time zone (CAISO America/Los_Angeles, ERCOT US/Central, NYISO and PJM
US/Eastern, IESO Eastern Standard Time) and hourly day-ahead intervals. The node column is
``Location`` (CAISO, ERCOT, NYISO, IESO zonal), or ``Location Id`` / ``Location Name`` /
``Location Short Name`` (PJM, whose ``locations=`` takes pnode ids); HOEP frames have no node
column. The price column is ``LMP`` (CAISO, NYISO, PJM, IESO zonal), ``SPP`` (ERCOT) or ``HOEP``.
Conversion to UTC uses the offsets in the frame, so a 23- or 25-hour local day is 23 or 25
distinct UTC hours.
"""

from __future__ import annotations

import io
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Protocol

import polars as pl

from gridshift.atomic import atomic_write_bytes
from gridshift.errors import DataError, SourceUnavailableError
from gridshift.home import Home, safe_join
from gridshift.locations import Location
from gridshift.sources import get as source_info
from pipelines.core import http
from pipelines.core.fx import grid_price_rows
from pipelines.core.raw import RawFile, read_local
from pipelines.core.source import GridSource, NotPublished, year_bounds
from pipelines.core.tabular import bad_rows, check_time_grid

NAME = "gridstatus-iso-day-ahead"
COLUMNS = ["interval_start_utc", "interval_end_utc", "node", "price", "currency"]
IESO_MARKET_RENEWAL = datetime(2025, 5, 1, tzinfo=UTC)


class GridstatusUnavailable(SourceUnavailableError):
    pass


@dataclass(frozen=True)
class IsoSpec:
    iso: str
    cls: str
    method: str
    kwargs: dict
    node: str
    currency: str = "USD"
    needs_token: bool = False  # the source's token (``gridshift.sources``: PJM_API_KEY)


SPECS: dict[str, IsoSpec] = {
    "CAISO": IsoSpec("CAISO", "CAISO", "get_lmp", {"market": "DAY_AHEAD_HOURLY",
                                                   "locations": ["TH_NP15_GEN-APND"]}, "TH_NP15_GEN-APND"),
    "ERCOT": IsoSpec("ERCOT", "Ercot", "get_spp", {"market": "DAY_AHEAD_HOURLY", "locations": ["HB_HUBAVG"],
                                                   "location_type": "Trading Hub"}, "HB_HUBAVG"),
    "NYISO": IsoSpec("NYISO", "NYISO", "get_lmp", {"market": "DAY_AHEAD_HOURLY", "locations": ["N.Y.C."],
                                                   "location_type": "zone"}, "N.Y.C."),
    # PJM's ``locations=`` takes pnode ids (gridstatus casts them to int): 1 is the PJM-RTO aggregate
    "PJM": IsoSpec("PJM", "PJM", "get_lmp", {"market": "DAY_AHEAD_HOURLY", "locations": [1]},
                   "PJM-RTO", needs_token=True),
    "IESO": IsoSpec("IESO", "IESO", "get_lmp_day_ahead_hourly_ontario_zonal", {}, "ONTARIO", currency="CAD"),
}
PRICE_COLUMNS = ("LMP", "SPP", "HOEP", "Price", "Zonal Price")
NODE_COLUMNS = ("Location", "Location Name", "Location Short Name")  # first present names the node
PJM_HELP = ("request a Data Miner 2 API key at https://dataminer2.pjm.com and set PJM_API_KEY (environment "
            "or .env), or provide prices/standardized/<LOCATION>/<LOCATION>_electricity_prices_<YEAR>.csv "
            "in a mirror")


class IsoPriceAdapter(Protocol):
    """Anything that can pull one ISO's day-ahead prices for ``[start, end)`` as a frame."""

    def pull(self, spec: IsoSpec, start: datetime, end: datetime):  # -> pandas or polars DataFrame
        ...


class GridstatusAdapter:
    """The real adapter: calls gridstatus (its own HTTP; PJM's key from ``PJM_API_KEY``)."""

    def pull(self, spec: IsoSpec, start: datetime, end: datetime):
        kwargs = {}
        if spec.needs_token:  # checked before the import: the user learns about both at once
            token_env = source_info(NAME).token_env
            key = http.get_token(token_env)
            if not key:
                raise NotPublished(f"{NAME}: {spec.iso} needs {token_env}: {PJM_HELP}")
            kwargs["api_key"] = key
        try:
            import gridstatus

            http.guard_loggers()
        except ImportError:
            raise GridstatusUnavailable(
                f"{NAME}: {spec.iso} prices need the optional package gridstatus "
                "(uv pip install 'gridstatus>=0.37'), or provide a mirror with "
                "prices/standardized/<LOCATION>/<LOCATION>_electricity_prices_<YEAR>.csv"
            ) from None
        client = getattr(gridstatus, spec.cls)(**kwargs)
        calls = [(spec.method, dict(spec.kwargs), start, end)]
        if spec.iso == "IESO":  # HOEP until the market renewal (2025-05-01), Ontario zonal DA price after
            hoep = ("get_hoep_historical_hourly", {})
            if end <= IESO_MARKET_RENEWAL:
                calls = [(*hoep, start, end)]
            elif start < IESO_MARKET_RENEWAL:
                calls = [(*hoep, start, IESO_MARKET_RENEWAL),
                         (spec.method, dict(spec.kwargs), IESO_MARKET_RENEWAL, end)]
        frames = []
        for method, extra, lo, hi in calls:
            try:
                frames.append(getattr(client, method)(date=lo, end=hi, **extra))
            except Exception as exc:  # gridstatus raises many types; keep tokens out of the message
                raise http.DownloadError(f"{NAME}: {spec.iso} {lo:%Y-%m-%d}..{hi:%Y-%m-%d}: "
                                         f"{http.redact(str(exc))}") from None
        if len(frames) == 1:
            return frames[0]
        parts = [f if isinstance(f, pl.DataFrame) else pl.from_pandas(f.reset_index(drop=True)) for f in frames]
        utc = [pl.col(c).dt.convert_time_zone("UTC") for c in ("Interval Start", "Interval End")]
        return pl.concat([p.select(*utc, pl.col(next(c for c in PRICE_COLUMNS if c in p.columns)).alias("Price"))
                          for p in parts])


_adapter_factory: Callable[[], IsoPriceAdapter] = GridstatusAdapter


def set_adapter_factory(factory: Callable[[], IsoPriceAdapter] | None) -> None:
    """Swap the adapter (tests; or another client with the same output). ``None`` restores gridstatus."""
    global _adapter_factory
    _adapter_factory = factory or GridstatusAdapter


def spec_for(location: Location) -> IsoSpec:
    if not location.iso_market or location.iso_market not in SPECS:
        raise NotPublished(f"{NAME}: {location.location} is not a supported ISO market")
    return SPECS[location.iso_market]


def pull_path(home: Home, location: Location, year: int) -> Path:
    spec = spec_for(location)
    return safe_join(home.http_cache_path, "gridstatus", spec.iso, f"{location.location}_{year}.csv")


def normalize(frame, spec: IsoSpec) -> bytes:
    """gridstatus' frame → the adapter's CSV (UTC ISO timestamps, one node, sorted)."""
    if not isinstance(frame, pl.DataFrame):
        frame = pl.from_pandas(frame.reset_index(drop=True))
    if "Interval Start" not in frame.columns:
        raise DataError(f"gridstatus frame has no 'Interval Start' column: {frame.columns}", file=spec.iso)
    price_col = next((c for c in PRICE_COLUMNS if c in frame.columns), None)
    if price_col is None:
        raise DataError(f"gridstatus frame has no price column {PRICE_COLUMNS}: {frame.columns}", file=spec.iso)
    node_col = next((c for c in NODE_COLUMNS if c in frame.columns), None)
    if node_col is not None:
        frame = frame.with_columns(pl.col(node_col).cast(pl.String))
        nodes = frame[node_col].unique().to_list()
        if spec.node in nodes:
            frame = frame.filter(pl.col(node_col) == spec.node)
        elif len(nodes) > 1:
            raise DataError(f"gridstatus frame holds several nodes and not {spec.node!r}: {sorted(nodes)[:10]}",
                            file=spec.iso, column=node_col)
    start = frame["Interval Start"]
    if start.dtype.time_zone is None:
        raise DataError("gridstatus returned naive timestamps", file=spec.iso, column="Interval Start")
    end = frame["Interval End"] if "Interval End" in frame.columns else start + timedelta(hours=1)
    n = frame.height
    fmt = "%Y-%m-%dT%H:%M:%SZ"
    out = pl.DataFrame({
        "interval_start_utc": start.dt.convert_time_zone("UTC").dt.strftime(fmt),
        "interval_end_utc": end.dt.convert_time_zone("UTC").dt.strftime(fmt),
        "node": frame[node_col] if node_col is not None else [spec.node] * n,
        "price": frame[price_col].cast(pl.Float64),
        "currency": [spec.currency] * n,
    }).sort("interval_start_utc")
    buf = io.BytesIO()
    out.write_csv(buf)
    return buf.getvalue()


class GridstatusIsoDayAhead(GridSource):
    """US/Canadian ISO day-ahead prices through the gridstatus adapter (persisted pulls), live only."""

    name = NAME
    time_column = "interval_start_utc"

    def covers(self, location: Location) -> bool:
        return location.iso_market in SPECS

    def how_to(self, location: Location) -> str:
        spec = SPECS.get(location.iso_market or "")
        if spec is None:
            return f"no live price source for {location.location} (market {location.market}): provide the mirror file"
        return "install gridstatus" + (f" and set {self.info.token_env}" if spec.needs_token else "")

    def fetch(self, location: Location, year: int, *, home: Home, session=None,
              adapter: IsoPriceAdapter | None = None, now: datetime | None = None) -> RawFile:
        """A persisted pull if there is one (historical years), else a fresh pull through the adapter."""
        spec = spec_for(location)
        path = pull_path(home, location, year)
        start, end = year_bounds(year)
        now = now or datetime.now(UTC)
        historical = end <= now - http.RECENT_WINDOW
        uri = f"gridstatus:{spec.iso}/{spec.cls}.{spec.method}?node={spec.node}&year={year}"
        if path.is_file() and historical:
            return read_local(path, self.name, uri=uri)
        frame = (adapter or _adapter_factory()).pull(spec, start, min(end, now))
        content = normalize(frame, spec)
        atomic_write_bytes(path, content)
        return RawFile(source=self.name, uri=uri, content=content)

    def rows(self, raw: RawFile, location: Location, year: int, *, max_gap: timedelta,
             rates: dict[tuple[str, int], float] | None = None) -> pl.DataFrame:
        """A persisted pull → ``grid_price`` rows of the UTC year."""
        file = raw.uri
        try:
            df = pl.read_csv(io.BytesIO(raw.content), infer_schema=False)
        except Exception as exc:  # noqa: BLE001
            raise DataError(f"cannot parse pull: {exc}", file=file) from None
        missing = [c for c in COLUMNS if c not in df.columns]
        if missing:
            raise DataError(f"missing column(s) {missing}", file=file, column=missing[0])
        fmt = "%Y-%m-%dT%H:%M:%SZ"
        ts = df["interval_start_utc"].str.to_datetime(fmt, time_unit="us", strict=False).dt.replace_time_zone("UTC")
        te = df["interval_end_utc"].str.to_datetime(fmt, time_unit="us", strict=False).dt.replace_time_zone("UTC")
        for col, parsed in (("interval_start_utc", ts), ("interval_end_utc", te)):
            if parsed.null_count():
                raise bad_rows(df, parsed.is_null(), "unparseable interval timestamp(s)", file=file, column=col)
        res = ((te - ts).dt.total_minutes()).cast(pl.Int64)
        price = df["price"].cast(pl.Float64, strict=False)
        if price.null_count():
            raise bad_rows(df, price.is_null(), f"{price.null_count()} non-numeric or empty price(s)", file=file,
                           column="price")
        lo, hi = year_bounds(year)
        frame = pl.DataFrame({"ts_utc": ts, "price": price, "res": res, "cur": df["currency"],
                              "line": pl.int_range(2, df.height + 2, eager=True)}).filter(
            (pl.col("ts_utc") >= lo) & (pl.col("ts_utc") < hi))
        if frame.height == 0:
            raise DataError(f"the pull holds no prices in {year}", file=file, column="interval_start_utc")
        check_time_grid(frame["ts_utc"], file, "interval_start_utc",
                        step=timedelta(minutes=int(frame["res"].min())), max_gap=max_gap, rows=frame["line"])
        cur = frame["cur"].unique().to_list()
        if cur != [location.price_currency]:
            raise DataError(f"currency {cur} is not {location.price_currency}", file=file, column="currency")
        return grid_price_rows(frame["ts_utc"], frame["price"], frame["res"], cur[0],
                               location=location, source=self.name, raw=raw, rates=rates)


SOURCE = GridstatusIsoDayAhead()
