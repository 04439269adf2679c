"""The export defaults are declared once (``gridshift.export_defaults``): the ``export`` command's options,
``BuildParams`` and the Dagster launchpad config all carry the same values."""

from __future__ import annotations

import dataclasses

import typer

from dagster_project.assets.bundle import BundleConfig
from gridshift import export_defaults as D
from gridshift import scale
from gridshift.quality import MAX_EDGE_FILL, MAX_GAP
from gridshift_cli import app
from scenario_builder.bundle import BuildParams

#: export option name -> BuildParams field, where they differ
OPTION_TO_FIELD = {"carbon": "carbon_basis"}


def test_export_options_buildparams_and_launchpad_share_the_defaults():
    export = typer.main.get_command(app).commands["export"]
    options = {OPTION_TO_FIELD.get(p.name, p.name): p.default for p in export.params}
    fields = {f.name: f.default for f in dataclasses.fields(BuildParams) if f.default is not dataclasses.MISSING}
    launchpad = BundleConfig(regions=["DE-LU"], year=2023)
    assert set(fields) <= set(options)
    for name, default in fields.items():
        # (--scale's None: the workload's own, resolved by BuildParams: the source cluster for the synthetic one)
        assert options[name] == default, name
        assert getattr(launchpad, name) == default, name
    assert fields["scale"] is None and BuildParams(regions=("DE-LU",), year=2023).scale == scale.PRESETS[D.SCALE]
    assert launchpad.build_params().scale == 1.0 and launchpad.build_params().gpu == D.GPU == "H100"
    assert fields["max_gap_hours"] == MAX_GAP.total_seconds() / 3600 == 3.0
    assert fields["max_edge_fill_hours"] == MAX_EDGE_FILL.total_seconds() / 3600 == 15.0
    assert (fields["workload"], fields["provider"], fields["target_utilization"]) == (D.WORKLOAD, D.PROVIDER, 0.5)


def test_a_workload_derived_with_the_defaults_is_the_one_a_default_bundle_needs():
    """``gridshift ingest --sources workload`` and the workload asset's launchpad leave the load factor unset, and it
    resolves to the default bundle's (the synthetic year at the default scale, a trace at its own load): deriving
    with the defaults and then building a bundle with them never meets a workload of another size."""
    from dagster_project.assets.workload import WorkloadConfig
    from scenario_builder.bundle import default_load_factor
    from warehouse.ingest_workload import WORKLOADS

    ingest = {p.name: p.default for p in typer.main.get_command(app).commands["ingest"].params}
    assert ingest["load_factor"] is None and WorkloadConfig().load_factor is None
    for workload in WORKLOADS:
        scale_ok = workload == "synthetic"
        params = BuildParams(regions=("DE-LU",), year=2023, workload=workload)
        assert default_load_factor(workload) == params.load_factor, workload
        assert (default_load_factor(workload) > 1.0) == scale_ok, workload
    assert default_load_factor("synthetic") == scale.load_factor(scale.PRESETS[D.SCALE])
