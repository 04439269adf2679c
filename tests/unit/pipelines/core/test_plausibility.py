"""Partition plausibility (pipelines.core.plausibility) at each threshold's exact value: the floor itself is
plausible, just below it is refused by name (file, column, rows, values) or, where overridable, recorded."""

from __future__ import annotations

import math
import warnings
from datetime import UTC, datetime, timedelta

import numpy as np
import polars as pl
import pytest

from gridshift import quality
from gridshift.errors import DataError
from pipelines.core import plausibility
from pipelines.core.plausibility import (
    OVERRIDABLE,
    _avg_ranks,
    _corr,
    _diurnal_peak_solar_h,
    _row_corrs,
    _row_ranges,
    check,
    factor_lag_weeks,
)


def carbon(lca: list[float], direct: list[float]) -> pl.DataFrame:
    return pl.DataFrame({"carbon_lca_g_per_kwh": lca, "carbon_direct_g_per_kwh": direct})


def test_price_mean_at_the_floor_passes_below_is_refused_or_recorded():
    floor = quality.MIN_MEAN_PRICE_USD_PER_MWH
    assert check("price", pl.DataFrame({"price_usd_per_mwh": [floor - 0.5, floor + 0.5]}), file="p.csv") == []
    low = pl.DataFrame({"price_usd_per_mwh": [None, 0.2, 0.4]})
    msg = r"mean day-ahead price \(USD/MWh\) is 0.3, below the plausible floor of 1"
    with pytest.raises(DataError, match=msg) as e:
        check("price", low, file="p.csv", row_base=5)
    assert (e.value.file, e.value.column) == ("p.csv", "price_usd_per_mwh")
    assert e.value.rows == [6, 7] and e.value.values == [0.2, 0.4]  # nulls skipped, file rows = index + row_base
    assert check("price", low, file="p.csv", allow_implausible=True) == ["mean_price"]
    assert check("price", pl.DataFrame({"price_usd_per_mwh": [None]}, schema={"price_usd_per_mwh": pl.Float64}),
                 file="p.csv") == []  # no values, no mean: nothing to judge


def test_sample_quotes_the_first_ten_rows():
    with pytest.raises(DataError) as e:
        check("price", pl.DataFrame({"price_usd_per_mwh": [0.1] * 12}), file="p.csv")
    assert e.value.rows == list(range(2, 12))  # default row_base 2: a header line, 1-based


def test_lca_equal_to_direct_passes_below_is_refused():
    assert check("carbon", carbon([300.0, 20.0], [300.0, 10.0]), file="c.csv") == []
    with pytest.raises(DataError, match=r"1 row\(s\) with a life-cycle intensity below the direct one") as e:
        check("carbon", carbon([300.0, 9.0, None], [300.0, 10.0, 5.0]), file="c.csv", row_base=2)
    assert e.value.column == "carbon_lca_g_per_kwh" and e.value.rows == [3]
    assert e.value.values == ["9.0 < direct 10.0"]
    # the swap is never overridable
    with pytest.raises(DataError):
        check("carbon", carbon([9.0], [10.0]), file="c.csv", allow_implausible=True)


def test_carbon_floors_at_their_values():
    lca, direct = quality.MIN_MEAN_CARBON_LCA_G_PER_KWH, quality.MIN_MEAN_CARBON_DIRECT_G_PER_KWH
    assert check("carbon", carbon([lca, lca], [direct, direct]), file="c.csv") == []
    with pytest.raises(DataError, match="life-cycle carbon intensity"):
        check("carbon", carbon([lca - 0.01], [direct]), file="c.csv")
    with pytest.raises(DataError, match="direct carbon intensity") as e:
        check("carbon", carbon([lca], [direct - 0.01]), file="c.csv")
    assert e.value.column == "carbon_direct_g_per_kwh"
    assert check("carbon", carbon([0.5], [0.1]), file="c.csv", allow_implausible=True) == [
        "mean_carbon_lca", "mean_carbon_direct"]
    assert {"mean_carbon_lca", "mean_carbon_direct", "mean_price"} <= set(OVERRIDABLE)


