"""The compiled filter + normalize pass of the synthetic derivation gives bit for bit what the polars
path of a real trace gives (``trace_frame`` → ``filter_tasks`` → ``normalize_resources``): the same kept
rows, the same values, the same drop reasons and adjustments, for every rule of the filter."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pytest

from pipelines.core.raw import read_mirror
from pipelines.workload import derive as wd
from pipelines.workload import kernels
from pipelines.workload import synthetic as sw

GPU_TYPES = tuple(t for t, _ in sw.GPU_TYPE_WEIGHTS)


@pytest.fixture(scope="module")
def days(shared_data: Path) -> dict[str, np.ndarray]:
    """Three generated days at 1× level, with rows edited so that every rule of the filter fires."""
    hists = wd.parse_histograms(read_mirror(shared_data, wd.REFERENCE_HISTOGRAMS_RELPATH, "ref"))
    prof = wd.parse_weekday_hour(read_mirror(shared_data, wd.REFERENCE_WEEKDAY_HOUR_RELPATH, "ref"))
    sp = sw.SyntheticParams(year=2023, seed=3)
    origin, d_lo, _ = sw.year_days(2023)
    a = sw._concat_days([sw.generate_day(sp, d, origin, prof, hists, 36.0) for d in range(d_lo, d_lo + 3)])  # noqa: SLF001
    a = {k: v.copy() for k, v in a.items()}
    rng = np.random.default_rng(0)
    n = len(a["job_id"])
    pick = rng.choice(n, size=(9, 40), replace=False)
    a["plan_gpu"][pick[0]] = np.nan  # missing GPU: zero, or dropped
    a["plan_cpu"][pick[1]] = np.nan
    a["plan_mem"][pick[2]] = np.nan
    a["plan_cpu"][pick[3]] = -100.0
    a["plan_mem"][pick[4]] = 600.0  # > 512 GB per instance
    a["plan_cpu"][pick[5]], a["plan_gpu"][pick[5]] = 0.0, 0.0
    a["start_time"][pick[6]] = 0.0
    a["end_time"][pick[7]] = a["start_time"][pick[7]]  # ends when it starts
    a["inst_num"][pick[8]] = 0
    return a


def polars_path(a: dict[str, np.ndarray], p: wd.DeriveParams, first_line: int):
    frame = sw.trace_frame(sw._table(a), first_line)  # noqa: SLF001
    kept, dropped, adjustments = wd.filter_tasks(frame, p)
    return wd.normalize_resources(kept, p), dropped, adjustments


PARAMS = [
    wd.DeriveParams(),
    wd.DeriveParams(nan_gpu_as_zero=False, max_duration_s=4 * 3600.0, resource_basis="per_instance"),
    wd.DeriveParams(statuses=("Terminated", "Failed"), min_duration_s=0.0, max_instance_cpu_cores=8.0,
                    max_instance_gpus=1.0, gpu_mem_gb_by_type=(("T4", 15.0), ("V100M32", 32.0)),
                    default_gpu_mem_gb=12.0),
]


@pytest.mark.parametrize("p", PARAMS)
def test_kernel_equals_the_polars_path_bit_for_bit(days, p: wd.DeriveParams) -> None:
    want, dropped, adjustments = polars_path(days, p, 101)
    cols, k_dropped, k_adjustments = kernels.filter_normalize(days, p, sw.STATUSES, GPU_TYPES, 101)
    got = pl.DataFrame(cols)
    assert got.columns == want.columns and got.height == want.height > 1_000
    for c in want.columns:  # exact, NaN-free: the same bits
        assert np.array_equal(got[c].to_numpy(), want[c].to_numpy()), c
    assert k_dropped == dropped and k_adjustments == adjustments
    assert sum(dropped.values()) + got.height == len(days["job_id"])


def test_every_rule_is_exercised(days) -> None:
    _, d0, a0 = kernels.filter_normalize(days, PARAMS[0], sw.STATUSES, GPU_TYPES)
    _, d1, _ = kernels.filter_normalize(days, PARAMS[1], sw.STATUSES, GPU_TYPES)
    assert a0["gpu_missing_set_zero"] > 0
    for reason in ("status_failed", "status_waiting", "status_running", "missing_time", "end_not_after_start",
                   "duration_below_min", "bad_inst_num", "missing_cpu", "missing_mem", "negative_resource",
                   "exceeds_machine", "no_compute_request"):
        assert d0.get(reason, 0) > 0, reason
    assert d1["missing_gpu"] > 0 and d1["duration_above_max"] > 0


def test_status_labels_are_the_filters() -> None:
    """The labels the kernel counts a status under (``derive.status_labels``, shared with ``filter_tasks``)."""
    assert wd.status_labels(["Waiting", "Out of Memory!"]) == {"Waiting": "status_waiting",
                                                                "Out of Memory!": "status_out_of_memory_"}


def test_copula_marginal_kernel_equals_numpy_bit_for_bit(shared_data: Path) -> None:
    """``kernels.cdf_ppf`` = ``Histogram.ppf(norm_cdf(x))`` on every published marginal and on a histogram
    with empty bins (repeated CDF points), over the normal range, its tails and the exact edges."""
    hists = wd.parse_histograms(read_mirror(shared_data, wd.REFERENCE_HISTOGRAMS_RELPATH, "ref"))
    holes = wd.Histogram("x", "u", np.array([1.0, 2.0, 3.0, 4.0, 5.0]), np.array([3.0, 0.0, 0.0, 5.0, 0.0]))
    rng = np.random.default_rng(7)
    x = np.concatenate([rng.standard_normal(400_000), rng.standard_normal(50_000) * 9.0,
                        [0.0, -0.0, 40.0, -40.0, np.inf, -np.inf, 1e-300, 8.3, -8.3]])
    for h in [*hists.values(), holes]:
        want = h.ppf(wd.norm_cdf(x))
        got = kernels.cdf_ppf(x, kernels.ppf_table(h))
        assert np.array_equal(got, want), h.variable
    u = wd.norm_cdf(x)
    assert u.max() == 1.0 and u.min() == 0.0  # the end points are reached (the edge branches run)


def _numpy_day_rows(start, dur_min, cpu, gpu, mem, r, waiting_u, short_s, gtype, f, uf, sh):
    """``generate_day``'s per-row arithmetic as it was written in numpy (the reference)."""
    dur_s = np.round(dur_min * 60.0)
    inst = np.maximum(1, np.ceil(gpu / sw.MAX_GPUS_PER_INSTANCE)).astype(np.int64)
    status = np.zeros(len(r), dtype=np.int8)
    status[r < f] = 1
    unfinished = (r >= f) & (r < f + uf)
    status[unfinished] = np.where(waiting_u < 0.5, 2, 3)
    short = (r >= f + uf) & (r < f + uf + sh)
    dur_s[short] = np.minimum(np.round(short_s), 899.0)
    end = start + dur_s
    end[unfinished] = np.nan
    plan_gpu = np.round(gpu / inst * 100.0)
    return (inst, status, end, np.round(cpu / inst * 100.0), np.round(mem / inst, 3), plan_gpu,
            np.where(plan_gpu > 0, gtype, -1))


