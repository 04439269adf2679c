"""A bundle at another scale and GPU generation (issue 34): the workload grows by its arrival rate with the
trace's job sizes, the sites are sized for it, both options are recorded, and the run's energy, carbon, water
and cost identities hold on it. Exporting the rack preset (V100) afterwards derives the workload at load factor 1
again (the warehouse holds one (workload, year) set: the export notices a set of another scale)."""

from __future__ import annotations

import json

import polars as pl
import pytest

from gridshift import scale
from gridshift.bundle import verify_bundle
from scenario_builder.bundle import BuildParams
from tests.integration.helpers import assert_run_identities

REGIONS = ("DE-LU", "IN-WE")
SCALE = 0.01  # the range's lower end: ~67 GPUs of the PAI cluster, ~0.33 × the rack-sized year


@pytest.fixture(scope="module")
def bundles(bundle_home, shared_data, tmp_path_factory):
    """The ×0.01 H100 bundle, then the rack preset with V100s of the same regions and year: the second export finds
    the ×0.01 set in the warehouse and derives the load-factor-1 year again."""
    from dagster_project.runner import export_bundle as export

    params = BuildParams(regions=REGIONS, year=2022, workload="synthetic", max_gap_hours=8, scale=SCALE, gpu="H100")
    scaled = export(params, home=bundle_home, mirror=shared_data, out=tmp_path_factory.mktemp("scaled"))
    rack = export(BuildParams(regions=REGIONS, year=2022, workload="synthetic", max_gap_hours=8,
                              scale=scale.RACK_SCALE, gpu="V100"),
                  home=bundle_home, mirror=shared_data, out=tmp_path_factory.mktemp("rack"))
    return scaled, rack


@pytest.fixture(scope="module")
def scaled(bundles):
    return bundles[0]


def test_the_rack_preset_is_derived_again_and_records_nothing_new(bundles):
    m = json.loads((bundles[1].path / "manifest.json").read_text())
    assert "scale" not in m["parameters"] and "gpu" not in m["parameters"]
    assert json.loads(m["parameters"]["workload_params"]["extra"][0][1])["load_factor"] == 1.0
    dcs = json.loads((bundles[1].path / "datacenters.json").read_text())["datacenters"]
    assert {(d["physics"]["gpu_model"], d["physics"]["gpu_max_w"]) for d in dcs} == {("V100", 250.0)}


def test_scale_and_gpu_are_recorded_and_the_sites_sized_for_them(scaled):
    assert verify_bundle(scaled.path).ok
    m = json.loads((scaled.path / "manifest.json").read_text())
    assert m["parameters"]["scale"] == SCALE and m["parameters"]["gpu"] == "H100"
    synth = json.loads(m["parameters"]["workload_params"]["extra"][0][1])
    assert synth["load_factor"] == SCALE / scale.RACK_SCALE
    # the mean GPU demand is the scale's share of the PAI cluster at the declared utilisation (one drawn year)
    demand = sum(s["mean_demand"]["gpus"] for s in m["sizing"]["sites"].values())
    assert demand == pytest.approx(SCALE * scale.SOURCE_CLUSTER_GPUS * 0.5, rel=0.08)
    dcs = json.loads((scaled.path / "datacenters.json").read_text())["datacenters"]
    assert {d["physics"]["gpu_model"] for d in dcs} == {"H100"}
    assert {d["physics"]["gpu_max_w"] for d in dcs} == {1225.0}


def test_job_sizes_keep_the_traces_distribution(bundles):
    """Scaling draws more (or fewer) jobs from the same size distributions: it neither shrinks nor copies them, so
    the large multi-GPU tasks keep their share and the task count follows the load factor."""
    small, rack = (pl.read_parquet(b.path / "tasks.parquet", columns=["gpus", "task_id"]) for b in bundles)
    assert small["task_id"].n_unique() == small.height
    assert small.height / rack.height == pytest.approx(SCALE / scale.RACK_SCALE, rel=0.03)
    for q in (0.5, 0.9, 0.99):
        assert float(small["gpus"].quantile(q)) == pytest.approx(float(rack["gpus"].quantile(q)), rel=0.05), q
    big_small, big_rack = (float((t["gpus"] >= 8).mean()) for t in (small, rack))
    assert big_rack > 0 and big_small == pytest.approx(big_rack, rel=0.1)


def test_identities_hold_on_the_scaled_bundle(scaled):
    import sim_core

    assert_run_identities(sim_core.run(scaled.path, "lowest_carbon", seed=0, days=3), scaled.path)


def test_the_load_factor_1_demand_is_the_generators(bundles):
    """LOAD_FACTOR_1_MEAN_GPUS (read from the 2023 main job's sizing) is what the generator gives: another year's
    load-factor-1 draw has the same mean GPU demand within a few per cent (the sites' shares sum to the whole)."""
    m = json.loads((bundles[1].path / "manifest.json").read_text())
    demand = sum(s["mean_demand"]["gpus"] for s in m["sizing"]["sites"].values())
    assert demand == pytest.approx(scale.LOAD_FACTOR_1_MEAN_GPUS, rel=0.04)


def test_the_source_cluster_is_the_traces_machine_list(shared_data):
    """6,742 GPUs, 156,576 cores, 1,897 machines: the sums of pai_machine_spec (cluster-trace-gpu-v2020)."""
    import io
    import tarfile

    with tarfile.open(shared_data / "alibaba" / "gpu-v2020" / "pai_machine_spec.tar.gz") as tar:
        member = next(m for m in tar.getmembers() if m.name.endswith(".csv"))
        spec = pl.read_csv(io.BytesIO(tar.extractfile(member).read()), has_header=False,
                           new_columns=["machine", "gpu_type", "cap_cpu", "cap_mem", "cap_gpu"])
    assert spec.height == scale.SOURCE_CLUSTER_MACHINES
    assert int(spec["cap_gpu"].sum()) == scale.SOURCE_CLUSTER_GPUS
    assert int(spec["cap_cpu"].sum()) == scale.SOURCE_CLUSTER_CORES
