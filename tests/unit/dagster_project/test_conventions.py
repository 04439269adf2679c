"""Dagster's conventions kept: the raw upstream files head the lineage (external assets), the command line's
runs are named jobs, ``benchmark_run`` runs with no config, and the ``dg`` project layout lets ``dg scaffold
defs`` and ``dg check defs`` work."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import dagster as dg
import pytest

from dagster_project.assets import raw, sweep
from dagster_project.definitions import build_defs
from dagster_project.jobs import JOB_OF_GROUP
from dagster_project.partitions import sweep_key
from dagster_project.resources import GridshiftResource
from gridshift import sources
from gridshift.home import Home
from sim_core.testing import tiny_bundle

ROOT = Path(__file__).resolve().parents[3]
DG = Path(sys.executable).parent / "dg"
QUIET = {"loggers": {"console": {"config": {"log_level": "ERROR"}}}}


def _deps(defs: dg.Definitions) -> dict[str, set[str]]:
    return {s.key.to_user_string(): {d.asset_key.to_user_string() for d in s.deps}
            for s in defs.resolve_all_asset_specs()}


def test_the_lineage_starts_at_the_raw_files():
    deps = _deps(build_defs())
    roots = {k for k, d in deps.items() if not d}
    assert roots == {s.key.to_user_string() for s in raw.ASSETS}  # every root is a raw file, every raw file a root
    assert all(k.startswith("raw/") for k in roots)
    assert deps["grid_carbon"] == {"raw/electricitymaps_csv", "raw/electricitymaps_api_v3"}
    assert deps["weather"] == {"raw/open_meteo_archive", "raw/open_meteo_archive_api"}
    assert deps["locations"] == {"raw/location_registry"}
    assert deps["network_path"] == {"raw/persico2016", "raw/azure_rtt_p50"}
    assert {"raw/alibaba_2020", "raw/alibaba_2023"} <= deps["workload_tasks"]
    # every file source of gridshift.sources feeds a warehouse table through its raw asset
    fed = set().union(*deps.values())
    assert {raw.raw_key(s.name).to_user_string() for s in sources.SOURCES if "generated" not in s.access} <= fed
    assert not any(isinstance(a, dg.AssetsDefinition) and a.is_executable for a in raw.ASSETS)


def test_the_named_jobs_cover_each_group():
    defs = build_defs()
    for group, job in JOB_OF_GROUP.items():
        keys = {k.to_user_string() for k in defs.resolve_job_def(job).asset_layer.executable_asset_keys}
        assert keys, job
        groups = {s.group_name for s in defs.resolve_all_asset_specs() if s.key.to_user_string() in keys}
        assert groups == {group}, job


def test_benchmark_run_with_no_config_runs_on_the_homes_newest_bundle(tmp_path):
    home = Home.resolve(tmp_path / "home").ensure()
    res = {"gridshift": GridshiftResource(home=str(home.root))}
    failed = dg.materialize([sweep.benchmark_run], partition_key=sweep_key("local_only", 0), resources=res,
                            run_config=QUIET, raise_on_error=False)
    assert not failed.success  # no bundle yet: the failure says what to do
    assert "materialize scenario_bundle first" in str(failed.all_events)
    older = tiny_bundle(tmp_path / "a")
    newer = tiny_bundle(tmp_path / "b", population_weight=[0.3, 0.5, 0.4])
    ids = [json.loads((b / "manifest.json").read_text())["bundle_id"] for b in (older, newer)]
    assert ids[0] != ids[1]
    for b in (older, newer):
        shutil.copytree(b, home.bundles_dir / b.name)
    past = time.time() - 60
    os.utime(home.bundles_dir / older.name / "manifest.json", (past, past))
    result = dg.materialize([sweep.benchmark_run], partition_key=sweep_key("local_only", 0), resources=res,
                            run_config=QUIET)
    meta = result.asset_materializations_for_node("benchmark_run")[0].metadata
    assert meta["bundle_id"].value == ids[1]


def test_dg_scaffold_and_check_defs_work_in_the_project_layout(tmp_path):
    proj = tmp_path / "proj"
    proj.mkdir()
    shutil.copy(ROOT / "pyproject.toml", proj)
    shutil.copytree(ROOT / "dagster_project", proj / "dagster_project", ignore=shutil.ignore_patterns("__pycache__"))
    env = {**os.environ, "PYTHONPATH": str(proj)}
    run = subprocess.run([str(DG), "scaffold", "defs", "dagster.asset", "my_asset.py"], cwd=proj, env=env,
                         capture_output=True, text=True, timeout=300, check=False)
    assert run.returncode == 0, run.stderr
    assert (proj / "dagster_project" / "defs" / "my_asset.py").is_file()
    check = subprocess.run([str(DG), "check", "defs"], cwd=proj, env=env, capture_output=True, text=True,
                           timeout=300, check=False)
    assert check.returncode == 0 and "All definitions loaded successfully" in check.stdout + check.stderr
    listed = subprocess.run([str(DG), "list", "defs", "--json"], cwd=proj, env=env, capture_output=True, text=True,
                            timeout=300, check=False)
    keys = {a["asset_key"] for a in json.loads(listed.stdout)["assets"]}
    assert {"my_asset", "grid_carbon", "scenario_bundle", "raw/electricitymaps_csv"} <= keys


@pytest.fixture(autouse=True)
def _no_mirror_env(monkeypatch):
    monkeypatch.delenv("GRIDSHIFT_MIRROR", raising=False)
