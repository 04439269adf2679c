"""The scenario bundle as a Dagster asset: the UI builds the same bundle as ``scenario_builder export``.
# No "from __future__ import annotations": Dagster inspects the annotations at runtime.

The asset declares every input it reads from the warehouse as a dependency (grid signals, workload,
locations, egress prices, network paths), so the asset graph shows the lineage from the raw files
to the bundle. It builds from the warehouse only (``scenario_builder.export.build``); inputs that
are missing are listed in the failure, to be materialized first (``scenario_builder export`` does
that through ``dagster_project.runner.export_bundle``, on the same instance).
"""

import dataclasses
from pathlib import Path
from typing import Optional

import dagster as dg

from dagster_project.assets.grid import grid_carbon, grid_price, weather
from dagster_project.assets.reference import egress_price, locations, network_path
from dagster_project.assets.workload import workload_tasks
from dagster_project.resources import GridshiftResource
from scenario_builder.bundle import BuildParams
from scenario_builder.export import build

_DEFAULTS = {f.name: f.default for f in dataclasses.fields(BuildParams)}


class BundleConfig(dg.Config):
    """Launchpad config: the fields of ``BuildParams`` (same names, defaults read from it) + ``out_dir``."""

    regions: list[str] = ["US-CAL-CISO", "DE-LU", "SG"]
    year: int = 2023
    workload: str = _DEFAULTS["workload"]
    provider: str = _DEFAULTS["provider"]
    carbon_basis: str = _DEFAULTS["carbon_basis"]
    seed: int = _DEFAULTS["seed"]
    max_gap_hours: float = _DEFAULTS["max_gap_hours"]
    max_edge_fill_hours: float = _DEFAULTS["max_edge_fill_hours"]
    datacenters: str = _DEFAULTS["datacenters"]  # sized | reference | path of an override file
    target_utilization: float = _DEFAULTS["target_utilization"]
    physics: str = _DEFAULTS["physics"]  # facility preset (gridshift.dc_params.FACILITY_PRESETS)
    flexibility: str = _DEFAULTS["flexibility"]  # task flexibility: default | none
    # × the source cluster (gridshift.scale; rack = 0.0306); None: the workload's own (source for the synthetic)
    scale: Optional[float] = _DEFAULTS["scale"]  # noqa: UP045
    gpu: str = _DEFAULTS["gpu"]  # GPU generation of every site: V100 | A100 | H100
    out_dir: Optional[str] = None  # noqa: UP045 - default: <home>/bundles

    @classmethod
    def from_params(cls, params: BuildParams, out_dir: Path | None = None) -> "BundleConfig":
        values = {f.name: getattr(params, f.name) for f in dataclasses.fields(BuildParams)}
        values["regions"] = list(params.regions)
        return cls(**values, out_dir=str(out_dir) if out_dir else None)

    def build_params(self) -> BuildParams:
        values = {f.name: getattr(self, f.name) for f in dataclasses.fields(BuildParams)}
        values["regions"] = tuple(self.regions)
        return BuildParams(**values)


@dg.asset(
    group_name="bundles", kinds={"parquet"},
    deps=[grid_carbon, grid_price, weather, workload_tasks, locations, egress_price, network_path],
    description="A versioned, content-addressed 15-minute scenario bundle (docs/bundle_format.md), built "
    "from the warehouse.",
)
def scenario_bundle(context: dg.AssetExecutionContext, config: BundleConfig,
                    gridshift: GridshiftResource) -> dg.MaterializeResult:
    built = build(config.build_params(), gridshift.home_obj(), Path(config.out_dir) if config.out_dir else None,
                  mirror=gridshift.mirror_path())
    context.log.info(f"bundle {built.bundle_id} at {built.path}{' (reused)' if built.reused else ''}")

    def pct(x):
        return "" if x is None else f"{x:.4f}"

    table = "| region | signal | coverage | estimated | filled |\n|---|---|---|---|---|\n" + "\n".join(
        f"| {r['location']} | {r['signal']} | {pct(r['coverage'])} | {pct(r['estimated_share'])} | "
        f"{r['filled_count']} |"
        for r in built.quality_rows
    )
    return dg.MaterializeResult(metadata={
        "bundle_id": built.bundle_id,
        "path": dg.MetadataValue.path(str(built.path)),
        "reused": built.reused,
        "n_tasks": built.manifest.get("n_tasks", 0),
        "quality": dg.MetadataValue.md(table),
    })


ASSETS = [scenario_bundle]
