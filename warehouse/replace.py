"""Replace a whole partition of a table (delete its rows, insert the new set) in one transaction.

``warehouse.load.write`` upserts by primary key, which merges a new load with an old one: right
for time series, wrong for a derived set such as one (workload, year) of ``workload_tasks``, where
a re-derivation with other parameters must not leave rows of the previous one behind. Here the
partition's rows are deleted and the new rows inserted inside one transaction, together with any
upserts (``raw_files``, ``workload_runs``...): readers see the old set or the new one, never a mix,
and a failure rolls everything back.

DuckDB's primary-key index and a DELETE followed by an INSERT of the same keys in one transaction:
some DuckDB versions raised a duplicate-key error for this. DuckDB 2.0 (pinned here) does not;
``tests/workload/test_replace.py`` checks it, including on a file reopened from disk.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from gridshift.errors import DataError
from warehouse.db import write_connection
from warehouse.load import conform
from warehouse.schemas import TABLES


@dataclass(frozen=True)
class Replacement:
    """All rows of ``table`` whose columns equal ``key`` are replaced by ``frame`` (validated), or by
    the rows of the Parquet file ``parquet`` (validated as it was written; DuckDB reads it in a
    streaming scan, so a partition larger than memory can be replaced)."""

    table: str
    key: Mapping[str, object]
    frame: pl.DataFrame | None = None
    parquet: Path | None = None

    def __post_init__(self) -> None:
        if (self.frame is None) == (self.parquet is None):
            raise ValueError("a Replacement takes a frame or a Parquet file, not both or neither")


def _check_keys(rep: Replacement, con=None) -> None:
    table = TABLES[rep.table]
    for col, val in rep.key.items():
        if col not in table.columns:
            raise DataError(f"table {rep.table!r} has no column {col!r} to replace by")
        if rep.frame is not None:
            outside = rep.frame.height and not (rep.frame[col] == val).all()
        else:
            outside = con.execute(f'SELECT count(*) FROM read_parquet(?) WHERE "{col}" IS DISTINCT FROM ?',
                                  [str(rep.parquet), val]).fetchall()[0][0]
        if outside:
            raise DataError(f"rows for {rep.table!r} outside the partition {dict(rep.key)}", column=col)


def _insert_parquet(con, table_name: str, path: Path) -> int:
    table = TABLES[table_name]
    have = [r[0] for r in con.execute("DESCRIBE SELECT * FROM read_parquet(?)", [str(path)]).fetchall()]
    missing = [c for c in table.columns if c not in have]
    extra = [c for c in have if c not in table.columns]
    if missing or extra:
        raise DataError(f"Parquet file for table {table.name!r} does not match its schema "
                        f"(missing {missing}, unexpected {extra})", file=str(path))
    cols = ", ".join(f'"{c}"' for c in table.columns)
    con.execute(f'INSERT INTO "{table.name}" ({cols}) SELECT {cols} FROM read_parquet(?)', [str(path)])
    return con.execute("SELECT count(*) FROM read_parquet(?)", [str(path)]).fetchall()[0][0]


def _insert(con, table_name: str, df: pl.DataFrame, verb: str) -> None:
    table = TABLES[table_name]
    con.register("_staged", conform(table, df).to_arrow())
    try:
        con.execute(f'{verb} INTO "{table.name}" BY NAME SELECT * FROM _staged')
    finally:
        con.unregister("_staged")


def replace_partitions(
    db_path: Path, replacements: Sequence[Replacement], upserts: Mapping[str, pl.DataFrame] | None = None
) -> dict[str, int]:
    """Delete-then-insert each partition and upsert ``upserts``, all in one transaction.

    Frames must already be validated (``warehouse.load.validate``). Returns rows written per table.
    """
    for rep in replacements:
        if rep.frame is not None:
            _check_keys(rep)
    written: dict[str, int] = {}
    with write_connection(db_path) as con:
        for rep in replacements:
            if rep.parquet is not None:
                _check_keys(rep, con)
        con.execute("BEGIN TRANSACTION")
        try:
            for name, df in (upserts or {}).items():
                if df.height:
                    _insert(con, name, df, "INSERT OR REPLACE")
                written[name] = df.height
            for rep in replacements:
                where = " AND ".join(f'"{c}" = ?' for c in rep.key)
                con.execute(f'DELETE FROM "{TABLES[rep.table].name}" WHERE {where}', list(rep.key.values()))
                if rep.parquet is not None:
                    n = _insert_parquet(con, rep.table, rep.parquet)
                else:
                    n = rep.frame.height
                    if n:
                        _insert(con, rep.table, rep.frame, "INSERT")
                written[rep.table] = written.get(rep.table, 0) + n
            con.execute("COMMIT")
        except BaseException:
            con.execute("ROLLBACK")
            raise
    return written
