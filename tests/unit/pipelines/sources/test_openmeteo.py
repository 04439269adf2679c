"""Open-Meteo's odd cases on small responses in its formats: the archive JSON's fixed offsets (half-hour
India, Sydney in summer time, California's PDT all year), missing hours, what the JSON must refuse, and
the FlatBuffers route giving the same rows as the JSON for the same hours."""

from __future__ import annotations

import json
import math
from dataclasses import replace
from datetime import datetime

import numpy as np
import polars as pl
import pytest

from gridshift.errors import DataError
from pipelines.core import http
from tests.unit.pipelines.fixtures import grid as G
from tests.unit.pipelines.fixtures.case import parse_mirror, parse_raw, with_bad
from tests.unit.pipelines.fixtures.grid import utc

OM, OMA = "open-meteo-archive", "open-meteo-archive-api"
MUMBAI = G.Place(19.1, 72.85, 19_800, "Asia/Kolkata", "GMT+5:30", 9.0)
SYDNEY = G.Place(-33.85, 151.2, 39_600, "Australia/Sydney", "GMT+11", 69.0)
SAN_JOSE = G.Place(37.43, -121.95, -25_200, "America/Los_Angeles", "GMT-7", 7.0)
FRANKFURT = G.Place(50.1, 8.7, 3600, "Europe/Berlin", "GMT+1", 111.0)


def stull_wetbulb_c(t: float, rh: float) -> float:
    """Stull (2011), J. Appl. Meteor. Climatol. 50, eq. 1."""
    return (t * math.atan(0.151977 * math.sqrt(rh + 8.313659)) + math.atan(t + rh) - math.atan(rh - 1.676331)
            + 0.00391838 * rh ** 1.5 * math.atan(0.023101 * rh) - 4.686035)


@pytest.mark.parametrize("code,place,first", [
    ("IN-WE", MUMBAI, utc(2022, 12, 31, 18, 30)),  # UTC+5:30: half-past UTC hours
    ("AU-NSW", SYDNEY, utc(2022, 12, 31, 13)),  # the local year starts 11 h before the UTC year
    ("US-CAL-CISO", SAN_JOSE, utc(2023, 1, 1, 7)),  # PDT (UTC-7) for the whole file, winter included
], ids=["india", "sydney", "california"])
def test_archive_times_are_shifted_by_the_one_fixed_offset_of_the_response(tmp_path, code, place, first):
    w = G.weather_hours(48, mean_c=20.0)
    df = parse_mirror(tmp_path, OM, code, 2023, G.openmeteo_json(place, datetime(2023, 1, 1), w))
    assert df["ts_utc"].to_list() == G.steps(first, 48)
    assert df["temp_c"].to_list() == w.temp_c and df["rh_pct"].to_list() == [float(v) for v in w.rh_pct]


def test_the_archive_clock_has_no_gap_at_a_spring_dst_change(tmp_path):
    # 26 March in Berlin: the response's times run 00:00, 01:00, 02:00, 03:00 (a fixed UTC+1 clock)
    content = G.openmeteo_json(FRANKFURT, datetime(2023, 3, 26), G.weather_hours(5))
    assert b'"2023-03-26T02:00"' in content
    df = parse_mirror(tmp_path, OM, "DE-LU", 2023, content)
    assert df["ts_utc"].to_list() == G.steps(utc(2023, 3, 25, 23), 5)


def test_wet_bulb_follows_stulls_formula_on_the_written_values(tmp_path):
    w = G.Weather([20.0, 30.0, -5.0], [50, 80, 95], [0, 50, 100], [5.0, 0.0, 40.0])
    df = parse_mirror(tmp_path, OM, "DE-LU", 2023, G.openmeteo_json(FRANKFURT, datetime(2023, 5, 1), w))
    assert df["wetbulb_c"].to_list() == pytest.approx([stull_wetbulb_c(t, rh) for t, rh in zip(w.temp_c, w.rh_pct,
                                                                                                 strict=True)])
    assert df["wetbulb_c"][0] == pytest.approx(13.7, abs=0.05)  # Stull's own example: 20 °C, 50 % -> 13.7 °C


