"""Distributed sweeps on a Dask cluster of 2 worker processes started here, results on S3 (a loopback moto
server started here) or a folder: the same objects, byte for byte, as the in-process sweep."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gridshift.objectstore import ObjectNotFoundError, read_bytes
from gridshift.results import run_relpath
from gridshift_cli import app
from sim_core.bench.sweep import compare, worker_name
from tests.cli_text import plain
from tests.loopback import bucket_keys, loopback_only, make_bucket, s3_server
from warehouse.benchmark_store import WarehouseRunStore
from warehouse.db import read_table

pytestmark = pytest.mark.distributed

POLS = ["local_only", "lowest_carbon", "defer_to_greener"]
SEEDS = [0, 1]


@pytest.fixture(scope="module")
def s3():
    """The loopback S3 server (its environment is set before the cluster starts, so workers inherit it)."""
    with s3_server() as endpoint:
        make_bucket(endpoint, "sweeps")
        yield endpoint


@pytest.fixture(scope="module")
def client(s3):
    """A Dask cluster on 127.0.0.1: a scheduler and 2 single-threaded worker processes."""
    from distributed import Client

    from sim_core.bench.remote import local_cluster

    with local_cluster(2) as cluster, Client(cluster) as c, loopback_only():
        c.wait_for_workers(2)
        yield c


@pytest.fixture(scope="module")
def in_process(bundle, tmp_path_factory):
    """The reference: the same sweep in this process, objects in a local folder."""
    root = tmp_path_factory.mktemp("inproc")
    store = WarehouseRunStore(root / "w.duckdb", str(root / "results"))
    cmp = compare(bundle, POLS, SEEDS, days=1, store=store)
    return cmp, store


def _index(store: WarehouseRunStore):
    return read_table(store.db_path, "SELECT * FROM benchmark_runs ORDER BY policy, seed")


def _objects(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*.parquet"))}


def test_distributed_sweep_equals_in_process(bundle, client, in_process, tmp_path):
    ref, ref_store = in_process
    store = WarehouseRunStore(tmp_path / "w.duckdb", str(tmp_path / "results"))
    cmp = compare(bundle, POLS, SEEDS, days=1, store=store, executor=client, results_url=store.results.url)
    assert len(cmp.computed) == 6 and cmp.reused == []
    assert cmp.runs.equals(ref.runs) and cmp.summary.equals(ref.summary, null_equal=True)
    assert set(cmp.series) == set(POLS) and all(cmp.series[p].equals(ref.series[p]) for p in POLS)
    # the same Parquet objects, byte for byte, at the same keys
    mine, theirs = _objects(tmp_path / "results"), _objects(Path(ref_store.results.url))
    assert len(mine) == 6 and mine == theirs
    idx, ref_idx = _index(store), _index(ref_store)
    assert idx["result_sha256"].to_list() == ref_idx["result_sha256"].to_list()
    # simulated in the two worker processes, not here
    workers = set(idx["worker"].to_list())
    assert len(workers) == 2 and worker_name() not in workers
    assert set(ref_idx["worker"].to_list()) == {worker_name()}
    # a second sweep reuses every run (reads the objects), simulates nothing
    again = compare(bundle, POLS, SEEDS, days=1, store=store, executor=client, results_url=store.results.url)
    assert again.computed == [] and again.runs.equals(ref.runs)


def test_distributed_sweep_to_s3(bundle, client, in_process, s3, tmp_path):
    ref, ref_store = in_process
    store = WarehouseRunStore(tmp_path / "w.duckdb", "s3://sweeps/team-a")
    cmp = compare(bundle, POLS, SEEDS, days=1, store=store, executor=client, results_url=store.results.url)
    assert cmp.runs.equals(ref.runs)
    keys = bucket_keys(s3, "sweeps")
    assert len(keys) == 6 and all(k.startswith(f"team-a/bundle={ref.bundle_id}/") for k in keys)
    for k in cmp.runs.select("bundle_id", "policy", "seed", "gridshift_version", "options_sha256").rows():
        rel = run_relpath(k)
        assert read_bytes(f"s3://sweeps/team-a/{rel}") == (Path(ref_store.results.url) / rel).read_bytes()
    assert _index(store)["result_url"].str.starts_with(f"s3://sweeps/team-a/bundle={ref.bundle_id}/").all()
    # the summary path (what benchmark_summary does) reads the runs back from S3
    summary = compare(bundle, POLS, SEEDS, days=1, store=WarehouseRunStore(store.db_path, "s3://sweeps/other"),
                      missing="skip")
    assert summary.runs.equals(ref.runs) and summary.computed == []
    # ... and publishes them under its own URL too: every run a sweep reports is at its URL, byte for byte
    assert bucket_keys(s3, "sweeps") == sorted([*keys, *(k.replace("team-a/", "other/", 1) for k in keys)])
    assert read_bytes(f"s3://sweeps/other/{rel}") == read_bytes(f"s3://sweeps/team-a/{rel}")
    # an indexed object that disappeared is a clear error naming it, not a silent re-run
    import boto3

    boto3.client("s3", endpoint_url=s3, region_name="us-east-1").delete_object(Bucket="sweeps", Key=keys[0])
    with pytest.raises(ObjectNotFoundError, match=re.escape(f"no object at s3://sweeps/{keys[0]}")):
        compare(bundle, POLS, SEEDS, days=1, store=store, missing="skip")


def test_cli_compare_on_the_cluster(bundle, client, in_process, tmp_path):
    ref, ref_store = in_process
    args = ["compare", str(bundle), "--policies", ",".join(POLS), "--seeds", "0,1", "--days", "1",
            "--home", str(tmp_path / "home"), "--results", str(tmp_path / "res")]
    res = CliRunner().invoke(app, [*args, "--scheduler", client.scheduler.address])
    assert res.exit_code == 0, res.output
    assert "2 worker(s)" in res.output and "6 run(s) simulated, 0 reused" in res.output
    assert _objects(tmp_path / "res") == _objects(Path(ref_store.results.url))
    bad = CliRunner().invoke(app, [*args, "--results", "ftp://x/y"])
    assert bad.exit_code == 2 and "scheme 'ftp' is not supported" in plain(bad.output)


def test_dagster_job_runs_the_sweep_on_the_cluster(bundle, client, in_process, tmp_path):
    from dagster_project.definitions import build_defs
    from dagster_project.resources import GridshiftResource

    ref, ref_store = in_process
    home = tmp_path / "home"
    job = build_defs({"gridshift": GridshiftResource(home=str(home))}).resolve_job_def("benchmark_sweep_dask")
    cfg = {"bundle_path": str(bundle), "days": 1.0, "policies": POLS, "seeds": SEEDS,
           "scheduler": client.scheduler.address}
    result = job.execute_in_process(run_config={"ops": {"run_sweep_on_dask": {"config": cfg}},
                                                "loggers": {"console": {"config": {"log_level": "ERROR"}}}})
    assert result.success and result.output_for_node("run_sweep_on_dask") == 6
    mats = [e for e in result.all_events if e.event_type_value == "ASSET_MATERIALIZATION"]
    assert sorted(e.partition for e in mats) == sorted(f"{p}|{s}" for p in POLS for s in SEEDS)
    store = WarehouseRunStore.for_home(home)
    assert _objects(home / "results") == _objects(Path(ref_store.results.url))
    idx = _index(store)
    assert idx["result_sha256"].to_list() == _index(ref_store)["result_sha256"].to_list()
    assert len(set(idx["worker"].to_list())) == 2 and worker_name() not in set(idx["worker"].to_list())
    assert compare(bundle, POLS, SEEDS, days=1, store=store, missing="skip").runs.equals(ref.runs)


def test_local_cluster_listens_on_loopback_only(client):
    """The scheduler, its dashboard, the nannies and the workers (this process and its children) accept
    connections on 127.0.0.1 only."""
    import psutil

    info = client.scheduler_info()
    assert info["address"].startswith("tcp://127.0.0.1:")
    assert all(addr.startswith("tcp://127.0.0.1:") for addr in info["workers"])
    assert "dashboard" in info["services"], "the dashboard is served (bokeh is installed)"
    procs = [psutil.Process(), *psutil.Process().children(recursive=True)]
    listening = [c.laddr.ip for p in procs for c in p.net_connections(kind="inet") if c.status == psutil.CONN_LISTEN]
    assert len(listening) >= 5, "the scheduler, its dashboard and two workers with their nannies listen"
    assert set(listening) == {"127.0.0.1"}, listening
