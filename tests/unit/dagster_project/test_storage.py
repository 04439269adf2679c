"""The home's event-log storage: Dagster's SQLite storage, with a remembered ``has_table`` and
``asset_keys`` column reflection."""

from __future__ import annotations

from dagster._core.storage.event_log.sqlite.sqlite_event_log import SqliteEventLogStorage

from dagster_project.storage import HomeEventLogStorage


def test_has_table_remembers_a_yes_and_asks_again_after_a_no(tmp_path, monkeypatch):
    storage = HomeEventLogStorage(str(tmp_path / "runs"))
    try:
        asked: list[str] = []
        dagsters = SqliteEventLogStorage.has_table

        def counted(self, name):
            asked.append(name)
            return dagsters(self, name)

        monkeypatch.setattr(SqliteEventLogStorage, "has_table", counted)
        assert storage.has_table("asset_check_executions") and storage.supports_asset_checks
        assert storage.has_table("asset_check_executions")
        assert asked == ["asset_check_executions"]  # the index shard was asked once
        assert not storage.has_table("no_such_table") and not storage.has_table("no_such_table")
        assert asked == ["asset_check_executions", "no_such_table", "no_such_table"]  # a no is asked again
    finally:
        storage.dispose()


def test_asset_key_columns_remember_a_yes_and_ask_again_after_a_no(tmp_path, monkeypatch):
    storage = HomeEventLogStorage(str(tmp_path / "runs"))
    try:
        asked: list[str] = []
        dagsters = SqliteEventLogStorage._has_asset_key_col_on_connection

        def counted(self, conn, name):
            asked.append(name)
            return dagsters(self, conn, name)

        monkeypatch.setattr(SqliteEventLogStorage, "_has_asset_key_col_on_connection", counted)
        assert storage.has_asset_key_index_cols() and storage.has_asset_key_index_cols()
        assert asked == ["last_materialization_timestamp"]  # reflected once
        assert not storage.has_asset_key_col("no_such_column") and not storage.has_asset_key_col("no_such_column")
        assert asked == ["last_materialization_timestamp", "no_such_column", "no_such_column"]
    finally:
        storage.dispose()


def test_a_new_index_shard_is_what_dagster_makes(tmp_path):
    """The index shard of a new instance, copied from the run-shard template, holds what Dagster's own
    initialisation writes: the same schema, WAL mode, alembic stamp and secondary-index rows."""
    import sqlite3

    ours, dagsters = HomeEventLogStorage(str(tmp_path / "ours")), SqliteEventLogStorage(str(tmp_path / "dagster"))
    ours.dispose()
    dagsters.dispose()

    def dump(d):
        con = sqlite3.connect(str(tmp_path / d / "index.db"))
        try:
            schema = sorted(r[0] for r in con.execute("SELECT sql FROM sqlite_master WHERE sql IS NOT NULL"))
            return (schema, con.execute("PRAGMA journal_mode").fetchone(),
                    con.execute("SELECT version_num FROM alembic_version").fetchall(),
                    con.execute("SELECT name FROM secondary_indexes ORDER BY name").fetchall())
        finally:
            con.close()

    assert dump("ours") == dump("dagster")
    assert dump("ours")[1] == ("wal",) and dump("ours")[3]  # WAL, and Dagster's reindex marks are there


