"""Every class of bad input: a clear error naming file, column, rows and values, and nothing written."""

from __future__ import annotations

import json

import pytest

from gridshift.errors import DataError
from gridshift.home import Home
from tests.integration.helpers import mirror_with, replace_line, tree_digest
from warehouse.db import read_table
from warehouse.ingest import ingest_grid, ingest_locations
from warehouse.ingest_workload import ingest_workload

CARBON = "electricitymaps/DE-LU/DE-LU_2023_hourly.csv"
PRICE = "prices/standardized/DE-LU/DE-LU_electricity_prices_2023.csv"
WEATHER = "open-meteo/DE-LU/2023.json"


def _set_field(col: int, value: str):
    def edit(line: str) -> str:
        parts = line.split(",")
        parts[col] = value
        return ",".join(parts)

    return edit


def _drop_lines(start: int, count: int):
    def mut(data: bytes) -> bytes:
        lines = data.decode().split("\n")
        del lines[start - 1 : start - 1 + count]
        return "\n".join(lines).encode()

    return mut


def _dup_line(lineno: int):
    def mut(data: bytes) -> bytes:
        lines = data.decode().split("\n")
        lines.insert(lineno, lines[lineno - 1])
        return "\n".join(lines).encode()

    return mut


def _header(old: str, new: str):
    def mut(data: bytes) -> bytes:
        head, rest = data.split(b"\n", 1)
        return head.decode().replace(old, new).encode() + b"\n" + rest

    return mut


def _json_edit(fn):
    def mut(data: bytes) -> bytes:
        body = json.loads(data)
        fn(body)
        return json.dumps(body).encode()

    return mut


def _set_rh(body):
    body["hourly"]["relative_humidity_2m"][100] = 130


def _short_array(body):
    body["hourly"]["temperature_2m"] = body["hourly"]["temperature_2m"][:-5]


def _keep_lines(n: int):
    """Mutation: the header and the first ``n - 1`` data lines."""

    def mut(data: bytes) -> bytes:
        return b"\n".join(data.split(b"\n")[:n]) + b"\n"

    return mut


def _other_file(relpath: str):
    """Mutation: another real file of the mirror in this file's place."""

    def mut(_data: bytes) -> bytes:
        from tests.conftest import shared_data_dir

        return (shared_data_dir() / relpath).read_bytes()

    return mut


def _duplicate_column(name: str, value: str):
    """Mutation: a column named like an existing one, placed first (a reader keeps the first)."""

    def mut(data: bytes) -> bytes:
        lines = data.decode().split("\n")
        return "\n".join([f"{name},{lines[0]}"] + [f"{value},{ln}" if ln else ln for ln in lines[1:]]).encode()

    return mut


def _set_offset(body):
    body["utc_offset_seconds"] = 10**12


def _no_temperatures(body):
    body["hourly"]["temperature_2m"] = [None] * len(body["hourly"]["temperature_2m"])


def _bool_temperature(body):
    body["hourly"]["temperature_2m"][5] = True


def _duplicate_key(data: bytes) -> bytes:
    """The key given twice in the top-level object; a reader keeps the last (11 h off here)."""
    body = data.decode()
    i = body.rindex("}")
    return (body[:i].rstrip() + ', "utc_offset_seconds": 39600\n}\n').encode()


def _nan_temperature(data: bytes) -> bytes:
    body = json.loads(data)
    body["hourly"]["temperature_2m"][7] = float("nan")
    return json.dumps(body).encode()  # Python writes NaN, which JSON does not have