def test_hours_without_temperature_or_humidity_are_missing_and_a_long_run_of_them_is_refused(tmp_path):
    w = G.weather_hours(12)
    w3 = replace(w, temp_c=[*w.temp_c[:4], None, None, None, *w.temp_c[7:]], rh_pct=with_bad(w.rh_pct, 9, None))
    df = parse_mirror(tmp_path, OM, "DE-LU", 2023, G.openmeteo_json(FRANKFURT, datetime(2023, 5, 1), w3))
    assert df.height == 8 and df["temp_c"].null_count() == 0  # missing, not zero
    w4 = replace(w, temp_c=[*w.temp_c[:4], None, None, None, None, *w.temp_c[8:]])
    with pytest.raises(DataError, match="longer than the fill limit") as info:
        parse_mirror(tmp_path / "b", OM, "DE-LU", 2023, G.openmeteo_json(FRANKFURT, datetime(2023, 5, 1), w4))
    assert info.value.column == "hourly.time"


def body_with(**changes) -> bytes:
    body = json.loads(G.openmeteo_json(FRANKFURT, datetime(2023, 5, 1), G.weather_hours(4)))
    for key, value in changes.items():
        body[key] = value
    return json.dumps(body).encode()


@pytest.mark.parametrize("change,column", [
    ({"utc_offset_seconds": 15 * 3600}, "utc_offset_seconds"),  # beyond UTC+14
    ({"utc_offset_seconds": 3600.5}, "utc_offset_seconds"),
    ({"latitude": 48.1}, "latitude"),  # another place's response (Munich-sized error: 2°)
], ids=["offset-beyond-14h", "fractional-offset", "coordinates"])
def test_an_archive_header_that_cannot_be_this_locations_is_refused(tmp_path, change, column):
    with pytest.raises(DataError) as info:
        parse_mirror(tmp_path, OM, "DE-LU", 2023, body_with(**change))
    assert info.value.column == column and info.value.file.endswith("open-meteo/DE-LU/2023.json")


def test_an_offset_given_twice_is_refused_not_read_as_the_last_one(tmp_path):
    content = G.openmeteo_json(FRANKFURT, datetime(2023, 5, 1), G.weather_hours(4))
    twice = content.replace(b'"utc_offset_seconds": 3600,', b'"utc_offset_seconds": 3600, "utc_offset_seconds": 39600,')
    with pytest.raises(DataError, match="appears twice") as info:
        parse_mirror(tmp_path, OM, "DE-LU", 2023, twice)
    assert info.value.column == "utc_offset_seconds"


def test_hourly_arrays_of_unequal_length_are_refused(tmp_path):
    w = G.weather_hours(4)
    content = G.openmeteo_json(FRANKFURT, datetime(2023, 5, 1), replace(w, wind_kmh=w.wind_kmh[:3]))
    with pytest.raises(DataError, match="unequal lengths") as info:
        parse_mirror(tmp_path, OM, "DE-LU", 2023, content)
    assert info.value.column == "hourly"


def test_a_boolean_humidity_is_refused_naming_its_position(tmp_path):
    w = G.weather_hours(4)
    content = G.openmeteo_json(FRANKFURT, datetime(2023, 5, 1), replace(w, rh_pct=with_bad(w.rh_pct, 2, True)))
    with pytest.raises(DataError, match="boolean") as info:
        parse_mirror(tmp_path, OM, "DE-LU", 2023, content)
    assert info.value.column == "hourly.relative_humidity_2m" and info.value.rows == [2]


# ----------------------------------------------------------------------------- FlatBuffers
MAY_1 = utc(2023, 5, 1)


def fb(w: G.Weather, start=MAY_1, lat=50.1, lon=8.7, variables=None) -> bytes:
    t0 = int(start.timestamp())
    return G.build_weather_fb(lat, lon, t0, t0 + 3600 * len(w.temp_c), variables or G.flatbuffers_weather(w))


