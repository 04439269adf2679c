"""The price sources' odd cases on small files in their formats: DST days, a half-hour offset zone,
5- and 15-minute markets, ENTSO-E's hourly-to-15-minute switch and A03 curves, the EUR file's CET clock,
gridstatus frames in local time, and files of another market or currency."""

from __future__ import annotations

from datetime import date, datetime, timedelta

import polars as pl
import pytest

from gridshift import locations
from gridshift.errors import DataError
from pipelines.core.fx import MissingRateError
from pipelines.core.raw import RawFile
from pipelines.sources import entsoe, iso
from tests.unit.pipelines.fixtures import grid as G
from tests.unit.pipelines.fixtures.case import parse_mirror, parse_raw, raw_file
from tests.unit.pipelines.fixtures.grid import HOUR, utc

SC, EN, ISO = "sustaincluster-prices-usd", "entsoe-day-ahead", "gridstatus-iso-day-ahead"
MAX_GAP = timedelta(hours=3)


def local_dates(df: pl.DataFrame, tz: str) -> dict[date, int]:
    counts = df.group_by(pl.col("ts_utc").dt.convert_time_zone(tz).dt.date().alias("d")).len()
    return dict(zip(counts["d"].to_list(), counts["len"].to_list(), strict=True))


# ----------------------------------------------------------------------------- the USD files
DST_DAYS = [(utc(2023, 3, 25, 23), 23, date(2023, 3, 26), b"2023-03-26 01:00:00+00:00,2023-03-26 03:00:00+02:00"),
            (utc(2023, 10, 28, 22), 25, date(2023, 10, 29), b"2023-10-29 01:00:00+00:00,2023-10-29 02:00:00+01:00")]


@pytest.mark.parametrize("first,hours,day,line", DST_DAYS, ids=["spring", "autumn"])
def test_usd_file_dst_days_are_23_and_25_local_hours_of_consecutive_utc_hours(tmp_path, first, hours, day, line):
    ts = G.steps(first, hours)  # Berlin: 26 March has no 02:00, 29 October has it twice
    content = G.sustaincluster_csv([(t, 80.0 + i % 7) for i, t in enumerate(ts)], "Europe/Berlin")
    assert line in content  # the wall clock jumps from 01:00 to 03:00, or repeats 02:00
    df = parse_mirror(tmp_path, SC, "DE-LU", 2023, content)
    assert df["ts_utc"].to_list() == ts and local_dates(df, "Europe/Berlin") == {day: hours}


def test_usd_file_of_a_half_hour_offset_zone_keeps_its_half_past_grid(tmp_path):
    ts = G.steps(utc(2023, 1, 1, 0, 30), 48)  # India: local 06:00 is 00:30 UTC
    df = parse_mirror(tmp_path, SC, "IN-WE", 2023, G.sustaincluster_csv([(t, 45.5) for t in ts], "Asia/Kolkata"))
    assert df["ts_utc"].to_list() == ts and df["resolution_min"].unique().to_list() == [60]


