"""Root of the test suite.

``tests/unit`` runs without the data mirror; ``tests/integration`` reads the real upstream data in
``../shared/data`` in place (never copied in) and is marked ``integration``
(``pytest -m "not integration"`` runs the unit tests alone). Whatever runs, no test may change a
byte of the mirror: the session guard below fails the run if one does.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]

# pytest-xdist's workers (``./run.sh test`` runs two) start with COLUMNS=80 and LINES=24 in their environment (seen
# with pytest-xdist 3.8, with or without this conftest; a plain pytest process has neither), and
# Rich fixes a Console's width from COLUMNS when it is made: the CLI's module-level consoles would then print
# 80-column tables in a worker whatever width a test asks for. Tests see the environment a plain process has.
for _name in ("COLUMNS", "LINES"):
    os.environ.pop(_name, None)


def load_example(name: str):
    """``examples/<name>.py`` imported as a module (examples are scripts, not a package)."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(name, REPO / "examples" / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def shared_data_dir() -> Path:
    return Path(os.environ.get("GRIDSHIFT_SHARED_DATA", REPO.parent / "shared" / "data")).resolve()


def _manifest_digests(root: Path) -> dict[str, str]:
    import hashlib

    out = {}
    for line in (root / "MANIFEST.tsv").read_text().splitlines()[1:]:
        rel, _size, sha = line.split("\t")[:3]
        out[rel] = sha if hashlib.sha256((root / rel).read_bytes()).hexdigest() == sha else "MODIFIED"
    return out


@pytest.fixture(scope="session", autouse=True)
def shared_data_is_never_modified():
    """The real data is read in place; fail the run if any test changed a byte of it."""
    root = shared_data_dir()
    yield
    if (root / "MANIFEST.tsv").is_file():
        modified = [rel for rel, state in _manifest_digests(root).items() if state == "MODIFIED"]
        assert not modified, f"tests modified files in {root}: {modified}"
