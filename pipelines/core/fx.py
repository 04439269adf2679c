"""Exchange rates used to convert local-currency prices to USD: a versioned data file, not code.

``pipelines/core/data/fx_usd_per_unit.csv`` holds one row per (currency, year): USD per unit of the
currency, the basis (annual average of daily reference rates), the publisher (``source``) and its
page (``source_url``), the date the value was recorded (``as_of``), whether it has been checked
against that page (``verified``: ``no`` for every hand-transcribed value so far) and a note on how
the value was obtained. Values keep the published precision (4 decimals); how to refresh and verify
them is in docs/sources.md. A price row records the rate it was converted with in ``usd_per_local``, so the conversion
can always be undone or redone. A year without a rate is an error naming the file to extend (no
silent fallback to a neighbouring year). ``version()`` is the file's sha256 prefix, for lineage.
"""

from __future__ import annotations

from functools import cache
from importlib.resources import files

import polars as pl

from gridshift.errors import GridshiftError
from gridshift.hashing import sha256_bytes
from gridshift.locations import Location
from pipelines.core.raw import RawFile

FX_FILE = "data/fx_usd_per_unit.csv"  # in this package
FX_PATH = f"pipelines/core/{FX_FILE}"  # for messages
COLUMNS = ["currency", "year", "usd_per_unit", "basis", "source", "source_url", "as_of", "verified", "note"]


class MissingRateError(GridshiftError):
    pass


def _bytes() -> bytes:
    return files("pipelines.core").joinpath(FX_FILE).read_bytes()


@cache
def table() -> pl.DataFrame:
    df = pl.read_csv(_bytes(), schema_overrides={"year": pl.Int64, "usd_per_unit": pl.Float64}, infer_schema=False)
    if df.columns != COLUMNS:
        raise GridshiftError(f"{FX_PATH}: columns {df.columns} are not {COLUMNS}")
    rated = df.filter(pl.col("currency") != "USD")
    if not (rated["source_url"].fill_null("").str.starts_with("https://").all()
            and rated["as_of"].fill_null("").str.contains(r"^\d{4}-\d{2}-\d{2}$").all()):
        raise GridshiftError(f"{FX_PATH}: every rate needs its source_url and as_of date")
    if df.select(pl.struct("currency", "year").is_duplicated().any()).item():
        raise GridshiftError(f"{FX_PATH}: duplicate (currency, year) rows")
    if (df["usd_per_unit"] <= 0).any():
        raise GridshiftError(f"{FX_PATH}: rates must be positive")
    return df


def version() -> str:
    return sha256_bytes(_bytes())[:12]


def usd_per_unit(currency: str, year: int, rates: dict[tuple[str, int], float] | None = None) -> float:
    """USD per one unit of ``currency`` for ``year`` (``rates`` overrides the file, for tests)."""
    if currency == "USD":
        return 1.0
    if rates is not None and (currency, year) in rates:
        return float(rates[(currency, year)])
    hit = table().filter((pl.col("currency") == currency) & (pl.col("year") == year))
    if hit.height != 1:
        have = sorted(table().filter(pl.col("currency") == currency)["year"].to_list())
        raise MissingRateError(
            f"no USD exchange rate for {currency} in {year} in {FX_PATH} "
            f"(years present for {currency}: {have or 'none'}); add a row with its source and date"
        )
    return float(hit["usd_per_unit"][0])


def grid_price_rows(
    ts_utc: pl.Series, price_local: pl.Series, resolution_min: pl.Series, currency: str, *,
    location: Location, source: str, raw: RawFile, rates: dict[tuple[str, int], float] | None = None,
) -> pl.DataFrame:
    """``grid_price`` rows from local-currency prices: USD at the year's rate, the rate recorded per row.

    The one place every price source (the USD files, ENTSO-E, the ISOs) turns prices into rows.
    """
    years = ts_utc.dt.year().unique().to_list()
    rate_by_year = {y: usd_per_unit(currency, y, rates) for y in years}
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
