"""The gridshift home: one folder holding the warehouse, raw landings, HTTP cache and bundles.

Resolved from an explicit argument, else ``GRIDSHIFT_HOME``, else ``./.gridshift``. Its configuration
(``gridshift.json``: the mirror its runs read when none is given) lets the Dagster UI launched on it run
ingests and backfills with no environment variable.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from gridshift.errors import GridshiftError, excerpt


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

    @property
    def config_path(self) -> Path:
        """The home's configuration (JSON): ``mirror``, the local mirror folder its runs read by default;
        ``dagster_postgres``, the PostgreSQL server of its Dagster instance (``dagster_project.instance_config``)."""
        return self.root / "gridshift.json"

    def config(self) -> dict[str, str]:
        """The home's configuration; empty when it has none. A file that is not a JSON object is refused, naming it."""
        try:
            data = json.loads(self.config_path.read_text())
        except FileNotFoundError:
            return {}
        except ValueError as err:
            raise GridshiftError(f"{self.config_path}: not valid JSON ({err})") from err
        if not isinstance(data, dict) or not all(isinstance(v, str) for v in data.values()):
            raise GridshiftError(f"{self.config_path}: expected a JSON object of strings, got {excerpt(data)!r}")
        return data

    def configure(self, **values: str) -> None:
        """Set configuration values (written atomically, the others kept)."""
        from gridshift.atomic import atomic_write_bytes

        self.root.mkdir(parents=True, exist_ok=True)
        text = json.dumps({**self.config(), **values}, indent=2, sort_keys=True) + "\n"
        atomic_write_bytes(self.config_path, text.encode())

    def configured_mirror(self) -> Path | None:
        """The mirror set in the home's configuration (``gridshift ui --mirror DIR`` sets it), if any."""
        raw = self.config().get("mirror", "")
        return Path(raw) if raw else None

    def ensure(self) -> Home:
        for d in (self.root, self.raw_dir, self.bundles_dir):
            d.mkdir(parents=True, exist_ok=True)
        return self
