"""Partition plausibility (pipelines.core.plausibility) at each threshold's exact value: the floor itself is
plausible, just below it is refused by name (file, column, rows, values) or, where overridable, recorded."""

from __future__ import annotations

import math
from datetime import UTC, datetime

import polars as pl
import pytest

from gridshift import quality
from gridshift.errors import DataError
from pipelines.core.plausibility import OVERRIDABLE, _diurnal_peak_solar_h, _row_ranges, check


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
