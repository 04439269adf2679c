"""Each live client against its loopback fake: real formats in, canonical rows out, equal to the mirror's."""

from __future__ import annotations

from datetime import date, timedelta

import polars as pl
import pytest

from gridshift import locations
from gridshift.errors import SourceUnavailableError
from gridshift.home import Home
from gridshift.quality import MAX_GAP
from pipelines.core import raw
from pipelines.core.http import make_session
from pipelines.sources import electricitymaps, entsoe, openmeteo, registry
from tests.integration.pipelines.live.conftest import HOUR, utc
from tests.integration.pipelines.live.fakes import de_lu_2023_values
from tests.unit.pipelines.fixtures.grid import EntsoeDay, entsoe_days_from_values

VALUE_COLS = ["location", "ts_utc", "temp_c", "rh_pct", "wetbulb_c", "cloudcover_pct", "windspeed_kmh"]


def test_openmeteo_flatbuffers_equal_mirror_json(fake, tmp_path, shared_data):
    loc = locations.get("DE-LU")
    with make_session(Home(tmp_path / "h")) as s:
        rf = openmeteo.API.fetch(loc, 2023, session=s)
    q = fake.state.requests[-1].query
    assert q["format"] == ["flatbuffers"] and q["timezone"] == ["GMT"]
    assert q["hourly"] == ["temperature_2m,relative_humidity_2m,cloud_cover,wind_speed_10m"]
    assert (q["start_date"], q["end_date"]) == (["2023-01-01"], ["2023-12-31"])
    live = openmeteo.API.parse(rf, loc, 2023)
    # the UTC year, hour by hour; the last hour (2023-12-31T23Z) lives in the mirror's 2024 file
    assert live.height == 8759
    assert live["ts_utc"].min() == utc(2023, 1, 1) and live["ts_utc"].max() == utc(2023, 12, 31, 22)
    mirror = pl.concat([
        openmeteo.ARCHIVE.parse(openmeteo.ARCHIVE.read_mirror(shared_data, openmeteo.ARCHIVE.mirror_relpath(loc, y)),
                                loc, y)
        for y in (2022, 2023)
    ])
    both = mirror.filter(pl.col("ts_utc").is_in(live["ts_utc"].implode()))
    assert both.height == live.height
    assert live.select(VALUE_COLS).equals(both.select(VALUE_COLS))  # exactly equal, float for float
    assert live["source"].unique().to_list() == [openmeteo.API.name]


def test_entsoe_prices_dst_fx_and_values(fake, tmp_path, shared_data):
    loc = locations.get("DE-LU")
    with make_session(Home(tmp_path / "h")) as s:
        rf = entsoe.SOURCE.fetch(loc, 2023, session=s)
    q = fake.state.requests[-1].query
    assert q["periodStart"] == ["202301010000"] and q["periodEnd"] == ["202401010000"]
    assert q["in_Domain"] == ["10Y1001A1001A82H"] and q["documentType"] == ["A44"]
    assert b"entsoe-secret" not in rf.content and "entsoe-secret" not in rf.uri
    df = entsoe.SOURCE.parse(rf, loc, 2023)
    values = de_lu_2023_values(shared_data)
    # value i of the file is the hour starting 2022-12-31T23:00Z + i h; the window keeps 2023 UTC only
    assert df.height == 8759
    assert df["price_local_per_mwh"].to_list() == values[1:]
    assert df["usd_per_local"].unique().to_list() == [1.0813]
    assert df["price_usd_per_mwh"][0] == pytest.approx(values[1] * 1.0813)
    assert df["currency"].unique().to_list() == ["EUR"] and df["resolution_min"].unique().to_list() == [60]
    assert (df["ts_utc"].diff().drop_nulls() == HOUR).all()  # no lost or doubled UTC hour
    local_days = df.with_columns(d=pl.col("ts_utc").dt.convert_time_zone("Europe/Berlin").dt.date())
    per_day = dict(local_days.group_by("d").len().iter_rows())
    assert per_day[date(2023, 3, 26)] == 23 and per_day[date(2023, 10, 29)] == 25
    assert per_day[date(2023, 6, 1)] == 24
    assert df["price_local_per_mwh"].min() < -400  # the real negative spike survives


