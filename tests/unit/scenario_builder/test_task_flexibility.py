"""Export's task reading (scenario_builder.tasks): the warehouse's workload_tasks carry no flexibility; the
bundle's tasks get the workload pipeline's model, in the format-2 schema, seeded by the build seed, in bundle
order whatever the windows and batches they stream in; a bad table is refused before any task is read, naming
the column and values; ``--flexibility`` is validated and recorded."""

from __future__ import annotations

from datetime import UTC, datetime

import duckdb
import numpy as np
import polars as pl
import pytest

from gridshift.bundle import TASK_FLEX_DEFAULTS, TASKS_SCHEMA
from gridshift.errors import GridshiftError
from gridshift.parquet import parquet_bytes
from pipelines.workload.flexibility import FlexParams, Summary, assign_flexibility, summary
from scenario_builder import tasks as tasks_mod
from scenario_builder.bundle import BuildParams
from scenario_builder.sizing import Demand


def _read_tasks(con, params: BuildParams) -> pl.DataFrame:
    return pl.concat(list(tasks_mod.WorkloadTasks(con, params).batches()))


@pytest.fixture
def con():
    rng = np.random.default_rng(0)
    n = 500
    g = rng.choice([0.0, 0.5, 1.0, 4.0], n)
    df = pl.DataFrame({
        "task_id": np.arange(n, dtype=np.int64)[::-1].copy(),
        "arrival_ts_utc": [datetime(2022, 1, 1, tzinfo=UTC)] * n,
        "duration_s": rng.uniform(900, 40_000, n), "cpu_cores": rng.choice([1.0, 8.0], n), "gpus": g,
        "mem_gb": rng.uniform(1, 64, n), "gpu_mem_gb": g * 16.0, "bandwidth_gb": rng.uniform(0, 5, n),
        "workload": ["synthetic"] * n, "year": [2022] * n,
    })
    c = duckdb.connect()
    c.register("df", df.to_arrow())
    c.execute("CREATE TABLE workload_tasks AS SELECT * FROM df")
    yield c
    c.close()


def test_export_tasks_carry_the_pipeline_flexibility(con):
    p = BuildParams(regions=("DE-LU",), year=2022, seed=4)
    tasks = _read_tasks(con, p)
    assert tasks.columns == TASKS_SCHEMA.names and tasks.height == 500
    assert tasks["interruptible"].dtype == pl.Boolean
    expected = assign_flexibility(tasks.drop(list(TASK_FLEX_DEFAULTS)), FlexParams(), seed=4)
    assert tasks.equals(expected.select(TASKS_SCHEMA.names))
    assert tasks["interruptible"].sum() > 0 and (tasks["max_scale"] > 1).sum() > 0
    assert set(tasks["max_delay_s"].to_list()) == {21_600.0, 86_400.0}
    # another seed: same queue classes and overheads, other scaling curves
    other = _read_tasks(con, BuildParams(regions=("DE-LU",), year=2022, seed=5))
    assert other["max_delay_s"].equals(tasks["max_delay_s"]) and not other.equals(tasks)
    # none: the format's defaults
    none = _read_tasks(con, BuildParams(regions=("DE-LU",), year=2022, flexibility="none"))
    for c, v in TASK_FLEX_DEFAULTS.items():
        assert (none[c] == v).all(), c
    # no workload: no tasks, and an empty tasks file in the format-2 schema
    nothing = tasks_mod.WorkloadTasks(con, BuildParams(regions=("DE-LU",), year=2022, workload="none"))
    assert nothing.n == 0 and list(nothing.batches()) == []


def test_flexibility_option_validated_and_recorded():
    p = BuildParams(regions=("DE-LU",), year=2022)
    assert p.manifest_parameters()["flexibility"] == "default" and p.flex_params == FlexParams()
    assert BuildParams(regions=("DE-LU",), year=2022, flexibility="none").flex_params.profile == "none"
    with pytest.raises(GridshiftError, match="--flexibility must be one of"):
        BuildParams(regions=("DE-LU",), year=2022, flexibility="lots")


def _table(n: int, seed: int = 0, **change) -> duckdb.DuckDBPyConnection:
    """A warehouse connection whose workload_tasks holds ``n`` tasks spread over 2022 (and a few in 2021 and 2023,
    which a 2022 bundle leaves out), ids shuffled, rows in no order; ``change``: column -> values replaced."""
    rng = np.random.default_rng(seed)
    start = int(datetime(2021, 12, 31, tzinfo=UTC).timestamp() * 1e6)
    arrival = start + rng.integers(0, 367 * 86_400, n) * 1_000_000  # (whole seconds: equal arrivals happen)
    g = rng.choice([0.0, 0.5, 1.0, 8.0], n)
    cols = {
        "task_id": rng.permutation(n).astype(np.int64) * 7 + 3,
        "arrival_ts_utc": pl.Series(arrival).cast(pl.Datetime("us")).dt.replace_time_zone("UTC"),
        "duration_s": rng.uniform(900, 90_000, n), "cpu_cores": rng.choice([1.0, 8.0, 96.0], n), "gpus": g,
        "mem_gb": rng.uniform(1, 512, n), "gpu_mem_gb": g * 80.0, "bandwidth_gb": rng.uniform(0, 5, n),
    }
    cols.update(change)
    df = pl.DataFrame(cols).with_columns(workload=pl.lit("synthetic"), year=pl.lit(2022))
    c = duckdb.connect()
    c.register("df", df.to_arrow())
    c.execute("CREATE TABLE workload_tasks AS SELECT * FROM df")
    return c


