"""The workload derivation by chunks of time, so that memory does not grow with the load factor.

A derivation is a sequence of :class:`Chunk` s in time order, each one or more *units*: UTC days
(the synthetic generator, ``pipelines.workload.synthetic.SyntheticChunks``) or target weeks (a
trace tiled onto the year, :class:`TraceChunks`). Every random number a unit needs comes from a
generator seeded by ``(seed, stream, unit)`` (:func:`chunk_rng`; the unit is the absolute UTC day
or week number), so a unit's tasks are the same whether the year is derived at once or chunk by
chunk, and whichever units share its chunk. This is the definition of a derived workload
(docs/workload.md, "Chunks"); the earlier whole-year draws (one random stream over all tasks of the
year) were not separable by chunk and are gone.

Two ways to the same table:

* :func:`derive_in_memory`: every chunk, concatenated, sorted once, numbered (:func:`finalize`) —
  the reference, for small workloads and tests;
* :func:`iter_tasks` / :func:`write_tasks_parquet`: chunk after chunk, holding back only the tasks
  a later chunk may still precede (a layer's ±jitter crosses week boundaries), numbering as it goes,
  and writing fixed-size Parquet row groups to a temporary file published atomically.

Every task's sort key (arrival, layer, source line) is unique, so both give the same rows in the
same order, and the Parquet file has the bytes ``gridshift.parquet.parquet_bytes`` gives for the
in-memory table (tests/integration/pipelines/workload/test_workload_chunked.py).

Per-task attributes assigned after the derivation (e.g. flexibility) hook in per chunk:
a :data:`ChunkHook` gets each chunk's tasks and a :class:`ChunkContext` (its units; ``draw`` gives
one value per task from a generator per unit) and returns them with its columns added.
"""

from __future__ import annotations

import contextlib
import math
from abc import ABC, abstractmethod
from collections import Counter
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

from gridshift.atomic import atomic_file
from gridshift.errors import DataError
from gridshift.parquet import PARQUET_OPTIONS, ROW_GROUP_ROWS
from pipelines.workload import derive as wd
from pipelines.workload.derive import MONDAY_EPOCH_S, SLOT_S, WEEK_S, DeriveParams, Histogram

_US = 1_000_000
DAY_S = 86_400

# Random streams of a unit (the first element of the spawn key; the second is the unit: day or week number).
STREAM_GENERATE = 1  # synthetic generation
STREAM_BANDWIDTH = 2  # input sizes of the synthetic tasks
STREAM_EXTEND = 3  # layer jitter and thinning of a tiled trace
STREAM_HOOK = 100  # hooks: STREAM_HOOK + hook number (ChunkContext.rng)

#: columns of a chunk's tasks before :func:`finalize` (hooks may add more)
EXTENDED_COLUMNS = ["arrival_epoch_us", "layer", "source_line", "duration_s", "cpu_cores", "gpus", "mem_gb",
                    "gpu_mem_gb", "bandwidth_gb"]
SORT_KEY = ["arrival_epoch_us", "layer", "source_line"]


def chunk_seed(seed: int, stream: int, index: int) -> np.random.SeedSequence:
    """The seed of one random stream of one chunk: independent of every other (stream, chunk)."""
    return np.random.SeedSequence(seed, spawn_key=(stream, index))


def chunk_rng(seed: int, stream: int, index: int, n: int = 1) -> list[np.random.Generator]:
    return [np.random.default_rng(s) for s in chunk_seed(seed, stream, index).spawn(n)]


@dataclass
class ChunkStats:
    """What one chunk read, kept and dropped (summed over chunks into the derivation's report)."""

    n_source_rows: int = 0
    n_kept: int = 0
    dropped: Counter = field(default_factory=Counter)
    adjustments: Counter = field(default_factory=Counter)
    outside_year: int = 0
    thinned: int = 0

    def add(self, other: ChunkStats) -> None:
        self.n_source_rows += other.n_source_rows
        self.n_kept += other.n_kept
        self.dropped.update(other.dropped)
        self.adjustments.update(other.adjustments)
        self.outside_year += other.outside_year
        self.thinned += other.thinned


