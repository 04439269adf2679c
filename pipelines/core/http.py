"""The one HTTP session every live source uses: cached, retried, time-limited, and token-safe.

Policy (documented in docs/sources.md):

- **Cache**: a ``requests_cache.CachedSession`` (:class:`GridshiftSession`, defined by :func:`session_class`
  when a session is made: requests-cache is not imported before) with an SQLite file
  under the gridshift home (``Home.http_cache_path / "http_cache.sqlite"``), serialized as JSON (no
  pickle: opening a cache file never runs code). It *reads* like any
  CachedSession but never writes on its own (``read_only=True``): a response is stored only by
  :meth:`GridshiftSession.fetch`, and only when it is an HTTP 200 whose body the caller's
  ``accept`` check admitted (the CSV, JSON, XML or FlatBuffers asked for, not an error or login
  page). A 3xx, 4xx, 5xx, an HTML page or a body nobody checked never lands in the cache, so a
  failed fetch is asked again next time instead of being replayed forever. Historical responses
  never expire (``NEVER_EXPIRE``); windows touching the last few days expire after
  ``RECENT_EXPIRE``. ``stale_if_error=True``: an expired response is used when the refresh fails.
- **Secrets**: ``ignored_parameters`` *replaces* requests-cache's defaults, so the defaults are
  repeated and ENTSO-E's ``securityToken`` query parameter and Electricity Maps' ``auth-token``
  header are added: they are left out of cache keys. A cache key is made from the request's URL
  without credentials (:func:`cache_key`: user-info and secret query parameters redacted by
  :func:`pipelines.core.redact.redact_uri`), so no key depends on a password or a token. Before a
  response is stored every URL and header in it is scrubbed (:func:`scrub_url`, :func:`redact`) —
  its own, its request's, and those of the redirect history, ``Location`` headers included. A
  redirect to another origin (scheme, host or port) drops the token header and the token query
  parameters before it is followed (:meth:`GridshiftSession.rebuild_auth`). Tokens come only from the
  environment or a git-ignored ``.env`` (:func:`get_token`; the variable names are
  ``gridshift.sources.TOKEN_ENV_VARS``), and :func:`redact` scrubs them, and any URL's user-info, from
  error messages; a logging filter scrubs the records of the HTTP libraries and the clients
  (:func:`guard_loggers`). User-info in a source URL (``http://user:password@host/...``) still
  authenticates the request (requests sends it as HTTP basic auth).
- **Refusals**: :meth:`GridshiftSession.fetch` records the cache key of every answer it gives
  (``answered``); an answer a later check refuses (the parser, the table's model, the coverage
  minimum: ``warehouse.ingest``) is removed again by :func:`forget`, so a refused answer never stays
  cached and the next run asks the server again.
- **Retries**: urllib3 ``Retry`` on connect/read errors and on 429/500/502/503/504, exponential
  backoff, ``Retry-After`` honoured (capped at ``MAX_RETRY_AFTER_S``).
- **Timeouts**: every request gets ``(connect, read)`` timeouts unless the caller gives one.

Tests shrink timeouts/backoff through :func:`make_session` arguments or the ``GRIDSHIFT_HTTP_*``
environment variables; the policy itself is the same.
"""

from __future__ import annotations

import copy
import hashlib
import logging
import os
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import urlsplit

import requests
from requests.adapters import HTTPAdapter
from requests.structures import CaseInsensitiveDict
from urllib3.util.retry import Retry

from gridshift.errors import SourceUnavailableError
from gridshift.home import Home
from gridshift.sources import TOKEN_ENV_VARS
from pipelines.core.raw import RawFile
from pipelines.core.redact import REDACTED, SECRET_HEADERS, redact_text, redact_uri
from pipelines.core.source import NotPublished

if TYPE_CHECKING:
    from requests_cache import CachedResponse
    from requests_cache import CachedSession as GridshiftSession  # for annotations: session_class() subclasses it

