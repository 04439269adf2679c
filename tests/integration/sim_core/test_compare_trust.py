"""``gridshift compare`` against a shared results URL it did not write, and on storage that fails.

A fresh home has no sha256 of its own for an object under a shared URL: a tampered one (carbon rewritten to
-1,000,000 kg) or a huge one is refused by name (its URL) and never enters a table (the home's index, runs.parquet).
A read-only home (``compare``, ``ui``) and a full disk (``--out``, the results) are named, not a traceback, and a
rerun once the space is back succeeds; each is a tmpfs of its own (mounting one needs root; else those tests skip:
root writes through a chmod).
"""

from __future__ import annotations

import io
import subprocess
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from typer.testing import CliRunner

from gridshift.home import Home
from gridshift_cli import make_app
from sim_core.testing import tiny_bundle
from tests.integration.scenario_builder.test_cli_storage_errors import _fill, _small_fs
from warehouse.db import read_table

ENV = {"COLUMNS": "400", "NO_COLOR": "1"}


def _compare(bundle: Path, home: Path, *args) -> object:
    return CliRunner().invoke(make_app(), ["compare", str(bundle), "--policies", "local_only", "--seeds", "0",
                                           "--days", "1", "--no-figures", "--home", str(home), *map(str, args)],
                              env=ENV)


def _indexed(home: Path) -> int:
    db = Home(home).warehouse_path
    return 0 if not db.exists() else read_table(db, "SELECT count(*) n FROM benchmark_runs")["n"][0]


@pytest.fixture(scope="module")
def bundle(tmp_path_factory):
    return tiny_bundle(tmp_path_factory.mktemp("b"))


@pytest.fixture
def shared(bundle, tmp_path):
    """A results URL with one run published by home A; its object's path."""
    url = tmp_path / "shared"
    res = _compare(bundle, tmp_path / "a", "--results", url)
    assert res.exit_code == 0, res.output
    (obj,) = list(url.rglob("*.parquet"))
    return url, obj


def _rewrite_metric(obj: Path, name: str, value: float) -> None:
    table = pq.read_table(obj)
    table = table.set_column(table.column_names.index(name), name, pa.array([value], pa.float64()))
    sink = io.BytesIO()
    pq.write_table(table, sink, store_schema=True)  # the footer (gridshift.run) is kept by set_column
    obj.write_bytes(sink.getvalue())


def test_a_fresh_home_refuses_a_tampered_object_by_its_url(bundle, shared, tmp_path):
    url, obj = shared
    _rewrite_metric(obj, "carbon_kg", -1_000_000.0)
    out = tmp_path / "out"
    res = _compare(bundle, tmp_path / "b", "--results", url, "--out", out)
    assert res.exit_code == 1, res.output
    text = " ".join(res.output.split())
    assert f"file: {obj}" in text and "column: 'carbon_kg'" in text and "outside [0, 1e+14]" in text, text
    assert _indexed(tmp_path / "b") == 0 and not out.exists()  # never entered a table


def test_a_rewrite_that_breaks_an_identity_is_refused(bundle, shared, tmp_path):
    url, obj = shared
    _rewrite_metric(obj, "carbon_incl_transfer_kg", 0.5)  # in range, but not carbon + charged + transfer
    res = _compare(bundle, tmp_path / "b", "--results", url)
    assert res.exit_code == 1 and "breaks its identity" in res.output, res.output
    assert _indexed(tmp_path / "b") == 0


def test_a_huge_object_is_refused_by_name_before_it_is_read(bundle, shared, tmp_path):
    url, obj = shared
    with open(obj, "r+b") as fh:  # sparse: 1 GiB + 1 byte claimed, nothing allocated
        fh.truncate((1 << 30) + 1)
    res = _compare(bundle, tmp_path / "b", "--results", url)
    assert res.exit_code == 1, res.output
    text = " ".join(res.output.split())
    assert "above the limit of 1,073,741,824 bytes" in text and str(obj) in text, text
    assert _indexed(tmp_path / "b") == 0


def test_compare_into_a_read_only_home_is_named(bundle, tmp_path):
    with _small_fs(tmp_path / "fs", 16 * 1024) as fs:
        home = fs / "home"
        assert _compare(bundle, home).exit_code == 0
        before = _indexed(home)
        subprocess.run(["mount", "-o", "remount,ro", str(fs)], check=True)
        try:
            res = _compare(bundle, home, "--recompute")
        finally:
            subprocess.run(["mount", "-o", "remount,rw", str(fs)], check=True)
        assert res.exit_code == 2, res.output
        assert f"cannot write to the gridshift home {home}: read-only file system" in " ".join(res.output.split())
        assert "Traceback" not in res.output and _indexed(home) == before