@dataclass
class Chunk:
    """The tasks of one span of time (``EXTENDED_COLUMNS``), and ``floor_us``: every task of every
    later chunk arrives at or after it (µs since the Unix epoch, UTC).

    A chunk is one or more *units* (a day, a week: what the random draws are seeded by), ``units``
    = ((unit index, rows), ...) in order; the rows of ``tasks`` are grouped by unit in that order
    (within a unit: by layer, then source line), so draws made unit by unit do not depend on how
    units were grouped into chunks."""

    tasks: pl.DataFrame
    floor_us: int
    stats: ChunkStats
    units: tuple[tuple[int, int], ...]


@dataclass(frozen=True)
class ChunkContext:
    """What a hook knows of the chunk it is given: the seed, the year and the chunk's units."""

    seed: int
    year: int
    units: tuple[tuple[int, int], ...]

    def draw(self, fn: Callable[[np.random.Generator, int], np.ndarray], stream: int = 0) -> np.ndarray:
        """``fn(generator, rows)`` per unit, concatenated in row order: one value per task, from a
        generator seeded by (seed, hook stream, unit), so it does not depend on the chunking."""
        parts = [np.asarray(fn(chunk_rng(self.seed, STREAM_HOOK + stream, u)[0], n)) for u, n in self.units]
        return np.concatenate(parts) if parts else np.empty(0)


#: ``hook(tasks, ctx) -> tasks`` with columns added; it must keep the rows and their order
ChunkHook = Callable[[pl.DataFrame, ChunkContext], pl.DataFrame]


class ChunkedDerivation(ABC):
    """A derivation as chunks. Iterating runs it (again, identically, each time); ``stats`` and
    ``extension`` hold the totals of the last complete iteration."""

    def __init__(self, *, workload: str, year: int, params: DeriveParams, hooks: Sequence[ChunkHook] = ()):
        self.workload, self.year, self.params, self.hooks = workload, year, params, tuple(hooks)
        self.stats = ChunkStats()
        self.extension = wd.ExtensionInfo(0, 0, 1, 0, 0)

    @abstractmethod
    def _chunks(self) -> Iterator[Chunk]:
        """The chunks in time order, before hooks."""

    def __iter__(self) -> Iterator[Chunk]:
        stats = ChunkStats()
        for ch in self._chunks():
            if self.hooks and ch.tasks.height:
                ctx = ChunkContext(self.params.seed, self.year, ch.units)
                for hook in self.hooks:
                    n = ch.tasks.height
                    ch.tasks = hook(ch.tasks, ctx)
                    if ch.tasks.height != n:
                        raise ValueError(f"hook {hook!r} changed the number of tasks of a chunk")
            stats.add(ch.stats)
            yield ch
        self.stats = stats
        self.extension.outside_year, self.extension.thinned = stats.outside_year, stats.thinned


