"""Dagster definitions: wiring only. ``build_defs`` lets tests and the CLI build the same project."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import dagster as dg

from dagster_project import distributed
from dagster_project.assets import bundle, grid, reference, sweep, workload
from dagster_project.resources import GridshiftResource

ALL_ASSETS = [*reference.ASSETS, *grid.ASSETS, *workload.ASSETS, *bundle.ASSETS, *sweep.ASSETS]


def build_defs(resource_overrides: Mapping[str, Any] | None = None) -> dg.Definitions:
    resources: dict[str, Any] = {"gridshift": GridshiftResource()}
    resources.update(resource_overrides or {})
    return dg.Definitions(
        assets=ALL_ASSETS,
        resources=resources,
        jobs=[
            dg.define_asset_job("ingest_grid", selection=dg.AssetSelection.groups("grid")),
            sweep.benchmark_sweep,
            *distributed.JOBS,
        ],
    )


defs = build_defs()