log = logging.getLogger(__name__)

#: Added to requests-cache's ``DEFAULT_IGNORED_PARAMS`` (see the module docstring).
TOKEN_PARAMS = ("securityToken", "auth-token")
#: ``requests_cache.NEVER_EXPIRE`` (the signatures' default here): requests-cache itself is imported only
#: where a session is made (:func:`session_class` checks the two agree).
NEVER_EXPIRE = -1
RECENT_EXPIRE = timedelta(hours=1)
RECENT_WINDOW = timedelta(days=7)  # data newer than this may still be revised upstream
RETRY_STATUS = (429, 500, 502, 503, 504)
MAX_RETRY_AFTER_S = 120.0
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


def redact(text: str, extra: Iterable[str] = ()) -> str:
    """``text`` without credentials: every URL's user-info and secret parameters, ``name: value`` pairs of
    secret names (:func:`pipelines.core.redact.redact_text`), and every known token."""
    out = redact_text(text)
    for secret in [*_known_secrets(), *extra]:
        if secret:
            out = out.replace(secret, REDACTED)
    return out


def scrub_url(url: str) -> str:
    """``url`` as it may be stored or printed: its credentials redacted (:func:`redact_uri`) and every known
    token replaced (:func:`redact`)."""
    return redact(redact_uri(str(url)))


def _scrub_headers(headers) -> CaseInsensitiveDict:
    out = CaseInsensitiveDict()
    for k, v in dict(headers or {}).items():
        if k.lower() in SECRET_HEADERS:
            out[k] = REDACTED
        elif k.lower() in ("location", "content-location", "referer"):
            out[k] = scrub_url(str(v))
        else:
            out[k] = redact(str(v))
    return out


def _scrub(resp: CachedResponse) -> CachedResponse:
    """Redact every URL and header a response would store: its own, its request's, its redirect history's."""
    resp.url = scrub_url(resp.url)
    resp.headers = _scrub_headers(resp.headers)
    resp.request.url = scrub_url(resp.request.url)
    resp.request.headers = _scrub_headers(resp.request.headers)
    resp.history = [_scrub(h) for h in resp.history]
    return resp


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
#: Logger namespaces that may print a URL, a request's parameters or a header.
GUARDED_LOGGERS = ("urllib3", "requests", "requests_cache", "entsoe", "gridstatus", "openmeteo_requests", "pipelines")


def guard_loggers() -> None:
    """Attach the redacting filter to every logger of :data:`GUARDED_LOGGERS` that exists now.

    A filter on a parent logger does not see its children's records, so each existing logger gets
    it; called when a session is made and after a client library is imported lazily.
    """
    names = [n for n in logging.Logger.manager.loggerDict if n.split(".")[0] in GUARDED_LOGGERS]
    for name in {*GUARDED_LOGGERS, *names}:
        lg = logging.getLogger(name)
        if _FILTER not in lg.filters:
            lg.addFilter(_FILTER)


guard_loggers()


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


def _origin(url: str) -> tuple[str, str, int | None]:
    p = urlsplit(url)
    return p.scheme, (p.hostname or "").lower(), p.port or {"http": 80, "https": 443}.get(p.scheme)


Accept = Callable[[requests.Response], None]


