"""The UI as a user meets it, in a real browser: ``./run.sh ui`` on a home configured with the mirror (no
environment variable), a backfill of one region-year launched through the UI's GraphQL API succeeds, the asset
graph starts at the raw files, and headless Chromium renders the asset graph page.

One UI start, one single-run backfill and one screenshot: about a minute on a quiet machine (marked ``ui``;
CI runs it once, in the whole suite). Chromium is Debian's ``chromium`` package: ``./run.sh install-chromium``
installs it (``.ci/run`` does); without it the test is skipped naming that command, and fails under CI.
"""

from __future__ import annotations

import os
import subprocess
import time
from pathlib import Path

import pytest

from gridshift.home import Home
from tests.integration.dagster_project.ui import free_port, graphql, stop, wait_up
from tests.system import CHROMIUM_INSTALL, require_program

pytestmark = pytest.mark.ui
ROOT = Path(__file__).resolve().parents[3]
PARTITION = "DE-LU|2023"
GRID = ("grid_carbon", "grid_price", "weather")
LAUNCH = """mutation($p: LaunchBackfillParams!) { launchPartitionBackfill(backfillParams: $p) {
  __typename ... on LaunchBackfillSuccess { backfillId } ... on PythonError { message } } }"""
BACKFILL = """query($id: String!) { partitionBackfillOrError(backfillId: $id) {
  ... on PartitionBackfill { status } ... on PythonError { message } } }"""
RUNS = """query($id: String!) { runsOrError(filter: {tags: [{key: "dagster/backfill", value: $id}]}) {
  ... on Runs { results { runId status jobName } } } }"""
MATS = """query($k: [String!]!) { assetOrError(assetKey: {path: $k}) { ... on Asset {
  assetMaterializations(limit: 5) { partition runId } } } }"""


def _wait_backfill(port: int, backfill_id: str, limit_s: float = 480) -> str:
    deadline = time.time() + limit_s
    while True:
        status = graphql(port, BACKFILL, {"id": backfill_id})["partitionBackfillOrError"]["status"]
        if status not in ("REQUESTED",):
            return status
        assert time.time() < deadline, f"backfill {backfill_id} still {status}"
        time.sleep(2)


def test_a_ui_backfill_needs_no_environment_and_the_graph_starts_at_the_raw_files(shared_data, tmp_path):
    chromium = require_program(("chromium", "chromium-browser"), "headless Chromium", CHROMIUM_INSTALL)
    home, port = tmp_path / "home", free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith(("GRIDSHIFT_", "DAGSTER_"))}
    # the home is configured with the mirror by the first `ui --mirror`; this start gives neither mirror nor env
    Home.resolve(home).configure(mirror=str(shared_data))
    proc = subprocess.Popen([str(ROOT / "run.sh"), "ui", "-p", str(port), "--host", "127.0.0.1", "--home", str(home)],
                            cwd=tmp_path, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            start_new_session=True)
    try:
        wait_up(proc, port)
        # the asset graph starts at the raw files: every root is a raw/* external asset, and only those
        nodes = graphql(port, "{ assetNodes { assetKey { path } dependencyKeys { path } isExecutable } }")["assetNodes"]
        roots = {"/".join(n["assetKey"]["path"]) for n in nodes if not n["dependencyKeys"]}
        assert roots and all(r.startswith("raw/") for r in roots), roots
        assert {"raw/electricitymaps_csv", "raw/open_meteo_archive", "raw/sustaincluster_prices_usd"} <= roots
        assert not any(n["isExecutable"] for n in nodes if n["assetKey"]["path"][0] == "raw")

        params = {"assetSelection": [{"path": [a]} for a in GRID], "partitionNames": [PARTITION]}
        launched = graphql(port, LAUNCH, {"p": params})["launchPartitionBackfill"]
        assert launched["__typename"] == "LaunchBackfillSuccess", launched
        status = _wait_backfill(port, launched["backfillId"])
        runs = graphql(port, RUNS, {"id": launched["backfillId"]})["runsOrError"]["results"]
        assert status in ("COMPLETED", "COMPLETED_SUCCESS"), (status, runs)
        assert [r["status"] for r in runs] == ["SUCCESS"]  # one run for the three assets (a single-run backfill)
        for asset in GRID:
            mats = graphql(port, MATS, {"k": [asset]})["assetOrError"]["assetMaterializations"]
            assert [(m["partition"], m["runId"]) for m in mats] == [(PARTITION, runs[0]["runId"])], asset

        shot = tmp_path / "asset-graph.png"
        subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                        "--hide-scrollbars", "--window-size=1400,900", "--virtual-time-budget=20000",
                        f"--screenshot={shot}", f"http://127.0.0.1:{port}/asset-groups"],
                       capture_output=True, timeout=180, check=False)
        data = shot.read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000, len(data)
    finally:
        stop(proc)
