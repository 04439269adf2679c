"""Chunked stepping: a run's arrays hold its live tasks, not its window's.

A run given ``chunk_steps`` (``sim_core.run``) takes its window's tasks one chunk of arrivals at a time: it steps
to the first step of the next chunk, then :func:`compact` drops the tasks that are done (a final status,
``layout.ST_FINAL``, and no index field refers to them) from the engine's arrays, writes their per-task results
into the run's per-task outputs (:class:`Outputs`, at their index in the window), renumbers every field that holds
a task index and appends the next chunk's tasks. What each field holds is declared once beside the namedtuples
(``layout.TASK_KIND``, ``layout.STATE_KIND``, ``layout.LIST_COUNT``, ``layout.SC_TASK_INDEX``), so compaction is
one generic pass over them. A task keeps the origin and uniform it has in the whole window
(``simulator.window_tasks`` takes the same draws for any interval) and the engine sees its live tasks in the same
order, so every result is that of the one-chunk run, bit for bit (tests/unit/sim_core/test_chunks.py).

Runs with flexible-task controls (the stateful baselines, a user's jitted policy) keep one chunk: their per-task
flexible state and a baseline's own per-task plan are not yet declared for compaction.
"""

from __future__ import annotations

import shutil
import tempfile
import weakref
from pathlib import Path

import numpy as np

from .engine import layout as L

#: the fields of ``engine.Tasks`` and ``engine.State`` that no result reads (dropped when the stepping ends, and
#: never part of a chunked run's per-task outputs)
ENGINE_ONLY_TASK_FIELDS = ("mem", "bw", "u_rand", "ckpt", "mthr", "flexible", "ds", "ds_gb")
ENGINE_ONLY_STATE_FIELDS = ("nxt", "seq", "pend")
#: the per-task fields the results read: what a task leaving the arrays writes into the run's outputs
TASK_OUT = tuple(f for f in L.Tasks._fields if f not in ENGINE_ONLY_TASK_FIELDS)
STATE_OUT = tuple(f for f, k in L.STATE_KIND.items() if k in (L.K_VALUE, L.K_LINK)
                  and f not in ENGINE_ONLY_STATE_FIELDS)


#: ``sim_core.run``'s default, ``chunk_steps="auto"``: a run from a bundle's path whose bundle holds at least
#: AUTO_MIN_TASKS tasks takes them in chunks of AUTO_STEPS steps (a week); a smaller one, or a loaded scenario, in one.
#: At ×1 of the source cluster (41.2 M tasks) a year in chunks held 1.3 GB against 8.5 GB and was faster; at ×0.1
#: (4.1 M) one chunk was faster and held 1.4 GB (BENCHMARKS.md, "a year in chunks")
AUTO_MIN_TASKS = 10_000_000
AUTO_STEPS = 672


def resolve_chunk_steps(chunk_steps, source) -> int | None:
    """``chunk_steps`` of :func:`sim_core.run`: "auto" becomes AUTO_STEPS when ``source`` is a bundle's path whose
    tasks file holds at least AUTO_MIN_TASKS rows (its Parquet footer), else None (one chunk; an unreadable file or one
    that is no regular file too, never opened: the load then says what is wrong); any other value is returned as it
    is."""
    if not (isinstance(chunk_steps, str) and chunk_steps == "auto"):
        return chunk_steps
    if not isinstance(source, str | Path):
        return None
    import pyarrow.parquet as pq

    from gridshift.bundle.format import TASKS
    from gridshift.bundle.integrity import regular_file

    tasks = Path(source) / TASKS
    if not regular_file(tasks):
        return None
    try:
        n = pq.read_metadata(tasks).num_rows
    except (OSError, ValueError):  # (pyarrow's ArrowInvalid is a ValueError)
        return None
    return AUTO_STEPS if n >= AUTO_MIN_TASKS else None


#: rows per part of a chunked run's result passes (``sim_core.result``): what they hold at a time, per column
PART_ROWS = 1 << 21


