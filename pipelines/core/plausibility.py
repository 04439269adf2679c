"""Per-signal plausibility of a whole grid partition, beyond each value's hard bounds.

A file can hold only in-bounds values and still be wrong by a unit or a scale: carbon or prices divided by
1000, humidity as a fraction, °F stored as °C, the direct and life-cycle columns swapped. These checks look
at the partition's canonical rows (after the source's parser, before the Pandera model) with the
thresholds of ``gridshift.quality`` and refuse by name: file, column, rows and values.

A check that a legitimate file could trip (a zone as clean as an all-hydro grid, a market priced near
zero) is *overridable*: with ``allow_implausible`` the partition is ingested and the check's name is
returned, to be recorded in ``partition_quality.plausibility_overridden``. The others never are.
"""

from __future__ import annotations

import polars as pl

from gridshift import quality
from gridshift.errors import DataError

#: the checks an ``allow_implausible`` ingest may pass, by the name recorded in partition_quality
OVERRIDABLE = ("mean_carbon_lca", "mean_carbon_direct", "mean_price")
FLAG = "allow_implausible=True (--allow-implausible)"


def _sample(df: pl.DataFrame, column: str, row_base: int) -> tuple[list[int], list[object]]:
    """The first rows of ``column`` (file rows) with their values: what a partition-wide refusal quotes."""
    head = df.select(column).with_row_index("_i").drop_nulls(column).head(10)
    return [i + row_base for i in head["_i"].to_list()], head[column].to_list()


def _mean_floor(df: pl.DataFrame, column: str, floor: float, name: str, what: str, *, file: str, row_base: int,
                allow: bool) -> list[str]:
    """Refuse (or, with ``allow``, record ``name``) a partition whose mean of ``column`` is below ``floor``."""
    mean = df[column].mean()
    if mean is None or mean >= floor:
        return []
    if allow:
        return [name]
    rows, values = _sample(df, column, row_base)
    raise DataError(
        f"the partition's mean {what} is {mean:.4g}, below the plausible floor of {floor:g} "
        f"(gridshift.quality): a unit or scale error (e.g. divided by 1000)? If the data is right, ingest it "
        f"with {FLAG}; the override is recorded in partition_quality", file=file, column=column, rows=rows,
        values=values,
    )


def _carbon(df: pl.DataFrame, *, file: str, row_base: int, allow: bool) -> list[str]:
    direct, lca = df["carbon_direct_g_per_kwh"], df["carbon_lca_g_per_kwh"]
    below = (lca < direct).fill_null(False)
    if below.any():
        bad = df.with_row_index("_i").filter(below).head(10)
        raise DataError(
            f"{int(below.sum())} row(s) with a life-cycle intensity below the direct one (life-cycle = direct + "
            "upstream emissions, never less): are the direct and LCA columns swapped?", file=file,
            column="carbon_lca_g_per_kwh", rows=[i + row_base for i in bad["_i"].to_list()],
            values=[f"{a} < direct {b}" for a, b in zip(bad["carbon_lca_g_per_kwh"], bad["carbon_direct_g_per_kwh"],
                                                        strict=True)],
        )
    return [
        *_mean_floor(df, "carbon_lca_g_per_kwh", quality.MIN_MEAN_CARBON_LCA_G_PER_KWH, "mean_carbon_lca",
                     "life-cycle carbon intensity (gCO2eq/kWh)", file=file, row_base=row_base, allow=allow),
        *_mean_floor(df, "carbon_direct_g_per_kwh", quality.MIN_MEAN_CARBON_DIRECT_G_PER_KWH, "mean_carbon_direct",
                     "direct carbon intensity (gCO2eq/kWh)", file=file, row_base=row_base, allow=allow),
    ]


def _weather(df: pl.DataFrame, *, file: str, row_base: int) -> list[str]:
    top = df["rh_pct"].max()
    if top is not None and top < quality.MIN_MAX_RH_PCT:
        rows, values = _sample(df, "rh_pct", row_base)
        raise DataError(f"relative humidity never exceeds {top:g} % in the partition (every real year reaches "
                        f"{quality.MIN_MAX_RH_PCT:g} % and more): a fraction (0..1) where percent is expected?",
                        file=file, column="rh_pct", rows=rows, values=values)
    mean = df["temp_c"].mean()
    if mean is not None and mean > quality.MAX_MEAN_TEMP_C:
        rows, values = _sample(df, "temp_c", row_base)
        raise DataError(f"the partition's mean temperature is {mean:.1f} °C, above the hottest annual mean on "
                        f"record ({quality.MAX_MEAN_TEMP_C:g} °C): °F stored as °C?", file=file, column="temp_c",
                        rows=rows, values=values)
    return []


def check(kind: str, df: pl.DataFrame, *, file: str, row_base: int = 2, allow_implausible: bool = False
          ) -> list[str]:
    """Refuse an implausible ``kind`` partition (carbon, price, weather) by name; return the overridable
    checks it passed only because ``allow_implausible`` was given (empty when none)."""
    if kind == "carbon":
        return _carbon(df, file=file, row_base=row_base, allow=allow_implausible)
    if kind == "price":
        return _mean_floor(df, "price_usd_per_mwh", quality.MIN_MEAN_PRICE_USD_PER_MWH, "mean_price",
                           "day-ahead price (USD/MWh)", file=file, row_base=row_base, allow=allow_implausible)
    if kind == "weather":
        return _weather(df, file=file, row_base=row_base)
    raise ValueError(f"no plausibility checks for signal kind {kind!r}")
