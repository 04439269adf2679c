"""Contract, determinism, atomicity, verify and safety of exported bundles (real data)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import polars as pl
import pytest
from typer.testing import CliRunner

from dagster_project.runner import RunFailed
from dagster_project.runner import export_bundle as export
from gridshift.bundle import FORMAT_VERSION, TASKS_SCHEMA, verify_bundle
from gridshift.dc_params import DatacenterParams
from gridshift.errors import GridshiftError
from gridshift.hashing import compute_bundle_id
from gridshift.home import UnsafePathError
from gridshift.locations import UnknownLocationError
from gridshift_cli import app
from scenario_builder import bundle as bundle_mod
from scenario_builder.bundle import BuildParams
from scenario_builder.export import plan
from scenario_builder.resample import GapError
from tests.integration.scenario_builder.conftest import REGIONS, YEAR
from warehouse.db import read_table

runner = CliRunner()
FILES = ("datacenters.json", "manifest.json", "network.parquet", "signals.parquet", "tasks.parquet")


def test_layout_and_manifest(built):
    root = built.path
    assert sorted(p.name for p in root.iterdir()) == list(FILES)
    assert root.name == built.bundle_id and len(built.bundle_id) == 16
    m = json.loads((root / "manifest.json").read_text())
    assert m["format_version"] == FORMAT_VERSION == 2 and m["step_s"] == 900 and m["n_steps"] == 35040
    assert m["parameters"]["flexibility"] == "default" and m["flexibility"]["n_tasks"] == 0
    assert m["flexibility"]["parameters"]["long_max_delay_s"] == 86_400.0
    assert m["start_utc"] == "2022-01-01T00:00:00+00:00" and m["year"] == YEAR
    assert m["locations"] == list(REGIONS)
    assert m["bundle_id"] == compute_bundle_id(m) == built.bundle_id
    assert set(m["files"]) == set(FILES) - {"manifest.json"}
    assert m["parameters"]["carbon_basis"] == "direct" and m["parameters"]["max_gap_hours"] == 8.0
    assert m["location_meta"]["DE-LU"]["zone_id"] == "DE"
    assert m["location_meta"]["IN-WE"]["timezone"] == "Asia/Kolkata"
    # quality: IN-WE carbon is estimated for every hour upstream; US-CAL-CISO weather has a 7 h edge hold
    assert m["quality"]["IN-WE"]["carbon"]["estimated_share"] == 1.0
    q = m["quality"]["US-CAL-CISO"]["weather"]
    assert q["filled_count"] == 28 and q["max_gap_hours"] == 7.0 and q["coverage"] == pytest.approx(1 - 28 / 35040)
    assert m["quality"]["IN-WE"]["price"]["filled_count"] == 2  # 00:00, 00:15 before the first :30 price
    # lineage: every raw input of the four regions' 2022 signals, machine-independent URIs
    uris = {d["uri"] for d in m["lineage"]}
    assert "mirror:electricitymaps/DE-LU/DE-LU_2022_hourly.csv" in uris
    assert "mirror:open-meteo/AU-NSW/2023.json" in uris  # supplies AU-NSW's last hours of 2022 UTC
    assert "gridshift:data/egress/egress_rules.csv" in uris  # the versioned in-repo egress table
    assert {a["source"] for a in m["attributions"]} >= {"electricitymaps-csv", "open-meteo-archive"}
    assert any("ODbL" in a["licence"] for a in m["attributions"])
    assert set(m["resampling"]) >= {"carbon_g_per_kwh", "price_usd_per_mwh", "temp_c", "gap_fill"}
    text = (root / "manifest.json").read_text()
    assert "/tmp" not in text and "file://" not in text


def test_signals_schema_order_and_grid(built):
    sig = pl.read_parquet(built.path / "signals.parquet")
    assert sig.schema["ts_utc"] == pl.Datetime("us", "UTC")
    assert sig.height == 35040 * len(REGIONS)
    assert sig["location"].unique(maintain_order=True).to_list() == list(REGIONS)
    for code in REGIONS:
        ts = sig.filter(pl.col("location") == code)["ts_utc"]
        assert ts[0].isoformat() == "2022-01-01T00:00:00+00:00"
        assert ts.diff().drop_nulls().dt.total_seconds().unique().to_list() == [900]
    assert sig.null_count().sum_horizontal()[0] == 0
    net = pl.read_parquet(built.path / "network.parquet")
    assert net.height == len(REGIONS) ** 2
    de_sg = net.filter((pl.col("src_location") == "DE-LU") & (pl.col("dst_location") == "AU-NSW")).row(0, named=True)
    assert de_sg["usd_per_gb"] == 0.02 and de_sg["throughput_mbps"] > 0  # AWS eu-central-1 -> ap-southeast-2
    tasks = pl.read_parquet(built.path / "tasks.parquet")
    assert tasks.columns == TASKS_SCHEMA.names == ["task_id", "arrival_ts_utc", "duration_s", "cpu_cores", "gpus",
                                                   "mem_gb", "gpu_mem_gb", "bandwidth_gb", "max_delay_s",
                                                   "checkpoint_s", "min_scale", "max_scale", "marginal_throughput",
                                                   "interruptible"] and tasks.height == 0
    dcs = json.loads((built.path / "datacenters.json").read_text())["datacenters"]
    assert [d["location"] for d in dcs] == list(REGIONS)
    assert dcs[0]["total_cores"] == 85000 and dcs[0]["population_weight"] == 0.22  # DE-LU reference row
    assert set(dcs[0]["physics"]) == set(DatacenterParams().to_dict())


def test_network_paths_reach_the_bundle(built, bundle_home):
    """network.parquet carries the warehouse's location-pair paths: Persico's measurement across
    macro-regions, the distance model inside one (AU-NSW <-> IN-WE, both AP), nothing at 0 ms."""
    net = pl.read_parquet(built.path / "network.parquet")
    stored = read_table(bundle_home.warehouse_path,
                        "SELECT src_location, dst_location, throughput_mbps, rtt_ms, rtt_basis FROM network_path "
                        "WHERE provider = 'aws'")
    got = net.join(stored, on=["src_location", "dst_location"], how="inner", suffix="_wh")
    assert got.height == len(REGIONS) * (len(REGIONS) - 1)
    assert (got["rtt_ms"] == got["rtt_ms_wh"]).all() and (got["throughput_mbps"] == got["throughput_mbps_wh"]).all()
    au_in = got.filter((pl.col("src_location") == "AU-NSW") & (pl.col("dst_location") == "IN-WE")).row(0, named=True)
    assert au_in["rtt_basis"] == "derived_distance_azure_p50_fit"
    assert au_in["rtt_ms"] == pytest.approx(8.302 + 1.4583 * 2 * 10157 / 200, rel=1e-3)  # Sydney-Mumbai, 10,157 km
    assert au_in["throughput_mbps"] == pytest.approx(12241.15 / au_in["rtt_ms"], rel=1e-5)  # AWS window / RTT
    de_au = got.filter((pl.col("src_location") == "DE-LU") & (pl.col("dst_location") == "AU-NSW")).row(0, named=True)
    assert (de_au["throughput_mbps"], de_au["rtt_ms"], de_au["rtt_basis"]) == (50.0, 190.0, "measured_persico2016")
    diag = net.filter(pl.col("src_location") == pl.col("dst_location"))
    assert diag.height == len(REGIONS) and set(diag["rtt_ms"]) == {0.0} and set(diag["usd_per_gb"]) == {0.0}
    assert net.filter(pl.col("src_location") != pl.col("dst_location"))["rtt_ms"].min() > 0
    m = json.loads((built.path / "manifest.json").read_text())
    assert {"gridshift:data/network/azure_rtt_p50.csv", "mirror:reference/network_persico2016.csv"} <= {
        d["uri"] for d in m["lineage"]}
    assert {"azure-rtt-p50", "persico2016"} <= {a["source"] for a in m["attributions"]}


def test_sim_core_loads_it(built):
    scenario = pytest.importorskip("sim_core.scenario")
    s = scenario.load(built.path)
    assert s.n_dc == len(REGIONS) and s.n_steps == 35040 and s.bundle_id == built.bundle_id


def test_determinism_other_dir_and_process(built, bundle_home, params, shared_data, tmp_path):
    # second build, another output directory, through the CLI (a fresh code path), from the warehouse
    out = tmp_path / "b"
    r = runner.invoke(app, ["export", "--regions", ",".join(REGIONS), "--year", str(YEAR), "--workload", "none",
                            "--max-gap-hours", "8", "--out", str(out), "--home", str(bundle_home.root),
                            "--mirror", str(shared_data)])
    assert r.exit_code == 0, r.output
    assert built.bundle_id in r.output
    other = out / built.bundle_id
    for name in FILES:
        assert (other / name).read_bytes() == (built.path / name).read_bytes(), name
    assert plan(params, bundle_home, shared_data).steps == 0  # nothing fetched again


def test_parameters_change_the_id(built, bundle_home, shared_data, tmp_path):
    lca = export(BuildParams(regions=REGIONS, year=YEAR, workload="none", max_gap_hours=8, carbon_basis="lca"),
                 home=bundle_home, mirror=shared_data, out=tmp_path)
    assert lca.bundle_id != built.bundle_id
    a = pl.read_parquet(built.path / "signals.parquet")["carbon_g_per_kwh"]
    b = pl.read_parquet(lca.path / "signals.parquet")["carbon_g_per_kwh"]
    assert (b > a).mean() > 0.5  # life-cycle intensity exceeds direct almost everywhere


def test_gap_beyond_limit_fails_and_leaves_nothing(bundle_home, shared_data, tmp_path):
    out = tmp_path / "out"
    with pytest.raises(RunFailed) as exc:
        export(BuildParams(regions=("DE-LU", "US-CAL-CISO"), year=YEAR, workload="none", max_edge_fill_hours=6),
               home=bundle_home, mirror=shared_data, out=out)
    assert exc.value.cause_type == GapError.__name__
    msg = str(exc.value)
    assert "weather for US-CAL-CISO" in msg and "2022-01-01T00:00:00+00:00" in msg and "7 h" in msg
    assert "--max-edge-fill-hours" in msg and "start of year" in msg
    assert not out.exists() or not any(out.iterdir())
    r = runner.invoke(app, ["export", "--regions", "US-CAL-CISO", "--year", "2022", "--workload", "none",
                            "--max-edge-fill-hours", "6",
                            "--out", str(out), "--home", str(bundle_home.root), "--mirror", str(shared_data)])
    assert r.exit_code == 2 and "US-CAL-CISO" in r.output


def test_interrupted_write_leaves_no_bundle(built, bundle_home, params, tmp_path, monkeypatch):
    # `built` has ingested the inputs into bundle_home, so this test also runs on its own
    assembled = bundle_mod.assemble(params, bundle_home)
    real_write_bytes = Path.write_bytes
    calls = []

    def flaky(self, data):
        calls.append(self.name)
        if len(calls) == 3:
            raise KeyboardInterrupt("simulated interrupt mid-write")
        return real_write_bytes(self, data)

    monkeypatch.setattr(Path, "write_bytes", flaky)
    with pytest.raises(KeyboardInterrupt):
        bundle_mod.write(assembled, tmp_path)
    monkeypatch.undo()
    assert list(tmp_path.iterdir()) == []  # neither the final name nor a .partial left behind
    assert assembled.spool is not None and not assembled.spool.exists()  # nor the streamed tasks file


@pytest.mark.parametrize("name", FILES)
def test_verify_catches_one_flipped_byte(built, tmp_path, name):
    copy = tmp_path / built.bundle_id
    shutil.copytree(built.path, copy)
    assert verify_bundle(copy).ok
    p = copy / name
    data = bytearray(p.read_bytes())
    i = len(data) // 2
    data[i] ^= 0x01
    p.write_bytes(bytes(data))
    res = verify_bundle(copy)
    assert not res.ok and any(Path(pr.file).name == name for pr in res.problems), res.problems
    r = runner.invoke(app, ["verify", str(copy)])
    assert r.exit_code == 1 and name in r.output


def test_verify_refuses_extra_files(built, tmp_path):
    copy = tmp_path / "c"
    shutil.copytree(built.path, copy)
    (copy / "payload.pkl").write_bytes(b"\x80\x04N.")
    res = verify_bundle(copy)
    assert not res.ok and [Path(pr.file).name for pr in res.problems] == ["payload.pkl"]
    assert runner.invoke(app, ["verify", str(built.path)]).exit_code == 0


def test_no_pickle_or_executables(built):
    import pyarrow.parquet as pq

    for name in ("signals.parquet", "tasks.parquet", "network.parquet"):
        meta = pq.read_metadata(built.path / name).metadata or {}
        assert b"pandas" not in meta
    for p in built.path.iterdir():
        assert not (p.stat().st_mode & 0o111), p
        assert b"\x80\x04" not in p.read_bytes()[:2]


def test_region_codes_cannot_escape(bundle_home, tmp_path):
    for bad in ("../../etc", "DE-LU/../../x", "..", "de-lux"):
        with pytest.raises((UnknownLocationError, GridshiftError)):
            BuildParams(regions=(bad,), year=YEAR)
    from gridshift.home import safe_join

    with pytest.raises(UnsafePathError):
        safe_join(tmp_path, "../evil")
    r = runner.invoke(app, ["export", "--regions", "../../etc", "--year", "2022", "--home", str(bundle_home.root)])
    assert r.exit_code != 0
    assert not (tmp_path.parent / "etc").exists()


def test_inspect_list_and_plot(built, bundle_home, tmp_path):
    r = runner.invoke(app, ["inspect", str(built.path), "--plot", "--plot-dir", str(tmp_path / "plots")])
    assert r.exit_code == 0, r.output
    assert built.bundle_id in r.output
    pngs = sorted(p.name for p in (tmp_path / "plots").iterdir())
    assert pngs == sorted([f"signals_{c}.png" for c in REGIONS] + ["workload.png"])
    assert all((tmp_path / "plots" / n).read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" for n in pngs)
    shutil.copytree(built.path, bundle_home.bundles_dir / built.bundle_id, dirs_exist_ok=True)
    r = runner.invoke(app, ["list", "--home", str(bundle_home.root)])
    assert r.exit_code == 0 and built.bundle_id in r.output


def test_dagster_asset_builds_the_same_bundle(built, bundle_home, shared_data, tmp_path):
    import dagster as dg

    from dagster_project.assets.bundle import scenario_bundle
    from dagster_project.resources import GridshiftResource

    res = dg.materialize(
        [scenario_bundle],
        resources={"gridshift": GridshiftResource(home=str(bundle_home.root), mirror=str(shared_data))},
        run_config={"ops": {"scenario_bundle": {"config": {
            "regions": list(REGIONS), "year": YEAR, "workload": "none", "max_gap_hours": 8.0,
            "out_dir": str(tmp_path)}}}},
    )
    assert res.success
    meta = res.asset_materializations_for_node("scenario_bundle")[0].metadata
    assert meta["bundle_id"].value == built.bundle_id
    assert (tmp_path / built.bundle_id / "signals.parquet").read_bytes() == (
        built.path / "signals.parquet").read_bytes()


def test_an_allow_implausible_override_is_recorded_in_the_bundle(built, bundle_home, params, tmp_path):
    """A partition ingested past a plausibility check (--allow-implausible) is named in the bundle's quality;
    a bundle read from none keeps its manifest (and id) as before."""
    import duckdb

    from gridshift.home import Home

    manifest = json.loads((built.path / "manifest.json").read_text())
    assert not any("plausibility_overridden" in q for sig in manifest["quality"].values() for q in sig.values())
    home = Home.resolve(tmp_path / "home").ensure()
    shutil.copy(bundle_home.warehouse_path, home.warehouse_path)
    with duckdb.connect(str(home.warehouse_path)) as con:
        con.execute("UPDATE partition_quality SET plausibility_overridden = 'mean_carbon_lca' "
                    "WHERE signal = 'carbon' AND location = 'DE-LU' AND year = ?", [YEAR])
    quality = bundle_mod.assemble(params, home).manifest["quality"]
    assert quality["DE-LU"]["carbon"]["plausibility_overridden"] == {str(YEAR): "mean_carbon_lca"}
    assert [(loc, sig) for loc, qs in quality.items() for sig, q in qs.items() if "plausibility_overridden" in q] == [
        ("DE-LU", "carbon")]
