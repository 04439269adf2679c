"""Warehouse storage of benchmark runs: round trip, no recompute of stored runs, new keys recompute."""

from __future__ import annotations

import json
import re
from pathlib import Path

import polars as pl
import pytest

import sim_core
import sim_core.result
from gridshift.errors import DataError
from gridshift.hashing import sha256_bytes
from gridshift.home import Home
from sim_core.bench.metrics import METRIC_NAMES
from sim_core.bench.sweep import RunKey, compare, execute, options_sha256, run_options, worker_name
from warehouse.benchmark_store import WarehouseRunStore
from warehouse.db import read_table

POLS = ["local_only", "lowest_carbon"]


def _store(tmp_path) -> WarehouseRunStore:
    return WarehouseRunStore.for_home(Home.resolve(tmp_path / "home"))


def test_round_trip(tmp_path, scenario):
    store = _store(tmp_path)
    cmp = compare(scenario, POLS, [0, 1], days=1, store=store)
    keys = [RunKey(*r) for r in cmp.runs.select("bundle_id", "policy", "seed", "gridshift_version",
                                                 "options_sha256").rows()]
    found = store.lookup(keys)
    assert set(found) == set(keys)
    for row in cmp.runs.iter_rows(named=True):
        k = RunKey(row["bundle_id"], row["policy"], row["seed"], row["gridshift_version"], row["options_sha256"])
        assert found[k] == {m: row[m] for m in METRIC_NAMES}  # exact: DOUBLE round trip
    for pol in POLS:  # the series of the first seed comes back identical, DCs in bundle order
        s = store.series(RunKey(scenario.bundle_id, pol, 0, cmp.gridshift_version, cmp.options_sha256))
        assert s.equals(cmp.series[pol])
        assert s["location"].unique(maintain_order=True).to_list() == scenario.locations
    runs = read_table(store.db_path, "SELECT * FROM benchmark_runs ORDER BY policy, seed")
    drained = (96 + cmp.runs.sort("policy", "seed")["drain_steps"]).cast(pl.Int64).to_list()  # window + drain
    assert runs.height == 4 and runs["n_steps"].to_list() == drained and runs["n_dc"].to_list() == [3] * 4
    opts = json.loads(runs["options_json"][0])
    assert opts == cmp.options and opts["steps"] == 96
    assert runs["options_sha256"][0] == options_sha256(opts)
    assert runs["started_at_utc"].dtype == pl.Datetime("us", "UTC")
    assert (runs["finished_at_utc"] >= runs["started_at_utc"]).all() and (runs["wall_time_s"] >= 0).all()
    n = read_table(store.db_path, "SELECT count(*) n FROM benchmark_metrics")["n"][0]
    assert n == 4 * len(METRIC_NAMES)
    # the index names each run's Parquet object under <home>/results, and its sha256
    for row in runs.iter_rows(named=True):
        url = row["result_url"]
        assert url.startswith(str(tmp_path / "home" / "results" / f"bundle={scenario.bundle_id}"))
        assert url.endswith(f"/options={row['options_sha256']}/{row['policy']}.seed-{row['seed']}.parquet")
        data = Path(url).read_bytes()
        assert sha256_bytes(data) == row["result_sha256"] and len(data) == row["result_size_bytes"]
        assert row["worker"] == worker_name()
        obj = pl.read_parquet(url)  # one labelled row; the series (steps x DCs) as a list of structs
        assert obj.select("bundle_id", "policy", "seed", "forecast").row(0) == (
            scenario.bundle_id, row["policy"], row["seed"], cmp.options["forecast"])
        drained = int(cmp.runs.filter((pl.col("policy") == row["policy"]) & (pl.col("seed") == row["seed"]))
                      ["drain_steps"][0])
        assert obj.height == 1 and obj["series"].list.len()[0] == (96 + drained) * 3  # window + drain, per DC


def test_second_compare_simulates_nothing(tmp_path, scenario, run_counter):
    store = _store(tmp_path)
    first = compare(scenario, POLS, [0, 1], days=1, store=store)
    assert len(run_counter.calls) == 4
    second = compare(scenario, POLS, [0, 1], days=1, store=store)
    assert len(run_counter.calls) == 4  # zero new simulations
    assert second.computed == [] and len(second.reused) == 4
    assert second.runs.equals(first.runs) and second.summary.equals(first.summary, null_equal=True)
    assert set(second.series) == set(POLS) and all(second.series[p].equals(first.series[p]) for p in POLS)
    # a larger sweep simulates only what is new
    third = compare(scenario, POLS, [0, 1, 2], days=1, store=store)
    assert run_counter.calls[4:] == [("local_only", 2), ("lowest_carbon", 2)]
    assert len(third.reused) == 4
    # recompute=True simulates again
    compare(scenario, ["local_only"], [0], days=1, store=store, recompute=True)
    assert len(run_counter.calls) == 7


def test_new_version_or_other_options_recompute(tmp_path, scenario, run_counter, monkeypatch):
    store = _store(tmp_path)
    compare(scenario, POLS, [0], days=1, store=store)
    assert len(run_counter.calls) == 2
    compare(scenario, POLS, [0], days=1, store=store, sla_multiplier=2.0)  # other options
    assert len(run_counter.calls) == 4
    compare(scenario, POLS, [0], start=4, steps=96, store=store)  # other window
    assert len(run_counter.calls) == 6
    compare(scenario, POLS, [0], steps=96, store=store)  # == days=1: stored
    assert len(run_counter.calls) == 6
    old = sim_core.result.gridshift_version()
    monkeypatch.setattr(sim_core.result, "gridshift_version", lambda: "99.0.0")
    new = compare(scenario, POLS, [0], days=1, store=store)  # new gridshift version
    assert len(run_counter.calls) == 8 and new.runs["gridshift_version"].to_list() == ["99.0.0"] * 2
    versions = read_table(store.db_path, "SELECT DISTINCT gridshift_version v FROM benchmark_runs ORDER BY v")
    assert versions["v"].to_list() == sorted([old, "99.0.0"])


