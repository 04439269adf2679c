"""warehouse.prefetch: results handed over once and only when their fingerprint matches; queued work is
stolen, failed work is left to the caller, and nothing keeps running after the block."""

from __future__ import annotations

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

from warehouse import prefetch
from warehouse.prefetch import Prefetch, chunks, prefetching


def _square(items):
    return {i: (("fp", i), i * i) for i in items}


def test_chunks_cut_runs_of_one_group_of_at_most_size():
    items = [("a", 1), ("a", 2), ("a", 3), ("b", 1), ("a", 4)]
    assert chunks(items, lambda x: x[0], 2) == [[("a", 1), ("a", 2)], [("a", 3)], [("b", 1)], [("a", 4)]]


def test_results_are_served_once_and_only_with_the_same_fingerprint():
    with prefetching(Prefetch(range(10), _square, chunk=3)) as pf:
        pf.wait()
        assert pf.take(4, ("fp", 4)) == 16
        assert pf.take(4, ("fp", 4)) is None  # handed over once
        assert pf.take(5, ("fp", "changed")) is None  # stale: never served
        assert pf.take(99, ("fp", 99)) is None  # not planned
        assert [pf.take(i, ("fp", i)) for i in (0, 1, 2, 3, 6, 7, 8, 9)] == [0, 1, 4, 9, 36, 49, 64, 81]
    assert (pf.stats.planned, pf.stats.served, pf.stats.stale) == (10, 9, 1)


def test_items_the_work_leaves_out_or_a_failing_chunk_are_left_to_the_caller():
    def work(items):
        if 5 in items:
            raise RuntimeError("worker died")
        return {i: (i, str(i)) for i in items if i != 1}  # item 1 "failed": left out

    with prefetching(Prefetch(range(8), work, chunk=2)) as pf:
        pf.wait()
        assert [pf.take(i, i) for i in range(8)] == ["0", None, "2", "3", None, None, "6", "7"]
    assert pf.stats.missing == 3 and isinstance(pf.error, RuntimeError)


def test_a_queued_chunk_is_stolen_not_waited_for_and_a_running_one_is_waited_for():
    release, started = threading.Event(), threading.Event()

    def work(items):
        if 0 in items:
            started.set()
            assert release.wait(10)
        return {i: (i, -i) for i in items}

    with prefetching(Prefetch(range(4), work, chunk=2)) as pf:
        assert started.wait(10)
        assert pf.take(2, 2) is None  # its chunk is still queued behind the blocked one: the caller's
        threading.Timer(0.05, release.set).start()
        assert pf.take(1, 1) == -1  # its chunk was running: waited for
    assert (pf.stats.stolen, pf.stats.waited, pf.stats.served) == (1, 1, 1)


def test_nothing_is_left_running_after_the_block_even_when_it_raises():
    before = set(threading.enumerate())
    gate = threading.Event()

    def slow(items):
        gate.wait(0.2)
        return _square(items)

    with pytest.raises(ValueError, match="boom"), prefetching(Prefetch(range(50), slow, chunk=1)) as pf:
        assert prefetch.active() is pf
        raise ValueError("boom")
    assert prefetch.active() is None
    assert set(threading.enumerate()) == before
    assert pf.take(49, ("fp", 49)) is None  # results released with the block


def test_an_executor_that_cannot_start_leaves_every_item_to_its_caller():
    def broken():
        raise OSError("no process can be started")

    with prefetching(Prefetch(range(3), _square, executor=broken)) as pf:
        assert [pf.take(i, ("fp", i)) for i in range(3)] == [None, None, None]
    assert isinstance(pf.error, OSError) and pf.stats.served == 0


def test_the_executor_is_let_go_once_every_item_is_handed_over_and_joined_at_the_block_exit():
    shut: list[dict] = []

    class Recording(ThreadPoolExecutor):
        def shutdown(self, wait=True, *, cancel_futures=False):
            shut.append({"wait": wait, "cancel_futures": cancel_futures})
            super().shutdown(wait=wait, cancel_futures=cancel_futures)

    before = set(threading.enumerate())
    with prefetching(Prefetch(range(4), _square, chunk=2, executor=lambda: Recording(1))) as pf:
        pf.wait()
        assert [pf.take(i, ("fp", i)) for i in range(3)] == [0, 1, 4]
        assert shut == []  # item 3 may still be asked for
        assert pf.take(3, ("fp", "changed")) is None  # the last item (stale): nothing planned any more
        pf._closer.join(5)
        assert shut == [{"wait": True, "cancel_futures": True}]  # shut down before the block ends
        assert pf.take(3, ("fp", 3)) is None
    assert shut == [{"wait": True, "cancel_futures": True}]  # not shut down twice
    assert set(threading.enumerate()) == before