def test_humidity_peak_and_mean_temperature_at_their_limits():
    ok = pl.DataFrame({"rh_pct": [1.5, quality.MIN_MAX_RH_PCT], "temp_c": [quality.MAX_MEAN_TEMP_C] * 2})
    assert check("weather", ok, file="w.csv") == []
    with pytest.raises(DataError, match="relative humidity never exceeds 4.9 %") as e:
        check("weather", ok.with_columns(rh_pct=pl.Series([1.5, 4.9])), file="w.csv", allow_implausible=True)
    assert e.value.column == "rh_pct" and e.value.rows == [2, 3]
    with pytest.raises(DataError, match=r"mean temperature is 40.1 °C") as e:
        check("weather", ok.with_columns(temp_c=pl.Series([40.0, 40.2])), file="w.csv", row_base=10)
    assert e.value.column == "temp_c" and e.value.rows == [10, 11] and e.value.values == [40.0, 40.2]
    empty = pl.DataFrame({"rh_pct": [None], "temp_c": [None]}, schema={"rh_pct": pl.Float64, "temp_c": pl.Float64})
    assert check("weather", empty, file="w.csv") == []


def test_unknown_kind_is_refused():
    with pytest.raises(ValueError, match="no plausibility checks for signal kind 'fx'"):
        check("fx", pl.DataFrame(), file="x.csv")


def test_row_ranges_join_consecutive_rows():
    flags = pl.Series([False, True, True, False, True, False, False, True, True, True])
    assert _row_ranges(flags, 2) == [(3, 4), (6, 6), (9, 11)]
    assert _row_ranges(flags, 10) == [(11, 12), (14, 14), (17, 19)]
    assert _row_ranges(pl.Series([True, True]), 0) == [(0, 1)] and _row_ranges(pl.Series([False]), 2) == []


def scaled(stretches: list[tuple[int, int]], n: int = 100, level: float = 300.0, low: float = 0.3) -> pl.DataFrame:
    """``n`` hourly carbon rows at ``level``, the rows of each [a, b) stretch at ``low``."""
    v = [level] * n
    for a, b in stretches:
        v[a:b] = [low] * (b - a)
    return carbon(v, [x / 2 for x in v])


def test_a_stretch_scaled_by_1000_is_named_by_its_rows():
    # a 24 h rolling median: a 20-row stretch (file rows 42..61) is low from its 2nd row to its last
    with pytest.raises(DataError, match=r"19 row\(s\) \(rows 43-61\) sit at a level 300x or more below") as e:
        check("carbon", scaled([(40, 60)]), file="c.csv")
    assert e.value.column == "carbon_lca_g_per_kwh" and e.value.rows == list(range(43, 53))
    assert e.value.values == [0.3] * 10
    assert check("carbon", scaled([(40, 60)]), file="c.csv", allow_implausible=True) == [
        "scaled_rows_carbon_lca", "scaled_rows_carbon_direct"]


def test_a_stretch_at_exactly_the_share_passes():
    # the 90th percentile is 300: a stretch at 300 / 300 = 1.0 is not below the share, 0.99 is
    assert check("carbon", scaled([(40, 60)], low=1.0), file="c.csv") == []
    with pytest.raises(DataError, match="sit at a level"):
        check("carbon", scaled([(40, 60)], low=0.99), file="c.csv")


def test_more_than_five_stretches_are_cut_in_the_message():
    five = [(20 + 40 * k, 40 + 40 * k) for k in range(5)]
    with pytest.raises(DataError) as e:
        check("carbon", scaled(five, n=260), file="c.csv")
    assert "(rows 23-41, rows 63-81, rows 103-121, rows 143-161, rows 183-201) sit" in str(e.value)
    with pytest.raises(DataError) as e:
        check("carbon", scaled([*five, (220, 240)], n=300), file="c.csv")
    assert "rows 183-201 ...)" in str(e.value)


def test_a_file_shorter_than_half_the_window_is_not_judged_row_by_row():
    # 10 rows: the 24 h rolling median needs 12 values; 12 rows are judged
    assert check("carbon", carbon([300.0] * 2 + [0.3] * 8, [150.0] * 2 + [0.15] * 8), file="c.csv") == []
    with pytest.raises(DataError, match="sit at a level"):
        check("carbon", carbon([300.0] * 2 + [0.3] * 10, [150.0] * 2 + [0.15] * 10), file="c.csv")


def test_a_level_below_one_is_judged_too():
    p = pl.DataFrame({"price_usd_per_mwh": [0.9] * 100 + [0.001] * 200 + [0.9] * 100})
    assert check("price", p, file="p.csv", allow_implausible=True) == ["mean_price", "scaled_rows_price"]


