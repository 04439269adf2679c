"""Reloading a (workload, year) replaces the whole set; DuckDB accepts delete-then-insert of a key."""

from __future__ import annotations

from pathlib import Path

import duckdb
import polars as pl

from gridshift.home import Home
from pipelines.workload.derive import DeriveParams
from warehouse.db import read_table
from warehouse.ingest_workload import ingest_workload
from warehouse.load import validate
from warehouse.replace import Replacement, replace_partitions


def test_delete_then_insert_same_keys_on_a_reopened_file(tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    con = duckdb.connect(str(db))
    con.execute("CREATE TABLE t (w VARCHAR, y BIGINT, id BIGINT, v DOUBLE, PRIMARY KEY (w, y, id))")
    con.execute("INSERT INTO t SELECT 'a', 2023, range, 0.0 FROM range(50000)")
    con.close()
    con = duckdb.connect(str(db))  # the index now comes from disk
    con.execute("BEGIN TRANSACTION")
    con.execute("DELETE FROM t WHERE w = 'a' AND y = 2023")
    con.execute("INSERT INTO t SELECT 'a', 2023, range, 1.0 FROM range(50001)")
    con.execute("COMMIT")
    assert con.execute("SELECT count(*), min(v) FROM t").fetchone() == (50001, 1.0)
    con.close()


def test_reingest_with_other_parameters_replaces_the_set(trace_dir: Path, mirror: Path, tmp_path: Path) -> None:
    home = Home(tmp_path / "home")
    a = ingest_workload("alibaba-2020", 2023, home=home, trace_dir=trace_dir, mirror=mirror,
                        params=DeriveParams(week_order="cycle"))
    again = ingest_workload("alibaba-2020", 2023, home=home, trace_dir=trace_dir, mirror=mirror,
                            params=DeriveParams(week_order="cycle"))
    assert again.n_tasks == a.n_tasks == 69
    count = "SELECT count(*) AS n FROM workload_tasks WHERE workload = 'alibaba-2020' AND year = 2023"
    assert read_table(home.warehouse_path, count)["n"][0] == 69
    b = ingest_workload("alibaba-2020", 2023, home=home, trace_dir=trace_dir, mirror=mirror,
                        params=DeriveParams(week_order="cycle", min_duration_s=1800))
    # line 4 (15 min) no longer passes, so its week holds no task and drops out: the year now
    # cycles over 2 source weeks: 27 weeks × lines 1+2 (less 2 before 1 Jan) + 26 × line 3
    assert (b.n_kept, b.source_weeks, b.n_tasks) == (4, 2, 78)
    assert read_table(home.warehouse_path, count)["n"][0] == b.n_tasks
    runs = read_table(home.warehouse_path, "SELECT * FROM workload_runs")
    assert runs.height == 1 and runs["params_sha256"][0] == b.params_sha256 != a.params_sha256
    assert '"min_duration_s":1800.0' in runs["params_json"][0]
    # another year is a separate set
    ingest_workload("alibaba-2020", 2024, home=home, trace_dir=trace_dir, mirror=mirror)
    assert read_table(home.warehouse_path, count)["n"][0] == b.n_tasks
    assert read_table(home.warehouse_path, "SELECT count(*) AS n FROM trace_tasks")["n"][0] == 17


def test_failed_replacement_rolls_back(tmp_path: Path, trace_dir: Path, mirror: Path) -> None:
    home = Home(tmp_path / "home")
    ingest_workload("alibaba-2020", 2023, home=home, trace_dir=trace_dir, mirror=mirror,
                    params=DeriveParams(week_order="cycle"))
    before = read_table(home.warehouse_path, "SELECT * FROM workload_tasks ORDER BY task_id")
    good = validate("workload_tasks", before.head(3))
    bad = before.head(2).with_columns(pl.lit("other").alias("workload"))  # outside the partition
    try:
        replace_partitions(home.warehouse_path, [
            Replacement("workload_tasks", {"workload": "alibaba-2020", "year": 2023}, good),
            Replacement("workload_tasks", {"workload": "alibaba-2020", "year": 2023}, bad),
        ])
    except Exception as exc:
        assert "outside the partition" in str(exc)
    after = read_table(home.warehouse_path, "SELECT * FROM workload_tasks ORDER BY task_id")
    assert after.equals(before)