@cache
def session_class() -> type:
    """:class:`GridshiftSession`, defined on first use: requests-cache is imported here, not with this module,
    because it loads every storage backend it ships (boto3 and botocore for DynamoDB among them: ≈ 0.4
    CPU-seconds of a fresh process), and a process reading only local files (an ingest from the mirror)
    makes no session."""
    from requests_cache import NEVER_EXPIRE as LIBRARY_NEVER_EXPIRE
    from requests_cache import CachedResponse, CachedSession
    from requests_cache.policy.expiration import get_expiration_datetime

    if LIBRARY_NEVER_EXPIRE != NEVER_EXPIRE:
        raise ImportError(f"requests_cache.NEVER_EXPIRE is {LIBRARY_NEVER_EXPIRE!r}, not {NEVER_EXPIRE!r}")

    class GridshiftSession(CachedSession):
        """A CachedSession that stores only validated answers, scrubbed, and never follows a token across origins."""

        def __init__(self, *args, **kwargs) -> None:
            super().__init__(*args, **kwargs)
            #: the cache key of every answer :meth:`fetch` gave (stored or read from the cache), in order:
            #: what a caller removes again when a later check refuses the answer (:func:`forget`)
            self.answered: list[str] = []

        def rebuild_auth(self, prepared_request, response) -> None:
            """On a redirect to another origin, drop the token headers and query parameters (requests
            itself strips only ``Authorization``)."""
            super().rebuild_auth(prepared_request, response)
            if _origin(response.request.url) != _origin(prepared_request.url):
                for name in [h for h in prepared_request.headers if h.lower() in SECRET_HEADERS]:
                    del prepared_request.headers[name]
                prepared_request.url = redact_uri(prepared_request.url, drop=True)

        def fetch(self, url: str, *, params=None, headers=None, expire_after=NEVER_EXPIRE,
                  accept: Accept | None = None, **kwargs) -> requests.Response:
            """GET ``url``: a stored answer if there is a fresh one, else the server's answer.

            The server's answer is stored only when it is an HTTP 200 and ``accept`` (which raises to
            refuse) admitted it; without ``accept`` nothing is stored. A stored answer that ``accept``
            now refuses is removed. Redirects are followed (see :meth:`rebuild_auth`).
            """
            resp = self.request("GET", url, params=params, headers=headers, expire_after=expire_after, **kwargs)
            if getattr(resp, "from_cache", False):
                if accept is not None:
                    try:
                        accept(resp)
                    except BaseException:
                        self.cache.delete(self._key(resp, kwargs))
                        raise
                self.answered.append(self._key(resp, kwargs))
                return resp
            if resp.status_code == 200 and accept is not None:
                accept(resp)
                if not self.settings.disabled:
                    self._store(resp, expire_after, kwargs)
                    self.answered.append(self._key(resp, kwargs))
            return resp

        def _key(self, resp: requests.Response, kwargs: dict) -> str:
            first = resp.history[0].request if resp.history else resp.request
            return self.cache.create_key(first, verify=kwargs.get("verify", True))

        def _store(self, resp: requests.Response, expire_after, kwargs: dict) -> None:
            cached = CachedResponse.from_response(resp, expires=get_expiration_datetime(expire_after))
            self.cache.responses[self._key(resp, kwargs)] = _scrub(cached)

    return GridshiftSession


def cache_key(request, **kwargs) -> str:
    """requests-cache's key (``requests_cache.create_key``) of ``request`` with its URL's credentials
    redacted (:func:`pipelines.core.redact.redact_uri`): the same resource asked with another password or
    token has the same key, and no key depends on a secret. A URL without credentials keys as before."""
    from requests_cache import create_key

    url = str(request.url)
    clean = redact_uri(url)
    if clean != url:
        request = copy.copy(request)  # the request sent keeps its credentials
        request.url = clean
    return create_key(request, **kwargs)


def ignored_params() -> list[str]:
    """The query parameters and headers left out of a cache key: requests-cache's ``DEFAULT_IGNORED_PARAMS``
    and the tokens' (``TOKEN_PARAMS``)."""
    from requests_cache import DEFAULT_IGNORED_PARAMS

    return [*DEFAULT_IGNORED_PARAMS, *TOKEN_PARAMS]


def cache_file(home: Home) -> Path:
    return home.http_cache_path / "http_cache.sqlite"


