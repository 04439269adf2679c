"""Deterministic Parquet (gridshift.parquet): a file streamed in batches of whole row groups is byte for byte the
file of the frames at once, so a bundle's id does not depend on how its tasks were written."""

from __future__ import annotations

import numpy as np
import polars as pl
import pyarrow as pa
import pytest

from gridshift.parquet import ROW_GROUP_ROWS, parquet_bytes, write_parquet_batches

SCHEMA = pa.schema([("task_id", pa.int64()), ("duration_s", pa.float64()), ("interruptible", pa.bool_())])


def _frame(n: int, seed: int = 0) -> pl.DataFrame:
    rng = np.random.default_rng(seed)
    return pl.DataFrame({"interruptible": rng.random(n) < 0.3, "task_id": np.arange(n, dtype=np.int64),
                         "duration_s": rng.choice([900.0, 3600.0, 7_200.5], n)})  # (column order other than SCHEMA's)


def test_batches_of_whole_row_groups_write_the_bytes_of_the_whole(tmp_path):
    df = _frame(2 * ROW_GROUP_ROWS + 1_234)
    path = tmp_path / "t.parquet"
    parts = [df.slice(0, ROW_GROUP_ROWS), df.slice(ROW_GROUP_ROWS, 0), df.slice(ROW_GROUP_ROWS)]
    assert write_parquet_batches(path, iter(parts), SCHEMA) == df.height
    assert path.read_bytes() == parquet_bytes(df, SCHEMA)
    assert pl.read_parquet(path).select(df.columns).equals(df)
    # no rows at all: the empty file of the schema
    assert write_parquet_batches(tmp_path / "e.parquet", iter([]), SCHEMA) == 0
    assert (tmp_path / "e.parquet").read_bytes() == parquet_bytes(df.head(0), SCHEMA)


def test_a_batch_of_part_of_a_row_group_before_the_last_is_refused(tmp_path):
    df = _frame(ROW_GROUP_ROWS + 10)
    with pytest.raises(ValueError, match=f"a frame of 10 rows, not a whole number of row groups of {ROW_GROUP_ROWS}"):
        write_parquet_batches(tmp_path / "t.parquet", iter([df.head(10), df.slice(10)]), SCHEMA)
