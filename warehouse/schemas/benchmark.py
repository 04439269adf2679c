"""Benchmark tables: the index of the simulation runs (one row per run: where its result object is,
its sha256, when and where it ran) and its metrics (long format, for SQL over sweeps).

The run's result itself — metrics and per-step, per-DC series — is a Parquet object under the results
URL (``gridshift.results``); the warehouse is its index, never the only copy.

A run is keyed by (bundle_id, policy, seed, gridshift_version, options_sha256): the bundle id is a
content hash, and ``options_sha256`` hashes the canonical JSON of every run option including the
simulated window (``sim_core.bench.sweep.run_options``). The same key ⇒ the same results, so a stored
run is never simulated again (docs/benchmarks.md). The tables list fields of the registry
(``gridshift.fields``); their Pandera models are generated from it.
"""

from __future__ import annotations

from gridshift.fields import table
from gridshift.results import RUN_KEY as RUN_KEY_FIELDS
from gridshift.results import SERIES
from warehouse.schemas.models import dataframe_model

RUN_KEY = list(RUN_KEY_FIELDS)

BENCHMARK_RUNS = table(
    "benchmark_runs", "One row per benchmark run (a policy and a seed on a bundle, with fixed options).",
    [*RUN_KEY, "options_json", "n_steps", "n_dc", "started_at_utc", "finished_at_utc", "wall_time_s", "result_url",
     "result_sha256", "result_size_bytes", "worker"],
    RUN_KEY)

BENCHMARK_METRICS = table(
    "benchmark_metrics",
    "Metrics of a run, long format: one row per (run, metric); the unit is in the metric name (``cost_usd``, "
    "``carbon_kg``, ``total_kwh``, ``mean_cpu_util_frac``...; declared in gridshift.metrics).",
    [*RUN_KEY, "metric", "value"],
    [*RUN_KEY, "metric"])

#: the series columns are declared with the run object's format (gridshift.results)
BENCHMARK_SERIES = SERIES

BenchmarkRuns = dataframe_model(BENCHMARK_RUNS, "BenchmarkRuns")
BenchmarkMetrics = dataframe_model(BENCHMARK_METRICS, "BenchmarkMetrics")
BenchmarkSeries = dataframe_model(BENCHMARK_SERIES, "BenchmarkSeries")
