"""Alignment: every bundle value for a UTC step is the source value for that UTC time.

The raw files of ../shared/data are read here independently of the pipelines (plain polars/json),
for regions with European (DE-LU), US (US-CAL-CISO) and southern-hemisphere (AU-NSW) DST changes
and a half-hour offset (IN-WE: prices and weather on :30).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta

import polars as pl
import pytest

from tests.integration.scenario_builder.conftest import REGIONS, YEAR

LO, HI = datetime(YEAR, 1, 1, tzinfo=UTC), datetime(YEAR + 1, 1, 1, tzinfo=UTC)
# a day with a DST change per region (local clocks move; UTC steps must not)
DST_DAYS = {"DE-LU": ["2022-03-27", "2022-10-30"], "US-CAL-CISO": ["2022-03-13", "2022-11-06"],
            "AU-NSW": ["2022-04-03", "2022-10-02"], "IN-WE": ["2022-06-01"]}


def _in_year(df: pl.DataFrame) -> pl.DataFrame:
    return df.filter((pl.col("ts_utc") >= LO) & (pl.col("ts_utc") < HI))


def raw_carbon(data, code, year=YEAR):
    df = pl.read_csv(data / f"electricitymaps/{code}/{code}_{year}_hourly.csv", infer_schema=False)
    return df.select(
        ts_utc=pl.col("Datetime (UTC)").str.to_datetime("%Y-%m-%d %H:%M:%S", time_zone="UTC", time_unit="us"),
        src=pl.col("Carbon Intensity gCO₂eq/kWh (direct)").cast(pl.Float64),
    )


def raw_price(data, code, year=YEAR):
    df = pl.read_csv(data / f"prices/standardized/{code}/{code}_electricity_prices_{year}.csv", infer_schema=False)
    return df.select(
        ts_utc=pl.col("Datetime (UTC)").str.to_datetime("%Y-%m-%d %H:%M:%S%:z", time_unit="us")
        .dt.convert_time_zone("UTC"),
        src=pl.col("Price (USD/MWh)").cast(pl.Float64),
    )


def raw_weather(data, code, year=YEAR):
    body = json.loads((data / f"open-meteo/{code}/{year}.json").read_text())
    off = timedelta(seconds=body["utc_offset_seconds"])
    h = body["hourly"]
    ts = [datetime.strptime(t, "%Y-%m-%dT%H:%M").replace(tzinfo=UTC) - off for t in h["time"]]
    return pl.DataFrame({"ts_utc": ts, "temp": h["temperature_2m"], "rh": h["relative_humidity_2m"]},
                        schema_overrides={"ts_utc": pl.Datetime("us", "UTC"), "temp": pl.Float64, "rh": pl.Float64})


@pytest.fixture(scope="module")
def signals(built):
    return pl.read_parquet(built.path / "signals.parquet")


@pytest.mark.parametrize("code", REGIONS)
def test_carbon_equals_source_at_every_source_hour(signals, shared_data, code):
    b = signals.filter(pl.col("location") == code)
    src = _in_year(raw_carbon(shared_data, code))
    j = src.join(b, on="ts_utc", how="left")
    assert j.height == 8760 and j["carbon_g_per_kwh"].null_count() == 0
    assert (j["carbon_g_per_kwh"] == j["src"]).all()  # exactly, not approximately
    # between two hours: linear in UTC (the :30 step is the mean of its two hours)
    nxt = src.with_columns(ts_utc=pl.col("ts_utc") - timedelta(hours=1)).rename({"src": "src_next"})
    half = (src.join(nxt, on="ts_utc").with_columns(ts_utc=pl.col("ts_utc") + timedelta(minutes=30))
            .join(b, on="ts_utc"))
    assert half.height >= 8750
    assert ((half["carbon_g_per_kwh"] - (half["src"] + half["src_next"]) / 2).abs() < 1e-9).all()
    for day in DST_DAYS[code]:
        d = j.filter(pl.col("ts_utc").dt.date() == datetime.fromisoformat(day).date())
        assert d.height == 24 and (d["carbon_g_per_kwh"] == d["src"]).all()


@pytest.mark.parametrize("code", REGIONS)
def test_price_holds_for_its_hour_from_the_utc_source_time(signals, shared_data, code):
    b = signals.filter(pl.col("location") == code).select("ts_utc", "price_usd_per_mwh", "price_is_filled")
    src = raw_price(shared_data, code)
    if code == "IN-WE":
        assert (src["ts_utc"].dt.minute() == 30).all()
    for minutes in (0, 15, 30, 45):
        shifted = src.with_columns(ts_utc=pl.col("ts_utc") + timedelta(minutes=minutes))
        j = _in_year(shifted).join(b, on="ts_utc", how="inner")
        assert j.height >= 8759
        assert (j["price_usd_per_mwh"] == j["src"]).all(), (code, minutes)
        assert not j["price_is_filled"].any()
    for day in DST_DAYS[code]:
        d = _in_year(src).filter(pl.col("ts_utc").dt.date() == datetime.fromisoformat(day).date())
        assert d.join(b, on="ts_utc").filter(pl.col("price_usd_per_mwh") == pl.col("src")).height == d.height == 24


@pytest.mark.parametrize("code", REGIONS)
def test_weather_equals_source_at_every_source_hour(signals, shared_data, code):
    b = signals.filter(pl.col("location") == code)
    src = pl.concat([raw_weather(shared_data, code, YEAR), raw_weather(shared_data, code, YEAR + 1)])
    j = _in_year(src).join(b, on="ts_utc", how="inner")
    expected = 8760 - (7 if code == "US-CAL-CISO" else 0)  # 2021 (first 7 h UTC) is not in the mirror
    assert j.height == expected
    assert (j["temp_c"] == j["temp"]).all() and (j["rh_pct"] == j["rh"]).all()
    assert not j["weather_is_filled"].any()
    if code == "IN-WE":
        assert (j["ts_utc"].dt.minute() == 30).all()
    # wet-bulb never exceeds dry-bulb
    assert (b["wetbulb_c"] <= b["temp_c"] + 1e-9).all()


def test_edge_hold_is_flagged(signals, shared_data):
    b = signals.filter(pl.col("location") == "US-CAL-CISO")
    first = raw_weather(shared_data, "US-CAL-CISO")
    first_temp = first.filter(pl.col("ts_utc") == datetime(YEAR, 1, 1, 7, tzinfo=UTC))["temp"][0]
    head = b.filter(pl.col("ts_utc") < datetime(YEAR, 1, 1, 7, tzinfo=UTC))
    assert head.height == 28 and head["weather_is_filled"].all() and (head["temp_c"] == first_temp).all()
    assert b["weather_is_filled"].sum() == 28
