"""The Dagster sweep: policy × seed partitions materialize, store, reuse; the summary reads the stored runs."""

from __future__ import annotations

import dagster as dg
import polars as pl
import pytest

import sim_core
from dagster_project.assets import sweep
from dagster_project.definitions import build_defs
from dagster_project.partitions import policy_seed, sweep_key
from dagster_project.resources import GridshiftResource
from gridshift.home import Home
from warehouse.db import read_table

QUIET = {"loggers": {"console": {"config": {"log_level": "ERROR"}}}}


def _resources(home) -> dict:
    return {"gridshift": GridshiftResource(home=str(home))}


def _config(asset: str, **cfg) -> dict:
    return {**QUIET, "ops": {asset: {"config": cfg}}}


def test_definitions_have_the_sweep(tmp_path):
    defs = build_defs(_resources(tmp_path))
    keys = {k.to_user_string() for k in defs.resolve_asset_graph().get_all_asset_keys()}
    assert {"benchmark_run", "benchmark_summary"} <= keys
    job = defs.resolve_job_def("benchmark_sweep")
    assert job.partitions_def == policy_seed
    keys = policy_seed.get_partition_keys()
    assert len(keys) == len(sim_core.POLICIES) * 10 and str(sweep_key("defer_to_greener", 9)) in keys


def test_two_partitions_then_summary(tmp_path, bundle, run_counter):
    home = tmp_path / "home"
    # the bundle is chosen by id under <home>/bundles (a link to the session bundle)
    (Home(home).ensure().bundles_dir / bundle.name).symlink_to(bundle)
    cfg = {"bundle_id": bundle.name, "days": 1.0}
    for pol in ("local_only", "lowest_carbon"):
        res = dg.materialize([sweep.benchmark_run], partition_key=sweep_key(pol, 1), resources=_resources(home),
                             run_config=_config("benchmark_run", **cfg))
        assert res.success
        meta = res.asset_materializations_for_node("benchmark_run")[0].metadata
        assert meta["reused"].value is False and meta["policy"].value == pol and meta["seed"].value == 1
        tot = sim_core.run(bundle, pol, seed=1, days=1).totals
        assert meta["carbon_kg"].value == tot["carbon_kg"] and meta["cost_usd"].value == tot["cost_usd"]
    runs = read_table(Home(home).warehouse_path, "SELECT policy, seed FROM benchmark_runs ORDER BY ALL")
    assert runs.rows() == [("local_only", 1), ("lowest_carbon", 1)]
    n_sim = len(run_counter.calls)
    # materializing a stored partition again reuses it
    res = dg.materialize([sweep.benchmark_run], partition_key=sweep_key("local_only", 1), resources=_resources(home),
                         run_config=_config("benchmark_run", **cfg))
    assert res.asset_materializations_for_node("benchmark_run")[0].metadata["reused"].value is True
    assert len(run_counter.calls) == n_sim
    # the summary reads the stored runs (simulates nothing) and writes the files
    out = tmp_path / "out"
    res = dg.materialize([sweep.benchmark_run, sweep.benchmark_summary], selection=[sweep.benchmark_summary],
                         resources=_resources(home),
                         run_config=_config("benchmark_summary", **cfg, out_dir=str(out)))
    assert res.success and len(run_counter.calls) == n_sim
    meta = res.asset_materializations_for_node("benchmark_summary")[0].metadata
    md = meta["summary"].value
    assert "| local_only |" in md and "| lowest_carbon |" in md and "round_robin" not in md
    assert meta["runs"].value == 2 and meta["seeds"].value == [1]
    assert sorted(p.name for p in out.iterdir()) == ["compare.json", "frontier.png", "runs.parquet", "service.parquet",
                                                     "summary.md", "summary.parquet", "timeseries.png", "tradeoff.png",
                                                     "utilisation.png"]
    summary = pl.read_parquet(out / "summary.parquet")
    carbon = summary.filter((pl.col("policy") == "lowest_carbon") & (pl.col("metric") == "carbon_kg"))["mean"][0]
    assert carbon == sim_core.run(bundle, "lowest_carbon", seed=1, days=1).totals["carbon_kg"]


@pytest.mark.parametrize(("cfg", "msg"), [
    ({"bundle_id": "../escape"}, "unsafe path component"),
    ({"bundle_id": "x", "bundle_path": "/tmp"}, "at most one of bundle_id"),
    ({}, "no bundle in"),  # no config: the home's newest bundle, and this home has none
    ({"bundle_id": "not-there"}, "no bundle directory"),
])
def test_bad_bundle_config_fails(tmp_path, cfg, msg):
    res = dg.materialize([sweep.benchmark_run], partition_key=sweep_key("local_only", 0),
                         resources=_resources(tmp_path / "home"), run_config=_config("benchmark_run", **cfg),
                         raise_on_error=False)
    assert not res.success
    failures = [str(e.event_specific_data.error) for e in res.all_events if e.is_step_failure]
    assert failures and msg in failures[0]

