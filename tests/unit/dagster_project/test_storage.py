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
