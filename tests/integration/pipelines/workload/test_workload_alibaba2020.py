"""PAI 2020 ingest on a fixture written in the trace's own format (headerless CSV in tar.gz)."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import polars as pl
import pytest

from gridshift.errors import DataError
from gridshift.home import Home
from pipelines.core.raw import read_mirror
from pipelines.workload import alibaba2020
from pipelines.workload.derive import DeriveParams
from tests.integration.pipelines.workload.workload_fixture import (
    EXPECTED_DROPPED,
    NEGATIVE_CPU_ROW,
    TASK_ROWS,
    csv_lines,
    write_trace,
)
from warehouse.db import read_table
from warehouse.ingest_workload import ingest_workload, prepare_workload


def _cycle(**kw) -> DeriveParams:
    return DeriveParams(week_order="cycle", **kw)


def test_header_constants_match_the_trace_header_files(mirror: Path) -> None:
    for table, (_, columns) in alibaba2020.TABLES.items():
        name = {"task": "pai_task_table", "job": "pai_job_table", "machine": "pai_machine_spec"}[table]
        header = (mirror / "alibaba" / "gpu-v2020" / f"{name}.header").read_text().strip().split(",")
        assert header == columns


def test_parse_counts_duplicates_and_unparseable_values(trace_dir: Path) -> None:
    parsed = alibaba2020.parse_task_table(alibaba2020.fetch_table("task", trace_dir=trace_dir))
    assert parsed.n_rows == 20
    assert parsed.tasks.height == 17
    assert parsed.dropped == {"missing_job_name": 1, "duplicate_task": 2}
    assert parsed.issues == {"unparseable_plan_cpu": 1}
    first = parsed.tasks.filter(pl.col("task_key") == "jobA/worker").row(0, named=True)
    assert first["line"] == 1  # the first occurrence is kept
    assert first["cpu_cores_per_inst"] == 6.0  # plan_cpu 600 → 6 cores
    assert first["gpus_per_inst"] == 0.5  # plan_gpu 50 → half a GPU
    assert first["mem_gb_per_inst"] == 29.3
    assert parsed.file.endswith("pai_task_table.tar.gz!pai_task_table.csv")


def test_ingest_exact_counts_and_units(trace_dir: Path, mirror: Path, tmp_path: Path) -> None:
    home = Home(tmp_path / "home")
    rep = ingest_workload("alibaba-2020", 2023, home=home, trace_dir=trace_dir, mirror=mirror, params=_cycle())
    assert rep.n_source_rows == 20
    assert rep.n_kept == 5
    assert rep.dropped == EXPECTED_DROPPED
    assert rep.n_kept + rep.n_dropped == 20
    assert rep.adjustments == {"gpu_missing_set_zero": 1}
    assert rep.issues == {"unparseable_plan_cpu": 1, "task_without_job": 1}
    # 3 complete source weeks; 53 target weeks (26 Dec 2022 .. 1 Jan 2024) drawn in cycle:
    # weeks 0,3,..,51 hold lines 1+2 (the first, Monday 26 Dec 2022, falls before the year),
    # weeks 1,4,..,52 line 3, weeks 2,5,..,50 line 4 → 34 + 18 + 17.
    assert rep.source_weeks == 3
    assert rep.n_tasks == 69
    assert rep.extra["outside_year"] == 2

    tasks = read_table(home.warehouse_path, "SELECT * FROM workload_tasks ORDER BY task_id")
    assert tasks.height == 69
    by_line = {r["source_line"]: r for r in tasks.unique("source_line", keep="first").iter_rows(named=True)}
    assert set(by_line) == {1, 2, 3, 4}  # line 5 is in the week after the last complete one
    one = by_line[1]
    assert (one["cpu_cores"], one["gpus"], one["mem_gb"], one["gpu_mem_gb"], one["duration_s"]) == (
        6.0, 0.5, 29.3, 8.0, 1800.0)  # V100: 16 GB per GPU
    two = by_line[2]  # 2 instances of 4 cores, 10 GB, no GPU (NaN → 0)
    assert (two["cpu_cores"], two["gpus"], two["mem_gb"], two["gpu_mem_gb"]) == (8.0, 0.0, 20.0, 0.0)
    three = by_line[3]  # 4 instances × (8 cores, 2 GPUs, 60 GB) on V100M32
    assert (three["cpu_cores"], three["gpus"], three["mem_gb"], three["gpu_mem_gb"]) == (32.0, 8.0, 240.0, 256.0)
    assert by_line[4]["duration_s"] == 900.0  # exactly 15 min is kept
    # weekday and UTC time of day are preserved in every copy
    l3 = tasks.filter(pl.col("source_line") == 3)["arrival_ts_utc"]
    assert l3.dt.weekday().unique().to_list() == [3] and l3.dt.hour().unique().to_list() == [10]
    l4 = tasks.filter(pl.col("source_line") == 4)["arrival_ts_utc"]
    assert l4.dt.weekday().unique().to_list() == [7] and l4.dt.hour().unique().to_list() == [23]
    assert tasks["arrival_ts_utc"].min() >= dt.datetime(2023, 1, 1, tzinfo=dt.UTC)
    assert tasks["arrival_ts_utc"].max() < dt.datetime(2024, 1, 1, tzinfo=dt.UTC)
    assert tasks["arrival_ts_utc"].is_sorted()

    trace = read_table(home.warehouse_path, "SELECT * FROM trace_tasks")
    assert trace.height == 17
    assert trace.filter(pl.col("task_key") == "jobB/worker")["job_user"].to_list() == ["user1"]
    raws = read_table(home.warehouse_path, "SELECT source FROM raw_files ORDER BY source")["source"].to_list()
    assert raws.count("alibaba-2020") == 2  # task and job tables landed
    runs = read_table(home.warehouse_path, "SELECT * FROM workload_runs")
    assert runs.height == 1 and runs["n_tasks"][0] == 69 and runs["params_sha256"][0] == rep.params_sha256


def test_same_inputs_and_seed_give_the_identical_table(trace_dir: Path, mirror: Path) -> None:
    a = prepare_workload("alibaba-2020", 2024, trace_dir=trace_dir, mirror=mirror, seed=7, load_factor=2.5)
    b = prepare_workload("alibaba-2020", 2024, trace_dir=trace_dir, mirror=mirror, seed=7, load_factor=2.5)
    c = prepare_workload("alibaba-2020", 2024, trace_dir=trace_dir, mirror=mirror, seed=8, load_factor=2.5)
    assert a.tasks.equals(b.tasks)
    assert not a.tasks.equals(c.tasks)
    assert a.report.layers == 3


def _assert_nothing_written(home: Home) -> None:
    assert not home.warehouse_path.exists()
    assert not home.raw_dir.exists() or not any(home.raw_dir.rglob("*"))


def test_wrong_number_of_columns_fails_naming_file_and_line(tmp_path: Path, mirror: Path) -> None:
    rows = [",".join(map(str, r)) for r in TASK_ROWS]
    rows[3] = rows[3].rsplit(",", 1)[0]  # line 4 loses its last field
    d = write_trace(tmp_path / "bad", task_csv=("\n".join(rows) + "\n").encode())
    home = Home(tmp_path / "home")
    with pytest.raises(DataError) as err:
        ingest_workload("alibaba-2020", 2023, home=home, trace_dir=d, mirror=mirror)
    assert err.value.rows == [4]
    assert "pai_task_table.csv" in str(err.value) and "10 comma-separated fields" in str(err.value)
    _assert_nothing_written(home)


def test_unparseable_time_fails_naming_file_column_and_line(tmp_path: Path, mirror: Path) -> None:
    rows = [list(r) for r in TASK_ROWS]
    rows[2][4] = "2020-07-01 10:00"
    d = write_trace(tmp_path / "bad", task_csv=csv_lines(rows))
    home = Home(tmp_path / "home")
    with pytest.raises(DataError) as err:
        ingest_workload("alibaba-2020", 2023, home=home, trace_dir=d, mirror=mirror)
    assert err.value.column == "start_time" and err.value.rows == [3]
    assert "pai_task_table.csv" in str(err.value)
    _assert_nothing_written(home)


def test_impossible_value_refuses_the_whole_table_naming_the_line(tmp_path: Path, mirror: Path) -> None:
    """A negative request cannot be (trace_tasks range checks, gridshift.bounds): nothing is stored."""
    d = write_trace(tmp_path / "bad", task_csv=csv_lines([*TASK_ROWS, NEGATIVE_CPU_ROW]))
    home = Home(tmp_path / "home")
    with pytest.raises(DataError) as err:
        ingest_workload("alibaba-2020", 2023, home=home, trace_dir=d, mirror=mirror)
    assert (err.value.column, err.value.rows, err.value.values) == ("cpu_cores_per_inst", [21], ["-1.0"])
    assert "pai_task_table.csv" in str(err.value) and "greater_than_or_equal_to(0.0)" in str(err.value)
    _assert_nothing_written(home)


def test_a_file_that_is_not_a_tar_gz_is_a_data_error(tmp_path: Path, mirror: Path) -> None:
    d = write_trace(tmp_path / "bad")
    (d / "pai_task_table.tar.gz").write_bytes(b"job,task\n")
    with pytest.raises(DataError, match="tar.gz"):
        prepare_workload("alibaba-2020", 2023, trace_dir=d, mirror=mirror)


def test_trace_spanning_no_complete_week_is_refused(tmp_path: Path, mirror: Path) -> None:
    d = write_trace(tmp_path / "short", task_csv=csv_lines(TASK_ROWS[:2]))
    with pytest.raises(DataError, match="no complete week"):
        prepare_workload("alibaba-2020", 2023, trace_dir=d, mirror=mirror)


def test_real_machine_spec(mirror: Path) -> None:
    raw = read_mirror(mirror, "alibaba/gpu-v2020/pai_machine_spec.tar.gz", alibaba2020.SOURCE)
    spec = alibaba2020.parse_machine_spec(raw)
    assert spec.height == 1897
    assert spec["cap_gpus"].sum() == 6742
    assert spec["cap_cpu_cores"].max() == 96 and spec["cap_mem_gb"].max() == 512 and spec["cap_gpus"].max() == 8
