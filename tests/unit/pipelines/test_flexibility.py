"""The workload's task flexibility model (pipelines/workload/flexibility.py): cited defaults, exact
values by hand, determinism independent of how the tasks are chunked, bounds of bundle format 2."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

from gridshift.bounds import BOUNDS
from gridshift.bundle.format import TASK_FLEX_DEFAULTS
from gridshift.errors import GridshiftError
from pipelines.workload.flexibility import (
    CARBONSCALER_PROFILES,
    FlexParams,
    assign_flexibility,
    fit_marginal_throughput,
    summary,
    task_uniforms,
)

GBPS = 1000.0 * 1024 * 1024 / 1e9  # 1,000 MiB/s in GB/s


def frame(**cols):
    n = len(next(iter(cols.values())))
    base = {"task_id": np.arange(n, dtype=np.int64), "duration_s": np.full(n, 3600.0), "cpu_cores": np.full(n, 4.0),
            "gpus": np.zeros(n), "mem_gb": np.full(n, 8.0), "gpu_mem_gb": np.zeros(n), "bandwidth_gb": np.zeros(n)}
    base.update({k: np.asarray(v) for k, v in cols.items()})
    return pl.DataFrame(base)


def random_tasks(n, seed=0):
    rng = np.random.default_rng(seed)
    g = rng.choice([0.0, 0.25, 0.5, 1.0, 2.0, 8.0], n)
    return frame(task_id=rng.permutation(10 * n)[:n].astype(np.int64), duration_s=rng.uniform(900, 30 * 3600, n),
                 gpus=g, gpu_mem_gb=g * rng.choice([16.0, 32.0, 80.0], n), mem_gb=rng.uniform(1, 600, n))


def test_gaia_queues_checkpoint_by_hand_and_the_fitted_curves():
    t = frame(duration_s=[3600.0, 7199.0, 7200.0, 86_400.0, 3600.0, 3600.0, 900.0],
              gpus=[1.0, 0.0, 2.0, 8.0, 0.5, 0.0, 8.0], gpu_mem_gb=[16.0, 0.0, 64.0, 640.0, 8.0, 0.0, 640.0],
              mem_gb=[30.0, 10.0, 60.0, 900.0, 4.0, 4000.0, 100.0])
    out = assign_flexibility(t, FlexParams(), seed=0)
    r = out.to_dict(as_series=False)
    # GAIA: shorter than 2 h -> 6 h allowed delay, otherwise 24 h
    assert r["max_delay_s"] == [21_600.0, 21_600.0, 86_400.0, 86_400.0, 21_600.0, 21_600.0, 21_600.0]
    # checkpoint = 2 x state / 1,000 MiB/s; state = 12/16 of GPU memory (GPU task) or the memory (CPU-only)
    ck = [2 * 0.75 * 16 / GBPS, 2 * 10 / GBPS, 2 * 0.75 * 64 / GBPS, 2 * 0.75 * 640 / GBPS, 2 * 0.75 * 8 / GBPS]
    assert r["checkpoint_s"][:5] == pytest.approx(ck, rel=1e-12)
    assert r["checkpoint_s"][0] == pytest.approx(22.888, abs=1e-3)
    # a CPU task whose state takes longer to save and restore than it runs (4000 GB: 7629 s > 3600 s), and an
    # 8-GPU task of 15 min (916 s > 900 s), can neither pause nor scale
    assert r["interruptible"] == [True] * 5 + [False, False]
    assert r["checkpoint_s"][5:] == [0.0, 0.0]
    # elastic: CPU-only and whole GPUs; a 0.5 GPU share is not
    assert [x > 1 for x in r["max_scale"]] == [True, True, True, True, False, False, False]
    assert r["min_scale"] == [1.0] * 7
    m100, m10 = (fit_marginal_throughput(t) for _, t in CARBONSCALER_PROFILES)
    assert m100 == pytest.approx(0.880135895512488, rel=1e-12) and m10 == pytest.approx(0.455748007347147, rel=1e-12)
    for m, k in zip(r["marginal_throughput"], r["max_scale"], strict=True):
        assert (m, k) in ((m100, 7.0), (m10, 7.0), (0.0, 1.0))


def test_fit_is_least_squares_through_one():
    # an exactly linear curve gives its slope back; a flat one 0; steeper than linear is capped at 1
    assert fit_marginal_throughput([10.0, 17.0, 24.0, 31.0]) == pytest.approx(0.7)
    assert fit_marginal_throughput([5.0, 5.0, 5.0]) == 0.0
    assert fit_marginal_throughput([1.0, 3.0, 5.0]) == 1.0
    with pytest.raises(GridshiftError, match="scaling profile"):
        fit_marginal_throughput([0.0, 1.0])


def test_same_seed_same_columns_whatever_the_chunking_and_order():
    t = random_tasks(4000)
    a = assign_flexibility(t, FlexParams(), seed=11)
    # in two chunks, each shuffled: each task gets the same flexibility
    halves = [t[:1700].sample(fraction=1.0, shuffle=True, seed=1), t[1700:].sample(fraction=1.0, shuffle=True, seed=2)]
    b = pl.concat([assign_flexibility(h, FlexParams(), seed=11) for h in halves]).sort("task_id")
    assert a.sort("task_id").equals(b)
    assert assign_flexibility(t, FlexParams(), seed=11).equals(a)
    # another seed draws other curves (the queue classes and overheads do not depend on it)
    c = assign_flexibility(t, FlexParams(), seed=12)
    diff = (a["marginal_throughput"] != c["marginal_throughput"]).sum()
    assert 0.3 * a.height < diff < 0.7 * a.height
    assert a["max_delay_s"].equals(c["max_delay_s"]) and a["checkpoint_s"].equals(c["checkpoint_s"])
    # both measured curves are used, about equally
    el = a.filter(pl.col("max_scale") > 1)
    share = (el["marginal_throughput"] > 0.8).mean()
    assert 0.45 < share < 0.55


def test_shares_and_uniforms():
    t = random_tasks(20_000, seed=3)
    out = assign_flexibility(t, FlexParams(interruptible_share=0.3, elastic_share=0.6), seed=5)
    can = out["checkpoint_s"] > 0
    # the shares apply among the tasks that can stop; elastic only among those that can scale out
    stoppable = assign_flexibility(t, FlexParams(), seed=5)["interruptible"]
    assert abs(out["interruptible"].sum() / stoppable.sum() - 0.3) < 0.02
    g = t["gpus"].to_numpy()
    scalable = stoppable.to_numpy() & ((g == 0) | (g >= 1))
    assert abs((out["max_scale"] > 1).sum() / scalable.sum() - 0.6) < 0.02
    assert ((out["interruptible"] | (out["max_scale"] > 1)) == can).all()
    u = task_uniforms(0, np.arange(100_000), 1)
    assert u.min() >= 0.0 and u.max() < 1.0 and abs(u.mean() - 0.5) < 0.005
    assert not np.array_equal(u, task_uniforms(0, np.arange(100_000), 2))


def test_every_value_within_the_bundle_bounds_and_none_profile():
    t = random_tasks(5000, seed=9)
    out = assign_flexibility(t, FlexParams(), seed=0)
    for c in ("max_delay_s", "checkpoint_s", "max_scale", "marginal_throughput"):
        assert all(BOUNDS[c].admits(float(x)) for x in out[c].unique()), c
    assert out["interruptible"].dtype == pl.Boolean and out.null_count().sum_horizontal().item() == 0
    s = summary(out)
    assert s["n_tasks"] == 5000 and s["n_by_max_delay_s"].keys() == {"21600", "86400"}
    assert s["n_interruptible"] == int(out["interruptible"].sum())
    assert s["n_elastic"] == int((out["max_scale"] > 1).sum())
    none = assign_flexibility(out, FlexParams(profile="none"), seed=0)  # replaces the columns
    for c, v in TASK_FLEX_DEFAULTS.items():
        assert (none[c] == v).all(), c
    assert none.columns == out.columns


def test_manifest_records_the_parameters_and_bad_parameters_are_refused():
    m = FlexParams().manifest()
    assert m["short_max_delay_s"] == 21_600.0 and m["long_max_delay_s"] == 86_400.0
    assert m["fitted_marginal_throughput"]["nbody100k"] == pytest.approx(0.880135895512)
    assert m["max_scale"] == {"nbody100k": 7.0, "nbody10k": 7.0} and len(m["params_sha256"]) == 64
    assert FlexParams(interruptible_share=0.5).manifest()["params_sha256"] != m["params_sha256"]
    with pytest.raises(GridshiftError, match="flexibility must be one of"):
        FlexParams(profile="some")
    with pytest.raises(GridshiftError, match="interruptible_share"):
        FlexParams(interruptible_share=1.5)
    with pytest.raises(GridshiftError, match="storage_gb_per_s"):
        FlexParams(storage_gb_per_s=0.0)