def test_a_zero_price_level_is_not_judged_row_by_row():
    z = pl.DataFrame({"price_usd_per_mwh": [0.0] * 50})
    assert check("price", z, file="p.csv", allow_implausible=True) == ["mean_price"]


def test_humidity_at_or_below_one_percent_in_more_than_a_quarter_of_rows():
    quarter = pl.DataFrame({"rh_pct": [1.0, 50.0, 60.0, 70.0]})  # exactly 25 %: accepted
    assert check("weather", quarter.with_columns(temp_c=pl.lit(10.0)), file="w.csv") == []
    with pytest.raises(DataError, match=r"2 of 4 rows \(rows 2-3\) have a relative humidity at or below 1 %") as e:
        check("weather", pl.DataFrame({"rh_pct": [0.5, 1.0, 60.0, 70.0], "temp_c": [10.0] * 4}), file="w.csv")
    assert e.value.rows == [2, 3] and e.value.values == [0.5, 1.0]
    alt = [0.5, 50.0] * 4  # four separate runs: three named, then "..."
    with pytest.raises(DataError, match=r"\(rows 2-2, rows 4-4, rows 6-6 \.\.\.\)"):
        check("weather", pl.DataFrame({"rh_pct": alt, "temp_c": [10.0] * 8}), file="w.csv")
    with pytest.raises(DataError, match=r"\(rows 2-2, rows 4-4, rows 6-6\) have"):
        check("weather", pl.DataFrame({"rh_pct": alt[:6], "temp_c": [10.0] * 6}), file="w.csv")
    empty = pl.DataFrame({"rh_pct": [], "temp_c": []}, schema={"rh_pct": pl.Float64, "temp_c": pl.Float64})
    assert check("weather", empty, file="w.csv") == []
    gaps = pl.DataFrame({"rh_pct": [None, None, 50.0, 60.0], "temp_c": [10.0] * 4})  # missing is not dry
    assert check("weather", gaps, file="w.csv") == []


def diurnal(peak_h: float, days: int = 4) -> pl.DataFrame:
    """15-minute UTC temperatures 20 + 5 cos(2 pi (h - peak_h) / 24): the daily cycle peaks at peak_h UTC."""
    ts = pl.datetime_range(datetime(2023, 6, 1, tzinfo=UTC), datetime(2023, 6, 1 + days, tzinfo=UTC), "15m",
                           closed="left", time_zone="UTC", eager=True)
    h = ts.dt.hour() + ts.dt.minute() / 60
    return pl.DataFrame({"ts_utc": ts, "temp_c": 20 + 5 * ((h - peak_h) * 2 * math.pi / 24).cos(),
                         "rh_pct": [60.0] * ts.len()})


def test_diurnal_peak_in_local_solar_time():
    assert _diurnal_peak_solar_h(diurnal(14.25), 0.0) == pytest.approx(14.25, abs=1e-9)
    assert _diurnal_peak_solar_h(diurnal(14.25), 30.0) == pytest.approx(16.25, abs=1e-9)  # 2 h east
    assert _diurnal_peak_solar_h(diurnal(20.0), -60.0) == pytest.approx(16.0, abs=1e-9)
    assert _diurnal_peak_solar_h(diurnal(2.0), 0.0) == pytest.approx(2.0, abs=1e-9)
    assert _diurnal_peak_solar_h(diurnal(22.5), 0.0) == pytest.approx(22.5, abs=1e-9)  # past the wrap
    assert _diurnal_peak_solar_h(diurnal(14.0).with_columns(temp_c=None), 0.0) is None


def test_diurnal_phase_window_is_inclusive(monkeypatch):
    df = diurnal(14.25)
    peak = _diurnal_peak_solar_h(df, 0.0)
    monkeypatch.setattr(quality, "DIURNAL_PEAK_SOLAR_H", (peak, peak))
    assert check("weather", df, file="w.csv", lon_deg=0.0) == []


def test_a_shifted_time_axis_is_refused_or_recorded():
    df = diurnal(19.25)  # peaks at 19:15 local solar time: five hours late
    assert check("weather", df, file="w.csv") == []  # no longitude, no check
    with pytest.raises(DataError, match=r"peaks at 19.2 h local solar time \(longitude 0°\), outside 12.5..16 h") as e:
        check("weather", df, file="w.csv", lon_deg=0.0, row_base=3)
    assert e.value.column == "ts_utc" and e.value.rows == list(range(3, 13))
    assert e.value.values[0] == "2023-06-01 00:00:00+00:00"
    assert check("weather", df, file="w.csv", lon_deg=0.0, allow_implausible=True) == ["diurnal_phase"]
    assert check("weather", diurnal(20.0), file="w.csv", lon_deg=-90.0) == []  # 20:00 UTC is 14:00 at 90° W
    with pytest.raises(DataError, match="shifted by about -4 h"):
        check("weather", diurnal(10.25), file="w.csv", lon_deg=0.0)