@pytest.mark.parametrize("minutes", [5, 15, 30])
def test_usd_file_at_a_sub_hourly_market_interval_gets_that_resolution(tmp_path, minutes):
    ts = G.steps(utc(2023, 1, 1), 3 * 60 // minutes, timedelta(minutes=minutes))  # AEMO settles every 5 min
    rows = [(t, 7425.0 if i == 4 else 60.0 - i) for i, t in enumerate(ts)]  # a real-sized spike is kept
    df = parse_mirror(tmp_path, SC, "AU-NSW", 2023, G.sustaincluster_csv(rows, "Australia/Sydney"))
    assert df["resolution_min"].unique().to_list() == [minutes] and df["ts_utc"].to_list() == ts
    assert df["price_usd_per_mwh"].max() == 7425.0


def test_usd_file_whose_local_column_names_another_instant_is_refused(tmp_path):
    content = G.sustaincluster_csv([(t, 50.0) for t in G.steps(utc(2023, 1, 1), 3)], "Europe/Berlin")
    shifted = content.replace(b"2023-01-01 02:00:00+01:00", b"2023-01-01 02:00:00+02:00")
    with pytest.raises(DataError, match="different instants") as info:
        parse_mirror(tmp_path, SC, "DE-LU", 2023, shifted)
    assert info.value.column == "Datetime (Local)" and info.value.rows == [3]
    assert info.value.values == ["2023-01-01 02:00:00+02:00"]


def test_usd_file_of_another_markets_clock_is_refused(tmp_path):
    london = G.sustaincluster_csv([(t, 50.0) for t in G.steps(utc(2023, 1, 1), 3)], "Europe/London")
    with pytest.raises(DataError, match="not the wall clock of Europe/Berlin") as info:
        parse_mirror(tmp_path, SC, "DE-LU", 2023, london)
    assert info.value.column == "Datetime (Local)" and info.value.rows == [2, 3, 4]


# ----------------------------------------------------------------------------- ENTSO-E mirror file
@pytest.mark.parametrize("first,utc_first", [(datetime(2023, 1, 1), utc(2022, 12, 31, 23)),
                                             (datetime(2023, 7, 1), utc(2023, 6, 30, 23))], ids=["winter", "summer"])
def test_eur_file_naive_times_are_cet_all_year_so_utc_is_one_hour_earlier(tmp_path, first, utc_first):
    naive = G.steps(first, 3)  # the first hour of the year lies in the previous UTC year
    df = parse_mirror(tmp_path, EN, "DE-LU", 2023, G.local_currency_csv([(t, -5.17) for t in naive], "EUR"))
    assert df["ts_utc"].to_list() == G.steps(utc_first, 3)
    assert df["price_local_per_mwh"].to_list() == [-5.17] * 3 and df["currency"].unique().to_list() == ["EUR"]


def test_eur_file_in_another_currency_than_the_markets_is_refused(tmp_path):
    content = G.local_currency_csv([(t, 50.0) for t in G.steps(datetime(2023, 1, 1), 3)], "USD")
    with pytest.raises(DataError, match="market trades in EUR") as info:
        parse_mirror(tmp_path, EN, "DE-LU", 2023, content)
    assert info.value.column == "Price (USD/MWh)"


def test_eur_file_with_offsets_in_its_times_is_refused_naming_the_line(tmp_path):
    content = G.local_currency_csv([(t, 50.0) for t in G.steps(datetime(2023, 1, 1), 3)], "EUR")
    content = content.replace(b"2023-01-01 01:00:00,", b"2023-01-01 01:00:00+01:00,")
    with pytest.raises(DataError, match="naive") as info:
        parse_mirror(tmp_path, EN, "DE-LU", 2023, content)
    assert info.value.column == "Datetime" and info.value.rows == [3]


# ----------------------------------------------------------------------------- ENTSO-E A44 document
def document_rows(tmp_path, days, year=2023, rates=None) -> pl.DataFrame:
    raw = raw_file(tmp_path, EN, "a44.xml", G.entsoe_xml(entsoe.area_code("DE_LU"), days))
    return entsoe.SOURCE.rows(raw, locations.get("DE-LU"), year, max_gap=MAX_GAP, rates=rates)


@pytest.mark.parametrize("day,first,hours", [(date(2023, 3, 26), utc(2023, 3, 25, 23), 23),
                                            (date(2023, 10, 29), utc(2023, 10, 28, 22), 25)], ids=["spring", "autumn"])
def test_a44_business_days_across_dst_are_23_and_25_distinct_utc_hours(tmp_path, day, first, hours):
    days = G.entsoe_days_from_values([60.0 + i for i in range(hours)], day)
    assert [(d.start, d.end) for d in days] == [(first, first + hours * HOUR)]
    df = document_rows(tmp_path, days)
    assert df["ts_utc"].to_list() == G.steps(first, hours)
    assert df["price_local_per_mwh"].to_list() == [60.0 + i for i in range(hours)]


def test_a03_curve_positions_omitted_for_a_repeated_price_are_filled_with_it(tmp_path):
    values = [50.0, 50.0, 50.0, 41.5, 41.5, 38.0] + [45.0] * 18
    days = G.entsoe_days_from_values(values, date(2023, 6, 1))
    assert G.entsoe_xml("x", days).count(b"<Point>") == 4  # positions 2, 3, 5 and 8..24 are left out
    assert document_rows(tmp_path, days)["price_local_per_mwh"].to_list() == values


def test_the_2025_switch_to_15_minute_products_holds_each_hourly_price_over_its_quarters(tmp_path):
    hourly = G.entsoe_days_from_values([80.0 + i for i in range(24)], date(2025, 9, 30), "Europe/Amsterdam")
    quarters = G.entsoe_days_from_values([70.0 + i / 4 for i in range(96)], date(2025, 10, 1), "Europe/Amsterdam", 15)
    df = document_rows(tmp_path, hourly + quarters, 2025, {("EUR", 2025): 1.13})
    assert df.height == 2 * 96 and df["ts_utc"].diff().drop_nulls().unique().to_list() == [timedelta(minutes=15)]
    switch = df.filter(pl.col("ts_utc").is_between(utc(2025, 9, 30, 21), utc(2025, 9, 30, 22, 15)))
    assert switch.select("price_local_per_mwh", "resolution_min").rows() == [
        (103.0, 60), (103.0, 60), (103.0, 60), (103.0, 60), (70.0, 15), (70.25, 15)]


def test_a_native_quarter_hour_price_wins_over_a_held_hourly_one(tmp_path):
    hourly = G.entsoe_days_from_values([80.0] * 24, date(2025, 10, 1), "Europe/Amsterdam")
    quarters = G.entsoe_days_from_values([70.0 + i for i in range(96)], date(2025, 10, 1), "Europe/Amsterdam", 15)
    df = document_rows(tmp_path, hourly + quarters, 2025, {("EUR", 2025): 1.13})
    assert df.height == 96 and df["resolution_min"].unique().to_list() == [15]
    assert df["price_local_per_mwh"].to_list() == [70.0 + i for i in range(96)]


def test_a_year_without_an_exchange_rate_is_refused_naming_the_rate_file(tmp_path):
    days = G.entsoe_days_from_values([80.0] * 24, date(2025, 10, 1), "Europe/Amsterdam")
    with pytest.raises(MissingRateError, match="no USD exchange rate for EUR in 2025 in pipelines/core/data"):
        document_rows(tmp_path, days, 2025)


def test_a_document_for_another_bidding_zone_is_refused(tmp_path):
    days = G.entsoe_days_from_values([80.0] * 24, date(2023, 6, 1))
    raw = RawFile(EN, "file:///fr.xml", G.entsoe_xml(entsoe.area_code("FR"), days))
    with pytest.raises(DataError, match="not DE-LU") as info:
        entsoe.SOURCE.parse(raw, locations.get("DE-LU"), 2023)
    assert info.value.column == "in_Domain.mRID" and info.value.values == [entsoe.area_code("FR")]


# ----------------------------------------------------------------------------- gridstatus
def gridstatus_frame(tz: str, start_local: datetime, n: int, prices: list[float], nodes=("N.Y.C.",)) -> pl.DataFrame:
    """What gridstatus returns: tz-aware local ``Interval Start``/``End``, the node, the LMP."""
    start = pl.Series([start_local]).dt.replace_time_zone(tz)[0]
    utc_start = pl.Series([start]).dt.convert_time_zone("UTC")[0]
    ts = pl.Series("Interval Start", [utc_start + i * HOUR for i in range(n)]).dt.convert_time_zone(tz)
    frames = [pl.DataFrame({"Interval Start": ts, "Interval End": ts + HOUR, "Location": node,
                            "Location Type": "Zone", "Market": "DAY_AHEAD_HOURLY", "LMP": prices})
              for node in nodes]
    return pl.concat(frames)


def test_a_gridstatus_frame_in_local_time_becomes_utc_hours_on_a_23_hour_day(tmp_path):
    spec = iso.SPECS["NYISO"]
    frame = gridstatus_frame("US/Eastern", datetime(2023, 3, 12), 23, [40.0 + i for i in range(23)],
                             nodes=("N.Y.C.", "WEST"))
    content = iso.normalize(frame, spec)
    assert content.startswith(b"interval_start_utc,interval_end_utc,node,price,currency\n2023-03-12T05:00:00Z,")
    df = parse_raw(tmp_path, ISO, "US-NY-NYIS", 2023, "pull.csv", content)
    assert df["ts_utc"].to_list() == G.steps(utc(2023, 3, 12, 5), 23)  # only N.Y.C., one row per hour
    assert local_dates(df, "US/Eastern") == {date(2023, 3, 12): 23}
    assert df["price_usd_per_mwh"].to_list() == [40.0 + i for i in range(23)]


def test_a_gridstatus_frame_with_naive_times_is_refused():
    frame = gridstatus_frame("US/Eastern", datetime(2023, 6, 1), 3, [40.0] * 3)
    with pytest.raises(DataError, match="naive"):
        iso.normalize(frame.with_columns(pl.col("Interval Start").dt.replace_time_zone(None)), iso.SPECS["NYISO"])


def test_ieso_prices_in_cad_are_converted_at_the_years_rate(tmp_path):
    rows = list(zip(G.steps(utc(2023, 5, 1, 4), 3), [31.5, 28.0, -2.5], strict=True))
    raw = raw_file(tmp_path, ISO, "CA-ON_2023.csv", G.iso_pull_csv(rows, node="ONTARIO", currency="CAD"))
    df = iso.SOURCE.rows(raw, locations.get("CA-ON"), 2023, max_gap=MAX_GAP, rates={("CAD", 2023): 0.74})
    assert df["price_usd_per_mwh"].to_list() == [31.5 * 0.74, 28.0 * 0.74, -2.5 * 0.74]
    assert df["currency"].unique().to_list() == ["CAD"] and df["usd_per_local"].unique().to_list() == [0.74]


def test_a_pull_in_another_currency_than_the_markets_is_refused(tmp_path):
    content = G.iso_pull_csv([(utc(2023, 5, 1), 30.0)], node="TH_NP15_GEN-APND", currency="CAD")
    with pytest.raises(DataError, match="is not USD") as info:
        parse_raw(tmp_path, ISO, "US-CAL-CISO", 2023, "pull.csv", content)
    assert info.value.column == "currency"


def test_a_five_minute_pull_gets_five_minute_rows(tmp_path):
    step = timedelta(minutes=5)
    content = G.iso_pull_csv([(t, 55.0) for t in G.steps(utc(2023, 8, 1), 12, step)], node="HB_HUBAVG", step=step)
    df = parse_raw(tmp_path, ISO, "US-TEX-ERCO", 2023, "pull.csv", content)
    assert df.height == 12 and df["resolution_min"].unique().to_list() == [5]


def test_a_repeated_hour_in_a_pull_is_reported_at_its_file_lines_after_rows_of_other_years(tmp_path):
    ts = [utc(2022, 12, 31, 22), utc(2022, 12, 31, 23), utc(2023, 1, 1), utc(2023, 1, 1, 1), utc(2023, 1, 1, 1)]
    content = G.iso_pull_csv([(t, 30.0) for t in ts], node="TH_NP15_GEN-APND")
    with pytest.raises(DataError, match="duplicated") as info:
        parse_raw(tmp_path, ISO, "US-CAL-CISO", 2023, "pull.csv", content)
    assert info.value.rows == [5, 6]  # lines 2 and 3 hold the 2022 hours the partition leaves out
