"""The reference sources' odd cases on small tables in their formats: egress matrices and rules that
cannot be read one way, Persico's measured table, the Azure RTT fit, and how the network paths use them."""

from __future__ import annotations

import polars as pl
import pytest

from gridshift.errors import DataError
from pipelines.sources import azure_latency, egress, network, persico
from tests.unit.pipelines.fixtures import network_cases as N
from tests.unit.pipelines.fixtures import reference as R
from tests.unit.pipelines.fixtures.case import raw_file


# ----------------------------------------------------------------------------- egress
def test_a_matrix_whose_rows_and_columns_name_different_regions_is_refused(tmp_path):
    content = R.egress_matrix(N.REGIONS, {}, 0.02).replace(b"\nap-south-1,", b"\nap-southeast-1,")
    with pytest.raises(DataError, match="not square") as info:
        egress.parse(raw_file(tmp_path, egress.NAME, "m.csv", content), "aws")
    assert info.value.values == ["ap-south-1", "ap-southeast-1"]


def test_the_rule_table_reproduces_the_matrix_it_was_written_from(tmp_path):
    assert N.rule_rows(tmp_path).drop("raw_sha256").equals(N.matrix_rows(tmp_path).drop("raw_sha256"))


def test_two_equally_specific_rules_for_one_pair_are_refused_naming_both(tmp_path):
    rules = [*N.RULES[:2], ("aws", "*", "eu-central-1", 0.03, "aws:to-frankfurt"),
             ("aws", "us-east-1", "*", 0.04, "aws:from-virginia")]
    raw = raw_file(tmp_path, egress.NAME, "rules.csv", R.egress_rules(rules))
    with pytest.raises(DataError, match="2 equally specific aws rules match us-east-1 -> eu-central-1") as info:
        egress.rows_from_rules(raw, "aws", ["us-east-1", "us-east-2", "eu-central-1"])
    assert info.value.values == ["aws:to-frankfurt", "aws:from-virginia"]


def test_a_pair_no_rule_matches_is_refused_naming_it(tmp_path):
    raw = raw_file(tmp_path, egress.NAME, "rules.csv", R.egress_rules(N.RULES[1:]))
    with pytest.raises(DataError, match="no aws egress rule matches") as info:
        egress.rows_from_rules(raw, "aws", N.REGIONS)
    assert info.value.values == ["us-east-1 -> eu-central-1"]


@pytest.mark.parametrize("row,column", [(("aws", "*", "*", 12.5, "x"), "usd_per_gb"),
                                        (("oracle", "*", "*", 0.02, "x"), "provider")], ids=["price", "provider"])
def test_an_impossible_rule_is_refused_naming_its_line(tmp_path, row, column):
    content = R.egress_rules([N.RULES[0], row])
    with pytest.raises(DataError, match="invalid rule") as info:
        egress.parse_rules(raw_file(tmp_path, egress.NAME, "rules.csv", content))
    assert info.value.column == column and info.value.rows == [5]


# ----------------------------------------------------------------------------- Persico 2016
def test_persico_rows_are_read_as_measured_and_their_window_is_throughput_times_rtt(tmp_path):
    measured = persico.parse(raw_file(tmp_path, persico.NAME, "p.csv", R.persico_csv(N.persico_rows_written())))
    assert measured.height == 24
    row = measured.filter((pl.col("provider") == "azure") & (pl.col("src_macro") == "US")
                          & (pl.col("dst_macro") == "AP"))
    assert row.select("throughput_mbps", "rtt_ms").row(0) == (62.5, 240.0)
    fits = persico.fit_window(measured)
    assert fits["aws"].mbit_ms == pytest.approx(12_000) and fits["azure"].mbit_ms == pytest.approx(15_000)
    assert fits["aws"].slope == pytest.approx(-1.0)  # a constant window: throughput ∝ 1 / RTT
    assert fits["aws"].window_bytes == pytest.approx(12_000 * 1e3 / 8)


@pytest.mark.parametrize("bad,column", [(("aws", "EU", "EU", 100, 20), "dst_macro"),  # not across macro-regions
                                        (("aws", "EU", "OC", 100, 20), "dst_macro"),
                                        (("ibm", "EU", "US", 100, 20), "provider"),
                                        (("aws", "EU", "US", 0, 70), "throughput_mbps")],
                         ids=["same-macro", "unknown-macro", "unknown-provider", "zero-throughput"])
