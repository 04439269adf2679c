"""Credentials in a source URL authenticate the request and are stored, logged and shared nowhere.

The loopback fake requires HTTP basic auth; ``GRIDSHIFT_EMAPS_CSV_URL`` carries it as user-info
(``http://user:password@127.0.0.1:PORT/...``), which requests sends as an ``Authorization`` header.
"""

from __future__ import annotations

import base64
import json
import logging

from typer.testing import CliRunner

from gridshift.home import Home
from gridshift_cli import app
from warehouse.db import read_table

USER, PASSWORD = "gs-user-7c1", "pw-5ecr3t-9f8e7d"
CSV_PATH = "/emaps-csv/{zone}_{year}_hourly.csv"


def _secrets(user: str = USER, password: str = PASSWORD) -> list[bytes]:
    """Every form the credentials could be written in: as given, as user-info, as the basic-auth header."""
    pair = f"{user}:{password}".encode()
    return [password.encode(), user.encode(), pair, base64.b64encode(pair)]


def _url(fake, user: str = USER, password: str = PASSWORD) -> str:
    return f"http://{user}:{password}@{fake.url.removeprefix('http://')}{CSV_PATH}"


def _leaks(root, texts: dict[str, str], secrets: list[bytes]) -> list[str]:
    """Where a secret appears: files under ``root`` (any depth, any format) and the captured texts."""
    found = [f"{p}: {s!r}" for p in sorted(root.rglob("*")) if p.is_file() for s in secrets if s in p.read_bytes()]
    return found + [f"{name}: {s!r}" for name, text in texts.items() for s in secrets if s.decode() in text]


def test_basic_auth_url_ingests_and_the_credentials_are_stored_nowhere(fake, tmp_path, monkeypatch, shared_data,
                                                                       caplog, capfd):
    caplog.set_level(logging.DEBUG)
    fake.state.basic_auth = (USER, PASSWORD)
    monkeypatch.setenv("GRIDSHIFT_EMAPS_CSV_URL", _url(fake))
    home = tmp_path / "home"
    runner = CliRunner()
    ingest = runner.invoke(app, ["ingest", "--regions", "DE-LU", "--year", "2023", "--sources", "carbon", "--live",
                                 "--home", str(home)])
    assert ingest.exit_code == 0, ingest.output
    h = Home(home)
    # the request authenticated (the fake answers 401 otherwise) and the year is in the warehouse
    sent = "Basic " + base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()
    assert [r.headers.get("Authorization") for r in fake.state.requests] == [sent]
    assert read_table(h.warehouse_path, "SELECT count(*) FROM grid_carbon").item() == 8760
    host = fake.url.removeprefix("http://")
    assert read_table(h.warehouse_path, "SELECT uri FROM raw_files").to_series().to_list() == [
        f"http://***@{host}/emaps-csv/DE_2023_hourly.csv"]
    # a rerun is answered from the HTTP cache (its key does not depend on the password)
    again = runner.invoke(app, ["ingest", "--regions", "DE-LU", "--year", "2023", "--sources", "carbon", "--live",
                                "--home", str(home)])
    assert again.exit_code == 0, again.output
    assert fake.state.count() == 1
    # the bundle built from it: its lineage names the file without the credentials
    out = tmp_path / "bundles"
    export = runner.invoke(app, ["export", "--regions", "DE-LU", "--year", "2023", "--workload", "none",
                                 "--max-gap-hours", "8", "--mirror", str(shared_data), "--home", str(home),
                                 "--live", "--out", str(out)])
    assert export.exit_code == 0, export.output
    (bundle,) = [p for p in out.iterdir() if (p / "manifest.json").is_file()]
    lineage = json.loads((bundle / "manifest.json").read_text())["lineage"]
    assert f"http://***@{host}/emaps-csv/DE_2023_hourly.csv" in [d["uri"] for d in lineage]
    # nowhere: the warehouse, the HTTP cache, the landed files, the Dagster home (run and event storage,
    # compute logs), the logs, the bundle; nor the captured output and log records
    assert (h.http_cache_path / "http_cache.sqlite").is_file() and h.dagster_dir.is_dir()
    std = capfd.readouterr()
    texts = {"ingest output": ingest.output + again.output, "export output": export.output, "log records": caplog.text,
             "stdout": std.out, "stderr": std.err}
    assert _leaks(tmp_path, texts, _secrets()) == []


def test_a_401_names_the_url_without_its_credentials(fake, tmp_path, monkeypatch, caplog, capfd):
    caplog.set_level(logging.DEBUG)
    fake.state.basic_auth = (USER, "the-right-one")
    monkeypatch.setenv("GRIDSHIFT_EMAPS_CSV_URL", _url(fake))  # a wrong password
    home = tmp_path / "home"
    res = CliRunner().invoke(app, ["ingest", "--regions", "DE-LU", "--year", "2023", "--sources", "carbon", "--live",
                                   "--home", str(home)])
    assert res.exit_code != 0
    host = fake.url.removeprefix("http://")
    assert f"HTTP 401 from http://***@{host}/emaps-csv/DE_2023_hourly.csv" in res.output, res.output
    assert fake.state.count() == 1 and fake.state.requests[0].headers.get("Authorization")
    std = capfd.readouterr()
    texts = {"output": res.output, "log records": caplog.text, "stdout": std.out, "stderr": std.err}
    assert _leaks(tmp_path, texts, _secrets()) == []


def test_a_token_the_upstream_echoes_in_its_401_reaches_no_file(fake, tmp_path, monkeypatch, capfd):
    """Both tokened upstreams answer a revoked token with a 401 that quotes it: the refusal, the Dagster run
    records and the failure log under the home hold neither token (every file under the home is scanned)."""
    fake.state.echo_token_in_401 = True
    revoked = {"ENTSOE_API_KEY": "revoked-entsoe-4f1b9a7c3e", "ELECTRICITYMAPS_TOKEN": "revoked-emaps-8d2e6b0a51"}
    for k, v in revoked.items():
        monkeypatch.setenv(k, v)
    home = tmp_path / "home"
    runner = CliRunner()
    outputs = []
    fake.state.add_fault("/emaps-csv", "status", 404)  # the yearly CSV is not published: the API is asked
    for args in (["--sources", "price"], ["--sources", "carbon"]):
        r = runner.invoke(app, ["ingest", "--regions", "DE-LU", "--year", "2023", "--live", "--home", str(home),
                                *args])
        assert r.exit_code != 0 and "401" in r.output, r.output
        outputs.append(r.output)
    assert fake.state.count("/api") >= 1 and any(r.headers.get("auth-token") for r in fake.state.requests)
    out, err = capfd.readouterr()
    secrets = [v.encode() for v in revoked.values()]
    assert any(p.parts[-2] == "runs" for p in home.rglob("*.db"))
    assert _leaks(home, {"output": "".join(outputs) + out + err}, secrets) == []
