"""A datacenters override file is checked against the declared parameter ranges at export: the refusal names
the file, the parameter (``physics.<field>``), its value and its range."""

from __future__ import annotations

import json

import pytest

from gridshift.errors import DataError
from scenario_builder import datacenters as dcm


@pytest.mark.parametrize("key, value, range_", [
    ("chw_pump_design_frac", -1.0, "[0, 0.2]"),  # exported and ran to -26,428 kWh, PUE -674
    ("chiller_cop_water", 0.0, "[1, 12.3]"),  # exported and ended in a ZeroDivisionError
    ("cpu_leakage_span_k", 0.0, "[1, 100]"),
    ("it_fan_design_frac", -1.0, "[0, 1]"),
])
def test_json_override_outside_the_range_names_file_field_value_and_range(tmp_path, key, value, range_):
    p = tmp_path / "dc.json"
    p.write_text(json.dumps({"datacenters": [{"location": "DE-LU", "physics": {key: value}}]}))
    with pytest.raises(DataError) as info:
        dcm.overridden(["DE-LU"], p)
    err = info.value
    assert err.file == str(p) and err.column == f"physics.{key}"
    assert f"{key} = {value!r} is outside its range {range_}" in str(err)


def test_csv_override_outside_the_range(tmp_path):
    c = tmp_path / "dc.csv"
    c.write_text("location,total_cores,supply_air_c\nDE-LU,1000,1e300\n")
    with pytest.raises(DataError) as info:
        dcm.overridden(["DE-LU"], c)
    assert info.value.column == "physics.supply_air_c" and "outside its range [5, 45]" in str(info.value)
    c.write_text("location,total_cores,supply_air_c\nDE-LU,1000,20\n")
    assert dcm.overridden(["DE-LU"], c)[0]["physics"]["supply_air_c"] == 20.0


@pytest.mark.parametrize(("rows", "column", "match"), [
    # exported, then refused by the bundle's own verify (total_cores outside (0, 1e+09])
    ([{"location": "DE-LU", "total_cores": 1e300}], "total_cores",
     "total_cores = 1e+300 is outside its range (0, 1e+09]"),
    ([{"location": "DE-LU", "total_gpus": -1}], "total_gpus", "outside its range [0, 1e+08]"),
    ([{"location": "DE-LU", "population_weight": "heavy"}], "population_weight", "must be a number"),
    # the last row silently won
    ([{"location": "DE-LU", "total_cores": 10}, {"location": "de-lu", "total_cores": 20}], "location", "given twice"),
    # silently ignored: a location the bundle does not have
    ([{"location": "JP-TK", "total_gpus": 5}], "location", "not a location of this bundle (DE-LU)"),
])
def test_an_override_that_would_be_ignored_or_refused_later_is_refused_now(tmp_path, rows, column, match):
    p = tmp_path / "dc.json"
    p.write_text(json.dumps({"datacenters": rows}))
    with pytest.raises(DataError) as info:
        dcm.overridden(["DE-LU"], p)
    assert info.value.file == str(p) and info.value.column == column and match in str(info.value), str(info.value)


def test_a_lower_case_location_is_applied(tmp_path):
    """``de-lu`` names DE-LU (it was silently ignored)."""
    p = tmp_path / "dc.csv"
    p.write_text("location,total_cores\nde-lu,1234\n")
    assert dcm.overridden(["DE-LU"], p)[0]["total_cores"] == 1234.0
