"""``warehouse.load``: the pre-test that spares the semi-join when no key of a frame can be stored, and the
upserts it decides between (a plain INSERT of new keys, INSERT OR REPLACE of stored ones, nothing for
identical rows)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from types import SimpleNamespace

import duckdb
import polars as pl

from warehouse.db import read_table
from warehouse.load import _may_hold, write

from .frames import quality_frame

T0 = datetime(2022, 1, 1, tzinfo=UTC)


def _keys(location: str, start_h: int, hours: int) -> pl.DataFrame:
    return pl.DataFrame({"location": [location] * hours,
                         "ts_utc": [T0 + timedelta(hours=start_h + h) for h in range(hours)]},
                        schema={"location": pl.String, "ts_utc": pl.Datetime("us", "UTC")})


def test_the_pretest_is_false_only_when_no_stored_row_can_share_a_key():
    table = SimpleNamespace(name="g", primary_key=("location", "ts_utc"))  # a grid table's key
    con = duckdb.connect()
    con.execute("SET TimeZone = 'UTC'")
    con.execute("CREATE TABLE g (location VARCHAR, ts_utc TIMESTAMPTZ, v DOUBLE, PRIMARY KEY (location, ts_utc))")
    con.register("s", _keys("A", 0, 48).to_arrow())
    con.execute("INSERT INTO g SELECT location, ts_utc, 1.0 FROM s")
    assert _may_hold(con, table, _keys("A", 47, 5))  # one key stored
    assert _may_hold(con, table, pl.concat([_keys("B", 0, 3), _keys("A", 10, 1)]))
    assert not _may_hold(con, table, _keys("B", 0, 48))  # another location over the same hours
    assert not _may_hold(con, table, _keys("A", 48, 24))  # the same location, the hours after
    assert not _may_hold(con, table, _keys("A", -24, 24))  # ... and before
    con.close()


def test_new_keys_are_inserted_stored_ones_replaced_and_identical_rows_not_written(tmp_path):
    db = tmp_path / "w.duckdb"

    def stored():
        return read_table(db, "SELECT location, rows FROM partition_quality ORDER BY location").rows()

    assert write(db, {"partition_quality": quality_frame(("A", 1), ("B", 2))}) == {"partition_quality": 2}
    assert write(db, {"partition_quality": quality_frame(("C", 3))}) == {"partition_quality": 1}  # no key stored
    assert stored() == [("A", 1), ("B", 2), ("C", 3)]
    assert write(db, {"partition_quality": quality_frame(("A", 9), ("D", 4))}) == {"partition_quality": 2}
    assert stored() == [("A", 9), ("B", 2), ("C", 3), ("D", 4)]  # A replaced in place, D added
    before = db.read_bytes()
    assert write(db, {"partition_quality": quality_frame(("B", 2))}) == {"partition_quality": 0}
    assert db.read_bytes() == before  # identical: not a byte written
