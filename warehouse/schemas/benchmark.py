"""Benchmark tables: the index of the simulation runs (one row per run: where its result object is,
its sha256, when and where it ran) and its metrics (long format, for SQL over sweeps).

The run's result itself — metrics and per-step, per-DC series — is a Parquet object under the results
URL (``gridshift.results``); the warehouse is its index, never the only copy.

A run is keyed by (bundle_id, policy, seed, gridshift_version, options_sha256): the bundle id is a
content hash, and ``options_sha256`` hashes the canonical JSON of every run option including the
simulated window (``sim_core.bench.sweep.run_options``). The same key ⇒ the same results, so a stored
run is never simulated again (docs/benchmarks.md).
"""

from __future__ import annotations

import pandera.polars as pa

from gridshift import columns as C
from gridshift.columns import UtcDatetime

RUN_KEY = ["bundle_id", "policy", "seed", "gridshift_version", "options_sha256"]


class BenchmarkRuns(pa.DataFrameModel):
    """One row per benchmark run (a policy and a seed on a bundle, with fixed options)."""

    bundle_id: str = C.run_name("content-addressed bundle id")
    policy: str = C.run_name("built-in policy name")
    seed: int = pa.Field(ge=0, description="run seed")
    gridshift_version: str = pa.Field(description="gridshift version that produced the run")
    options_sha256: str = C.sha256("sha256 of options_json")
    options_json: str = pa.Field(description="canonical JSON of every run option, incl. start_step and steps")
    n_steps: int = pa.Field(ge=1, metadata={"unit": "15-min steps"})
    n_dc: int = pa.Field(ge=1, metadata={"unit": "datacenters"})
    started_at_utc: UtcDatetime = C.utc("wall-clock start of the simulation, UTC")
    finished_at_utc: UtcDatetime = C.utc("wall-clock end of the simulation, UTC")
    wall_time_s: float = pa.Field(ge=0, metadata={"unit": "s"}, description="simulation wall time")
    result_url: str = pa.Field(description="URL of the run's Parquet object (a local path or s3://...)")
    result_sha256: str = C.sha256("sha256 of the run's Parquet object")
    result_size_bytes: int = pa.Field(ge=1, metadata={"unit": "bytes"})
    worker: str = pa.Field(description="host:pid of the process that simulated the run (in-process or a Dask worker)")

    class Config:
        strict = True
        unique = RUN_KEY


class BenchmarkMetrics(pa.DataFrameModel):
    """Metrics of a run, long format: one row per (run, metric); the unit is in the metric name
    (``cost_usd``, ``carbon_kg``, ``total_kwh``, ``mean_cpu_util_frac``...; sim_core.bench.metrics.METRICS)."""

    bundle_id: str = C.run_name("content-addressed bundle id")
    policy: str = C.run_name("policy name")
    seed: int = pa.Field(ge=0)
    gridshift_version: str
    options_sha256: str = C.sha256("sha256 of options_json")
    metric: str = pa.Field(str_matches=r"^[a-z][a-z0-9_]*$", description="metric name with its unit")
    value: float = pa.Field(description="metric value (NaN where undefined, e.g. PUE with no IT energy)")

    class Config:
        strict = True
        unique = [*RUN_KEY, "metric"]


class BenchmarkSeries(pa.DataFrameModel):
    """Per-step, per-DC series of a run, validated before its result object is written (not a warehouse
    table: the series lives in the run's Parquet object, ``gridshift.results``)."""

    location: str = C.location()
    dc: int = pa.Field(ge=0, description="index of the DC in the bundle (plot order)")
    step: int = pa.Field(ge=0, description="step index in the bundle")
    ts_utc: UtcDatetime = C.utc("start of the step, UTC")
    carbon_g_per_kwh: float = pa.Field(metadata={"unit": "gCO2eq/kWh"})
    price_usd_per_mwh: float = pa.Field(metadata={"unit": "USD/MWh"})
    total_kwh: float = pa.Field(ge=0, metadata={"unit": "kWh"})
    assigned: int = pa.Field(ge=0, metadata={"unit": "tasks"}, description="tasks assigned to the DC in the step")
    started: int = pa.Field(ge=0, metadata={"unit": "tasks"}, description="tasks started in the DC in the step")
    busy_cores: float = pa.Field(ge=0, metadata={"unit": "cores"})
    cpu_util: float = pa.Field(ge=0, metadata={"unit": "fraction"})
    gpu_util: float = pa.Field(ge=0, metadata={"unit": "fraction"})
    mem_util: float = pa.Field(ge=0, metadata={"unit": "fraction"})

    class Config:
        strict = True
        unique = ["location", "step"]
