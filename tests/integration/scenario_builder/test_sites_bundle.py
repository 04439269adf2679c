"""A bundle of several datacenters per location and cloud-region sites, built from the real mirror:
export -> verify -> load -> run, with the signals, the network and the run's conservation laws checked."""

from __future__ import annotations

import json

import numpy as np
import polars as pl
import pytest

from gridshift.scale import RACK_SCALE
from scenario_builder.bundle import BuildParams

SITES = [
    {"site": "DE-LU.a", "location": "DE-LU", "total_cores": 3000, "total_gpus": 48, "total_mem_gb": 24000},
    {"site": "DE-LU.b", "location": "DE-LU", "lat": 50.0, "lon": 8.27, "total_cores": 3000, "total_gpus": 48,
     "total_mem_gb": 24000},
    {"site": "aws-fra", "cloud_region": "aws:eu-central-1", "total_cores": 3000, "total_gpus": 48,
     "total_mem_gb": 24000},
    {"site": "in-mumbai", "location": "IN-WE", "total_cores": 3000, "total_gpus": 48, "total_mem_gb": 24000},
    {"site": "az-pune", "cloud_region": "azure:centralindia", "total_cores": 3000, "total_gpus": 48,
     "total_mem_gb": 24000},
]


@pytest.fixture(scope="module")
def sites_bundle(bundle_home, shared_data, tmp_path_factory):
    from dagster_project.runner import export_bundle as export

    tmp = tmp_path_factory.mktemp("sites")
    f = tmp / "sites.json"
    f.write_text(json.dumps({"sites": SITES}))
    # the same inputs as test_datacenters_workload's bundle (the session's warehouse is reused)
    b = export(BuildParams(regions=("DE-LU", "IN-WE"), year=2022, workload="synthetic", max_gap_hours=8,
                           datacenters=str(f), scale=RACK_SCALE, gpu="V100"),
               home=bundle_home, mirror=shared_data, out=tmp / "out")
    plain = export(BuildParams(regions=("DE-LU", "IN-WE"), year=2022, workload="none", max_gap_hours=8,
                               datacenters="reference"), home=bundle_home, mirror=shared_data, out=tmp / "plain")
    return b.path, plain.path


def test_sites_share_their_locations_signals_exactly(sites_bundle):
    import sim_core

    path, plain = sites_bundle
    sc, ref = sim_core.load(path), sim_core.load(plain)
    assert sc.locations == ["DE-LU.a", "DE-LU.b", "aws-fra", "in-mumbai", "az-pune"]
    assert sc.signal_locations == ["DE-LU", "DE-LU", "DE-LU", "IN-WE", "IN-WE"]
    for name in ("carbon_g_per_kwh", "price_usd_per_mwh", "temp_c", "wetbulb_c"):
        a, r = getattr(sc, name), getattr(ref, name)
        for d, loc in enumerate(sc.signal_locations):  # the cloud regions too: aws:eu-central-1 is zone DE
            np.testing.assert_array_equal(a[d], r[ref.locations.index(loc)])
    m = json.loads((path / "manifest.json").read_text())
    meta = m["location_meta"]
    assert meta["aws-fra"]["zone_id"] == "DE" and meta["aws-fra"]["location"] == "DE-LU"
    assert (meta["aws-fra"]["lat"], meta["aws-fra"]["lon"]) == (50.11, 8.68)
    assert meta["az-pune"]["cloud_region"] == "azure:centralindia" and meta["az-pune"]["zone_id"] == "IN-WE"
    assert m["parameters"]["datacenters"] == "sites file" and m["parameters"]["regions"] == ["DE-LU", "IN-WE"]
    # credits: every source of the lineage (the Azure RTT file now included: intra-location paths) credited
    credited = {a["source"] for a in m["attributions"]}
    lineage = {d["source"] for d in m["lineage"]}
    assert credited == lineage | {"synthetic"} and "azure-rtt-p50" in lineage
    dcs = json.loads((path / "datacenters.json").read_text())["datacenters"]
    assert [d["signal_location"] for d in dcs] == sc.signal_locations
    assert [d["total_cores"] for d in dcs] == [3000.0] * 5


def test_sites_bundle_verifies_and_its_paths_follow_the_model(sites_bundle):
    import sim_core
    from gridshift.bundle import verify_bundle

    path, plain = sites_bundle
    res = verify_bundle(path)
    assert not res.problems, res.problems
    sc, ref = sim_core.load(path), sim_core.load(plain)
    i = {c: k for k, c in enumerate(sc.locations)}
    r = {c: k for k, c in enumerate(ref.locations)}
    assert sc.rtt_ms[i["DE-LU.a"], i["DE-LU.b"]] == 2.0 == sc.rtt_ms[i["DE-LU.a"], i["aws-fra"]]
    assert sc.usd_per_gb[i["DE-LU.a"], i["aws-fra"]] == 0.02  # AWS inter-zone, both directions
    assert sc.rtt_ms[i["in-mumbai"], i["az-pune"]] > 8.0  # ~120 km apart: the distance fit
    for a in ("DE-LU.a", "DE-LU.b", "aws-fra"):
        for b in ("in-mumbai", "az-pune"):
            for m in ("usd_per_gb", "throughput_mbps", "rtt_ms"):
                assert getattr(sc, m)[i[a], i[b]] == getattr(ref, m)[r["DE-LU"], r["IN-WE"]]
                assert getattr(sc, m)[i[b], i[a]] == getattr(ref, m)[r["IN-WE"], r["DE-LU"]]


@pytest.mark.parametrize("policy", ["round_robin", "lowest_carbon"])
def test_sites_bundle_runs_conserving_energy_and_tasks(sites_bundle, policy):
    import sim_core

    path, _ = sites_bundle
    res = sim_core.run(path, policy, seed=0, days=7)
    t, s = res.totals, res.steps
    assert set(s["location"].cast(pl.String).to_list()) == {"DE-LU.a", "DE-LU.b", "aws-fra", "in-mumbai", "az-pune"}
    np.testing.assert_allclose(s["cooling_load_kw"].to_numpy(),
                               (s["it_kw"] + s["crac_fan_kw"] + s["lighting_kw"]).to_numpy(), rtol=1e-12)
    assert t["total_kwh"] == pytest.approx(s["total_kwh"].sum(), rel=1e-12)
    assert t["tasks_started"] + t["tasks_pending_at_end"] + t["tasks_queued_at_end"] + t["tasks_in_transit_at_end"] \
        + t["tasks_unschedulable"] == t["tasks"] == res.tasks.height > 10_000
    if policy == "round_robin":  # work went to every site
        assert res.tasks.filter(pl.col("status") == "started")["dest"].n_unique() == 5
    assert s.height == 5 * (7 * 96 + t["drain_steps"])  # the window, then the drain until the work is done
