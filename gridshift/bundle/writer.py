"""Write a bundle: hash the files, derive the id from the content, publish the directory atomically.

The builder (``scenario_builder``) and the test-bundle writer (``sim_core.testing``) both end here,
so every bundle on disk has the same form whoever made it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from gridshift.atomic import publish_directory
from gridshift.bundle.format import DATA_FILES, MANIFEST, pretty_json
from gridshift.bundle.integrity import integrity_problems, read_manifest
from gridshift.bundle.size import check_datacenter_count
from gridshift.hashing import compute_bundle_id, sha256_bytes
from gridshift.home import safe_join


@dataclass
class Published:
    path: Path
    bundle_id: str
    manifest: dict[str, Any]
    reused: bool


def finalize_manifest(files: dict[str, bytes], manifest: dict[str, Any]) -> dict[str, Any]:
    """The manifest with ``files`` (sha256 of every data file) and ``bundle_id`` (from the content)."""
    if sorted(files) != sorted(DATA_FILES):
        raise ValueError(f"a bundle holds exactly {DATA_FILES}, got {sorted(files)}")
    # a bundle no reader would load is never written (gridshift.bundle.size)
    check_datacenter_count(len(manifest.get("locations") or ()), MANIFEST)
    out = {k: v for k, v in manifest.items() if k not in ("files", "bundle_id")}
    out["files"] = {name: sha256_bytes(files[name]) for name in sorted(files)}
    out["bundle_id"] = compute_bundle_id(out)
    return out


def intact(path: Path, bundle_id: str) -> bool:
    """Whether ``path`` is a complete bundle with this id, every file matching its manifest."""
    if next(integrity_problems(path), None) is not None:
        return False
    return read_manifest(path).get("bundle_id") == bundle_id


def publish(files: dict[str, bytes], manifest: dict[str, Any], out_dir: Path, *, name: str | None = None
            ) -> Published:
    """Write the bundle to ``out_dir/<bundle_id>`` (or ``out_dir/<name>``). An intact copy already
    there is reused, concurrent writers of the same id end with one complete directory and no error,
    and readers never see a partial one (``gridshift.atomic.publish_directory``)."""
    final_manifest = finalize_manifest(files, manifest)
    bid = final_manifest["bundle_id"]
    final = safe_join(Path(out_dir), name or bid)

    def fill(tmp: Path) -> None:
        for fname in DATA_FILES:
            (tmp / fname).write_bytes(files[fname])
        (tmp / MANIFEST).write_bytes(pretty_json(final_manifest))

    published = publish_directory(final, fill, lambda path: intact(path, bid))
    return Published(final, bid, final_manifest, reused=not published)
