"""Live ingest end to end against the fakes: faults, cache, secrets, source order, the CLI."""

from __future__ import annotations

import hashlib
import logging
import shutil
import time

import pytest
from typer.testing import CliRunner

from dagster_project import plan, ui
from gridshift.errors import SourceUnavailableError
from gridshift.home import Home
from gridshift_cli import app
from pipelines.core import http
from pipelines.core.http import DownloadError, Expect, download, make_session
from tests.integration.pipelines.live.conftest import FakeIsoAdapter
from warehouse.db import read_table
from warehouse.ingest import ingest_grid

COLS = ("location, ts_utc, carbon_direct_g_per_kwh, carbon_lca_g_per_kwh, is_estimated, estimation_method, "
        "emaps_zone, source, raw_sha256")


def _files(root):
    return sorted(p for p in root.rglob("*") if p.is_file()) if root.exists() else []


def _rows(home: Home, table: str, cols: str = "*"):
    return read_table(home.warehouse_path, f"SELECT {cols} FROM {table} ORDER BY location, ts_utc")


def test_live_ingest_all_kinds_second_run_offline_no_token_on_disk(fake, tmp_path, caplog):
    caplog.set_level(logging.DEBUG)
    home = Home(tmp_path / "home")
    for kind, region in (("carbon", "DE-LU"), ("price", "DE-LU"), ("weather", "DE-LU"), ("price", "US-CAL-CISO")):
        rep = ingest_grid(kind, region, 2023, home=home, mirror=None, live=True)
        assert rep.rows > 8000
    n = fake.state.count()
    assert n == 3 and FakeIsoAdapter.calls == 1  # CSV, ENTSO-E, Open-Meteo; CAISO via the adapter
    # a second run of the same ingest makes zero network requests (HTTP cache + persisted ISO pull)
    for kind, region in (("carbon", "DE-LU"), ("price", "DE-LU"), ("weather", "DE-LU"), ("price", "US-CAL-CISO")):
        ingest_grid(kind, region, 2023, home=home, mirror=None, live=True)
    assert fake.state.count() == n and FakeIsoAdapter.calls == 1
    # the tokens reached the server...
    assert any(r.query.get("securityToken") == [fake.state.entsoe_token] for r in fake.state.requests)
    # ...and are nowhere on disk under the home (cache, landed raw files, warehouse) nor in the logs
    files = _files(home.root)
    assert any(p.name.endswith(".sqlite") for p in files) and any("/raw/" in str(p) for p in files)
    for p in files:
        data = p.read_bytes()
        for tok in (fake.state.entsoe_token, fake.state.emaps_token):
            assert tok.encode() not in data, f"token found in {p}"
    assert fake.state.entsoe_token not in caplog.text and fake.state.emaps_token not in caplog.text
    price = _rows(home, "grid_price", "location, usd_per_local, currency, source")
    assert set(price.select("location", "currency", "usd_per_local").unique().rows()) == {
        ("DE-LU", "EUR", 1.0813), ("US-CAL-CISO", "USD", 1.0)}


def test_emaps_live_and_mirror_rows_identical(fake, tmp_path, shared_data):
    live_home, mirror_home = Home(tmp_path / "live"), Home(tmp_path / "mirror")
    ingest_grid("carbon", "DE-LU", 2023, home=live_home, mirror=None, live=True)
    ingest_grid("carbon", "DE-LU", 2023, home=mirror_home, mirror=shared_data)
    a, b = _rows(live_home, "grid_carbon", COLS), _rows(mirror_home, "grid_carbon", COLS)
    assert a.height == 8760 and a.equals(b)  # same bytes → same rows, raw_sha256 and source included


def test_mirror_wins_over_live(fake, tmp_path, shared_data):
    home = Home(tmp_path / "home")
    ingest_grid("weather", "DE-LU", 2023, home=home, mirror=shared_data, live=True)
    assert fake.state.count() == 0