class Derived:
    """Per-task columns the result passes derive part by part (``sim_core.result``), in task order: kept in memory,
    or appended to files in ``root`` (a chunked run's, whose window is not held whole)."""

    def __init__(self, root: Path | None = None):
        self.root = root
        self._parts: dict[str, list[np.ndarray]] = {}
        self._dtype: dict[str, np.dtype] = {}

    def add(self, name: str, a: np.ndarray) -> None:
        if self.root is None:
            self._parts.setdefault(name, []).append(a)
            return
        self._dtype[name] = a.dtype
        with open(self.root / f"derived-{name}", "ab") as f:
            np.ascontiguousarray(a).tofile(f)

    def whole(self, name: str) -> np.ndarray:
        """Column ``name`` of the run's tasks (the one part itself when there was one)."""
        if self.root is None:
            parts = self._parts[name]
            return parts[0] if len(parts) == 1 else np.concatenate(parts)
        return np.fromfile(self.root / f"derived-{name}", self._dtype[name])

    def sum(self, name: str) -> float:
        """The sum of column ``name`` (NumPy's pairwise sum of the whole column)."""
        return float(self.whole(name).sum())


class Sums:
    """The derived per-task columns of a run that keeps no per-task results (:class:`Tallies`), each folded into its
    sum as its tasks leave: the sums of the parts, so the last bits differ from :meth:`Derived.sum`'s."""

    def __init__(self) -> None:
        self._sums: dict[str, float] = {}

    def add(self, name: str, a: np.ndarray) -> None:
        self._sums[name] = self._sums.get(name, 0.0) + float(a.sum())

    def sum(self, name: str) -> float:
        return self._sums.get(name, 0.0)


class ArrayColumns:
    """The per-task columns of a run whose arrays held its window (one chunk): its ``Tasks``, ``State`` and the
    tasks' ids."""

    def __init__(self, T, S, task_id: np.ndarray):
        self.T, self.S, self.task_id = T, S, task_id
        self.n = T.arrival.shape[0]
        #: whether the flexible-task fields are per task (a run with flexible tasks and controls)
        self.flex_per_task = bool(self.n) and S.scale.shape[0] == self.n

    def whole(self, name: str) -> np.ndarray:
        if name == "task_id":
            return self.task_id
        return getattr(self.T if name in L.TASK_KIND else self.S, name)

    def parts(self) -> list[tuple[int, int]]:
        return [(0, self.n)]

    def part(self, lo: int, hi: int) -> dict[str, np.ndarray]:
        return _Part(self.whole) if (lo, hi) == (0, self.n) else _Part(lambda f: self.whole(f)[lo:hi])

    def derived(self) -> Derived:
        return Derived()


class _Part(dict):
    """Columns of some rows, read on first use."""

    def __init__(self, read):
        super().__init__()
        self._read = read

    def __missing__(self, name: str) -> np.ndarray:
        self[name] = a = self._read(name)
        return a


