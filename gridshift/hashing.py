"""sha256 helpers: raw landings, bundle files and bundle ids are all named by content."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def sha256_file(path: Path, chunk: int = 1 << 20) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(chunk):
            h.update(block)
    return h.hexdigest()


def canonical_json(obj: Any) -> bytes:
    """Sorted keys, no spaces, UTF-8, no NaN: the form every content hash is taken over."""
    return json.dumps(obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False).encode()


def compute_bundle_id(manifest: dict[str, Any]) -> str:
    """A bundle's id: first 16 hex chars of sha256 over the canonical JSON of its manifest without
    ``bundle_id`` (the contract between scenario_builder, which writes it, and sim_core, which checks it)."""
    return sha256_bytes(canonical_json({k: v for k, v in manifest.items() if k != "bundle_id"}))[:16]
