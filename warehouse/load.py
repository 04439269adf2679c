"""Validate, then write: the only way rows enter the warehouse.

A frame is validated eagerly against its table's Pandera model *before* the database is opened
for writing, so bad data never touches the file. Valid frames of one ingest are then upserted by
primary key inside one transaction, together with their ``raw_files`` rows, and a failure rolls
every table back (atomic). Re-ingesting the same data changes nothing, not even a byte of the file:
under the writers' lock the frames are first compared with what is stored (read-only), rows stored
identically are not written again, and a load with nothing new never opens the file for writing.
That comparison first asks whether any stored row can share a key with the frame at all (a zone-map-pruned
scan: the first key column among the frame's values, the others within its range); only then are the
frame's keys joined with the stored ones — a new location's partition is not compared row by row.
A ``raw_files`` row is written once per sha256 (the bytes are immutable; ``fetched_at`` is their
first landing).
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import duckdb
import pandera.polars as pa
import polars as pl

from gridshift.errors import DataError
from warehouse.db import exclusive, open_read, open_write, query
from warehouse.ddl import DUCK_TYPES, create_table_sql, polars_schema
from warehouse.schemas import FRAMES, TABLES, Table


def conform(table: Table, df: pl.DataFrame) -> pl.DataFrame:
    """Select the table's columns in declared order (missing or extra columns fail validation)."""
    missing = [c for c in table.columns if c not in df.columns]
    extra = [c for c in df.columns if c not in table.columns]
    if missing or extra:
        raise DataError(
            f"frame for table {table.name!r} does not match its schema (missing {missing}, unexpected {extra})"
        )
    return df.select(table.columns)


def validate(table_name: str, df: pl.DataFrame, *, file: str | None = None, row_base: int = 2,
             line_column: str | None = None) -> pl.DataFrame:
    """Validate an eager frame; on failure raise DataError naming file, column, rows and values.

    Reported rows are ``frame position + row_base``: 2 gives the line number in a CSV with one
    header line (parsers keep file order); 0 gives the position in a JSON array. With
    ``line_column`` (a column holding each row's line in the file), that line is reported.
    """
    table = TABLES[table_name] if table_name in TABLES else FRAMES[table_name]
    df = conform(table, df)
    try:
        return table.model.validate(df, lazy=True)
    except pa.errors.SchemaErrors as exc:
        fc = exc.failure_cases
        first = fc.row(0, named=True)
        column = first.get("column")
        bad = fc.filter(pl.col("column") == column).head(10)
        index = bad["index"].to_list()
        if line_column is not None:
            lines = df[line_column]
            rows = [int(lines[int(i)]) if i is not None else -1 for i in index]
        else:
            rows = [int(i) + row_base if i is not None else -1 for i in index]
        raise DataError(
            f"table {table_name!r}: check {first.get('check')!r} failed for {fc.height} value(s)",
            file=file,
            column=str(column),
            rows=rows,
            values=bad["failure_case"].to_list(),
        ) from None  # the DataError says it all: a user (the CLI shows the root cause) sees file, column, rows


def validate_many(table_name: str, items: Sequence[tuple[pl.DataFrame, str | None, int]]
                  ) -> list[pl.DataFrame | DataError]:
    """Validate several frames of one table (``(frame, file, row_base)`` each, e.g. one per partition);
    return, per item, its validated frame or the :class:`DataError` :func:`validate` raises for it.

    The frames are first validated together, in one Pandera pass over their union: every check of the
    grid models is row-wise or a uniqueness rule, so the union passes only if every frame would pass
    alone, and one pass over N frames costs about what one frame does (Pandera's cost is per check,
    not per row). When the union fails — or cannot be formed (other columns or types) — each frame is
    validated alone, so every error names its own file, column, rows and values exactly as
    :func:`validate` does. (A union can also fail on a key two frames share — neighbouring files that
    overlap at a year's edge — while each frame is valid: the per-frame pass then accepts both.)
    A model with dataframe-wide checks, which the union cannot stand for, is always validated per frame.
    """
    table = TABLES[table_name]
    if not items:
        return []
    if len(items) > 1 and not table.model.to_schema().checks:
        try:
            frames = [conform(table, df) for df, _file, _base in items]
            table.model.validate(pl.concat(frames, how="vertical"), lazy=True)
        except (DataError, pa.errors.SchemaErrors, pa.errors.SchemaError, pl.exceptions.PolarsError):
            pass  # attribute the failure: each frame alone, below
        else:
            return list(frames)
    out: list[pl.DataFrame | DataError] = []
    for df, file, row_base in items:
        try:
            out.append(validate(table_name, df, file=file, row_base=row_base))
        except DataError as err:
            out.append(err)
    return out


