"""The ``ai`` size model (docs/workload.md §3) on the real Alibaba 2023 pods: the documented
distribution, the feasibility rules, the equal chance among feasible workloads, the fallback."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from pipelines.workload import derive as wd
from warehouse.ingest_workload import prepare_workload

P = wd.DeriveParams()
NAMES = [name for name, _, _ in P.ai_workloads]


def moved_gb(name: str) -> float:
    """Data + checkpoint of one published workload, GB."""
    _, data_gb, params_m = P.ai_workloads[NAMES.index(name)]
    return data_gb + params_m * 1e6 * P.ai_checkpoint_bytes_per_param / 1e9


@pytest.fixture(scope="module")
def pods(shared_data):
    return prepare_workload("alibaba-2023", 2023, mirror=shared_data)


@pytest.fixture(scope="module")
def normalized(shared_data):
    """The 2023 pods after filter + normalize (one row per source task), with each task's choice."""
    from pipelines.workload import alibaba2023
    from pipelines.workload.alibaba2020 import trace_frame

    prep = prepare_workload("alibaba-2023", 2023, mirror=shared_data)
    frame = trace_frame(prep.trace_tasks)
    p = alibaba2023.TRACE.default_params()
    kept, _, _ = wd.filter_tasks(frame, p)
    tasks = wd.normalize_resources(kept, p).sort("source_line")
    return tasks, p


def test_documented_distribution_on_the_2023_pods(pods) -> None:
    b = pods.tasks["bandwidth_gb"].to_numpy()
    assert b.size == 27_802
    assert b.mean() == pytest.approx(9.68, abs=0.005)
    assert np.percentile(b, 50) == pytest.approx(moved_gb("squad11-bert-base"))  # 1.355 GB
    assert np.percentile(b, 90) == pytest.approx(moved_gb("coco2017-maskrcnn"))  # 20.94 GB
    assert np.percentile(b, 99) == pytest.approx(moved_gb("imagenet1k-resnet50"))  # 154.95 GB
    assert b.max() == pytest.approx(moved_gb("imagenet1k-resnet50"))  # no pod can hold a 11 B+ model
    assert (b > 100).mean() == pytest.approx(0.018, abs=0.001)  # the heavy tail: ImageNet-sized moves
    assert b.min() > 0 and np.percentile(b, 10) < 0.2  # CPU-only pods stay small


def test_cpu_only_pods_move_reference_sizes(pods, shared_data) -> None:
    t = pods.tasks
    cpu = t.filter(pl.col("gpus") == 0)["bandwidth_gb"]
    assert cpu.len() == 4008  # 14 % of the pods
    assert cpu.max() <= 0.755 and cpu.mean() == pytest.approx(0.12, rel=0.15)  # the reference histogram
    assert pods.other_raws[-1].uri.endswith("alibaba2020_filtered_histograms.csv")  # in the lineage


def test_each_task_runs_a_feasible_workload_and_bigger_tasks_move_more(normalized) -> None:
    tasks, p = normalized
    choice = wd.ai_workload_choice(tasks, p, np.random.default_rng(0).random(tasks.height))
    gpu_hours = (tasks["gpus"] * tasks["duration_s"] / 3600).to_numpy()
    gpu_mem = tasks["gpu_mem_gb"].to_numpy()
    data = np.array([d for _, d, _ in p.ai_workloads])
    state = np.array([m for _, _, m in p.ai_workloads]) * 1e6 * 16 / 1e9
    ran = choice >= 0
    assert (data[choice[ran]] <= 52.0 * gpu_hours[ran] + 1e-9).all()  # read the data at least once
    assert (state[choice[ran]] <= gpu_mem[ran]).all()  # model states fit in the GPUs asked for
    assert not ran[tasks["gpus"].to_numpy() == 0].any()  # CPU-only tasks run none
    # a task that could run a workload runs one
    feasible_any = np.zeros(tasks.height, dtype=bool)
    for k in range(len(p.ai_workloads)):
        feasible_any |= wd.ai_workload_feasible(tasks, p, k)
    assert (ran == feasible_any).all()
    # larger / longer GPU tasks carry more: mean data+checkpoint rises with GPU-hours
    moved = np.where(ran, data[np.maximum(choice, 0)] + state[np.maximum(choice, 0)] * 12 / 16, np.nan)
    bins = np.digitize(gpu_hours, [0.1, 1.0, 10.0])
    means = [np.nanmean(moved[bins == i]) for i in range(4)]
    assert means == sorted(means) and means[3] > 10 * means[0]


def test_equal_chance_among_the_feasible_workloads(normalized) -> None:
    tasks, p = normalized
    choice = wd.ai_workload_choice(tasks, p, np.random.default_rng(1).random(tasks.height))
    k_all = len(p.ai_workloads)
    sets = np.zeros(tasks.height, dtype=np.int64)
    for k in range(k_all):
        sets |= wd.ai_workload_feasible(tasks, p, k).astype(np.int64) << k
    checked = 0
    for key in np.unique(sets):
        sel = sets == key
        members = [k for k in range(k_all) if key >> k & 1]
        n = int(sel.sum())
        if n < 200 or len(members) < 2:
            continue
        shares = np.bincount(choice[sel], minlength=k_all)[members] / n
        expected = 1 / len(members)  # 4 binomial standard deviations
        assert np.abs(shares - expected).max() < 4 * np.sqrt(expected * (1 - expected) / n), (members, shares)
        checked += 1
    assert checked >= 2


def test_choice_on_hand_made_tasks() -> None:
    p = wd.DeriveParams(ai_workloads=(("small", 1.0, 10.0), ("big-data", 100.0, 10.0), ("big-model", 1.0, 2000.0)))
    tasks = pl.DataFrame({
        "gpus": [0.0, 1.0, 1.0, 4.0, 0.01],
        "duration_s": [3600.0, 3600.0, 7 * 3600.0, 900.0, 3600.0],
        "gpu_mem_gb": [0.0, 16.0, 16.0, 64.0, 0.16],
    })
    # task 0: CPU-only; 1: 1 GPU-h reads 52 GB (small only; 2,000 M params × 16 B = 32 GB);
    # 2: 7 GPU-h reads 364 GB (small, big-data); 3: 4 GPUs × 15 min, 64 GB (small, big-model);
    # 4: 0.01 GPU-h reads 0.52 GB: nothing
    feasible = np.array([wd.ai_workload_feasible(tasks, p, k) for k in range(3)]).T
    assert feasible.tolist() == [[False, False, False], [True, False, False], [True, True, False],
                                 [True, False, True], [False, False, False]]
    low = wd.ai_workload_choice(tasks, p, np.full(5, 0.1))
    high = wd.ai_workload_choice(tasks, p, np.full(5, 0.9))
    assert low.tolist() == [-1, 0, 0, 0, -1] and high.tolist() == [-1, 0, 1, 2, -1]
    with pytest.raises(ValueError, match="ai_workloads"):
        wd.DeriveParams(ai_workloads=(("bad", -1.0, 1.0),))
    with pytest.raises(ValueError, match="bandwidth_model"):
        wd.DeriveParams(bandwidth_model="histogram")
