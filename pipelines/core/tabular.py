"""Strict parsing helpers: every failure names the file, the column, the rows and the values."""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Sequence
from datetime import timedelta

import polars as pl

from gridshift.errors import DataError, excerpt

HEADER_LINES = 1  # data row i (0-based) is line i + 2 of a CSV with one header line


def _header(content: bytes, file: str, *, first_line: int = 1) -> list[str]:
    """The header line's column names (csv quoting rules); a name given twice is refused, because a
    reader would silently keep one of the two columns."""
    first = content.lstrip(b"\xef\xbb\xbf").split(b"\n", 1)[0].rstrip(b"\r")
    try:
        names = next(csv.reader([first.decode("utf-8")]), [])
    except (UnicodeDecodeError, csv.Error) as exc:
        raise DataError(f"cannot read the CSV header: {exc}", file=file, rows=[first_line]) from None
    seen: dict[str, int] = {}
    for pos, name in enumerate(names, 1):
        if name.strip() in seen:
            raise DataError(
                f"column {name.strip()!r} appears twice in the header (fields {seen[name.strip()]} and {pos})",
                file=file, column=name.strip(), rows=[first_line], values=[first.decode("utf-8", "replace")[:200]],
            )
        seen[name.strip()] = pos
    return names


def first_data_line(content: bytes, comment_prefix: str | None = None) -> int:
    """The file line (1-based) of a CSV's first data row: after the leading comment block, if the file
    has one (lines starting with ``comment_prefix``), and the header line."""
    return _leading_comments(content, comment_prefix)[0] + HEADER_LINES + 1


def _leading_comments(content: bytes, comment_prefix: str | None) -> tuple[int, bytes]:
    """(number of leading lines starting with ``comment_prefix``, the content after them), found in one
    pass over those lines only (the rest of the file is not split). Without such lines the content is
    returned as given; with them, leading BOM bytes go too. An unterminated last line stays in the content
    even if it is a comment (the file then has no header line; the header check reports it)."""
    if not comment_prefix:
        return 0, content
    prefix = comment_prefix.encode()
    body = content.lstrip(b"\xef\xbb\xbf")
    n = pos = 0
    while body.startswith(prefix, pos):
        n += 1
        nl = body.find(b"\n", pos)
        if nl < 0:
            break
        pos = nl + 1
    return n, (body[pos:] if n else content)


def read_csv_strings(content: bytes, file: str, required: list[str], *, comment_prefix: str | None = None,
                     exact: bool = False) -> pl.DataFrame:
    """Read a CSV with every column as text, checking that the header names each column once and
    that the required columns are present (``exact``: that they are the columns, in that order).

    ``comment_prefix``: the file may open with a block of comment lines (a repository table's notes and
    sources); only that leading block is skipped, so a comment-like line among the data is still read
    as data and refused by the caller's checks. Its rows' file lines: :func:`first_data_line`."""
    skip, content = _leading_comments(content, comment_prefix)
    _header(content, file, first_line=skip + 1)
    try:
        df = pl.read_csv(io.BytesIO(content), infer_schema=False, encoding="utf8")
    except Exception as exc:  # polars raises several types for malformed CSV
        raise DataError(f"cannot parse CSV: {exc}", file=file) from None
    missing = [c for c in required if c not in df.columns]
    if missing:
        raise DataError(
            f"missing or renamed column(s) {missing}; found {excerpt(df.columns, 200)}", file=file, column=missing[0]
        )
    if exact and df.columns != list(required):
        raise DataError(f"columns {df.columns} are not {list(required)}", file=file, rows=[skip + 1])
    return df


def bad_rows(df: pl.DataFrame, mask: pl.Series, message: str, *, file: str, column: str,
             first_line: int = HEADER_LINES + 1) -> DataError:
    """The DataError for the rows of a CSV frame where ``mask`` holds: their file lines (data row 0 is
    line ``first_line``, see :func:`first_data_line`) and ``column``'s values."""
    bad = df.with_row_index("_i").filter(mask)
    return DataError(
        message, file=file, column=column, rows=[i + first_line for i in bad["_i"].head(10).to_list()],
        values=bad[column].head(10).to_list(),
    )


def _fail_on_nulls(df: pl.DataFrame, parsed: pl.Series, raw_col: str, file: str, what: str,
                   first_line: int = HEADER_LINES + 1) -> None:
    mask = parsed.is_null() & df[raw_col].is_not_null() & (df[raw_col] != "")
    if mask.any():
        raise bad_rows(df, mask, f"{mask.sum()} value(s) are not {what}", file=file, column=raw_col,
                       first_line=first_line)


