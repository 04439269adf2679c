"""Benchmark runs: Parquet objects under a results URL, indexed in the warehouse.

Each run's result (metrics and per-step, per-DC series) is one Parquet object under the results URL
(a local folder or ``s3://bucket/prefix``; ``gridshift.results``). The warehouse keeps the index:
``benchmark_runs`` (run key -> object URL, sha256, size, timings, worker) and ``benchmark_metrics``
(run key + metric + value, for SQL over sweeps) — never the only copy. Reads go to the object the
index names and check its sha256, so a changed or truncated object is an error, not a wrong figure.

The index is rebuilt from the objects: a run the index misses is looked up at its path under the results
URL (published by another home, another machine, a Dask worker) and indexed from its object before anything
is simulated (its timings and worker are then null: the object holds none); :meth:`WarehouseRunStore.rebuild`
indexes every object under the URL at once. A run the index holds at another URL (an earlier sweep into a
local folder, now one into a bucket) is copied, byte for byte, to the current URL when absent there, so the
URL holds every run a sweep reports.

``WarehouseRunStore`` is the store ``sim_core.bench.compare(store=...)`` expects (``lookup``,
``series``, ``save``); ``index(record, ref)`` records a run whose object another process (a Dask
worker) already published. It does not import sim_core: a record is any object with the attributes of
``sim_core.bench.sweep.RunRecord``. Every index write validates against the Pandera models first and
writes the run and its metrics in one transaction (flock-serialized across processes).

A warehouse written before the results format 2 (a ``benchmark_runs`` without ``result_url``, a
``benchmark_series`` table, or timings declared NOT NULL) has its benchmark index dropped once: it is
rebuilt from the objects of the current format, and runs with none are simulated again when next asked for.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import polars as pl

from gridshift import objectstore
from gridshift.errors import DataError
from gridshift.home import Home
from gridshift.results import ResultStore, RunRef, StoredRun, decode_run, read_object, run_key
from warehouse.db import exclusive, open_read, open_write, query, read_connection
from warehouse.ddl import create_table_sql
from warehouse.load import drop_stale_layout, validate, write
from warehouse.schemas import TABLES
from warehouse.schemas.benchmark import RUN_KEY

KEY_SCHEMA = {"bundle_id": pl.String, "policy": pl.String, "seed": pl.Int64, "gridshift_version": pl.String,
              "options_sha256": pl.String}


def _keys_frame(keys: Sequence[tuple]) -> pl.DataFrame:
    return pl.DataFrame([tuple(k) for k in keys], schema=KEY_SCHEMA, orient="row")


def _drop_pre_parquet_index(db_path: Path) -> None:
    """Drop the benchmark index of a warehouse from before the results format 2 (see module doc)."""
    if not db_path.exists():
        return
    with exclusive(db_path), open_read(db_path) as con:
        tables = set(query(con, "SELECT table_name FROM information_schema.tables")["table_name"].to_list())
        timed = query(con, "SELECT is_nullable FROM information_schema.columns WHERE table_name = 'benchmark_runs' "
                           "AND column_name = 'started_at_utc'")["is_nullable"].to_list()
    if timed == ["NO"]:  # format 1's index: its objects are another layout; rebuilt from the current ones
        with exclusive(db_path), open_write(db_path) as con:
            for name in ("benchmark_runs", "benchmark_metrics"):
                con.execute(f"DROP TABLE IF EXISTS {name}")
                con.execute(create_table_sql(TABLES[name]))
    if drop_stale_layout(db_path, "benchmark_runs") or "benchmark_series" in tables:
        with exclusive(db_path), open_write(db_path) as con:
            con.execute("DROP TABLE IF EXISTS benchmark_series")
            con.execute("DELETE FROM benchmark_metrics")
            con.execute("DELETE FROM benchmark_runs")


class WarehouseRunStore:
    """Benchmark runs: objects under ``results_url`` (default: ``results/`` beside the warehouse file),
    indexed in the DuckDB warehouse at ``db_path``."""

    def __init__(self, db_path: str | Path, results_url: str | None = None):
        self.db_path = Path(db_path)
        self.results = ResultStore(results_url or str(self.db_path.parent / "results"))
        _drop_pre_parquet_index(self.db_path)

    @classmethod
    def for_home(cls, home: Home | str | Path | None = None, results_url: str | None = None) -> WarehouseRunStore:
        h = home if isinstance(home, Home) else Home.resolve(home)
        h.ensure()
        return cls(h.warehouse_path, results_url or str(h.results_dir))

    # ------------------------------------------------------------------ reads
    def refs(self, keys: Sequence[tuple]) -> dict[tuple, RunRef]:
        """The indexed object (URL, sha256, size) of every run among ``keys``; absent keys are left out."""
        if not keys:
            return {}
        wanted = _keys_frame(keys)
        with read_connection(self.db_path) as con:
            con.register("_wanted", wanted.to_arrow())
            try:
                df = query(con, f"SELECT r.* FROM benchmark_runs r JOIN _wanted w USING ({', '.join(RUN_KEY)}) "
                                "ORDER BY ALL")
            finally:
                con.unregister("_wanted")
        return {(r["bundle_id"], r["policy"], int(r["seed"]), r["gridshift_version"], r["options_sha256"]):
                RunRef(r["result_url"], r["result_sha256"], int(r["result_size_bytes"]))
                for r in df.iter_rows(named=True)}

    def read(self, key: tuple, ref: RunRef) -> StoredRun:
        """The run object the index names, checked against its sha256 and key."""
        return self._check(key, self.results.get(ref.url, sha256=ref.sha256))

    @staticmethod
    def _check(key: tuple, run: StoredRun) -> StoredRun:
        k = tuple(key)
        if run.key != (k[0], k[1], int(k[2]), k[3], k[4]):
            raise DataError(f"result object holds run {run.key}, the index expects {k}", file=run.ref.url)
        return run

    def lookup(self, keys: Sequence[tuple]) -> dict[tuple, dict[str, float]]:
        """Metrics of every stored run among ``keys`` ({key: {metric: value}}), read from their objects.

        A key the index misses is looked up under the results URL and, when its object is there, indexed
        from it. An indexed run whose object is elsewhere is copied to the results URL when absent there.
        An indexed object that is missing raises ``gridshift.objectstore.ObjectNotFoundError`` (naming its
        URL): the index and the store disagree, and silently simulating again would hide it."""
        refs = self.refs(keys)
        out: dict[tuple, dict[str, float]] = {}
        found: list[tuple[StoredRun, RunRef]] = []
        for k in keys:
            t = tuple(k)
            ref = refs.get(t)
            if ref is None:
                run = self.results.find(t)
                if run is not None:
                    found.append((run, run.ref))
                    out[k] = run.metrics
                continue
            data = read_object(ref.url)
            out[k] = self._check(t, decode_run(data, ref.url, sha256=ref.sha256)).metrics
            here = self.results.url_for(t)
            if ref.url != here and not objectstore.exists(here):
                self.results.put_bytes(t, data)
        self.index(found)
        return out

    def series(self, key: tuple) -> pl.DataFrame | None:
        """The per-step, per-DC series of one stored run (DC order of the bundle), or None."""
        ref = self.refs([key]).get(tuple(key))
        if ref is None:
            run = self.results.find(key)
            return None if run is None else run.series
        return self.read(tuple(key), ref).series

    def rebuild(self) -> int:
        """Index every run object under the results URL that the index lacks; returns how many were added."""
        keys = self.results.keys()
        have = self.refs(keys)
        runs = [self.results.find(k) for k in keys if k not in have]
        self.index([(r, r.ref) for r in runs if r is not None])
        return sum(r is not None for r in runs)

    def runs(self, bundle_id: str, *, options_sha256: str | None = None,
             gridshift_version: str | None = None) -> pl.DataFrame:
        """``benchmark_runs`` rows of a bundle (optionally one options hash / version), by policy and seed."""
        sql = "SELECT * FROM benchmark_runs WHERE bundle_id = ?"
        params: list[Any] = [bundle_id]
        if options_sha256 is not None:
            sql += " AND options_sha256 = ?"
            params.append(options_sha256)
        if gridshift_version is not None:
            sql += " AND gridshift_version = ?"
            params.append(gridshift_version)
        with read_connection(self.db_path) as con:
            return query(con, sql + " ORDER BY policy, seed, gridshift_version, options_sha256", params)

    # ------------------------------------------------------------------ writes
    def frames(self, record, ref: RunRef) -> dict[str, pl.DataFrame]:
        """The validated index rows of one run record whose object is at ``ref`` (a record read back from its
        object, a ``StoredRun``, has no timings nor worker: those are null)."""
        k = tuple(record.key)
        key_cols = run_key(k)._asdict()
        wall = getattr(record, "wall_time_s", None)
        runs = pl.DataFrame([{
            **key_cols, "options_json": record.options_json, "n_steps": int(record.n_steps),
            "n_dc": int(record.n_dc), "started_at_utc": getattr(record, "started_utc", None),
            "finished_at_utc": getattr(record, "finished_utc", None),
            "wall_time_s": None if wall is None else float(wall), "result_url": ref.url, "result_sha256": ref.sha256,
            "result_size_bytes": int(ref.size_bytes), "worker": getattr(record, "worker", None),
        }], schema_overrides={**KEY_SCHEMA, "started_at_utc": pl.Datetime("us", "UTC"),
                              "finished_at_utc": pl.Datetime("us", "UTC"), "wall_time_s": pl.Float64,
                              "worker": pl.String})
        names = list(record.metrics)
        metrics = pl.DataFrame({"metric": names, "value": [float(record.metrics[m]) for m in names]},
                               schema={"metric": pl.String, "value": pl.Float64})
        metrics = metrics.select(*[pl.lit(v, dtype=KEY_SCHEMA[c]).alias(c) for c, v in key_cols.items()],
                                 "metric", "value")
        return {
            "benchmark_runs": validate("benchmark_runs", runs, row_base=0),
            "benchmark_metrics": validate("benchmark_metrics", metrics, row_base=0),
        }

    def index(self, records_refs: Sequence[tuple[Any, RunRef]]) -> None:
        """Record runs whose objects are already published (validated, one transaction for all)."""
        frames = [self.frames(rec, ref) for rec, ref in records_refs]
        if frames:
            write(self.db_path, {t: pl.concat([f[t] for f in frames]) for t in frames[0]})

    def save(self, record) -> RunRef:
        """Validate the index rows, publish the run's object, then index it (run + metrics, one transaction)."""
        validate("benchmark_series", record.series, row_base=0)
        self.frames(record, RunRef("-", "0" * 64, 1))  # the index rows validate before anything is written
        ref = self.results.put(record)
        self.index([(record, ref)])
        return ref