@pytest.mark.parametrize(("f", "uf", "sh"), [(0.05, 0.01, 0.2), (0.3, 0.2, 0.4), (0.0, 0.0, 0.0)])
def test_day_rows_kernel_equals_the_numpy_form(f: float, uf: float, sh: float) -> None:
    rng = np.random.default_rng(5)
    n = 200_000
    start = rng.integers(1, 10**7, n).astype(np.float64)
    dur_min, cpu, mem = rng.uniform(15, 400, n), rng.uniform(0, 64, n) ** 1.3, rng.uniform(0, 300, n)
    gpu = np.where(rng.random(n) < 0.3, 0.0, rng.uniform(0, 20, n))
    r = rng.random(n)
    n_unf, n_short = kernels.status_counts(r, f, f + uf, f + uf + sh)
    assert n_unf == int(((r >= f) & (r < f + uf)).sum()) and n_short == int(((r >= f + uf) & (r < f + uf + sh)).sum())
    waiting_u, short_s = rng.random(n_unf), rng.uniform(10.0, 900.0, n_short)
    gtype = rng.integers(0, 5, n)
    got = kernels.day_rows(start, dur_min, cpu, gpu, mem, r, waiting_u, short_s, gtype, f, f + uf, f + uf + sh,
                           sw.MAX_GPUS_PER_INSTANCE)
    want = _numpy_day_rows(start, dur_min, cpu, gpu, mem, r, waiting_u, short_s, gtype, f, uf, sh)
    for g, w in zip(got, want, strict=True):
        assert g.dtype == w.dtype and np.array_equal(g, w, equal_nan=True)
