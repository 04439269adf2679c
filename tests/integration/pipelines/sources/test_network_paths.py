"""Network paths between every pair of the registry's locations (pipelines/sources/network.py):
Persico's measurements kept exactly across macro-regions; inside one, RTT from distance (fitted to
Azure's published P50 RTTs) and throughput from Persico's fitted TCP window. Real inputs: the
mirror's reference/network_persico2016.csv and gridshift/data/network/azure_rtt_p50.csv."""

from __future__ import annotations

import duckdb
import numpy as np
import polars as pl
import pytest

from gridshift import locations
from gridshift.errors import DataError
from gridshift.home import Home
from pipelines.core.raw import RawFile, read_mirror
from pipelines.sources import azure_latency, network, persico
from warehouse.db import read_table
from warehouse.ingest import ingest_network
from warehouse.load import validate


@pytest.fixture(scope="module")
def persico_raw(shared_data) -> RawFile:
    return read_mirror(shared_data, persico.MIRROR_RELPATH, persico.NAME)


@pytest.fixture(scope="module")
def model(persico_raw) -> network.NetworkModel:
    return network.build(persico_raw, azure_latency.raw())


def path(model, src: str, dst: str, provider: str = "aws") -> dict:
    t = model.table.filter((pl.col("provider") == provider) & (pl.col("src_location") == src)
                           & (pl.col("dst_location") == dst))
    assert t.height == 1
    return t.row(0, named=True)


def test_every_ordered_pair_of_distinct_locations_once_per_provider(model) -> None:
    t = validate("network_path", model.table, file="built")
    codes = locations.all_codes()
    n = len(codes) * (len(codes) - 1)
    assert n == 506 and t.height == 3 * n
    for provider in ("aws", "azure", "gcp"):
        rows = t.filter(pl.col("provider") == provider)
        assert set(rows.select("src_location", "dst_location").iter_rows()) == {
            (a, b) for a in codes for b in codes if a != b}
    assert (t["rtt_ms"] > 0).all() and (t["throughput_mbps"] > 0).all()  # no 0 ms path is left


def test_inter_macro_pairs_keep_persico_exactly(model, persico_raw) -> None:
    measured = persico.parse(persico_raw)
    inter = model.table.filter(pl.col("src_macro") != pl.col("dst_macro"))
    for provider, basis, figures in (("aws", "measured_persico2016", "aws"), ("azure", "measured_persico2016", "azure"),
                                     ("gcp", "fallback_aws_persico2016", "aws")):
        rows = inter.filter(pl.col("provider") == provider)
        want = measured.filter(pl.col("provider") == figures).drop("provider")
        got = rows.join(want, on=["src_macro", "dst_macro"], how="left", suffix="_paper")
        assert got["rtt_ms_paper"].null_count() == 0
        assert (got["rtt_ms"] == got["rtt_ms_paper"]).all()
        assert (got["throughput_mbps"] == got["throughput_mbps_paper"]).all()
        assert set(rows["rtt_basis"]) == set(rows["throughput_basis"]) == {basis}
        assert set(rows["source"]) == {"persico2016"} and set(rows["raw_sha256"]) == {persico_raw.sha256}
    de_us = path(model, "DE-LU", "US-NY-NYIS")
    assert (de_us["throughput_mbps"], de_us["rtt_ms"]) == (160.0, 70.0)  # Persico Fig. 3 / 6, AWS EU -> US
    assert path(model, "SG", "BR-SP", "azure")["rtt_ms"] == 350.0


def test_singapore_sydney_and_us_east_west_within_the_published_ranges(model) -> None:
    # Azure's within-area round trips, October 2019 (ThousandEyes monthly averages, Microsoft Learn
    # "Azure network round-trip latency statistics"): 4-134 ms in Asia, 5-72 ms in North America,
    # 3-28 ms in Europe
    for provider in ("aws", "azure", "gcp"):
        sg_au = path(model, "SG", "AU-NSW", provider)
        us = path(model, "US-NY-NYIS", "US-CAL-CISO", provider)
        eu = path(model, "DE-LU", "GB", provider)
        assert 4 <= sg_au["rtt_ms"] <= 134 and sg_au["rtt_basis"] == "derived_distance_azure_p50_fit"
        assert 5 <= us["rtt_ms"] <= 72 and 3 <= eu["rtt_ms"] <= 28
        assert path(model, "AU-NSW", "SG", provider)["rtt_ms"] == sg_au["rtt_ms"]  # symmetric
    # the values themselves (docs/sources.md), and the Azure P50 of the co-located regions (June 2025)
    assert path(model, "SG", "AU-NSW")["rtt_ms"] == pytest.approx(100.2, abs=0.05)  # Azure SEA <-> AUE: 94
    assert path(model, "DE-LU", "GB")["rtt_ms"] == pytest.approx(17.6, abs=0.05)  # Azure GWC <-> UKS: 17
    assert path(model, "US-CAL-CISO", "US-NY-NYIS")["rtt_ms"] == pytest.approx(68.1, abs=0.05)  # EUS <-> WUS: 70-74
    assert path(model, "AU-NSW", "AU-VIC")["rtt_ms"] == pytest.approx(18.7, abs=0.05)  # AUE <-> AUSE: 16


