"""Strict parsing helpers: every failure names the file, the column, the rows and the values."""

from __future__ import annotations

import io
from datetime import timedelta

import polars as pl

from gridshift.errors import DataError

HEADER_LINES = 1
# The fill limit: the longest run of missing source time that is filled (and flagged) rather than
# refused. Ingest refuses files with longer gaps; bundles fill up to it. One value for every step.
DEFAULT_MAX_GAP = timedelta(hours=3)  # data row i (0-based) is line i + 2 of a CSV with one header line


def read_csv_strings(content: bytes, file: str, required: list[str]) -> pl.DataFrame:
    """Read a CSV with every column as text, checking that the required columns are present."""
    try:
        df = pl.read_csv(io.BytesIO(content), infer_schema=False, encoding="utf8")
    except Exception as exc:  # polars raises several types for malformed CSV
        raise DataError(f"cannot parse CSV: {exc}", file=file) from exc
    missing = [c for c in required if c not in df.columns]
    if missing:
        raise DataError(
            f"missing or renamed column(s) {missing}; found {df.columns}", file=file, column=missing[0]
        )
    return df


def _fail_on_nulls(df: pl.DataFrame, parsed: pl.Series, raw_col: str, file: str, what: str) -> None:
    bad = df.with_row_index("_i").filter(parsed.is_null() & pl.col(raw_col).is_not_null() & (pl.col(raw_col) != ""))
    if bad.height:
        raise DataError(
            f"{bad.height} value(s) are not {what}",
            file=file,
            column=raw_col,
            rows=[i + HEADER_LINES + 1 for i in bad["_i"].head(10).to_list()],
            values=bad[raw_col].head(10).to_list(),
        )


def to_float(df: pl.DataFrame, col: str, file: str, *, required: bool = False) -> pl.Series:
    """Cast a text column to Float64; non-numeric text is an error, empty is null (or an error if required)."""
    s = df[col].str.strip_chars().cast(pl.Float64, strict=False)
    _fail_on_nulls(df, s, col, file, "numeric")
    if required:
        missing = df.with_row_index("_i").filter(s.is_null())
        if missing.height:
            raise DataError(
                f"{missing.height} required value(s) are empty",
                file=file,
                column=col,
                rows=[i + HEADER_LINES + 1 for i in missing["_i"].head(10).to_list()],
                values=missing[col].head(10).to_list(),
            )
    return s


def to_utc(df: pl.DataFrame, col: str, file: str, fmt: str, *, naive_is_utc: bool = True) -> pl.Series:
    """Parse a timestamp column to Datetime(us, UTC); unparseable values are an error."""
    s = df[col].str.strip_chars().str.to_datetime(fmt, strict=False, time_unit="us")
    _fail_on_nulls(df, s, col, file, f"timestamps in format {fmt!r}")
    empty = df.with_row_index("_i").filter(s.is_null())
    if empty.height:
        raise DataError("empty timestamp(s)", file=file, column=col, rows=[i + 2 for i in empty["_i"].head(10)])
    if s.dtype.time_zone is None:
        if not naive_is_utc:
            raise DataError("timestamps carry no offset", file=file, column=col)
        s = s.dt.replace_time_zone("UTC")
    return s.dt.convert_time_zone("UTC")


def check_time_grid(ts: pl.Series, file: str, column: str, *, step: timedelta, max_gap: timedelta) -> None:
    """Refuse duplicated timestamps, timestamps off the series' regular grid, and gaps beyond ``max_gap``.

    The grid may carry a constant offset (e.g. India's half-hourly ``00:30`` prices).
    """
    frame = pl.DataFrame({"ts": ts}).with_row_index("_i")
    dup = frame.filter(pl.col("ts").is_duplicated())
    if dup.height:
        raise DataError(
            "duplicated timestamp(s)",
            file=file,
            column=column,
            rows=[i + 2 for i in dup["_i"].head(10).to_list()],
            values=[str(v) for v in dup["ts"].head(10).to_list()],
        )
    srt = frame.sort("ts")
    step_us = int(step.total_seconds() * 1_000_000)
    epoch_us = srt["ts"].dt.epoch("us")
    off = epoch_us % step_us
    bad = srt.filter(off != off[0]) if srt.height else srt
    if bad.height:
        raise DataError(
            f"timestamp(s) off the {step} grid",
            file=file,
            column=column,
            rows=[i + 2 for i in bad["_i"].head(10).to_list()],
            values=[str(v) for v in bad["ts"].head(10).to_list()],
        )
    gaps = srt.with_columns(gap=pl.col("ts").diff()).filter(pl.col("gap") > max_gap + step)
    if gaps.height:
        first = gaps.row(0, named=True)
        start = first["ts"] - first["gap"] + step
        raise DataError(
            f"{gaps.height} gap(s) longer than the fill limit of {max_gap}; first: missing from {start} "
            f"to {first['ts'] - step} ({first['gap'] - step})",
            file=file,
            column=column,
            rows=[first["_i"] + 2],
            values=[str(first["ts"])],
        )
