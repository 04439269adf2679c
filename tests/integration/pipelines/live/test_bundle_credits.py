"""Every registered source is credited — licence, attribution, URL from ``gridshift.sources`` — in every
bundle whose data came from it, live sources included (the loopback fakes stand in for the publishers)."""

from __future__ import annotations

import json

from dagster_project.runner import export_bundle, materialize_workload
from gridshift import sources
from gridshift.home import Home
from gridshift.scale import RACK_SCALE
from scenario_builder.bundle import BuildParams
from tests.integration.pipelines.workload.workload_fixture import write_trace
from warehouse.ingest import ingest_grid


def test_every_registered_source_is_credited_in_the_bundles_that_use_it(fake, shared_data, tmp_path, monkeypatch):
    home = Home(tmp_path / "home").ensure()
    # live partitions: DE-LU from the Electricity Maps CSV download, ENTSO-E and the Open-Meteo API;
    # US-CAL-CISO's price through the ISO adapter, its carbon through the API v3 (the CSV is not published);
    # SG from the mirror's files (the standardized price CSV, the Electricity Maps and Open-Meteo files)
    for kind, region in (("carbon", "DE-LU"), ("price", "DE-LU"), ("weather", "DE-LU"), ("price", "US-CAL-CISO"),
                         ("weather", "US-CAL-CISO")):
        ingest_grid(kind, region, 2023, home=home, mirror=None, live=True)
    monkeypatch.setenv("GRIDSHIFT_EMAPS_CSV_URL", f"{fake.url}/emaps-csv/unpublished-{{zone}}_{{year}}_hourly.csv")
    assert ingest_grid("carbon", "US-CAL-CISO", 2023, home=home, mirror=None, live=True).source == \
        "electricitymaps-api-v3"
    materialize_workload(workload="alibaba-2020", years=[2023], home=home, mirror=shared_data,
                         trace_dir=write_trace(tmp_path / "trace"))
    manifests = {}
    for workload in ("alibaba-2023", "alibaba-2020", "synthetic"):
        done = export_bundle(BuildParams(regions=("DE-LU", "US-CAL-CISO", "SG"), year=2023, workload=workload,
                                         max_gap_hours=8, scale=RACK_SCALE, gpu="V100"),
                             home=home, mirror=shared_data, live=True, out=tmp_path / "bundles")
        manifests[workload] = json.loads((done.path / "manifest.json").read_text())
    for name in sources.names():
        using = [w for w, m in manifests.items() if name in {d["source"] for d in m["lineage"]} | {w}]
        assert using, f"no test bundle used {name}: extend this test when a source is registered"
        for w in using:
            assert sources.get(name).credit() in manifests[w]["attributions"], (name, w)
    for w, m in manifests.items():  # and nothing is credited that the bundle did not use
        assert {a["source"] for a in m["attributions"]} == {d["source"] for d in m["lineage"]} | {w}
