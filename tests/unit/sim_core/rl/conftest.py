"""Fixtures for the RL tests: a session-wide JIT warm-up and small bundles."""

from __future__ import annotations

import numpy as np
import pytest

import sim_core
from sim_core.gym import TaskSchedulingEnv
from sim_core.testing import tiny_bundle, write_bundle


@pytest.fixture(scope="session", autouse=True)
def warm_jit(tmp_path_factory):
    """Compile (or load from cache) the engine, step and feature kernels once per session."""
    sc = sim_core.load(tiny_bundle(tmp_path_factory.mktemp("warm")))
    sim_core.run(sc, "lowest_carbon")
    for single in (True, False):
        env = TaskSchedulingEnv(sc, single_action=single, steps=8)
        obs, _ = env.reset(seed=0)
        for _ in range(8):
            obs, *_ = env.step(1 if single else [1] * len(obs))
    return sc


def busy_bundle(root, n_tasks: int = 400, seed: int = 0, **kw):
    """3 DCs (UTC), tight capacity, carbon signals that cross during the day, costly transfers:
    a lowest-carbon run has remote transfers, queueing and SLA violations."""
    rng = np.random.default_rng(seed)
    n_steps = 96
    k = np.arange(n_steps)
    carbon = np.stack([300 + 200 * np.sin(2 * np.pi * k / 96 + ph) for ph in (0.0, 2.1, 4.2)])
    price = np.stack([80 + 30 * np.cos(2 * np.pi * k / 96 + ph) for ph in (0.5, 1.5, 2.5)])
    arr = np.sort(rng.uniform(0, 20 * 3600, n_tasks))
    tasks = {"arrival_ts_utc": arr, "duration_s": rng.uniform(900, 7200, n_tasks),
             "cpu_cores": rng.choice([1.0, 2.0, 4.0, 8.0], n_tasks),
             "gpus": rng.choice([0.0, 0.0, 0.5, 1.0], n_tasks), "mem_gb": rng.uniform(1, 16, n_tasks),
             "bandwidth_gb": rng.exponential(0.8, n_tasks)}
    args = dict(locations=["AA", "BB", "CC"], timezones=["UTC", "Europe/Berlin", "Asia/Singapore"],
                population_weight=[0.5, 0.3, 0.2], total_cores=[48, 32, 64], total_gpus=[4, 2, 4],
                total_mem_gb=[512, 256, 512], n_steps=n_steps,
                signals={"carbon_g_per_kwh": carbon, "price_usd_per_mwh": price}, tasks=tasks,
                usd_per_gb=np.array([[0, 0.05, 0.09], [0.04, 0, 0.08], [0.07, 0.06, 0]]),
                throughput_mbps=60.0, rtt_ms=150.0)
    args.update(kw)
    return write_bundle(root, **args)


@pytest.fixture(scope="session")
def busy(tmp_path_factory):
    return sim_core.load(busy_bundle(tmp_path_factory.mktemp("busy")))