def test_flatbuffers_and_archive_json_give_the_same_rows_for_the_same_hours(tmp_path):
    w = G.weather_hours(24, mean_c=14.0)
    from_json = parse_mirror(tmp_path, OM, "DE-LU", 2023, G.openmeteo_json(FRANKFURT, datetime(2023, 5, 1, 1), w))
    from_fb = parse_raw(tmp_path, OMA, "DE-LU", 2023, "archive.fb", fb(w))
    assert from_fb.drop("source", "raw_sha256").equals(from_json.drop("source", "raw_sha256"))


def test_float32_values_come_back_as_the_decimals_the_archive_prints(tmp_path):
    w = G.Weather([12.3, -0.1, 35.7], [61, 99, 7], [0, 13, 100], [3.6, 0.4, 27.9])
    assert float(np.float32(12.3)) == 12.300000190734863  # what the wire carries
    df = parse_raw(tmp_path, OMA, "DE-LU", 2023, "archive.fb", fb(w))
    assert df["temp_c"].to_list() == [12.3, -0.1, 35.7] and df["windspeed_kmh"].to_list() == [3.6, 0.4, 27.9]


def test_a_truncated_flatbuffers_stream_is_refused(tmp_path):
    content = fb(G.weather_hours(6))
    with pytest.raises(http.DownloadError, match="truncated"):
        parse_raw(tmp_path, OMA, "DE-LU", 2023, "archive.fb", content[: len(content) // 2])


def test_flatbuffers_variables_in_another_order_are_refused(tmp_path):
    w = G.weather_hours(6)
    swapped = G.flatbuffers_weather(w)
    swapped[0], swapped[1] = swapped[1], swapped[0]
    with pytest.raises(DataError, match="expected temperature_2m") as info:
        parse_raw(tmp_path, OMA, "DE-LU", 2023, "archive.fb", fb(w, variables=swapped))
    assert info.value.column == "hourly.temperature_2m"


def test_flatbuffers_for_other_coordinates_are_refused(tmp_path):
    with pytest.raises(DataError, match="latitude"):
        parse_raw(tmp_path, OMA, "DE-LU", 2023, "archive.fb", fb(G.weather_hours(3), lat=40.4, lon=-3.7))


def test_a_nan_temperature_in_flatbuffers_is_a_missing_hour(tmp_path):
    w = G.weather_hours(6)
    df = parse_raw(tmp_path, OMA, "DE-LU", 2023, "archive.fb", fb(replace(w, temp_c=with_bad(w.temp_c, 2, None))))
    assert df.height == 5 and utc(2023, 5, 1, 2) not in df["ts_utc"].to_list()
    assert df.filter(pl.col("ts_utc") == utc(2023, 5, 1, 3))["temp_c"].to_list() == [w.temp_c[3]]


def test_a_repeated_or_off_grid_time_is_reported_at_its_json_array_position(tmp_path):
    # position 1 has no temperature (dropped as a missing hour); positions 4 and 5 name one time, or 5 is off the grid
    w = G.weather_hours(8)
    w = replace(w, temp_c=with_bad(w.temp_c, 1, None))
    body = json.loads(G.openmeteo_json(FRANKFURT, datetime(2023, 5, 1), w))
    for value, message, rows in ((body["hourly"]["time"][4], "duplicated", [4, 5]),
                                 ("2023-05-01T04:30", "off the 1:00:00 grid", [5])):
        body["hourly"]["time"][5] = value
        with pytest.raises(DataError, match=message) as info:
            parse_mirror(tmp_path / message[:3], OM, "DE-LU", 2023, json.dumps(body).encode())
        assert info.value.column == "hourly.time" and info.value.rows == rows


def test_a_flatbuffers_gap_is_reported_at_the_array_position_after_it(tmp_path):
    w = G.weather_hours(10)
    w = replace(w, temp_c=[w.temp_c[0], None, *w.temp_c[2:4], None, None, None, None, *w.temp_c[8:]])
    with pytest.raises(DataError, match="longer than the fill limit") as info:
        parse_raw(tmp_path, OMA, "DE-LU", 2023, "archive.fb", fb(w))
    assert info.value.rows == [8] and info.value.values == [str(utc(2023, 5, 1, 8))]
