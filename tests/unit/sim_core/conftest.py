"""Shared fixtures for the sim_core tests: a bundle writer and a session-wide JIT warm-up."""

from __future__ import annotations

import contextlib
import os

import pytest

import sim_core
from sim_core.policies import registry
from sim_core.testing import tiny_bundle


@pytest.fixture(scope="session", autouse=True)
def warm_jit(tmp_path_factory):
    """Compile (or load from Numba's cache) every built-in policy's kernels once per session on a tiny scenario.

    pytest-xdist's workers share the cache (``NUMBA_CACHE_DIR``) but would compile the same kernels side by side,
    each on its own core. So each kernel group (the kernels every run shares, then each policy module's) is
    compiled under a file lock of its own, and the workers take the modules in opposite orders: each compiles
    about half of them and loads the rest from the cache the other wrote."""
    from filelock import FileLock

    worker = os.environ.get("PYTEST_XDIST_WORKER")  # gw0, gw1, ... (unset without xdist: nothing to share)
    locks = tmp_path_factory.getbasetemp().parent  # the pytest session's folder, shared by its workers

    def lock(group: str):
        return FileLock(locks / f"warm-jit-{group}.lock") if worker else contextlib.nullcontext()

    sc = sim_core.load(tiny_bundle(tmp_path_factory.mktemp("warm")))
    by_module: dict[str, list[str]] = {}
    for pol in sim_core.POLICIES:
        by_module.setdefault(registry.get(pol).module, []).append(pol)
    with lock("shared"):
        sim_core.run(sc, sim_core.POLICIES[0], seed=0)  # the shared kernels (and its module's)
    modules = list(by_module)
    for module in (modules[::-1] if worker and int(worker.removeprefix("gw")) % 2 else modules):
        with lock(module):
            for pol in by_module[module]:
                sim_core.run(sc, pol, seed=0)
    return sc