def test_the_run_storage_keeps_its_connections_open_and_nesting_works(tmp_path):
    """``HomeRunStorage``: Dagster's schema, a pool that keeps connections open (synchronous=NORMAL), and a
    nested checkout that is a connection of its own (as Dagster's NullPool gave)."""
    import sqlalchemy as sa
    from dagster._core.storage.runs.sqlite.sqlite_run_storage import SqliteRunStorage

    from dagster_project.storage import HomeRunStorage

    ours = HomeRunStorage.from_local(str(tmp_path / "ours"))
    dagsters = SqliteRunStorage.from_local(str(tmp_path / "dagster"))
    try:
        def tables(storage):
            with storage.connect() as conn:
                rows = conn.execute(sa.text("SELECT sql FROM sqlite_master WHERE sql IS NOT NULL"))
                return sorted(r[0] for r in rows)

        assert tables(ours) == tables(dagsters)
        with ours.connect() as outer:
            assert outer.execute(sa.text("PRAGMA synchronous")).scalar() == 1  # NORMAL
            with ours.connect() as inner:
                assert inner.connection.dbapi_connection is not outer.connection.dbapi_connection
                inner.execute(sa.text("CREATE TABLE t (x INTEGER)"))
            outer.execute(sa.text("SELECT count(*) FROM runs")).scalar()
        with ours.connect() as conn:
            assert conn.execute(sa.text("SELECT count(*) FROM t")).scalar() == 0
        assert ours._engine.pool.checkedin() >= 1  # returned open, not closed
    finally:
        ours.dispose()
        dagsters.dispose()


def test_the_run_storage_has_no_cap_on_simultaneous_connections(tmp_path):
    """More simultaneous checkouts than the pool keeps open all get a connection at once (Dagster's NullPool
    had no cap; a capped pool would make the 11th wait for its timeout and fail)."""
    import contextlib

    import sqlalchemy as sa

    from dagster_project.storage import HomeRunStorage

    ours = HomeRunStorage.from_local(str(tmp_path / "ours"))
    try:
        with contextlib.ExitStack() as stack:
            conns = [stack.enter_context(ours.connect()) for _ in range(16)]
            assert all(c.execute(sa.text("SELECT count(*) FROM runs")).scalar() == 0 for c in conns)
        assert ours._engine.pool.checkedin() == 2  # the overflow was closed on return, the pool's 2 kept
    finally:
        ours.dispose()


def test_compute_logs_are_captured_to_dagsters_files_and_still_shown_without_helper_processes(
        tmp_path, capfd, monkeypatch):
    """``HomeComputeLogManager.capture_logs``: what the process writes to its stdout and stderr (Python and
    file-descriptor level) lands in the run's log files, at Dagster's paths with its completion marker, is
    still shown on the streams as before, and no process is started for it; nothing keeps running after."""
    import os
    import subprocess
    import sys
    import threading

    from dagster._core.storage.compute_log_manager import ComputeIOType

    from dagster_project.storage import HomeComputeLogManager

    def no_process(*_a, **_k):
        raise AssertionError("a process was started")

    monkeypatch.setattr(subprocess, "Popen", no_process)
    manager = HomeComputeLogManager(str(tmp_path / "storage"))
    key = ["run-1", "compute_logs", "abc"]
    before = set(threading.enumerate())
    with manager.capture_logs(key):
        print("to stdout")
        os.write(sys.stdout.fileno(), b"fd 1\n")  # the stream's descriptor, as Dagster captures it
        print("to stderr", file=sys.stderr)
        os.write(sys.stderr.fileno(), b"x" * 70_000 + b"\n")  # more than a pipe holds: copied meanwhile
    assert set(threading.enumerate()) == before
    assert manager.is_capture_complete(key)
    out = manager.get_log_data_for_type(key, ComputeIOType.STDOUT, 0, None)[0]
    err = manager.get_log_data_for_type(key, ComputeIOType.STDERR, 0, None)[0]
    assert out == b"to stdout\nfd 1\n"
    assert err == b"to stderr\n" + b"x" * 70_000 + b"\n"
    shown = capfd.readouterr()
    assert shown.out == "to stdout\nfd 1\n"
    assert shown.err == "to stderr\n" + "x" * 70_000 + "\n"
    print("after")  # the streams are back where they were
    assert capfd.readouterr().out == "after\n"
    assert manager.get_log_data_for_type(key, ComputeIOType.STDOUT, 0, None)[0] == b"to stdout\nfd 1\n"
