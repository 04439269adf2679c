"""gridshift.scale and the GPU generations: the declared size of a bundle and its sites' hardware.

The defaults must keep the bundles of before issue 34 bit for bit (the rack preset is load factor 1.0 exactly
and records nothing; the V100 generation is the old physics object), every other value is recorded and a
value outside the range is refused by name."""

from __future__ import annotations

import json

import pytest

from gridshift import scale
from gridshift.dc_params import GPU_GENERATIONS, GPU_PRESETS, DatacenterParams
from gridshift.errors import GridshiftError
from gridshift.export_defaults import TARGET_UTILIZATION
from scenario_builder import datacenters as dc_mod
from scenario_builder.bundle import BuildParams, workload_load_factor

REGIONS = ("US-CAL-CISO", "DE-LU", "SG")


def test_rack_is_load_factor_one_exactly_and_source_is_the_pai_cluster():
    assert scale.load_factor(scale.PRESETS["rack"]) == 1.0
    assert pytest.approx(103.114516 / 3371.0, rel=1e-12) == scale.RACK_SCALE
    # ×1: the mean GPU demand of the whole PAI 2020 cluster at the declared utilisation
    assert scale.load_factor(1.0) * scale.LOAD_FACTOR_1_MEAN_GPUS == pytest.approx(
        scale.SOURCE_CLUSTER_GPUS * TARGET_UTILIZATION, rel=1e-12)
    assert scale.load_factor(10.0) == pytest.approx(10.0 * 3371.0 / 103.114516, rel=1e-12)
    assert scale.parse("rack") == scale.RACK_SCALE and scale.parse("source") == 1.0 == scale.parse("x1")
    assert scale.parse("0.5") == 0.5 and scale.parse("×10") == 10.0


@pytest.mark.parametrize("bad", [0.0, 0.0099, 10.01, -1.0, float("nan"), float("inf"), True, "1"])
def test_scale_outside_its_range_is_refused_by_name(bad):
    with pytest.raises(scale.ScaleError, match="scale"):
        scale.check(bad)
    if isinstance(bad, float):
        with pytest.raises(scale.ScaleError, match=r"\[0.01, 10\]"):
            BuildParams(regions=REGIONS, year=2023, scale=bad)


def test_parse_refuses_words_it_does_not_know():
    with pytest.raises(scale.ScaleError, match="'huge'"):
        scale.parse("huge")
    with pytest.raises(scale.ScaleError, match="outside its range"):
        scale.parse("20")


def test_the_default_is_the_source_cluster_with_h100s_and_the_rack_preset_records_nothing_new():
    default = BuildParams(regions=REGIONS, year=2023)
    assert default.scale == 1.0 and default.gpu == "H100"
    assert default.load_factor == pytest.approx(32.6918, rel=1e-5)
    mp = default.manifest_parameters()
    assert mp["scale"] == 1.0 and mp["gpu"] == "H100"
    rack = BuildParams(regions=REGIONS, year=2023, scale=scale.RACK_SCALE, gpu="V100")
    assert rack.load_factor == 1.0
    assert "scale" not in rack.manifest_parameters() and "gpu" not in rack.manifest_parameters()


def test_a_manifest_is_read_back_with_absent_meaning_rack_and_v100():
    """A manifest leaves out the pre-issue-34 values: read back, they are those, not the export's current default."""
    rack = BuildParams(regions=REGIONS, year=2023, scale=scale.RACK_SCALE, gpu="V100")
    assert BuildParams.from_manifest(rack.manifest_parameters()) == rack
    default = BuildParams(regions=REGIONS, year=2023)
    assert BuildParams.from_manifest(default.manifest_parameters()) == default
    assert BuildParams.from_manifest({**default.manifest_parameters(), "workload_params": {}}) == default


@pytest.mark.parametrize("what", ["override file", "sites file"])
def test_a_manifest_of_a_datacenters_file_needs_the_file_back(what, tmp_path):
    """The manifest records that the datacenters came from a file, not its path: read back without the file it is
    refused by name (not taken for a path called "override file"); with the file, the parameters name it."""
    params = {**BuildParams(regions=REGIONS, year=2023).manifest_parameters(), "datacenters": what}
    with pytest.raises(GridshiftError, match=rf"datacenters came from a file \({what};.*give that file"):
        BuildParams.from_manifest(params)
    f = tmp_path / "dc.yaml"
    f.write_text("{}\n")
    assert BuildParams.from_manifest(params, datacenters_file=str(f)).datacenters == str(f)


