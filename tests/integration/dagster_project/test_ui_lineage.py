"""What the CLI builds appears in the UI with its lineage; the UI stops cleanly; a failure is short.

One export through the CLI into a fresh home, then ``./run.sh ui``'s entry point (``dg dev`` on the
home's instance) started as a user would, queried over its GraphQL API, and stopped with SIGTERM.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gridshift import locations
from gridshift_cli import app
from tests.integration.dagster_project.ui import free_port, graphql, stop, wait_up

runner = CliRunner()


@pytest.fixture(scope="module")
def exported(tmp_path_factory, shared_data):
    home = tmp_path_factory.mktemp("ui_home")
    out = tmp_path_factory.mktemp("ui_out")
    r = runner.invoke(app, ["export", "--regions", "DE-LU", "--year", "2023", "--workload", "none",
                            "--mirror", str(shared_data), "--home", str(home), "--out", str(out)])
    assert r.exit_code == 0, r.output
    return home, r.output


def test_the_ui_shows_the_whole_chain_and_what_the_cli_built(exported):
    home, output = exported
    port = free_port()
    env = {**os.environ, "GRIDSHIFT_HOME": str(home)}
    proc = subprocess.Popen([sys.executable, "-m", "gridshift_cli", "ui", "-p", str(port), "--home", str(home)],
                            env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
    try:
        wait_up(proc, port)
        nodes = graphql(port, "{ assetNodes { assetKey { path } dependencyKeys { path } } }")["assetNodes"]
        deps = {"/".join(n["assetKey"]["path"]): {"/".join(k["path"]) for k in n["dependencyKeys"]} for n in nodes}
        assert deps["scenario_bundle"] == {"grid_carbon", "grid_price", "weather", "workload_tasks", "locations",
                                           "egress_price", "network_path"}
        assert deps["benchmark_run"] == {"scenario_bundle"} and deps["benchmark_summary"] == {"benchmark_run"}
        # the materializations the CLI made, read back by the UI from the home's instance
        def mats(asset: str) -> list[dict]:
            q = ('{ assetOrError(assetKey: {path: ["ASSET"]}) { ... on Asset { assetMaterializations(limit: 20) '
                 "{ runId partition } } } }").replace("ASSET", asset)
            return graphql(port, q)["assetOrError"]["assetMaterializations"]

        bundle_mats = mats("scenario_bundle")
        assert len(bundle_mats) == 1
        bid = output.split("id ")[-1].split()[0]
        assert {m["partition"] for m in mats("grid_carbon")} >= {"DE-LU|2023"}
        assert {m["partition"] for m in mats("weather")} >= {"DE-LU|2022", "DE-LU|2023"}  # the neighbour year too
        # the partitions offered: the mirror's years (2022, 2023; the export asked for those too) × every region
        q = '{ assetNodeOrError(assetKey: {path: ["grid_carbon"]}) { ... on AssetNode { partitionKeys } } }'
        offered = graphql(port, q)["assetNodeOrError"]["partitionKeys"]
        assert sorted(offered) == sorted(f"{r}|{y}" for r in locations.all_codes() for y in (2022, 2023))
        q = '{ runOrError(runId: "RUN") { ... on Run { status } } }'.replace("RUN", bundle_mats[0]["runId"])
        meta = graphql(port, q)
        assert meta["runOrError"]["status"] == "SUCCESS" and len(bid) == 16
    finally:
        stop(proc)


def test_a_year_the_mirror_lacks_fails_in_a_short_block_with_the_remedy(shared_data, tmp_path):
    home = tmp_path / "home"
    r = runner.invoke(app, ["export", "--regions", "DE-LU", "--year", "2024", "--workload", "none",
                            "--mirror", str(shared_data), "--home", str(home)])
    assert r.exit_code == 2
    lines = r.output.strip().splitlines()
    assert len(lines) < 15, r.output
    text = " ".join(lines)
    assert lines[0].startswith("error: ingesting grid_carbon DE-LU 2024")
    assert "electricitymaps/DE-LU/DE-LU_2024_hourly.csv not found in mirror" in text
    assert "--live" in text and "--mirror DIR" in text
    assert "Error occurred while executing" not in r.output and "Traceback" not in r.output
    log = Path(text.split("full report: ")[1].split()[0])
    assert log.parent == home / "logs" and "SourceUnavailableError" in log.read_text()


ADD_KEY = """mutation($r: RepositorySelector!, $k: String!) { addDynamicPartition(repositorySelector: $r,
  partitionsDefName: "year", partitionKey: $k) { __typename ... on PythonError { message } } }"""
KEYS = '{ assetNodeOrError(assetKey: {path: ["grid_carbon"]}) { ... on AssetNode { partitionKeys } } }'


def test_bad_year_keys_added_through_the_ui_are_removed_and_the_ui_starts_again(shared_data, tmp_path):
    """The UI's API takes any year key (``abc``, ``02023``, a 5,000-character one...): the running UI's sensor
    removes them, and a UI started on a home that still holds some starts, reporting them by name."""
    from dagster_project import runner as dg_runner
    from dagster_project.partitions import years
    from gridshift.home import Home
    from tests.integration.dagster_project.test_partition_years import HOSTILE_YEAR_KEYS

    home = tmp_path / "home"
    env = {**os.environ, "GRIDSHIFT_HOME": str(home)}
    env.pop("GRIDSHIFT_MIRROR", None)
    good = sorted(f"{r}|{y}" for r in locations.all_codes() for y in (2022, 2023))

    def start() -> tuple[subprocess.Popen, int]:
        port = free_port()
        proc = subprocess.Popen([sys.executable, "-m", "gridshift_cli", "ui", "-p", str(port), "--home", str(home),
                                 "--mirror", str(shared_data)], env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.STDOUT, start_new_session=True)
        wait_up(proc, port)
        return proc, port

    proc, port = start()
    try:
        repos = graphql(port, "{ repositoriesOrError { ... on RepositoryConnection { nodes { name location { name } }"
                              " } } }")["repositoriesOrError"]["nodes"]
        selector = {"repositoryName": repos[0]["name"], "repositoryLocationName": repos[0]["location"]["name"]}
        for k in HOSTILE_YEAR_KEYS:
            added = graphql(port, ADD_KEY, {"r": selector, "k": k})["addDynamicPartition"]
            assert added["__typename"] == "AddDynamicPartitionSuccess", (k[:20], added)
        deadline = time.time() + 480  # the daemon evaluates the sensor every 30 s once it is up (slow under load)
        while sorted(graphql(port, KEYS)["assetNodeOrError"]["partitionKeys"]) != good:
            assert time.time() < deadline, "the sensor did not remove the bad year keys"
            time.sleep(5)
    finally:
        stop(proc)
    with dg_runner.open_instance(Home(home)) as instance:
        instance.add_dynamic_partitions(years.name, ["abc", "1999"])
    proc, port = start()
    try:
        assert sorted(graphql(port, KEYS)["assetNodeOrError"]["partitionKeys"]) == good
    finally:
        stop(proc)
    said = proc.stdout.read().decode()
    assert "removed year partition key 'abc'" in said and "removed year partition key '1999'" in said, said[-3000:]


LAUNCH = """mutation($p: ExecutionParams!) { launchPipelineExecution(executionParams: $p) { __typename
  ... on RunConfigValidationInvalid { errors { message } } ... on PythonError { message }
  ... on LaunchRunSuccess { run { runId } } } }"""
RUNS = "{ runsOrError { ... on Runs { results { runId } } } }"


def test_a_results_url_with_a_credential_launched_from_the_ui_is_refused_and_nothing_is_stored(tmp_path):
    """The launchpad's path (GraphQL ``launchPipelineExecution``): the sweep jobs' config has no ``results_url``
    field, so Dagster's config validation refuses one, by name, before the run exists; every file under the home
    is then scanned for the credential (docs/distributed.md, "Credentials and the results URL in Dagster")."""
    from tests.unit.sim_core.bench.test_results_url_secrets import HOSTILE_URLS, SECRET, files_holding

    home = tmp_path / "home"
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "gridshift_cli", "ui", "-p", str(port), "--home", str(home)],
                            env={**os.environ, "GRIDSHIFT_HOME": str(home)}, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, start_new_session=True)
    try:
        wait_up(proc, port)
        repos = graphql(port, "{ repositoriesOrError { ... on RepositoryConnection { nodes { name location { name } }"
                              " } } }")["repositoriesOrError"]["nodes"]
        where = {"repositoryName": repos[0]["name"], "repositoryLocationName": repos[0]["location"]["name"]}
        launches = [({**where, "jobName": "benchmark_sweep_dask"}, "run_sweep_on_dask"),
                    ({**where, "jobName": "__ASSET_JOB", "assetSelection": [{"path": ["benchmark_summary"]}]},
                     "benchmark_summary")]
        for selector, op in launches:
            for url in HOSTILE_URLS:
                params = {"selector": selector, "mode": "default",
                          "runConfigData": {"ops": {op: {"config": {"results_url": url}}}}}
                got = graphql(port, LAUNCH, {"p": params})["launchPipelineExecution"]
                assert got["__typename"] == "RunConfigValidationInvalid", got
                assert any('unexpected config entry "results_url"' in e["message"] for e in got["errors"]), got
        assert graphql(port, RUNS)["runsOrError"]["results"] == []
    finally:
        stop(proc)
    assert files_holding(home, SECRET) == [] and any((home / "dagster").rglob("*.db"))
