"""Open-Meteo's own axes: the offsets a zone takes in a year, and units converted or refused by name."""

from __future__ import annotations

import polars as pl
import pytest

from gridshift.errors import DataError
from pipelines.sources.openmeteo_axes import unit_conversions, zone_offsets

HOURLY = {"temperature_2m": "temp_c", "relative_humidity_2m": "rh_pct", "windspeed_10m": "windspeed_kmh"}


def test_zone_offsets_follow_the_zone_rules_of_the_year():
    assert zone_offsets("Europe/Berlin", 2023) == {3600, 7200}
    assert zone_offsets("Australia/Sydney", 2023) == {36000, 39600}
    assert zone_offsets("Asia/Kolkata", 2023) == {19800}
    assert zone_offsets("GMT", 2023) == {0}
    assert zone_offsets("America/Sao_Paulo", 2018) == {-10800, -7200}  # DST until 2019
    assert zone_offsets("America/Sao_Paulo", 2023) == {-10800}


def test_units_are_converted_to_the_canonical_ones():
    df = pl.DataFrame({"temp_c": [32.0, 212.0], "rh_pct": [50.0, 60.0], "windspeed_kmh": [10.0, 0.0]})
    exprs = unit_conversions({"hourly_units": {"temperature_2m": "°F", "relative_humidity_2m": "%",
                                               "windspeed_10m": "m/s"}}, HOURLY, "f.json")
    out = df.with_columns(exprs)
    assert out["temp_c"].to_list() == pytest.approx([0.0, 100.0])
    assert out["windspeed_kmh"].to_list() == pytest.approx([36.0, 0.0])
    assert out["rh_pct"].to_list() == [50.0, 60.0]
    assert unit_conversions({}, HOURLY, "f.json") == []  # no hourly_units: the API's defaults


@pytest.mark.parametrize(("units", "column"), [
    ({"relative_humidity_2m": "fraction"}, "hourly_units.relative_humidity_2m"),
    ({"temperature_2m": "K"}, "hourly_units.temperature_2m"),
    ("°C", "hourly_units"),
])
def test_an_unknown_unit_is_refused_by_name(units, column):
    with pytest.raises(DataError) as info:
        unit_conversions({"hourly_units": units}, HOURLY, "f.json")
    assert info.value.column == column and info.value.file == "f.json"
