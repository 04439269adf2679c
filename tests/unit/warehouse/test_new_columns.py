"""``warehouse.load.add_new_columns``: a warehouse written before a nullable column was declared (here
``partition_quality.plausibility_overridden``) takes new rows with it, keeping its rows (null there)."""

from __future__ import annotations

import duckdb
import polars as pl

from warehouse.db import read_table
from warehouse.ddl import create_table_sql
from warehouse.load import add_new_columns, write
from warehouse.schemas import TABLES

from .frames import quality_frame


def test_an_earlier_partition_quality_grows_the_new_column_and_keeps_its_rows(tmp_path):
    db = tmp_path / "w.duckdb"
    old = create_table_sql(TABLES["partition_quality"]).replace(', "plausibility_overridden" VARCHAR', "")
    assert "plausibility_overridden" not in old
    with duckdb.connect(str(db)) as con:
        con.execute(old)
        con.execute("INSERT INTO partition_quality VALUES ('carbon', 'A', 2022, 's', 'h', 1, 1, 1, 1.0, 0.0, false)")
    assert add_new_columns(db, ["partition_quality"]) == ["partition_quality.plausibility_overridden"]
    assert add_new_columns(db, ["partition_quality"]) == []  # now the declared layout: nothing to add
    new = quality_frame(("B", 2)).with_columns(plausibility_overridden=pl.lit("mean_price"))
    assert write(db, {"partition_quality": new}) == {"partition_quality": 1}
    got = read_table(db, "SELECT location, plausibility_overridden FROM partition_quality ORDER BY location")
    assert got.rows() == [("A", None), ("B", "mean_price")]


def test_write_grows_an_earlier_table_itself(tmp_path):
    db = tmp_path / "w.duckdb"
    old = create_table_sql(TABLES["partition_quality"]).replace(', "plausibility_overridden" VARCHAR', "")
    with duckdb.connect(str(db)) as con:
        con.execute(old)
        con.execute("INSERT INTO partition_quality VALUES ('carbon', 'A', 2022, 's', 'h', 1, 1, 1, 1.0, 0.0, false)")
    assert write(db, {"partition_quality": quality_frame(("A", 1), ("C", 3))}) == {"partition_quality": 2}
    assert read_table(db, "SELECT count(*) n FROM partition_quality")["n"][0] == 2
