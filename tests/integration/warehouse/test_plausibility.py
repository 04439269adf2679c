"""Plausibility and time axes of whole partitions (issue 27 item 3): each hostile file is built from the
real one at test time, refused by name (file, column, rows, values) with nothing written, and an override
exists only where a legitimate file could trip the check — recorded in ``partition_quality``."""

from __future__ import annotations

import datetime as dt
import io
import json
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from gridshift import locations, quality
from gridshift.errors import DataError
from gridshift.home import Home
from pipelines.core import plausibility
from pipelines.sources import registry
from tests.integration.helpers import mirror_with
from warehouse.db import read_table
from warehouse.ingest import ingest_grid

CARBON = "electricitymaps/DE-LU/DE-LU_2023_hourly.csv"
PRICE = "prices/standardized/DE-LU/DE-LU_electricity_prices_2023.csv"
WEATHER = "open-meteo/DE-LU/2023.json"
DIRECT = "Carbon Intensity gCO₂eq/kWh (direct)"
LCA = "Carbon Intensity gCO₂eq/kWh (LCA)"


def _csv_edit(fn):
    """Mutation: the CSV read as text columns, ``fn(frame)``, written back (same header, same rows)."""

    def mut(data: bytes) -> bytes:
        df = pl.read_csv(io.BytesIO(data), infer_schema=False)
        out = io.BytesIO()
        fn(df).write_csv(out)
        return out.getvalue()

    return mut


def _scaled(*cols: str, by: float):
    return _csv_edit(lambda df: df.with_columns([(pl.col(c).cast(pl.Float64) * by).cast(pl.String) for c in cols]))


def _json_edit(fn):
    def mut(data: bytes) -> bytes:
        body = json.loads(data)
        fn(body)
        return json.dumps(body).encode()

    return mut


def _refused(tmp_path, shared_data, kind: str, relpath: str, mutate, **kw) -> DataError:
    mirror = mirror_with(shared_data, tmp_path, relpath, mutate)
    home = Home.resolve(tmp_path / "home")
    with pytest.raises(DataError) as info:
        ingest_grid(kind, "DE-LU", 2023, home=home, mirror=mirror, **kw)
    assert info.value.file.endswith(relpath.split("/")[-1]), info.value
    assert not home.root.exists(), "a refused file must write nothing"
    return info.value


def _overridden(home: Home) -> list[tuple]:
    return read_table(home.warehouse_path, "SELECT signal, plausibility_overridden FROM partition_quality").rows()


def test_carbon_divided_by_1000_is_refused_and_ingested_only_with_the_override_recorded(tmp_path, shared_data):
    err = _refused(tmp_path, shared_data, "carbon", CARBON, _scaled(DIRECT, LCA, by=1e-3))
    assert err.column == "carbon_lca_g_per_kwh" and "below the plausible floor of 5" in str(err)
    assert err.rows[:2] == [2, 3] and err.values[0] == pytest.approx(0.1858)  # line 2 of the real file: 185.8
    assert "allow_implausible" in str(err)
    home = Home.resolve(tmp_path / "home")
    rep = ingest_grid("carbon", "DE-LU", 2023, home=home, mirror=tmp_path / "mirror", allow_implausible=True)
    assert rep.overridden == ["mean_carbon_lca", "mean_carbon_direct"]
    assert _overridden(home) == [("carbon", "mean_carbon_lca,mean_carbon_direct")]
    # the real file replaces it: nothing overridden any more
    ingest_grid("carbon", "DE-LU", 2023, home=home, mirror=shared_data)
    assert _overridden(home) == [("carbon", None)]


def test_prices_divided_by_1000_are_refused_and_the_override_recorded(tmp_path, shared_data):
    err = _refused(tmp_path, shared_data, "price", PRICE, _scaled("Price (USD/MWh)", by=1e-3))
    assert err.column == "price_usd_per_mwh" and "mean day-ahead price (USD/MWh) is 0.1" in str(err)
    home = Home.resolve(tmp_path / "home")
    ingest_grid("price", "DE-LU", 2023, home=home, mirror=tmp_path / "mirror", allow_implausible=True)
    assert _overridden(home) == [("price", "mean_price")]


