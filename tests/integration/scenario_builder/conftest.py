"""Bundle tests: one real slice of ../shared/data ingested once per session into a tmp home.

The session export runs the whole path from an empty warehouse: plan → ingest the missing
partitions through the Dagster assets (the regions' 2022 signals plus the 2023 neighbours from the
mirror) → resample → write. Regions cover the DST rules of Europe (DE-LU), the US (US-CAL-CISO),
the southern hemisphere (AU-NSW) and a half-hour offset (IN-WE).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from dagster_project.runner import Exported
from gridshift.home import Home
from scenario_builder.bundle import BuildParams

REGIONS = ("DE-LU", "US-CAL-CISO", "AU-NSW", "IN-WE")
YEAR = 2022
# US-CAL-CISO's 2022 Open-Meteo file starts 2022-01-01 07:00 UTC and 2021 is not in the mirror:
# a 7-hour edge hold, so the limit is raised (the default-limit failure is tested separately).
MAX_GAP_H = 8.0


@pytest.fixture(scope="session")
def bundle_home(tmp_path_factory) -> Home:
    return Home.resolve(tmp_path_factory.mktemp("bundle_home")).ensure()


@pytest.fixture(scope="session")
def params() -> BuildParams:
    return BuildParams(regions=REGIONS, year=YEAR, workload="none", max_gap_hours=MAX_GAP_H)


@pytest.fixture(scope="session")
def built(bundle_home: Home, params: BuildParams, shared_data: Path, tmp_path_factory) -> Exported:
    from dagster_project.runner import export_bundle as export

    ticks: list[str] = []
    b = export(params, home=bundle_home, mirror=shared_data, out=tmp_path_factory.mktemp("out_a"),
               on_progress=ticks.append)
    assert ticks, "an empty warehouse must trigger ingests"
    return b
