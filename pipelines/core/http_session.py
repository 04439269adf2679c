"""The cached session of :mod:`pipelines.core.http` (``requests_cache``): imported when a session is made.

Kept apart so that a process reading only local files (an ingest from the mirror) does not import
requests-cache, which loads every storage backend it ships (boto3 and botocore for DynamoDB among
them: about 0.4 CPU-seconds of a fresh process). The policy is :mod:`pipelines.core.http`'s.
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit

import requests
from requests.adapters import HTTPAdapter
from requests_cache import DEFAULT_IGNORED_PARAMS, NEVER_EXPIRE, CachedResponse, CachedSession
from requests_cache.policy.expiration import get_expiration_datetime
from urllib3.util.retry import Retry

from pipelines.core import http
from pipelines.core.http import _SECRET_KEYS, MAX_RETRY_AFTER_S, RETRY_STATUS, USER_AGENT, Accept, scrub_url

IGNORED_PARAMS = [*DEFAULT_IGNORED_PARAMS, "securityToken", "auth-token"]
if http.NEVER_EXPIRE != NEVER_EXPIRE:  # http's copy of the constant (its signatures' default) must be the library's
    raise ImportError(f"requests_cache.NEVER_EXPIRE is {NEVER_EXPIRE!r}, pipelines.core.http has {http.NEVER_EXPIRE!r}")


def _scrub(resp: CachedResponse) -> CachedResponse:
    """Redact every URL and header a response would store: its own, its request's, its redirect history's."""
    resp.url = scrub_url(resp.url)
    resp.headers = http._scrub_headers(resp.headers)
    resp.request.url = scrub_url(resp.request.url)
    resp.request.headers = http._scrub_headers(resp.request.headers)
    resp.history = [_scrub(h) for h in resp.history]
    return resp


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


class GridshiftSession(CachedSession):
    """A CachedSession that stores only validated answers, scrubbed, and never follows a token across origins."""

    def rebuild_auth(self, prepared_request, response) -> None:
        """On a redirect to another origin, drop the token headers and query parameters (requests
        itself strips only ``Authorization``)."""
        super().rebuild_auth(prepared_request, response)
        if _origin(response.request.url) != _origin(prepared_request.url):
            for name in [h for h in prepared_request.headers if h.lower() in _SECRET_KEYS]:
                del prepared_request.headers[name]
            prepared_request.url = scrub_url(prepared_request.url, drop=True)

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
            return resp
        if resp.status_code == 200 and accept is not None:
            accept(resp)
            if not self.settings.disabled:
                self._store(resp, expire_after, kwargs)
        return resp

    def _key(self, resp: requests.Response, kwargs: dict) -> str:
        first = resp.history[0].request if resp.history else resp.request
        return self.cache.create_key(first, verify=kwargs.get("verify", True))

    def _store(self, resp: requests.Response, expire_after, kwargs: dict) -> None:
        cached = CachedResponse.from_response(resp, expires=get_expiration_datetime(expire_after))
        self.cache.responses[self._key(resp, kwargs)] = _scrub(cached)


def new_session(cache: Path, *, retries: int, backoff: float, timeout: tuple[float, float]) -> GridshiftSession:
    """A :class:`GridshiftSession` on the SQLite file ``cache`` (:func:`pipelines.core.http.make_session`)."""
    session = GridshiftSession(
        str(cache),
        backend="sqlite",
        serializer="json",  # no pickle: a cache file must be safe to open
        expire_after=NEVER_EXPIRE,
        allowable_codes=(200,),
        allowable_methods=("GET", "HEAD"),
        stale_if_error=True,
        ignored_parameters=IGNORED_PARAMS,
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
