"""Shared set-up of the engine's integration tests: the main job at the rack preset with V100s, exported once per
session (the README's main job itself, at the source cluster's size, is tests/integration/test_readme.py's)."""

from __future__ import annotations

import pytest


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
    assert built.bundle_id == scale.RACK_MAIN_JOB_ID  # the main job before issue 34, byte for byte
    return built.path
