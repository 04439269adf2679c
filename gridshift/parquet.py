"""Deterministic Parquet: fixed writer settings, so the same frame gives byte-identical files
(bundles, sweep outputs) across runs and machines."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

ROW_GROUP_ROWS = 1 << 17

#: Parquet writer settings (recorded in every bundle manifest).
PARQUET_OPTIONS: dict[str, Any] = {
    "compression": "zstd", "compression_level": 3, "use_dictionary": True, "write_statistics": True,
    "row_group_size": ROW_GROUP_ROWS, "data_page_size": 1 << 20, "version": "2.6", "store_schema": True,
    "write_page_index": False,
}


def parquet_bytes(df: pl.DataFrame, schema: pa.Schema | None = None) -> bytes:
    """``df`` as Parquet with the fixed settings; with ``schema``, its columns by name cast to it."""
    table = df.to_arrow() if schema is None else df.select(schema.names).to_arrow().cast(schema)
    sink = pa.BufferOutputStream()
    pq.write_table(table, sink, **PARQUET_OPTIONS)
    return sink.getvalue().to_pybytes()


def write_parquet_batches(path: Path, frames: Iterable[pl.DataFrame], schema: pa.Schema) -> int:
    """Write ``frames`` (in order, each with the columns of ``schema``) as one Parquet file at ``path`` with the
    fixed settings, holding one frame at a time; returns the rows written. Every frame but the last must hold a
    whole number of row groups (:data:`ROW_GROUP_ROWS`), so the file is byte for byte the one
    :func:`parquet_bytes` gives for the frames concatenated (its row groups are the same rows)."""
    opts = {k: v for k, v in PARQUET_OPTIONS.items() if k != "row_group_size"}
    rows, short = 0, None
    with pq.ParquetWriter(str(path), schema, **opts) as writer:
        for df in frames:
            if not df.height:  # (an empty row group would change the bytes)
                continue
            if short is not None:
                raise ValueError(f"a frame of {short} rows, not a whole number of row groups of {ROW_GROUP_ROWS}, "
                                 "came before the last")
            if df.height % ROW_GROUP_ROWS:
                short = df.height
            writer.write_table(df.select(schema.names).to_arrow().cast(schema), row_group_size=ROW_GROUP_ROWS)
            rows += df.height
        if not rows:  # no rows: the empty file parquet_bytes writes
            writer.write_table(schema.empty_table(), row_group_size=ROW_GROUP_ROWS)
    return rows