def test_no_source_error_names_every_way_to_provide_it(fake, tmp_path, monkeypatch):
    home = Home(tmp_path / "home")
    with pytest.raises(SourceUnavailableError) as info:
        ingest_grid("price", "DE-LU", 2023, home=home, mirror=None)
    msg = str(info.value)
    assert "grid_price DE-LU 2023" in msg and "--mirror" in msg and "--live" in msg and "ENTSOE_API_KEY" in msg
    monkeypatch.delenv("ENTSOE_API_KEY")
    with pytest.raises(SourceUnavailableError, match=r"(?s)not found in mirror.*live: .*ENTSOE_API_KEY"):
        ingest_grid("price", "DE-LU", 2023, home=home, mirror=tmp_path / "empty-mirror", live=True)
    assert fake.state.count() == 0 and _files(home.raw_dir) == []


@pytest.mark.parametrize("fault", [("status", 429, {"Retry-After": "1"}), ("status", 500)])
def test_transient_faults_are_retried(fake, tmp_path, fault):
    fake.state.add_fault("/emaps-csv/", *fault)
    home = Home(tmp_path / "home")
    t0 = time.monotonic()
    rep = ingest_grid("carbon", "DE-LU", 2023, home=home, mirror=None, live=True)
    assert rep.rows == 8760 and fake.state.count("/emaps-csv/") == 2
    if fault[1] == 429:
        assert time.monotonic() - t0 >= 0.9  # Retry-After honoured, not the 0.05 s backoff


def _read_timeout_above_an_answer(fake, monkeypatch) -> float:
    """A read timeout 10 times the time the fake now takes to answer the request under test (at least 1 s):
    it scales with the machine's load, so only a request the fake holds unanswered trips it."""
    import requests

    url = f"{fake.url}/emaps-csv/DE_2023_hourly.csv"
    t0 = time.monotonic()
    assert requests.get(url, timeout=120).status_code == 200
    timeout = max(1.0, 10 * (time.monotonic() - t0))
    fake.state.requests.clear()  # the probe is not the ingest's
    monkeypatch.setenv("GRIDSHIFT_HTTP_READ_TIMEOUT", f"{timeout:.3f}")
    return timeout


def test_a_request_left_unanswered_is_retried_after_the_read_timeout(fake, tmp_path, monkeypatch):
    _read_timeout_above_an_answer(fake, monkeypatch)
    fake.state.add_fault("/emaps-csv/", "hang")  # the first request gets no answer at all
    home = Home(tmp_path / "home")
    rep = ingest_grid("carbon", "DE-LU", 2023, home=home, mirror=None, live=True)
    assert rep.rows == 8760 and fake.state.count("/emaps-csv/") == 2  # the held one, then its retry
    assert _rows(home, "grid_carbon").height == 8760


def test_a_server_that_never_answers_fails_after_every_retry_nothing_landed(fake, tmp_path, monkeypatch):
    """Every try held unanswered: the read timeout ends each, whatever its length and the machine's load."""
    monkeypatch.setenv("GRIDSHIFT_HTTP_READ_TIMEOUT", "0.2")
    for _ in range(4):
        fake.state.add_fault("/emaps-csv/", "hang")
    home = Home(tmp_path / "home")
    with pytest.raises(SourceUnavailableError, match="(?i)read timed out"):
        ingest_grid("carbon", "DE-LU", 2023, home=home, mirror=None, live=True)
    assert fake.state.wait_for("/emaps-csv/", 4) == 4  # first try + 3 retries, no more
    _assert_nothing_landed(home)
    assert fake.state.faults == []  # every held request was one the client sent


def _assert_nothing_landed(home: Home):
    assert _files(home.raw_dir) == []
    if home.warehouse_path.exists():
        assert _rows(home, "grid_carbon").height == 0


def test_persistent_500_fails_clearly_nothing_landed(fake, tmp_path):
    for _ in range(4):
        fake.state.add_fault("/emaps-csv/", "status", 500)
    home = Home(tmp_path / "home")
    with pytest.raises(SourceUnavailableError, match="too many 500 error responses"):
        ingest_grid("carbon", "DE-LU", 2023, home=home, mirror=None, live=True)
    assert fake.state.count("/emaps-csv/") == 4  # first try + 3 retries
    _assert_nothing_landed(home)


