"""Sites files (several datacenters per location, cloud regions) and the network between sites."""

from __future__ import annotations

import json

import numpy as np
import polars as pl
import pytest

from gridshift.errors import DataError
from pipelines.sources import azure_latency
from pipelines.sources.network import PER_FLOW_CAP_MBPS
from scenario_builder import sites as S

ROWS = [
    {"site": "DE-LU.a", "location": "DE-LU", "total_cores": 4000, "total_gpus": 64, "total_mem_gb": 16000},
    {"site": "DE-LU.b", "location": "DE-LU", "lat": 50.0, "lon": 8.27, "total_cores": 2000},
    {"site": "aws-fra", "cloud_region": "aws:eu-central-1", "population_weight": 0.1},
    {"site": "in-mumbai", "location": "IN-WE"},
    {"site": "az-pune", "cloud_region": "azure:centralindia", "physics": {"condenser": "air"}},
]


def write(tmp_path, rows, name="sites.json"):
    p = tmp_path / name
    p.write_text(json.dumps({"sites": rows}))
    return p


def test_sites_file_reads_labels_locations_coordinates_and_capacities(tmp_path):
    p = write(tmp_path, ROWS)
    assert S.is_sites_file(p)
    sites = S.read(p)
    assert [s.label for s in sites] == ["DE-LU.a", "DE-LU.b", "aws-fra", "in-mumbai", "az-pune"]
    assert [s.location for s in sites] == ["DE-LU", "DE-LU", "DE-LU", "IN-WE", "IN-WE"]
    assert (sites[1].lat, sites[1].lon) == (50.0, 8.27) and (sites[2].lat, sites[2].lon) == (50.11, 8.68)
    assert sites[2].cloud_region == "aws:eu-central-1" and sites[0].cloud_region is None
    e = sites[0].entry
    assert (e["location"], e["signal_location"], e["total_cores"], e["total_gpus"]) == ("DE-LU.a", "DE-LU", 4000, 64)
    assert e["timezone"] == "Europe/Berlin" and e["capacity_source"] == "sites file"
    assert sites[4].entry["physics"]["condenser"] == "air" and sites[4].entry["timezone"] == "Asia/Kolkata"
    # a CSV sites file gives the same entries
    c = tmp_path / "sites.csv"
    c.write_text("site,location,cloud_region,total_cores\nx1,DE-LU,,100\nx2,,aws:eu-central-1,200\n")
    got = S.read(c)
    assert [(s.label, s.location, s.entry["total_cores"]) for s in got] == [("x1", "DE-LU", 100.0),
                                                                            ("x2", "DE-LU", 200.0)]
    # an override file (no 'site' key) is not a sites file
    o = tmp_path / "dc.json"
    o.write_text(json.dumps({"datacenters": [{"location": "DE-LU", "total_gpus": 8}]}))
    assert not S.is_sites_file(o)


@pytest.mark.parametrize(("row", "column", "value"), [
    ({"site": "x", "location": "XX-NOPE"}, "location", "XX-NOPE"),
    ({"site": "x", "cloud_region": "aws:eu-west-1"}, "cloud_region", "aws:eu-west-1"),  # zone IE: no location
    ({"site": "x", "cloud_region": "aws:nowhere-9"}, "cloud_region", "aws:nowhere-9"),
    ({"site": "x", "location": "DE-LU", "cloud_region": "aws:eu-central-1"}, "location", ["DE-LU", "aws:eu-central-1"]),
    ({"site": "../x", "location": "DE-LU"}, "site", "../x"),
    ({"site": "x", "location": "DE-LU", "total_cores": -5}, "total_cores", -5),
    ({"site": "x", "location": "DE-LU", "lat": 95}, "lat", 95),
    ({"site": "x", "location": "DE-LU", "cores": 5}, "cores", 5),
    ({"site": "DE-LU.a", "location": "DE-LU"}, "site", "DE-LU.a"),  # duplicated label
])
def test_bad_sites_file_names_file_row_column_value(tmp_path, row, column, value):
    p = write(tmp_path, [ROWS[0], row])
    with pytest.raises(DataError) as exc:
        S.read(p)
    e = exc.value
    assert e.file == str(p) and e.column == column and 2 in list(e.rows)
    assert value in list(e.values)


def loc_net(codes, usd=0.08, thr=100.0, rtt=150.0):
    rows = [(a, b, 0.0 if a == b else usd, PER_FLOW_CAP_MBPS if a == b else thr, 0.0 if a == b else rtt)
            for a in codes for b in codes]
    return pl.DataFrame(rows, schema=["src_location", "dst_location", "usd_per_gb", "throughput_mbps", "rtt_ms"],
                        orient="row")


def test_site_network_inside_and_between_locations(tmp_path):
    sites = S.read(write(tmp_path, ROWS))
    net = S.site_network(sites, loc_net(["DE-LU", "IN-WE"]), "aws", window_mbit_ms=12241.0)
    n = len(sites)
    assert net.height == n * n
    m = {(r["src_location"], r["dst_location"]): r for r in net.iter_rows(named=True)}
    # a site to itself: nothing moves
    assert m[("DE-LU.a", "DE-LU.a")] == {"src_location": "DE-LU.a", "dst_location": "DE-LU.a", "usd_per_gb": 0.0,
                                         "throughput_mbps": PER_FLOW_CAP_MBPS, "rtt_ms": 0.0}
    # two sites of one location 30 km apart: availability zones (2 ms, per-flow cap, AWS inter-AZ 0.02 USD/GB)
    ab = m[("DE-LU.a", "DE-LU.b")]
    assert (ab["rtt_ms"], ab["throughput_mbps"], ab["usd_per_gb"]) == (2.0, PER_FLOW_CAP_MBPS, 0.02)
    # Mumbai -> Pune (~120 km): the Azure P50 distance fit and the window / RTT
    d = float(azure_latency.great_circle_km(19.08, 72.88, 18.5822, 73.9197))
    assert 100 < d < 150
    fit = azure_latency.fit(azure_latency.parse(azure_latency.raw()))
    mp = m[("in-mumbai", "az-pune")]
    assert mp["rtt_ms"] == pytest.approx(float(fit.rtt_ms(d)), rel=1e-12)
    assert mp["throughput_mbps"] == pytest.approx(min(12241.0 / mp["rtt_ms"], PER_FLOW_CAP_MBPS), rel=1e-12)
    # between locations: the locations' path, whichever sites
    for a in ("DE-LU.a", "DE-LU.b", "aws-fra"):
        for b in ("in-mumbai", "az-pune"):
            assert (m[(a, b)]["usd_per_gb"], m[(a, b)]["throughput_mbps"], m[(a, b)]["rtt_ms"]) == (0.08, 100.0, 150.0)
    # symmetric inside a location; GCP / Azure inter-zone prices
    assert m[("DE-LU.b", "DE-LU.a")]["rtt_ms"] == 2.0
    g = S.site_network(sites, loc_net(["DE-LU", "IN-WE"]), "azure", None)
    fra = g.filter((pl.col("src_location") == "DE-LU.a") & (pl.col("dst_location") == "aws-fra"))
    assert fra["usd_per_gb"][0] == 0.0
    u = np.asarray(g["usd_per_gb"]).reshape(n, n)
    assert (np.diag(u) == 0).all()
