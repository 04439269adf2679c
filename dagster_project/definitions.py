"""Dagster definitions: wiring only. ``build_defs`` lets tests and the CLI build the same project.

The code location's ``defs`` is the project's own definitions merged with those of the ``dg`` defs folder
(``dagster_project/defs``: ``dg scaffold defs dagster.asset my_asset.py`` writes there, ``dg check defs``
loads both)."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

import dagster as dg

from dagster_project import distributed
from dagster_project.assets import bundle, grid, raw, reference, sweep, workload
from dagster_project.jobs import JOB_OF_GROUP
from dagster_project.partitions import remove_bad_year_keys_sensor
from dagster_project.resources import GridshiftResource

ALL_ASSETS = [*raw.ASSETS, *reference.ASSETS, *grid.ASSETS, *workload.ASSETS, *bundle.ASSETS, *sweep.ASSETS]


def build_defs(resource_overrides: Mapping[str, Any] | None = None) -> dg.Definitions:
    resources: dict[str, Any] = {"gridshift": GridshiftResource()}
    resources.update(resource_overrides or {})
    return dg.Definitions(
        assets=ALL_ASSETS,
        resources=resources,
        jobs=[
            # the named jobs the command line's runs are recorded under (dagster_project.jobs)
            *(dg.define_asset_job(job, selection=dg.AssetSelection.groups(group))
              for group, job in JOB_OF_GROUP.items()),
            sweep.benchmark_sweep,
            *distributed.JOBS,
        ],
        sensors=[remove_bad_year_keys_sensor],
    )


defs = dg.Definitions.merge(build_defs(), dg.load_from_defs_folder(path_within_project=Path(__file__).parent))

