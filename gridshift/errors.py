"""Errors that tell a user exactly which file, column, rows and values broke a rule."""

from __future__ import annotations

from collections.abc import Sequence

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
    """Base class for errors gridshift reports to users (the CLI prints them without a traceback)."""


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
        self.values = [excerpt(v) for v in list(values)[:10]]
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
