"""``verify``: every problem of a bundle, for people (``scenario_builder verify``) and tests.

The same checks as ``sim_core.load`` (which stops at the first): integrity (files, links, hashes,
id, canonical manifest), then content (``gridshift.bundle.content``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from gridshift.bundle.content import read_content
from gridshift.bundle.errors import BundleError
from gridshift.bundle.integrity import integrity_problems, read_manifest


@dataclass
class VerifyResult:
    path: Path
    bundle_id: str | None
    problems: list[BundleError] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


def verify_bundle(path: str | Path, *, content: bool = True) -> VerifyResult:
    """Re-hash everything and, when the files are intact, check their content against the contract."""
    root = Path(path)
    res = VerifyResult(root, None, list(integrity_problems(root)))
    try:
        manifest = read_manifest(root)
    except BundleError:
        return res
    bid = manifest.get("bundle_id")
    res.bundle_id = bid if isinstance(bid, str) else None
    if content and not res.problems:
        try:
            read_content(root, manifest, lazy_tasks=True)  # (every row group checked; a year is never held)
        except BundleError as exc:
            res.problems.append(exc)
    return res
