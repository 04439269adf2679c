"""Errors that tell a user exactly which file, column, rows and values broke a rule."""

from __future__ import annotations

from collections.abc import Sequence


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
        self.column = column
        self.rows = list(rows)[:10]
        self.values = list(values)[:10]
        parts = [message]
        if file:
            parts.append(f"file: {file}")
        if column:
            parts.append(f"column: {column!r}")
        if self.rows:
            shown = ", ".join(f"row {r}: {v!r}" for r, v in zip(self.rows, self.values, strict=False))
            parts.append(f"first offending rows: {shown}")
        super().__init__("\n  ".join(parts))


class SourceUnavailableError(GridshiftError):
    """No configured source (warehouse, mirror, live) can provide the requested data."""
