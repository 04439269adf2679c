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

import math

import numpy as np
import polars as pl

from gridshift import quality
from gridshift.errors import DataError

#: the checks an ``allow_implausible`` ingest may pass, by the name recorded in partition_quality
OVERRIDABLE = ("mean_carbon_lca", "mean_carbon_direct", "mean_price", "scaled_rows_carbon_lca",
               "scaled_rows_carbon_direct", "scaled_rows_price", "diurnal_phase", "factor_lag")
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


def _row_ranges(flags: pl.Series, row_base: int) -> list[tuple[int, int]]:
    """The file-row ranges (first, last) of the runs of True in ``flags``."""
    idx = flags.arg_true().to_list()
    ranges: list[tuple[int, int]] = []
    for i in idx:
        if ranges and i == ranges[-1][1] + 1 - row_base:
            ranges[-1] = (ranges[-1][0], i + row_base)
        else:
            ranges.append((i + row_base, i + row_base))
    return ranges


def _scaled_rows(df: pl.DataFrame, column: str, kind: str, name: str, *, file: str, row_base: int,
                 allow: bool) -> list[str]:
    """Refuse (or, with ``allow``, record ``name``) a partition whose rows are partly off by a scale: a stretch
    whose rolling median of |value| is below :data:`gridshift.quality.MIN_ROW_LEVEL_SHARE` of the file's 90th
    percentile of |value| (e.g. half a year divided by 1000), naming the stretch's rows."""
    level = df[column].abs()
    top = level.quantile(0.9)
    if top is None or top <= 0:
        return []
    window = quality.ROW_LEVEL_WINDOW_H[kind]
    rolled = level.rolling_median(window, min_samples=window // 2, center=True)
    low = (rolled < top * quality.MIN_ROW_LEVEL_SHARE).fill_null(False)
    if not low.any():
        return []
    if allow:
        return [name]
    ranges = _row_ranges(low, row_base)
    where = ", ".join(f"rows {a:,}-{b:,}" for a, b in ranges[:5]) + (" ..." if len(ranges) > 5 else "")
    bad = df.select(column).with_row_index("_i").filter(low).head(10)
    raise DataError(
        f"{int(low.sum()):,} row(s) ({where}) sit at a level {1 / quality.MIN_ROW_LEVEL_SHARE:.0f}x or more below the "
        f"file's own (90th percentile of |{column}| {top:.4g}, rolling {window} h median): a unit or scale error in "
        f"part of the file (e.g. divided by 1000)? If the data is right, ingest it with {FLAG}; the override is "
        "recorded in partition_quality", file=file, column=column,
        rows=[i + row_base for i in bad["_i"].to_list()], values=bad[column].to_list(),
    )


def _corr(x: np.ndarray, y: np.ndarray) -> float:
    """Spearman's rank correlation over the pairs where both are finite (Pearson's of the ranks, ties averaged);
    NaN when too few (half a window) or constant. Ranks, because one outlier decides Pearson's on a flat grid:
    SG 2023 with one value edited gave lag 1 a 0.46 lead over lag 0 (a false refusal), its ranks a 0.55 lead
    to lag 0; over the mirror's 32 files lag 0 still wins every week, by at least 0.082 (DE-LU 2022)."""
    ok = np.isfinite(x) & np.isfinite(y)
    if ok.sum() < quality.FACTOR_LAG_WINDOW_H // 2:
        return math.nan
    rx, ry = (pl.Series(v[ok]).rank("average").to_numpy() for v in (x, y))
    if rx.std() == 0 or ry.std() == 0:
        return math.nan
    return float(np.corrcoef(rx, ry)[0, 1])


def _avg_ranks(a: np.ndarray) -> np.ndarray:
    """Ranks (1-based, ties averaged) along each row of a finite 2-D array: ``rank("average")`` row by row, in
    one pass over all rows."""
    n, m = a.shape
    order = np.argsort(a, axis=1, kind="stable")
    srt = np.take_along_axis(a, order, axis=1)
    new = np.ones((n, m), dtype=bool)
    new[:, 1:] = srt[:, 1:] != srt[:, :-1]
    group = np.cumsum(new.ravel()) - 1  # a run of equal values in one row is one group
    col = np.tile(np.arange(m, dtype=np.float64), n)
    first = np.minimum.reduceat(col, np.flatnonzero(new.ravel()))
    size = np.bincount(group).astype(np.float64)
    ranks = np.empty((n, m))
    np.put_along_axis(ranks, order, (first + (size - 1) / 2 + 1)[group].reshape(n, m), axis=1)
    return ranks


def _row_corrs(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """:func:`_corr` of each row pair of two 2-D arrays: rows with a non-finite value go through :func:`_corr`,
    the rest (nearly all) are ranked together (clipped to [-1, 1] as ``np.corrcoef`` does, so that two perfect
    correlations tie)."""
    out = np.full(len(x), math.nan)
    whole = np.isfinite(x).all(axis=1) & np.isfinite(y).all(axis=1)
    if whole.any() and x.shape[1] >= quality.FACTOR_LAG_WINDOW_H // 2:
        rx, ry = (r - r.mean(axis=1, keepdims=True) for r in (_avg_ranks(x[whole]), _avg_ranks(y[whole])))
        sx, sy = np.sqrt((rx * rx).sum(axis=1)), np.sqrt((ry * ry).sum(axis=1))
        with np.errstate(invalid="ignore", divide="ignore"):
            out[whole] = np.where((sx > 0) & (sy > 0), np.clip((rx * ry).sum(axis=1) / (sx * sy), -1.0, 1.0), math.nan)
    for i in np.flatnonzero(~whole):
        out[i] = _corr(x[i], y[i])
    return out


def factor_lag_weeks(df: pl.DataFrame) -> list[tuple[int, float, float, int]]:
    """Per week (:data:`gridshift.quality.FACTOR_LAG_WINDOW_H` hours, every :data:`~gridshift.quality.FACTOR_LAG_STEP_H`
    hours): ``(first row, lag-0 correlation, best lag-±1 correlation, that lag in hours)`` of the hour-to-hour
    changes of the direct and life-cycle carbon columns (rows 0-based; lag +1: the LCA matches the direct one hour
    later). Weeks without enough values on both sides are left out."""
    d = np.diff(df["carbon_direct_g_per_kwh"].cast(pl.Float64).fill_null(math.nan).to_numpy())
    lca = np.diff(df["carbon_lca_g_per_kwh"].cast(pl.Float64).fill_null(math.nan).to_numpy())
    w = quality.FACTOR_LAG_WINDOW_H
    starts = np.arange(0, len(d) - w + 1, quality.FACTOR_LAG_STEP_H)
    if len(starts) == 0:
        return []
    win = starts[:, None] + np.arange(w)
    x, y = d[win], lca[win]
    c0 = _row_corrs(x, y)
    later, earlier = _row_corrs(x[:, :-1], y[:, 1:]), _row_corrs(x[:, 1:], y[:, :-1])
    out = []
    for s, a, lt, er in zip(starts.tolist(), c0.tolist(), later.tolist(), earlier.tolist(), strict=True):
        if math.isnan(a) or (math.isnan(lt) and math.isnan(er)):
            continue
        best, lag = (lt, 1) if math.isnan(er) or lt >= er else (er, -1)
        out.append((s, a, best, lag))
    return out


def _factor_lag(df: pl.DataFrame, *, file: str, row_base: int, allow: bool) -> list[str]:
    """Refuse (or, with ``allow``, record ``factor_lag``) a partition in which the direct and life-cycle columns
    are an hour apart for a stretch: weeks whose changes correlate better at lag ±1 h than at lag 0, named by
    their rows (:data:`gridshift.quality.FACTOR_LAG_WINDOW_H`)."""
    bad = [(s, c0, c1, lag) for s, c0, c1, lag in factor_lag_weeks(df) if c1 > c0]
    if not bad:
        return []
    if allow:
        return ["factor_lag"]
    covered = np.zeros(df.height, dtype=bool)
    for s, *_ in bad:  # a week of changes spans rows s..s+w
        covered[s:s + quality.FACTOR_LAG_WINDOW_H + 1] = True
    ranges = _row_ranges(pl.Series(covered), row_base)
    where = ", ".join(f"rows {a:,}-{b:,}" for a, b in ranges[:5]) + (" ..." if len(ranges) > 5 else "")
    s, c0, c1, lag = min(bad, key=lambda b: b[1] - b[2])
    ts, (first, last) = df["ts_utc"], ranges[0]
    raise DataError(
        f"the direct and life-cycle carbon columns are an hour apart in {len(bad)} week(s) ({where}): their "
        f"hour-to-hour changes correlate better with the LCA {'one hour later' if lag > 0 else 'one hour earlier'} "
        f"(worst week from {ts[s]}: {c1:.3f} against {c0:.3f} at lag 0; in every week of the real files lag 0 "
        "wins: gridshift.quality.FACTOR_LAG_WINDOW_H). One column shifted by an hour (two exports or answers "
        f"joined on a wrong hour)? If the data is right, ingest it with {FLAG}; the override is recorded in "
        "partition_quality", file=file, column="carbon_lca_g_per_kwh", rows=[first, last],
        values=[str(ts[first - row_base]), str(ts[last - row_base])],
    )


def _carbon(df: pl.DataFrame, *, file: str, row_base: int, allow: bool) -> list[str]:
    # first: one column an hour off often also puts LCA below direct in some hours, and this names the cause
    lagged = _factor_lag(df, file=file, row_base=row_base, allow=allow)
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
        *lagged,
        *_mean_floor(df, "carbon_lca_g_per_kwh", quality.MIN_MEAN_CARBON_LCA_G_PER_KWH, "mean_carbon_lca",
                     "life-cycle carbon intensity (gCO2eq/kWh)", file=file, row_base=row_base, allow=allow),
        *_mean_floor(df, "carbon_direct_g_per_kwh", quality.MIN_MEAN_CARBON_DIRECT_G_PER_KWH, "mean_carbon_direct",
                     "direct carbon intensity (gCO2eq/kWh)", file=file, row_base=row_base, allow=allow),
        *_scaled_rows(df, "carbon_lca_g_per_kwh", "carbon", "scaled_rows_carbon_lca", file=file, row_base=row_base,
                      allow=allow),
        *_scaled_rows(df, "carbon_direct_g_per_kwh", "carbon", "scaled_rows_carbon_direct", file=file,
                      row_base=row_base, allow=allow),
    ]


def _diurnal_peak_solar_h(df: pl.DataFrame, lon_deg: float) -> float | None:
    """The local mean solar hour at which the first harmonic of temperature by time of day peaks (None when
    the partition has no temperature)."""
    t = df.select(
        ((pl.col("ts_utc").dt.hour() + pl.col("ts_utc").dt.minute() / 60 + lon_deg / 15) % 24 * (2 * math.pi / 24))
        .alias("w"), "temp_c").drop_nulls()
    if t.height == 0:
        return None
    a = (t["temp_c"] * t["w"].cos()).mean()
    b = (t["temp_c"] * t["w"].sin()).mean()
    return math.degrees(math.atan2(b, a)) / 15 % 24


def _diurnal_phase(df: pl.DataFrame, lon_deg: float, *, file: str, row_base: int, allow: bool) -> list[str]:
    peak = _diurnal_peak_solar_h(df, lon_deg)
    lo, hi = quality.DIURNAL_PEAK_SOLAR_H
    if peak is None or lo <= peak <= hi:
        return []
    if allow:
        return ["diurnal_phase"]
    rows, values = _sample(df, "ts_utc", row_base)
    raise DataError(
        f"the temperature's daily cycle peaks at {peak:.1f} h local solar time (longitude {lon_deg:g}°), outside "
        f"{lo:g}..{hi:g} h (the air peaks 2-3 h after solar noon): the time axis is shifted by about "
        f"{peak - 14.3:+.0f} h — a wrong UTC offset or time-zone field? If the data is right, ingest it with {FLAG}",
        file=file, column="ts_utc", rows=rows, values=[str(v) for v in values],
    )


def _weather(df: pl.DataFrame, *, file: str, row_base: int, lon_deg: float | None = None, allow: bool = False
             ) -> list[str]:
    top = df["rh_pct"].max()
    if top is not None and top < quality.MIN_MAX_RH_PCT:
        rows, values = _sample(df, "rh_pct", row_base)
        raise DataError(f"relative humidity never exceeds {top:g} % in the partition (every real year reaches "
                        f"{quality.MIN_MAX_RH_PCT:g} % and more): a fraction (0..1) where percent is expected?",
                        file=file, column="rh_pct", rows=rows, values=values)
    dry = (df["rh_pct"] <= 1.0).fill_null(False)
    if df.height and dry.mean() > quality.MAX_RH_AT_MOST_1PCT_SHARE:
        ranges = _row_ranges(dry, row_base)
        where = ", ".join(f"rows {a:,}-{b:,}" for a, b in ranges[:3]) + (" ..." if len(ranges) > 3 else "")
        bad = df.select("rh_pct").with_row_index("_i").filter(dry).head(10)
        raise DataError(f"{int(dry.sum()):,} of {df.height:,} rows ({where}) have a relative humidity at or below "
                        f"1 % (real air almost never; at most {quality.MAX_RH_AT_MOST_1PCT_SHARE:.0%} of a year "
                        "is accepted): a fraction (0..1) where percent is expected, in part of the file?",
                        file=file, column="rh_pct", rows=[i + row_base for i in bad["_i"].to_list()],
                        values=bad["rh_pct"].to_list())
    mean = df["temp_c"].mean()
    if mean is not None and mean > quality.MAX_MEAN_TEMP_C:
        rows, values = _sample(df, "temp_c", row_base)
        raise DataError(f"the partition's mean temperature is {mean:.1f} °C, above the hottest annual mean on "
                        f"record ({quality.MAX_MEAN_TEMP_C:g} °C): °F stored as °C?", file=file, column="temp_c",
                        rows=rows, values=values)
    return [] if lon_deg is None else _diurnal_phase(df, lon_deg, file=file, row_base=row_base, allow=allow)


def check(kind: str, df: pl.DataFrame, *, file: str, row_base: int = 2, allow_implausible: bool = False,
          lon_deg: float | None = None) -> list[str]:
    """Refuse an implausible ``kind`` partition (carbon, price, weather) by name; return the overridable
    checks it passed only because ``allow_implausible`` was given (empty when none). ``lon_deg``: the weather
    location's longitude, for the time-axis check against the solar day (none without it)."""
    if kind == "carbon":
        return _carbon(df, file=file, row_base=row_base, allow=allow_implausible)
    if kind == "price":
        return [
            *_mean_floor(df, "price_usd_per_mwh", quality.MIN_MEAN_PRICE_USD_PER_MWH, "mean_price",
                         "day-ahead price (USD/MWh)", file=file, row_base=row_base, allow=allow_implausible),
            *_scaled_rows(df, "price_usd_per_mwh", "price", "scaled_rows_price", file=file, row_base=row_base,
                          allow=allow_implausible),
        ]
    if kind == "weather":
        return _weather(df, file=file, row_base=row_base, lon_deg=lon_deg, allow=allow_implausible)
    raise ValueError(f"no plausibility checks for signal kind {kind!r}")
