"""Put source series on the bundle's 15-minute UTC grid: interpolate, hold, average; fill gaps and flag.

Pure polars and vectorized (two ``join_asof`` per series, no Python loop over rows).

Rules (also written into every manifest's ``resampling`` object, see :data:`RULES`):

* **continuous** signals (carbon intensity, temperature, relative humidity, wet-bulb) are linearly
  interpolated in UTC between consecutive source points. At a source timestamp the bundle value *is*
  the source value (no arithmetic is applied there).
* **hold** signals (prices) hold each value over its whole market interval
  ``[ts, ts + resolution)``: an hourly price is the price of its four quarters; 15-minute prices are
  kept as they are.
* any source finer than 15 minutes (e.g. 5-minute) is first **averaged** into 15-minute bins
  ``[t, t + 15 min)``, then treated as a 15-minute series.
* **gaps**: missing source intervals are filled (continuous: interpolated across the gap, or the
  nearest value held at the year's edges; hold: the last value held on, or the first value held back
  at the start of the year) and every filled step is flagged. A gap longer than ``max_gap`` fails
  with :class:`GapError` naming location, signal and the missing time span.

A gap's length is the duration of the missing *source* intervals, the same measure the ingest
uses: hourly points at 10:00 and 14:00 have a 3-hour gap (11, 12, 13 missing).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

import polars as pl

from gridshift.errors import GridshiftError
from gridshift.quality import MAX_EDGE_FILL, MAX_GAP  # the fill limits, shared with ingest
from gridshift.timestep import POLARS_INTERVAL, STEP, STEP_S, STEP_US

_LINEAR = "linear interpolation in UTC between hourly source points; exact at source timestamps"
RULES: dict[str, str] = {
    "grid": f"UTC, 15-minute steps, interval start; ts_utc = start_utc + {STEP_S} s * k",
    "carbon_g_per_kwh": _LINEAR,
    "temp_c": _LINEAR,
    "rh_pct": _LINEAR,
    "wetbulb_c": _LINEAR + " (wet-bulb from temperature and humidity by Stull 2011 at the source points)",
    "price_usd_per_mwh": "held over its market interval [ts, ts + resolution) (hourly price = its four "
    "quarters; 15-minute prices kept); sources finer than 15 minutes averaged per 15-minute step",
    "carbon_is_estimated": "the source's flag at a source timestamp; between two points true if either "
    "is estimated",
    "gap_fill": "continuous: linear across an interior gap, nearest value held at the year's edges; price: "
    "last price held on (first price held back at the start of the year); every filled step is flagged",
    "gap_limit": "a gap is the duration of the missing source intervals; an interior gap longer than "
    "max_gap_hours fails the build; at the year's edges, where the neighbouring year's data is absent, the "
    "nearest value is held (flagged) up to max_edge_fill_hours, beyond which the build fails",
}


@dataclass(frozen=True)
class Gap:
    """A span of missing source intervals ``[start, end)`` that the grid needed."""

    location: str
    signal: str
    start: datetime
    end: datetime
    kind: str  # "interior", "start of year", "end of year"

    @property
    def hours(self) -> float:
        return (self.end - self.start).total_seconds() / 3600.0

    def describe(self) -> str:
        return (f"{self.signal} for {self.location}: no source data from {self.start.isoformat()} to "
                f"{self.end.isoformat()} ({self.hours:g} h, {self.kind})")


class GapError(GridshiftError):
    """A gap longer than the fill limit; the message names location, signal and time span."""

    def __init__(self, gaps: list[Gap], max_gap: timedelta) -> None:
        self.gaps = gaps
        need = max(g.hours for g in gaps)
        lines = [g.describe() for g in gaps[:10]]
        more = f"\n  ... and {len(gaps) - 10} more" if len(gaps) > 10 else ""
        super().__init__(
            f"{len(gaps)} gap(s) longer than the fill limit of {max_gap.total_seconds() / 3600:g} h:\n  "
            + "\n  ".join(lines) + more
            + f"\nIngest the missing data (e.g. the neighbouring year) or raise --max-gap-hours (interior gaps) "
            f"or --max-edge-fill-hours (year edges) to at least {need:g}."
        )


@dataclass
class Resampled:
    """A signal on the grid: ``ts_utc`` + value columns + flag columns + ``is_filled``."""

    frame: pl.DataFrame
    gaps: list[Gap]
    raw_sha256: list[str]  # raw files whose rows were used for some grid step

    @property
    def filled_count(self) -> int:
        return int(self.frame["is_filled"].sum())


def year_grid(year: int) -> pl.Series:
    """The UTC 15-minute grid of a calendar year (35,040 or 35,136 steps)."""
    lo = datetime(year, 1, 1, tzinfo=UTC)
    hi = datetime(year + 1, 1, 1, tzinfo=UTC)
    return pl.datetime_range(lo, hi - STEP, interval=POLARS_INTERVAL, time_unit="us", time_zone="UTC", eager=True,
                             closed="both").alias("ts_utc")


def _us(col: str) -> pl.Expr:
    return pl.col(col).dt.epoch("us")


def average_fine(src: pl.DataFrame, value_cols: list[str], flag_cols: list[str], res_s: pl.Expr
                 ) -> pl.DataFrame:
    """Average rows finer than 15 minutes (``res_s < 900``) into 15-minute bins ``[t, t + 15 min)``.

    Values are averaged, flags OR-ed; coarser rows pass through unchanged.
    """
    src = src.with_columns(_fine=res_s < STEP_S)
    fine = src.filter(pl.col("_fine"))
    src = src.drop("_fine")
    if fine.height == 0:
        return src
    agg = [*[pl.col(c).mean() for c in value_cols], *[pl.col(c).any() for c in flag_cols],
           pl.col("raw_sha256").min()]
    if "resolution_s" in src.columns:
        agg.append(pl.lit(STEP_S, dtype=src.schema["resolution_s"]).alias("resolution_s"))
    binned = (fine.drop("_fine").with_columns(ts_utc=pl.col("ts_utc").dt.truncate(POLARS_INTERVAL))
              .group_by("ts_utc").agg(agg).select(src.columns))
    coarse = src.join(fine.select("ts_utc"), on="ts_utc", how="anti")
    return (pl.concat([coarse, binned], how="vertical_relaxed").sort("ts_utc", maintain_order=True)
            .unique("ts_utc", keep="last", maintain_order=True))


def _nominal_step_us(ts_us: pl.Series) -> int:
    d = ts_us.diff().drop_nulls()
    d = d.filter(d > 0)
    if d.len() == 0:
        return 3_600_000_000
    return int(d.mode().sort()[0])


def _join(grid: pl.DataFrame, src: pl.DataFrame) -> pl.DataFrame:
    """For each grid step: the previous (``_p``) and next (``_n``) source row (``<=`` / ``>=``)."""
    s = src.with_columns(_t=_us("ts_utc"))
    cols = [c for c in s.columns if c != "ts_utc"]
    back = grid.join_asof(s.rename({c: f"{c}_p" for c in cols}), on="ts_utc", strategy="backward")
    fwd = grid.join_asof(s.rename({c: f"{c}_n" for c in cols}), on="ts_utc", strategy="forward")
    return pl.concat([back, fwd.drop("ts_utc")], how="horizontal").with_columns(_g=_us("ts_utc"))


def _used_sha(j: pl.DataFrame) -> list[str]:
    return sorted(set(j["raw_sha256_p"].drop_nulls().unique()) | set(j["raw_sha256_n"].drop_nulls().unique()))


def _to_dt(us: int) -> datetime:
    return datetime(1970, 1, 1, tzinfo=UTC) + timedelta(microseconds=int(us))


def _interior_gaps(ts_us: pl.Series, res_us: pl.Series, lo_us: int, last_us: int, *, hold: bool
                   ) -> list[tuple[int, int]]:
    """Spans ``[ts_i + res_i, ts_{i+1})`` where the next point comes late, overlapping the grid's need."""
    f = pl.DataFrame({"t": ts_us, "r": res_us}).with_columns(nxt=pl.col("t").shift(-1))
    late = pl.col("nxt") - pl.col("t") > pl.col("r")
    # hold: steps [t + r, nxt) are filled; continuous: steps strictly between t and nxt
    needed = (pl.col("t") + pl.col("r") <= last_us) if hold else (pl.col("t") < last_us)
    f = f.filter(late & (pl.col("nxt") > lo_us) & needed)
    return [(int(a + r), int(b)) for a, r, b in f.select("t", "r", "nxt").iter_rows()]