def make_session(
    home: Home,
    *,
    retries: int | None = None,
    backoff_factor: float | None = None,
    timeout: tuple[float, float] | None = None,
) -> GridshiftSession:
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
    cls = session_class()
    guard_loggers()  # after requests-cache is imported: its loggers exist now
    session = cls(
        str(cache_file(home)),
        backend="sqlite",
        serializer="json",  # no pickle: a cache file must be safe to open
        expire_after=NEVER_EXPIRE,
        allowable_codes=(200,),
        allowable_methods=("GET", "HEAD"),
        stale_if_error=True,
        ignored_parameters=ignored_params(),
        key_fn=cache_key,
        match_headers=False,
        read_only=True,  # only fetch() writes, after the caller's check
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


def forget(home: Home, keys: Iterable[str]) -> None:
    """Remove the answers with these cache keys (:attr:`GridshiftSession.answered`) from the home's HTTP
    cache: answers a check after the download refused (a refused answer never stays cached)."""
    keys = list(dict.fromkeys(keys))
    if not keys or not cache_file(home).exists():
        return
    with make_session(home) as session:
        session.cache.delete(*keys)


def expire_for(end: datetime, *, now: datetime | None = None):
    """Cache lifetime for a response covering data up to ``end``: forever if historical."""
    now = now or datetime.now(UTC)
    return RECENT_EXPIRE if end > now - RECENT_WINDOW else NEVER_EXPIRE


# --------------------------------------------------------------------------- downloads


class DownloadError(SourceUnavailableError):
    """A download failed or its body was rejected (truncated, wrong checksum, wrong content)."""


class NotFoundError(DownloadError, NotPublished):
    """HTTP 404: the publisher does not have this file (the next source may)."""


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
    if _HTML.match(content[:512]) or ("text/html" in ctype and expect.kind != "xml"):
        raise DownloadError(
            f"{what}: the server answered with an HTML page, not {(expect.kind or 'the file').upper()} "
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


def expecting(expect: Expect, what: str) -> Accept:
    """An ``accept`` check for :meth:`GridshiftSession.fetch` from an :class:`Expect`."""

    def accept(resp: requests.Response) -> None:
        check_body(resp.content, expect, what=what, headers=resp.headers)

    return accept


def get(
    session: GridshiftSession,
    url: str,
    *,
    source: str,
    what: str,
    accept: Accept,
    params: dict | None = None,
    headers: dict | None = None,
    expire_after=NEVER_EXPIRE,
    secrets: Iterable[str] = (),
) -> requests.Response:
    """GET through the session; the answer is cached only if it is a 200 that ``accept`` admits.

    Any failure becomes a :class:`DownloadError` (:class:`NotFoundError` for 404) with no token in it.
    """
    secrets = list(secrets)
    try:
        resp = session.fetch(url, params=params, headers=headers, expire_after=expire_after, accept=accept)
    except requests.RequestException as exc:
        raise DownloadError(f"{source}: {what}: request failed: {redact(str(exc), secrets)}") from None
    if resp.status_code != 200:
        body = redact(resp.text[:300], secrets) if resp.content else ""
        error = NotFoundError if resp.status_code == 404 else DownloadError
        raise error(
            f"{source}: {what}: HTTP {resp.status_code} from {scrub_url(_strip_query(resp.url))}"
            + (f": {body}" if body else "")
        )
    return resp


def _strip_query(url: str) -> str:
    return url.split("?", 1)[0]


def download(
    session: GridshiftSession,
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
    """Download one upstream file, checked (length, HTML page, header, sha256) before it is cached.

    A rejected body raises :class:`DownloadError`; nothing is cached or landed. ``uri`` is what
    lineage records (defaults to the URL without query); neither it nor an error names a credential
    of ``url`` (:func:`pipelines.core.redact.redact_uri`).
    """
    what = redact_uri(_strip_query(url))
    resp = get(session, url, source=source, what=what, params=params, headers=headers, expire_after=expire_after,
               secrets=secrets, accept=expecting(expect, f"{source}: {what}"))
    return RawFile(source=source, uri=uri or what, content=resp.content)
