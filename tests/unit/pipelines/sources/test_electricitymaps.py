"""Electricity Maps' odd cases on small files in its formats: zone ids that differ from the location code,
zones estimated every hour, flags and values the parser must refuse, the API's two factors joined."""

from __future__ import annotations

import json
from dataclasses import replace
from datetime import timedelta

import pytest

from gridshift.errors import DataError
from pipelines.sources import electricitymaps as em
from tests.unit.pipelines.fixtures import grid as G
from tests.unit.pipelines.fixtures.case import parse_mirror, parse_raw
from tests.unit.pipelines.fixtures.grid import utc

CSV, API = em.CSV.name, em.API.name


def csv_of(hours, zone_id="DE", country="Germany", zone_name="Germany") -> bytes:
    return G.emaps_csv(hours, zone_id=zone_id, country=country, zone_name=zone_name, data_source="entsoe.eu")


def test_a_zone_id_other_than_the_location_code_is_read_when_it_is_the_registrys(tmp_path):
    hours = G.carbon_hours(utc(2022, 6, 1), 48, base=110.0)  # a hydro-heavy grid
    df = parse_mirror(tmp_path, CSV, "BR-SP", 2022, csv_of(hours, "BR-CS", "Brazil", "Central Brazil"))
    assert df["emaps_zone"].unique().to_list() == ["BR-CS"] and df["location"].unique().to_list() == ["BR-SP"]
    assert df["carbon_direct_g_per_kwh"].to_list() == [h.direct for h in hours]


def test_another_zones_file_is_refused_naming_the_zone_id_column_and_lines(tmp_path):
    with pytest.raises(DataError, match="zone id does not match location DE-LU") as info:
        parse_mirror(tmp_path, CSV, "DE-LU", 2023, csv_of(G.carbon_hours(utc(2023, 1, 1), 3), "FR", "France", "France"))
    assert info.value.column == em.COL_ZONE and info.value.rows == [2, 3, 4] and info.value.values == ["FR"] * 3


def test_an_empty_zone_id_is_refused_not_passed_on_as_null(tmp_path):
    content = csv_of(G.carbon_hours(utc(2023, 1, 1), 3)).replace(b",Germany,DE,", b",Germany,,", 1)
    with pytest.raises(DataError, match="zone id does not match") as info:
        parse_mirror(tmp_path, CSV, "DE-LU", 2023, content)
    assert info.value.column == em.COL_ZONE and info.value.rows == [2] and info.value.values == [None]


def test_a_zone_estimated_every_hour_keeps_every_row_flagged_with_its_method(tmp_path):
    hours = [replace(h, estimated=True, method="ESTIMATED_MODE_BREAKDOWN")
             for h in G.carbon_hours(utc(2023, 1, 1), 48, base=700.0)]  # coal-heavy western India
    df = parse_mirror(tmp_path, CSV, "IN-WE", 2023, csv_of(hours, "IN-WE", "India", "Western India"))
    assert df.height == 48 and df["is_estimated"].all()
    assert df["estimation_method"].unique().to_list() == ["ESTIMATED_MODE_BREAKDOWN"]


@pytest.mark.parametrize("flag", ["yes", "1", ""])
def test_an_estimated_flag_other_than_true_or_false_is_refused(tmp_path, flag):
    hours = G.carbon_hours(utc(2023, 1, 1), 4)
    hours[2] = replace(hours[2], estimated=flag)
    with pytest.raises(DataError, match="true or false") as info:
        parse_mirror(tmp_path, CSV, "DE-LU", 2023, csv_of(hours))
    assert info.value.column == em.COL_EST and info.value.rows == [4]


def test_a_missing_direct_intensity_is_refused_while_a_missing_lca_is_kept_as_null(tmp_path):
    hours = G.carbon_hours(utc(2023, 1, 1), 4)
    no_lca = parse_mirror(tmp_path, CSV, "DE-LU", 2023, csv_of([*hours[:3], replace(hours[3], lca=None)]))
    assert no_lca["carbon_lca_g_per_kwh"].to_list() == [h.lca for h in hours[:3]] + [None]
    with pytest.raises(DataError, match="required value") as info:
        parse_mirror(tmp_path / "b", CSV, "DE-LU", 2023, csv_of([*hours[:3], replace(hours[3], direct="")]))
    assert info.value.column == em.COL_DIRECT and info.value.rows == [5]


