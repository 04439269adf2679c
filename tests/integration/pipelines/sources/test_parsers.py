"""Parsers on the real upstream files: spot values, units, UTC alignment, flags."""

from __future__ import annotations

from datetime import UTC, datetime

import polars as pl
import pytest

from gridshift import locations
from gridshift.wetbulb import stull_wetbulb
from pipelines.core.raw import read_mirror
from pipelines.sources import azure_latency, egress, electricitymaps, openmeteo, sustaincluster_prices
from pipelines.sources import network as network_paths
from pipelines.sources import persico as network
from warehouse.load import validate


def _parse(src, shared, code, year):
    loc = locations.get(code)
    return src.parse(read_mirror(shared, src.mirror_relpath(loc, year), "t"), loc, year)


def _carbon(shared, code, year=2023):
    return _parse(electricitymaps.CSV, shared, code, year)


def _price(shared, code, year=2023):
    return _parse(sustaincluster_prices.SOURCE, shared, code, year)


def _weather(shared, code, year=2023):
    return _parse(openmeteo.ARCHIVE, shared, code, year)


def at(df: pl.DataFrame, *ymdh: int) -> dict:
    ts = datetime(*ymdh, tzinfo=UTC)
    rows = df.filter(pl.col("ts_utc") == ts)
    assert rows.height == 1, f"expected one row at {ts}, got {rows.height}"
    return rows.row(0, named=True)


def test_de_lu_carbon_spot_value(shared_data):
    df = _carbon(shared_data, "DE-LU")
    assert df.height == 8760
    row = at(df, 2023, 1, 1, 0)
    assert row["carbon_direct_g_per_kwh"] == 140.51
    assert row["carbon_lca_g_per_kwh"] == 185.8
    assert row["emaps_zone"] == "DE"
    assert df["ts_utc"].dtype == pl.Datetime("us", "UTC")
    assert int(df["is_estimated"].sum()) == 30


@pytest.mark.parametrize(("code", "zone"), [("BR-SP", "BR-CS"), ("CL-SIC", "CL-SEN"), ("DE-LU", "DE"), ("SG", "SG")])
def test_zone_ids_differ_from_location_codes(shared_data, code, zone):
    assert set(_carbon(shared_data, code)["emaps_zone"].unique()) == {zone}


@pytest.mark.parametrize("code", ["IN-WE", "JP-TK"])
def test_fully_estimated_zones_are_kept_and_flagged(shared_data, code):
    df = _carbon(shared_data, code)
    assert df.height == 8760 and bool(df["is_estimated"].all())


def test_de_lu_price_spot_value_and_negative_prices(shared_data):
    df = _price(shared_data, "DE-LU")
    assert at(df, 2023, 1, 1, 0)["price_usd_per_mwh"] == pytest.approx(-3.3622368, abs=1e-12)
    assert int((df["price_usd_per_mwh"] < 0).sum()) == 292
    assert df["price_usd_per_mwh"].min() == pytest.approx(-484.39918)
    assert set(df["resolution_min"].unique()) == {60}


@pytest.mark.parametrize(("code", "neg_hours", "max_price"), [
    ("AU-VIC", 2030, 1730.715833333333), ("SG", 0, 3361.23), ("US-TEX-ERCO", 0, 4111.545),
])
def test_real_extremes_pass_validation(shared_data, code, neg_hours, max_price):
    df = validate("grid_price", _price(shared_data, code))
    assert int((df["price_usd_per_mwh"] < 0).sum()) == neg_hours
    assert df["price_usd_per_mwh"].max() == pytest.approx(max_price)


def test_price_across_european_dst_change_has_no_lost_or_doubled_hour(shared_data):
    df = _price(shared_data, "DE-LU").sort("ts_utc")
    day = df.filter(pl.col("ts_utc").dt.date() == datetime(2023, 3, 26).date())
    assert day.height == 24
    assert at(df, 2023, 3, 26, 1)["price_usd_per_mwh"] == pytest.approx(42.755366999999936)
    assert df["ts_utc"].diff().drop_nulls().dt.total_seconds().unique().to_list() == [3600]


def test_india_prices_sit_on_the_half_hour(shared_data):
    df = _price(shared_data, "IN-WE")
    assert df.height == 8760
    first = df.row(0, named=True)
    assert first["ts_utc"] == datetime(2023, 1, 1, 0, 30, tzinfo=UTC)
    assert first["price_usd_per_mwh"] == pytest.approx(45.962554)
    assert set(df["ts_utc"].dt.minute().unique()) == {30}