def test_rtt_grows_with_distance(model) -> None:
    intra = model.table.filter((pl.col("provider") == "aws") & (pl.col("src_macro") == pl.col("dst_macro")))
    order = intra.sort("distance_km")
    assert order["rtt_ms"].diff().drop_nulls().min() >= 0  # monotone in distance
    chain = [path(model, "DE-LU", d) for d in ("CH", "GB", "ES", "PT")]  # 300, 640, 1,420, 1,890 km
    assert [r["distance_km"] for r in chain] == sorted(r["distance_km"] for r in chain)
    assert [r["rtt_ms"] for r in chain] == sorted(r["rtt_ms"] for r in chain)
    assert chain[-1]["rtt_ms"] > chain[0]["rtt_ms"] + 20
    assert path(model, "SG", "AU-NSW")["distance_km"] == pytest.approx(6302, abs=1)


def test_rtt_fit_to_the_azure_p50_table(model) -> None:
    fit = model.rtt
    assert fit.n == 62  # the same-continent ordered pairs of the registry's Azure regions
    assert fit.fixed_ms == pytest.approx(8.30, abs=0.01) and fit.inflation == pytest.approx(1.458, abs=0.001)
    # the single-factor inflation of the same rows is the published Internet rule of thumb, ≈ 2.1
    # (Bozkurt et al. 2018; Singla et al. 2014: 3.2 × c-latency = 2.1 × fiber latency)
    assert fit.median_ratio == pytest.approx(2.07, abs=0.01)
    pairs = azure_latency.parse(azure_latency.raw())
    same = pairs.filter(pl.col("pair_class") == "same_continent")
    err = np.abs(fit.rtt_ms(same["distance_km"].to_numpy()) - same["rtt_ms"].to_numpy())
    assert np.median(err) < 6 and fit.rms_residual_ms < 10
    cross = pairs.filter(pl.col("pair_class") == "cross_continent")
    assert cross["rtt_ms"].to_list() == [319.0, 319.0]  # Brazil South <-> South Africa North, kept out of the fit


def test_intra_macro_throughput_is_the_fitted_window_over_rtt(model) -> None:
    w = model.windows
    # Persico's 12 AWS and 12 Azure pairs: throughput × RTT in 9,500-18,000 and 14,400-21,600 Mbit/s·ms;
    # geometric means 12,241 (1.53 MB in flight) and 18,088 (2.26 MB); free log-log slopes −0.86, −1.01
    assert w["aws"].mbit_ms == pytest.approx(12241.1, abs=0.1) and w["azure"].mbit_ms == pytest.approx(18087.6, abs=0.1)
    assert (w["aws"].min_mbit_ms, w["aws"].max_mbit_ms) == (9500.0, 18000.0)
    assert (w["azure"].min_mbit_ms, w["azure"].max_mbit_ms) == (14400.0, 21600.0)
    assert w["aws"].slope == pytest.approx(-0.858, abs=0.001) and w["azure"].slope == pytest.approx(-1.012, abs=0.001)
    assert "gcp" not in w
    intra = model.table.filter(pl.col("src_macro") == pl.col("dst_macro"))
    for provider, window, basis in (("aws", w["aws"], "derived_window_persico2016"),
                                    ("azure", w["azure"], "derived_window_persico2016"),
                                    ("gcp", w["aws"], "derived_window_persico2016_aws")):
        rows = intra.filter(pl.col("provider") == provider)
        assert set(rows["throughput_basis"]) == {basis}  # the 5 Gbit/s per-flow cap binds nowhere
        prod = (rows["throughput_mbps"] * rows["rtt_ms"]).to_numpy()
        assert np.allclose(prod, window.mbit_ms)
        assert rows["throughput_mbps"].max() < network.PER_FLOW_CAP_MBPS
    sg_au = {p: path(model, "SG", "AU-NSW", p)["throughput_mbps"] for p in ("aws", "azure", "gcp")}
    assert sg_au["aws"] == pytest.approx(122.2, abs=0.05) and sg_au["azure"] == pytest.approx(180.5, abs=0.05)
    assert sg_au["gcp"] == sg_au["aws"]


