"""The event-log and run storages of the home's Dagster instance: Dagster's SQLite storages, kept open.

Dagster's ``SqliteEventLogStorage`` opens and closes a database connection for every event it stores.
Closing the last connection of a WAL database checkpoints it (an ``fsync``), so each of the ~45
events of a partition run costs about 20 ms here: a one-partition ingest took 4 s on the persistent
instance against 1 s on an in-memory one. This subclass keeps one connection per database shard open
for the life of the process and commits with ``synchronous=NORMAL`` — in WAL mode that is still
crash-safe for the database file (a power loss can lose the last transactions, never corrupt it),
which is the right trade for a run history. Everything else (schema, queries, the UI) is Dagster's.

A new run's shard (one SQLite file per run) is a copy of a schema-only template made once per Dagster
version by Dagster's own initialisation (tables, indexes, ``PRAGMA journal_mode=WAL``, the alembic
revision stamp): initialising each shard from scratch re-read Dagster's ~90 alembic migration scripts
twice and created every table, about 0.15 s per run. The index shard of a new instance is a copy of it
too (Dagster initialises a missing index shard exactly as a run shard), so a fresh home runs the
migration scripts once for its event log, not twice. Shards that exist are initialised as Dagster does.

Dagster also asks the index shard whether a table exists (``has_table``) before storing every asset
check evaluation and every asset event's tags, each time through a new engine and a new SQLite
connection: about a third of the storage's CPU time in a whole-mirror ingest (339 of 518 events). A
table once present stays (migrations only add tables, ``wipe`` only deletes rows), so a "yes" is
remembered for the life of the storage; a "no" is asked again. The same holds for the columns of the
``asset_keys`` table, which Dagster reflects (``inspect(conn).get_columns``) before storing every
materialization to know its layout (222 reflections in a whole-mirror ingest): a column once present is
remembered.

The run storage (``runs.db``, also WAL) had the same habit: Dagster's ``SqliteRunStorage`` makes a new
engine and opens and closes a connection (checkpointing the WAL) for each of its ~230 queries in a
whole-mirror ingest. :class:`HomeRunStorage` keeps its connections open in a pool (each checkout still its
own connection, as before, so nesting and threads behave as Dagster expects) with ``synchronous=NORMAL``.

The compute-log manager (:class:`HomeComputeLogManager`) is Dagster's local one, whose ``capture_logs``
(once per run: the process's stdout and stderr copied to the run's log files and still shown on the
terminal) did that by starting, for each of the two streams, a ``tail -F`` process and a Python
interpreter that watches it for orphaning, then terminating both: four processes per run, 0.2 s of wall
and 0.15 s of CPU for the five runs of a whole-mirror ingest. Here each stream's file descriptor is
pointed at a pipe, and a thread copies what arrives to the log file and to where the stream pointed before;
the files, their paths and the completion marker are Dagster's, so the UI shows them as before.

Selected in ``<home>/dagster/dagster.yaml`` (``dagster_project.runner.instance_yaml``), so ``dg dev``
and the CLI open the instance the same way.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import sys
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import dagster
import sqlalchemy as db
from dagster._core.execution.compute_logs import _fileno, should_disable_io_stream_redirect
from dagster._core.storage.compute_log_manager import CapturedLogContext, ComputeIOType
from dagster._core.storage.event_log.sqlite.sqlite_event_log import SqliteEventLogStorage
from dagster._core.storage.local_compute_log_manager import IO_TYPE_EXTENSION, LocalComputeLogManager
from dagster._core.storage.runs.sqlite.sqlite_run_storage import SqliteRunStorage
from dagster._core.storage.sqlite import create_db_conn_string
from dagster._utils import ensure_file, touch_file
from sqlalchemy.pool import NullPool, QueuePool, SingletonThreadPool

SQLITE_BUSY_TIMEOUT_S = 30


def _pragmas(dbapi_connection, _record) -> None:
    cur = dbapi_connection.cursor()
    cur.execute("PRAGMA synchronous=NORMAL")
    cur.close()


class HomeEventLogStorage(SqliteEventLogStorage):
    """``SqliteEventLogStorage`` with one open connection per shard (see the module docstring)."""

    def __init__(self, base_dir: str, inst_data=None) -> None:
        self._engines: dict[str, db.engine.Engine] = {}
        self._present_tables: set[str] = set()
        self._present_asset_key_cols: set[str] = set()
        super().__init__(base_dir, inst_data)

    @classmethod
    def from_config_value(cls, inst_data, config_value) -> HomeEventLogStorage:  # type: ignore[override]
        return cls(inst_data=inst_data, **config_value)

    def has_table(self, table_name: str) -> bool:
        """Dagster's answer, with a "yes" remembered (see the module docstring)."""
        if table_name in self._present_tables:
            return True
        present = super().has_table(table_name)
        if present:
            self._present_tables.add(table_name)
        return present

    def _has_asset_key_col_on_connection(self, conn: db.engine.Connection, column_name: str) -> bool:
        """Dagster's answer (a reflection of ``asset_keys``), with a "yes" remembered (see the module docstring)."""
        if column_name in self._present_asset_key_cols:
            return True
        present = super()._has_asset_key_col_on_connection(conn, column_name)
        if present:
            self._present_asset_key_cols.add(column_name)
        return present

    def _engine(self, shard: str) -> db.engine.Engine:
        engine = self._engines.get(shard)
        if engine is None:
            engine = db.create_engine(create_db_conn_string(self._base_dir, shard), poolclass=SingletonThreadPool,
                                      connect_args={"timeout": SQLITE_BUSY_TIMEOUT_S})
            db.event.listen(engine, "connect", _pragmas)
            self._engines[shard] = engine
        return engine

    def _template(self) -> Path:
        """The schema-only shard of this Dagster version (a dot file: not a run to Dagster's glob)."""
        path = Path(self._base_dir) / f".shard-template-{dagster.__version__}.db"
        if not path.exists():
            fd, tmp = tempfile.mkstemp(prefix=f"{path.name}.", suffix=".tmp", dir=self._base_dir)
            os.close(fd)
            os.unlink(tmp)  # SQLite creates it
            engine = db.create_engine(f"sqlite:///{tmp}", poolclass=NullPool)
            try:
                super()._initdb(engine)
                with engine.connect() as conn:
                    conn.execute(db.text("PRAGMA wal_checkpoint(TRUNCATE)"))
            finally:
                engine.dispose()
            for suffix in ("-wal", "-shm"):
                with contextlib.suppress(FileNotFoundError):
                    os.unlink(tmp + suffix)
            os.replace(tmp, path)
        return path

    def _initdb(self, engine: db.engine.Engine, for_index_shard: bool = False) -> None:
        database = engine.url.database
        if not database or os.path.exists(database):
            super()._initdb(engine, for_index_shard=for_index_shard)
            return
        # A new shard — the index shard of a new instance too: Dagster initialises a missing index shard
        # exactly as a run shard (all tables, WAL, stamped at head), then indexes it (reindex_*).
        fd, tmp = tempfile.mkstemp(prefix=".shard.", suffix=".tmp", dir=os.path.dirname(database))
        os.close(fd)
        try:
            shutil.copyfile(self._template(), tmp)
            os.replace(tmp, database)  # atomic: a concurrent reader sees no shard or a whole one
        except BaseException:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
            raise

    @contextmanager
    def _connect(self, shard: str) -> Iterator[db.engine.Connection]:
        with self._db_lock:
            engine = self._engine(shard)
            if shard not in self._initialized_dbs:
                self._initdb(engine)
                self._initialized_dbs.add(shard)
            with engine.connect() as conn, conn.begin():
                yield conn

    def dispose(self) -> None:
        for engine in self._engines.values():
            engine.dispose()
        self._engines.clear()
        super().dispose()