def to_float(df: pl.DataFrame, col: str, file: str, *, required: bool = False,
             first_line: int = HEADER_LINES + 1) -> pl.Series:
    """Cast a text column to Float64; non-numeric text is an error, empty is null (or an error if required)."""
    s = df[col].str.strip_chars().cast(pl.Float64, strict=False)
    _fail_on_nulls(df, s, col, file, "numeric", first_line)
    if required and s.null_count():
        raise bad_rows(df, s.is_null(), f"{s.null_count()} required value(s) are empty", file=file, column=col,
                       first_line=first_line)
    return s


def to_utc(df: pl.DataFrame, col: str, file: str, fmt: str, *, naive_is_utc: bool = True) -> pl.Series:
    """Parse a timestamp column to Datetime(us, UTC); unparseable values are an error."""
    s = df[col].str.strip_chars().str.to_datetime(fmt, strict=False, time_unit="us")
    _fail_on_nulls(df, s, col, file, f"timestamps in format {fmt!r}")
    if s.null_count():
        empty = df.with_row_index("_i").filter(s.is_null())
        raise DataError("empty timestamp(s)", file=file, column=col, rows=[i + 2 for i in empty["_i"].head(10)])
    if s.dtype.time_zone is None:
        if not naive_is_utc:
            raise DataError("timestamps carry no offset", file=file, column=col)
        s = s.dt.replace_time_zone("UTC")
    return s.dt.convert_time_zone("UTC")


def check_time_grid(ts: pl.Series, file: str, column: str, *, step: timedelta, max_gap: timedelta,
                    rows: pl.Series | None = None) -> None:
    """Refuse duplicated timestamps, timestamps off the series' regular grid, and gaps beyond ``max_gap``.

    The grid may carry a constant offset (e.g. India's half-hourly ``00:30`` prices). Errors name each
    timestamp's row in the file: ``rows`` (e.g. JSON array positions, kept through a filter), by default
    the CSV line of position i (i + 2).
    """
    frame = pl.DataFrame({"ts": ts, "_i": rows if rows is not None else pl.int_range(2, ts.len() + 2, eager=True)})
    dup = frame.filter(pl.col("ts").is_duplicated())
    if dup.height:
        raise DataError(
            "duplicated timestamp(s)",
            file=file,
            column=column,
            rows=dup["_i"].head(10).to_list(),
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
            rows=bad["_i"].head(10).to_list(),
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
            rows=[first["_i"]],
            values=[str(first["ts"])],
        )


# --------------------------------------------------------------------------- JSON


def _no_duplicate_keys(file: str):
    def hook(pairs: list[tuple[str, object]]) -> dict:
        out: dict = {}
        for key, value in pairs:
            if key in out:
                raise DataError(f"JSON key {key!r} appears twice in one object (a reader would keep the last)",
                                file=file, column=key, values=[out[key], value])
            out[key] = value
        return out

    return hook


def _no_constant(file: str):
    def hook(name: str):
        raise DataError(f"{name} is not a JSON number", file=file, values=[name])

    return hook


def strict_json(content: bytes, file: str):
    """Parse JSON strictly: a truncated or non-JSON body, a key repeated in one object, or
    ``NaN``/``Infinity`` (not JSON) is a DataError naming the file."""
    try:
        return json.loads(content, object_pairs_hook=_no_duplicate_keys(file), parse_constant=_no_constant(file))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise DataError(f"invalid or truncated JSON: {exc}", file=file) from None


def json_numbers(values: Sequence, file: str, column: str) -> pl.Series:
    """A JSON array of numbers (or nulls) as Float64. Anything else — text, ``true``/``false``
    (polars would read them as 1.0/0.0), objects — is a DataError naming the array positions."""
    try:
        num = pl.Series(values, dtype=pl.Float64, strict=True)
        # booleans are the one thing the strict cast admits; the text form that names them is made only
        # when there are some (a set of the entries' types: no per-value work in Python)
        text = pl.Series(values, dtype=pl.String, strict=False) if bool in set(map(type, values)) else None
        bad = text.is_in(["true", "false"]) if text is not None else None
    except (TypeError, ValueError, pl.exceptions.PolarsError):
        # error path only: locate the offending entries for the message
        pos = [i for i, v in enumerate(values)
               if v is not None and (isinstance(v, bool) or not isinstance(v, int | float))]
        raise DataError("value(s) are not numbers", file=file, column=column, rows=pos,
                        values=[values[i] for i in pos]) from None
    if bad is not None and bad.any():
        pos = bad.arg_true()
        raise DataError(f"{pos.len()} boolean value(s) where numbers are expected", file=file, column=column,
                        rows=pos.head(10).to_list(), values=text.gather(pos.head(10)).to_list())
    return num
