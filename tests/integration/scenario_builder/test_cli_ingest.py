"""The ingest command: prints what it loaded, exits non-zero with a clear message on bad input."""

from __future__ import annotations

from typer.testing import CliRunner

from gridshift.home import Home
from gridshift_cli import app
from tests.integration.helpers import mirror_with, replace_line, tree_digest
from warehouse.db import read_table

runner = CliRunner()


def test_ingest_prints_rows_coverage_and_estimated_share(tmp_path, shared_data):
    res = runner.invoke(app, ["ingest", "--regions", "IN-WE", "--year", "2023", "--mirror", str(shared_data),
                              "--home", str(tmp_path)])
    assert res.exit_code == 0, res.output
    assert "grid_carbon" in res.output and "8760" in res.output and "100.0%" in res.output  # IN-WE all estimated
    df = read_table(Home(tmp_path).warehouse_path,
                    "SELECT price_usd_per_mwh p FROM grid_price WHERE ts_utc = '2023-01-01 00:30:00+00'")
    assert abs(df["p"][0] - 45.962554) < 1e-9


def test_mirror_from_environment_and_unknown_region(tmp_path, shared_data, monkeypatch):
    monkeypatch.setenv("GRIDSHIFT_MIRROR", str(shared_data))
    ok = runner.invoke(app, ["ingest", "--regions", "SG", "--year", "2023", "--sources", "carbon",
                             "--home", str(tmp_path)])
    assert ok.exit_code == 0, ok.output
    bad = runner.invoke(app, ["ingest", "--regions", "XX-NOPE", "--year", "2023", "--home", str(tmp_path)])
    assert bad.exit_code == 2 and "unknown location" in bad.output


def test_bad_file_exits_nonzero_and_writes_nothing(tmp_path, shared_data):
    mirror = mirror_with(shared_data, tmp_path, "electricitymaps/KR/KR_2023_hourly.csv",
                         replace_line(100, lambda ln: ln.replace(",KR,", ",KR,").replace(",false,", ",maybe,")))
    home = tmp_path / "home"
    runner.invoke(app, ["ingest", "--regions", "SG", "--year", "2023", "--mirror", str(mirror), "--home", str(home)])
    before = tree_digest(home)
    res = runner.invoke(app, ["ingest", "--regions", "KR", "--year", "2023", "--sources", "carbon",
                              "--mirror", str(mirror), "--home", str(home)])
    assert res.exit_code == 1
    assert "Data Estimated" in res.output and "row 100" in res.output and "KR_2023_hourly.csv" in res.output
    assert tree_digest(home) == before


def test_all_regions_skips_what_the_mirror_lacks(tmp_path, shared_data):
    res = runner.invoke(app, ["ingest", "--regions", "all", "--year", "2023", "--sources", "price",
                              "--mirror", str(shared_data), "--home", str(tmp_path)])
    assert res.exit_code == 0, res.output
    assert "skipped" in res.output  # GB has no standardized price file
    n = read_table(Home(tmp_path).warehouse_path, "SELECT count(DISTINCT location) n FROM grid_price")["n"][0]
    assert n == 22


def test_workload_bandwidth_model_option_is_recorded_and_applied(tmp_path, shared_data):
    """``--bandwidth-model constant``: every task moves the documented constant, and the stored
    parameters say so (a bundle built from it records them); an unknown model is refused before any work."""
    import json

    from pipelines.workload.derive import DeriveParams

    bad = runner.invoke(app, ["ingest", "--year", "2023", "--sources", "workload", "--bandwidth-model", "histogram",
                              "--mirror", str(shared_data), "--home", str(tmp_path)])
    assert bad.exit_code == 2 and "unknown bandwidth model 'histogram'" in bad.output
    res = runner.invoke(app, ["ingest", "--year", "2023", "--sources", "workload", "--bandwidth-model", "constant",
                              "--load-factor", "1", "--mirror", str(shared_data), "--home", str(tmp_path)])
    assert res.exit_code == 0, res.output
    wh = Home(tmp_path).warehouse_path
    params = json.loads(read_table(wh, "SELECT params_json FROM workload_runs WHERE year = 2023")["params_json"][0])
    assert params["bandwidth_model"] == "constant"
    bw = read_table(wh, "SELECT min(bandwidth_gb) lo, max(bandwidth_gb) hi, count(*) n FROM workload_tasks")
    assert bw["n"][0] > 1_000_000
    assert bw["lo"][0] == bw["hi"][0] == DeriveParams().bandwidth_constant_gb


def test_ingest_records_its_runs_in_the_homes_instance_on_dagsters_own_storage(tmp_path, shared_data):
    """One instance for the command, configured in <home>/dagster/dagster.yaml with Dagster's SQLite storage (no
    gridshift class): its runs and per-partition records are there afterwards, and nothing is left running."""
    import multiprocessing
    import threading
    import time

    import dagster as dg

    threads = set(threading.enumerate())
    res = runner.invoke(app, ["ingest", "--regions", "SG,KR", "--year", "2023", "--mirror", str(shared_data),
                              "--home", str(tmp_path)])
    assert res.exit_code == 0, res.output
    # rich's Live.stop() signals its refresh thread without joining it: a thread that ends within seconds is
    # no leak, one still alive a minute later (a bound, generous for a loaded machine) is
    deadline = time.monotonic() + 60.0
    while set(threading.enumerate()) - threads and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not multiprocessing.active_children() and set(threading.enumerate()) == threads
    d = Home(tmp_path).dagster_dir
    cfg = (d / "dagster.yaml").read_text()
    assert "storage:\n  sqlite:" in cfg and "module:" not in cfg and "gridshift" not in cfg.replace(str(d), "")
    with dg.DagsterInstance.from_config(str(d)) as instance:
        runs = instance.get_runs()
        # the reference tables, then SG and KR (not neighbours in the registry): one run each, all three signals
        assert len(runs) == 3 and all(r.status == dg.DagsterRunStatus.SUCCESS for r in runs)
        for table in ("grid_carbon", "grid_price", "weather"):
            assert instance.get_materialized_partitions(dg.AssetKey(table)) == {"SG|2023", "KR|2023"}
    assert (d / "history" / "runs.db").is_file() and len(list((d / "history" / "runs").glob("*.db"))) == 4


def test_debug_lets_the_failure_through_with_its_traceback(tmp_path):
    """--debug reaches the command through its context: without it, the short report and exit 2; with it, the
    exception itself (and its traceback). One invocation's flag does not leak into the next."""
    args = ["ingest", "--regions", "XX-NOPE", "--year", "2023", "--home", str(tmp_path)]
    full = runner.invoke(app, ["--debug", *args])
    assert full.exit_code == 1 and type(full.exception).__name__ == "UnknownLocationError"
    assert "XX-NOPE" in str(full.exception)
    plain = runner.invoke(app, args)
    assert plain.exit_code == 2 and "unknown location" in plain.output and "Traceback" not in plain.output
