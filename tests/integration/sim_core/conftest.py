"""Shared set-up of the engine's integration tests: the main job at the rack preset with V100s, exported once per
session (the README's main job itself, at the source cluster's size, is tests/integration/test_readme.py's)."""

from __future__ import annotations

import pytest

#: the main job's bundle before issue 34 made the source cluster with H100s the default: the ``rack`` preset with
#: V100s reproduces it byte for byte, which the fixture checks (its published numbers stay reproducible)
RACK_JOB_ID = "0aa016f2fbf57f59"


@pytest.fixture(scope="session")
def rack_job(shared_data, tmp_path_factory):
    """The main job's regions and year (US-CAL-CISO, DE-LU, SG x 2023, the synthetic year) at ``--scale rack
    --gpu V100``, exported from the mirror into a fresh home; its id is checked to be the pre-issue-34 main job's."""
    from dagster_project.runner import export_bundle
    from gridshift import scale
    from gridshift.home import Home
    from scenario_builder.bundle import BuildParams

    home = Home.resolve(tmp_path_factory.mktemp("rack_job_home")).ensure()
    built = export_bundle(BuildParams(regions=("US-CAL-CISO", "DE-LU", "SG"), year=2023, scale=scale.RACK_SCALE,
                                      gpu="V100"), home=home, mirror=shared_data)
    assert built.bundle_id == RACK_JOB_ID
    return built.path