def test_per_flow_cap_binds_only_where_window_over_rtt_exceeds_it(persico_raw) -> None:
    # two AP locations 1 km apart: RTT = the fixed 8.3 ms + 0.01 ms, window / RTT ≈ 1,470 Mbit/s (AWS)
    near = locations.registry_frame().filter(pl.col("location").is_in(["SG", "JP-TK"])).with_columns(
        lat=pl.Series([35.69, 35.699]), lon=pl.Series([139.77, 139.77]))
    m = network.build(persico_raw, azure_latency.raw(), registry=near)
    assert m.table["rtt_ms"].to_list() == pytest.approx([8.31] * 6, abs=0.01)
    assert "per_flow_cap" not in set(m.table["throughput_basis"])
    # with AWS throughputs 1,000 × Persico's, window / RTT exceeds 5 Gbit/s: capped, and the basis says so
    measured = pl.read_csv(persico_raw.content)
    fast = measured.with_columns(throughput_mbps=pl.when(pl.col("provider") == "aws")
                                 .then(pl.col("throughput_mbps") * 1000).otherwise(pl.col("throughput_mbps")))
    m = network.build(RawFile(persico.NAME, "fast.csv", fast.write_csv().encode()), azure_latency.raw(), registry=near)
    for provider in ("aws", "gcp"):
        rows = m.table.filter(pl.col("provider") == provider)
        assert set(rows["throughput_basis"]) == {"per_flow_cap"} and set(rows["throughput_mbps"]) == {5000.0}
    assert set(m.table.filter(pl.col("provider") == "azure")["throughput_basis"]) == {"derived_window_persico2016"}


def test_bad_inputs_are_refused_naming_file_column_rows(persico_raw) -> None:
    good = azure_latency.raw()
    text = good.content.decode()
    bad = RawFile(azure_latency.NAME, "bad_rtt.csv",
                  text.replace("East US,37.3719,-79.8164,West US,37.783,-122.417,70,", "East US,37.3719,-79.8164,"
                               "West US,37.783,-122.417,-70,").encode())
    with pytest.raises(DataError) as exc:
        network.build(persico_raw, bad)
    line = next(i for i, ln in enumerate(text.splitlines(), 1) if ln.startswith("East US,37.3719,-79.8164,West US,"))
    assert exc.value.file == "bad_rtt.csv" and exc.value.column == "rtt_ms" and exc.value.rows == [line]  # file line
    assert exc.value.values == ["-70"]  # as written in the file
    lines = persico_raw.content.decode().splitlines()
    intra = RawFile(persico.NAME, "p.csv", "\n".join(lines + ["aws,EU,EU,1000,0"]).encode())
    with pytest.raises(DataError) as exc:
        persico.parse(intra)
    assert exc.value.column == "dst_macro" and exc.value.rows == [len(lines) + 1]
    lacking = RawFile(persico.NAME, "p.csv", "\n".join(ln for ln in lines if not ln.startswith("aws,AP,SA")).encode())
    with pytest.raises(DataError, match="lack the aws pair AP -> SA") as exc:
        network.build(lacking, good)
    assert exc.value.file == "p.csv"


def test_ingest_lands_both_files_and_rebuilds_an_old_layout(tmp_path, shared_data, monkeypatch) -> None:
    home = Home.resolve(tmp_path / "h").ensure()
    with duckdb.connect(str(home.warehouse_path)) as con:  # the macro-pair table of earlier versions
        con.execute("CREATE TABLE network_path (provider VARCHAR, src_macro VARCHAR, dst_macro VARCHAR, "
                    "throughput_mbps DOUBLE, rtt_ms DOUBLE, basis VARCHAR, source VARCHAR, raw_sha256 VARCHAR, "
                    "PRIMARY KEY (provider, src_macro, dst_macro))")
        con.execute("INSERT INTO network_path VALUES ('aws', 'AP', 'AP', 1000, 0, 'assumption_intra_macro', "
                    "'persico2016', 'x')")
    # a rebuild that fails after the drop (here: the insert of the new rows) leaves the old table whole
    from warehouse import load

    real_create = load.create_table_sql
    monkeypatch.setattr(load, "create_table_sql",  # the re-created table misnamed: the INSERT finds none
                        lambda t: "CREATE TABLE np_broken (x INTEGER)" if t.name == "network_path" else real_create(t))
    with pytest.raises(duckdb.Error):
        ingest_network(home=home, mirror=shared_data)
    monkeypatch.undo()
    old = read_table(home.warehouse_path, "SELECT * FROM network_path")
    assert old.height == 1 and "src_macro" in old.columns
    report = ingest_network(home=home, mirror=shared_data)
    assert report.rows == 1518 and report.extra["rtt_fit_pairs"] == 62
    t = read_table(home.warehouse_path, "SELECT * FROM network_path")
    assert t.height == 1518 and "src_location" in t.columns and "basis" not in t.columns
    raws = read_table(home.warehouse_path, "SELECT source, uri FROM raw_files ORDER BY source")
    assert raws.rows() == [("azure-rtt-p50", azure_latency.URI), ("persico2016", raws["uri"][1])]
    assert raws["uri"][1].endswith("reference/network_persico2016.csv")
    before = home.warehouse_path.read_bytes()
    ingest_network(home=home, mirror=shared_data)
    assert home.warehouse_path.read_bytes() == before  # identical re-ingest writes nothing
