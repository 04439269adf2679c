"""Results by URL alone: homes that share a results URL (a folder, or S3 through a loopback server) reuse each
other's runs, an S3 sweep publishes every run it reports, and the URL reads as one labelled dataset."""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from pathlib import Path

import polars as pl
import pytest
from typer.testing import CliRunner

from gridshift.results import run_relpath
from gridshift_cli import app
from tests.loopback import S3_ENV, bucket_keys, loopback_only, make_bucket, s3_server

POLS = ["local_only", "lowest_carbon"]
KEY_COLS = ["bundle_id", "policy", "seed", "gridshift_version", "options_sha256"]
PROGRESS = re.compile(r"^\s+\S+\s+seed \d+\s+(simulated|stored)\s*$")


@contextlib.contextmanager
def _results_url(kind: str, tmp_path: Path, bucket: str) -> Iterator[tuple[str, str | None]]:
    """A results URL every home of the test shares: a folder, or a bucket prefix on a loopback S3 server (a bucket
    of its own per test: moto keeps its buckets in the process across servers)."""
    if kind == "folder":
        yield str(tmp_path / "shared"), None
        return
    with s3_server() as endpoint, loopback_only():
        make_bucket(endpoint, bucket)
        assert bucket_keys(endpoint, bucket) == []
        yield f"s3://{bucket}/team", endpoint


def _compare(bundle, home: Path, url: str, seeds: str, out: Path | None = None):
    args = ["compare", str(bundle), "--policies", ",".join(POLS), "--seeds", seeds, "--days", "1",
            "--home", str(home), "--results", url, "--no-figures"]
    res = CliRunner().invoke(app, [*args, *(["--out", str(out)] if out else [])])
    assert res.exit_code == 0, res.output
    return res.output


def _table(output: str) -> str:
    """The printed summary: the output without the per-run progress lines, up to the closing count of runs (what
    follows it names the home and the output folder, and wraps where the terminal's width puts it)."""
    out = output.splitlines()
    out = out[:next(i for i, ln in enumerate(out) if "run(s) simulated" in ln)]
    lines = [ln for ln in out if not PROGRESS.match(ln)]
    assert len(lines) > 5, output
    return "\n".join(lines)


@pytest.mark.parametrize("kind", ["folder", "s3"])
def test_second_home_reads_every_run_from_the_url(kind, bundle, tmp_path, run_counter):
    with _results_url(kind, tmp_path, "two-homes") as (url, _):
        first = _compare(bundle, tmp_path / "a", url, "0,1", tmp_path / "out-a")
        assert "4 run(s) simulated, 0 reused" in first and len(run_counter.calls) == 4
        second = _compare(bundle, tmp_path / "b", url, "0,1", tmp_path / "out-b")  # a fresh home, the same URL
        assert "0 run(s) simulated, 4 reused" in second
        assert len(run_counter.calls) == 4  # nothing simulated
        assert _table(second) == _table(first)
        for name in ("runs.parquet", "summary.parquet"):  # the same files, byte for byte
            assert (tmp_path / "out-b" / name).read_bytes() == (tmp_path / "out-a" / name).read_bytes()
        # the second home's index was rebuilt from the objects: it names them, with their hashes
        from warehouse.db import read_table

        idx = read_table(tmp_path / "b" / "warehouse.duckdb", "SELECT * FROM benchmark_runs ORDER BY policy, seed")
        ref = read_table(tmp_path / "a" / "warehouse.duckdb", "SELECT * FROM benchmark_runs ORDER BY policy, seed")
        assert idx.select("result_url", "result_sha256").equals(ref.select("result_url", "result_sha256"))
        assert idx["worker"].is_null().all() and ref["worker"].is_not_null().all()


def test_s3_sweep_publishes_every_run_it_reports(bundle, tmp_path, run_counter):
    home = tmp_path / "home"
    local = home / "results"
    _compare(bundle, home, str(local), "0")  # two runs into the home's folder
    with _results_url("s3", tmp_path, "one-sweep") as (url, endpoint):
        out = _compare(bundle, home, url, "0,1", tmp_path / "out")
        assert "2 run(s) simulated, 2 reused" in out and len(run_counter.calls) == 4
        runs = pl.read_parquet(tmp_path / "out" / "runs.parquet")
        want = sorted(f"team/{run_relpath(k)}" for k in runs.select(KEY_COLS).rows())
        assert bucket_keys(endpoint, "one-sweep") == want  # exactly one object per reported run
        from gridshift.objectstore import read_bytes

        for k in runs.filter(pl.col("seed") == 0).select(KEY_COLS).rows():  # reused ones: copied byte for byte
            assert read_bytes(f"{url}/{run_relpath(k)}") == (local / run_relpath(k)).read_bytes()
        # the bucket read as one dataset (polars through its own S3 client): labelled rows, the reported metrics
        opts = {"aws_endpoint_url": endpoint, "aws_allow_http": "true", "aws_region": S3_ENV["AWS_REGION"],
                "aws_access_key_id": S3_ENV["AWS_ACCESS_KEY_ID"],
                "aws_secret_access_key": S3_ENV["AWS_SECRET_ACCESS_KEY"]}
        scanned = pl.scan_parquet(f"{url}/**/*.parquet", hive_partitioning=True, storage_options=opts)
        got = scanned.select(runs.columns).sort("policy", "seed").collect()
        assert got.equals(runs.sort("policy", "seed"))


def test_benchmark_summary_of_a_fresh_home_reads_the_url(bundle, tmp_path, run_counter, monkeypatch):
    """The Dagster summary asset on a home that never ran anything summarizes the runs under $GRIDSHIFT_RESULTS_URL."""
    import dagster as dg

    from dagster_project.assets import sweep
    from dagster_project.resources import GridshiftResource

    url = str(tmp_path / "shared")
    _compare(bundle, tmp_path / "a", url, "0,1", tmp_path / "out-a")
    monkeypatch.setenv("GRIDSHIFT_RESULTS_URL", url)
    cfg = {"bundle_path": str(bundle), "days": 1.0, "policies": POLS, "seeds": [0, 1],
           "out_dir": str(tmp_path / "out-b")}
    fresh = {"gridshift": GridshiftResource(home=str(tmp_path / "b"))}
    res = dg.materialize([sweep.benchmark_summary], resources=fresh,
                         run_config={"loggers": {"console": {"config": {"log_level": "ERROR"}}},
                                     "ops": {"benchmark_summary": {"config": cfg}}})
    assert res.success and len(run_counter.calls) == 4
    assert res.asset_materializations_for_node("benchmark_summary")[0].metadata["runs"].value == 4
    assert (tmp_path / "out-b" / "runs.parquet").read_bytes() == (tmp_path / "out-a" / "runs.parquet").read_bytes()
