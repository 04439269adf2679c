"""Exchange rates used to convert local-currency prices to USD: a versioned data file, not code.

``pipelines/data/fx_usd_per_unit.csv`` holds one row per (currency, year): USD per unit of the
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

FX_FILE = "data/fx_usd_per_unit.csv"
COLUMNS = ["currency", "year", "usd_per_unit", "basis", "source", "source_url", "as_of", "verified", "note"]


class MissingRateError(GridshiftError):
    pass


def _bytes() -> bytes:
    return files("pipelines").joinpath(FX_FILE).read_bytes()


@cache
def table() -> pl.DataFrame:
    df = pl.read_csv(_bytes(), schema_overrides={"year": pl.Int64, "usd_per_unit": pl.Float64}, infer_schema=False)
    if df.columns != COLUMNS:
        raise GridshiftError(f"pipelines/{FX_FILE}: columns {df.columns} are not {COLUMNS}")
    rated = df.filter(pl.col("currency") != "USD")
    if not (rated["source_url"].fill_null("").str.starts_with("https://").all()
            and rated["as_of"].fill_null("").str.contains(r"^\d{4}-\d{2}-\d{2}$").all()):
        raise GridshiftError(f"pipelines/{FX_FILE}: every rate needs its source_url and as_of date")
    if df.select(pl.struct("currency", "year").is_duplicated().any()).item():
        raise GridshiftError(f"pipelines/{FX_FILE}: duplicate (currency, year) rows")
    if (df["usd_per_unit"] <= 0).any():
        raise GridshiftError(f"pipelines/{FX_FILE}: rates must be positive")
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
            f"no USD exchange rate for {currency} in {year} in pipelines/{FX_FILE} "
            f"(years present for {currency}: {have or 'none'}); add a row with its source and date"
        )
    return float(hit["usd_per_unit"][0])