CASES = [
    # (id, kind, relpath, mutation, expected column, expected row (file line) or None, message fragment)
    ("duplicated timestamp", "carbon", CARBON, _dup_line(50), "Datetime (UTC)", 51, "duplicated"),
    ("gap beyond fill limit", "carbon", CARBON, _drop_lines(1000, 5), "Datetime (UTC)", None, "fill limit"),
    ("missing column", "carbon", CARBON, _header("Data Estimated,", "Estimated,"), "Data Estimated", None, "missing"),
    ("renamed price column", "price", PRICE, _header("Price (USD/MWh)", "Price (EUR/MWh)"), "Price (USD/MWh)", None,
     "missing"),
    ("non-numeric value", "carbon", CARBON, replace_line(10, _set_field(4, "abc")),
     "Carbon Intensity gCO₂eq/kWh (direct)", 10, "numeric"),
    ("negative carbon", "carbon", CARBON, replace_line(12, _set_field(4, "-5.0")), "carbon_direct_g_per_kwh", 12,
     "greater_than_or_equal_to"),
    ("zone id mismatch", "carbon", CARBON, replace_line(7, _set_field(3, "FR")), "Zone Id", 7, "zone id"),
    ("unparseable time", "price", PRICE, replace_line(20, _set_field(0, "2023-13-45 00:00:00+00:00")),
     "Datetime (UTC)", 20, "timestamps"),
    ("humidity over 100 %", "weather", WEATHER, _json_edit(_set_rh), "rh_pct", None, "less_than_or_equal_to"),
    ("truncated JSON", "weather", WEATHER, lambda b: b[: len(b) // 2], None, None, "truncated"),
    ("arrays of unequal length", "weather", WEATHER, _json_edit(_short_array), "hourly", None, "unequal"),
    # files that do not belong to their partition
    ("header-only CSV", "carbon", CARBON, _keep_lines(1), "Datetime (UTC)", None, "no data rows"),
    ("the 2022 file in the 2023 slot", "carbon", CARBON, _other_file(CARBON.replace("2023", "2022")),
     "Datetime (UTC)", 2, "outside the partition's UTC year 2023"),
    ("half a year", "carbon", CARBON, _keep_lines(4001), "Datetime (UTC)", None, "covers 45.66% of the UTC year"),
    ("another market's price file", "price", PRICE, _other_file(PRICE.replace("DE-LU", "SG")), "Datetime (Local)",
     2, "not the wall clock of Europe/Berlin"),
    ("Open-Meteo offset of 10**12 s", "weather", WEATHER, _json_edit(_set_offset), "utc_offset_seconds", None,
     "within ±50400"),
    ("no temperature at all", "weather", WEATHER, _json_edit(_no_temperatures), "hourly.time", None, "no data rows"),
    # ambiguous or mistyped values
    ("duplicated CSV header", "carbon", CARBON, _duplicate_column("Carbon Intensity gCO₂eq/kWh (direct)", "1.0"),
     "Carbon Intensity gCO₂eq/kWh (direct)", 1, "appears twice in the header"),
    ("JSON true as a temperature", "weather", WEATHER, _json_edit(_bool_temperature), "hourly.temperature_2m", 5,
     "boolean"),
    ("duplicated JSON key", "weather", WEATHER, _duplicate_key, "utc_offset_seconds", None, "appears twice"),
    ("NaN in JSON", "weather", WEATHER, _nan_temperature, None, None, "NaN is not a JSON number"),
]


@pytest.mark.parametrize(("name", "kind", "relpath", "mutate", "column", "row", "fragment"), CASES,
                         ids=[c[0] for c in CASES])
def test_bad_file_is_refused_and_nothing_is_written(
    tmp_path, shared_data, name, kind, relpath, mutate, column, row, fragment
):
    mirror = mirror_with(shared_data, tmp_path, relpath, mutate)
    home = Home.resolve(tmp_path / "home").ensure()
    ingest_locations(home=home)
    ingest_grid(kind, "SG", 2023, home=home, mirror=mirror)  # the warehouse holds real data already
    before = tree_digest(home.root)

    with pytest.raises(DataError) as info:
        ingest_grid(kind, "DE-LU", 2023, home=home, mirror=mirror)

    err = info.value
    assert err.file and err.file.endswith(relpath.split("/")[-1]), err
    assert fragment in str(err).lower() or fragment in str(err), str(err)
    if column is not None:
        assert err.column == column, str(err)
    if row is not None:
        assert row in err.rows, str(err)
    assert tree_digest(home.root) == before, "a refused file must leave the home byte-for-byte unchanged"


def test_error_message_names_the_value(tmp_path, shared_data):
    mirror = mirror_with(shared_data, tmp_path, CARBON, replace_line(10, _set_field(4, "abc")))
    with pytest.raises(DataError) as info:
        ingest_grid("carbon", "DE-LU", 2023, home=Home.resolve(tmp_path / "h"), mirror=mirror)
    assert "row 10: 'abc'" in str(info.value)


def test_missing_mirror_file_names_the_path(tmp_path):
    from gridshift.errors import SourceUnavailableError

    with pytest.raises(SourceUnavailableError, match="GB_electricity_prices_2023.csv"):
        ingest_grid("price", "GB", 2023, home=Home.resolve(tmp_path / "h"), mirror=tmp_path)


def test_no_mirror_says_how_to_provide_one(tmp_path):
    from gridshift.errors import SourceUnavailableError

    with pytest.raises(SourceUnavailableError, match="--mirror"):
        ingest_grid("carbon", "DE-LU", 2023, home=Home.resolve(tmp_path / "h"), mirror=None)


def test_mirror_paths_cannot_escape(tmp_path):
    from gridshift.home import UnsafePathError, safe_join

    with pytest.raises(UnsafePathError):
        safe_join(tmp_path, "..", "etc")
    with pytest.raises(UnsafePathError):
        safe_join(tmp_path, "a/../../b")
    assert safe_join(tmp_path, "ok", "file.csv") == tmp_path / "ok" / "file.csv"


def test_partial_file_is_ingested_only_when_allowed_and_recorded(tmp_path, shared_data):
    mirror = mirror_with(shared_data, tmp_path, CARBON, _keep_lines(4001))
    home = Home.resolve(tmp_path / "home")
    rep = ingest_grid("carbon", "DE-LU", 2023, home=home, mirror=mirror, allow_partial=True)
    assert rep.allowed_partial and (rep.present, rep.expected) == (4000, 8760)
    q = read_table(home.warehouse_path, "SELECT * FROM partition_quality").row(0, named=True)
    assert (q["signal"], q["location"], q["year"], q["partial"], q["rows"], q["present"]) == (
        "carbon", "DE-LU", 2023, True, 4000, 4000)
    assert q["coverage_frac"] == pytest.approx(4000 / 8760) and q["source"] == "electricitymaps-csv"
    assert read_table(home.warehouse_path, "SELECT count(*) n FROM grid_carbon")["n"][0] == 4000
    # the complete file replaces the record: no longer partial
    full = ingest_grid("carbon", "DE-LU", 2023, home=home, mirror=shared_data)
    assert not full.allowed_partial and full.coverage == 1.0
    q = read_table(home.warehouse_path, "SELECT partial, coverage_frac, estimated_frac FROM partition_quality")
    assert q.rows() == [(False, 1.0, pytest.approx(30 / 8760))]


POD_LIST = "alibaba/gpu-v2023/openb_pod_list_default.csv"


@pytest.mark.parametrize(("field", "value", "column", "stored"), [
    (1, "-12000", "cpu_cores_per_inst", -12.0),
    (9, "inf", "end_s", float("inf")),
    (4, "1000000000000", "gpus_per_inst", 1e9),
    (8, "-5", "arrival_s", -5.0),
], ids=["negative cpu_milli", "infinite deletion_time", "1e12 gpu_milli", "negative creation_time"])
def test_impossible_pod_is_refused_and_nothing_is_written(tmp_path, shared_data, field, value, column, stored):
    """trace_tasks gets range checks like workload_tasks: the whole pod list is refused by name."""
    mirror = mirror_with(shared_data, tmp_path, POD_LIST, replace_line(3, _set_field(field, value)))
    home = Home.resolve(tmp_path / "home")
    with pytest.raises(DataError) as info:
        ingest_workload("alibaba-2023", 2023, home=home, mirror=mirror)
    err = info.value
    assert err.file.endswith("openb_pod_list_default.csv") and err.column == column
    assert err.rows == [3] and err.values == [str(stored)]  # line 3 of the file: pod openb-pod-0001
    assert not home.root.exists()
