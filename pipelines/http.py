"""The one HTTP session every live source uses: cached, retried, time-limited, and token-safe.

Policy (documented in docs/sources.md):

- **Cache**: ``requests_cache.CachedSession`` with an SQLite file under the gridshift home
  (``Home.http_cache_path / "http_cache.sqlite"``). Historical responses never expire
  (``NEVER_EXPIRE``); callers pass ``expire_after=RECENT_EXPIRE`` for windows that touch the last
  few days ("latest" data can still change upstream). ``stale_if_error=True``: an expired cached
  response is used when the refresh fails. Only 200 responses are cached.
- **Secrets**: ``ignored_parameters`` *replaces* requests-cache's defaults, so the defaults are
  repeated and ENTSO-E's ``securityToken`` query parameter and Electricity Maps' ``auth-token``
  header are added: they are left out of cache keys and redacted from stored requests/URLs.
  Tokens come only from the environment or a git-ignored ``.env`` (see :func:`get_token`), and
  :func:`redact` scrubs them from error messages; a logging filter scrubs library log records.
- **Retries**: urllib3 ``Retry`` on connect/read errors and on 429/500/502/503/504, exponential
  backoff, ``Retry-After`` honoured (capped at ``MAX_RETRY_AFTER_S``).
- **Timeouts**: every request gets ``(connect, read)`` timeouts unless the caller gives one.

Tests shrink timeouts/backoff through :func:`make_session` arguments or the ``GRIDSHIFT_HTTP_*``
environment variables; the policy itself is the same.
"""

from __future__ import annotations

import hashlib
import logging
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path

import requests
from requests.adapters import HTTPAdapter
from requests_cache import DEFAULT_IGNORED_PARAMS, NEVER_EXPIRE, CachedSession
from urllib3.util.retry import Retry

from gridshift.errors import SourceUnavailableError
from gridshift.home import Home
from pipelines.raw import RawFile

log = logging.getLogger(__name__)

IGNORED_PARAMS = [*DEFAULT_IGNORED_PARAMS, "securityToken", "auth-token"]
RECENT_EXPIRE = timedelta(hours=1)
RECENT_WINDOW = timedelta(days=7)  # data newer than this may still be revised upstream
RETRY_STATUS = (429, 500, 502, 503, 504)
MAX_RETRY_AFTER_S = 120.0
TOKEN_ENV_VARS = ("ENTSOE_API_KEY", "ELECTRICITYMAPS_TOKEN", "PJM_API_KEY")
USER_AGENT = "gridshift (+https://github.com/gridshift; data pipeline)"


def _env_float(name: str, default: float) -> float:
    raw = os.environ.get(name, "")
    try:
        return float(raw) if raw else default
    except ValueError:
        return default


# --------------------------------------------------------------------------- tokens


def _dotenv(path: Path) -> dict[str, str]:
    """Parse a minimal ``.env`` (KEY=VALUE lines, ``#`` comments, optional quotes)."""
    out: dict[str, str] = {}
    try:
        text = path.read_text(encoding="utf-8")
    except OSError:
        return out
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#") or "=" not in line:
            continue
        key, value = line.split("=", 1)
        key = key.removeprefix("export ").strip()
        value = value.strip().strip("'\"")
        if key:
            out[key] = value
    return out


def get_token(name: str, *, dotenv: Path | None = None) -> str | None:
    """A secret from the environment, else from ``.env`` in the working directory; never config."""
    value = os.environ.get(name)
    if value:
        return value
    value = _dotenv(dotenv or Path.cwd() / ".env").get(name)
    return value or None


def _known_secrets() -> list[str]:
    secrets = []
    for name in TOKEN_ENV_VARS:
        tok = get_token(name)
        if tok and len(tok) >= 4:
            secrets.append(tok)
    return secrets


_QUERY_SECRET = re.compile(r"(?i)((?:securityToken|auth-token|api_key|apikey|access_token)=)[^&\s'\"]+")


def redact(text: str, extra: Iterable[str] = ()) -> str:
    """Remove every known token (and token-like query parameters) from ``text``."""
    out = _QUERY_SECRET.sub(r"\1***", str(text))
    for secret in [*_known_secrets(), *extra]:
        if secret:
            out = out.replace(secret, "***")
    return out