def test_weather_uses_the_responses_fixed_offset_not_dst_rules(shared_data):
    de = _weather(shared_data, "DE-LU")
    # local 2023-01-01T00:00 at utc_offset_seconds=3600 is 2022-12-31 23:00 UTC
    assert de.row(0, named=True)["ts_utc"] == datetime(2022, 12, 31, 23, tzinfo=UTC)
    assert de.row(0, named=True)["temp_c"] == 12.9
    # California 2023 says -25200 (PDT) for the whole year: first hour is 07:00 UTC
    ca = _weather(shared_data, "US-CAL-CISO")
    assert ca.row(0, named=True)["ts_utc"] == datetime(2023, 1, 1, 7, tzinfo=UTC)
    assert ca.row(0, named=True)["temp_c"] == 10.5
    # uniform hourly grid through both DST changes: 8760 distinct hours, no gap, no duplicate
    for df in (de, ca):
        assert df.height == 8760 and df["ts_utc"].n_unique() == 8760
        assert (df["ts_utc"].diff().drop_nulls().dt.total_seconds() == 3600).all()


def test_neighbouring_weather_years_tile_without_overlap(shared_data):
    a, b = _weather(shared_data, "AU-NSW", 2022), _weather(shared_data, "AU-NSW", 2023)
    assert (b["ts_utc"].min() - a["ts_utc"].max()).total_seconds() == 3600


def test_wetbulb_stull_reference_point_and_bounds(shared_data):
    # Stull (2011): T = 20 °C, RH = 50 % gives Tw = 13.7 °C
    out = stull_wetbulb([20.0, 30.0, -5.0], [50.0, 100.0, 5.0])
    assert out[0] == pytest.approx(13.7, abs=0.05)
    assert out[1] <= 30.0 and out[1] == pytest.approx(30.0, abs=0.3)
    assert out[2] < -5.0
    w = _weather(shared_data, "SG")
    assert (w["wetbulb_c"] <= w["temp_c"]).all()


def test_egress_matrix_is_long_and_square(shared_data):
    df = egress.parse(read_mirror(shared_data, egress.mirror_relpath("aws"), "t"), "aws")
    n = df["src_region"].n_unique()
    assert df.height == n * n == 400
    row = df.filter((pl.col("src_region") == "us-east-1") & (pl.col("dst_region") == "us-east-2")).row(0, named=True)
    assert row["usd_per_gb"] == 0.01
    assert df.filter(pl.col("src_region") == pl.col("dst_region"))["usd_per_gb"].max() == 0


@pytest.mark.parametrize("provider", egress.PROVIDERS)
def test_egress_rules_reproduce_the_mirror_matrices_exactly(shared_data, provider):
    """Over the mirror's own regions, every ordered pair: the rule table gives the tabulated price."""
    mirror = egress.parse(read_mirror(shared_data, egress.mirror_relpath(provider), "t"), provider)
    regions = mirror["src_region"].unique(maintain_order=True).to_list()
    derived = egress.derive_matrix(egress.parse_rules(egress.rules_raw()), provider, regions)
    both = mirror.join(derived, on=["src_region", "dst_region"], how="full", coalesce=True, suffix="_rules")
    assert both.height == len(regions) ** 2
    diff = both.filter(pl.col("usd_per_gb") != pl.col("usd_per_gb_rules"))
    assert diff.height == 0, f"rules differ from the mirror on: {diff.head(10).rows()}"


@pytest.mark.parametrize("provider,n_regions,missing", [
    ("aws", 17, []), ("gcp", 12, ["europe-west2"]), ("azure", 21, ["UK South"])])
def test_egress_matrix_over_the_registry_regions(shared_data, provider, n_regions, missing):
    """Every registry region pair is priced; the regions the mirror lacks are named here with their class."""
    regions = egress.registry_regions(provider)
    assert len(regions) == n_regions
    df = egress.rows_from_rules(egress.rules_raw(), provider)
    assert df.height == n_regions ** 2 and df["usd_per_gb"].null_count() == 0
    mirror = egress.parse(read_mirror(shared_data, egress.mirror_relpath(provider), "t"), provider)
    assert sorted(set(regions) - set(mirror["src_region"])) == missing
    common = df.join(mirror, on=["src_region", "dst_region"], suffix="_m")
    assert common.height == (n_regions - len(missing)) ** 2
    assert (common["usd_per_gb"] == common["usd_per_gb_m"]).all()
    assert df["raw_sha256"].unique().to_list() == [egress.rules_raw().sha256]


