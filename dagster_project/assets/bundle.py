"""The scenario bundle as a Dagster asset: the UI builds the same bundle as ``scenario_builder export``.
# No "from __future__ import annotations": Dagster inspects the annotations at runtime.

Configure regions/year/... in the launchpad (``BundleConfig``). The asset calls
``scenario_builder.export.export`` (which materializes missing grid partitions in-process, then
assembles and writes the bundle atomically) and reports the bundle id, path and data quality.
"""

import dataclasses
from pathlib import Path
from typing import Optional

import dagster as dg

from dagster_project.resources import GridshiftResource
from scenario_builder.bundle import BuildParams

_DEFAULTS = {f.name: f.default for f in dataclasses.fields(BuildParams)}


class BundleConfig(dg.Config):
    """Launchpad config: the fields of ``BuildParams`` (same names, defaults read from it) + ``out_dir``."""

    regions: list[str] = ["US-CAL-CISO", "DE-LU", "CL-SIC", "SG", "AU-NSW"]
    year: int = 2023
    workload: str = _DEFAULTS["workload"]
    provider: str = _DEFAULTS["provider"]
    carbon_basis: str = _DEFAULTS["carbon_basis"]
    seed: int = _DEFAULTS["seed"]
    max_gap_hours: float = _DEFAULTS["max_gap_hours"]
    max_edge_fill_hours: float = _DEFAULTS["max_edge_fill_hours"]
    datacenters_file: Optional[str] = None  # noqa: UP045 - Dagster config needs Optional
    out_dir: Optional[str] = None  # noqa: UP045 - default: <home>/bundles

    def build_params(self) -> BuildParams:
        values = {f.name: getattr(self, f.name) for f in dataclasses.fields(BuildParams)}
        values["regions"] = tuple(self.regions)
        values["datacenters_file"] = Path(self.datacenters_file) if self.datacenters_file else None
        return BuildParams(**values)


@dg.asset(
    group_name="bundles", kinds={"parquet"},
    deps=["grid_carbon", "grid_price", "weather", "egress_price", "network_path"],
    description="A versioned, content-addressed 15-minute scenario bundle (docs/bundle_format.md).",
)
def scenario_bundle(context: dg.AssetExecutionContext, config: BundleConfig,
                    gridshift: GridshiftResource) -> dg.MaterializeResult:
    from scenario_builder.export import export  # lazy: export imports the definitions for materialize

    built = export(config.build_params(), home=gridshift.home_obj(), mirror=gridshift.mirror_path(),
                   out=Path(config.out_dir) if config.out_dir else None,
                   on_progress=lambda d: context.log.info(f"ingested {d}"))
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
