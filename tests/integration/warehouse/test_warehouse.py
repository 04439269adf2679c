"""Warehouse: DDL from the schemas, idempotent and atomic loads, tz-aware UTC round trips."""

from __future__ import annotations

from datetime import UTC, datetime

import duckdb
import polars as pl
import pytest

from gridshift.errors import DataError
from gridshift.home import Home
from tests.integration.helpers import mirror_with, replace_line, tree_digest
from warehouse.db import read_table
from warehouse.ddl import create_table_sql
from warehouse.ingest import ingest_egress, ingest_grid, ingest_locations, ingest_network
from warehouse.load import validate, write
from warehouse.schemas import TABLES


def _snapshot(home: Home) -> dict[str, pl.DataFrame]:
    return {
        name: read_table(home.warehouse_path, f'SELECT * FROM "{name}" ORDER BY ALL') for name in TABLES
    }


def test_ddl_is_derived_from_the_schema():
    sql = create_table_sql(TABLES["grid_carbon"])
    assert '"ts_utc" TIMESTAMPTZ NOT NULL' in sql
    assert '"carbon_direct_g_per_kwh" DOUBLE' in sql and '"estimation_method" VARCHAR,' in sql
    assert sql.endswith('PRIMARY KEY ("location", "ts_utc"))')


def test_reingest_is_idempotent(tmp_path, shared_data):
    home = Home.resolve(tmp_path / "h")
    ingest_locations(home=home)
    for kind in ("carbon", "price", "weather"):
        ingest_grid(kind, "DE-LU", 2023, home=home, mirror=shared_data)
    first = _snapshot(home)
    landed = tree_digest(home.raw_dir)
    for kind in ("carbon", "price", "weather"):
        ingest_grid(kind, "DE-LU", 2023, home=home, mirror=shared_data)
    second = _snapshot(home)
    for name in TABLES:  # raw_files included: fetched_at is the first landing of the bytes
        assert first[name].equals(second[name]), name
    assert first["grid_carbon"].height == 8760 and first["raw_files"].height == 3
    assert tree_digest(home.raw_dir) == landed


def _sha(path) -> str:
    import hashlib

    return hashlib.sha256(path.read_bytes()).hexdigest()


def test_reingest_of_identical_data_changes_no_byte_of_the_warehouse(tmp_path, shared_data):
    home = Home.resolve(tmp_path / "h")

    def everything():
        ingest_locations(home=home)
        for kind in ("carbon", "price", "weather"):
            for code in ("DE-LU", "SG"):
                ingest_grid(kind, code, 2023, home=home, mirror=shared_data)
        ingest_egress(home=home, mirror=shared_data, source="repo")
        ingest_network(home=home, mirror=shared_data)

    everything()
    before, landed = _sha(home.warehouse_path), tree_digest(home.root)
    everything()
    assert _sha(home.warehouse_path) == before
    assert tree_digest(home.root) == landed  # nothing else under the home changed either
    # a changed file is still an upsert: its rows replace the stored ones, and its bytes are new lineage
    mirror = mirror_with(shared_data, tmp_path, "electricitymaps/SG/SG_2023_hourly.csv",
                         replace_line(2, lambda ln: ln.replace(ln.split(",")[4], "123.25", 1)))
    ingest_grid("carbon", "SG", 2023, home=home, mirror=mirror)
    assert _sha(home.warehouse_path) != before
    first = read_table(home.warehouse_path, "SELECT carbon_direct_g_per_kwh c, raw_sha256 FROM grid_carbon "
                       "WHERE location = 'SG' AND ts_utc = '2023-01-01 00:00:00+00'")
    assert first["c"].to_list() == [123.25]
    shas = read_table(home.warehouse_path, "SELECT DISTINCT raw_sha256 FROM grid_carbon WHERE location = 'SG'")
    assert shas["raw_sha256"].to_list() == first["raw_sha256"].to_list()  # the whole partition is the new file's
    # 6 grid files, the egress rule table, the network's two inputs (Persico, Azure RTTs), the changed file
    assert read_table(home.warehouse_path, "SELECT count(*) n FROM raw_files")["n"][0] == 6 + 1 + 2 + 1
    assert read_table(home.warehouse_path, "SELECT count(*) n FROM grid_carbon WHERE location = 'SG'")["n"][0] == 8760


