"""``warehouse.db.closing_behind``: a committed writer's close and lock release run on a thread inside the
block, every one joined at its exit (its error raised), and the same rows as a close in line."""

from __future__ import annotations

import contextlib
import threading

import pytest

from warehouse.db import closing_behind, finish, read_table
from warehouse.load import write

from .frames import quality_frame


def _where_closed() -> tuple[contextlib.ExitStack, list[str]]:
    seen: list[str] = []
    stack = contextlib.ExitStack()
    stack.callback(lambda: seen.append(threading.current_thread().name))
    return stack, seen


def test_outside_a_block_the_close_is_in_line_and_inside_on_a_thread_joined_at_the_exit():
    stack, seen = _where_closed()
    finish(stack)
    assert seen == [threading.current_thread().name]
    gate = threading.Event()
    with closing_behind():
        stack, seen = _where_closed()
        stack.callback(gate.wait, 5)  # runs first (LIFO): the close is held until the gate opens
        finish(stack)
        assert seen == []  # not closed yet: the block goes on meanwhile
        gate.set()
    assert seen == ["gridshift-duckdb-close"]  # joined by the exit
    assert not [t for t in threading.enumerate() if t.name == "gridshift-duckdb-close"]


def test_a_close_error_is_raised_at_the_exit_and_never_hides_the_blocks_own():
    def boom():
        raise OSError("checkpoint failed")

    with pytest.raises(OSError, match="checkpoint failed"), closing_behind():
        stack = contextlib.ExitStack()
        stack.callback(boom)
        finish(stack)
    with pytest.raises(ValueError, match="the block's"), closing_behind():
        stack = contextlib.ExitStack()
        stack.callback(boom)
        finish(stack)
        raise ValueError("the block's")


def test_writes_closed_behind_store_what_writes_closed_in_line_do(tmp_path):
    with closing_behind():
        write(tmp_path / "a.duckdb", {"partition_quality": quality_frame(("A", 1))})
        write(tmp_path / "a.duckdb", {"partition_quality": quality_frame(("B", 2))})  # waits for the first's lock
        inside = read_table(tmp_path / "a.duckdb", "SELECT location, rows FROM partition_quality ORDER BY 1").rows()
    write(tmp_path / "b.duckdb", {"partition_quality": quality_frame(("A", 1))})
    write(tmp_path / "b.duckdb", {"partition_quality": quality_frame(("B", 2))})
    sql = "SELECT location, rows FROM partition_quality ORDER BY 1"
    assert inside == read_table(tmp_path / "a.duckdb", sql).rows() == read_table(tmp_path / "b.duckdb", sql).rows()
    assert inside == [("A", 1), ("B", 2)]
