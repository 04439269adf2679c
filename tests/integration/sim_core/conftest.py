"""Shared set-up of the engine's integration tests: the README's main-job bundle, exported once per session."""

from __future__ import annotations

import pytest

MAIN_JOB_ID = "0aa016f2fbf57f59"  # README's main job


@pytest.fixture(scope="session")
def main_job(shared_data, tmp_path_factory):
    """The README's main-job bundle (US-CAL-CISO, DE-LU, SG x 2023, the synthetic year) exported from the mirror
    into a fresh home and loaded; its id is checked to be the README's."""
    from dagster_project.runner import export_bundle
    from gridshift.home import Home
    from scenario_builder.bundle import BuildParams

    home = Home.resolve(tmp_path_factory.mktemp("main_job_home")).ensure()
    built = export_bundle(BuildParams(regions=("US-CAL-CISO", "DE-LU", "SG"), year=2023), home=home,
                          mirror=shared_data)
    assert built.bundle_id == MAIN_JOB_ID
    return built.path
