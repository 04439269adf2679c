"""Deterministic Parquet: fixed writer settings, so the same frame gives byte-identical files
(bundles, sweep outputs) across runs and machines."""

from __future__ import annotations

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