# --- the factor-lag check: the direct and life-cycle columns an hour apart (gridshift.quality.FACTOR_LAG_*) ---


def hourly(direct: list[float], lca: list[float]) -> pl.DataFrame:
    """Hourly carbon rows from 2024-01-01 00:00 UTC."""
    ts = pl.datetime_range(datetime(2024, 1, 1, tzinfo=UTC), datetime(2024, 1, 1, tzinfo=UTC)
                           + timedelta(hours=len(direct) - 1), "1h", time_zone="UTC", eager=True)
    return pl.DataFrame({"ts_utc": ts, "carbon_direct_g_per_kwh": direct, "carbon_lca_g_per_kwh": lca})


def walk(n: int, seed: int = 7) -> list[float]:
    """A direct intensity of ``n`` hours: 1000 g/kWh plus a seeded random walk of integer steps of at most 20."""
    steps = np.random.default_rng(seed).integers(-20, 21, n)
    return [1000.0 + float(v) for v in np.cumsum(steps)]


def shifted(direct: list[float], lag_h: int, until: int | None = None) -> pl.DataFrame:
    """LCA = direct + 200, taken ``lag_h`` hours off (+1: the direct value of the hour before, so the LCA's changes
    come one hour later) up to row ``until`` (all rows when None), aligned after it; rows off the end repeat."""
    n = len(direct)
    lca = [direct[min(max(i - lag_h, 0), n - 1)] + 200.0 if until is None or i <= until else direct[i] + 200.0
           for i in range(n)]
    return hourly(direct, lca)


