"""Fixtures for the workload tests (helpers in ``workload_fixture``)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.integration.pipelines.workload.workload_fixture import write_trace


@pytest.fixture
def trace_dir(tmp_path: Path) -> Path:
    return write_trace(tmp_path / "trace")


@pytest.fixture
def mirror(shared_data: Path) -> Path:
    """The real-data mirror (tests/conftest.py fails the run if it is missing)."""
    return shared_data