def test_direct_and_lca_swapped_are_refused_by_row(tmp_path, shared_data):
    swap = _csv_edit(lambda df: df.with_columns(pl.col(DIRECT).alias(LCA), pl.col(LCA).alias(DIRECT)))
    err = _refused(tmp_path, shared_data, "carbon", CARBON, swap, allow_implausible=True)  # never overridable
    assert err.column == "carbon_lca_g_per_kwh"
    assert "8760 row(s) with a life-cycle intensity below the direct" in str(err)
    real = pl.read_csv(shared_data / CARBON)
    assert err.rows[0] == 2 and err.values[0] == f"{real[DIRECT][0]} < direct {real[LCA][0]}"


def test_humidity_as_a_fraction_is_refused_even_with_the_override(tmp_path, shared_data):
    def fraction(body):
        body["hourly"]["relative_humidity_2m"] = [None if v is None else v / 100
                                                  for v in body["hourly"]["relative_humidity_2m"]]

    err = _refused(tmp_path, shared_data, "weather", WEATHER, _json_edit(fraction), allow_implausible=True)
    assert err.column == "rh_pct" and "never exceeds 1 %" in str(err) and "a fraction" in str(err)
    assert err.rows[0] == 0 and 0 < err.values[0] <= 1


def _real_weather(shared_data, tmp_path) -> pl.DataFrame:
    home = Home.resolve(tmp_path / "real")
    ingest_grid("weather", "DE-LU", 2023, home=home, mirror=shared_data)
    return read_table(home.warehouse_path, "SELECT ts_utc, temp_c, windspeed_kmh FROM weather ORDER BY ts_utc")


def test_fahrenheit_stated_in_hourly_units_is_converted(tmp_path, shared_data):
    def to_f(body):
        body["hourly_units"]["temperature_2m"] = "°F"
        body["hourly"]["temperature_2m"] = [None if v is None else v * 9 / 5 + 32
                                            for v in body["hourly"]["temperature_2m"]]
        body["hourly_units"]["windspeed_10m"] = "m/s"
        body["hourly"]["windspeed_10m"] = [None if v is None else v / 3.6 for v in body["hourly"]["windspeed_10m"]]

    mirror = mirror_with(shared_data, tmp_path, WEATHER, _json_edit(to_f))
    home = Home.resolve(tmp_path / "home")
    ingest_grid("weather", "DE-LU", 2023, home=home, mirror=mirror)
    got = read_table(home.warehouse_path, "SELECT ts_utc, temp_c, windspeed_kmh FROM weather ORDER BY ts_utc")
    real = _real_weather(shared_data, tmp_path)
    assert got["ts_utc"].equals(real["ts_utc"]) and got.height == 8760
    assert (got["temp_c"] - real["temp_c"]).abs().max() < 1e-9
    assert (got["windspeed_kmh"] - real["windspeed_kmh"]).abs().max() < 1e-9
    assert got["temp_c"].mean() == pytest.approx(12.09, abs=0.01)  # Frankfurt's mean, not 54 (°F)


@pytest.mark.parametrize(("unit", "fragment"), [("K", "unit 'K' of hourly.temperature_2m is not one of"),
                                                ("°C", "less_than_or_equal_to(60.0)")])
def test_an_unknown_unit_or_fahrenheit_labelled_celsius_is_refused(tmp_path, shared_data, unit, fragment):
    def relabel(body):
        body["hourly_units"]["temperature_2m"] = unit
        body["hourly"]["temperature_2m"] = [None if v is None else v * 9 / 5 + 32
                                            for v in body["hourly"]["temperature_2m"]]

    err = _refused(tmp_path, shared_data, "weather", WEATHER, _json_edit(relabel))
    assert fragment in str(err)
    assert err.column == ("hourly_units.temperature_2m" if unit == "K" else "temp_c")


