"""``gridshift export --year`` takes a range as ``ingest`` does: one bundle per year, their inputs (each year
and its neighbouring years) ingested together in one batch, the fewest runs a key range allows."""

from __future__ import annotations

import json

import dagster as dg
from typer.testing import CliRunner

from dagster_project.jobs import ARGUMENTS_TAG, COMMAND_TAG
from dagster_project.runner import PARTITION_RANGE_END, PARTITION_RANGE_START, open_instance
from gridshift.home import Home
from gridshift_cli import app


def test_export_takes_a_year_range_and_ingests_it_in_one_run(shared_data, tmp_path):
    home = Home.resolve(tmp_path / "home")
    r = CliRunner().invoke(app, ["export", "--regions", "DE-LU", "--year", "2022-2023", "--workload", "none",
                                 "--max-gap-hours", "8", "--home", str(home.root), "--mirror", str(shared_data)],
                           env={"COLUMNS": "200"})
    assert r.exit_code == 0, r.output
    bundles = sorted(p for p in home.bundles_dir.iterdir() if p.is_dir())
    manifests = [json.loads((b / "manifest.json").read_text()) for b in bundles]
    assert sorted(m["year"] for m in manifests) == [2022, 2023]
    assert all(m["locations"] == ["DE-LU"] for m in manifests)
    for m in manifests:
        assert f"id {m['bundle_id']}" in r.output
    with open_instance(home) as inst:
        runs = inst.get_runs(dg.RunsFilter(statuses=[dg.DagsterRunStatus.SUCCESS]))
        grid = [run for run in runs if "grid_carbon" in (run.step_keys_to_execute or [])]
    # both years of all three signals (2021 and 2024 are not in the mirror): one run over the key range
    assert len(grid) == 1
    assert sorted(grid[0].step_keys_to_execute) == ["grid_carbon", "grid_price", "weather"]
    start, end = grid[0].tags[PARTITION_RANGE_START], grid[0].tags[PARTITION_RANGE_END]
    # every run is a named job, tagged with the command and its arguments (not __ephemeral_asset_job__)
    assert sorted(run.job_name for run in runs) == ["build_bundle", "build_bundle", "ingest_grid", "ingest_reference"]
    for run in runs:
        assert run.tags[COMMAND_TAG] == "gridshift export"
        args = json.loads(run.tags[ARGUMENTS_TAG])
        assert (args["regions"], args["year"], args["workload"]) == ("DE-LU", "2022-2023", "none")
    assert ("2022" in start and "DE-LU" in start, "2023" in end and "DE-LU" in end) == (True, True)