class HomeRunStorage(SqliteRunStorage):
    """``SqliteRunStorage`` with its connections kept open in a pool (see the module docstring)."""

    def __init__(self, conn_string: str, inst_data=None) -> None:
        # QueuePool: a checkout is a connection of its own (as Dagster's NullPool gives), returned open
        # (no cap on simultaneous checkouts, as with NullPool: connections beyond the 2 kept open are closed on
        # return, so a burst of concurrent queries in the UI never waits for a free one)
        self._engine = db.create_engine(conn_string, poolclass=QueuePool, pool_size=2, max_overflow=-1)
        db.event.listen(self._engine, "connect", _pragmas)
        super().__init__(conn_string, inst_data)

    @classmethod
    def from_config_value(cls, inst_data, config_value) -> HomeRunStorage:  # type: ignore[override]
        return cls.from_local(inst_data=inst_data, **config_value)

    @contextmanager
    def connect(self) -> Iterator[db.engine.Connection]:
        with self._engine.connect() as conn, conn.begin():
            yield conn

    def dispose(self) -> None:
        self._engine.dispose()
        super().dispose()


#: How long the end of a capture waits for its copying thread to drain the pipe. Only a process started
#: during the run and still alive (holding the pipe open) makes it wait: its later output is then still
#: copied, by the thread left running as a daemon.
CAPTURE_DRAIN_S = 5.0