class Outputs:
    """The per-task results of a chunked run's window (``n`` tasks), written as its tasks leave the engine's
    arrays: one file per field of :data:`TASK_OUT` and :data:`STATE_OUT`, ``n`` values at the tasks' window
    indices, in a directory of its own (removed with this object), so that the window is never held whole; the
    results read them back :data:`PART_ROWS` tasks at a time (the same interface as :class:`ArrayColumns`)."""

    flex_per_task = False  # (a run with controls keeps one chunk)

    def __init__(self, n: int):
        self.n = n
        self.root = Path(tempfile.mkdtemp(prefix="gridshift-run-"))
        self._cleanup = weakref.finalize(self, shutil.rmtree, self.root, True)
        self._dtype: dict[str, np.dtype] = {}

    def close(self) -> None:
        """Remove the files now (they are removed when this object is collected otherwise)."""
        self._cleanup()

    def _columns(self, T, S):
        cols = [(f, getattr(src, f)) for fields, src in ((TASK_OUT, T), (STATE_OUT, S)) for f in fields]
        for f, a in cols:
            if f not in self._dtype:
                self._dtype[f] = a.dtype
                with open(self.root / f, "wb") as fh:
                    fh.truncate(self.n * a.dtype.itemsize)
        return cols

    def put(self, rows: np.ndarray, T, S, sel: np.ndarray) -> None:
        """Write the tasks ``sel`` (a mask or indices into the engine's arrays) at window indices ``rows``."""
        cols = self._columns(T, S)
        if not rows.shape[0]:
            return
        lo, hi = int(rows.min()), int(rows.max()) + 1  # (the span written is mapped, not the window's file)
        for f, a in cols:
            mm = np.memmap(self.root / f, a.dtype, "r+", offset=lo * a.dtype.itemsize, shape=(hi - lo,))
            mm[rows - lo] = a[sel]
            del mm  # (unmapped: the pages written are the file's, not the run's)

    def put_ids(self, first: int, ids: np.ndarray) -> None:
        """The ids of the window's tasks ``first`` on (a chunk's, written as it is taken)."""
        path = self.root / "task_id"
        if "task_id" not in self._dtype:
            self._dtype["task_id"] = ids.dtype
            with open(path, "wb") as fh:
                fh.truncate(self.n * ids.dtype.itemsize)
        with open(path, "r+b") as fh:
            fh.seek(first * ids.dtype.itemsize)
            np.ascontiguousarray(ids).tofile(fh)

    def leave(self, T, S, gidx: np.ndarray, leave: np.ndarray, p: int, fresh: int) -> None:
        """The tasks ``leave`` (a mask over the engine's arrays, window indices ``gidx``) are done: write them. The
        last chunk's tasks, from index ``p`` on (window index ``fresh`` on), consecutive in the window and none
        written before, go as one block (the live ones rewritten when they leave); the earlier ones one by one."""
        self.put_block(fresh, T, S, p)
        old = leave.copy()
        old[p:] = False
        self.put(gidx[old], T, S, old)

    def put_rest(self, T, S, gidx: np.ndarray, n_out: int) -> None:
        """The run has ended: write every task still in the arrays (``n_out``, the steps the results cover: the
        results read these files over them)."""
        self.put(gidx, T, S, np.arange(T.arrival.shape[0]))

    def put_block(self, first: int, T, S, p: int) -> None:
        """Write the tasks from index ``p`` of the engine's arrays on, window indices ``first`` on (consecutive), in
        one sequential write per field: for a task still live this writes the values it has now, which its own
        write when it leaves replaces."""
        for f, a in self._columns(T, S):
            with open(self.root / f, "r+b") as fh:
                fh.seek(first * a.dtype.itemsize)
                np.ascontiguousarray(a[p:]).tofile(fh)

    def read(self, name: str, lo: int, hi: int) -> np.ndarray:
        dt = self._dtype[name]
        return np.fromfile(self.root / name, dt, count=hi - lo, offset=lo * dt.itemsize)

    def whole(self, name: str) -> np.ndarray:
        return self.read(name, 0, self.n)

    def parts(self) -> list[tuple[int, int]]:
        return [(lo, min(lo + PART_ROWS, self.n)) for lo in range(0, max(self.n, 1), PART_ROWS)]

    def part(self, lo: int, hi: int) -> dict[str, np.ndarray]:
        return _Part(lambda f: self.read(f, lo, hi))

    def derived(self) -> Derived:
        return Derived(self.root)


class Tallies:
    """A chunked run that keeps no per-task results (``sim_core.run(..., task_results=False)``): each task's part of
    the results (``result.TaskFold``: the per-step counters and flows, the tallies, the sums of the derived columns)
    is folded in as it leaves the engine's arrays, and nothing is written per task, so that a run of hundreds of
    millions of tasks (×10 of the source cluster: 412 M, ~130 bytes of per-task outputs each) holds its live tasks
    and its window's arrivals and nothing on disk. Its totals and steps are those of the run with per-task
    results, the counts exactly and the sums of floats (transfers, waits, work) to the last bits (the tasks are
    summed in the order they leave, not in the window's); it has no per-task frames."""

    flex_per_task = False  # (a run with controls keeps one chunk)

    def __init__(self, fold) -> None:
        #: the passes (``result.TaskFold`` over the run's largest step count, its derived columns as ``Sums``)
        self.fold = fold
        self._n_max = fold.cnt.shape[2]

    @staticmethod
    def _columns(T, S, sel) -> dict[str, np.ndarray]:
        return {**{f: getattr(T, f)[sel] for f in TASK_OUT}, **{f: getattr(S, f)[sel] for f in STATE_OUT}}

    def put_ids(self, first: int, ids: np.ndarray) -> None:
        """(no per-task frames: the ids are not kept)"""

    def leave(self, T, S, gidx: np.ndarray, leave: np.ndarray, p: int, fresh: int) -> None:
        # (done: each event is at or before now, inside any step count the run ends with)
        self.fold.add(self._columns(T, S, leave), self._n_max, False)

    def put_rest(self, T, S, gidx: np.ndarray, n_out: int) -> None:
        self.fold.add(self._columns(T, S, slice(None)), n_out, False)

    def close(self) -> None:
        """(nothing on disk)"""

    def _no_frames(self, *_args):
        from .options import RunOptionsError

        raise RunOptionsError("this run kept no per-task results (sim_core.run(..., task_results=False)): it has its "
                              "totals, steps and sites, not its tasks or transfers")

    whole = parts = part = _no_frames