def test_corr_needs_half_a_window_of_finite_pairs():
    half = quality.FACTOR_LAG_WINDOW_H // 2  # 84
    x = np.array([1.0, -1.0] * (half // 2))  # std exactly 1, mean exactly 0
    assert _corr(x, -x) == pytest.approx(-1.0, abs=1e-12) and _corr(x, 3 * x + 5) == pytest.approx(1.0, abs=1e-12)
    assert math.isnan(_corr(x[:-1], -x[:-1]))  # 83 pairs: too few
    gaps = np.concatenate([x, [math.nan, 2.0]])  # pairs with a NaN on either side are left out, not the week
    assert _corr(gaps, np.concatenate([-x, [4.0, math.nan]])) == pytest.approx(-1.0, abs=1e-12)
    assert math.isnan(_corr(np.concatenate([x[:-1], [math.nan]]), -x))


def test_corr_of_a_constant_column_is_nan_without_dividing_by_zero():
    x = np.array([1.0, -1.0] * 84)
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # numpy warns on a zero standard deviation: never reached
        assert math.isnan(_corr(np.full(168, 3.0), x)) and math.isnan(_corr(x, np.full(168, 3.0)))


def test_corr_half_window_of_an_odd_window(monkeypatch):
    monkeypatch.setattr(quality, "FACTOR_LAG_WINDOW_H", 9)  # half a window: 4 pairs (9 // 2), not 4.5
    x, y = np.array([1.0, 2.0, 3.0, 5.0]), np.array([2.0, 4.0, 6.0, 10.0])
    assert _corr(x, y) == pytest.approx(1.0, abs=1e-12) and math.isnan(_corr(x[:3], y[:3]))


def test_weeks_follow_the_window_and_step():
    # 168 rows = 167 changes: shorter than a week (168 changes), not judged even when wholly an hour off
    assert factor_lag_weeks(shifted(walk(168), 1)) == []
    assert check("carbon", shifted(walk(168), 1), file="c.csv") == []
    assert [w[0] for w in factor_lag_weeks(shifted(walk(169), 1))] == [0]
    assert [w[0] for w in factor_lag_weeks(shifted(walk(192), 1))] == [0]  # the next week starts 24 h later
    weeks = factor_lag_weeks(shifted(walk(193), 1))
    assert [(s, lag) for s, _, _, lag in weeks] == [(0, 1), (24, 1)]
    assert all(c1 == pytest.approx(1.0, abs=1e-12) and abs(c0) < 0.2 for _, c0, c1, _ in weeks)
    aligned = factor_lag_weeks(shifted(walk(193), 0))
    assert [s for s, *_ in aligned] == [0, 24] and all(c0 == pytest.approx(1.0, abs=1e-12) for _, c0, *_ in aligned)


def test_weeks_with_the_constants_of_quality(monkeypatch):
    monkeypatch.setattr(quality, "FACTOR_LAG_WINDOW_H", 12)
    monkeypatch.setattr(quality, "FACTOR_LAG_STEP_H", 5)
    weeks = factor_lag_weeks(shifted(walk(40), -1))  # 39 changes: windows at 0, 5, ..., 25 (the last ends at 37)
    assert [(s, lag) for s, _, _, lag in weeks] == [(0, -1), (5, -1), (10, -1), (15, -1), (20, -1), (25, -1)]
    assert [w[0] for w in factor_lag_weeks(shifted(walk(38), -1))] == [0, 5, 10, 15, 20, 25]
    assert [w[0] for w in factor_lag_weeks(shifted(walk(37), -1))] == [0, 5, 10, 15, 20]


def test_a_step_an_hour_later_or_earlier_picks_the_lag_sign():
    # one step in each column: the direct's at the first change, the LCA's one hour later (or earlier)
    direct = [1000.0] + [1001.0] * 168
    later = hourly(direct, [1200.0] * 2 + [1201.0] * 167)
    earlier = hourly([1000.0] * 2 + [1001.0] * 167, [1200.0] + [1201.0] * 168)
    # lag 0: two unit vectors of 168 correlate at -1/167; the matching lag at 1; the other lag is a constant (NaN)
    assert factor_lag_weeks(later) == [(0, pytest.approx(-1 / 167, abs=1e-12), pytest.approx(1.0, abs=1e-12), 1)]
    assert factor_lag_weeks(earlier) == [(0, pytest.approx(-1 / 167, abs=1e-12), pytest.approx(1.0, abs=1e-12), -1)]
    with pytest.raises(DataError, match=r"correlate better with the LCA one hour later \(worst week from "
                       r"2024-01-01 00:00:00\+00:00: 1.000 against -0.006 at lag 0"):
        check("carbon", later, file="c.csv")
    with pytest.raises(DataError, match="with the LCA one hour earlier"):
        check("carbon", earlier, file="c.csv")


def test_a_tie_between_the_lags_is_one_hour_later():
    # direct 1000, 1001, 1000, ...: the LCA an hour off matches at lag +1 and lag -1 alike (1.0 both)
    df = hourly([1000.0 + i % 2 for i in range(169)], [1200.0 + (i + 1) % 2 for i in range(169)])
    x, y = np.diff(df["carbon_direct_g_per_kwh"].to_numpy()), np.diff(df["carbon_lca_g_per_kwh"].to_numpy())
    assert _corr(x[:-1], y[1:]) == _corr(x[1:], y[:-1]) == pytest.approx(1.0, abs=1e-12)  # the tie, exactly
    assert factor_lag_weeks(df) == [(0, pytest.approx(-1.0, abs=1e-12), pytest.approx(1.0, abs=1e-12), 1)]
    with pytest.raises(DataError, match="with the LCA one hour later"):
        check("carbon", df, file="c.csv")


def test_a_week_with_too_few_pairs_at_lag_0_is_left_out():
    # direct known at rows 83..167, LCA at 84..168: 83 changes pair at lag 0 (too few), 84 at lag +1
    direct = [None] * 83 + walk(85) + [None]
    lca = [None] * 84 + [v + 200.0 for v in walk(85, seed=8)]
    df = hourly(direct, lca)
    x = np.diff(df["carbon_direct_g_per_kwh"].fill_null(math.nan).to_numpy())
    y = np.diff(df["carbon_lca_g_per_kwh"].fill_null(math.nan).to_numpy())
    assert math.isnan(_corr(x, y)) and not math.isnan(_corr(x[:-1], y[1:]))
    assert factor_lag_weeks(df) == []


def test_equal_correlations_are_not_refused():
    # the direct's changes grow by 1 g/kWh an hour and the LCA's are the same: lag 0 and lag +1 both correlate at
    # exactly 1.0, and a tie is no evidence of a shift
    direct = [1000.0 + i * (i - 1) / 2 for i in range(169)]
    df = hourly(direct, [v + 50.0 for v in direct])
    assert factor_lag_weeks(df) == [(0, 1.0, 1.0, 1)]
    assert check("carbon", df, file="c.csv") == []


def test_a_stretch_an_hour_off_is_refused_naming_its_rows():
    # the LCA an hour late up to row 120 of 241: the weeks from rows 0 and 24 are mostly late, 48 and 72 mostly not
    df = shifted(walk(241), 1, until=120)
    weeks = factor_lag_weeks(df)
    assert [s for s, c0, c1, _ in weeks if c1 > c0] == [0, 24] and [s for s, *_ in weeks] == [0, 24, 48, 72]
    with pytest.raises(DataError, match=r"an hour apart in 2 week\(s\) \(rows 10-202\): .* one hour later") as e:
        check("carbon", df, file="c.csv", row_base=10)
    assert (e.value.file, e.value.column, e.value.rows) == ("c.csv", "carbon_lca_g_per_kwh", [10, 202])
    assert e.value.values == ["2024-01-01 00:00:00+00:00", "2024-01-09 00:00:00+00:00"]
    assert check("carbon", df, file="c.csv", allow_implausible=True) == ["factor_lag"]
    assert "factor_lag" in OVERRIDABLE


def weeks_of(monkeypatch, weeks: list[tuple[int, float, float, int]], n: int) -> pl.DataFrame:
    """``n`` plausible hourly carbon rows whose weeks are ``weeks`` (first row, c0, c1, lag), as given."""
    monkeypatch.setattr(plausibility, "factor_lag_weeks", lambda df: weeks)
    return hourly([100.0] * n, [200.0] * n)


def test_the_worst_week_is_the_widest_margin(monkeypatch):
    # margins c1 - c0: 0.1, 0.7 (the worst, neither the first week nor the lowest c0), 0.3; the last is a tie
    df = weeks_of(monkeypatch, [(0, 0.1, 0.2, 1), (200, 0.2, 0.9, -1), (400, -0.3, 0.0, 1), (600, 0.5, 0.5, 1)], 800)
    with pytest.raises(DataError, match=r"in 3 week\(s\) \(rows 2-170, rows 202-370, rows 402-570\): their "
                       r"hour-to-hour changes correlate better with the LCA one hour earlier \(worst week from "
                       r"2024-01-09 08:00:00\+00:00: 0.900 against 0.200 at lag 0") as e:
        check("carbon", df, file="c.csv")
    assert e.value.rows == [2, 170] and e.value.values == ["2024-01-01 00:00:00+00:00", "2024-01-08 00:00:00+00:00"]


def test_more_than_five_late_stretches_are_cut_in_the_message(monkeypatch):
    five = [(200 * k, 0.0, 0.5, 1) for k in range(5)]
    with pytest.raises(DataError) as e:
        check("carbon", weeks_of(monkeypatch, five, 1200), file="c.csv")
    assert "(rows 2-170, rows 202-370, rows 402-570, rows 602-770, rows 802-970):" in str(e.value)
    with pytest.raises(DataError) as e:
        check("carbon", weeks_of(monkeypatch, [*five, (1000, 0.0, 0.5, 1)], 1200), file="c.csv")
    assert "in 6 week(s) (rows 2-170, rows 202-370, rows 402-570, rows 602-770, rows 802-970 ...):" in str(e.value)


def test_weeks_ranked_together_equal_each_week_ranked_alone():
    # _row_corrs ranks every complete week in one pass (ties averaged, as polars' rank("average")); weeks with a
    # missing value go through _corr; both must give _corr's value for every week
    rng = np.random.default_rng(7)
    x = rng.integers(0, 4, size=(6, 168)).astype(float)  # few distinct values: many ties
    y = rng.integers(0, 4, size=(6, 168)).astype(float)
    x[1, 3], y[2, 100] = np.nan, np.nan
    x[3] = 2.0  # constant: no correlation
    for i in range(6):
        if np.isfinite(x[i]).all():
            assert np.array_equal(_avg_ranks(x[i:i + 1])[0], pl.Series(x[i]).rank("average").to_numpy())
    got = _row_corrs(x, y)
    for i in range(6):
        want = _corr(x[i], y[i])
        assert (np.isnan(want) and np.isnan(got[i])) or got[i] == pytest.approx(want, abs=1e-12)
    assert np.isnan(got[3]) and not np.isnan(got[1])
