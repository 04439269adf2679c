"""Connections to the one DuckDB file, serialized across processes.

DuckDB allows one read-write process per file; parallel Dagster partitions would fail with
"Could not set lock on file". Every connection here is short-lived and taken under an advisory
``flock`` on ``warehouse.duckdb.lock``: exclusive for writers, shared for readers. Writers on one
machine therefore queue instead of failing, and no row is lost.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator
from pathlib import Path

import duckdb
import polars as pl


@contextlib.contextmanager
def _flock(db_path: Path, exclusive: bool) -> Iterator[None]:
    db_path.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(str(db_path) + ".lock", os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX if exclusive else fcntl.LOCK_SH)
        yield
    finally:
        fcntl.flock(fd, fcntl.LOCK_UN)
        os.close(fd)


#: the most memory DuckDB's buffer manager holds in a warehouse connection (it spills above it: sorts, joins,
#: inserts). Its default, 80 % of the machine's memory, let a ×10 workload's insert reach 18 GB and a read's
#: block cache grow with the table (11 GB at ×10): the chain's memory bound is the caller's, not the table's.
MEMORY_LIMIT = "4GB"


def _configure(con: duckdb.DuckDBPyConnection) -> None:
    con.execute("SET TimeZone = 'UTC'")
    con.execute(f"SET memory_limit = '{MEMORY_LIMIT}'")


@contextlib.contextmanager
def exclusive(db_path: Path) -> Iterator[None]:
    """Hold the writers' lock: inside, :func:`open_read` and :func:`open_write` may be used in turn."""
    with _flock(db_path, exclusive=True):
        yield


@contextlib.contextmanager
def open_write(db_path: Path) -> Iterator[duckdb.DuckDBPyConnection]:
    """A read-write connection with every registered table created; the caller holds :func:`exclusive`."""
    # imported here: only writers need the schemas (pandera is slow to import; readers skip it)
    from warehouse.ddl import create_table_sql
    from warehouse.schemas import TABLES

    con = duckdb.connect(str(db_path))
    try:
        _configure(con)
        for t in TABLES.values():
            con.execute(create_table_sql(t))
        yield con
    finally:
        con.close()


@contextlib.contextmanager
def open_read(db_path: Path) -> Iterator[duckdb.DuckDBPyConnection]:
    """A read-only connection (writes no byte of the file); the caller holds a lock."""
    con = duckdb.connect(str(db_path), read_only=True)
    try:
        _configure(con)
        yield con
    finally:
        con.close()


@contextlib.contextmanager
def write_connection(db_path: Path) -> Iterator[duckdb.DuckDBPyConnection]:
    """A read-write connection with every registered table created, under the writers' lock."""
    with exclusive(db_path), open_write(db_path) as con:
        yield con


@contextlib.contextmanager
def read_connection(db_path: Path) -> Iterator[duckdb.DuckDBPyConnection]:
    """A read-only connection. A warehouse that does not exist yet is created empty first."""
    if not db_path.exists():
        with write_connection(db_path):
            pass
    with _flock(db_path, exclusive=False), open_read(db_path) as con:
        yield con


def query(con: duckdb.DuckDBPyConnection, sql: str, params: list | dict | None = None) -> pl.DataFrame:
    """Run ``sql`` and return a polars frame (duckdb 2 dropped ``.pl()``; Arrow is the bridge)."""
    return pl.from_arrow(con.sql(sql, params=params or None).to_arrow_table())


def table_exists(con: duckdb.DuckDBPyConnection, name: str) -> bool:
    """Whether the connected database has a table (or view) ``name``."""
    return bool(con.execute("SELECT count(*) FROM information_schema.tables WHERE table_name = ?",
                            [name]).fetchall()[0][0])


def read_table(db_path: Path, sql: str, params: list | dict | None = None) -> pl.DataFrame:
    with read_connection(db_path) as con:
        return query(con, sql, params)
