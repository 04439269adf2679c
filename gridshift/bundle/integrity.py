"""A bundle's integrity: exactly the declared files, none linked, each matching its sha256.

One code path for ``scenario_builder verify`` (which lists every problem) and ``sim_core.load``
(which stops at the first): :func:`integrity_problems` yields them in order. Only the fixed file
names of the format are ever opened, inside the bundle directory: a manifest naming another path
(``../../etc/passwd``, an absolute path) is refused without touching that path, symbolic links are
refused, and any other entry in the directory (``evil.pkl``, a hidden file) is refused.
"""

from __future__ import annotations

import os
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from gridshift.bundle.errors import BundleError
from gridshift.bundle.format import (
    DATA_FILES,
    FORMAT_VERSION,
    MANIFEST,
    MANIFEST_KEYS,
    PARQUET_MAGIC,
    is_int,
    parse_json,
    pretty_json,
)
from gridshift.hashing import compute_bundle_id, sha256_file

_HEX64 = set("0123456789abcdef")


def regular_file(path: Path) -> bool:
    """Whether ``path`` is a regular file itself (not a link, a folder, a FIFO or a device): the only thing a bundle
    reader opens, so that no name in a hostile bundle can block or redirect a read."""
    try:
        return stat.S_ISREG(os.lstat(path).st_mode)
    except OSError:
        return False


def read_manifest(root: Path) -> dict[str, Any]:
    """The parsed manifest of ``root`` (a directory — the path the user names may be a link to one —
    holding a regular ``manifest.json``)."""
    if not os.path.isdir(root):
        raise BundleError("not a bundle directory", file=str(root))
    mpath = root / MANIFEST
    if not regular_file(mpath):
        raise BundleError("missing, or not a regular file", file=str(mpath))
    return parse_json(mpath.read_bytes(), str(mpath))


def integrity_problems(root: Path) -> Iterator[BundleError]:
    """Every integrity problem of the bundle at ``root``, in a fixed order (manifest first)."""
    root = Path(root)
    try:
        manifest = read_manifest(root)
    except BundleError as exc:
        yield exc
        return
    mpath = str(root / MANIFEST)
    for key, typ in MANIFEST_KEYS.items():
        if key not in manifest:
            yield BundleError(f"missing key {key!r}", file=mpath, column=key)
        elif not isinstance(manifest[key], typ) or (typ is int and not is_int(manifest[key])):
            yield BundleError(f"{key!r} must be a JSON {typ.__name__}", file=mpath, column=key,
                              rows=[0], values=[manifest[key]])
    version = manifest.get("format_version")
    if version != FORMAT_VERSION:
        why = (f"format_version {version!r} is not supported (expected {FORMAT_VERSION})")
        if is_int(version) and 1 <= version < FORMAT_VERSION:
            why += (f": a version-{version} bundle has no task flexibility columns; rebuild it with this gridshift "
                    "(scenario_builder export, or sim_core.testing.write_bundle)")
        yield BundleError(why, file=mpath, column="format_version")
        return
    expected_id = compute_bundle_id(manifest)
    if manifest.get("bundle_id") != expected_id:
        yield BundleError(f"bundle_id {manifest.get('bundle_id')!r} does not match its content ({expected_id})",
                          file=mpath, column="bundle_id")
    if (root / MANIFEST).read_bytes() != pretty_json(manifest):
        yield BundleError("bytes differ from the canonical serialization (edited?)", file=mpath)
    files = manifest.get("files")
    if not isinstance(files, dict):
        return
    for name in sorted(set(files) - set(DATA_FILES)):
        yield BundleError(f"'files' lists {name!r}, which is not a bundle file name", file=mpath, column="files")
    for name in DATA_FILES:
        digest = files.get(name)
        if name not in files:
            yield BundleError(f"'files' does not list {name}", file=mpath, column="files")
            continue
        if not (isinstance(digest, str) and len(digest) == 64 and set(digest) <= _HEX64):
            yield BundleError(f"'files' entry of {name} is not a sha256 hex digest", file=mpath, column="files",
                              rows=[0], values=[digest])
            continue
        path = root / name
        if not regular_file(path):
            yield BundleError("missing, or not a regular file (links are refused)", file=str(path))
            continue
        got = sha256_file(path)
        if got != digest:
            yield BundleError(f"sha256 {got} does not match manifest.json ({digest})", file=str(path))
            continue
        if name.endswith(".parquet"):
            with open(path, "rb") as fh:
                head = fh.read(4)
                fh.seek(0, os.SEEK_END)
                size = fh.tell()
                fh.seek(max(size - 4, 0))
                tail = fh.read(4)
            if size < 12 or head != PARQUET_MAGIC or tail != PARQUET_MAGIC:
                yield BundleError("not a Parquet file", file=str(path))
    for child in sorted(os.listdir(root)):
        if child not in (*DATA_FILES, MANIFEST):
            yield BundleError("unexpected entry in the bundle directory (only the format's files are allowed)",
                              file=str(root / child))


def check_integrity(root: Path) -> dict[str, Any]:
    """The verified manifest of ``root``; the first integrity problem raised as :class:`BundleError`."""
    for problem in integrity_problems(root):
        raise problem
    return read_manifest(Path(root))
