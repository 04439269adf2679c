"""Fixtures for the workload tests (helpers in ``workload_fixture``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.workload.workload_fixture import MIRROR, write_trace


@pytest.fixture
def trace_dir(tmp_path: Path) -> Path:
    return write_trace(tmp_path / "trace")


@pytest.fixture
def mirror() -> Path:
    if not MIRROR.is_dir():
        pytest.skip(f"shared data mirror not found at {MIRROR}")
    return MIRROR
