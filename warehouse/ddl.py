"""DuckDB DDL derived from the field registry (``gridshift.fields``), never written by hand."""

from __future__ import annotations

import polars as pl

from gridshift.fields import BOOL, FLOAT, INT, STRING, UTC
from warehouse.schemas import Table

#: the DuckDB type of each registry dtype (a timestamp is UTC-aware: TIMESTAMPTZ)
DUCK_TYPES: dict[str, str] = {FLOAT: "DOUBLE", INT: "BIGINT", STRING: "VARCHAR", BOOL: "BOOLEAN",
                              UTC: "TIMESTAMPTZ"}


def polars_schema(table: Table) -> dict[str, pl.DataType]:
    return table.spec.polars_schema()


def create_table_sql(table: Table) -> str:
    cols = [f'"{f.name}" {DUCK_TYPES[f.dtype]}{"" if f.nullable else " NOT NULL"}' for f in table.spec.fields]
    pk = ", ".join(f'"{c}"' for c in table.primary_key)
    return f'CREATE TABLE IF NOT EXISTS "{table.name}" ({", ".join(cols)}, PRIMARY KEY ({pk}))'
