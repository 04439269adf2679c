"""Day-ahead electricity prices from the standardized USD CSVs (one file per market and year).

Mirror layout: ``prices/standardized/<LOCATION>/<LOCATION>_electricity_prices_<YEAR>.csv`` with
``Datetime (UTC),Datetime (Local),Price (USD/MWh)``. The UTC column is authoritative; the local
column is cross-checked against it (same instant), which catches a file whose columns were
shifted or mislabelled. Negative prices and spikes in the thousands are real and kept.
"""

from __future__ import annotations

from datetime import timedelta

import polars as pl

from gridshift.errors import DataError
from gridshift.locations import Location
from pipelines import fx
from pipelines.raw import RawFile
from pipelines.tabular import DEFAULT_MAX_GAP, check_time_grid, read_csv_strings, to_float, to_utc

SOURCE = "sustaincluster-prices-usd"
LICENSE = (
    "Market operators' public day-ahead prices (ENTSO-E Transparency, CAISO, ERCOT, NYISO, PJM, IESO, "
    "AEMO, JEPX, KPX, EMC Singapore, IEX India, ONS, CEN, Eskom) as standardized to USD by SustainCluster (MIT)"
)
COL_UTC = "Datetime (UTC)"
COL_LOCAL = "Datetime (Local)"
COL_PRICE = "Price (USD/MWh)"
FMT = "%Y-%m-%d %H:%M:%S%:z"


def mirror_relpath(location: Location, year: int) -> str:
    code = location.location
    return f"prices/standardized/{code}/{code}_electricity_prices_{year}.csv"


def parse(raw: RawFile, location: Location, *, max_gap: timedelta = DEFAULT_MAX_GAP) -> pl.DataFrame:
    """Parse one standardized price file into ``grid_price`` rows."""
    file = raw.uri
    df = read_csv_strings(raw.content, file, [COL_UTC, COL_LOCAL, COL_PRICE])
    ts = to_utc(df, COL_UTC, file, FMT, naive_is_utc=False)
    local = to_utc(df, COL_LOCAL, file, FMT, naive_is_utc=False)
    mismatch = df.with_row_index("_i").filter(ts != local)
    if mismatch.height:
        raise DataError(
            "local and UTC timestamps name different instants",
            file=file,
            column=COL_LOCAL,
            rows=[i + 2 for i in mismatch["_i"].head(10).to_list()],
            values=mismatch[COL_LOCAL].head(10).to_list(),
        )
    step = _resolution(ts)
    check_time_grid(ts, file, COL_UTC, step=step, max_gap=max_gap)
    price = to_float(df, COL_PRICE, file, required=True)
    minutes = pl.Series([int(step.total_seconds() // 60)] * df.height, dtype=pl.Int64)
    # file order kept, so validation errors point at file lines
    return grid_price_rows(ts, price, minutes, "USD", location=location, source=SOURCE, raw=raw)


def grid_price_rows(
    ts_utc: pl.Series, price_local: pl.Series, resolution_min: pl.Series, currency: str, *,
    location: Location, source: str, raw: RawFile, rates: dict[tuple[str, int], float] | None = None,
) -> pl.DataFrame:
    """``grid_price`` rows from local-currency prices: USD at the year's rate, the rate recorded per row.

    The one place every price source (mirror USD files, ENTSO-E, ISOs) turns prices into rows.
    """
    years = ts_utc.dt.year().unique().to_list()
    rate_by_year = {y: fx.usd_per_unit(currency, y, rates) for y in years}
    usd_per = ts_utc.dt.year().replace_strict(rate_by_year, return_dtype=pl.Float64)
    n = ts_utc.len()
    return pl.DataFrame({
        "location": pl.Series([location.location] * n, dtype=pl.String),
        "ts_utc": ts_utc,
        "price_usd_per_mwh": price_local * usd_per,
        "price_local_per_mwh": price_local,
        "currency": pl.Series([currency] * n, dtype=pl.String),
        "usd_per_local": usd_per,
        "resolution_min": resolution_min.cast(pl.Int64),
        "source": pl.Series([source] * n, dtype=pl.String),
        "raw_sha256": pl.Series([raw.sha256] * n, dtype=pl.String),
    })


def _resolution(ts: pl.Series) -> timedelta:
    """The market interval: the most common spacing between consecutive timestamps."""
    diffs = ts.sort().diff().drop_nulls()
    if diffs.len() == 0:
        return timedelta(hours=1)
    mode = diffs.mode().sort()[0]
    return mode if mode in (timedelta(minutes=m) for m in (5, 15, 30, 60)) else timedelta(hours=1)
