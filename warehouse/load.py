"""Validate, then write: the only way rows enter the warehouse.

A frame is validated eagerly against its table's Pandera model *before* the database is opened
for writing, so bad data never touches the file. Valid frames of one ingest are then upserted by
primary key inside one transaction, together with their ``raw_files`` rows: re-ingesting the same
data changes nothing (idempotent), and a failure rolls every table back (atomic).
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

import pandera.polars as pa
import polars as pl

from gridshift.errors import DataError
from warehouse.db import write_connection
from warehouse.ddl import polars_schema
from warehouse.schemas import TABLES, Table


def conform(table: Table, df: pl.DataFrame) -> pl.DataFrame:
    """Select the table's columns in declared order (missing or extra columns fail validation)."""
    missing = [c for c in table.columns if c not in df.columns]
    extra = [c for c in df.columns if c not in table.columns]
    if missing or extra:
        raise DataError(
            f"frame for table {table.name!r} does not match its schema (missing {missing}, unexpected {extra})"
        )
    return df.select(table.columns)


def validate(table_name: str, df: pl.DataFrame, *, file: str | None = None, row_base: int = 2) -> pl.DataFrame:
    """Validate an eager frame; on failure raise DataError naming file, column, rows and values.

    Reported rows are ``frame position + row_base``: 2 gives the line number in a CSV with one
    header line (parsers keep file order); 0 gives the position in a JSON array.
    """
    table = TABLES[table_name]
    df = conform(table, df)
    try:
        return table.model.validate(df, lazy=True)
    except pa.errors.SchemaErrors as exc:
        fc = exc.failure_cases
        first = fc.row(0, named=True)
        column = first.get("column")
        bad = fc.filter(pl.col("column") == column).head(10)
        rows = [int(i) + row_base if i is not None else -1 for i in bad["index"].to_list()]
        raise DataError(
            f"table {table_name!r}: check {first.get('check')!r} failed for {fc.height} value(s)",
            file=file,
            column=str(column),
            rows=rows,
            values=bad["failure_case"].to_list(),
        ) from exc


def empty_frame(table_name: str) -> pl.DataFrame:
    return pl.DataFrame(schema=polars_schema(TABLES[table_name]))


def write(db_path: Path, frames: Mapping[str, pl.DataFrame]) -> dict[str, int]:
    """Upsert validated frames (table name -> frame) in one transaction; return rows written per table."""
    written: dict[str, int] = {}
    with write_connection(db_path) as con:
        con.execute("BEGIN TRANSACTION")
        try:
            for name, df in frames.items():
                table = TABLES[name]
                if df.height == 0:
                    written[name] = 0
                    continue
                staged = conform(table, df).to_arrow()
                con.register("_staged", staged)
                con.execute(f'INSERT OR REPLACE INTO "{table.name}" BY NAME SELECT * FROM _staged')
                con.unregister("_staged")
                written[name] = df.height
            con.execute("COMMIT")
        except BaseException:
            con.execute("ROLLBACK")
            raise
    return written