def referenced(S, n: int) -> np.ndarray:
    """Which of the ``n`` tasks in the arrays a field of ``S`` refers to (a queue or transit link, a list entry)."""
    ref = np.zeros(n, bool)
    for name, kind in L.STATE_KIND.items():
        a = getattr(S, name)
        if name in L.LIST_COUNT:
            v = a[:int(S.sc[L.LIST_COUNT[name]])]
        elif kind in (L.K_LINK, L.K_INDEX):
            v = a[a >= 0]
        else:
            continue
        ref[v] = True
    return ref


def _check_one_slot(S, n: int) -> None:
    """A run with per-task flexible state keeps one chunk (module docstring)."""
    for name, kind in L.STATE_KIND.items():
        if kind == L.K_FLEX and getattr(S, name).shape[0] != 1:
            raise ValueError(f"State.{name} is per task (a run with flexible-task controls): it runs in one chunk")


def compact(T, S, gidx: np.ndarray, out: Outputs | Tallies, new_T, first: int, fresh: int):
    """The engine's arrays without their done tasks (written into ``out``) and with the chunk ``new_T`` appended,
    whose first task is task ``first`` of the window: ``(T, S, gidx)``, ``gidx`` the window index of every task
    in the arrays (ascending: the arrays keep window order). ``fresh``: the window index of the first task of the
    chunk appended last (none of its tasks has been written yet). Every index field is renumbered; the tasks kept
    stay in their order, before the new ones."""
    n = T.arrival.shape[0]
    _check_one_slot(S, n)
    leave = np.isin(S.status, L.ST_FINAL) & ~referenced(S, n)
    out.leave(T, S, gidx, leave, int(np.searchsorted(gidx, fresh)), fresh)
    keep = ~leave
    new_pos = np.cumsum(keep, dtype=np.int64) - 1  # (a kept task's index after the compaction)
    n_keep = int(new_pos[-1]) + 1 if n else 0
    m = new_T.arrival.shape[0]
    fresh = L.task_arrays(m)

    def renumber(v: np.ndarray) -> np.ndarray:
        live = v >= 0
        if not keep[v[live]].all():
            raise AssertionError("a task an index field refers to was dropped")
        w = v.copy()
        w[live] = new_pos[v[live]]
        return w

    T2 = L.Tasks(*(np.concatenate([a[keep], b]) for a, b in zip(T, new_T, strict=True)))
    upd = {}
    for name, kind in L.STATE_KIND.items():
        a = getattr(S, name)
        if kind == L.K_VALUE:
            upd[name] = np.concatenate([a[keep], fresh[name]])
        elif kind == L.K_LINK:
            upd[name] = np.concatenate([renumber(a[keep]), fresh[name]])
        elif kind == L.K_INDEX:
            upd[name] = renumber(a)
        elif kind == L.K_LIST:
            k = int(S.sc[L.LIST_COUNT[name]])
            b = np.zeros(max(n_keep + m, 1), a.dtype)
            b[:k] = renumber(a[:k])
            upd[name] = b
    for slot in L.SC_TASK_INDEX:  # (in place: the counters are the run's)
        S.sc[slot] = int(keep[:int(S.sc[slot])].sum())
    gidx2 = np.concatenate([gidx[keep], np.arange(first, first + m, dtype=np.int64)])
    return T2, S._replace(**upd), gidx2


def finish(T, S, gidx: np.ndarray, out: Outputs | Tallies, n_out: int):
    """The run's ``(Tasks, State)`` once it has stepped (its results covering ``n_out`` steps): every task still in
    the arrays written into ``out`` (whose files the results then read; or folded), every per-task field dropped."""
    out.put_rest(T, S, gidx, n_out)
    T2 = T._replace(**dict.fromkeys(L.Tasks._fields))
    S2 = S._replace(**{f: None for f, k in L.STATE_KIND.items() if k in (L.K_VALUE, L.K_LINK, L.K_LIST)})
    return T2, S2