class RedactingFilter(logging.Filter):
    """Scrub tokens from log records of the HTTP libraries (urllib3 logs full URLs at DEBUG)."""

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            msg = record.getMessage()
        except Exception:  # noqa: BLE001 - a malformed record is not ours to break
            return True
        clean = redact(msg)
        if clean != msg:
            record.msg, record.args = clean, None
        return True


_FILTER = RedactingFilter()
for _name in ("urllib3", "urllib3.connectionpool", "requests_cache", "entsoe", "entsoe.entsoe",
              "entsoe.decorators", "gridstatus", __name__):
    _lg = logging.getLogger(_name)
    if _FILTER not in _lg.filters:
        _lg.addFilter(_FILTER)


# --------------------------------------------------------------------------- session


class _CappedRetry(Retry):
    """``Retry`` that honours ``Retry-After`` but never sleeps longer than ``MAX_RETRY_AFTER_S``."""

    def parse_retry_after(self, retry_after: str) -> float:
        return min(super().parse_retry_after(retry_after), MAX_RETRY_AFTER_S)


class _TimeoutAdapter(HTTPAdapter):
    """An adapter that applies a default ``(connect, read)`` timeout to every request."""

    def __init__(self, *args, timeout: tuple[float, float], **kwargs) -> None:
        self._timeout = timeout
        super().__init__(*args, **kwargs)

    def send(self, request, **kwargs):  # type: ignore[override]
        if kwargs.get("timeout") is None:
            kwargs["timeout"] = self._timeout
        return super().send(request, **kwargs)


def cache_file(home: Home) -> Path:
    return home.http_cache_path / "http_cache.sqlite"


def make_session(
    home: Home,
    *,
    retries: int | None = None,
    backoff_factor: float | None = None,
    timeout: tuple[float, float] | None = None,
) -> CachedSession:
    """The one cached, retrying session factory (see the module docstring for the policy).

    Defaults: 5 retries, backoff 1 s (1, 2, 4, 8... s, at most 60 s), timeouts (10 s connect,
    120 s read); overridable by ``GRIDSHIFT_HTTP_RETRIES``, ``GRIDSHIFT_HTTP_BACKOFF``,
    ``GRIDSHIFT_HTTP_CONNECT_TIMEOUT``, ``GRIDSHIFT_HTTP_READ_TIMEOUT``.
    """
    home.http_cache_path.mkdir(parents=True, exist_ok=True)
    retries = int(_env_float("GRIDSHIFT_HTTP_RETRIES", 5)) if retries is None else retries
    backoff = _env_float("GRIDSHIFT_HTTP_BACKOFF", 1.0) if backoff_factor is None else backoff_factor
    timeout = timeout or (
        _env_float("GRIDSHIFT_HTTP_CONNECT_TIMEOUT", 10.0),
        _env_float("GRIDSHIFT_HTTP_READ_TIMEOUT", 120.0),
    )
    session = CachedSession(
        str(cache_file(home)),
        backend="sqlite",
        expire_after=NEVER_EXPIRE,
        allowable_codes=(200,),
        allowable_methods=("GET", "HEAD"),
        stale_if_error=True,
        ignored_parameters=IGNORED_PARAMS,
        match_headers=False,
    )
    policy = _CappedRetry(
        total=retries,
        connect=retries,
        read=retries,
        status=retries,
        backoff_factor=backoff,
        backoff_max=60.0,
        status_forcelist=RETRY_STATUS,
        allowed_methods=frozenset({"GET", "HEAD"}),
        respect_retry_after_header=True,
        raise_on_status=True,
    )
    adapter = _TimeoutAdapter(max_retries=policy, timeout=timeout)
    session.mount("http://", adapter)
    session.mount("https://", adapter)
    session.headers["User-Agent"] = USER_AGENT
    return session


def expire_for(end: datetime, *, now: datetime | None = None):
    """Cache lifetime for a response covering data up to ``end``: forever if historical."""
    now = now or datetime.now(UTC)
    return RECENT_EXPIRE if end > now - RECENT_WINDOW else NEVER_EXPIRE


# --------------------------------------------------------------------------- downloads


class DownloadError(SourceUnavailableError):
    """A download failed or its body was rejected (truncated, wrong checksum, wrong content)."""


@dataclass(frozen=True)
class Expect:
    """What a download must look like to be accepted."""

    sha256: str | None = None
    kind: str | None = None  # "csv", "json", "xml", "gzip", "flatbuffers" or None
    csv_header_startswith: str | None = None


