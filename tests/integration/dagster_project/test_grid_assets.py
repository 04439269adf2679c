"""Dagster wiring: assets materialize real partitions, checks fail visibly, parallel writers never collide."""

from __future__ import annotations

import multiprocessing as mp
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import dagster as dg

from dagster_project import checks
from dagster_project.assets import grid
from dagster_project.definitions import build_defs
from dagster_project.partitions import add_years, key
from dagster_project.resources import GridshiftResource
from gridshift.home import Home
from tests.integration.helpers import mirror_with, replace_line, year_instance
from warehouse.db import read_table

QUIET = {"loggers": {"console": {"config": {"log_level": "ERROR"}}}}


def _resources(home: Path, mirror: Path, **kw) -> dict:
    return {"gridshift": GridshiftResource(home=str(home), mirror=str(mirror), **kw)}


def test_definitions_load_with_overrides(tmp_path):
    defs = build_defs({"gridshift": GridshiftResource(home=str(tmp_path))})
    keys = {k.to_user_string() for k in defs.resolve_asset_graph().get_all_asset_keys()}
    assert {"grid_carbon", "grid_price", "weather", "egress_price", "network_path", "locations"} <= keys
    checks_ = {(c.asset_key.to_user_string(), c.name) for c in defs.resolve_asset_graph().asset_check_keys}
    assert ("grid_carbon", checks.SCHEMA_CHECK) in checks_ and ("weather", checks.COVERAGE_CHECK) in checks_


def test_partition_materializes_with_checks_and_metadata(tmp_path, shared_data):
    res = dg.materialize(
        grid.ASSETS, partition_key=key("AU-NSW", 2023), resources=_resources(tmp_path, shared_data),
        run_config=QUIET, instance=year_instance(2023),
    )
    assert res.success
    meta = res.asset_materializations_for_node("grid_carbon")[0].metadata
    assert meta["rows"].value == 8760 and meta["coverage"].value == 1.0
    assert abs(meta["estimated_share"].value - 0.016) < 0.001
    assert all(e.passed for e in res.get_asset_check_evaluations())
    w = read_table(Home(tmp_path).warehouse_path, "SELECT count(*) n, min(ts_utc) t0 FROM weather")
    assert w["n"][0] == 8760 and str(w["t0"][0]) == "2022-12-31 13:00:00+00:00"  # +11 h fixed offset


def test_bad_file_fails_the_blocking_check_and_writes_nothing(tmp_path, shared_data):
    relpath = "electricitymaps/DE-LU/DE-LU_2023_hourly.csv"
    mirror = mirror_with(shared_data, tmp_path, relpath, replace_line(30, lambda ln: ln.replace(",DE,", ",FR,")))
    home = tmp_path / "home"
    res = dg.materialize(
        [grid.grid_carbon], partition_key=key("DE-LU", 2023), resources=_resources(home, mirror),
        raise_on_error=False, run_config=QUIET, instance=year_instance(2023),
    )
    assert not res.success
    evals = res.get_asset_check_evaluations()
    assert len(evals) == 1 and not evals[0].passed and evals[0].check_name == checks.SCHEMA_CHECK
    assert evals[0].metadata["column"].value == "Zone Id" and evals[0].metadata["rows"].value == "[30]"
    assert read_table(Home(home).warehouse_path, "SELECT count(*) n FROM grid_carbon")["n"][0] == 0


