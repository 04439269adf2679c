"""No credential survives :func:`redact_uri` / :func:`redact_text`, and a URI without one is left as it is."""

from __future__ import annotations

import pytest

from pipelines.core import http
from pipelines.core.raw import RawFile
from pipelines.core.redact import redact_text, redact_uri


@pytest.mark.parametrize("uri,clean", [
    ("http://user:pa55@127.0.0.1:8080/f.csv", "http://***@127.0.0.1:8080/f.csv"),
    ("https://ghp_tok3n@host/x", "https://***@host/x"),  # a token as the user name
    ("https://u:p%40ss@h/x?zone=DE", "https://***@h/x?zone=DE"),
    ("https://h/p?api_key=k1&zone=DE&token=t2", "https://h/p?api_key=***&zone=DE&token=***"),
    ("https://h/p?KEY=k1&Sig=s2", "https://h/p?KEY=***&Sig=***"),
    ("https://b.s3.amazonaws.com/o?X-Amz-Credential=AKIA1&X-Amz-Signature=abcd&X-Amz-Expires=60",
     "https://b.s3.amazonaws.com/o?X-Amz-Credential=***&X-Amz-Signature=***&X-Amz-Expires=60"),
    ("https://acct.blob.core.windows.net/c/f?sv=2020&sig=zz%2Bw", "https://acct.blob.core.windows.net/c/f?sv=2020&sig=***"),
    ("https://h/cb#access_token=t3&state=1", "https://h/cb#access_token=***&state=1"),
    ("https://h/p?password=hunter2", "https://h/p?password=***"),
])
def test_redact_uri_hides_user_info_and_secret_parameters(uri, clean):
    assert redact_uri(uri) == clean
    assert redact_uri(clean) == clean  # idempotent


@pytest.mark.parametrize("uri", [
    "file:///data/mirror/electricitymaps/DE-LU/DE-LU_2023_hourly.csv",
    "file:///home/a@b/mirror/x.csv",  # an '@' in a path is not user-info
    "https://data.electricitymaps.com/2025-04-03/DE_2023_hourly.csv",
    "https://api.electricitymaps.com/v3/carbon-intensity/past-range?zone=DE&start=2023-01-01T00:00Z",
    "gridstatus:CAISO/CAISO.get_lmp?node=TH_NP15_GEN-APND&year=2023",
    "https://h/p?monkey=1&keys=2&zone=DE",  # names that merely contain a secret name
])
def test_redact_uri_leaves_a_uri_without_credentials_unchanged(uri):
    assert redact_uri(uri) == uri


def test_drop_removes_the_secret_parameters():
    assert redact_uri("https://u:p@h/p?auth-token=t&zone=DE&sig=s", drop=True) == "https://***@h/p?zone=DE"


def test_redact_text_finds_credentials_in_messages():
    msg = ("HTTPConnectionPool(host='127.0.0.1', port=80): Max retries exceeded with url: /f?api_key=k1&x=1; "
           "from http://user:pa55@127.0.0.1/f.csv; headers {'Authorization': 'Basic dXNlcjpwYTU1'}; "
           "key findings: 3 rows")
    out = redact_text(msg)
    for secret in ("k1", "pa55", "dXNlcjpwYTU1"):
        assert secret not in out
    assert "http://***@127.0.0.1/f.csv" in out and "api_key=***&x=1" in out
    assert out.endswith("key findings: 3 rows")  # a plain word is not a parameter


def test_http_redact_also_hides_user_info(monkeypatch):
    monkeypatch.delenv("ENTSOE_API_KEY", raising=False)
    assert http.redact("HTTP 401 from http://u:pa55@h:1/x") == "HTTP 401 from http://***@h:1/x"


def test_a_raw_file_never_holds_a_credential_in_its_uri():
    raw = RawFile(source="electricitymaps-csv", uri="http://u:pa55@h/DE_2023_hourly.csv?token=t", content=b"x")
    assert raw.uri == "http://***@h/DE_2023_hourly.csv?token=***"


def test_cache_key_does_not_depend_on_credentials():
    import requests

    def key(url):
        return http.cache_key(requests.Request("GET", url).prepare(), ignored_parameters=http.ignored_params())

    assert key("http://u:pa55@h/f.csv") == key("http://other:pw@h/f.csv") == key("http://***@h/f.csv")
    assert key("http://h/f.csv?api_key=1") == key("http://h/f.csv?api_key=2")
    assert key("http://h/f.csv") != key("http://h/g.csv")
    # a URL without credentials keys exactly as requests-cache keys it (existing caches stay valid)
    from requests_cache import create_key

    req = requests.Request("GET", "http://h/f.csv?zone=DE").prepare()
    assert http.cache_key(req, ignored_parameters=http.ignored_params()) == create_key(
        req, ignored_parameters=http.ignored_params())
