"""The event-log storage of the home's Dagster instance: Dagster's SQLite storage, kept open.

Dagster's ``SqliteEventLogStorage`` opens and closes a database connection for every event it stores.
Closing the last connection of a WAL database checkpoints it (an ``fsync``), so each of the ~45
events of a partition run costs about 20 ms here: a one-partition ingest took 4 s on the persistent
instance against 1 s on an in-memory one. This subclass keeps one connection per database shard open
for the life of the process and commits with ``synchronous=NORMAL`` — in WAL mode that is still
crash-safe for the database file (a power loss can lose the last transactions, never corrupt it),
which is the right trade for a run history. Everything else (schema, queries, the UI) is Dagster's.

Selected in ``<home>/dagster/dagster.yaml`` (``dagster_project.runner.INSTANCE_YAML``), so ``dg dev``
and the CLI open the instance the same way.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

import sqlalchemy as db
from dagster._core.storage.event_log.sqlite.sqlite_event_log import SqliteEventLogStorage
from dagster._core.storage.sqlite import create_db_conn_string
from sqlalchemy.pool import SingletonThreadPool

SQLITE_BUSY_TIMEOUT_S = 30


def _pragmas(dbapi_connection, _record) -> None:
    cur = dbapi_connection.cursor()
    cur.execute("PRAGMA synchronous=NORMAL")
    cur.close()


class HomeEventLogStorage(SqliteEventLogStorage):
    """``SqliteEventLogStorage`` with one open connection per shard (see the module docstring)."""

    def __init__(self, base_dir: str, inst_data=None) -> None:
        self._engines: dict[str, db.engine.Engine] = {}
        super().__init__(base_dir, inst_data)

    @classmethod
    def from_config_value(cls, inst_data, config_value) -> HomeEventLogStorage:  # type: ignore[override]
        return cls(inst_data=inst_data, **config_value)

    def _engine(self, shard: str) -> db.engine.Engine:
        engine = self._engines.get(shard)
        if engine is None:
            engine = db.create_engine(create_db_conn_string(self._base_dir, shard), poolclass=SingletonThreadPool,
                                      connect_args={"timeout": SQLITE_BUSY_TIMEOUT_S})
            db.event.listen(engine, "connect", _pragmas)
            self._engines[shard] = engine
        return engine

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