def test_entsoe_quarter_hour_switch_mixed_resolution(fake, tmp_path):
    loc = locations.get("DE-LU")
    hourly = entsoe_days_from_values([float(h) for h in range(48)], date(2025, 9, 29))  # 29th, 30th
    q_lo = utc(2025, 9, 30, 22)
    quarters = [EntsoeDay(q_lo + timedelta(days=k), q_lo + timedelta(days=k + 1), 15,
                          [1000.0 + 96 * k + i for i in range(96)]) for k in range(2)]  # Oct 1st, 2nd
    fake.state.entsoe_days["10Y1001A1001A82H"] = hourly + quarters
    start, end = utc(2025, 9, 29), utc(2025, 10, 3)
    with make_session(Home(tmp_path / "h")) as s:
        rf = entsoe.SOURCE.fetch(loc, 2025, session=s, start=start, end=end)
    df = entsoe.SOURCE.rows(rf, loc, 2025, max_gap=MAX_GAP, start=start, end=end, rates={("EUR", 2025): 1.1})
    assert (df["ts_utc"].diff().drop_nulls() == timedelta(minutes=15)).all()  # one 15-minute grid
    held = df.filter(pl.col("ts_utc") < q_lo)
    assert held["resolution_min"].unique().to_list() == [60]
    # the hour starting 2025-09-30T21:00Z (value 47) holds for its four quarters, never interpolated
    last_hour = held.filter(pl.col("ts_utc") >= utc(2025, 9, 30, 21))
    assert last_hour["price_local_per_mwh"].to_list() == [47.0] * 4
    q = df.filter(pl.col("ts_utc") >= q_lo)
    # Oct 1st and 2nd (CET days) lie inside the window
    assert q["resolution_min"].unique().to_list() == [15] and q.height == 2 * 96
    assert q["price_local_per_mwh"][:3].to_list() == [1000.0, 1001.0, 1002.0]
    assert df["usd_per_local"].unique().to_list() == [1.1]


def test_entsoe_without_token_says_how_to_get_one(fake, tmp_path, monkeypatch):
    monkeypatch.delenv("ENTSOE_API_KEY")
    with make_session(Home(tmp_path / "h")) as s, pytest.raises(SourceUnavailableError, match="ENTSOE_API_KEY"):
        entsoe.SOURCE.fetch(locations.get("DE-LU"), 2023, session=s)
    assert fake.state.count("/api") == 0


def test_entsoe_wrong_token_error_has_no_token(fake, tmp_path, monkeypatch):
    monkeypatch.setenv("ENTSOE_API_KEY", "wrong-token-value-999")
    with make_session(Home(tmp_path / "h")) as s, pytest.raises(SourceUnavailableError) as info:
        entsoe.SOURCE.fetch(locations.get("DE-LU"), 2023, session=s)
    assert "401" in str(info.value) and "wrong-token-value-999" not in str(info.value)


def test_emaps_csv_is_the_mirror_file(fake, tmp_path, shared_data):
    loc = locations.get("DE-LU")
    with make_session(Home(tmp_path / "h")) as s:
        rf = registry.fetch("carbon", loc, 2023, mirror=None, live=True, session=s)
    assert fake.state.requests[-1].path == "/emaps-csv/DE_2023_hourly.csv"  # the zone id, not the code
    csv = electricitymaps.CSV
    mirror = csv.read_mirror(shared_data, csv.mirror_relpath(loc, 2023))
    assert rf.source == mirror.source == csv.name and rf.sha256 == mirror.sha256
    assert csv.parse(rf, loc, 2023).equals(csv.parse(mirror, loc, 2023))


