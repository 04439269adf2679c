"""Work done ahead on the other core, handed to whoever asks for it later — only if still valid.

The CLI knows which grid partitions it will ingest long before the Dagster asset that ingests them
runs: importing Dagster, opening the instance and the reference run take seconds of single-threaded
Python. :class:`Prefetch` lets the second core prepare those partitions meanwhile
(``warehouse.ingest.prefetch_grid`` wires it to the grid parse, in a worker *process*: the parse is
Python enough that a thread fighting the main thread for the GIL slowed both several-fold); the asset
then asks :meth:`Prefetch.take` for each partition it fetched and gets the prepared result, or ``None``
and prepares the partition itself, exactly as without a prefetch. Nothing here changes what is computed,
only where and when:

- **never stale** — each result is stored with a fingerprint of its inputs (for the grid: source, URI,
  sha256 of the raw bytes, and the parse options); :meth:`take` compares it with the fingerprint of what
  the caller itself fetched and returns ``None`` on any difference;
- **errors from the caller** — the work function returns results only for the items it prepared; an item
  that failed (a bad file), or a chunk whose work raised (a worker that died), is left to the caller,
  whose own preparation raises the error — the same exception, message, cause and traceback as without a
  prefetch;
- **no waiting on work not started** — a chunk still queued when one of its items is asked for is
  cancelled and its items left to the callers; only a chunk being prepared is waited for;
- **no pickle from outside** — a worker process hands its results back over the executor's pipe, which
  pickles them between these two processes of ours (as Dask does between its workers: docs/distributed.md);
  nothing read from a file or the network is ever unpickled, and what the worker parsed reaches the
  warehouse only after the asset's fingerprint check;
- **nothing left behind** — :func:`prefetching` is a context manager: on exit the queue is cancelled, the
  chunk in progress finishes, the executor (its threads, its worker process) is shut down and joined, and
  every unclaimed result released. The executor is told to shut down as soon as the last planned item is
  handed over (nothing can be asked of it any more): a worker process's exit (its interpreter's teardown,
  0.3–0.7 s measured for the grid worker) then overlaps the caller's remaining work instead of delaying
  the block's exit, which still joins it.

Items are prepared in chunks (consecutive items of one group, e.g. one signal kind, up to ``chunk``),
so per-call costs (a Pandera pass, a transfer) are shared as in a batch, while a caller rarely waits long.
"""

from __future__ import annotations

import contextlib
import os
import threading
import time
from collections.abc import Callable, Hashable, Iterator, Mapping, Sequence
from concurrent.futures import Executor, Future, ThreadPoolExecutor
from concurrent.futures import wait as futures_wait
from dataclasses import dataclass
from typing import Any

#: ``work(items) -> {item: (fingerprint, result)}``; items it leaves out are prepared by their caller.
#: With a process executor it must be picklable (a module-level function, or a ``functools.partial`` of one).
Work = Callable[[list], Mapping[Hashable, tuple[Hashable, Any]]]


@dataclass
class PrefetchStats:
    """What became of the planned items (for tests and the benchmark's report)."""

    planned: int = 0
    served: int = 0  # handed over by take()
    stolen: int = 0  # their chunk was still queued when asked for: prepared by the caller
    stale: int = 0  # prepared, but the caller's fingerprint differed: prepared again by the caller
    missing: int = 0  # not prepared (the item failed, or its chunk's work raised): prepared by the caller
    waited: int = 0  # asked for while its chunk was being prepared: waited for
    wait_s: float = 0.0  # wall seconds callers spent waiting in take()


def chunks(items: Sequence[Hashable], group: Callable[[Hashable], Hashable], size: int) -> list[list]:
    """``items`` in order, cut into runs of one group of at most ``size`` items."""
    out: list[list] = []
    for item in items:
        if out and len(out[-1]) < size and group(out[-1][0]) == group(item):
            out[-1].append(item)
        else:
            out.append([item])
    return out


