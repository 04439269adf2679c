"""check_time_grid at its boundaries: a gap of exactly the fill limit passes, one step more fails; the
rows and timestamps each refusal names (hand-computed on small series)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import polars as pl
import pytest

from gridshift.errors import DataError
from pipelines.core.tabular import check_time_grid

H = timedelta(hours=1)
T0 = datetime(2023, 1, 1, tzinfo=UTC)


def series(hours: list[float], start: datetime = T0) -> pl.Series:
    return pl.Series("ts", [start + timedelta(hours=h) for h in hours], dtype=pl.Datetime("us", "UTC"))


def check(ts: pl.Series, rows: pl.Series | None = None, *, step: timedelta = H, max_gap: timedelta = 3 * H) -> None:
    check_time_grid(ts, "f.csv", "ts_utc", step=step, max_gap=max_gap, rows=rows)


def test_regular_grid_and_empty_series_pass():
    check(series([0, 1, 2, 3]))
    check(series([]))
    # a constant offset (India's half-hourly prices at :30) is a grid too
    check(series([0.5, 1.5, 2.5]))


def test_gap_of_exactly_the_limit_passes_one_step_more_fails():
    check(series([0, 4]))  # 01, 02, 03 missing: 3 h, the limit
    with pytest.raises(DataError) as e:
        check(series([0, 1, 6, 7]))  # 02..05 missing: 4 h
    err = e.value
    assert err.rows == [4] and err.values == [str(T0 + 6 * H)]
    assert "1 gap(s) longer than the fill limit of 3:00:00" in str(err)
    assert f"missing from {T0 + 2 * H} to {T0 + 5 * H} (4:00:00)" in str(err)


def test_gap_counts_and_names_the_first_with_explicit_rows():
    with pytest.raises(DataError) as e:
        check(series([0, 5, 6, 20]), rows=pl.Series([7, 8, 9, 10]))
    assert e.value.rows == [8] and "2 gap(s)" in str(e.value)
    assert f"missing from {T0 + H} to {T0 + 4 * H}" in str(e.value)


def test_gap_limit_on_a_15_minute_grid():
    q = timedelta(minutes=15)
    check(series([0, 0.25, 1.25]), step=q, max_gap=45 * timedelta(minutes=1))  # 3 quarters missing
    with pytest.raises(DataError, match="missing from"):
        check(series([0, 0.25, 1.5]), step=q, max_gap=45 * timedelta(minutes=1))


def test_duplicates_named_by_their_rows():
    with pytest.raises(DataError, match="duplicated timestamp") as e:
        check(series([0, 1, 1, 2]))
    assert e.value.rows == [3, 4]  # CSV lines of positions 1 and 2 (a header line, 1-based)
    assert e.value.values == [str(T0 + H)] * 2
    with pytest.raises(DataError) as e:
        check(series([0, 0]), rows=pl.Series([11, 12]))
    assert e.value.rows == [11, 12]


def test_off_grid_rows_named_against_the_first_timestamp():
    # unsorted input: sorted first, so the grid is anchored at the earliest timestamp
    with pytest.raises(DataError, match=r"off the 1:00:00 grid") as e:
        check(series([2, 0, 1.5, 3]))
    assert e.value.rows == [4] and e.value.values == [str(T0 + 1.5 * H)]
    with pytest.raises(DataError) as e:
        check(series([0.25, 1, 2]))  # the odd one is first: the others are off its grid
    assert e.value.rows == [3, 4]
    # a second off by one microsecond is off the grid
    with pytest.raises(DataError):
        check(pl.Series([T0, T0 + H + timedelta(microseconds=1)], dtype=pl.Datetime("us", "UTC")))