def test_an_offset_its_time_zone_never_takes_is_refused(tmp_path, shared_data):
    def shift(body):
        assert body["timezone"] == "Europe/Berlin" and body["utc_offset_seconds"] == 3600
        body["utc_offset_seconds"] = 3 * 3600

    err = _refused(tmp_path, shared_data, "weather", WEATHER, _json_edit(shift))
    assert err.column == "utc_offset_seconds" and err.values == [10800]
    assert "not an offset of the response's time zone Europe/Berlin in 2023 (it takes [3600, 7200] s)" in str(err)


def test_summer_time_for_the_whole_year_is_an_offset_of_the_zone(tmp_path, shared_data):
    """US-CAL-CISO 2023 says -25200 (PDT) for the whole year: Los Angeles takes it in summer, so it passes."""
    rep = ingest_grid("weather", "US-CAL-CISO", 2023, home=Home.resolve(tmp_path / "h"), mirror=shared_data)
    assert (rep.rows, rep.present) == (8760, 8753)  # the local year starts 7 h into the UTC year


def test_an_electricity_maps_file_in_local_time_is_refused(tmp_path, shared_data):
    """The ``Datetime (UTC)`` column written in Berlin winter time (+1 h): its last hour is 2024-01-01 00:00."""
    shift = _csv_edit(lambda df: df.with_columns(
        (pl.col("Datetime (UTC)").str.to_datetime("%Y-%m-%d %H:%M:%S") + pl.duration(hours=1))
        .dt.strftime("%Y-%m-%d %H:%M:%S").alias("Datetime (UTC)")))
    err = _refused(tmp_path, shared_data, "carbon", CARBON, shift)
    assert err.column == "Datetime (UTC)" and "1 of 8760 row(s) lie outside the partition's UTC year 2023" in str(err)
    assert err.rows == [8761] and err.values == ["2024-01-01 00:00:00+00:00"]


def test_a_price_file_reaching_into_the_next_year_is_refused(tmp_path, shared_data):
    """One more hour after the real file's last, consistent in both columns: not the UTC year's."""

    def extra_hour(data: bytes) -> bytes:
        return data + b"2024-01-01 00:00:00+00:00,2024-01-01 01:00:00+01:00,7.0\n"

    err = _refused(tmp_path, shared_data, "price", PRICE, extra_hour)
    assert err.column == "Datetime (UTC)" and err.rows == [8762] and err.values == ["2024-01-01 00:00:00+00:00"]
    assert "1 of 8761 row(s) lie outside the partition's UTC year 2023" in str(err)


def _real_partitions(shared: Path):
    for kind in ("carbon", "price", "weather"):
        for code in locations.all_codes():
            for year in (2022, 2023):
                if registry.in_mirror(kind, code, year, shared):
                    yield kind, code, year