def resample_continuous(
    src: pl.DataFrame, grid: pl.Series, *, location: str, signal: str, value_cols: list[str],
    flag_cols: tuple[str, ...] = (), max_gap: timedelta = MAX_GAP,
    max_edge_fill: timedelta = MAX_EDGE_FILL,
) -> Resampled:
    """Interpolate ``value_cols`` linearly in UTC onto ``grid``.

    ``src`` has ``ts_utc``, the value columns (no nulls), ``raw_sha256`` and optional boolean
    ``flag_cols`` (combined with OR between two points). Returns values, flags, ``is_filled``.
    """
    src = src.select("ts_utc", *value_cols, *flag_cols, "raw_sha256").sort("ts_utc")
    _require_rows(src, location, signal, grid)
    t = _us("ts_utc")
    spacing = pl.min_horizontal(t.diff().fill_null(t.diff(-1).abs()), t.diff(-1).abs().fill_null(t.diff()))
    src = average_fine(src, value_cols, list(flag_cols), (spacing.fill_null(3_600_000_000) // 1_000_000))
    step_us = max(_nominal_step_us(_us_series(src)), STEP_US)
    g = grid.to_frame()
    j = _join(g, src)
    exact = pl.col("_t_p") == pl.col("_g")
    span = pl.col("_t_n") - pl.col("_t_p")
    w = (pl.col("_g") - pl.col("_t_p")).cast(pl.Float64) / span.cast(pl.Float64)
    vals = []
    for c in value_cols:
        p, n = pl.col(f"{c}_p"), pl.col(f"{c}_n")
        vals.append(
            pl.when(exact).then(p)
            .when(p.is_null()).then(n)
            .when(n.is_null()).then(p)
            .otherwise(p + (n - p) * w)
            .alias(c)
        )
    flags = []
    for c in flag_cols:
        p, n = pl.col(f"{c}_p"), pl.col(f"{c}_n")
        flags.append(pl.when(exact).then(p).otherwise(p.fill_null(False) | n.fill_null(False)).alias(c))
    edge = pl.col("_t_p").is_null() | pl.col("_t_n").is_null()
    filled = (~exact.fill_null(False)) & (edge | (span > step_us))
    out = j.select("ts_utc", *vals, *flags, filled.alias("is_filled"))

    # gaps: interior (missing points between two present ones), then the year's edges
    ts = _us_series(src)
    lo, last_step = int(j["_g"][0]), int(j["_g"][-1])
    spans = _interior_gaps(ts, pl.Series([step_us] * ts.len(), dtype=pl.Int64), lo, last_step, hold=False)
    gaps = [Gap(location, signal, _to_dt(a), _to_dt(b), "interior") for a, b in spans]
    first, last = int(ts[0]), int(ts[-1])
    if first > lo:
        need = lo - ((lo - first) % step_us)
        gaps.append(Gap(location, signal, _to_dt(need), _to_dt(first), "start of year"))
    if last < last_step:
        k = -(-(last_step - last) // step_us)
        gaps.append(Gap(location, signal, _to_dt(last + step_us), _to_dt(last + (k + 1) * step_us),
                        "end of year"))
    return _finish(out, gaps, _used_sha(j), max_gap, max_edge_fill)


def resample_hold(
    src: pl.DataFrame, grid: pl.Series, *, location: str, signal: str, value_cols: list[str],
    max_gap: timedelta = MAX_GAP, max_edge_fill: timedelta = MAX_EDGE_FILL,
) -> Resampled:
    """Hold each value over its interval ``[ts, ts + resolution_s)`` onto ``grid``.

    ``src`` has ``ts_utc``, ``resolution_s`` (per row: mixed resolutions are allowed), the value
    columns and ``raw_sha256``.
    """
    src = src.select("ts_utc", "resolution_s", *value_cols, "raw_sha256").sort("ts_utc")
    _require_rows(src, location, signal, grid)
    src = average_fine(src, value_cols, [], pl.col("resolution_s"))
    src = src.with_columns(_r=pl.col("resolution_s").cast(pl.Int64) * 1_000_000)
    g = grid.to_frame()
    j = _join(g, src)
    inside = pl.col("_t_p").is_not_null() & (pl.col("_g") < pl.col("_t_p") + pl.col("_r_p"))
    vals = [pl.coalesce(pl.col(f"{c}_p"), pl.col(f"{c}_n")).alias(c) for c in value_cols]
    out = j.select("ts_utc", *vals, (~inside).alias("is_filled"))
    ts, res = _us_series(src), src["_r"]
    lo, last_step = int(j["_g"][0]), int(j["_g"][-1])
    gaps = [Gap(location, signal, _to_dt(a), _to_dt(b), "interior")
            for a, b in _interior_gaps(ts, res, lo, last_step, hold=True)]
    first, last, r_first, r_last = int(ts[0]), int(ts[-1]), int(res[0]), int(res[-1])
    if first > lo:
        need = lo - ((lo - first) % r_first)
        gaps.append(Gap(location, signal, _to_dt(need), _to_dt(first), "start of year"))
    if last + r_last <= last_step:
        k = (last_step - last) // r_last
        gaps.append(Gap(location, signal, _to_dt(last + r_last), _to_dt(last + (k + 1) * r_last),
                        "end of year"))
    # rows were used where they are the previous (held) value, or the next one at the head
    used = set(j.filter(pl.col("raw_sha256_p").is_not_null())["raw_sha256_p"].unique())
    used |= set(j.filter(pl.col("raw_sha256_p").is_null())["raw_sha256_n"].drop_nulls().unique())
    return _finish(out, gaps, sorted(used), max_gap, max_edge_fill)


def _us_series(src: pl.DataFrame) -> pl.Series:
    return src["ts_utc"].dt.epoch("us")


def _require_rows(src: pl.DataFrame, location: str, signal: str, grid: pl.Series) -> None:
    if src.height == 0:
        lo, hi = grid[0], grid[-1] + STEP
        raise GridshiftError(f"{signal} for {location}: no source data at all between {lo.isoformat()} and "
                             f"{hi.isoformat()} (ingest it first)")


def _finish(out: pl.DataFrame, gaps: list[Gap], used: list[str], max_gap: timedelta,
            max_edge_fill: timedelta = MAX_EDGE_FILL) -> Resampled:
    gaps = sorted((g for g in gaps if g.end > g.start), key=lambda g: g.start)
    too_long = [g for g in gaps if g.end - g.start > (max_gap if g.kind == "interior" else max_edge_fill)]
    if too_long:
        raise GapError(too_long, max_gap)
    return Resampled(out, gaps, used)