def empty_frame(table_name: str) -> pl.DataFrame:
    return pl.DataFrame(schema=polars_schema(TABLES[table_name]))


#: At most this many distinct values of a frame's first key column are listed in the stored-key pre-test
#: (:func:`_may_hold`); a frame with more is compared by the full semi-join.
KEY_PRETEST_VALUES = 1000


def _may_hold(con, table, df: pl.DataFrame) -> bool:
    """Whether the stored table may hold one of ``df``'s primary keys: False only when no stored row has
    its first key column among the frame's values and every other key column within the frame's range
    (a filtered scan that DuckDB prunes by its min/max zone maps, instead of joining every key)."""
    first, *rest = table.primary_key
    values = df[first].unique().drop_nulls().to_list()
    if len(values) > KEY_PRETEST_VALUES or any(df[c].null_count() for c in table.primary_key):
        return True
    where = [f'"{first}" IN ({", ".join("?" * len(values))})'] if values else ["false"]
    params: list = list(values)
    for col in rest:
        where.append(f'"{col}" BETWEEN ? AND ?')
        params += [df[col].min(), df[col].max()]
    sql = f'SELECT count(*) FROM (SELECT 1 FROM "{table.name}" WHERE {" AND ".join(where)} LIMIT 1)'
    return bool(con.execute(sql, params).fetchall()[0][0])


def _stored(con, table, df: pl.DataFrame, present: set[str]) -> pl.DataFrame | None:
    """The stored rows with the primary keys of ``df`` (None when the table does not exist yet: not in
    ``present``, the file's tables)."""
    if table.name not in present:
        return None
    if not _may_hold(con, table, df):
        return None
    con.register("_staged", df.select(table.primary_key).to_arrow())
    try:
        keys = ", ".join(f'"{c}"' for c in table.primary_key)
        return query(con, f'SELECT t.* FROM "{table.name}" t SEMI JOIN _staged USING ({keys})')
    finally:
        con.unregister("_staged")


def _changes(db_path: Path, frames: Mapping[str, pl.DataFrame]) -> dict[str, tuple[pl.DataFrame, bool]]:
    """The part of each frame that would change the stored tables, and whether any of its keys is stored
    already (read-only; the caller holds the lock)."""
    if not db_path.exists():
        return {name: (df, False) for name, df in frames.items()}
    out: dict[str, tuple[pl.DataFrame, bool]] = {}
    with open_read(db_path) as con:
        present = {r[0] for r in con.execute("SELECT table_name FROM duckdb_tables()").fetchall()}
        for name, df in frames.items():
            table = TABLES[name]
            stored = _stored(con, table, df, present)
            if stored is None or stored.height == 0:
                out[name] = (df, False)
            elif name == "raw_files":  # immutable by sha256: only new files
                new = df.filter(~pl.col("sha256").is_in(stored["sha256"].implode()))
                if new.height:
                    out[name] = (new, False)
            else:
                pk = list(table.primary_key)
                same = stored.height == df.height and stored.select(df.columns).cast(df.schema, strict=False).sort(
                    pk).equals(df.sort(pk))
                if not same:
                    out[name] = (df, True)
    return out


