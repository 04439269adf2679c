"""Credentials out of every URI gridshift stores or prints.

A source URL may carry credentials: user-info (``https://user:password@host/...``, which requests sends
as HTTP basic auth) or a secret query parameter (an API token, a key, a pre-signed URL's signature).
The request needs them; nothing after it does. :func:`redact_uri` is the one function that makes a URI
fit to keep — the user-info becomes ``***@`` and each secret parameter's value ``***`` — and is applied
where a URI enters what lasts: a landed raw file's URI (:class:`pipelines.core.raw.RawFile`, hence
``raw_files.uri``, the Dagster event metadata and the errors naming the file), the HTTP cache's keys and
stored responses (``pipelines.core.http``) and a bundle's lineage. :func:`redact_text` does the same
for free text that may hold URIs or ``name: value`` pairs (log records, error messages).

A URI with nothing to redact is returned unchanged, character for character (cache keys, lineage and
bundle hashes of ordinary URIs stay what they were).
"""

from __future__ import annotations

import re
from urllib.parse import unquote_plus, urlsplit, urlunsplit

from gridshift.secret_text import scrub_secrets

REDACTED = "***"

#: Names that carry a secret wherever they appear: as a query parameter, a header, ``name: value`` or
#: ``name=value`` in text (matched case-insensitively).
SECRET_NAMES = (
    "securityToken", "auth-token",  # ENTSO-E's query parameter, Electricity Maps' header
    "api_key", "apikey", "api-key", "x-api-key", "access_token", "refresh_token", "id_token", "client_secret",
    "password", "passwd", "Authorization", "Proxy-Authorization",
    # pre-signed object-store URLs (AWS S3 v4, Google Cloud Storage)
    "X-Amz-Signature", "X-Amz-Credential", "X-Amz-Security-Token", "X-Goog-Signature", "X-Goog-Credential",
    "AWSAccessKeyId",
)
#: Short or common names that carry a secret as a *query parameter* (``?key=...``: Google APIs, ``sig``:
#: Azure SAS, ``Signature``: S3 v2 pre-signed URLs); in prose they are ordinary words, so text is
#: redacted for them only in query form.
SECRET_QUERY_NAMES = ("token", "key", "sig", "signature", "secret", "pwd", "pass", "auth")
#: Every query parameter whose value :func:`redact_uri` hides (lower case).
SECRET_PARAMS = frozenset(n.lower() for n in (*SECRET_NAMES, *SECRET_QUERY_NAMES))
#: Headers whose value is a secret (lower case): never stored, logged, nor sent to another origin.
SECRET_HEADERS = frozenset(n.lower() for n in (*SECRET_NAMES, "Cookie", "Set-Cookie"))

_USERINFO = re.compile(r"(?i)\b([a-z][a-z0-9+.\-]*://)[^\s/?#]*@")
_QUERY = re.compile(r"(?i)([?&;](?:" + "|".join(re.escape(n) for n in sorted(SECRET_PARAMS)) + r")=)[^&#\s'\"]+")
_PAIR = re.compile(
    r"(?i)((?:" + "|".join(re.escape(n) for n in SECRET_NAMES) + r")['\"]?\s*[=:]\s*['\"]?)"
    r"(?:(?:basic|bearer|token|digest)\s+)?[^&\s'\",}]+"
)


def _pair(pair: str, drop: bool) -> str | None:
    name, sep, _value = pair.partition("=")
    if unquote_plus(name).strip().lower() not in SECRET_PARAMS:
        return pair
    if drop:
        return None
    return f"{name}={REDACTED}" if sep else pair


def _params(text: str, drop: bool) -> str:
    if not text:
        return text
    kept = [p for p in (_pair(pair, drop) for pair in text.split("&")) if p is not None]
    return "&".join(kept)


def redact_uri(uri: str, *, drop: bool = False) -> str:
    """``uri`` without credentials: user-info replaced by ``***``, every secret query (or fragment)
    parameter's value by ``***`` (``drop``: the parameter removed). Unchanged when it holds none; a
    string that is not a URI is redacted as text (:func:`redact_text`)."""
    uri = str(uri)
    if "@" not in uri and "=" not in uri:
        return uri  # no user-info, no parameters: the common case (mirror paths), no parsing
    try:
        parts = urlsplit(uri)
    except ValueError:  # not a URI (e.g. a bad IPv6 literal): scrub what looks like one
        return redact_text(uri)
    netloc = parts.netloc
    if "@" in netloc:
        netloc = f"{REDACTED}@{netloc.rpartition('@')[2]}"
    query, fragment = _params(parts.query, drop), _params(parts.fragment, drop)
    if (netloc, query, fragment) == (parts.netloc, parts.query, parts.fragment):
        return uri
    return urlunsplit((parts.scheme, netloc, parts.path, query, fragment))


def redact_text(text: str) -> str:
    """``text`` with credentials removed from every URI in it (:func:`redact_uri`'s rules) and from
    ``name: value`` / ``name=value`` pairs of :data:`SECRET_NAMES` (headers, JSON, a dict's repr), and every
    secret :func:`gridshift.secret_text.scrub_secrets` knows (the environment's tokens, ``NAME_TOKEN=value``)."""
    out = _USERINFO.sub(rf"\1{REDACTED}@", scrub_secrets(str(text)))
    out = _QUERY.sub(rf"\1{REDACTED}", out)
    return _PAIR.sub(rf"\1{REDACTED}", out)
