"""The cached session against hostile answers: no token is ever stored or logged, no failure is cached.

Every test greps every file under the home (the SQLite cache included) and the captured logs for the
tokens, and checks that after a failure the next run asks the server again.
"""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from gridshift import locations
from gridshift.errors import SourceUnavailableError
from gridshift.home import Home
from pipelines.core.http import make_session
from pipelines.sources import electricitymaps
from tests.integration.pipelines.live.conftest import utc
from tests.integration.pipelines.live.fakes import FakePublishers, FakeState
from warehouse.db import read_table
from warehouse.ingest import ingest_grid


def _files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file()) if root.exists() else []


def _assert_no_token(home: Home, logs: str, *tokens: str) -> None:
    files = _files(home.root)
    assert any(p.name == "http_cache.sqlite" for p in files), files  # the cache exists and is searched
    for p in files:
        data = p.read_bytes()
        for tok in tokens:
            assert tok.encode() not in data, f"token found in {p}"
    for tok in tokens:
        assert tok not in logs, "token found in the logs"


def _cached(home: Home) -> int:
    with make_session(home) as s:
        return len(list(s.cache.responses.keys()))


@pytest.fixture
def logs(caplog):
    caplog.set_level(logging.DEBUG)
    return caplog


def test_entsoe_302_then_html_stores_no_token_and_is_asked_again(fake, tmp_path, logs):
    """The adversary's case: 302 (Location carrying securityToken) then an HTML page."""
    fake.state.add_fault("/api", "redirect", "/api-moved?{query}")
    fake.state.add_fault("/api-moved", "html")
    home = Home(tmp_path / "home")
    with pytest.raises(SourceUnavailableError, match="HTML page"):
        ingest_grid("price", "DE-LU", 2023, home=home, mirror=None, live=True)
    assert [r.path for r in fake.state.requests] == ["/api", "/api-moved"]
    assert fake.state.requests[1].query["securityToken"] == [fake.state.entsoe_token]  # same origin: followed
    assert _cached(home) == 0  # neither the redirect nor the page
    _assert_no_token(home, logs.text, fake.state.entsoe_token)
    # the next run asks the server again (nothing replayed from the cache) and succeeds
    rep = ingest_grid("price", "DE-LU", 2023, home=home, mirror=None, live=True)
    assert rep.rows == 8759 and fake.state.count("/api") == 3
    assert _cached(home) == 1
    ingest_grid("price", "DE-LU", 2023, home=home, mirror=None, live=True)  # the good answer is cached
    assert fake.state.count("/api") == 3
    _assert_no_token(home, logs.text, fake.state.entsoe_token)


def test_redirect_history_and_location_are_scrubbed_before_caching(fake, tmp_path, logs):
    """A redirect to the same origin, then the real document: cached, with its history, and no token."""
    fake.state.add_fault("/api", "redirect", "/api?{query}&hop=1")
    home = Home(tmp_path / "home")
    rep = ingest_grid("price", "DE-LU", 2023, home=home, mirror=None, live=True)
    assert rep.rows == 8759 and fake.state.count("/api") == 2
    with make_session(home) as s:
        (key,) = list(s.cache.responses.keys())
        cached = s.cache.responses[key]
        assert len(cached.history) == 1 and cached.history[0].status_code == 302
        location = cached.history[0].headers["Location"]
        assert "securityToken=***" in location and "hop=1" in location
        assert "securityToken=***" in cached.url and "securityToken=***" in cached.history[0].url
    _assert_no_token(home, logs.text, fake.state.entsoe_token)
    ingest_grid("price", "DE-LU", 2023, home=home, mirror=None, live=True)
    assert fake.state.count("/api") == 2  # served from the cache