def write(db_path: Path, frames: Mapping[str, pl.DataFrame], *, rebuild_stale: Iterable[str] = ()) -> dict[str, int]:
    """Upsert validated frames (table name -> frame) in one transaction; return rows written per table.

    Frames whose rows are all stored identically are skipped, and when nothing is new the file is
    not opened for writing at all (see the module docstring). ``rebuild_stale``: tables written whole,
    whose stored layout may be an earlier version's (see :func:`stale_layout`); such a table is dropped,
    re-created and filled in the same transaction, so a failed write leaves the old table as it was.
    """
    frames = {name: conform(TABLES[name], df) for name, df in frames.items()}
    written = dict.fromkeys(frames, 0)
    with exclusive(db_path):
        add_new_columns(db_path, [name for name in frames if name not in rebuild_stale])
        stale = [name for name in rebuild_stale if name in frames and stale_layout(db_path, name)]
        todo = _changes(db_path, {name: df for name, df in frames.items() if df.height and name not in stale})
        todo.update({name: (frames[name], False) for name in stale})
        if not todo:
            return written
        with open_write(db_path) as con:
            con.execute("BEGIN TRANSACTION")
            try:
                for name in stale:
                    con.execute(f'DROP TABLE "{TABLES[name].name}"')
                    con.execute(create_table_sql(TABLES[name]))
                for name, (df, overlaps) in todo.items():
                    # no stored key among the frame's: a plain INSERT adds the same rows as an upsert, without
                    # a conflict lookup per row (about 1.5x faster into an empty table)
                    verb = "INSERT OR REPLACE" if overlaps else "INSERT"
                    con.register("_staged", df.to_arrow())
                    con.execute(f'{verb} INTO "{TABLES[name].name}" BY NAME SELECT * FROM _staged')
                    con.unregister("_staged")
                    written[name] = df.height
                con.execute("COMMIT")
            except BaseException:
                # a COMMIT that failed to write (disk full, file too large) has ended the transaction itself:
                # its error, not the rollback's "no transaction is active", is the one to report
                with contextlib.suppress(duckdb.TransactionException):
                    con.execute("ROLLBACK")
                raise
    return written


def _stored_columns(db_path: Path, table_names: Iterable[str]) -> dict[str, list[str]]:
    """The stored columns, in order, of each of ``table_names`` the file holds (one read-only connection)."""
    names = {TABLES[n].name: n for n in table_names}
    if not db_path.exists() or not names:
        return {}
    with open_read(db_path) as con:
        rows = query(con, "SELECT table_name, column_name FROM information_schema.columns "
                          "ORDER BY table_name, ordinal_position")
    out: dict[str, list[str]] = {}
    for table, column in rows.iter_rows():
        if table in names:
            out.setdefault(names[table], []).append(column)
    return out


def add_new_columns(db_path: Path, table_names: Iterable[str]) -> list[str]:
    """Add to stored tables the nullable columns a later version declared after their stored ones (e.g.
    ``partition_quality.plausibility_overridden``): an earlier warehouse keeps its rows, the new column null
    in them. Only a stored layout that is a prefix of the declared one is grown; the caller holds the lock.
    Returns the columns added (``table.column``); the file is opened for writing only when there are some."""
    todo: list[tuple[Table, str, str]] = []
    for name, stored in _stored_columns(db_path, table_names).items():
        table = TABLES[name]
        declared = list(table.columns)
        if stored == declared or declared[:len(stored)] != stored:
            continue
        fields = {f.name: f for f in table.spec.fields}
        for c in declared[len(stored):]:
            if not fields[c].nullable:
                break
            todo.append((table, c, DUCK_TYPES[fields[c].dtype]))
    if todo:
        with open_write(db_path) as con:
            for table, c, sql_type in todo:
                con.execute(f'ALTER TABLE "{table.name}" ADD COLUMN "{c}" {sql_type}')
    return [f"{t.name}.{c}" for t, c, _ in todo]


def stale_layout(db_path: Path, table_name: str) -> bool:
    """Whether the file holds ``table_name`` with other columns than the declared ones (a table whose
    layout changed between versions, e.g. ``network_path`` keyed by macro-region pairs before, by
    location pairs now); read-only, the caller holds the lock."""
    stored = _stored_columns(db_path, [table_name]).get(table_name, [])
    return bool(stored) and stored != list(TABLES[table_name].columns)


def drop_stale_layout(db_path: Path, table_name: str) -> bool:
    """Drop ``table_name`` (and create it empty) when its stored layout is stale (:func:`stale_layout`): for
    an index rebuilt from elsewhere (the benchmark runs); tables refilled from data use ``write``'s
    ``rebuild_stale``. Returns whether it was dropped; otherwise the file is not opened for writing."""
    table = TABLES[table_name]
    with exclusive(db_path):
        if not stale_layout(db_path, table_name):
            return False
        with open_write(db_path) as con:
            con.execute(f'DROP TABLE "{table.name}"')
            con.execute(create_table_sql(table))
    return True
