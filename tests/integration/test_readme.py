"""The README's main job, run as written: its command builds the bundle id the README cites, a bundle of
MW-class sites of current GPUs (issue 34) on which a run keeps its energy, carbon, cost and water identities."""

from __future__ import annotations

import json
import re
import shlex
from pathlib import Path

import pytest
from typer.testing import CliRunner

from benchmarks._report import ROOT
from gridshift_cli import app
from tests.integration.helpers import assert_run_identities


def _main_job() -> tuple[list[str], str]:
    text = (ROOT / "README.md").read_text()
    main_job = r"# the main job[^\n]*\n(\./run\.sh (?:gridshift|scenario_builder) export [^\n]+)\n"
    command = re.search(main_job, text).group(1)
    cited = re.search(r"The main job writes bundle \*\*`([0-9a-f]{16})`\*\*", text).group(1)
    return shlex.split(command)[2:], cited


@pytest.fixture(scope="module")
def main_job(tmp_path_factory, shared_data) -> tuple[str, Path]:
    """(the id the README cites, the bundle its command builds in a fresh home)."""
    args, cited = _main_job()
    assert args[args.index("--mirror") + 1] == "../shared/data"
    args[args.index("--mirror") + 1] = str(shared_data)  # the same mirror, wherever this checkout keeps it
    home = tmp_path_factory.mktemp("readme_home")
    r = CliRunner().invoke(app, [*args, "--home", str(home)])
    assert r.exit_code == 0, r.output
    built = re.search(r"^id ([0-9a-f]{16})$", r.output, flags=re.M).group(1)
    return cited, home / "bundles" / built


def test_the_main_job_builds_the_bundle_the_readme_cites(main_job):
    cited, bundle = main_job
    assert bundle.name == cited, f"README.md cites bundle {cited}, the main job builds {bundle.name}: update README.md"
    readme = (ROOT / "README.md").read_text()
    assert set(re.findall(r"bundles/([0-9a-f]{16})", readme)) == {cited}


def test_the_main_jobs_sites_are_mw_class_with_current_gpus(main_job):
    """Each site holds at least 1,000 H100s in 8-GPU servers and draws MW of design IT power (issue 34)."""
    _, bundle = main_job
    for d in json.loads((bundle / "datacenters.json").read_text())["datacenters"]:
        phys = d["physics"]
        assert d["total_gpus"] >= 1000 and phys["gpu_model"] == "H100" and phys["gpus_per_server"] == 8, d["location"]
        assert d["total_gpus"] * phys["gpu_max_w"] / 1e6 > 1.0, d["location"]  # MW of GPU servers alone


def test_a_run_of_the_main_job_keeps_its_identities(main_job):
    """Two days of the 41 M-task year, a day of arrivals at a time (sim_core.chunks: the run reads its task columns
    by row group, not the year's)."""
    import sim_core

    _, bundle = main_job
    assert_run_identities(sim_core.run(bundle, "lowest_carbon", seed=0, days=2, chunk_steps=96), bundle)
