"""Benchmark runs in the warehouse: look up stored runs by key, save new ones, list a sweep.

Tables (``warehouse.schemas.benchmark``): ``benchmark_runs`` (one row per run), ``benchmark_metrics``
(run key + metric name + value) and ``benchmark_series`` (per step and DC, for the time-series
figure). A run's key is ``(bundle_id, policy, seed, gridshift_version, options_sha256)``.

``WarehouseRunStore`` is the store ``sim_core.bench.compare(store=...)`` expects (``lookup``,
``series``, ``save``). It does not import sim_core: the data flows from the simulator into the
warehouse through the CLI / Dagster glue, and a record is any object with the attributes of
``sim_core.bench.sweep.RunRecord``. Every save validates against the Pandera models first and writes
the run, its metrics and its series in one transaction (flock-serialized across processes).
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import polars as pl

from gridshift.home import Home
from warehouse.db import query, read_connection
from warehouse.load import validate, write
from warehouse.schemas.benchmark import RUN_KEY

KEY_SCHEMA = {"bundle_id": pl.String, "policy": pl.String, "seed": pl.Int64, "gridshift_version": pl.String,
              "options_sha256": pl.String}


def _keys_frame(keys: Sequence[tuple]) -> pl.DataFrame:
    return pl.DataFrame([tuple(k) for k in keys], schema=KEY_SCHEMA, orient="row")


def _where(key: tuple) -> tuple[str, list]:
    return " AND ".join(f'"{c}" = ?' for c in RUN_KEY), [key[0], key[1], int(key[2]), key[3], key[4]]


class WarehouseRunStore:
    """Benchmark runs stored in the DuckDB warehouse at ``db_path``."""

    def __init__(self, db_path: str | Path):
        self.db_path = Path(db_path)

    @classmethod
    def for_home(cls, home: Home | str | Path | None = None) -> WarehouseRunStore:
        h = home if isinstance(home, Home) else Home.resolve(home)
        return cls(h.ensure().warehouse_path)

    # ------------------------------------------------------------------ reads
    def lookup(self, keys: Sequence[tuple]) -> dict[tuple, dict[str, float]]:
        """Metrics of every stored run among ``keys`` ({key tuple: {metric: value}}); absent keys are left out."""
        if not keys:
            return {}
        wanted = _keys_frame(keys)
        with read_connection(self.db_path) as con:
            con.register("_wanted", wanted.to_arrow())
            try:
                using = f"USING ({', '.join(RUN_KEY)})"
                df = query(con, f"SELECT m.* FROM benchmark_metrics m JOIN benchmark_runs r {using} "
                                f"JOIN _wanted w {using} ORDER BY ALL")
            finally:
                con.unregister("_wanted")
        out: dict[tuple, dict[str, float]] = {}
        for row in df.iter_rows(named=True):
            k = (row["bundle_id"], row["policy"], int(row["seed"]), row["gridshift_version"], row["options_sha256"])
            out.setdefault(k, {})[row["metric"]] = float(row["value"])
        return out

    def series(self, key: tuple) -> pl.DataFrame | None:
        """The stored per-step, per-DC series of one run (DC order of the bundle), or None."""
        where, params = _where(key)
        with read_connection(self.db_path) as con:
            df = query(con, f"SELECT * EXCLUDE ({', '.join(RUN_KEY)}) FROM benchmark_series WHERE {where} "
                            "ORDER BY dc, step", params)
        if df.height == 0:
            return None
        return df.with_columns(pl.col("ts_utc").cast(pl.Datetime("us", "UTC")))

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

    def stored_runs(self, bundle_id: str, options_sha256: str, gridshift_version: str) -> list[tuple[tuple, dict]]:
        """(key, metrics) of every stored run of one sweep configuration, ordered by policy and seed."""
        runs = self.runs(bundle_id, options_sha256=options_sha256, gridshift_version=gridshift_version)
        keys = [tuple(r[c] for c in RUN_KEY) for r in runs.iter_rows(named=True)]
        found = self.lookup(keys)
        return [(k, found[k]) for k in keys if k in found]

    # ------------------------------------------------------------------ writes
    def frames(self, record) -> dict[str, pl.DataFrame]:
        """The validated rows of one run record for the three tables."""
        k = tuple(record.key)
        key_cols = dict(zip(RUN_KEY, (k[0], k[1], int(k[2]), k[3], k[4]), strict=True))
        runs = pl.DataFrame([{
            **key_cols, "options_json": record.options_json, "n_steps": int(record.n_steps),
            "n_dc": int(record.n_dc), "started_at_utc": record.started_utc, "finished_at_utc": record.finished_utc,
            "wall_time_s": float(record.wall_time_s),
        }], schema_overrides={**KEY_SCHEMA, "started_at_utc": pl.Datetime("us", "UTC"),
                              "finished_at_utc": pl.Datetime("us", "UTC")})
        names = list(record.metrics)
        metrics = pl.DataFrame({"metric": names, "value": [float(record.metrics[m]) for m in names]},
                               schema={"metric": pl.String, "value": pl.Float64})
        metrics = metrics.select(*[pl.lit(v, dtype=KEY_SCHEMA[c]).alias(c) for c, v in key_cols.items()],
                                 "metric", "value")
        series = record.series.select(*[pl.lit(v, dtype=KEY_SCHEMA[c]).alias(c) for c, v in key_cols.items()],
                                      pl.all())
        return {
            "benchmark_runs": validate("benchmark_runs", runs, row_base=0),
            "benchmark_metrics": validate("benchmark_metrics", metrics, row_base=0),
            "benchmark_series": validate("benchmark_series", series, row_base=0),
        }

    def save(self, record) -> None:
        """Validate, then upsert the run, its metrics and its series in one transaction."""
        write(self.db_path, self.frames(record))
