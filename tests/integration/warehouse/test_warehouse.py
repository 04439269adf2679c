"""Warehouse: DDL from the schemas, idempotent and atomic loads, tz-aware UTC round trips."""

from __future__ import annotations

from datetime import UTC, datetime

import duckdb
import polars as pl
import pytest

from gridshift.errors import DataError
from gridshift.home import Home
from tests.integration.helpers import tree_digest
from warehouse.db import read_table
from warehouse.ddl import create_table_sql
from warehouse.ingest import ingest_grid, ingest_locations
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
    for name in TABLES:
        if name == "raw_files":  # fetched_at records the latest fetch of the same bytes
            assert first[name].drop("fetched_at").equals(second[name].drop("fetched_at"))
        else:
            assert first[name].equals(second[name]), name
    assert first["grid_carbon"].height == 8760 and first["raw_files"].height == 3
    assert tree_digest(home.raw_dir) == landed


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
