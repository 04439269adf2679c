"""datacenters.json defaults/overrides, and a bundle with the real synthetic workload."""

from __future__ import annotations

import json

import polars as pl
import pytest

from gridshift import export_defaults as D
from gridshift import sources
from gridshift.dc_params import DatacenterParams
from gridshift.errors import DataError
from gridshift.scale import RACK_SCALE
from scenario_builder import datacenters as dcm
from scenario_builder.bundle import BuildParams


def test_defaults_match_the_reference_cluster_csv(shared_data):
    ref = pl.read_csv(shared_data / "reference/datacenters_reference.csv")
    for row in ref.iter_rows(named=True):
        e = dcm.default_entry(row["location"])
        for k in ("population_weight", "total_cores", "total_gpus", "total_mem_gb"):
            assert e[k] == float(row[k]), (row["location"], k)
    other = dcm.default_entry("FR")
    assert other["total_cores"] == ref["total_cores"].mean() and other["timezone"] == "Europe/Paris"
    assert other["physics"] == DatacenterParams().with_gpu(D.GPU).to_dict()  # the export's default generation


def test_override_json_and_csv(tmp_path):
    j = tmp_path / "dc.json"
    j.write_text(json.dumps({"datacenters": [
        {"location": "*", "physics": {"condenser": "air"}},
        {"location": "sg", "total_gpus": 2000, "physics": {"supply_air_c": 20.0}},  # any letter case
    ]}))
    out = dcm.overridden(["DE-LU", "SG"], j)
    assert out[1]["total_gpus"] == 2000 and out[1]["physics"]["supply_air_c"] == 20.0
    assert out[0]["physics"]["condenser"] == "air" == out[1]["physics"]["condenser"]
    assert out[0]["total_gpus"] == 600
    c = tmp_path / "dc.csv"
    c.write_text("location,total_cores,chiller_cop_water\nDE-LU,1000,5.5\n")
    out = dcm.overridden(["DE-LU"], c)
    assert out[0]["total_cores"] == 1000.0 and out[0]["physics"]["chiller_cop_water"] == 5.5


@pytest.mark.parametrize("body", [
    [{"location": "DE-LU", "total_cores": -1}],
    [{"location": "DE-LU", "cores": 5}],
    [{"location": "DE-LU", "physics": {"no_such_param": 1}}],
    [{"location": "DE-LU", "physics": {"condenser": "steam"}}],
    [{"location": "../../etc", "total_cores": 5}],
])
def test_override_rejects_bad_input(tmp_path, body):
    p = tmp_path / "dc.json"
    p.write_text(json.dumps(body))
    with pytest.raises(Exception) as exc:
        dcm.overridden(["DE-LU"], p)
    assert isinstance(exc.value, (DataError, ValueError)) or "location" in str(exc.value)


def test_synthetic_workload_bundle(bundle_home, shared_data, tmp_path):
    from dagster_project.runner import export_bundle as export
    from warehouse.db import read_table

    b = export(BuildParams(regions=("DE-LU", "IN-WE"), year=2022, workload="synthetic", max_gap_hours=8,
                           scale=RACK_SCALE, gpu="V100"),
               home=bundle_home, mirror=shared_data, out=tmp_path)
    tasks = pl.read_parquet(b.path / "tasks.parquet")
    n = read_table(bundle_home.warehouse_path, "SELECT count(*) AS n FROM workload_tasks WHERE workload = "
                   "'synthetic' AND year = 2022")["n"][0]
    assert tasks.height == n > 1_000_000
    assert tasks["arrival_ts_utc"].is_sorted() and tasks["task_id"].n_unique() == tasks.height
    assert (tasks["duration_s"] > 0).all()
    assert tasks["arrival_ts_utc"].min().year == 2022 == tasks["arrival_ts_utc"].max().year
    m = json.loads((b.path / "manifest.json").read_text())
    assert m["n_tasks"] == tasks.height and m["parameters"]["workload_seed"] == 0
    assert m["parameters"]["workload_params"]["bandwidth_model"] == "ai"
    assert m["parameters"]["workload_params"]["load_factor"] == 1.0
    # bundle format 2: every task carries the flexibility model's columns, exactly as the model gives them
    from pipelines.workload.flexibility import FlexParams, assign_flexibility

    assert m["format_version"] == 2 and m["parameters"]["flexibility"] == "default"
    again = assign_flexibility(tasks.drop("max_delay_s", "interruptible"), FlexParams(), seed=0)
    assert again.select(tasks.columns).equals(tasks)
    fx = m["flexibility"]
    assert fx["n_tasks"] == tasks.height and fx["n_interruptible"] == int(tasks["interruptible"].sum()) > 0
    assert fx["n_elastic"] == int((tasks["max_scale"] > 1).sum()) > 0
    assert set(tasks["max_delay_s"].unique().to_list()) == {21_600.0, 86_400.0}
    assert fx["parameters"]["params_sha256"] == FlexParams().manifest()["params_sha256"]
    from sim_core.scenario import load

    sc = load(b.path)  # loads as format 2: the columns reach the simulator unchanged
    assert sc.interruptible.sum() == fx["n_interruptible"]
    assert float(sc.marginal_throughput.max()) == float(tasks["marginal_throughput"].max()) > 0.8
    credited = {a["source"]: a for a in m["attributions"]}
    assert credited["synthetic"] == sources.get("synthetic").credit()
    assert set(credited) == {d["source"] for d in m["lineage"]} | {"synthetic"}
    # the default cluster is sized from this workload: under local_only each site's mean allocated share of
    # cores and GPUs lands in the documented band around the target (docs/bundles.md)
    assert m["parameters"]["datacenters"] == "sized" and m["sizing"]["target_utilization"] == 0.5
    dcs = json.loads((b.path / "datacenters.json").read_text())["datacenters"]
    assert all(d["capacity_source"].startswith("sized") for d in dcs)
    import sim_core

    steps = sim_core.run(b.path, "local_only", seed=0).steps
    util = steps.group_by("location").agg(pl.col("cpu_util").mean(), pl.col("gpu_util").mean())
    for row in util.iter_rows(named=True):
        assert 0.4 <= row["cpu_util"] <= 0.6 and 0.4 <= row["gpu_util"] <= 0.6, row
