"""Fixtures for the benchmark-sweep tests: a JIT warm-up, one small bundle, and an isolated home."""

from __future__ import annotations

import pytest

import sim_core
from sim_core.bench.sweep import DEFAULT_POLICIES
from sim_core.testing import reference_bundle, tiny_bundle


@pytest.fixture(scope="session", autouse=True)
def warm_jit(tmp_path_factory):
    """Compile (or load from the cache) the kernels of the policies used here once per session."""
    sc = sim_core.load(tiny_bundle(tmp_path_factory.mktemp("warm")))
    for pol in DEFAULT_POLICIES:
        sim_core.run(sc, pol, seed=0)


@pytest.fixture(scope="session")
def bundle(tmp_path_factory):
    """3 DCs of the reference cluster, 2 days of synthetic signals, 300 synthetic tasks."""
    return reference_bundle(tmp_path_factory.mktemp("bundles"), n_tasks=300, n_steps=192, n_dc=3, seed=3)


@pytest.fixture(scope="session")
def scenario(bundle):
    return sim_core.load(bundle)


@pytest.fixture(autouse=True)
def no_ambient_home(monkeypatch, tmp_path):
    """No test may pick up a real home: GRIDSHIFT_HOME unset, and cwd without ./.gridshift."""
    monkeypatch.delenv("GRIDSHIFT_HOME", raising=False)
    monkeypatch.chdir(tmp_path)


class RunCounter:
    """Wraps sim_core.run and counts the simulations (monkeypatched in place of sim_core.run)."""

    def __init__(self, monkeypatch):
        self.calls: list[tuple[str, int]] = []
        real = sim_core.run

        def counted(sc, policy, *, seed=0, **kw):
            self.calls.append((policy, seed))
            return real(sc, policy, seed=seed, **kw)

        monkeypatch.setattr(sim_core, "run", counted)


@pytest.fixture
def run_counter(monkeypatch):
    return RunCounter(monkeypatch)
