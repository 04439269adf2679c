"""Verify a bundle: format version, canonical manifest bytes, bundle id, sha256 of every file.

Any single changed byte anywhere in a bundle is caught: in a data file by its sha256, in the
manifest either by the canonical-bytes check or by the bundle id (which hashes the manifest's
content). Unexpected files (anything but the four data files and the manifest) are refused, so a
bundle can never carry executable or pickled content alongside.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

from gridshift.hashing import compute_bundle_id, sha256_file

FORMAT_VERSION = 1
DATA_FILES = ("signals.parquet", "tasks.parquet", "network.parquet", "datacenters.json")
MANIFEST = "manifest.json"
PARQUET_MAGIC = b"PAR1"


@dataclass
class Problem:
    file: str
    message: str

    def __str__(self) -> str:
        return f"{self.file}: {self.message}"


@dataclass
class VerifyResult:
    path: Path
    bundle_id: str | None
    problems: list[Problem] = field(default_factory=list)
    checked: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.problems


def _canonical(manifest: dict) -> bytes:
    return (json.dumps(manifest, sort_keys=True, indent=2, ensure_ascii=False, allow_nan=False) + "\n").encode()


def verify_bundle(path: str | Path) -> VerifyResult:
    """Re-hash everything; every mismatch is reported with the offending file."""

    root = Path(path)
    res = VerifyResult(root, None)
    if not root.is_dir():
        res.problems.append(Problem(str(root), "not a bundle directory"))
        return res
    mpath = root / MANIFEST
    try:
        raw = mpath.read_bytes()
        manifest = json.loads(raw.decode("utf-8"))
    except FileNotFoundError:
        res.problems.append(Problem(MANIFEST, "missing"))
        return res
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        res.problems.append(Problem(MANIFEST, f"not valid JSON ({exc})"))
        return res
    if not isinstance(manifest, dict):
        res.problems.append(Problem(MANIFEST, "not a JSON object"))
        return res
    res.bundle_id = manifest.get("bundle_id")
    res.checked.append(MANIFEST)
    if manifest.get("format_version") != FORMAT_VERSION:
        res.problems.append(Problem(MANIFEST, f"format_version {manifest.get('format_version')!r} is not "
                                              f"supported (expected {FORMAT_VERSION})"))
    try:
        canonical = _canonical(manifest)
    except ValueError as exc:
        canonical = b""
        res.problems.append(Problem(MANIFEST, f"not canonical JSON ({exc})"))
    if canonical and raw != canonical:
        res.problems.append(Problem(MANIFEST, "bytes differ from the canonical serialization (edited?)"))
    expected_id = compute_bundle_id(manifest)
    if manifest.get("bundle_id") != expected_id:
        res.problems.append(Problem(MANIFEST, f"bundle_id {manifest.get('bundle_id')!r} does not match its "
                                              f"content ({expected_id})"))
    files = manifest.get("files")
    if not isinstance(files, dict):
        res.problems.append(Problem(MANIFEST, "no 'files' table"))
        return res
    for name in DATA_FILES:
        if name not in files:
            res.problems.append(Problem(MANIFEST, f"'files' does not list {name}"))
    for name in sorted(files):
        if name not in DATA_FILES:
            res.problems.append(Problem(name, "listed in manifest.json but not a bundle file name"))
            continue
        fp = root / name
        if not fp.is_file() or fp.is_symlink():
            res.problems.append(Problem(name, "missing (listed in manifest.json)"))
            continue
        got = sha256_file(fp)
        res.checked.append(name)
        if got != files[name]:
            res.problems.append(Problem(name, f"sha256 {got} does not match manifest.json ({files[name]})"))
            continue
        if name.endswith(".parquet"):
            with open(fp, "rb") as fh:
                head = fh.read(4)
                fh.seek(-4, 2)
                tail = fh.read(4)
            if head != PARQUET_MAGIC or tail != PARQUET_MAGIC:
                res.problems.append(Problem(name, "not a Parquet file"))
    for child in sorted(root.iterdir()):
        if child.name not in (*DATA_FILES, MANIFEST):
            res.problems.append(Problem(child.name, "unexpected file in bundle (not allowed)"))
    return res