# --------------------------------------------------------------------------- a trace tiled onto a year
class TraceChunks(ChunkedDerivation):
    """A parsed trace (``TRACE_FRAME_COLUMNS``): filtered, normalized and sized once (the trace is
    held in memory; its size does not depend on the load factor), then tiled onto the target year
    one target week at a time (``docs/workload.md`` §4: usable weeks, week order, layers, jitter, thinning)."""

    def __init__(self, trace: pl.DataFrame, *, workload: str, year: int, params: DeriveParams,
                 bandwidth_reference: Histogram | None = None, hooks: Sequence[ChunkHook] = ()):
        super().__init__(workload=workload, year=year, params=params, hooks=hooks)
        missing = [c for c in wd.TRACE_FRAME_COLUMNS if c not in trace.columns]
        if missing:
            raise ValueError(f"trace frame lacks columns {missing}")
        p = params
        rng_bw, rng_order, _, _ = wd.spawn_rngs(p.seed, 4)
        kept, dropped, adjustments = wd.filter_tasks(trace.select(wd.TRACE_FRAME_COLUMNS), p)
        tasks = wd.assign_bandwidth(wd.normalize_resources(kept, p), p, bandwidth_reference, rng_bw)
        self._first_stats = ChunkStats(trace.height, kept.height, Counter(dropped), Counter(adjustments))
        origin = p.origin_s
        arr = tasks["arrival_s"].to_numpy().astype(np.float64) + origin
        if p.window_s is not None:
            window = (p.window_s[0] + origin, p.window_s[1] + origin)
        elif len(arr):
            window = (float(arr.min()), float(arr.max()))
        else:
            window = (0.0, 0.0)
        weeks = wd.usable_weeks(arr, window, p.min_week_fraction)
        if len(weeks) == 0:
            raise DataError(
                "the trace spans no complete week (Monday 00:00 UTC to Monday) with tasks; arrivals from "
                f"{datetime.fromtimestamp(window[0], UTC)} to {datetime.fromtimestamp(window[1], UTC)}: "
                "cannot extend to a year preserving weekday and hour-of-day"
            )
        ylo, yhi = wd.year_window_s(year)
        self._ylo_us, self._yhi_us = ylo * _US, yhi * _US
        self._w0 = math.floor((ylo - MONDAY_EPOCH_S) / WEEK_S)  # absolute number of the week holding 1 January
        n_target = math.ceil((yhi - MONDAY_EPOCH_S) / WEEK_S) - self._w0
        self._n_layers = max(1, math.ceil(p.load_factor - 1e-12))
        self._frac = p.load_factor - (self._n_layers - 1)
        self._assign = wd.week_assignment(len(weeks), n_target, self._n_layers, p.week_order, rng_order)
        self._weeks = weeks
        wk = np.floor_divide(arr - MONDAY_EPOCH_S, WEEK_S).astype(np.int64)
        offset_us = np.round((arr - MONDAY_EPOCH_S - wk * WEEK_S) * _US).astype(np.int64)
        src = (tasks.with_columns(src_week=pl.Series(wk), offset_us=pl.Series(offset_us)).drop("arrival_s")
               .filter(pl.col("src_week").is_in(weeks.tolist())).sort("source_line"))
        self._by_week = src.partition_by("src_week", as_dict=True, include_key=False)
        self._jitter_us = int(round(p.layer_jitter_s * _US)) if self._n_layers > 1 and p.layer_jitter_s > 0 else 0
        self.extension = wd.ExtensionInfo(len(weeks), n_target, self._n_layers, 0, 0)

    def _chunks(self) -> Iterator[Chunk]:
        p = self.params
        empty = next(iter(self._by_week.values())).clear()
        for k in range(self.extension.target_weeks):
            week = self._w0 + k
            parts = []
            for layer in range(self._n_layers):
                part = self._by_week.get((int(self._weeks[self._assign[k, layer]]),), empty)
                parts.append(part.with_columns(layer=pl.lit(layer, dtype=pl.Int64)))
            out = pl.concat(parts)  # ordered by (layer, source_line): the order of the draws below
            rng_thin, rng_jitter = chunk_rng(p.seed, STREAM_EXTEND, week, 2)
            start_us = (MONDAY_EPOCH_S + week * WEEK_S) * _US
            arrival = start_us + out["offset_us"].to_numpy()
            layer = out["layer"].to_numpy()
            if self._jitter_us:
                jit = rng_jitter.uniform(-p.layer_jitter_s, p.layer_jitter_s, out.height)
                arrival = arrival + np.where(layer > 0, np.round(jit * _US), 0).astype(np.int64)
            keep = np.ones(out.height, dtype=bool)
            stats = ChunkStats()
            if self._frac < 1.0:
                u = rng_thin.random(out.height)
                keep &= (layer != self._n_layers - 1) | (u < self._frac)
                stats.thinned = int((~keep).sum())
            inside = (arrival >= self._ylo_us) & (arrival < self._yhi_us)
            stats.outside_year = int((keep & ~inside).sum())
            keep &= inside
            tasks = (out.with_columns(arrival_epoch_us=pl.Series(arrival, dtype=pl.Int64)).filter(pl.Series(keep))
                     .select(EXTENDED_COLUMNS))
            if k == 0:
                stats.add(self._first_stats)
            # later weeks start at start + 1 week, less the largest backward jitter
            yield Chunk(tasks, start_us + WEEK_S * _US - self._jitter_us, stats, ((week, tasks.height),))


