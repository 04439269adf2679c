"""The hostile-bundle harness: valid test bundles, then one thing made wrong in each.

``rewrite_manifest`` re-signs an edited manifest (canonical bytes, fresh bundle id) and
``rewrite_file`` replaces a data file and re-signs, so a test reaches the check it is aimed at
instead of stopping at a hash mismatch — exactly what an adversary who can edit a bundle does.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from gridshift.bundle import MANIFEST, pretty_json
from gridshift.hashing import compute_bundle_id, sha256_bytes
from gridshift.parquet import parquet_bytes
from sim_core.testing import tiny_bundle


def valid_bundle(root: Path, **kw) -> Path:
    return tiny_bundle(root, **kw)


def rewrite_manifest(bundle: Path, mutate: Callable[[dict[str, Any]], None], *, resign: bool = True) -> None:
    m = json.loads((bundle / MANIFEST).read_text())
    mutate(m)
    if resign:
        m["bundle_id"] = compute_bundle_id(m)
        (bundle / MANIFEST).write_bytes(pretty_json(m))
    else:
        (bundle / MANIFEST).write_text(json.dumps(m))


def rewrite_file(bundle: Path, name: str, data: bytes) -> None:
    (bundle / name).write_bytes(data)
    rewrite_manifest(bundle, lambda m: m["files"].__setitem__(name, sha256_bytes(data)))


def rewrite_parquet(bundle: Path, name: str, mutate: Callable[[pl.DataFrame], pl.DataFrame]) -> None:
    """Replace a Parquet file by ``mutate(frame)``, keeping the columns' dtypes unless ``mutate`` changes them."""
    df = mutate(pl.read_parquet(bundle / name))
    rewrite_file(bundle, name, parquet_bytes(df))


def set_value(col: str, row: int, value: Any) -> Callable[[pl.DataFrame], pl.DataFrame]:
    def f(df: pl.DataFrame) -> pl.DataFrame:
        s = df[col].to_numpy().copy()
        s[row] = value
        return df.with_columns(pl.Series(col, s, dtype=df.schema[col]))
    return f


def rewrite_datacenters(bundle: Path, mutate: Callable[[list[dict[str, Any]]], None]) -> None:
    body = json.loads((bundle / "datacenters.json").read_text())
    mutate(body["datacenters"])
    rewrite_file(bundle, "datacenters.json", json.dumps(body, allow_nan=True).encode())  # NaN allowed: hostile


def nested(depth: int) -> Any:
    x: Any = 0
    for _ in range(depth):
        x = [x]
    return x


__all__ = ["nested", "np", "rewrite_datacenters", "rewrite_file", "rewrite_manifest", "rewrite_parquet", "set_value",
           "valid_bundle"]