def test_skip_mode_summarizes_only_stored_runs(tmp_path, scenario, run_counter):
    store = _store(tmp_path)
    compare(scenario, ["lowest_carbon"], [1], days=1, store=store)
    cmp = compare(scenario, POLS, [0, 1], days=1, store=store, missing="skip")
    assert len(run_counter.calls) == 1
    assert cmp.policies == ["lowest_carbon"] and cmp.seeds == [1] and cmp.runs.height == 1
    assert set(cmp.series) == {"lowest_carbon"}


def test_invalid_record_is_refused_and_nothing_written(tmp_path, scenario):
    store = _store(tmp_path)
    opts = run_options(scenario, days=1)
    key = RunKey(scenario.bundle_id, "local_only", 0, sim_core.result.gridshift_version(), options_sha256(opts))
    rec, _ = execute(scenario, key, opts)
    rec.series = rec.series.with_columns(pl.lit(-1.0).alias("busy_cores"))  # impossible value
    with pytest.raises(DataError, match="benchmark_series"):
        store.save(rec)
    assert read_table(store.db_path, "SELECT count(*) n FROM benchmark_runs")["n"][0] == 0
    assert store.lookup([key]) == {}
    assert not (tmp_path / "home" / "results").exists()  # no object published either


def test_missing_or_changed_object_is_a_clear_error(tmp_path, scenario, bundle):
    from typer.testing import CliRunner

    from gridshift.objectstore import ObjectNotFoundError
    from gridshift_cli import app

    store = _store(tmp_path)
    compare(scenario, ["local_only"], [0], days=1, store=store)
    url = read_table(store.db_path, "SELECT result_url FROM benchmark_runs")["result_url"][0]
    data = Path(url).read_bytes()
    Path(url).write_bytes(data[:-16] + bytes(16))  # changed in place: the index's sha256 no longer matches
    with pytest.raises(DataError, match="does not match the sha256 recorded in the index"):
        compare(scenario, ["local_only"], [0], days=1, store=store)
    Path(url).unlink()
    with pytest.raises(ObjectNotFoundError, match=re.escape(f"no object at {url}")):
        compare(scenario, ["local_only"], [0], days=1, store=store)
    res = CliRunner().invoke(app, ["compare", str(bundle), "--policies", "local_only", "--seeds", "0", "--days", "1",
                                   "--home", str(tmp_path / "home")])
    assert res.exit_code == 1 and "no object at" in " ".join(res.output.split())


def test_pre_parquet_warehouse_index_is_dropped_once(tmp_path):
    import duckdb

    from warehouse.schemas import TABLES

    db = tmp_path / "w.duckdb"
    con = duckdb.connect(str(db))
    con.execute("CREATE TABLE benchmark_runs (bundle_id VARCHAR, options_json VARCHAR)")
    con.execute("INSERT INTO benchmark_runs VALUES ('x', '{}')")
    con.execute("CREATE TABLE benchmark_series (bundle_id VARCHAR)")
    con.close()
    WarehouseRunStore(db, str(tmp_path / "results"))
    tables = read_table(db, "SELECT table_name FROM information_schema.tables")["table_name"].to_list()
    assert "benchmark_series" not in tables
    cols = read_table(db, "SELECT column_name FROM information_schema.columns WHERE table_name = 'benchmark_runs' "
                          "ORDER BY ordinal_position")["column_name"].to_list()
    assert cols == TABLES["benchmark_runs"].columns and "result_sha256" in cols
    assert read_table(db, "SELECT count(*) n FROM benchmark_runs")["n"][0] == 0


def test_index_is_rebuilt_from_the_objects(tmp_path, scenario, run_counter):
    """A warehouse that lost its index (or a format-1 one, with NOT NULL timings) finds the runs under its URL:
    nothing is simulated again, and the rebuilt rows hold the objects' URLs and hashes, timings null."""
    store = _store(tmp_path)
    first = compare(scenario, POLS, [0, 1], days=1, store=store)
    before = read_table(store.db_path, "SELECT * FROM benchmark_runs ORDER BY policy, seed")
    fresh = WarehouseRunStore(tmp_path / "other.duckdb", store.results.url)
    assert fresh.rebuild() == 4 and fresh.rebuild() == 0
    after = read_table(fresh.db_path, "SELECT * FROM benchmark_runs ORDER BY policy, seed")
    same = ["bundle_id", "policy", "seed", "options_json", "result_url", "result_sha256", "result_size_bytes"]
    assert after.select(same).equals(before.select(same))
    assert after["started_at_utc"].is_null().all() and after["worker"].is_null().all()
    # a format-1 index (timings NOT NULL, objects of another layout) is dropped once, then rebuilt on lookup
    import duckdb

    db = tmp_path / "old.duckdb"
    with duckdb.connect(str(db)) as con:
        con.execute("CREATE TABLE benchmark_runs (" + ", ".join(
            f'"{c}" VARCHAR' + (" NOT NULL" if c == "started_at_utc" else "")
            for c in before.columns) + ")")
        from warehouse.ddl import create_table_sql
        from warehouse.schemas import TABLES

        con.execute(create_table_sql(TABLES["benchmark_metrics"]))
    old = WarehouseRunStore(db, store.results.url)
    again = compare(scenario, POLS, [0, 1], days=1, store=old)
    assert len(run_counter.calls) == 4 and again.computed == [] and again.runs.equals(first.runs)
    assert read_table(db, "SELECT count(*) n FROM benchmark_runs")["n"][0] == 4
