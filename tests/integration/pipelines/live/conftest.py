"""Fixtures for the live-source tests: one loopback fake publisher per test, env pointed at it."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta

import pytest

from gridshift import locations
from pipelines.sources import iso as iso_prices
from tests.conftest import shared_data_dir
from tests.integration.pipelines.live.fakes import FakePublishers, FakeState, de_lu_2023_values
from tests.unit.pipelines.fixtures.grid import entsoe_days_from_values


class FakeIsoAdapter:
    """Stands in for gridstatus: CAISO day-ahead (USD) from the mirror's local-currency file."""

    calls = 0

    def pull(self, spec, start, end):
        import pandas as pd

        type(self).calls += 1
        assert spec.iso == "CAISO"
        rel = "prices/local_currency/US-CAL-CISO/US-CAL-CISO_electricity_prices_2023.csv"
        raw = pd.read_csv(shared_data_dir() / rel)
        ts = pd.to_datetime(raw["Datetime"]).dt.tz_localize("UTC")  # this file's naive times are UTC
        df = pd.DataFrame({
            "Interval Start": ts.dt.tz_convert("America/Los_Angeles"),
            "Interval End": (ts + pd.Timedelta(hours=1)).dt.tz_convert("America/Los_Angeles"),
            "Location": spec.node, "Location Type": "Trading Hub", "Market": "DAY_AHEAD_HOURLY",
            "LMP": raw["Price (USD/MWh)"],
        })
        return df[(df["Interval Start"] >= pd.Timestamp(start)) & (df["Interval Start"] < pd.Timestamp(end))]


@pytest.fixture
def fake(tmp_path, monkeypatch, shared_data):
    """A running fake with DE-LU and US-CAL-CISO data; env vars and tokens point at it."""
    state = FakeState(data=shared_data)
    for code in ("DE-LU", "US-CAL-CISO"):
        loc = locations.get(code)
        state.openmeteo_locations[(round(loc.lat, 2), round(loc.lon, 2))] = code
    state.entsoe_days["10Y1001A1001A82H"] = entsoe_days_from_values(de_lu_2023_values(shared_data), date(2023, 1, 1))
    monkeypatch.chdir(tmp_path)  # no stray .env from the checkout
    FakeIsoAdapter.calls = 0
    iso_prices.set_adapter_factory(FakeIsoAdapter)
    with FakePublishers(state) as srv:
        env = {
            "GRIDSHIFT_OPENMETEO_URL": f"{srv.url}/v1/archive",
            "ENTSOE_ENDPOINT_URL": f"{srv.url}/api",
            "GRIDSHIFT_EMAPS_CSV_URL": f"{srv.url}/emaps-csv/{{zone}}_{{year}}_hourly.csv",
            "GRIDSHIFT_EMAPS_API_URL": srv.url,
            "GRIDSHIFT_ALIBABA_URL": f"{srv.url}/files",
            "ENTSOE_API_KEY": state.entsoe_token,
            "ELECTRICITYMAPS_TOKEN": state.emaps_token,
            "GRIDSHIFT_HTTP_RETRIES": "3",
            "GRIDSHIFT_HTTP_BACKOFF": "0.05",
            # connect and read timeouts: the session's defaults (10 s, 120 s), far above any answer of the fake
            # even on a loaded machine (a 1 s read timeout used to trip there, and the retries doubled the
            # request counts the tests assert); the timeout path has tests of its own (test_ingest_live.py)
        }
        for k, v in env.items():
            monkeypatch.setenv(k, v)
        monkeypatch.delenv("GRIDSHIFT_MIRROR", raising=False)
        monkeypatch.delenv("PJM_API_KEY", raising=False)
        monkeypatch.delenv("GRIDSHIFT_ALIBABA_SHA256SUMS", raising=False)
        yield srv
    iso_prices.set_adapter_factory(None)


def utc(*a) -> datetime:
    return datetime(*a, tzinfo=UTC)


HOUR = timedelta(hours=1)