def test_redirect_to_another_origin_drops_the_token(fake, tmp_path, logs, shared_data):
    """Query token (ENTSO-E) and header token (Electricity Maps API) never reach another host."""
    with FakePublishers(FakeState(data=shared_data)) as other:
        fake.state.add_fault("/api", "redirect", f"{other.url}/api?{{query}}")
        fake.state.add_fault("/v3/", "redirect", f"{other.url}/v3/carbon-intensity/past-range?{{query}}")
        home = Home(tmp_path / "home")
        with pytest.raises(SourceUnavailableError, match="401"):
            ingest_grid("price", "DE-LU", 2023, home=home, mirror=None, live=True)
        loc = locations.get("DE-LU")
        with make_session(home) as s, pytest.raises(SourceUnavailableError, match="401"):
            electricitymaps.API.fetch_window(loc, utc(2023, 1, 1), utc(2023, 1, 2), session=s)
        got = other.state.requests
        assert [r.path for r in got] == ["/api", "/v3/carbon-intensity/past-range"]
        assert "securityToken" not in got[0].query and got[0].query["documentType"] == ["A44"]
        assert "auth-token" not in {k.lower() for k in got[1].headers} and got[1].query["zone"] == ["DE"]
        for r in got:
            assert fake.state.entsoe_token not in str(r) and fake.state.emaps_token not in str(r)
    # the original server did get them
    assert fake.state.requests[0].query["securityToken"] == [fake.state.entsoe_token]
    assert fake.state.requests[1].headers.get("auth-token") == fake.state.emaps_token
    assert _cached(home) == 0
    _assert_no_token(home, logs.text, fake.state.entsoe_token, fake.state.emaps_token)


@pytest.mark.parametrize("faults,match", [
    ([("status", 403)], "403"),
    ([("status", 401)], "401"),
    ([("status", 500)] * 4, "too many 500 error responses"),
    ([("status", 503)] * 4, "too many 503 error responses"),
    ([("html",)], "HTML page"),
], ids=["403", "401", "500", "503", "html"])
def test_failures_are_never_cached_and_the_next_run_asks_again(fake, tmp_path, logs, faults, match):
    for f in faults:
        fake.state.add_fault("/api", *f)
    home = Home(tmp_path / "home")
    with pytest.raises(SourceUnavailableError, match=match):
        ingest_grid("price", "DE-LU", 2023, home=home, mirror=None, live=True)
    asked = fake.state.count("/api")
    assert asked == len(faults)  # 500/503: the first try and 3 retries
    assert _cached(home) == 0
    _assert_no_token(home, logs.text, fake.state.entsoe_token)
    ingest_grid("price", "DE-LU", 2023, home=home, mirror=None, live=True)
    assert fake.state.count("/api") == asked + 1
    assert read_table(home.warehouse_path, "SELECT count(*) n FROM grid_price")["n"][0] == 8759


def test_openmeteo_error_answer_is_not_cached(fake, tmp_path, logs):
    fake.state.add_fault("/v1/archive", "status", 400)  # Open-Meteo's JSON error answer
    home = Home(tmp_path / "home")
    with pytest.raises(SourceUnavailableError, match="fake fault"):
        ingest_grid("weather", "DE-LU", 2023, home=home, mirror=None, live=True)
    assert _cached(home) == 0
    rep = ingest_grid("weather", "DE-LU", 2023, home=home, mirror=None, live=True)
    assert rep.rows == 8759 and fake.state.count("/v1/archive") == 2


def test_a_200_the_caller_refuses_is_not_cached(fake, tmp_path, logs):
    """An HTTP 200 that fails the caller's check (HTML where API v3 JSON was asked for) is not stored."""
    fake.state.add_fault("/v3/", "html")
    loc = locations.get("DE-LU")
    home = Home(tmp_path / "home")
    with make_session(home) as s, pytest.raises(SourceUnavailableError, match="not JSON"):
        electricitymaps.API.fetch_window(loc, utc(2023, 1, 1), utc(2023, 1, 2), session=s)
    assert _cached(home) == 0
    with make_session(home) as s:
        doc = electricitymaps.API.fetch_window(loc, utc(2023, 1, 1), utc(2023, 1, 2), session=s)
    assert fake.state.count("/v3/") == 3  # refused, then asked again for both factors
    assert electricitymaps.API.parse(doc, loc, 2023).height == 24
    assert _cached(home) == 2
    _assert_no_token(home, logs.text, fake.state.emaps_token)
