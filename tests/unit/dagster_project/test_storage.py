"""The home's event-log storage: Dagster's SQLite storage, with a remembered ``has_table``."""

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