def test_timestamps_round_trip_as_utc(tmp_path, shared_data):
    home = Home.resolve(tmp_path / "h")
    ingest_grid("carbon", "US-CAL-CISO", 2023, home=home, mirror=shared_data)
    df = read_table(home.warehouse_path, "SELECT * FROM grid_carbon ORDER BY ts_utc")
    assert df["ts_utc"].dtype == pl.Datetime("us", "UTC")
    assert df["ts_utc"][0] == datetime(2023, 1, 1, tzinfo=UTC)
    row = df.filter(pl.col("ts_utc") == datetime(2023, 3, 12, 10, tzinfo=UTC)).row(0, named=True)
    assert row["carbon_direct_g_per_kwh"] is not None and row["location"] == "US-CAL-CISO"
    # the raw file is landed by hash and recorded with its lineage
    raw = read_table(home.warehouse_path, "SELECT * FROM raw_files")
    assert raw.row(0, named=True)["sha256"] == df["raw_sha256"][0]
    assert (home.root / raw.row(0, named=True)["path"]).read_bytes() == (
        shared_data / "electricitymaps/US-CAL-CISO/US-CAL-CISO_2023_hourly.csv"
    ).read_bytes()


def test_failed_write_leaves_every_table_as_it_was(tmp_path, shared_data):
    home = Home.resolve(tmp_path / "h")
    ingest_grid("carbon", "DE-LU", 2023, home=home, mirror=shared_data)
    before = _snapshot(home)
    good = read_table(home.warehouse_path, "SELECT * FROM grid_carbon").with_columns(
        carbon_direct_g_per_kwh=pl.lit(1.0)
    )
    # a frame the database itself rejects (NULL in a NOT NULL column), written after a valid one
    bad = good.head(2).with_columns(location=pl.lit(None, dtype=pl.String))
    with pytest.raises(duckdb.Error):
        write(home.warehouse_path, {"grid_carbon": good, "weather": _weather_like(bad)})
    after = _snapshot(home)
    for name in TABLES:
        assert before[name].equals(after[name]), name


def _weather_like(df: pl.DataFrame) -> pl.DataFrame:
    return pl.DataFrame({
        "location": [None, None], "ts_utc": df["ts_utc"].head(2), "temp_c": [1.0, 2.0], "rh_pct": [50.0, 50.0],
        "wetbulb_c": [0.0, 0.0], "cloudcover_pct": [None, None], "windspeed_kmh": [None, None],
        "source": ["x", "x"], "raw_sha256": ["0" * 64] * 2,
    }, schema_overrides={"location": pl.String, "cloudcover_pct": pl.Float64, "windspeed_kmh": pl.Float64})


def test_validation_reports_row_and_value():
    df = pl.DataFrame({
        "location": ["DE-LU", "DE-LU"],
        "ts_utc": [datetime(2023, 1, 1, tzinfo=UTC), datetime(2023, 1, 1, 1, tzinfo=UTC)],
        "temp_c": [1.0, 2.0], "rh_pct": [50.0, 140.0], "wetbulb_c": [0.0, 0.0], "cloudcover_pct": [None, None],
        "windspeed_kmh": [None, None], "source": ["s", "s"], "raw_sha256": ["a" * 64] * 2,
    }, schema_overrides={"cloudcover_pct": pl.Float64, "windspeed_kmh": pl.Float64,
                         "ts_utc": pl.Datetime("us", "UTC")})
    with pytest.raises(DataError) as info:
        validate("weather", df, file="f.json")
    assert info.value.column == "rh_pct" and info.value.rows == [3] and info.value.values == ["140.0"]
    naive = df.with_columns(pl.col("ts_utc").dt.replace_time_zone(None), rh_pct=pl.lit(50.0))
    with pytest.raises(DataError, match="ts_utc|dtype"):
        validate("weather", naive, file="f.json")