class Prefetch:
    """Prepare ``items`` on ``executor()`` (default: one thread), in order, by chunks of one group."""

    def __init__(self, items: Sequence[Hashable], work: Work, *, group: Callable[[Hashable], Hashable] = lambda _: 0,
                 chunk: int = 8, executor: Callable[[], Executor] = lambda: ThreadPoolExecutor(1)) -> None:
        self._items = list(dict.fromkeys(items))
        self._work, self._group, self._chunk, self._make = work, group, max(1, chunk), executor
        self._pool: Executor | None = None
        self._closer: threading.Thread | None = None  # shutting the executor down early (see _release)
        self._futures: dict[Hashable, Future] = {}
        self.error: BaseException | None = None  # the first failure of a chunk's work (its items left to callers)
        self.stats = PrefetchStats(planned=len(self._items))

    def start(self) -> Prefetch:
        """Submit the chunks. If the executor cannot be made or take work (no process can be started, say),
        nothing is prepared ahead and every caller prepares its own items, as without a prefetch."""
        if not self._items:
            return self
        try:
            self._pool = self._make()
            for items in chunks(self._items, self._group, self._chunk):
                fut = self._pool.submit(self._work, items)
                self._futures.update(dict.fromkeys(items, fut))
        except Exception as err:  # noqa: BLE001 - an optimisation that cannot start is skipped, not fatal
            self.error = err
            self.close()
        return self

    def take(self, item: Hashable, fingerprint: Hashable) -> Any | None:
        """The result prepared for ``item`` if its fingerprint equals ``fingerprint``; else ``None`` (the
        caller prepares it). Each item is handed over at most once."""
        fut = self._futures.pop(item, None)
        if fut is None:
            return None
        try:
            return self._take(item, fut, fingerprint)
        finally:
            if not self._futures:  # every planned item handed over or refused: let the executor go now
                self._release()

    def _take(self, item: Hashable, fut: Future, fingerprint: Hashable) -> Any | None:
        if fut.cancel():  # not started: the caller is ready now, the worker is not
            self.stats.stolen += 1
            return None
        if not fut.done():
            self.stats.waited += 1
            t0 = time.perf_counter()
            with contextlib.suppress(BaseException):
                fut.exception()  # wait, without raising
            self.stats.wait_s += time.perf_counter() - t0
        if fut.exception() is not None:
            self.error = self.error or fut.exception()
            self.stats.missing += 1
            return None
        got = fut.result().pop(item, None)  # the chunk's dict: a result leaves it when handed over
        if got is None:
            self.stats.missing += 1
            return None
        stored, result = got
        if stored != fingerprint:
            self.stats.stale += 1
            return None
        self.stats.served += 1
        return result

    def wait(self) -> None:
        """Block until every chunk still planned is prepared or has failed (tests, benchmarks)."""
        futures_wait(set(self._futures.values()))

    def _release(self) -> None:
        """Shut the executor down on a thread of its own (its worker exits meanwhile; :meth:`close` joins the
        thread). Only when nothing is planned any more: every future is done or cancelled by then."""
        if self._pool is not None and self._closer is None:
            self._closer = threading.Thread(target=self._pool.shutdown, kwargs={"wait": True, "cancel_futures": True},
                                            name="gridshift-prefetch-release", daemon=True)
            self._closer.start()

    def close(self) -> None:
        """Cancel the queue, let the chunk in progress finish, shut the executor down (joined), drop results."""
        self._futures.clear()
        if self._closer is not None:
            self._closer.join()
            self._closer = None
        elif self._pool is not None:
            self._pool.shutdown(wait=True, cancel_futures=True)
        self._pool = None


def set_environment(env: Mapping[str, str]) -> None:
    """A worker process's initializer: set ``env`` before the first task imports anything (this module
    imports only the standard library, so unpickling the initializer imports nothing else)."""
    os.environ.update(env)


_ACTIVE: list[Prefetch] = []


def active() -> Prefetch | None:
    """The prefetch of the innermost :func:`prefetching` block, if any (what ``prepare_grid`` consults)."""
    return _ACTIVE[-1] if _ACTIVE else None


@contextlib.contextmanager
def prefetching(prefetch: Prefetch) -> Iterator[Prefetch]:
    """Run ``prefetch`` for the block's duration: started on entry, offered to :func:`active` callers,
    closed (executor shut down and joined, results released) on exit — also when the block raises."""
    _ACTIVE.append(prefetch)
    try:
        prefetch.start()
        yield prefetch
    finally:
        _ACTIVE.remove(prefetch)
        prefetch.close()


__all__ = ["Prefetch", "PrefetchStats", "active", "chunks", "prefetching", "set_environment"]
