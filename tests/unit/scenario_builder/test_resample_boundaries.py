"""The resampling rules at their interval boundaries (hand-computed): the year's grid, fine sources averaged into
``[t, t + 15 min)`` bins (15-minute sources are not), a gap that starts at the grid's last step or ends at its
first, the edges of the year, flags between points, the raw files used, and the gap error's listing."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import polars as pl
import pytest

from gridshift.errors import GridshiftError
from scenario_builder.resample import (
    Gap,
    GapError,
    _nominal_step_us,
    resample_continuous,
    resample_hold,
    year_grid,
)

T0 = datetime(2023, 1, 1, tzinfo=UTC)
H, Q = timedelta(hours=1), timedelta(minutes=15)
US = pl.Datetime("us", "UTC")


def src(points: list[tuple[timedelta, float]], *, sha: str | list[str] = "0" * 64, res_s: int | None = None,
        flags: list[bool] | None = None) -> pl.DataFrame:
    n = len(points)
    cols = {"ts_utc": pl.Series([T0 + dt for dt, _ in points], dtype=US),
            "v": pl.Series([v for _, v in points], dtype=pl.Float64),
            "raw_sha256": sha if isinstance(sha, list) else [sha] * n}
    if flags is not None:
        cols["est"] = flags
    df = pl.DataFrame(cols)
    return df.with_columns(resolution_s=pl.lit(res_s, dtype=pl.Int64)) if res_s is not None else df


def day(hours: float = 24) -> pl.Series:
    return year_grid(2023).head(int(hours * 4))


def cont(s: pl.DataFrame, g: pl.Series, **kw):
    return resample_continuous(s, g, location="X", signal="s", value_cols=["v"], **kw)


def hold(s: pl.DataFrame, g: pl.Series, **kw):
    return resample_hold(s, g, location="X", signal="p", value_cols=["v"], **kw)


def spans(r) -> list[tuple[datetime, datetime, str]]:
    return [(g.start, g.end, g.kind) for g in r.gaps]


def test_year_grid_spans_the_calendar_year_exactly():
    g = year_grid(2023)
    assert g.len() == 35_040 and g[0] == T0 and g[-1] == datetime(2023, 12, 31, 23, 45, tzinfo=UTC)
    assert year_grid(2024).len() == 35_136  # leap year
    assert str(g.dtype) == "Datetime(time_unit='us', time_zone='UTC')"


def test_gap_error_lists_ten_gaps_and_counts_the_rest():
    def err(n: int) -> str:
        gaps = [Gap("X", "s", T0 + i * 10 * H, T0 + (i * 10 + 4 + (i == 3)) * H, "interior") for i in range(n)]
        return str(GapError(gaps, timedelta(hours=3)))

    assert "and" not in err(10).split("\n")[-2] and err(10).count("X: no source data") == 10
    assert "... and 2 more" in err(12) and err(12).count("X: no source data") == 10
    assert "... and 1 more" in err(11)
    assert "to at least 5." in err(12) and "fill limit of 3 h" in err(12)


def test_nominal_step_ignores_repeated_timestamps_and_defaults_to_an_hour():
    us = pl.Series([0, 0, 0, 0, 900_000_000, 1_800_000_000], dtype=pl.Int64)
    assert _nominal_step_us(us) == 900_000_000
    assert _nominal_step_us(pl.Series([5], dtype=pl.Int64)) == 3_600_000_000
    assert _nominal_step_us(pl.Series([0, 1_800_000_000], dtype=pl.Int64)) == 1_800_000_000


def test_fifteen_minute_source_off_the_grid_is_interpolated_not_binned():
    # points at :05, :20, :35, ...: spacing exactly 900 s is not "finer than 15 minutes"
    r = cont(src([(timedelta(minutes=5 + 15 * i), float(i)) for i in range(12)]), day(2))
    assert r.frame["v"][1] == pytest.approx(2 / 3)  # 00:15 lies 10 of 15 minutes from 00:05 to 00:20
    assert r.frame["v"][0] == 0.0 and r.frame["is_filled"][0]  # head: held back, flagged


def test_fine_sources_average_from_their_first_point():
    five = cont(src([(timedelta(minutes=5 * i), float(i)) for i in range(24)]), day(2))
    assert five.frame["v"][0] == 1.0 and five.frame["v"][1] == 4.0  # mean of 0, 1, 2 and of 3, 4, 5
    ten = cont(src([(timedelta(minutes=10 * i), float(i)) for i in range(12)]), day(2))
    assert ten.frame["v"][0] == 0.5  # 00:00 and 00:10 share the first bin
    assert ten.frame["v"][1] == 2.0  # 00:20 alone in [00:15, 00:30)


def test_one_fine_row_is_binned_too():
    rows = src([(10 * H + timedelta(minutes=5), 7.0), (11 * H, 8.0)], sha=["a" * 64, "b" * 64])
    rows = rows.with_columns(resolution_s=pl.Series([300, 3600], dtype=pl.Int64))
    r = hold(rows, day())
    assert r.frame["v"][40] == 7.0 and not r.frame["is_filled"][40]  # 10:00, the 5-minute row's bin
    assert r.frame["is_filled"][41]  # 10:15: the binned row lasts 15 minutes, the next starts at 11:00


def test_continuous_gap_from_the_grids_last_step_is_not_interior():
    g = day(24).head(93)  # last step 23:00
    pts = [(i * H, float(i)) for i in range(24)] + [(27 * H, 27.0)]  # 23:00 then 03:00 next day
    r = cont(src(pts), g)
    assert [k for *_, k in spans(r)] == []
    pts = [(i * H, float(i)) for i in range(23)] + [(27 * H, 27.0)]  # 22:00 then 03:00: 23:00 missing
    with pytest.raises(GapError, match="2023-01-01T23:00:00"):
        cont(src(pts), g)
    # on the full day (last step 23:45) the steps after 23:00 interpolate towards 04:00: the 4 h gap is needed
    pts = [(i * H, float(i)) for i in range(24)] + [(28 * H, 28.0)]
    with pytest.raises(GapError, match="from 2023-01-02T00:00:00"):
        cont(src(pts), day())


def test_hold_gap_starting_at_the_grids_last_step_is_interior():
    g = day(24)  # last step 23:45
    pts = [(i * Q, 1.0) for i in range(95)] + [(24 * H + 30 * timedelta(minutes=1), 2.0)]  # ends 23:30 (+15 min)
    r = hold(src(pts, res_s=900), g)
    assert spans(r) == [(T0 + 23 * H + 45 * timedelta(minutes=1), T0 + 24 * H + 30 * timedelta(minutes=1),
                         "interior")]
    pts = [(i * Q, 1.0) for i in range(96)] + [(25 * H, 2.0)]  # the last value covers 23:45 itself
    assert spans(hold(src(pts, res_s=900), g)) == []


def test_a_gap_that_ends_at_the_grids_first_step_is_outside_it():
    pts = [(-10 * H, 0.0)] + [(i * H, float(i)) for i in range(26)]
    assert spans(cont(src(pts), day())) == []
    assert spans(hold(src(pts, res_s=3600), day())) == []


def test_year_edges_named_exactly():
    pts = [(2 * H, 2.0), (3 * H, 3.0), (4 * H, 4.0)]
    r = cont(src(pts), day(6))  # grid 00:00..05:45
    assert spans(r) == [(T0, T0 + 2 * H, "start of year"), (T0 + 5 * H, T0 + 7 * H, "end of year")]
    f = r.frame["is_filled"].to_list()
    assert f[:8] == [True] * 8 and f[8] is False and f[16] is False and f[17:] == [True] * 7
    r = hold(src(pts, res_s=3600), day(6))
    assert spans(r) == [(T0, T0 + 2 * H, "start of year"), (T0 + 5 * H, T0 + 6 * H, "end of year")]
    # a single point: the hourly default step; 05:45 would interpolate towards 06:00, so 04..06 are missing
    one = cont(src([(3 * H, 3.0)]), day(6))
    assert spans(one) == [(T0, T0 + 3 * H, "start of year"), (T0 + 4 * H, T0 + 7 * H, "end of year")]
    q = cont(src([(2 * H, 1.0), (2 * H + Q, 2.0)]), day(3))  # two points 15 minutes apart
    assert spans(q)[-1] == (T0 + 2 * H + 2 * Q, T0 + 3 * H, "end of year")


def test_year_start_gap_of_a_quarter_hour_source_starts_at_the_grids_first_step():
    r = cont(src([(2 * H + i * Q, 1.0) for i in range(88)]), day())
    assert spans(r) == [(T0, T0 + 2 * H, "start of year")]
    r = cont(src([(Q + i * Q, 1.0) for i in range(95)]), day())  # only the first step is missing
    assert spans(r) == [(T0, T0 + Q, "start of year")] and r.frame["is_filled"].to_list()[:2] == [True, False]


def test_edge_gaps_within_the_edge_limit_and_beyond():
    pts = [(4 * H, 4.0), (5 * H, 5.0)]
    r = cont(src(pts), day(6), max_edge_fill=timedelta(hours=4))
    assert [g.hours for g in r.gaps] == [4.0, 1.0]
    with pytest.raises(GapError, match="start of year"):
        cont(src(pts), day(6), max_edge_fill=timedelta(hours=3, minutes=59))


def test_flags_between_points_are_true_if_either_is_estimated():
    pts = [(H, 1.0), (2 * H, 2.0), (3 * H, 3.0), (4 * H, 4.0)]
    r = resample_continuous(src(pts, flags=[False, True, False, False]), day(6), location="X", signal="s",
                            value_cols=["v"], flag_cols=("est",))
    est = r.frame["est"].to_list()
    assert est[:4] == [False] * 4  # before the first point: its own (false) flag, not a null read as true
    assert est[4] is False and est[5:8] == [True] * 3 and est[8] is True and est[9:12] == [True] * 3
    assert est[12] is False and est[13:16] == [False] * 3 and est[16] is False
    assert est[17:] == [False] * 7  # after the last point


def test_raw_files_used_are_those_of_both_neighbours():
    pts = [(2 * H, 2.0), (3 * H, 3.0)]
    r = cont(src(pts, sha=["a" * 64, "b" * 64]), day(6))
    assert r.raw_sha256 == ["a" * 64, "b" * 64]
    r = cont(src([(-2 * H, 0.0), (-H, 1.0), (H, 1.0)], sha=["c" * 64, "d" * 64, "e" * 64]), day(0.5))
    assert r.raw_sha256 == ["d" * 64, "e" * 64]  # the point two hours before is nobody's neighbour


def test_year_start_gap_of_an_offset_source_starts_on_the_source_grid():
    m = timedelta(minutes=1)
    pts = [(2 * H + 20 * m, 2.0), (3 * H + 20 * m, 3.0), (4 * H + 20 * m, 4.0)]
    # 00:00 would interpolate from the point at -00:40 (the source's grid is offset by 20 minutes)
    assert spans(cont(src(pts), day(4)))[0] == (T0 - 40 * m, T0 + 2 * H + 20 * m, "start of year")
    assert spans(hold(src(pts, res_s=3600), day(4)))[0] == (T0 - 40 * m, T0 + 2 * H + 20 * m, "start of year")


def test_hold_year_end_gap_from_the_last_step_on():
    g = day(24).head(93)  # last step 23:00
    r = hold(src([(i * H, float(i)) for i in range(23)], res_s=3600), g)  # 22:00 covers [22:00, 23:00)
    assert spans(r) == [(T0 + 23 * H, T0 + 24 * H, "end of year")] and r.frame["is_filled"].to_list()[-1]
    r = hold(src([(i * H, float(i)) for i in range(24)], res_s=3600), g)  # 23:00 covers itself
    assert spans(r) == [] and not r.frame["is_filled"].any()
    r = hold(src([(i * H, float(i)) for i in range(21)], res_s=3600), g)  # 20:00: 21:00 and 22:00 missing too
    assert spans(r) == [(T0 + 21 * H, T0 + 24 * H, "end of year")]


def test_hold_value_that_covers_the_grids_last_step_needs_nothing_after_it():
    # hourly prices through 23:00 cover the day's last step (23:45); the next price, at 05:00, is next day's gap
    pts = [(i * H, float(i)) for i in range(24)] + [(29 * H, 29.0)]
    assert spans(hold(src(pts, res_s=3600), day())) == []
    r = hold(src([(i * H, float(i)) for i in range(21)], res_s=3600), day())  # ends 20:00: 21:00..23:45 held
    assert spans(r) == [(T0 + 21 * H, T0 + 24 * H, "end of year")]


def test_hold_edges_use_the_first_and_last_rows_own_resolution():
    m = timedelta(minutes=1)
    rows = src([(H + 20 * m, 1.0), (2 * H + 20 * m, 2.0), (21 * H, 3.0), (22 * H, 4.0)])
    rows = rows.with_columns(resolution_s=pl.Series([3600, 1800, 3600, 900], dtype=pl.Int64))
    r = hold(rows, day(), max_gap=timedelta(hours=24))
    assert spans(r)[0] == (T0 - 40 * m, T0 + H + 20 * m, "start of year")  # hourly first row, offset 20 min
    assert spans(r)[-1] == (T0 + 22 * H + 15 * m, T0 + 24 * H, "end of year")  # the last row lasts 15 min
    # quarter-hour prices from 02:00: the year's start is missing from the grid's first step on
    r = hold(src([(2 * H + i * Q, 1.0) for i in range(88)], res_s=900), day())
    assert spans(r) == [(T0, T0 + 2 * H, "start of year")]


def test_hold_raw_files_are_the_held_rows_and_the_head_fill():
    r = hold(src([(H, 1.0), (2 * H, 2.0)], sha=["a" * 64, "b" * 64], res_s=3600), day(4))
    assert r.raw_sha256 == ["a" * 64, "b" * 64]
    assert r.frame["v"].to_list()[:4] == [1.0] * 4 and r.frame["is_filled"].to_list()[:5] == [True] * 4 + [False]


def test_no_source_rows_names_the_grids_span():
    empty = src([(H, 1.0)]).clear()
    msg = "s for X: no source data at all between 2023-01-01T00:00:00+00:00 and 2023-01-01T06:00:00+00:00"
    with pytest.raises(GridshiftError, match=msg.replace("+", r"\+")):
        cont(empty, day(6))


def test_nominal_step_counts_any_positive_spacing():
    assert _nominal_step_us(pl.Series([0, 1, 2, 3, 10], dtype=pl.Int64)) == 1


def test_binned_rows_replace_a_coarse_row_at_the_same_step():
    # hourly prices, and at 10:00 also three 5-minute prices: the averaged bin is the 10:00 value
    m = timedelta(minutes=1)
    hourly = [(i * H, 100.0 + i) for i in range(48)]
    fine = [(10 * H + 5 * k * m, 1.0 + k) for k in range(1, 4)]  # 10:05, 10:10, 10:15
    rows = src(hourly + fine).with_columns(
        resolution_s=pl.Series([3600] * 48 + [300] * 3, dtype=pl.Int64)).sample(fraction=1.0, shuffle=True, seed=1)
    r = hold(rows, day(), max_gap=timedelta(hours=24))
    v = r.frame["v"].to_list()
    assert v[40] == 2.5 and v[41] == 4.0  # mean of 10:05 and 10:10; 10:15 alone in its bin
    # the hourly 10:00 row is replaced, so 10:30 and 10:45 hold the last bin on (flagged) until 11:00
    assert v[42:44] == [4.0, 4.0] and r.frame["is_filled"].to_list()[40:45] == [False, False, True, True, False]
    assert v[44] == 111.0 and v[39] == 109.0
    assert r.frame["ts_utc"].is_sorted()


def test_a_fine_row_after_coarse_ones_is_binned_by_its_closer_neighbour():
    # hourly to 09:00, then every 10 minutes from 10:00: 10:00 is 1 h after its predecessor but 10 min before its
    # successor, so it is a fine row and shares the 10:00 bin with 10:10
    m = timedelta(minutes=1)
    pts = [(i * H, float(i)) for i in range(10)] + [(10 * H + 10 * k * m, 100.0 + k) for k in range(30)]
    r = cont(src(pts), day())
    assert r.frame["v"][40] == 100.5 and r.frame["v"][41] == 102.0