P = BuildParams(regions=("DE-LU",), year=2022, seed=2)


def test_tasks_stream_in_bundle_order_whatever_the_windows_and_batches(monkeypatch, tmp_path):
    con = _table(3_000)
    whole = _read_tasks(con, P)  # one window of the year, one batch
    assert whole.height == tasks_mod.WorkloadTasks(con, P).n < 3_000  # (the 2021 and 2023 arrivals left out)
    assert whole["arrival_ts_utc"].dt.year().unique().to_list() == [2022]
    assert whole.select("arrival_ts_utc", "task_id").equals(whole.select("arrival_ts_utc", "task_id")
                                                             .sort("arrival_ts_utc", "task_id"))
    assert whole.equals(assign_flexibility(whole.drop(list(TASK_FLEX_DEFAULTS)), FlexParams(), seed=2)
                        .select(TASKS_SCHEMA.names))
    # windows of one day (365 queries) and batches of 100 rows: the same rows, in the same order
    monkeypatch.setattr(tasks_mod, "WINDOW_ROWS", 5)
    monkeypatch.setattr(tasks_mod, "BATCH_ROWS", 100)
    streamed = tasks_mod.WorkloadTasks(con, P)
    assert len(list(streamed._windows())) == 365
    batches = list(streamed.batches())
    assert [b.height for b in batches[:-1]] == [100] * (len(batches) - 1) and 0 < batches[-1].height <= 100
    assert pl.concat(batches).equals(whole)
    # what the manifest records of them, accumulated batch by batch: the record of all at once
    acc = Summary()
    for b in batches:
        acc.add(b)
    assert acc.record() == summary(whole)
    # the file: the bytes of the whole frame (batches of whole row groups, here one)
    monkeypatch.setattr(tasks_mod, "BATCH_ROWS", tasks_mod.ROW_GROUP_ROWS)
    demand = Demand.of_sites(["Europe/Berlin"], [1.0], 2022)
    written = tasks_mod.write_tasks(tasks_mod.WorkloadTasks(con, P), tmp_path / "tasks.parquet", demand)
    assert (tmp_path / "tasks.parquet").read_bytes() == parquet_bytes(whole, TASKS_SCHEMA)
    assert written.n_tasks == whole.height == demand.n_tasks and written.flexibility == summary(whole)


@pytest.mark.parametrize(("change", "message"), [
    ({"cpu_cores": [None] * 4 + [1.0] * 496}, r"null values in \{'cpu_cores': 4\}"),
    ({"duration_s": [0.0, -5.0] + [900.0] * 498}, r"duration_s must be > 0; 2 task\(s\) are not"),
    ({"task_id": np.r_[np.arange(497), 5, 5, 9].astype(np.int64)}, r"task_id is not unique: \[5, 9\]"),
])
def test_a_bad_workload_table_is_refused_naming_the_column_and_values(change, message):
    # (the arrivals all in 2022 here, so that every bad row is in the bundle's year)
    arrival = pl.Series([datetime(2022, 3, 27, 1, 30, tzinfo=UTC)] * 500)
    con = _table(500, arrival_ts_utc=arrival, **change)
    with pytest.raises(GridshiftError, match=message):
        tasks_mod.WorkloadTasks(con, P)


def test_duration_refusal_names_the_tasks():
    arrival = pl.Series([datetime(2022, 10, 30, 0, 45, tzinfo=UTC)] * 3)
    con = _table(3, arrival_ts_utc=arrival, duration_s=[900.0, 0.0, 900.0], task_id=np.array([11, 12, 13]))
    with pytest.raises(GridshiftError, match=r"first \(task_id, duration_s\): \[\(12, 0.0\)\]"):
        tasks_mod.WorkloadTasks(con, P)


def test_a_missing_table_column_or_year_is_refused():
    with pytest.raises(GridshiftError, match="no workload_tasks table"):
        tasks_mod.WorkloadTasks(duckdb.connect(), P)
    con = _table(50)
    with pytest.raises(GridshiftError, match="has no tasks in 2030"):
        tasks_mod.WorkloadTasks(con, BuildParams(regions=("DE-LU",), year=2030))
    con.execute("ALTER TABLE workload_tasks DROP COLUMN gpu_mem_gb")
    with pytest.raises(GridshiftError, match=r"lacks column\(s\) \['gpu_mem_gb'\]"):
        tasks_mod.WorkloadTasks(con, P)