def _pump(read_fd: int, log, terminal_fd: int) -> None:
    """Copy the pipe to the log file and to the terminal until every writer has closed it."""
    try:
        while chunk := os.read(read_fd, 1 << 16):
            log.write(chunk)
            view = memoryview(chunk)
            while view:
                try:
                    view = view[os.write(terminal_fd, view):]
                except OSError:  # the terminal went away: the log file still gets everything
                    break
    finally:
        log.close()
        os.close(read_fd)
        os.close(terminal_fd)


@contextlib.contextmanager
def _mirror_to_file(stream, path: str) -> Iterator[None]:
    """Point ``stream``'s file descriptor at a pipe whose bytes a thread appends to ``path`` and copies to
    where the descriptor pointed before (Dagster's ``mirror_stream_to_file``, without its processes); a
    stream without a descriptor is not captured, as in Dagster's."""
    ensure_file(path)
    fd = _fileno(stream)
    if not fd or should_disable_io_stream_redirect():
        yield
        return
    stream.flush()
    terminal = os.dup(fd)
    read_fd, write_fd = os.pipe()
    log = open(path, "ab", buffering=0)  # noqa: SIM115 - closed by the pump thread
    thread = threading.Thread(target=_pump, args=(read_fd, log, terminal), name="gridshift-compute-log",
                              daemon=True)
    thread.start()
    try:
        os.dup2(write_fd, fd)
    finally:
        os.close(write_fd)
    try:
        yield
    finally:
        with contextlib.suppress(Exception):
            stream.flush()
        # back to the terminal (``terminal`` is open until the pump sees the pipe's end, which cannot come
        # before this: ``fd`` held the last write end in this process)
        os.dup2(terminal, fd)
        thread.join(CAPTURE_DRAIN_S)


class HomeComputeLogManager(LocalComputeLogManager):
    """``LocalComputeLogManager`` capturing without ``tail`` and watcher processes (see the module docstring)."""

    @classmethod
    def from_config_value(cls, inst_data, config_value) -> HomeComputeLogManager:  # type: ignore[override]
        return cls(inst_data=inst_data, **config_value)

    @contextmanager
    def capture_logs(self, log_key):
        out = self.get_captured_local_path(log_key, IO_TYPE_EXTENSION[ComputeIOType.STDOUT])
        err = self.get_captured_local_path(log_key, IO_TYPE_EXTENSION[ComputeIOType.STDERR])
        with _mirror_to_file(sys.stdout, out), _mirror_to_file(sys.stderr, err):
            yield CapturedLogContext(log_key)
        touch_file(self.complete_artifact_path(log_key))  # as Dagster's: the capture is complete
