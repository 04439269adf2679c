"""DuckDB DDL derived from the Pandera models (never written by hand)."""

from __future__ import annotations

import polars as pl

from warehouse.schemas import Table

_DUCK_TYPES: dict[type[pl.DataType], str] = {
    pl.Float64: "DOUBLE",
    pl.Float32: "FLOAT",
    pl.Int64: "BIGINT",
    pl.Int32: "INTEGER",
    pl.Int16: "SMALLINT",
    pl.Int8: "TINYINT",
    pl.UInt32: "UINTEGER",
    pl.UInt64: "UBIGINT",
    pl.String: "VARCHAR",
    pl.Boolean: "BOOLEAN",
    pl.Date: "DATE",
}


def duck_type(dtype: pl.DataType) -> str:
    if isinstance(dtype, pl.Datetime):
        if dtype.time_zone != "UTC":
            raise TypeError(f"warehouse timestamps must be UTC-aware, got {dtype}")
        return "TIMESTAMPTZ"
    for base, name in _DUCK_TYPES.items():
        if dtype == base:
            return name
    raise TypeError(f"no DuckDB type for polars dtype {dtype}")


def polars_schema(table: Table) -> dict[str, pl.DataType]:
    return {name: col.dtype.type for name, col in table.model.to_schema().columns.items()}


def create_table_sql(table: Table) -> str:
    cols = []
    for name, col in table.model.to_schema().columns.items():
        null = "" if col.nullable else " NOT NULL"
        cols.append(f'"{name}" {duck_type(col.dtype.type)}{null}')
    pk = ", ".join(f'"{c}"' for c in table.primary_key)
    return f'CREATE TABLE IF NOT EXISTS "{table.name}" ({", ".join(cols)}, PRIMARY KEY ({pk}))'
