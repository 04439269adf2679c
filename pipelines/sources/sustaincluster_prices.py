"""Day-ahead electricity prices in USD, as standardized by SustainCluster (one file per market and year).

Mirror layout: ``prices/standardized/<LOCATION>/<LOCATION>_electricity_prices_<YEAR>.csv`` with
``Datetime (UTC),Datetime (Local),Price (USD/MWh)``. The UTC column is authoritative; the local
column must name the same instant *and* be the location's wall clock (its offsets are those of the
registry's time zone at each instant), which catches a file whose columns were shifted or
mislabelled and a file of another market put in this one's place. Negative prices and spikes in the
thousands are real and kept. Mirror only: there is no live route.
"""

from __future__ import annotations

from datetime import timedelta

import polars as pl

from gridshift.locations import Location
from pipelines.core.fx import grid_price_rows
from pipelines.core.raw import RawFile
from pipelines.core.source import GridSource
from pipelines.core.tabular import bad_rows, check_time_grid, read_csv_strings, to_float, to_utc

COL_UTC = "Datetime (UTC)"
COL_LOCAL = "Datetime (Local)"
COL_PRICE = "Price (USD/MWh)"
FMT = "%Y-%m-%d %H:%M:%S%:z"


def resolution(ts: pl.Series) -> timedelta:
    """The market interval: the most common spacing between consecutive timestamps."""
    diffs = ts.sort().diff().drop_nulls()
    if diffs.len() == 0:
        return timedelta(hours=1)
    mode = diffs.mode().sort()[0]
    return mode if mode in (timedelta(minutes=m) for m in (5, 15, 30, 60)) else timedelta(hours=1)


class SustainClusterPrices(GridSource):
    """SustainCluster's standardized USD day-ahead price files, from a mirror."""

    name = "sustaincluster-prices-usd"
    time_column = COL_UTC
    year_edge = timedelta(0)  # UTC timestamps of the UTC year only

    def mirror_relpath(self, location: Location, year: int) -> str:
        code = location.location
        return f"prices/standardized/{code}/{code}_electricity_prices_{year}.csv"

    def how_to(self, location: Location) -> str:
        code = location.location
        return f"provide prices/standardized/{code}/{code}_electricity_prices_<YEAR>.csv in a mirror"

    def rows(self, raw: RawFile, location: Location, year: int, *, max_gap: timedelta) -> pl.DataFrame:
        """One standardized price file → ``grid_price`` rows, in file order."""
        file = raw.uri
        df = read_csv_strings(raw.content, file, [COL_UTC, COL_LOCAL, COL_PRICE])
        ts = to_utc(df, COL_UTC, file, FMT, naive_is_utc=False)
        local = to_utc(df, COL_LOCAL, file, FMT, naive_is_utc=False)
        if (ts != local).any():
            raise bad_rows(df, ts != local, "local and UTC timestamps name different instants", file=file,
                           column=COL_LOCAL)
        wall = df[COL_LOCAL].str.strip_chars().str.slice(0, 19).str.to_datetime("%Y-%m-%d %H:%M:%S", time_unit="us")
        other_zone = wall != ts.dt.convert_time_zone(location.timezone).dt.replace_time_zone(None)
        if other_zone.any():
            raise bad_rows(df, other_zone, f"local times are not the wall clock of {location.timezone} "
                           f"({location.location}): another market's file?", file=file, column=COL_LOCAL)
        step = resolution(ts)
        check_time_grid(ts, file, COL_UTC, step=step, max_gap=max_gap)
        price = to_float(df, COL_PRICE, file, required=True)
        minutes = pl.Series([int(step.total_seconds() // 60)] * df.height, dtype=pl.Int64)
        return grid_price_rows(ts, price, minutes, "USD", location=location, source=self.name, raw=raw)


SOURCE = SustainClusterPrices()