def test_a_repeated_hour_is_refused_naming_both_lines(tmp_path):
    hours = G.carbon_hours(utc(2023, 1, 1), 4)
    with pytest.raises(DataError, match="duplicated timestamp") as info:
        parse_mirror(tmp_path, CSV, "DE-LU", 2023, csv_of([*hours, hours[1]]))
    assert info.value.column == em.COL_TS and info.value.rows == [3, 6]


def test_a_gap_up_to_the_fill_limit_passes_and_a_longer_one_is_refused(tmp_path):
    hours = G.carbon_hours(utc(2023, 1, 1), 12)
    three_missing = parse_mirror(tmp_path, CSV, "DE-LU", 2023, csv_of(hours[:4] + hours[7:]))
    assert three_missing.height == 9
    with pytest.raises(DataError, match="longer than the fill limit") as info:
        parse_mirror(tmp_path / "b", CSV, "DE-LU", 2023, csv_of(hours[:4] + hours[8:]))
    assert info.value.rows == [6] and info.value.values == [str(hours[8].ts)]


def test_the_ascii_spelling_of_the_unit_header_is_a_missing_column(tmp_path):
    content = csv_of(G.carbon_hours(utc(2023, 1, 1), 2)).replace("gCO₂eq".encode(), b"gCO2eq")
    with pytest.raises(DataError, match="missing or renamed") as info:
        parse_mirror(tmp_path, CSV, "DE-LU", 2023, content)
    assert info.value.column == em.COL_DIRECT


# ----------------------------------------------------------------------------- API v3
def test_the_api_joins_both_factors_on_the_hour_and_an_estimate_in_either_flags_it(tmp_path):
    hours = G.carbon_hours(utc(2023, 7, 1), 6)
    doc = json.loads(G.emaps_api_document(hours, zone="DE"))
    lifecycle = doc["responses"][1]["body"]["data"]
    assert doc["responses"][1]["factor"] == "lifecycle"
    lifecycle[2]["isEstimated"] = True  # only the life-cycle value of hour 2 is an estimate
    del lifecycle[4]  # and hour 4 has no life-cycle value
    df = parse_raw(tmp_path, API, "DE-LU", 2023, "doc.json", json.dumps(doc).encode())
    assert df["carbon_direct_g_per_kwh"].to_list() == [h.direct for h in hours]
    assert df["carbon_lca_g_per_kwh"].to_list() == [h.lca for h in hours[:4]] + [None, hours[5].lca]
    assert df["is_estimated"].to_list() == [False, False, True, False, False, False]


def test_an_api_answer_for_another_zone_is_refused(tmp_path):
    content = G.emaps_api_document(G.carbon_hours(utc(2023, 7, 1), 3), zone="FR")
    with pytest.raises(DataError, match="zone id does not match location DE-LU") as info:
        parse_raw(tmp_path, API, "DE-LU", 2023, "doc.json", content)
    assert info.value.column == "zone" and info.value.values == ["FR"] * 3


def test_a_boolean_intensity_in_the_api_is_refused_not_read_as_one(tmp_path):
    hours = G.carbon_hours(utc(2023, 7, 1), 3)
    doc = json.loads(G.emaps_api_document(hours, zone="DE"))
    doc["responses"][0]["body"]["data"][1]["carbonIntensity"] = True
    with pytest.raises(DataError, match="boolean") as info:
        parse_raw(tmp_path, API, "DE-LU", 2023, "doc.json", json.dumps(doc).encode())
    assert info.value.column == "direct.carbonIntensity" and info.value.rows == [1]


def test_api_hours_are_interval_starts_in_utc(tmp_path):
    hours = G.carbon_hours(utc(2023, 12, 31, 21), 3)
    df = parse_raw(tmp_path, API, "DE-LU", 2023, "doc.json", G.emaps_api_document(hours, zone="DE"))
    assert df["ts_utc"].to_list() == [utc(2023, 12, 31, 21) + timedelta(hours=i) for i in range(3)]
