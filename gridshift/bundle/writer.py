"""Write a bundle: hash the files, derive the id from the content, publish the directory atomically.

The builder (``scenario_builder``) and the test-bundle writer (``sim_core.testing``) both end here,
so every bundle on disk has the same form whoever made it.
"""

from __future__ import annotations

import shutil
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gridshift.atomic import publish_directory
from gridshift.bundle.errors import BundleError
from gridshift.bundle.format import DATA_FILES, MANIFEST, pretty_json
from gridshift.bundle.integrity import integrity_problems, read_manifest
from gridshift.bundle.size import check_datacenter_count
from gridshift.hashing import compute_bundle_id, sha256_bytes, sha256_file
from gridshift.home import safe_join
from gridshift.limits import BUNDLE


@dataclass
class Published:
    path: Path
    bundle_id: str
    manifest: dict[str, Any]
    reused: bool


#: a data file's content: its bytes, or a finished file (written by a stream, too large to hold: it is moved in)
FileContent = bytes | Path


def _sha256(content: FileContent) -> str:
    return sha256_file(content) if isinstance(content, Path) else sha256_bytes(content)


def finalize_manifest(files: Mapping[str, FileContent], manifest: dict[str, Any]) -> dict[str, Any]:
    """The manifest with ``files`` (sha256 of every data file) and ``bundle_id`` (from the content)."""
    if sorted(files) != sorted(DATA_FILES):
        raise ValueError(f"a bundle holds exactly {DATA_FILES}, got {sorted(files)}")
    # a bundle no reader would load is never written (gridshift.bundle.size)
    check_datacenter_count(len(manifest.get("locations") or ()), MANIFEST)
    BUNDLE.tasks.check(int(manifest.get("n_tasks") or 0), file=MANIFEST, what="the number of tasks",
                       column="n_tasks", error=BundleError)
    out = {k: v for k, v in manifest.items() if k not in ("files", "bundle_id")}
    out["files"] = {name: _sha256(files[name]) for name in sorted(files)}
    out["bundle_id"] = compute_bundle_id(out)
    return out


def intact(path: Path, bundle_id: str) -> bool:
    """Whether ``path`` is a complete bundle with this id, every file matching its manifest."""
    if next(integrity_problems(path), None) is not None:
        return False
    return read_manifest(path).get("bundle_id") == bundle_id


def publish(files: Mapping[str, FileContent], manifest: dict[str, Any], out_dir: Path, *, name: str | None = None
            ) -> Published:
    """Write the bundle to ``out_dir/<bundle_id>`` (or ``out_dir/<name>``). An intact copy already
    there is reused, concurrent writers of the same id end with one complete directory and no error,
    and readers never see a partial one (``gridshift.atomic.publish_directory``). A file given as a path is
    moved into the bundle (renamed when it is on ``out_dir``'s file system; the caller removes it if the bundle was
    already there)."""
    final_manifest = finalize_manifest(files, manifest)
    bid = final_manifest["bundle_id"]
    final = safe_join(Path(out_dir), name or bid)

    def fill(tmp: Path) -> None:
        for fname in DATA_FILES:
            content = files[fname]
            if isinstance(content, Path):
                shutil.move(content, tmp / fname)  # (a rename on one file system, a copy across two)
            else:
                (tmp / fname).write_bytes(content)
        (tmp / MANIFEST).write_bytes(pretty_json(final_manifest))

    published = publish_directory(final, fill, lambda path: intact(path, bid))
    return Published(final, bid, final_manifest, reused=not published)
