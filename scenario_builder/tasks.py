"""The bundle's tasks, streamed from the warehouse: a workload of any size is read a window of arrivals at a time,
given its flexibility columns and written to the tasks file batch by batch, while the sizing demand and the
manifest's flexibility summary accumulate, so that the export never holds the year's tasks whole (issue 34: ×10 of
the source cluster is 412 M tasks).

The file is byte for byte the one the whole year written at once gives (``gridshift.parquet.write_parquet_batches``:
every batch but the last is a whole number of row groups), so a bundle's id does not depend on how it was built.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import polars as pl

from gridshift.bundle import TASKS_SCHEMA
from gridshift.bundle.format import TASK_RESOURCES
from gridshift.errors import GridshiftError
from gridshift.parquet import ROW_GROUP_ROWS, write_parquet_batches
from pipelines.core.source import year_bounds
from pipelines.workload import flexibility as flex_mod
from scenario_builder.sizing import Demand
from warehouse.db import query, table_exists

#: rows per batch written (whole row groups of the tasks file)
BATCH_ROWS = 8 * ROW_GROUP_ROWS
#: rows a window's query returns, about (the window's days are chosen from the year's count)
WINDOW_ROWS = 4 * BATCH_ROWS
COLUMNS = ("task_id", "arrival_ts_utc", *TASK_RESOURCES)


def _quoted(cols) -> str:
    return ", ".join(f'"{c}"' for c in cols)


class WorkloadTasks:
    """The tasks of ``params``' workload and year in the warehouse's ``workload_tasks``, checked whole in the
    database (no nulls, durations > 0, ids unique) before any is read; :meth:`batches` gives them in bundle order
    (arrival, then id) with the flexibility columns of bundle format 2 from the workload pipeline's model
    (``pipelines.workload.flexibility``, seeded by the build seed and each task's id, so the same task always gets
    the same flexibility, whichever batch it is in)."""

    def __init__(self, con, params) -> None:
        self.con, self.params = con, params
        self.year = params.year
        self.lo, self.hi = year_bounds(params.year)
        if params.workload == "none":
            self.n = 0
            return
        if not table_exists(con, "workload_tasks"):
            raise GridshiftError("the warehouse has no workload_tasks table (ingest the workload first)")
        have = set(query(con, "SELECT column_name FROM information_schema.columns "
                              "WHERE table_name = 'workload_tasks'")["column_name"].to_list())
        missing = [c for c in [*COLUMNS, "workload", "year"] if c not in have]
        if missing:
            raise GridshiftError(f"workload_tasks lacks column(s) {missing}")
        self.n = self._check()

    def _where(self, lo: datetime, hi: datetime) -> tuple[str, dict[str, Any]]:
        return ("workload = $w AND year = $y AND arrival_ts_utc >= $lo AND arrival_ts_utc < $hi",
                {"w": self.params.workload, "y": self.year, "lo": lo, "hi": hi})

    def _check(self) -> int:
        """The year's task count, after the checks every task must pass (in the database: out of core)."""
        where, args = self._where(self.lo, self.hi)
        counts = ", ".join([f'count("{c}")' for c in COLUMNS] + ['count(*) FILTER (WHERE "duration_s" <= 0)'])
        row = self.con.execute(f"SELECT count(*), {counts} FROM workload_tasks WHERE {where}", args).fetchone()
        n, non_null, non_positive = row[0], row[1:-1], row[-1]
        if n == 0:
            raise GridshiftError(f"workload {self.params.workload!r} has no tasks in {self.year} in the warehouse")
        nulls = {c: n - k for c, k in zip(COLUMNS, non_null, strict=True) if k != n}
        if nulls:
            raise GridshiftError(f"workload_tasks: null values in {nulls}")
        if non_positive:
            bad = self.con.execute(f"SELECT task_id, duration_s FROM workload_tasks WHERE {where} AND duration_s <= 0 "
                                   "ORDER BY arrival_ts_utc, task_id LIMIT 5", args).fetchall()
            raise GridshiftError(f"workload_tasks: duration_s must be > 0; {non_positive} task(s) are not, first "
                                 f"(task_id, duration_s): {bad}")
        dup = self.con.execute(f"SELECT task_id FROM workload_tasks WHERE {where} GROUP BY task_id "
                               "HAVING count(*) > 1 ORDER BY task_id LIMIT 5", args).fetchall()
        if dup:
            raise GridshiftError(f"workload_tasks: task_id is not unique: {[r[0] for r in dup]} appear more than once")
        return int(n)

    def _windows(self) -> Iterator[tuple[datetime, datetime]]:
        """Spans of whole days covering the year, each holding about :data:`WINDOW_ROWS` tasks on average."""
        days = (self.hi - self.lo).days
        step = max(1, min(days, WINDOW_ROWS * days // max(self.n, 1)))
        lo = self.lo
        while lo < self.hi:
            hi = min(lo + timedelta(days=step), self.hi)
            yield lo, hi
            lo = hi

    def _window(self, lo: datetime, hi: datetime) -> pl.DataFrame:
        where, args = self._where(lo, hi)
        tasks = query(self.con, f"SELECT {_quoted(COLUMNS)} FROM workload_tasks WHERE {where}", args)
        tasks = tasks.with_columns(
            pl.col("task_id").cast(pl.Int64),
            pl.col("arrival_ts_utc").dt.cast_time_unit("us").dt.convert_time_zone("UTC"),
            *[pl.col(c).cast(pl.Float64) for c in COLUMNS[2:]],
        ).sort("arrival_ts_utc", "task_id")
        return flex_mod.assign_flexibility(tasks, self.params.flex_params, self.params.seed).select(TASKS_SCHEMA.names)

    def batches(self) -> Iterator[pl.DataFrame]:
        """The tasks in bundle order, :data:`BATCH_ROWS` at a time (the last batch: the rest)."""
        if not self.n:
            return
        held: list[pl.DataFrame] = []
        n_held = 0
        for lo, hi in self._windows():
            w = self._window(lo, hi)
            held.append(w)
            n_held += w.height
            while n_held >= BATCH_ROWS:
                buf = pl.concat(held, rechunk=False) if len(held) > 1 else held[0]
                yield buf.slice(0, BATCH_ROWS).rechunk()
                rest = buf.slice(BATCH_ROWS)
                held, n_held = [rest], rest.height
        if n_held:
            yield pl.concat(held).rechunk()


@dataclass
class WrittenTasks:
    """What the manifest records about the tasks written."""

    n_tasks: int
    flexibility: dict[str, Any] = field(default_factory=dict)


def write_tasks(tasks: WorkloadTasks, path: Path, demand: Demand | None) -> WrittenTasks:
    """Write ``tasks`` to the tasks file ``path`` (Parquet, ``TASKS_SCHEMA``), adding each batch to ``demand``
    (the sites' sizing, when sized) and to the flexibility summary."""
    summary = flex_mod.Summary()

    def each() -> Iterator[pl.DataFrame]:
        for batch in tasks.batches():
            if demand is not None:
                demand.add(batch)
            summary.add(batch)
            yield batch

    n = write_parquet_batches(path, each(), TASKS_SCHEMA)
    if n != tasks.n:
        raise GridshiftError(f"workload_tasks changed while it was read: {tasks.n} tasks counted, {n} read")
    return WrittenTasks(n, summary.record())
