"""Errors that tell a user exactly which file, column, rows and values broke a rule."""

from __future__ import annotations

import errno
from collections.abc import Sequence
from pathlib import Path

from gridshift.secret_text import scrub_secrets

#: The most characters of one offending value an error quotes, and of its message as a whole: a refusal
#: names what broke the rule, it never carries the input itself (a padded field of a 200 MB file would
#: otherwise travel whole into logs and run records).
MAX_VALUE_CHARS = 80
MAX_MESSAGE_CHARS = 2_000


def excerpt(value: object, limit: int = MAX_VALUE_CHARS) -> object:
    """``value`` if it is short (numbers, booleans, None and short text unchanged), else the first
    ``limit`` characters of its text with its full length."""
    if value is None or isinstance(value, bool | int | float):
        return value
    text = value if isinstance(value, str) else repr(value)
    if len(text) <= limit:
        return value
    return f"{text[:limit]}... ({len(text):,} characters)"


class GridshiftError(Exception):
    """Base class for errors gridshift reports to users (the CLI prints them without a traceback). Its message
    never carries a secret (:func:`gridshift.secret_text.scrub_secrets`): what it quotes of refused input may be
    a ``.env`` line or an upstream's echo of the request's token, and it reaches logs and Dagster's run records."""

    def __init__(self, *args: object) -> None:
        super().__init__(*(scrub_secrets(a) if isinstance(a, str) else a for a in args))


class DataError(GridshiftError):
    """Input data broke a rule. Carries the file, column, first offending rows and their values."""

    def __init__(
        self,
        message: str,
        *,
        file: str | None = None,
        column: str | None = None,
        rows: Sequence[int] = (),
        values: Sequence[object] = (),
    ) -> None:
        self.file = file
        self.column = excerpt(column, 200) if column is not None else None
        self.rows = list(rows)[:10]
        self.values = [scrub_secrets(v) if isinstance(v, str) else v for v in (excerpt(v) for v in list(values)[:10])]
        if len(message) > MAX_MESSAGE_CHARS:
            message = f"{message[:MAX_MESSAGE_CHARS]}... (message cut at {MAX_MESSAGE_CHARS:,} characters)"
        parts = [message]
        if file:
            parts.append(f"file: {file}")
        if self.column:
            parts.append(f"column: {self.column!r}")
        if self.rows:
            shown = ", ".join(f"row {r}: {v!r}" for r, v in zip(self.rows, self.values, strict=False))
            parts.append(f"first offending rows: {shown}")
        super().__init__("\n  ".join(parts))


class SourceUnavailableError(GridshiftError):
    """No configured source (warehouse, mirror, live) can provide the requested data."""


class StorageError(GridshiftError):
    """gridshift could not write its own files: the disk is full, a file exceeds the process's file-size
    limit, or the folder is read-only. Raised by the writers, whose writes are atomic: nothing was
    half-written (the message says where and why: :func:`storage_cause`)."""


#: What a writer's operating-system error means, in words (by errno). (Not "permission denied": a reader
#: gets it too, e.g. on a mirror file; a home without write permission is refused up front, by name.)
STORAGE_ERRNOS: dict[int, str] = {
    errno.ENOSPC: "the disk is full (no space left on device)",
    errno.EDQUOT: "the disk quota is used up",
    errno.EFBIG: "file too large (over the process's file-size limit, ulimit -f, or the file system's)",
    errno.EROFS: "read-only file system",
}
#: The same causes as the storage libraries word them in their messages (DuckDB's IO errors, SQLite's, and
#: a Dagster run, which keeps only an error's text), lower case.
STORAGE_TEXTS: tuple[tuple[str, int], ...] = (
    ("no space left on device", errno.ENOSPC),
    ("database or disk is full", errno.ENOSPC),
    ("disk quota exceeded", errno.EDQUOT),
    ("file too large", errno.EFBIG),
    ("read-only file system", errno.EROFS),
    ("attempt to write a readonly database", errno.EROFS),
)


def storage_cause(exc: BaseException | None) -> str | None:
    """Why a write failed, in words (:data:`STORAGE_ERRNOS`), with the file when the error names one, if
    ``exc`` or an error it was raised from is a storage failure: an ``OSError`` with one of those numbers,
    or a library error whose message says so (:data:`STORAGE_TEXTS`); else None."""
    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, OSError) and exc.errno in STORAGE_ERRNOS:
            return STORAGE_ERRNOS[exc.errno] + (f": {exc.filename}" if exc.filename else "")
        text = str(exc).lower()
        for words, number in STORAGE_TEXTS:
            if words in text:
                return STORAGE_ERRNOS[number]
        exc = exc.__cause__ or exc.__context__
    return None


def storage_error(exc: BaseException, home: Path | str | None = None, *, note: str = "") -> StorageError | None:
    """``exc`` as a :class:`StorageError` — "cannot write [to the gridshift home HOME]: CAUSE" then the
    library's own first line — when it is a storage failure (:func:`storage_cause`) that no writer has
    named yet; None for any other error (a :class:`GridshiftError` says what it means already)."""
    cause = None if isinstance(exc, GridshiftError) else storage_cause(exc)
    if cause is None:
        return None
    said = (str(exc).strip().splitlines() or [""])[0][:300]
    where = f" to the gridshift home {home}" if home is not None else ""
    return StorageError(f"cannot write{where}: {cause}{note}\n[{type(exc).__name__}: {said}]")
