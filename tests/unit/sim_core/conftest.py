"""Shared fixtures for the sim_core tests: a bundle writer and a session-wide JIT warm-up."""

from __future__ import annotations

import pytest

import sim_core
from sim_core.testing import tiny_bundle


@pytest.fixture(scope="session", autouse=True)
def warm_jit(tmp_path_factory):
    """Compile (or load from cache) every kernel once per session on a tiny scenario."""
    p = tiny_bundle(tmp_path_factory.mktemp("warm"))
    sc = sim_core.load(p)
    for pol in sim_core.POLICIES:
        sim_core.run(sc, pol, seed=0)
    return sc