def test_every_real_partition_is_plausible_without_an_override(shared_data):
    """The thresholds leave every real file through (and by how much: the closest margins)."""
    seen = {"carbon": [], "price": [], "weather": []}
    for kind, code, year in _real_partitions(shared_data):
        raw = registry.fetch(kind, locations.get(code), year, mirror=shared_data)
        df = registry.for_raw(raw).parse(raw, locations.get(code), year)
        lon = locations.get(code).lon
        assert plausibility.check(kind, df, file=raw.uri, lon_deg=lon) == [], (kind, code, year)
        seen[kind].append((df, lon) if kind == "weather" else df)
    assert len(seen["carbon"]) >= 30 and len(seen["price"]) >= 30 and len(seen["weather"]) >= 30
    lowest_lca = min(df["carbon_lca_g_per_kwh"].mean() for df in seen["carbon"])
    lowest_direct = min(df["carbon_direct_g_per_kwh"].mean() for df in seen["carbon"])
    lowest_price = min(df["price_usd_per_mwh"].mean() for df in seen["price"])
    assert lowest_lca == pytest.approx(59.3, abs=0.1) and lowest_lca > 10 * quality.MIN_MEAN_CARBON_LCA_G_PER_KWH
    assert lowest_direct == pytest.approx(36.3, abs=0.1)
    assert lowest_price == pytest.approx(10.33, abs=0.01) and lowest_price > 10 * quality.MIN_MEAN_PRICE_USD_PER_MWH
    peaks = [plausibility._diurnal_peak_solar_h(df, lon) for df, lon in seen["weather"]]
    seen["weather"] = [df for df, _lon in seen["weather"]]
    assert min(peaks) == pytest.approx(13.36, abs=0.01) and max(peaks) == pytest.approx(15.0, abs=0.01)
    lo, hi = quality.DIURNAL_PEAK_SOLAR_H
    assert min(peaks) - lo > 0.8 and hi - max(peaks) > 0.9  # the margins of the time-axis check
    assert min(df["rh_pct"].max() for df in seen["weather"]) == 100
    assert sum(int((df["rh_pct"] <= 1).sum()) for df in seen["weather"]) == 0
    assert max(df["temp_c"].mean() for df in seen["weather"]) < 30
    assert sum(int((df["carbon_lca_g_per_kwh"] < df["carbon_direct_g_per_kwh"]).sum()) for df in seen["carbon"]) == 0


def test_a_year_averaging_above_the_hottest_place_on_record_is_refused(shared_data):
    """In bounds hour by hour (≤ 60 °C) but a mean no place has: °F in a mild climate stored as °C."""
    raw = registry.fetch("weather", locations.get("DE-LU"), 2023, mirror=shared_data)
    df = registry.for_raw(raw).parse(raw, locations.get("DE-LU"), 2023)
    mild = df.with_columns(temp_c=pl.col("temp_c").clip(5, 15) * 9 / 5 + 32)  # 41..59 "°C"
    with pytest.raises(DataError, match="mean temperature is 51.4 °C, above the hottest annual mean") as info:
        plausibility.check("weather", mild, file=raw.uri, row_base=0)
    assert info.value.column == "temp_c" and info.value.rows[0] == 0


HALF = 4380  # rows 0..4379 (file lines 2..4381) real, the second half of the year scaled


def _second_half_scaled(*cols: str, by: float):
    return _csv_edit(lambda df: df.with_row_index("_i").with_columns([
        pl.when(pl.col("_i") >= HALF).then(pl.col(c).cast(pl.Float64) * by).otherwise(pl.col(c).cast(pl.Float64))
        .cast(pl.String) for c in cols]).drop("_i"))


def test_half_a_year_of_carbon_divided_by_1000_is_refused_with_its_row_range(tmp_path, shared_data):
    """The whole-file mean stays plausible (~half the real one); the scaled rows are named by range."""
    err = _refused(tmp_path, shared_data, "carbon", CARBON, _second_half_scaled(DIRECT, LCA, by=1e-3))
    assert err.column == "carbon_lca_g_per_kwh"
    # the rolling day's median turns low half a window into the scaled stretch: its range is the stretch's, ±12 h
    text = str(err)
    first, last = (int(x.replace(",", "")) for x in text.split("rows ", 1)[1].split(")", 1)[0].split("-"))
    assert abs(first - (HALF + 2)) <= 12 and last == 8761, text
    assert "a unit or scale error in part of the file" in text and "allow_implausible" in text
    assert err.values[0] == pytest.approx(float(pl.read_csv(shared_data / CARBON)[LCA][err.rows[0] - 2]) / 1000)
    home = Home.resolve(tmp_path / "home")
    rep = ingest_grid("carbon", "DE-LU", 2023, home=home, mirror=tmp_path / "mirror", allow_implausible=True)
    assert rep.overridden == ["scaled_rows_carbon_lca", "scaled_rows_carbon_direct"]
    assert _overridden(home) == [("carbon", "scaled_rows_carbon_lca,scaled_rows_carbon_direct")]


