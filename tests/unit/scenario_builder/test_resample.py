"""Unit tests of the resampling rules on small hand-made series (every rule can fail)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import polars as pl
import pytest

from scenario_builder.resample import GapError, resample_continuous, resample_hold, year_grid

SHA = "0" * 64
T0 = datetime(2023, 1, 1, tzinfo=UTC)


def hourly(values, start=T0, step=timedelta(hours=1), drop=()):
    ts = [start + i * step for i in range(len(values)) if i not in drop]
    vals = [v for i, v in enumerate(values) if i not in drop]
    return pl.DataFrame({"ts_utc": ts, "v": vals, "raw_sha256": [SHA] * len(ts)},
                        schema_overrides={"ts_utc": pl.Datetime("us", "UTC"), "v": pl.Float64})


def grid(n_hours=24):
    return year_grid(2023).head(n_hours * 4)


def test_linear_and_exact():
    r = resample_continuous(hourly([0.1 * i for i in range(30)]), grid(), location="X", signal="s",
                            value_cols=["v"])
    v = r.frame["v"]
    assert v[4] == 0.1 * 1 and v[8] == 0.1 * 2  # exactly the source values
    assert v[5] == pytest.approx(0.125) and v[6] == pytest.approx(0.15)
    assert not r.frame["is_filled"].any()


def test_interior_gap_within_limit_is_filled_and_flagged():
    src = hourly([float(i) for i in range(30)], drop={5, 6, 7})  # 3 h missing
    r = resample_continuous(src, grid(), location="X", signal="s", value_cols=["v"], max_gap=timedelta(hours=3))
    f = r.frame
    assert f["is_filled"].sum() == 15  # steps strictly between 04:00 and 08:00
    assert f["v"][6 * 4] == pytest.approx(6.0)  # linear across the gap
    assert [g.hours for g in r.gaps] == [3.0]


def test_gap_beyond_limit_names_region_signal_span():
    src = hourly([float(i) for i in range(30)], drop={5, 6, 7, 8})  # 4 h missing
    with pytest.raises(GapError) as exc:
        resample_continuous(src, grid(), location="DE-LU", signal="carbon", value_cols=["v"])
    msg = str(exc.value)
    assert "carbon for DE-LU" in msg and "2023-01-01T05:00:00+00:00" in msg and "2023-01-01T09:00:00+00:00" in msg


def test_price_hold_half_hour_offset_and_head_fill():
    src = hourly([10.0, 20.0, 30.0] + [40.0] * 30, start=T0 + timedelta(minutes=30)).with_columns(
        resolution_s=pl.lit(3600))
    r = resample_hold(src, grid(), location="IN-WE", signal="price", value_cols=["v"])
    v, f = r.frame["v"].to_list(), r.frame["is_filled"].to_list()
    assert v[:8] == [10.0, 10.0, 10.0, 10.0, 10.0, 10.0, 20.0, 20.0]
    assert f[:3] == [True, True, False]


def test_fifteen_minute_prices_kept_and_five_minute_averaged():
    q = hourly([float(i) for i in range(100)], step=timedelta(minutes=15)).with_columns(resolution_s=pl.lit(900))
    r = resample_hold(q, grid(), location="X", signal="price", value_cols=["v"])
    assert r.frame["v"].head(96).to_list() == [float(i) for i in range(96)]
    five = hourly([float(i) for i in range(300)], step=timedelta(minutes=5)).with_columns(resolution_s=pl.lit(300))
    r = resample_hold(five, grid(), location="X", signal="price", value_cols=["v"])
    assert r.frame["v"][0] == 1.0 and r.frame["v"][1] == 4.0  # mean of 0,1,2 and of 3,4,5


def test_mixed_resolution_hour_then_quarters():
    hours = hourly([50.0] * 6).with_columns(resolution_s=pl.lit(3600))
    quarters = hourly([float(i) for i in range(80)], start=T0 + timedelta(hours=6),
                      step=timedelta(minutes=15)).with_columns(resolution_s=pl.lit(900))
    r = resample_hold(pl.concat([hours, quarters]), grid(), location="X", signal="price", value_cols=["v"])
    assert r.frame["v"].head(24).to_list() == [50.0] * 24
    assert r.frame["v"][24:28].to_list() == [0.0, 1.0, 2.0, 3.0]
    assert not r.frame["is_filled"].any()


def test_tail_without_next_year_holds_last_value_flagged():
    g = year_grid(2023).tail(8)
    start = g[0]
    src = hourly([1.0, 2.0], start=start)
    r = resample_continuous(src, g, location="X", signal="s", value_cols=["v"])
    assert r.frame["v"].to_list() == [1.0, 1.25, 1.5, 1.75, 2.0, 2.0, 2.0, 2.0]
    assert r.frame["is_filled"].to_list() == [False] * 5 + [True] * 3
