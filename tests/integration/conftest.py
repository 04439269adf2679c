"""Integration tests: they read the real upstream data in ``../shared/data`` (a mirror of the
publishers' own formats), in place. Every test under this folder is marked ``integration``."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import shared_data_dir


def pytest_collection_modifyitems(config, items):
    here = Path(__file__).parent
    for item in items:
        if here in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.integration)


@pytest.fixture(scope="session")
def shared_data() -> Path:
    path = shared_data_dir()
    if not (path / "MANIFEST.tsv").is_file():
        pytest.fail(f"real upstream data not found at {path} (set GRIDSHIFT_SHARED_DATA)")
    return path