def test_half_a_year_of_prices_divided_by_1000_is_refused_with_its_row_range(tmp_path, shared_data):
    err = _refused(tmp_path, shared_data, "price", PRICE, _second_half_scaled("Price (USD/MWh)", by=1e-3))
    assert err.column == "price_usd_per_mwh" and "a unit or scale error in part of the file" in str(err)
    assert "8,761" in str(err) and min(err.rows) >= HALF + 2 - 84


def test_humidity_as_a_fraction_with_one_reading_in_percent_is_refused(tmp_path, shared_data):
    """One 93 % reading lifts the year's maximum above the whole-file check; the rows still say fraction."""
    def fraction(body):
        rh = body["hourly"]["relative_humidity_2m"]
        body["hourly"]["relative_humidity_2m"] = [None if v is None else v / 100 for v in rh]
        body["hourly"]["relative_humidity_2m"][5000] = 93

    err = _refused(tmp_path, shared_data, "weather", WEATHER, _json_edit(fraction), allow_implausible=True)
    assert err.column == "rh_pct" and "8,759 of 8,760 rows (rows 0-4,999, rows 5,001-8,759)" in str(err)
    assert "a fraction (0..1) where percent is expected" in str(err) and 0 < err.values[0] <= 1


def test_an_open_meteo_file_whose_time_zone_field_lies_is_refused(tmp_path, shared_data):
    """Frankfurt's local times said to be the Azores' (UTC-1): zone and offset agree with each other, and every
    hour would be read 2 h late."""
    def lie(body):
        body["timezone"], body["utc_offset_seconds"], body["timezone_abbreviation"] = "Atlantic/Azores", -3600, "GMT-1"

    err = _refused(tmp_path, shared_data, "weather", WEATHER, _json_edit(lie))
    assert err.column == "timezone" and err.values == ["Atlantic/Azores"]
    assert "is not the location's DE-LU (Europe/Berlin, offsets [3600, 7200] s) nor UTC" in str(err)


@pytest.mark.parametrize("hours", [2, 3, -3])
def test_a_time_axis_shifted_against_the_solar_day_is_refused(shared_data, hours):
    """The temperature's daily cycle peaks ~2-3 h after solar noon (Frankfurt 2023: 14.65 h local solar time): a
    time axis shifted by a wrong offset moves it out of the window; with the override it is recorded."""
    raw = registry.fetch("weather", locations.get("DE-LU"), 2023, mirror=shared_data)
    df = registry.for_raw(raw).parse(raw, locations.get("DE-LU"), 2023)
    lon = locations.get("DE-LU").lon
    peak = plausibility._diurnal_peak_solar_h(df, lon)
    assert peak == pytest.approx(14.65, abs=0.01)
    shifted = df.with_columns(pl.col("ts_utc") + pl.duration(hours=hours))
    assert plausibility._diurnal_peak_solar_h(shifted, lon) == pytest.approx(peak + hours, abs=1e-6)
    with pytest.raises(DataError, match=f"peaks at {peak + hours:.1f} h local solar time") as info:
        plausibility.check("weather", shifted, file=raw.uri, row_base=0, lon_deg=lon)
    assert info.value.column == "ts_utc" and info.value.rows[0] == 0
    assert plausibility.check("weather", shifted, file=raw.uri, lon_deg=lon, allow_implausible=True) == [
        "diurnal_phase"]


#: summer time in Europe 2023 (UTC): the stretch a local-time/DST mishandling moves by an hour
DST = (dt.datetime(2023, 3, 26, 1), dt.datetime(2023, 10, 29, 0))


def _in_dst(col: str = "Datetime (UTC)") -> pl.Expr:
    ts = pl.col(col).str.to_datetime("%Y-%m-%d %H:%M:%S")
    return (ts >= DST[0]) & (ts <= DST[1])