def test_emaps_api_v3_matches_csv_values(fake, tmp_path, shared_data):
    loc = locations.get("DE-LU")
    start, end = utc(2023, 3, 20), utc(2023, 4, 5)
    with make_session(Home(tmp_path / "h")) as s:
        rf = electricitymaps.API.fetch_window(loc, start, end, session=s)
    reqs = [r for r in fake.state.requests if r.path.startswith("/v3/")]
    assert len(reqs) == 4  # two 10-day windows × (direct, lifecycle)
    assert all(r.query["shouldUseFallbackCallerLookup"] == ["false"] for r in reqs)
    assert all(r.headers.get("auth-token") == fake.state.emaps_token and "auth-token" not in r.query for r in reqs)
    assert fake.state.emaps_token.encode() not in rf.content
    api = electricitymaps.API.parse(rf, loc, 2023)
    src = electricitymaps.CSV
    csv = src.parse(raw.read_mirror(shared_data, src.mirror_relpath(loc, 2023), "t"), loc, 2023)
    csv = csv.filter((pl.col("ts_utc") >= start) & (pl.col("ts_utc") < end)).sort("ts_utc")
    assert api.height == csv.height == 16 * 24 - 0
    cols = ["ts_utc", "carbon_direct_g_per_kwh", "carbon_lca_g_per_kwh", "is_estimated", "emaps_zone"]
    assert api.select(cols).equals(csv.select(cols))


def test_emaps_unknown_zone_is_an_error_not_the_callers_zone(fake, tmp_path):
    loc = locations.get("FR")  # the fake has no FR data; upstream would answer for the caller's IP
    with make_session(Home(tmp_path / "h")) as s, pytest.raises(SourceUnavailableError, match="does not exist"):
        electricitymaps.API.fetch_window(loc, utc(2023, 1, 1), utc(2023, 1, 2), session=s)


def test_emaps_csv_default_template_fills_zone_and_year(monkeypatch):
    monkeypatch.delenv("GRIDSHIFT_EMAPS_CSV_URL", raising=False)
    assert electricitymaps.csv_template() == electricitymaps.DEFAULT_CSV_URL
    assert electricitymaps.csv_url(locations.get("DE-LU"), 2023) == (
        "https://data.electricitymaps.com/2025-04-03/DE_2023_hourly.csv")  # the zone id, not the location code
    assert electricitymaps.csv_url(locations.get("BR-SP"), 2022).endswith("/BR-CS_2022_hourly.csv")
    monkeypatch.setenv("GRIDSHIFT_EMAPS_CSV_URL", "")  # an empty line copied from .env.example: the default
    assert electricitymaps.csv_url(locations.get("SG"), 2021).endswith("/SG_2021_hourly.csv")
    monkeypatch.setenv("GRIDSHIFT_EMAPS_CSV_URL", "off")
    assert electricitymaps.csv_url(locations.get("SG"), 2021) is None


@pytest.mark.parametrize("template", ["http://127.0.0.1:9/{zone}.csv", "http://127.0.0.1:9/{zone}_{year}_{res}.csv",
                                      "http://127.0.0.1:9/static.csv"])
def test_emaps_csv_template_without_both_placeholders_is_refused(monkeypatch, template):
    monkeypatch.setenv("GRIDSHIFT_EMAPS_CSV_URL", template)
    with pytest.raises(SourceUnavailableError, match=r"exactly the placeholders \{zone\} and \{year\}"):
        electricitymaps.csv_url(locations.get("DE-LU"), 2023)


@pytest.mark.parametrize("zone,year,match", [
    ("XX-NOWHERE", 2023, "unknown Electricity Maps zone id 'XX-NOWHERE'"),
    ("de", 2023, "unknown Electricity Maps zone id 'de'"),
    ("DE", 2020, r"no yearly data .* in 2020: Electricity Maps publishes 2021\.\."),
    ("DE", 2999, "in 2999"),
])
def test_emaps_unknown_zone_or_year_rejected_before_any_request(fake, tmp_path, zone, year, match):
    import dataclasses

    loc = dataclasses.replace(locations.get("DE-LU"), emaps_zone=zone)
    with make_session(Home(tmp_path / "h")) as s:
        with pytest.raises(SourceUnavailableError, match=match):
            registry.fetch("carbon", loc, year, mirror=None, live=True, session=s)
        for src in (electricitymaps.CSV, electricitymaps.API):
            with pytest.raises(SourceUnavailableError, match=match):
                src.fetch(loc, year, session=s)
    assert fake.state.count() == 0
