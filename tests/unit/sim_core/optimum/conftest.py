"""Shared set-up of the optimum tests: a 3-site, 2-day synthetic bundle (one per module and parameters), and the
small one several modules search on (``sites``)."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

import sim_core
from sim_core.testing import synthetic_signals, synthetic_tasks, write_bundle

DAY = 96


@pytest.fixture(scope="module")
def three_site_bundle(tmp_path_factory):
    """A factory: 3 sites (Los Angeles, Berlin, Singapore), 2 days of synthetic signals and ``n_tasks`` synthetic
    tasks (seed ``seed``) with allowed delays of 0, 2 or 6 h (drawn with seed ``seed + 1``) and 0.5 GB each, on
    the given capacity; the loaded scenario."""

    def make(name: str, *, n_tasks: int, seed: int, total_cores: int, total_gpus: int, total_mem_gb: int):
        n = 2 * DAY
        t = synthetic_tasks(n_tasks, n, seed=seed)
        t = t.with_columns(max_delay_s=pl.Series(np.random.default_rng(seed + 1).choice([0.0, 7200.0, 21600.0],
                                                                                         t.height)),
                           bandwidth_gb=pl.lit(0.5))
        path = write_bundle(tmp_path_factory.mktemp(name), locations=["L0", "L1", "L2"],
                            timezones=["America/Los_Angeles", "Europe/Berlin", "Asia/Singapore"],
                            total_cores=total_cores, total_gpus=total_gpus, total_mem_gb=total_mem_gb, n_steps=n,
                            signals=synthetic_signals(3, n, seed), tasks=t, usd_per_gb=0.02, throughput_mbps=400.0,
                            rtt_ms=90.0)
        return sim_core.load(path)

    return make


@pytest.fixture(scope="module")
def sites(three_site_bundle):
    """3 sites, 2 days, 160 synthetic tasks with allowed delays of 0, 2 or 6 h, on 192 cores, 12 GPUs, 1,500 GB."""
    return three_site_bundle("sites", n_tasks=160, seed=5, total_cores=192, total_gpus=12, total_mem_gb=1500)