_HTML = re.compile(rb"^\s*(<!doctype html|<html|<head|<body)", re.IGNORECASE)


def check_body(content: bytes, expect: Expect, *, what: str, headers=None) -> None:
    """Reject a body that is not the file we asked for. Raises :class:`DownloadError`."""
    headers = headers or {}
    length = headers.get("Content-Length")
    if length is not None and length.isdigit() and int(length) != len(content):
        raise DownloadError(f"{what}: truncated download ({len(content)} of {length} bytes); nothing landed")
    if not content:
        raise DownloadError(f"{what}: empty response body; nothing landed")
    ctype = (headers.get("Content-Type") or "").lower()
    if expect.kind in ("csv", "json", "xml", "gzip", "flatbuffers") and (
        _HTML.match(content[:512]) or ("text/html" in ctype and expect.kind != "xml")
    ):
        raise DownloadError(
            f"{what}: the server answered with an HTML page, not {expect.kind.upper()} "
            "(an error or login page?); nothing landed"
        )
    if expect.kind == "gzip" and content[:2] != b"\x1f\x8b":
        raise DownloadError(f"{what}: not a gzip file; nothing landed")
    if expect.csv_header_startswith is not None:
        head = content.lstrip(b"\xef\xbb\xbf")[: len(expect.csv_header_startswith.encode()) + 4]
        if not head.decode("utf-8", "replace").startswith(expect.csv_header_startswith):
            raise DownloadError(
                f"{what}: unexpected CSV header {head[:60]!r} (expected it to start with "
                f"{expect.csv_header_startswith!r}); nothing landed"
            )
    if expect.sha256 is not None:
        got = hashlib.sha256(content).hexdigest()
        if got != expect.sha256.lower():
            raise DownloadError(
                f"{what}: checksum mismatch (sha256 {got}, expected {expect.sha256}); nothing landed"
            )


def get(
    session: requests.Session,
    url: str,
    *,
    source: str,
    what: str,
    params: dict | None = None,
    headers: dict | None = None,
    expire_after=NEVER_EXPIRE,
    secrets: Iterable[str] = (),
) -> requests.Response:
    """GET through the session; any failure becomes a :class:`DownloadError` with no token in it."""
    secrets = list(secrets)
    try:
        kwargs = {"params": params, "headers": headers}
        if isinstance(session, CachedSession):
            kwargs["expire_after"] = expire_after
        resp = session.get(url, **kwargs)
    except requests.RequestException as exc:
        raise DownloadError(f"{source}: {what}: request failed: {redact(str(exc), secrets)}") from None
    if resp.status_code != 200:
        body = redact(resp.text[:300], secrets) if resp.content else ""
        raise DownloadError(
            f"{source}: {what}: HTTP {resp.status_code} from {redact(_strip_query(resp.url), secrets)}"
            + (f": {body}" if body else "")
        )
    return resp


def _strip_query(url: str) -> str:
    return url.split("?", 1)[0]


def download(
    session: requests.Session,
    url: str,
    *,
    source: str,
    expect: Expect = Expect(),
    params: dict | None = None,
    headers: dict | None = None,
    expire_after=NEVER_EXPIRE,
    uri: str | None = None,
    secrets: Iterable[str] = (),
) -> RawFile:
    """Download one upstream file and check it (length, HTML page, header, sha256) before returning.

    A rejected body raises :class:`DownloadError` and is removed from the HTTP cache, so nothing
    bad is landed or replayed. ``uri`` is what lineage records (defaults to the URL without query).
    """
    what = _strip_query(url)
    resp = get(session, url, source=source, what=what, params=params, headers=headers,
               expire_after=expire_after, secrets=secrets)
    try:
        check_body(resp.content, expect, what=f"{source}: {what}", headers=resp.headers)
    except DownloadError:
        forget(session, resp)
        raise
    return RawFile(source=source, uri=uri or what, content=resp.content)


def forget(session: requests.Session, resp: requests.Response) -> None:
    """Drop a response from the cache (used when its body was rejected)."""
    cache = getattr(session, "cache", None)
    key = getattr(resp, "cache_key", None)
    if cache is not None and key:
        try:
            cache.delete(key)
        except Exception:  # noqa: BLE001 - best effort; the body was already rejected
            log.warning("could not remove a rejected response from the HTTP cache")