@pytest.mark.parametrize("fault,match", [(("truncate",), "(?i)truncat|incomplete|broken"),
                                         (("html",), "HTML page")])
def test_corrupt_download_rejected_nothing_landed_nothing_cached(fake, tmp_path, fault, match):
    fake.state.add_fault("/emaps-csv/", *fault)
    home = Home(tmp_path / "home")
    with pytest.raises(SourceUnavailableError, match=match):
        ingest_grid("carbon", "DE-LU", 2023, home=home, mirror=None, live=True)
    _assert_nothing_landed(home)
    ingest_grid("carbon", "DE-LU", 2023, home=home, mirror=None, live=True)  # next run: a clean fetch
    assert fake.state.count("/emaps-csv/") == 2 and _rows(home, "grid_carbon").height == 8760


def test_checksummed_download_helper(fake, tmp_path, shared_data):
    body = (shared_data / "alibaba/gpu-v2020/pai_machine_spec.tar.gz").read_bytes()
    fake.state.files["pai_machine_spec.tar.gz"] = body
    good = hashlib.sha256(body).hexdigest()
    url = f"{fake.url}/files/pai_machine_spec.tar.gz"
    with make_session(Home(tmp_path / "h")) as s:
        with pytest.raises(DownloadError, match="checksum mismatch"):
            download(s, url, source="alibaba", expect=Expect(sha256="0" * 64, kind="gzip"))
        rf = download(s, url, source="alibaba", expect=Expect(sha256=good, kind="gzip"))
        assert rf.sha256 == good
        download(s, url, source="alibaba", expect=Expect(sha256=good, kind="gzip"))
    assert fake.state.count("/files/") == 2  # rejected body not cached; the good one is


def test_redact_scrubs_tokens(monkeypatch):
    monkeypatch.setenv("ENTSOE_API_KEY", "abcd-secret-1234")
    msg = http.redact("GET http://x/api?securityToken=abcd-secret-1234&documentType=A44 failed")
    assert "abcd-secret-1234" not in msg and "securityToken=***" in msg


def test_cli_ingest_live_two_regions(fake, tmp_path, shared_data):
    # the mirror holds only the reference tables: grid partitions fall through to the live fakes
    mirror = tmp_path / "mirror"
    for sub in ("egress", "reference"):
        shutil.copytree(shared_data / sub, mirror / sub)
    home = tmp_path / "home"
    res = CliRunner().invoke(app, ["ingest", "--regions", "DE-LU,US-CAL-CISO", "--year", "2023", "--live",
                                   "--mirror", str(mirror), "--home", str(home)])
    assert res.exit_code == 0, res.output
    h = Home(home)
    counts = dict(read_table(h.warehouse_path,
                             "SELECT location, count(*) AS n FROM grid_carbon GROUP BY location").iter_rows())
    assert counts == {"DE-LU": 8760, "US-CAL-CISO": 8760}
    w = dict(read_table(h.warehouse_path, "SELECT location, count(*) FROM weather GROUP BY location").iter_rows())
    assert w["DE-LU"] == 8759 and w["US-CAL-CISO"] >= 8700
    p = read_table(h.warehouse_path, "SELECT location, count(*), min(source) FROM grid_price GROUP BY location")
    assert {r[0]: r[2] for r in p.iter_rows()} == {"DE-LU": "entsoe-day-ahead",
                                                   "US-CAL-CISO": "gridstatus-iso-day-ahead"}
    for f in _files(home):
        assert fake.state.entsoe_token.encode() not in f.read_bytes()
    # 2023 is no year of this mirror (it holds no grid file): the run added it to the year partitions, which the
    # UI then offers with the mirror's own (none)
    assert plan.mirror_years(mirror) == [] and ui.offer_mirror_years(h) == [2023]