def test_a_persico_row_that_cannot_be_a_measurement_is_refused_naming_its_line(tmp_path, bad, column):
    rows = N.persico_rows_written()[:3] + [bad]
    with pytest.raises(DataError, match="invalid measurement") as info:
        persico.parse(raw_file(tmp_path, persico.NAME, "p.csv", R.persico_csv(rows)))
    assert info.value.column == column and info.value.rows == [5]


def test_a_repeated_persico_pair_is_refused(tmp_path):
    rows = N.persico_rows_written()[:3]
    with pytest.raises(DataError, match="repeated") as info:
        persico.parse(raw_file(tmp_path, persico.NAME, "p.csv", R.persico_csv([*rows, rows[1]])))
    assert info.value.rows == [3, 5]


# ----------------------------------------------------------------------------- Azure RTT, network paths
def test_the_azure_fit_recovers_the_line_the_rows_were_written_on(tmp_path):
    pairs = azure_latency.parse(raw_file(tmp_path, "azure-rtt-p50", "a.csv", R.azure_rtt_csv(N.azure_rows_written())))
    fit = azure_latency.fit(pairs)
    assert (fit.fixed_ms, fit.inflation) == pytest.approx((N.FIXED_MS, N.INFLATION))
    assert fit.n == 8 and fit.rms_residual_ms == pytest.approx(0.0, abs=1e-9)  # the cross-continent row is not fitted
    d = R.haversine_km(52.3667, 4.9, 46.3772, 2.373)
    assert pairs["distance_km"][0] == pytest.approx(d)


def test_a_repeated_azure_pair_and_a_region_paired_with_itself_are_refused(tmp_path):
    rows = N.azure_rows_written()
    with pytest.raises(DataError, match="repeated region pair") as info:
        azure_latency.parse(raw_file(tmp_path, "azure-rtt-p50", "a.csv", R.azure_rtt_csv([*rows, rows[0]])))
    assert info.value.rows == [4, 4 + len(rows)]  # two comment lines and the header come first
    self_pair = (rows[0][0], *rows[0][1:3], rows[0][0], *rows[0][1:3], 1.0, "same_continent")
    with pytest.raises(DataError, match="invalid row") as info:
        azure_latency.parse(raw_file(tmp_path, "azure-rtt-p50", "b.csv", R.azure_rtt_csv([self_pair])))
    assert info.value.column == "dst_region"


def test_gcp_paths_use_awss_measurements_and_say_so(tmp_path):
    table = pl.concat([N.network_table(tmp_path, s) for s in (persico.NAME, "azure-rtt-p50")])
    gcp, aws = (table.filter(pl.col("provider") == p).sort("src_location", "dst_location") for p in ("gcp", "aws"))
    assert gcp.select("throughput_mbps", "rtt_ms").equals(aws.select("throughput_mbps", "rtt_ms"))
    inter = gcp.filter(pl.col("src_macro") != pl.col("dst_macro"))
    assert inter["rtt_basis"].unique().to_list() == ["fallback_aws_persico2016"]
    assert gcp.filter(pl.col("src_macro") == pl.col("dst_macro"))["throughput_basis"].unique().to_list() == [
        "derived_window_persico2016_aws"]


def test_the_per_flow_cap_binds_where_the_window_over_a_short_rtt_exceeds_it(tmp_path):
    persico_raw = raw_file(tmp_path, persico.NAME, "p.csv", R.persico_csv(N.persico_rows_written()))
    azure_raw = raw_file(tmp_path, "azure-rtt-p50", "a.csv", R.azure_rtt_csv(N.azure_rows_written()))
    # two locations 1 km apart: rtt ≈ 2.5 ms, Azure's window / rtt ≈ 6,000 Mbit/s, over the 5,000 cap
    registry = pl.DataFrame({"location": ["DE-LU", "FR"], "lat": [50.12, 50.129], "lon": [8.68, 8.68],
                             "macro_cluster": ["EU", "EU"]})
    table = network.build(persico_raw, azure_raw, registry).table
    azure = table.filter(pl.col("provider") == "azure")
    assert azure["throughput_mbps"].to_list() == [network.PER_FLOW_CAP_MBPS] * 2
    assert azure["throughput_basis"].unique().to_list() == ["per_flow_cap"]