def test_partial_file_fails_the_partition_unless_allowed(tmp_path, shared_data):
    """Coverage below the minimum fails the run (nothing written); allow_partial ingests it with a warning."""
    relpath = "electricitymaps/DE-LU/DE-LU_2023_hourly.csv"
    mirror = mirror_with(shared_data, tmp_path, relpath, lambda b: b"\n".join(b.split(b"\n")[:4001]) + b"\n")
    home = tmp_path / "home"
    res = dg.materialize([grid.grid_carbon], partition_key=key("DE-LU", 2023), resources=_resources(home, mirror),
                         raise_on_error=False, run_config=QUIET, instance=year_instance(2023))
    assert not res.success
    (ev,) = res.get_asset_check_evaluations()
    assert not ev.passed and "covers 45.66% of the UTC year" in ev.metadata["error"].value
    assert read_table(Home(home).warehouse_path, "SELECT count(*) n FROM grid_carbon")["n"][0] == 0
    res = dg.materialize([grid.grid_carbon], partition_key=key("DE-LU", 2023), run_config=QUIET,
                         resources=_resources(home, mirror, allow_partial=True), instance=year_instance(2023))
    assert res.success
    cov = {e.check_name: e for e in res.get_asset_check_evaluations()}[checks.COVERAGE_CHECK]
    assert cov.passed and cov.severity == dg.AssetCheckSeverity.WARN
    assert cov.metadata["allowed_partial"].value is True and abs(cov.metadata["coverage"].value - 4000 / 8760) < 1e-12
    assert read_table(Home(home).warehouse_path, "SELECT partial FROM partition_quality")["partial"].to_list() == [True]


def _materialize_partition(args) -> str:
    """One partition in its own process: "ok", or what went wrong (a BaseException included: a worker that
    dies of one would leave a pool waiting for its result)."""
    home, mirror, region, year = args
    try:
        res = dg.materialize(grid.ASSETS, partition_key=key(region, year),
                             resources=_resources(Path(home), Path(mirror)), raise_on_error=False, run_config=QUIET,
                             instance=year_instance(year))
    except BaseException as e:  # noqa: BLE001 - reported to the parent, which fails the test with it
        return f"{region}|{year}: {type(e).__name__}: {e}"
    return "ok" if res.success else f"{region}|{year}: the run failed"


def test_parallel_partitions_in_separate_processes_lose_no_rows(tmp_path, shared_data):
    """What a UI backfill does: one run (process) per partition, all writing the same warehouse."""
    parts = [("DE-LU", 2022), ("DE-LU", 2023), ("SG", 2023), ("KR", 2023)]
    # a process pool that fails (BrokenProcessPool) when a worker dies, where multiprocessing.Pool.map would wait
    with ProcessPoolExecutor(4, mp_context=mp.get_context("spawn")) as pool:
        outcomes = list(pool.map(_materialize_partition, [(str(tmp_path), str(shared_data), r, y) for r, y in parts]))
    assert outcomes == ["ok"] * len(parts), outcomes
    counts = read_table(Home(tmp_path).warehouse_path,
                        "SELECT location, count(*) n FROM grid_carbon GROUP BY ALL ORDER BY ALL")
    assert counts.rows() == [("DE-LU", 17520), ("KR", 8760), ("SG", 8760)]
    assert read_table(Home(tmp_path).warehouse_path, "SELECT count(*) n FROM raw_files")["n"][0] == 12


def test_multiprocess_executor_runs_the_three_writers_in_parallel(tmp_path, shared_data):
    defs = build_defs(_resources(tmp_path, shared_data))
    job = defs.resolve_job_def("ingest_grid")
    with dg.instance_for_test() as instance:
        add_years(instance, [2023])
        result = dg.execute_job(
            dg.reconstructable(_ingest_job_factory), instance=instance,
            tags={"dagster/partition": str(key("JP-TK", 2023))},
            run_config={"resources": {"gridshift": {"config": {"home": str(tmp_path), "mirror": str(shared_data)}}},
                        "execution": {"config": {"multiprocess": {"max_concurrent": 3}}}},
        )
        assert result.success, [e.message for e in result.all_events if e.is_failure]
    assert job is not None
    n = read_table(Home(tmp_path).warehouse_path,
                   "SELECT (SELECT count(*) FROM grid_carbon) c, (SELECT count(*) FROM grid_price) p, "
                   "(SELECT count(*) FROM weather) w")
    assert n.row(0) == (8760, 8760, 8760)


def _ingest_job_factory():
    return build_defs().resolve_job_def("ingest_grid")