def _refused_zone(tmp_path, shared_data, code: str, mutate, **kw) -> DataError:
    relpath = f"electricitymaps/{code}/{code}_2023_hourly.csv"
    mirror = mirror_with(shared_data, tmp_path, relpath, mutate)
    home = Home.resolve(tmp_path / "home")
    with pytest.raises(DataError) as info:
        ingest_grid("carbon", code, 2023, home=home, mirror=mirror, **kw)
    assert info.value.file.endswith(relpath.split("/")[-1]) and not home.root.exists()
    return info.value


#: the life-cycle column an hour late from the end of March to the end of October (the direct one right)
LCA_LATE = _csv_edit(lambda df: df.with_columns(
    pl.when(_in_dst()).then(pl.col(LCA).shift(1)).otherwise(pl.col(LCA)).alias(LCA)))


@pytest.mark.parametrize("code", ["US-NY-NYIS", "DE-LU"])
def test_one_carbon_column_an_hour_off_for_the_summer_is_refused_with_its_rows(tmp_path, shared_data, code):
    """US-NY-NYIS: no hour gets LCA < direct, so only this check sees it; DE-LU: 69 hours do, and this check
    names the cause before the swap check would. Refused by its row range; with the override, recorded."""
    err = _refused_zone(tmp_path, shared_data, code, LCA_LATE)
    text = str(err)
    assert err.column == "carbon_lca_g_per_kwh" and "direct and life-cycle carbon columns are an hour apart" in text
    assert "with the LCA one hour later" in text and "allow_implausible" in text
    # the stretch is file rows 2,019 (2023-03-26 01:00) to 7,226; the refused weeks cover it, a week at most beyond
    first, last = err.rows
    assert 2019 - 168 <= first <= 2019 + 24 and 7226 - 24 <= last <= 7226 + 168, text
    assert f"rows {first:,}-{last:,}" in text and err.values[0].startswith("2023-03")
    if code == "US-NY-NYIS":
        home = Home.resolve(tmp_path / "home")
        rep = ingest_grid("carbon", code, 2023, home=home, mirror=tmp_path / "mirror", allow_implausible=True)
        assert rep.overridden == ["factor_lag"] and _overridden(home) == [("carbon", "factor_lag")]


def test_timestamps_an_hour_late_for_the_summer_are_refused_at_the_seam(tmp_path, shared_data):
    """The realistic form of "shifted an hour inside the year": local summer time written as UTC. The stretch's
    first hour goes missing and its last lands on the next row's timestamp: refused by the duplicate's rows."""
    late = _csv_edit(lambda df: df.with_columns(
        pl.when(_in_dst()).then(pl.col("Datetime (UTC)").str.to_datetime("%Y-%m-%d %H:%M:%S") + pl.duration(hours=1))
        .otherwise(pl.col("Datetime (UTC)").str.to_datetime("%Y-%m-%d %H:%M:%S"))
        .dt.strftime("%Y-%m-%d %H:%M:%S").alias("Datetime (UTC)")))
    err = _refused_zone(tmp_path, shared_data, "DE-LU", late)
    assert err.column == "Datetime (UTC)" and "duplicated timestamp(s)" in str(err)
    assert err.rows == [7226, 7227] and err.values == ["2023-10-29 01:00:00+00:00"] * 2


def test_every_real_carbon_file_keeps_its_columns_in_step(shared_data):
    """Every week of every real carbon file correlates best at lag 0 (the margin quoted in gridshift.quality)."""
    margins = {}
    for kind, code, year in _real_partitions(shared_data):
        if kind == "carbon":
            raw = registry.fetch(kind, locations.get(code), year, mirror=shared_data)
            weeks = plausibility.factor_lag_weeks(registry.for_raw(raw).parse(raw, locations.get(code), year))
            assert len(weeks) == 358
            margins[(code, year)] = min(c0 - c1 for _s, c0, c1, _lag in weeks)
    assert len(margins) == 32 and min(margins, key=margins.get) == ("DE-LU", 2022)
    assert min(margins.values()) == pytest.approx(0.0816, abs=1e-4)


