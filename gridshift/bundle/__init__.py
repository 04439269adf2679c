"""The scenario bundle format, declared once (docs/bundle_format.md).

Used by the builder (``scenario_builder``), ``scenario_builder verify``, ``sim_core.load`` and the
test-bundle writer (``sim_core.testing``): the version, the file names and column schemas, the JSON
form, the integrity checks, the content checks and the atomic writer all live here.
"""

from pathlib import Path

from gridshift.bundle.content import BundleContent, Header, read_content
from gridshift.bundle.errors import BundleError
from gridshift.bundle.format import (
    DATA_FILES,
    FORMAT_VERSION,
    MANIFEST,
    NETWORK_SCHEMA,
    SIGNALS_SCHEMA,
    TASK_FLEX_DEFAULTS,
    TASKS_SCHEMA,
    pretty_json,
)
from gridshift.bundle.integrity import check_integrity
from gridshift.bundle.verify import VerifyResult, verify_bundle
from gridshift.bundle.writer import Published, publish
from gridshift.timestep import STEP_S


def load_content(path: str | Path, tasks: bool = True, *, lazy_tasks: bool = False) -> BundleContent:
    """Verify a bundle's integrity and read its checked content (what ``sim_core.load`` builds on); ``tasks=False``
    leaves the tasks unread (:func:`read_content`); ``lazy_tasks``: the task columns other than arrivals read on
    demand (``content.open_tasks``)."""
    root = Path(path)
    return read_content(root, check_integrity(root), tasks=tasks, lazy_tasks=lazy_tasks)


__all__ = [
    "BundleContent", "BundleError", "DATA_FILES", "FORMAT_VERSION", "Header", "MANIFEST", "NETWORK_SCHEMA",
    "Published", "SIGNALS_SCHEMA", "STEP_S", "TASK_FLEX_DEFAULTS", "TASKS_SCHEMA", "VerifyResult", "check_integrity",
    "load_content", "pretty_json", "publish", "read_content", "verify_bundle",
]
