"""Export's task reading (scenario_builder.bundle._read_tasks): the warehouse's workload_tasks carry no
flexibility; the bundle's tasks get the workload pipeline's model, in the format-2 schema, seeded by the
build seed; ``--flexibility`` is validated and recorded."""

from __future__ import annotations

from datetime import UTC, datetime

import duckdb
import numpy as np
import polars as pl
import pytest

from gridshift.bundle import TASK_FLEX_DEFAULTS, TASKS_SCHEMA
from gridshift.errors import GridshiftError
from pipelines.workload.flexibility import FlexParams, assign_flexibility
from scenario_builder.bundle import BuildParams, _read_tasks


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
    tasks, _, _ = _read_tasks(con, p)
    assert tasks.columns == TASKS_SCHEMA.names and tasks.height == 500
    assert tasks["interruptible"].dtype == pl.Boolean
    expected = assign_flexibility(tasks.drop(list(TASK_FLEX_DEFAULTS)), FlexParams(), seed=4)
    assert tasks.equals(expected.select(TASKS_SCHEMA.names))
    assert tasks["interruptible"].sum() > 0 and (tasks["max_scale"] > 1).sum() > 0
    assert set(tasks["max_delay_s"].to_list()) == {21_600.0, 86_400.0}
    # another seed: same queue classes and overheads, other scaling curves
    other, _, _ = _read_tasks(con, BuildParams(regions=("DE-LU",), year=2022, seed=5))
    assert other["max_delay_s"].equals(tasks["max_delay_s"]) and not other.equals(tasks)
    # none: the format's defaults
    none, _, _ = _read_tasks(con, BuildParams(regions=("DE-LU",), year=2022, flexibility="none"))
    for c, v in TASK_FLEX_DEFAULTS.items():
        assert (none[c] == v).all(), c
    # no workload: an empty frame in the format-2 schema
    empty, _, _ = _read_tasks(con, BuildParams(regions=("DE-LU",), year=2022, workload="none"))
    assert empty.columns == TASKS_SCHEMA.names and empty.height == 0
    assert empty["interruptible"].dtype == pl.Boolean


def test_flexibility_option_validated_and_recorded():
    p = BuildParams(regions=("DE-LU",), year=2022)
    assert p.manifest_parameters()["flexibility"] == "default" and p.flex_params == FlexParams()
    assert BuildParams(regions=("DE-LU",), year=2022, flexibility="none").flex_params.profile == "none"
    with pytest.raises(GridshiftError, match="--flexibility must be one of"):
        BuildParams(regions=("DE-LU",), year=2022, flexibility="lots")