def _price_of(provider, src, dst):
    m = egress.derive_matrix(egress.parse_rules(egress.rules_raw()), provider, [src, dst])
    r = m.filter((pl.col("src_region") == src) & (pl.col("dst_region") == dst)).row(0, named=True)
    return r["usd_per_gb"], r["pair_class"]


@pytest.mark.parametrize("provider,src,dst,price,cls", [
    ("aws", "us-east-1", "us-east-2", 0.01, "aws:us-east-pair"),
    ("aws", "us-east-1-dwf-1", "us-east-1", 0.01, "aws:us-east-pair"),
    ("aws", "us-west-1", "us-east-1", 0.02, "aws:from-north-america"),
    ("aws", "eu-central-1", "ap-southeast-2", 0.02, "aws:from-europe"),
    ("aws", "ap-south-1", "eu-west-1", 0.086, "aws:from-mumbai"),
    ("aws", "us-east-1-chl-1", "sa-east-1", 0.138, "aws:from-south-america"),
    ("aws", "af-south-1", "us-east-1", 0.147, "aws:from-cape-town"),
    ("aws", "eu-west-1", "eu-west-1", 0.0, "aws:same-region"),
    ("gcp", "asia-southeast1", "us-central1", 0.02, "gcp:to-north-america"),
    ("gcp", "us-east1", "europe-west2", 0.05, "gcp:to-europe"),  # London: not in the mirror
    ("gcp", "europe-west2", "australia-southeast1", 0.10, "gcp:to-oceania"),
    ("azure", "East US", "West US", 0.02, "azure:within-us-core"),
    ("azure", "East US", "North Europe", 0.05, "azure:from-us-core"),
    ("azure", "West Europe", "North Europe", 0.02, "azure:within-europe-core"),
    ("azure", "Germany West Central", "France Central", 0.08, "azure:from-other"),
    ("azure", "UK South", "West Europe", 0.08, "azure:from-other"),  # not in the mirror
    ("azure", "Brazil South", "Chile North", 0.16, "azure:from-south-america-africa"),
])
def test_egress_rule_classes_exact_values(provider, src, dst, price, cls):
    assert _price_of(provider, src, dst) == (price, cls)


def test_egress_rule_table_records_source_and_date():
    rules = egress.parse_rules(egress.rules_raw())
    assert set(rules["provider"]) == set(egress.PROVIDERS)
    hosts = {p: set(rules.filter(pl.col("provider") == p)["source_url"].str.extract(r"https://([^/]+)/"))
             for p in egress.PROVIDERS}
    assert hosts == {"aws": {"aws.amazon.com"}, "gcp": {"cloud.google.com"}, "azure": {"azure.microsoft.com"}}
    assert rules["as_of"].str.to_date("%Y-%m-%d").null_count() == 0


def test_egress_rules_ambiguous_or_missing_pair_is_an_error():
    from gridshift.errors import DataError
    from pipelines.core.raw import RawFile

    head = "provider,from,to,usd_per_gb,pair_class,source_url,as_of,note\n"
    url = "https://example.org/p,2025-01-01,"
    tie = RawFile("t", "t", (head + f"aws,a,*,0.02,x,{url}\naws,*,b,0.03,y,{url}\n").encode())
    with pytest.raises(DataError, match="2 equally specific aws rules match a -> b"):
        egress.derive_matrix(egress.parse_rules(tie), "aws", ["a", "b"])
    with pytest.raises(DataError, match="no aws egress rule matches b -> a"):
        egress.derive_matrix(egress.parse_rules(tie), "aws", ["b", "a"])
    bad = RawFile("t", "t", ("# rules\n" + head + f"aws,a,*,0.02,x,{url}\naws,a,*,0.02,x,http://insecure,2025-01-01,\n")
                  .encode())
    with pytest.raises(DataError, match="source_url") as info:
        egress.parse_rules(bad)
    assert info.value.rows == [4] and info.value.values == ["http://insecure"]  # the file line, after the comment