@pytest.mark.parametrize(("parameters", "named"), [
    (None, "must be a JSON object, got NoneType"),
    ({"regions": ["DE-LU"], "year": 2023, "evil": 1}, r"unknown \['evil'\]"),
    ({"year": 2023}, r"lack \['regions'\]"),
    ({"regions": "DE-LU", "year": 2023}, "regions must be a list of region codes, got 'DE-LU'"),
    ({"regions": ["DE-LU"], "year": "2023"}, "--year must be an integer, got '2023'"),
    ({"regions": ["DE-LU"], "year": 2023, "seed": 1.5}, "--seed must be a non-negative integer, got 1.5"),
    ({"regions": ["DE-LU"], "year": 2023, "max_gap_hours": None}, "--max-gap-hours must be a number, got None"),
    ({"regions": ["DE-LU"], "year": 2023, "target_utilization": "half"}, "--target-utilization must be a number"),
    ({"regions": ["DE-LU"], "year": 2023, "datacenters": 5}, "--datacenters must be a string, got 5"),
    ({"regions": ["DE-LU"], "year": 2023, "carbon_basis": ["direct"]}, "--carbon must be a string"),
    ({"regions": ["DE-LU"], "year": 2023, "gpu": {"H100": 1}}, "--gpu must be a string"),
    ({"regions": ["DE-LU"], "year": 2023, "scale": "1"}, "got '1'"),
])
def test_a_hostile_manifest_is_refused_by_name(parameters, named):
    """What a bundle's manifest says is read back only as build parameters: anything else is refused, named."""
    with pytest.raises(GridshiftError, match=named):
        BuildParams.from_manifest(parameters)


def test_scale_applies_to_the_synthetic_workload_only():
    with pytest.raises(scale.ScaleError, match="alibaba-2020"):
        BuildParams(regions=REGIONS, year=2023, workload="alibaba-2020", scale=1.0)
    trace = BuildParams(regions=REGIONS, year=2023, workload="alibaba-2020")  # the trace as it is
    assert trace.scale == scale.RACK_SCALE and trace.load_factor == 1.0


def test_unknown_gpu_is_refused():
    with pytest.raises(Exception, match="--gpu must be one of"):
        BuildParams(regions=REGIONS, year=2023, gpu="B200")


def test_v100_generation_is_the_old_physics_bit_for_bit():
    old = DatacenterParams()
    assert old.with_gpu("V100") == old
    assert json.dumps(old.with_gpu("V100").to_dict(), sort_keys=True) == json.dumps(old.to_dict(), sort_keys=True)
    assert dc_mod.default_entry("DE-LU", "default", "V100")["physics"] == old.to_dict()
    assert dc_mod.default_entry("DE-LU") == dc_mod.default_entry("DE-LU", "default", "H100")  # the default now


def test_a100_and_h100_servers_carry_their_dgx_host_power():
    assert DatacenterParams().cpu_server_max_w == 400.0  # the CPU server the host extra excludes
    a, h = GPU_GENERATIONS["A100"], GPU_GENERATIONS["H100"]
    assert a.host_extra_w == 6500.0 - 8 * 400.0 - 400.0 == 2900.0
    assert h.host_extra_w == 10200.0 - 8 * 700.0 - 400.0 == 4200.0
    p = DatacenterParams().with_gpu("H100")
    assert (p.gpu_model, p.gpu_idle_w, p.gpu_max_w, p.gpus_per_server) == ("H100", 70.0, 1225.0, 8.0)
    # a full 8-GPU server on the curve (u = 1) plus the model's CPU server at its max: the DGX's rated maximum
    for g in (a, h):
        q = DatacenterParams().with_gpu(g.model)
        assert 8 * q.gpu_max_w + q.cpu_server_max_w == g.system_max_w
        assert q.gpu_idle_w == GPU_PRESETS[g.model][0]
    entry = dc_mod.default_entry("SG", "default", "A100")
    assert entry["physics"]["gpu_max_w"] == 762.5 and entry["physics"]["gpu_model"] == "A100"


def test_stored_load_factor_is_read_where_each_source_records_it():
    synth = {"load_factor": 1.0, "extra": [["synthetic", json.dumps({"load_factor": 32.5, "seed": 0})]]}
    assert workload_load_factor(synth) == 32.5
    assert workload_load_factor({"load_factor": 2.0, "extra": []}) == 2.0
    assert workload_load_factor(None) is None and workload_load_factor({}) is None