# --------------------------------------------------------------------------- ordering and numbering
def finalize(extended: pl.DataFrame, workload: str, year: int, first_id: int = 0, *,
             presorted: bool = False) -> pl.DataFrame:
    """Sort by arrival (ties: layer, source line; ``presorted``: already so), number the tasks from
    ``first_id``, shape the ``workload_tasks`` columns; columns added by hooks follow them."""
    df = extended if presorted else extended.sort(SORT_KEY)
    extra = [c for c in df.columns if c not in EXTENDED_COLUMNS]
    return df.select(
        pl.lit(workload, dtype=pl.String).alias("workload"),
        pl.lit(year, dtype=pl.Int64).alias("year"),
        (pl.int_range(pl.len(), dtype=pl.Int64) + first_id).alias("task_id"),
        pl.col("arrival_epoch_us").cast(pl.Datetime("us", "UTC")).alias("arrival_ts_utc"),
        *(pl.col(c).cast(pl.Float64) for c in ("duration_s", "cpu_cores", "gpus", "mem_gb", "gpu_mem_gb",
                                                "bandwidth_gb")),
        pl.col("source_line").cast(pl.Int64),
        pl.col("layer").cast(pl.Int64),
        *extra,
    )


def derive_in_memory(chunks: ChunkedDerivation) -> wd.Derivation:
    """Every chunk at once, sorted and numbered in one go: the reference the stream must equal."""
    frames = [c.tasks for c in chunks]
    extended = pl.concat(frames) if frames else pl.DataFrame(schema=_EMPTY_SCHEMA)
    del frames
    tasks = finalize(extended, chunks.workload, chunks.year)
    s = chunks.stats
    return wd.Derivation(tasks, s.n_source_rows, s.n_kept, dict(sorted(s.dropped.items())),
                         dict(sorted(s.adjustments.items())), chunks.extension, chunks.params)


def derive(trace: pl.DataFrame, *, workload: str, year: int, params: DeriveParams,
           bandwidth_reference: Histogram | None = None, hooks: Sequence[ChunkHook] = ()) -> wd.Derivation:
    """Steps 1-5 on a trace frame (``TRACE_FRAME_COLUMNS``), in memory."""
    return derive_in_memory(TraceChunks(trace, workload=workload, year=year, params=params,
                                        bandwidth_reference=bandwidth_reference, hooks=hooks))


def _sort(df: pl.DataFrame) -> pl.DataFrame:
    """``df.sort(SORT_KEY)`` (the key is unique, so any correct sort gives this order), by numpy's
    lexsort and one gather: about a third less time than polars' multi-column sort here."""
    if df.height < 2:
        return df
    return df[np.lexsort([df[c].to_numpy() for c in reversed(SORT_KEY)])]


def iter_tasks(chunks: Iterable[Chunk], workload: str, year: int) -> Iterator[pl.DataFrame]:
    """The finalized tasks in ``task_id`` order, a part per chunk: the tasks no later chunk can
    precede (arrival < the chunk's ``floor_us``) are sorted, numbered and yielded; the rest wait for
    the next chunk. Memory: one chunk plus the held-back tasks."""
    held: pl.DataFrame | None = None
    next_id = 0
    for ch in chunks:
        df = ch.tasks if held is None else pl.concat([held, ch.tasks])
        df = _sort(df)
        cut = int(df["arrival_epoch_us"].search_sorted(ch.floor_us, side="left"))
        held = df.slice(cut) if cut < df.height else None
        if cut:
            out = finalize(df.slice(0, cut), workload, year, next_id, presorted=True)
            next_id += out.height
            yield out
    if held is not None:
        yield finalize(held, workload, year, next_id, presorted=True)


