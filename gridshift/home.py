"""The gridshift home: one folder holding the warehouse, raw landings, HTTP cache and bundles.

Resolved from an explicit argument, else ``GRIDSHIFT_HOME``, else ``./.gridshift``.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path


class UnsafePathError(ValueError):
    """A path built from user input would leave its base directory."""


def safe_join(base: Path, *parts: str) -> Path:
    """Join ``parts`` under ``base`` and refuse any result outside ``base``.

    Guards every path built from user input (region codes, bundle ids, file names). The check is
    lexical: each component must be a plain name (no separators, no ``..``), so the result is
    always inside ``base``. Symbolic links the operator placed inside ``base`` are followed as-is.
    """
    base_abs = Path(os.path.abspath(base))
    for part in parts:
        if not part or part in (".", "..") or "/" in part or "\\" in part or "\x00" in part:
            raise UnsafePathError(f"unsafe path component {part!r} under {base}")
    candidate = Path(os.path.normpath(base_abs.joinpath(*parts)))
    if candidate != base_abs and base_abs not in candidate.parents:
        raise UnsafePathError(f"path {candidate} escapes {base_abs}")
    return candidate


@dataclass(frozen=True)
class Home:
    root: Path

    @classmethod
    def resolve(cls, home: str | os.PathLike | None = None) -> Home:
        raw = home if home is not None else os.environ.get("GRIDSHIFT_HOME", ".gridshift")
        return cls(Path(raw).expanduser().absolute())

    @property
    def warehouse_path(self) -> Path:
        return self.root / "warehouse.duckdb"

    @property
    def raw_dir(self) -> Path:
        return self.root / "raw"

    @property
    def http_cache_path(self) -> Path:
        return self.root / "http_cache"

    @property
    def bundles_dir(self) -> Path:
        return self.root / "bundles"

    @property
    def results_dir(self) -> Path:
        """The default results URL of benchmark runs (one Parquet object per run; ``gridshift.results``)."""
        return self.root / "results"

    @property
    def dagster_dir(self) -> Path:
        """The persistent Dagster instance of this home (``DAGSTER_HOME`` of the UI): runs, events, lineage."""
        return self.root / "dagster"

    @property
    def logs_dir(self) -> Path:
        """Full tracebacks of failed command-line runs (the CLI prints a short block and names the file)."""
        return self.root / "logs"

    def ensure(self) -> Home:
        for d in (self.root, self.raw_dir, self.bundles_dir):
            d.mkdir(parents=True, exist_ok=True)
        return self
