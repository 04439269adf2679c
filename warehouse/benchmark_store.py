"""Benchmark runs: Parquet objects under a results URL, indexed in the warehouse.

Each run's result (metrics and per-step, per-DC series) is one Parquet object under the results URL
(a local folder or ``s3://bucket/prefix``; ``gridshift.results``). The warehouse keeps the index:
``benchmark_runs`` (run key -> object URL, sha256, size, timings, worker) and ``benchmark_metrics``
(run key + metric + value, for SQL over sweeps) — never the only copy. Reads go to the object the
index names and check its sha256, so a changed or truncated object is an error, not a wrong figure.

``WarehouseRunStore`` is the store ``sim_core.bench.compare(store=...)`` expects (``lookup``,
``series``, ``save``); ``index(record, ref)`` records a run whose object another process (a Dask
worker) already published. It does not import sim_core: a record is any object with the attributes of
``sim_core.bench.sweep.RunRecord``. Every index write validates against the Pandera models first and
writes the run and its metrics in one transaction (flock-serialized across processes).

A warehouse written before results moved to Parquet (a ``benchmark_runs`` without ``result_url``, and
a ``benchmark_series`` table) has its benchmark index dropped once: those runs are simulated again
when next asked for.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import polars as pl

from gridshift.errors import DataError
from gridshift.home import Home
from gridshift.results import ResultStore, RunRef, StoredRun
from warehouse.db import exclusive, open_read, open_write, query, read_connection
from warehouse.load import drop_stale_layout, validate, write
from warehouse.schemas.benchmark import RUN_KEY

KEY_SCHEMA = {"bundle_id": pl.String, "policy": pl.String, "seed": pl.Int64, "gridshift_version": pl.String,
              "options_sha256": pl.String}


def _keys_frame(keys: Sequence[tuple]) -> pl.DataFrame:
    return pl.DataFrame([tuple(k) for k in keys], schema=KEY_SCHEMA, orient="row")


def _drop_pre_parquet_index(db_path: Path) -> None:
    """Drop the benchmark index of a warehouse from before the results moved to Parquet (see module doc)."""
    if not db_path.exists():
        return
    with exclusive(db_path), open_read(db_path) as con:
        tables = set(query(con, "SELECT table_name FROM information_schema.tables")["table_name"].to_list())
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
        run = self.results.get(ref.url, sha256=ref.sha256)
        k = tuple(key)
        if run.key != (k[0], k[1], int(k[2]), k[3], k[4]):
            raise DataError(f"result object holds run {run.key}, the index expects {k}", file=ref.url)
        return run

    def lookup(self, keys: Sequence[tuple]) -> dict[tuple, dict[str, float]]:
        """Metrics of every indexed run among ``keys``, read from their objects ({key: {metric: value}}).

        An indexed object that is missing raises ``gridshift.objectstore.ObjectNotFoundError`` (naming its
        URL): the index and the store disagree, and silently simulating again would hide it."""
        refs = self.refs(keys)
        by_tuple = {tuple(k): k for k in keys}
        return {by_tuple[t]: self.read(t, ref).metrics for t, ref in refs.items()}

    def series(self, key: tuple) -> pl.DataFrame | None:
        """The per-step, per-DC series of one indexed run (DC order of the bundle), or None."""
        ref = self.refs([key]).get(tuple(key))
        return None if ref is None else self.read(tuple(key), ref).series

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
        """The validated index rows of one run record whose object is at ``ref``."""
        k = tuple(record.key)
        key_cols = dict(zip(RUN_KEY, (k[0], k[1], int(k[2]), k[3], k[4]), strict=True))
        runs = pl.DataFrame([{
            **key_cols, "options_json": record.options_json, "n_steps": int(record.n_steps),
            "n_dc": int(record.n_dc), "started_at_utc": record.started_utc, "finished_at_utc": record.finished_utc,
            "wall_time_s": float(record.wall_time_s), "result_url": ref.url, "result_sha256": ref.sha256,
            "result_size_bytes": int(ref.size_bytes), "worker": str(record.worker),
        }], schema_overrides={**KEY_SCHEMA, "started_at_utc": pl.Datetime("us", "UTC"),
                              "finished_at_utc": pl.Datetime("us", "UTC")})
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