class _RowGroupWriter:
    """Parquet with ``PARQUET_OPTIONS`` written part by part in row groups of exactly ``ROW_GROUP_ROWS``
    (the last one shorter): the bytes do not depend on how the rows were split into parts.

    Row groups are encoded and compressed on a background thread (Arrow releases the GIL), one at a
    time and in order, while the caller derives the next part: the same bytes, the write overlapped
    with the derivation. At most one row group is in flight (bounded memory); a failure of the write
    is raised by the next ``write`` or by ``close``."""

    def __init__(self, path: Path, row_group_rows: int = ROW_GROUP_ROWS, options: dict | None = None):
        self.path, self.rows = path, row_group_rows
        self.options = {k: v for k, v in (options or PARQUET_OPTIONS).items() if k != "row_group_size"}
        self.writer: pq.ParquetWriter | None = None
        self.pending: list[pa.Table] = []
        self.n_pending = 0
        self.n_written = 0
        self.schema: pa.Schema | None = None
        self._pool = ThreadPoolExecutor(max_workers=1, thread_name_prefix="parquet-row-groups")
        self._inflight: Future | None = None

    def write(self, df: pl.DataFrame) -> None:
        t = df.to_arrow()
        if self.schema is None:
            self.schema = t.schema
            self.writer = pq.ParquetWriter(self.path, self.schema, **self.options)
        elif t.schema != self.schema:
            t = t.cast(self.schema)
        self.pending.append(t)
        self.n_pending += t.num_rows
        while self.n_pending >= self.rows:
            self._emit(self.rows)

    def _emit(self, n: int) -> None:
        t = pa.concat_tables(self.pending)
        self._wait()
        self._inflight = self._pool.submit(self.writer.write_table, t.slice(0, n), row_group_size=n)
        rest = t.slice(n)
        self.pending = [rest] if rest.num_rows else []
        self.n_pending = rest.num_rows
        self.n_written += n

    def _wait(self) -> None:
        if self._inflight is not None:
            f, self._inflight = self._inflight, None
            f.result()

    def close(self, empty_schema: pa.Schema) -> None:
        try:
            if self.writer is None:
                self.schema = empty_schema
                self.writer = pq.ParquetWriter(self.path, empty_schema, **self.options)
                self.writer.write_table(empty_schema.empty_table())
            elif self.n_pending:
                self._emit(self.n_pending)
            self._wait()
            self.writer.close()
        finally:
            self._pool.shutdown(wait=True)

    def abort(self) -> None:
        """Stop after a failure: the row group in flight finished (its error dropped), the file closed."""
        try:
            with contextlib.suppress(BaseException):  # the caller re-raises the first failure
                self._wait()
        finally:
            self._pool.shutdown(wait=True)
            if self.writer is not None:
                self.writer.close()


@dataclass
class StreamedDerivation:
    """What :func:`write_tasks_parquet` wrote: the counts and the report, not the tasks."""

    path: Path
    n_tasks: int
    n_row_groups: int
    derivation: wd.Derivation  # its ``tasks`` is empty: the tasks are in ``path``
    summary: dict[str, float]


#: writer settings of a staging file that is read once and deleted (``warehouse.ingest_workload``: DuckDB
#: reads it into the warehouse; its bytes are hashed nowhere): zstd level 1 without dictionaries, about
#: half the CPU time of ``PARQUET_OPTIONS`` for a file of about the same size (1× synthetic year:
#: 0.47 s vs 0.87 s, 24.6 MB vs 25.8 MB; BENCHMARKS.md "Workload derivation")
STAGING_PARQUET_OPTIONS = {**PARQUET_OPTIONS, "compression_level": 1, "use_dictionary": False}


