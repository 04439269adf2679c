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

from gridshift import limits
from gridshift.bounded_read import read_bounded
from gridshift.errors import GridshiftError, excerpt


class UnsafePathError(ValueError):
    """A path built from user input would leave its base directory."""


class BundleNotFoundError(GridshiftError):
    """A bundle argument names neither a bundle directory nor a bundle id of the home; the message lists the
    ids the home holds."""


#: The environment variable holding the results URL when none is given (``gridshift compare --results``' default),
#: and the only way to give one to a Dagster run: a run-config field would put the URL, and any credential pasted
#: into it, in the Dagster run database before any check could refuse it (docs/distributed.md, "Credentials").
RESULTS_URL_ENV = "GRIDSHIFT_RESULTS_URL"
#: how many of a home's bundle ids a "not found" message lists (``gridshift list`` shows them all)
LISTED_IDS = 10


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
        """The default results URL of benchmark runs (one Parquet object per run; ``gridshift.results``) when
        ``$GRIDSHIFT_RESULTS_URL`` is not set."""
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
        """The home's configuration; empty when it has none. Refused, naming the file: anything but a regular file
        (a directory, a FIFO, a device), one above :data:`gridshift.limits.CONFIG_BYTES`, and a file that is not a
        JSON object of strings (a deeply nested one included) — read once, within the limit, never whole."""
        try:
            content = read_bounded(self.config_path, limits.CONFIG_BYTES, file=str(self.config_path),
                                   what="the home's configuration")
        except FileNotFoundError:
            return {}
        try:
            data = json.loads(content)
        except RecursionError:
            raise GridshiftError(f"{self.config_path}: JSON nested too deeply (expected an object of strings)"
                                 ) from None
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


def bundle_ids(bundles_dir: Path) -> list[str]:
    """The ids of the bundles in ``bundles_dir`` (directories holding a manifest.json), sorted."""
    if not bundles_dir.is_dir():
        return []
    return sorted(p.name for p in bundles_dir.iterdir()
                  if p.is_dir() and not p.name.startswith(".") and (p / "manifest.json").is_file())


def _holdings(home: Home | None) -> str:
    if home is None:
        return "no gridshift home to look in for an id (--home, $GRIDSHIFT_HOME or ./.gridshift)"
    ids = bundle_ids(home.bundles_dir)
    if not ids:
        return f"{home.bundles_dir} holds no bundle (gridshift export builds one)"
    more = f", ... and {len(ids) - LISTED_IDS} more (gridshift list)" if len(ids) > LISTED_IDS else ""
    return f"{home.bundles_dir} holds {len(ids)} bundle(s): {', '.join(ids[:LISTED_IDS])}{more}"


def resolve_bundle(ref: str, home: Home | None) -> Path:
    """The bundle directory a command-line argument names: an existing directory as given, else a bundle id
    (a plain name) under the home's bundles folder. :class:`BundleNotFoundError` when it names neither,
    listing the home's bundle ids; :class:`UnsafePathError` for a ``..`` that names no directory (as an id
    it would leave the bundles folder) and for an id of ``.`` or ``..``."""
    path = Path(ref)
    if path.is_dir():
        return path
    plain = Path(ref).name == ref and ref not in ("", ".", "..")
    if plain and home is not None:
        under = safe_join(home.bundles_dir, ref)
        if under.is_dir():
            return under
    elif not plain and ".." in Path(ref).parts or ref in (".", ".."):
        raise UnsafePathError(f"unsafe path component '..' in {excerpt(ref)!r}: no bundle directory there, and a "
                              f"bundle id is a plain name{f' under {home.bundles_dir}' if home else ''}")
    what = "is a file, not a bundle directory" if path.exists() else "is no directory"
    also = f", nor a bundle id under {home.bundles_dir}" if plain and home is not None else ""
    raise BundleNotFoundError(f"bundle not found: {excerpt(ref)!r} ({path.absolute()}) {what}{also}; "
                              f"{_holdings(home)}")