def test_compare_out_on_a_full_disk_is_named_and_a_rerun_writes_it(bundle, tmp_path):
    with _small_fs(tmp_path / "fs", 2 * 1024) as fs:
        _fill(fs, leave_kb=0)
        filler, out = fs / "filler", fs / "out"
        res = _compare(bundle, tmp_path / "home", "--out", out)
        assert res.exit_code == 2, res.output
        assert "the disk is full" in res.output and "Traceback" not in res.output, res.output
        assert not [p for p in fs.rglob("*") if p.name.startswith(".")]  # no partial file left
        filler.unlink()
        again = _compare(bundle, tmp_path / "home", "--out", out)
        assert again.exit_code == 0, again.output
        assert (out / "runs.parquet").is_file()


def test_a_full_disk_while_a_run_is_stored_is_named_and_a_rerun_succeeds(bundle, tmp_path):
    with _small_fs(tmp_path / "fs", 16 * 1024) as fs:
        home = fs / "home"
        assert _compare(bundle, home, "--policies", "local_only", "--seeds", "1").exit_code == 0  # the home exists
        _fill(fs, leave_kb=0)
        filler = fs / "filler"
        res = _compare(bundle, home)
        assert res.exit_code in (1, 2), res.output
        assert "the disk is full" in res.output and "Traceback" not in res.output, res.output
        filler.unlink()
        again = _compare(bundle, home)
        assert again.exit_code == 0, again.output
        assert _indexed(home) == 2


def test_verify_reuse_catches_a_rewrite_within_the_contract(bundle, shared, tmp_path):
    """A figure rewritten within its range and identities passes the contract; re-simulating it does not."""
    url, obj = shared
    ok = _compare(bundle, tmp_path / "b", "--results", url, "--verify-reuse", "1")
    assert ok.exit_code == 0 and "0 run(s) simulated, 1 reused" in ok.output, ok.output
    wait = pq.read_table(obj).column("mean_wait_s")[0].as_py()
    _rewrite_metric(obj, "mean_wait_s", wait + 1.0)
    assert _compare(bundle, tmp_path / "c", "--results", url).exit_code == 0  # within the contract: trusted
    res = _compare(bundle, tmp_path / "d", "--results", url, "--verify-reuse", "1")
    assert res.exit_code == 1, res.output
    text = " ".join(res.output.split())
    assert f"reused run local_only seed 0 at {obj} differs from a new simulation: mean_wait_s is" in text, text


def test_ui_on_a_read_only_home_is_named(tmp_path):
    with _small_fs(tmp_path / "fs", 1024) as fs:
        home = fs / "home"
        Home(home).ensure()
        subprocess.run(["mount", "-o", "remount,ro", str(fs)], check=True)
        try:
            res = CliRunner().invoke(make_app(), ["ui", "--home", str(home)], env=ENV)
        finally:
            subprocess.run(["mount", "-o", "remount,rw", str(fs)], check=True)
    assert res.exit_code == 2, res.output
    assert f"cannot write to the gridshift home {home}: read-only file system" in " ".join(res.output.split())
    assert "Traceback" not in res.output and "a bug in gridshift" not in res.output


def test_a_full_disk_in_the_index_write_is_named_and_a_rerun_reuses_the_object(bundle, tmp_path, monkeypatch):
    """DuckDB's own error for a full disk (an IOException, no OSError) while the run's index rows are written."""
    import duckdb

    import warehouse.benchmark_store as bs

    def full(*_a, **_k):
        raise duckdb.IOException("IO Error: Could not write file \"warehouse.duckdb.wal\": No space left on device")

    home = tmp_path / "home"
    with monkeypatch.context() as m:
        m.setattr(bs, "write", full)
        res = _compare(bundle, home)
    assert res.exit_code == 2, res.output
    assert f"cannot write to the gridshift home {home}: the disk is full" in " ".join(res.output.split()), res.output
    assert _indexed(home) == 0
    again = _compare(bundle, home)
    assert again.exit_code == 0 and "0 run(s) simulated, 1 reused" in again.output, again.output
    assert _indexed(home) == 1
