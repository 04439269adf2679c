"""Every class of bad input: a clear error naming file, column, rows and values, and nothing written."""

from __future__ import annotations

import json

import pytest

from gridshift.errors import DataError
from gridshift.home import Home
from tests.integration.helpers import mirror_with, replace_line, tree_digest
from warehouse.ingest import ingest_grid, ingest_locations

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
