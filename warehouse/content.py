"""A warehouse table's content, for comparing two warehouses exactly (tests, benchmarks).

Two ingests of the same files must give the same content: every declared column (``warehouse.schemas``)
but the volatile ones, in primary-key order. ``raw_files.fetched_at`` is volatile: when the bytes were
landed, which differs from one ingest to the next by design.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl

from warehouse.db import read_table
from warehouse.schemas import TABLES

#: table -> columns left out of a comparison (they record when, not what)
VOLATILE: dict[str, tuple[str, ...]] = {"raw_files": ("fetched_at",)}


def table_content(db_path: Path, name: str, *, stored_order: bool = False) -> pl.DataFrame:
    """Table ``name``'s rows, its declared columns but the volatile ones, in primary-key order (or, with
    ``stored_order``, in the order DuckDB scans them: the order they were written)."""
    table = TABLES[name]
    cols = ", ".join(f'"{c}"' for c in table.columns if c not in VOLATILE.get(name, ()))
    order = "" if stored_order else " ORDER BY " + ", ".join(f'"{c}"' for c in table.primary_key)
    return read_table(db_path, f'SELECT {cols} FROM "{name}"{order}')


def ipc_bytes(df: pl.DataFrame) -> bytes:
    """``df`` as uncompressed Arrow IPC: equal bytes iff equal schema and values."""
    return df.write_ipc(None, compression="uncompressed").getvalue()
