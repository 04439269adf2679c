"""The ingest command: prints what it loaded, exits non-zero with a clear message on bad input."""

from __future__ import annotations

from typer.testing import CliRunner

from gridshift.home import Home
from scenario_builder.cli import app
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
                              "--mirror", str(shared_data), "--home", str(tmp_path)])
    assert res.exit_code == 0, res.output
    wh = Home(tmp_path).warehouse_path
    params = json.loads(read_table(wh, "SELECT params_json FROM workload_runs WHERE year = 2023")["params_json"][0])
    assert params["bandwidth_model"] == "constant"
    bw = read_table(wh, "SELECT min(bandwidth_gb) lo, max(bandwidth_gb) hi, count(*) n FROM workload_tasks")
    assert bw["n"][0] > 1_000_000
    assert bw["lo"][0] == bw["hi"][0] == DeriveParams().bandwidth_constant_gb


def test_ingest_prepares_the_grid_files_ahead_and_leaves_nothing_running(tmp_path, shared_data, monkeypatch):
    """The CLI parses the mirror's files in a worker process while Dagster starts (warehouse.ingest.prefetch_grid),
    every one is taken by its asset, and the worker and its threads are gone when the command returns."""
    import multiprocessing
    import threading

    from warehouse import prefetch

    seen = []
    real = prefetch.prefetching

    def spy(pf):
        seen.append(pf)
        return real(pf)

    monkeypatch.setattr(prefetch, "prefetching", spy)
    threads = set(threading.enumerate())
    res = runner.invoke(app, ["ingest", "--regions", "SG,KR", "--year", "2023", "--mirror", str(shared_data),
                              "--home", str(tmp_path)])
    assert res.exit_code == 0, res.output
    (pf,) = seen
    assert pf.stats.planned == 6 and pf.stats.served + pf.stats.stolen == 6 and pf.stats.missing == 0
    assert prefetch.active() is None and not multiprocessing.active_children()
    assert set(threading.enumerate()) == threads
