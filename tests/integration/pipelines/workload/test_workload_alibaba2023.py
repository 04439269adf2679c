"""The real 2023 pod list (../shared/data/alibaba/gpu-v2023/openb_pod_list_default.csv)."""

from __future__ import annotations

import math
from pathlib import Path

import numpy as np
import polars as pl
import pytest

from gridshift.home import Home
from pipelines.workload import alibaba2023
from pipelines.workload import synthetic as synthetic_workload
from pipelines.workload.alibaba2020 import trace_frame
from pipelines.workload.derive import filter_tasks, normalize_resources
from warehouse.db import read_table
from warehouse.ingest_workload import default_params, ingest_workload, read_workload_tasks


def test_pod_list_ingest_with_real_numbers(mirror: Path, tmp_path: Path) -> None:
    home = Home(tmp_path / "home")
    rep = ingest_workload("alibaba-2023", 2023, home=home, mirror=mirror)
    assert rep.n_source_rows == 8152
    assert rep.n_kept == 2652
    assert rep.dropped == {"duration_below_min": 2732, "missing_time": 1, "status_failed": 1870,
                           "status_pending": 897}
    assert rep.source_weeks == 4  # weeks of dense submissions; earlier weeks hold only survivors
    trace = read_table(home.warehouse_path, "SELECT * FROM trace_tasks ORDER BY line")
    assert trace.height == 8152
    pod1 = trace.filter(pl.col("task_key") == "openb-pod-0001").row(0, named=True)
    # cpu_milli 6000, memory_mib 12288, num_gpu 1, gpu_milli 460
    assert (pod1["cpu_cores_per_inst"], pod1["mem_gb_per_inst"], pod1["gpus_per_inst"]) == (6.0, 12.0, 0.46)
    assert (pod1["arrival_s"], pod1["start_s"], pod1["end_s"]) == (427061.0, 427061.0, 12902960.0)
    assert pod1["line"] == 3

    tasks = read_workload_tasks(home, "alibaba-2023", 2023)
    assert tasks.height == rep.n_tasks
    assert tasks.columns == ["task_id", "arrival_ts_utc", "duration_s", "cpu_cores", "gpus", "mem_gb",
                             "gpu_mem_gb", "bandwidth_gb"]
    assert tasks["duration_s"].min() >= 900


def test_kept_pods_totals(mirror: Path) -> None:
    p = default_params("alibaba-2023")
    parsed = alibaba2023.parse(alibaba2023.TRACE.read_mirror(mirror, alibaba2023.DEFAULT_RELPATH))
    kept, dropped, _ = filter_tasks(trace_frame(parsed.tasks), p)
    n = normalize_resources(kept, p)
    assert n.height == 2652
    assert n["cpu_cores"].sum() == pytest.approx(28449.024)
    assert n["gpus"].sum() == pytest.approx(1907.42)
    assert n["mem_gb"].sum() == pytest.approx(102985.14453125)
    assert n["gpu_mem_gb"].sum() == pytest.approx(1907.42 * 16)  # no gpu_spec in this list → 16 GB


def test_synthetic_copula_matches_the_real_pods(mirror: Path) -> None:
    """The generator's correlation matrix is the one measured on these pods."""
    p = default_params("alibaba-2023")
    parsed = alibaba2023.parse(alibaba2023.TRACE.read_mirror(mirror, alibaba2023.DEFAULT_RELPATH))
    kept, _, _ = filter_tasks(trace_frame(parsed.tasks), p)
    n = normalize_resources(kept, p)
    ranks = n.select([pl.col(c).rank("average") for c in ("duration_s", "cpu_cores", "gpus", "mem_gb")])
    rho_s = np.corrcoef(ranks.to_numpy().T)
    r = 2 * np.sin(math.pi * rho_s / 6)
    np.testing.assert_allclose(r, synthetic_workload.COPULA_CORR, atol=0.006)
    assert r[2, 3] > 0.15  # bigger GPU requests come with more memory
