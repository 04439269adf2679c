"""Secrets out of any text gridshift keeps: error messages, refusals, log files, Dagster events.

Input gridshift refuses can itself be a secret: a mirror file that is (or links to) a ``.env`` file or
``/proc/self/environ``, an upstream that echoes the request's token in its 401 body. A refusal quotes what it
found, so every :class:`gridshift.errors.GridshiftError` message and every failure log passes through
:func:`scrub_secrets`, which removes

- the current value of every token variable (:data:`gridshift.sources.TOKEN_ENV_VARS`) and of every other
  environment variable whose name says it holds a secret (``*_TOKEN``, ``*_KEY``, ``*SECRET*``,
  ``*PASSWORD*``...; at least :data:`MIN_SECRET_CHARS` long), wherever it appears;
- the value of every ``NAME=value`` assignment whose upper-case name says so (a ``.env`` line, an
  environment block), whether or not that variable is set here.

Stdlib only (the ground floor): ``pipelines.core.redact`` adds the URI rules on top.
"""

from __future__ import annotations

import os
import re

from gridshift.sources import TOKEN_ENV_VARS

REDACTED = "***"
#: The words that make a variable's name a secret's (matched case-insensitively, as a word part).
SECRET_WORDS = ("TOKEN", "KEY", "SECRET", "PASSWORD", "PASSWD", "CREDENTIAL", "CREDENTIALS", "APIKEY")
_WORDS = "|".join(SECRET_WORDS)
_SECRET_NAME = re.compile(rf"(?i)(?:^|_)(?:{_WORDS})(?:_|$)")
#: ``NAME=value`` with an upper-case secret's name, as a ``.env`` line or an environment block writes it (the
#: value runs to a separator: white space, NUL, a quote, a comma); upper case only, so prose ("key=") is kept
_ASSIGNMENT = re.compile(
    rf"(\b[A-Z0-9_]*(?:{_WORDS})[A-Z0-9_]*\s*=\s*['\"]?)[^\s\x00'\",;&}}]+"
)
#: Values shorter than this are not searched for (a short flag such as ``true`` would redact ordinary text).
MIN_SECRET_CHARS = 8


def is_secret_name(name: str) -> bool:
    """Whether an environment variable's name says it holds a secret (``ENTSOE_API_KEY``, ``GITHUB_TOKEN``)."""
    return name in TOKEN_ENV_VARS or bool(_SECRET_NAME.search(name))


def known_secrets() -> list[str]:
    """The values of the environment's secret variables (:func:`is_secret_name`), longest first."""
    values = {v for k, v in os.environ.items() if is_secret_name(k) and len(v) >= MIN_SECRET_CHARS}
    return sorted(values, key=len, reverse=True)


def scrub_secrets(text: str) -> str:
    """``text`` with every known secret's value and every secret-named assignment's value replaced by ``***``."""
    out = str(text)
    for secret in known_secrets():
        out = out.replace(secret, REDACTED)
    return _ASSIGNMENT.sub(rf"\1{REDACTED}", out)