def test_azure_rtt_table_errors_name_the_file_line(shared_data):
    """The repository's RTT table opens with comment lines: an error names the line in the file."""
    from gridshift.errors import DataError
    from pipelines.core.raw import RawFile
    from pipelines.sources import azure_latency

    raw = azure_latency.raw()
    lines = raw.content.decode().splitlines(keepends=True)
    first = next(i for i, line in enumerate(lines) if not line.startswith("#")) + 2  # 1-based, after the header
    assert azure_latency.parse(raw).height == len(lines) - first + 1
    broken = lines.copy()
    fields = broken[first + 1].rstrip("\n").split(",")
    broken[first + 1] = ",".join(fields[:6] + ["-3"] + fields[7:]) + "\n"  # data row 2's RTT
    with pytest.raises(DataError, match="invalid row") as info:
        azure_latency.parse(RawFile(raw.source, raw.uri, "".join(broken).encode()))
    assert info.value.column == "rtt_ms" and info.value.rows == [first + 2] and info.value.values == ["-3"]
    with pytest.raises(DataError, match="repeated region pair") as dup:
        azure_latency.parse(RawFile(raw.source, raw.uri, "".join(lines + [lines[first]]).encode()))
    assert dup.value.rows == [first + 1, len(lines) + 1]


def test_ingest_egress_defaults_to_the_rule_table_mirror_on_request(shared_data, tmp_path, monkeypatch):
    from gridshift.home import Home
    from warehouse.db import read_table
    from warehouse.ingest import ingest_egress

    monkeypatch.delenv("GRIDSHIFT_EGRESS_SOURCE", raising=False)
    home = Home(tmp_path / "repo")
    reps = ingest_egress(home=home, mirror=None)  # no mirror needed
    assert [(r.extra["provider"], r.rows, r.raw_uri) for r in reps] == [
        ("aws", 17 ** 2, egress.RULES_URI), ("gcp", 12 ** 2, egress.RULES_URI), ("azure", 21 ** 2, egress.RULES_URI)]
    monkeypatch.setenv("GRIDSHIFT_EGRESS_SOURCE", "mirror")
    mhome = Home(tmp_path / "mirror")
    reps = ingest_egress(home=mhome, mirror=shared_data)
    assert [r.rows for r in reps] == [400, 169, 484] and reps[0].raw_uri.endswith("aws_transmission_cost_matrix.csv")
    q = "SELECT provider, src_region, dst_region, usd_per_gb FROM egress_price"
    a, b = read_table(home.warehouse_path, q), read_table(mhome.warehouse_path, q)
    common = a.join(b, on=["provider", "src_region", "dst_region"], suffix="_m")
    assert common.height == 17 ** 2 + 11 ** 2 + 20 ** 2 and (common["usd_per_gb"] == common["usd_per_gb_m"]).all()


def test_network_paths_state_their_assumptions(shared_data):
    # the measured table is read as published (24 rows: AWS and Azure, every ordered pair of 4 macro-regions)
    measured = network.parse(read_mirror(shared_data, network.MIRROR_RELPATH, "t"))
    row = measured.filter((pl.col("provider") == "aws") & (pl.col("src_macro") == "EU") & (pl.col("dst_macro") == "US"))
    assert row.row(0, named=True)["throughput_mbps"] == 160 and row.row(0, named=True)["rtt_ms"] == 70
    assert measured.height == 24 and (measured["src_macro"] != measured["dst_macro"]).all()
    # every network_path row says where each number comes from; no pair is assumed 0 ms / 1 Gbit/s any more
    df = network_paths.build(read_mirror(shared_data, network.MIRROR_RELPATH, "persico2016"), azure_latency.raw()).table
    intra = df.filter(pl.col("src_macro") == pl.col("dst_macro"))
    assert set(intra["rtt_basis"]) == {"derived_distance_azure_p50_fit"} and (intra["rtt_ms"] > 0).all()
    assert 1000.0 not in set(intra["throughput_mbps"])
    gcp = df.filter(pl.col("provider") == "gcp")
    assert set(gcp["rtt_basis"]) == {"fallback_aws_persico2016", "derived_distance_azure_p50_fit"}
    assert set(gcp["throughput_basis"]) == {"fallback_aws_persico2016", "derived_window_persico2016_aws"}
    assert df.height == 3 * 23 * 22