def write_tasks_parquet(chunks: ChunkedDerivation, path: Path, *,
                        on_part: Callable[[pl.DataFrame], None] | None = None,
                        options: dict | None = None) -> StreamedDerivation:
    """Derive chunk by chunk into ``path`` (the ``workload_tasks`` columns, plus hooks' columns), written
    to a temporary file beside it and renamed into place when complete; ``on_part`` sees each numbered
    part before it is written (e.g. to validate it). Peak memory: a chunk or two, not the year.
    ``options``: the Parquet writer settings (default ``PARQUET_OPTIONS``: the bytes of
    ``parquet_bytes(in-memory table)``; ``STAGING_PARQUET_OPTIONS`` for a file only read back)."""
    acc = SummaryAccumulator(chunks.year)
    with atomic_file(Path(path)) as tmp:
        w = _RowGroupWriter(tmp, options=options)
        try:
            for part in iter_tasks(chunks, chunks.workload, chunks.year):
                if on_part is not None:
                    on_part(part)
                acc.add(part)
                w.write(part)
            empty = finalize(pl.DataFrame(schema=_EMPTY_SCHEMA), chunks.workload, chunks.year)
            w.close(empty.to_arrow().schema)
        except BaseException:
            w.abort()
            raise
        n = w.n_written
    s = chunks.stats
    der = wd.Derivation(pl.DataFrame(), s.n_source_rows, s.n_kept, dict(sorted(s.dropped.items())),
                        dict(sorted(s.adjustments.items())), chunks.extension, chunks.params)
    return StreamedDerivation(Path(path), n, pq.ParquetFile(path).num_row_groups, der, acc.summary())


_EMPTY_SCHEMA = {"arrival_epoch_us": pl.Int64, "layer": pl.Int64, "source_line": pl.Int64, "duration_s": pl.Float64,
                 "cpu_cores": pl.Float64, "gpus": pl.Float64, "mem_gb": pl.Float64, "gpu_mem_gb": pl.Float64,
                 "bandwidth_gb": pl.Float64}


def read_tasks_parquet(path: Path, columns: Sequence[str] | None = None) -> Iterator[pl.DataFrame]:
    """The tasks of a workload Parquet file one row group at a time (bounded memory)."""
    f = pq.ParquetFile(path)
    for i in range(f.num_row_groups):
        yield pl.from_arrow(f.read_row_group(i, columns=list(columns) if columns else None))


class SummaryAccumulator:
    """``derive.summarize`` over parts: slot counts, column sums and exact duration counts (for the
    median) accumulated part by part. Means may differ from a one-pass mean in the last bits."""

    def __init__(self, year: int):
        self.year = year
        self.ylo, yhi = wd.year_window_s(year)
        self.per = np.zeros((yhi - self.ylo) // SLOT_S, dtype=np.int64)
        self.n = 0
        self.sums = Counter()
        self.durations: pl.DataFrame | None = None

    def add(self, part: pl.DataFrame) -> None:
        if not part.height:
            return
        slot = (part["arrival_ts_utc"].dt.epoch("s").to_numpy() - self.ylo) // SLOT_S
        self.per += np.bincount(slot, minlength=len(self.per))
        self.n += part.height
        for col in wd.SUMMARY_COLUMNS:
            self.sums[col] += float(part[col].sum())
        vc = part.group_by("duration_s").len()
        self.durations = vc if self.durations is None else (
            pl.concat([self.durations, vc]).group_by("duration_s").agg(pl.col("len").sum()))

    def summary(self) -> dict[str, float]:
        per = self.per
        out: dict[str, float] = {
            "n_tasks": float(self.n),
            "tasks_per_15min_mean": float(per.mean()),
            "tasks_per_15min_p95": float(np.percentile(per, 95)),
            "tasks_per_15min_max": float(per.max()),
            "tasks_per_15min_var_to_mean": float(per.var() / per.mean()) if per.mean() > 0 else float("nan"),
        }
        for col in wd.SUMMARY_COLUMNS:
            out[f"mean_{col}"] = self.sums[col] / self.n if self.n else float("nan")
        out["median_duration_s"] = _median_of_counts(self.durations) if self.n else float("nan")
        return out


def _median_of_counts(vc: pl.DataFrame) -> float:
    """The median (mean of the two middle values for an even count) from (value, count) rows."""
    vc = vc.sort("duration_s")
    vals, cum = vc["duration_s"].to_numpy(), np.cumsum(vc["len"].to_numpy())
    n = int(cum[-1])
    lo = vals[np.searchsorted(cum, (n - 1) // 2, side="right")]
    hi = vals[np.searchsorted(cum, n // 2, side="right")]
    return float((lo + hi) / 2)