def test_one_edited_value_on_a_flat_grid_does_not_look_like_a_shifted_column(shared_data):
    """SG's carbon is nearly flat, so one edited value dominated a Pearson correlation of the changes: lag 1 led
    lag 0 by 0.46 in the first week (a false refusal of a one-value upsert). Ranks bound its weight."""
    raw = registry.fetch("carbon", locations.get("SG"), 2023, mirror=shared_data)
    df = registry.for_raw(raw).parse(raw, locations.get("SG"), 2023)
    edited = df.with_columns(pl.when(pl.int_range(pl.len()) == 0).then(123.25)
                             .otherwise(pl.col("carbon_direct_g_per_kwh")).alias("carbon_direct_g_per_kwh"))
    s, c0, c1, _lag = plausibility.factor_lag_weeks(edited)[0]
    assert s == 0 and c0 - c1 > 0.5


def _phase_h(v: np.ndarray, hour: np.ndarray) -> float:
    """The UTC hour at which the first harmonic of ``v`` by hour of day peaks."""
    w = hour * 2 * np.pi / 24
    return float(np.degrees(np.arctan2(np.nanmean(v * np.sin(w)), np.nanmean(v * np.cos(w)))) / 15 % 24)


def _dphase(a: float, b: float) -> float:
    return (a - b + 12) % 24 - 12


def test_a_whole_row_hour_shift_without_a_seam_is_inside_the_natural_jitter(shared_data):
    """Finding, not a check: every value of a summer stretch an hour late, with no trace in the timestamps,
    moves that stretch's daily carbon cycle by 1 h, and nothing in the file shows it. The cycle's phase
    moves by more on its own: between consecutive fortnights (22 % of them by over 1 h), between summer and
    winter (-2.5 to +6.9 h), and in that summer-minus-winter difference from one year to the next (up to
    1.78 h, DE-LU direct). So no threshold refuses the shift without refusing real files (docs/sources.md)."""
    fortnights, season = [], {}
    for path in sorted((shared_data / "electricitymaps").glob("*/*_hourly.csv")):
        df = pl.read_csv(path, infer_schema=False)
        ts = df["Datetime (UTC)"].str.to_datetime("%Y-%m-%d %H:%M:%S")
        hour, summer = ts.dt.hour().to_numpy().astype(float), ts.dt.month().is_between(4, 9).to_numpy()
        for base in (DIRECT, LCA):
            v = df[base].cast(pl.Float64).to_numpy()
            ph = [_phase_h(v[s:s + 336], hour[s:s + 336]) for s in range(0, len(v) - 335, 336)]
            fortnights += [abs(_dphase(a, b)) for a, b in zip(ph[1:], ph[:-1], strict=False)]
            season[(path.parent.name, base, path.name.split("_")[-2])] = _dphase(
                _phase_h(v[summer], hour[summer]), _phase_h(v[~summer], hour[~summer]))
            if path.name == "DE-LU_2023_hourly.csv":  # the shift moves the summer's phase by 1 h
                late = np.where(summer, np.roll(v, 1), v)
                assert _dphase(_phase_h(late[summer], hour[summer]), _phase_h(v[summer], hour[summer])) == (
                    pytest.approx(1.0, abs=0.01))
    jitter = np.array(fortnights)
    assert len(jitter) == 64 * 25 and np.median(jitter) == pytest.approx(0.34, abs=0.01)
    assert (jitter > 1).mean() == pytest.approx(0.22, abs=0.01)
    assert min(season.values()) == pytest.approx(-2.47, abs=0.01)
    assert max(season.values()) == pytest.approx(6.85, abs=0.01)
    yearly = {k[:2]: abs(_dphase(season[(*k[:2], "2023")], season[(*k[:2], "2022")])) for k in season}
    assert max(yearly, key=yearly.get) == ("DE-LU", DIRECT) and max(yearly.values()) == pytest.approx(1.78, abs=0.01)
    assert sum(v > 1 for v in yearly.values()) == 6  # of 32 zone-bases
