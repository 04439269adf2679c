"""Raw upstream bytes: fetched from a mirror or live, then landed immutably by sha256."""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import cached_property
from pathlib import Path

import polars as pl

from gridshift import limits
from gridshift.atomic import atomic_write_bytes, atomic_write_many
from gridshift.bounded_read import read_bounded
from gridshift.errors import DataError, SourceUnavailableError
from gridshift.hashing import sha256_bytes
from gridshift.home import safe_join
from pipelines.core.redact import redact_uri
from pipelines.core.tabular import strict_json


@dataclass(frozen=True)
class RawFile:
    """One upstream file as fetched: its bytes, where it came from, and when.

    ``uri`` is kept without credentials (user-info and secret query parameters redacted by
    :func:`pipelines.core.redact.redact_uri` when the file is made): it is what ``raw_files.uri``, the
    Dagster records, errors naming the file and a bundle's lineage say. ``cache_keys``: the HTTP cache
    entries the bytes were answered from (``pipelines.core.http.forget`` removes them when the file is
    refused).
    """

    source: str
    uri: str
    content: bytes = field(repr=False)
    fetched_at: datetime = field(default_factory=lambda: datetime.now(UTC))
    cache_keys: tuple[str, ...] = field(default=(), repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "uri", redact_uri(self.uri))

    @cached_property
    def sha256(self) -> str:  # computed once: the bytes are immutable
        return sha256_bytes(self.content)

    def json(self):
        """The content parsed as strict JSON (:func:`pipelines.core.tabular.strict_json`)."""
        return strict_json(self.content, self.uri)


def read_mirror(mirror: Path | None, relpath: str, source: str) -> RawFile:
    """Read ``relpath`` from a local mirror folder holding files in the upstream's own format."""
    if mirror is None:
        raise SourceUnavailableError(
            f"{source}: no local mirror configured for {relpath} "
            "(pass --mirror DIR, set GRIDSHIFT_MIRROR, or set the home's mirror once with `gridshift ui --mirror DIR`)"
        )
    path = safe_join(Path(mirror), *relpath.split("/"))
    if not path.is_file():
        raise SourceUnavailableError(f"{source}: {relpath} not found in mirror {mirror} (looked for {path})")
    _check_link(Path(mirror), path, relpath)
    return read_local(path, source)


def _check_link(mirror: Path, path: Path, relpath: str) -> None:
    """The mirror's link policy: a file that is a link (or lies under one) must resolve inside the mirror, or to
    the same relative path under another folder (a mirror of links to a mirror's files, as tests build). A link
    to anything else — ``/proc/self/environ``, a ``.env`` file, another file of the disk — is refused before it
    is read, naming the file, never its target's content."""
    target = path.resolve()
    if target.is_relative_to(mirror.resolve()) or target.parts[-len(relpath.split("/")):] == tuple(relpath.split("/")):
        return
    raise DataError(f"the mirror file links outside the mirror, to {target} (a mirror file must resolve inside the "
                    "mirror, or be a link to the same file of another mirror); refused before reading it",
                    file=redact_uri(path.as_uri()))


def read_local(path: Path, source: str, *, uri: str | None = None) -> RawFile:
    """A local file of ``source`` (a mirror's, a trace folder's, a persisted pull), read once
    (:func:`gridshift.bounded_read.read_bounded`): a regular file within the source kind's limit
    (:data:`gridshift.limits.FILE_BYTES`) — a larger one, a directory, FIFO or device is refused by name
    before it is read, one that grows while read after at most limit + 1 bytes. Its hash and its parse are
    of these same bytes."""
    uri = redact_uri(uri or path.as_uri())  # a refusal names the file without its credentials
    content = read_bounded(path, limits.source_file_limit(source), file=uri)
    return RawFile(source=source, uri=uri, content=content)


def landed_relpath(raw: RawFile) -> str:
    return f"raw/{raw.source}/{raw.sha256[:2]}/{raw.sha256}"


def land(home_root: Path, raw: RawFile) -> tuple[pl.DataFrame, Path | None]:
    """Store the bytes under the home, named by sha256, and return its ``raw_files`` row.

    Returns the created path (None when the identical bytes were already landed), so a caller
    whose database write then fails can remove what it created.
    """
    rel = landed_relpath(raw)
    path = home_root / rel
    created: Path | None = None
    if not path.exists():
        atomic_write_bytes(path, raw.content)
        os.chmod(path, 0o444)
        created = path
    row = pl.DataFrame(
        {
            "sha256": [raw.sha256],
            "source": [raw.source],
            "uri": [raw.uri],
            "bytes": [len(raw.content)],
            "fetched_at": [raw.fetched_at],
            "path": [rel],
        },
        schema_overrides={"fetched_at": pl.Datetime("us", "UTC")},
    )
    return row, created


def land_many(home_root: Path, raws: Sequence[RawFile]) -> tuple[pl.DataFrame, list[Path]]:
    """:func:`land` for several files at once (written, synced together, renamed; see
    :func:`gridshift.atomic.atomic_write_many`): their ``raw_files`` rows, one per file in order, and
    the paths created (bytes already landed are not written again)."""
    todo: dict[Path, bytes] = {}
    for raw in raws:
        path = home_root / landed_relpath(raw)
        if path not in todo and not path.exists():
            todo[path] = raw.content
    created = atomic_write_many(list(todo.items()), mode=0o444)
    rows = pl.DataFrame(
        {
            "sha256": [r.sha256 for r in raws],
            "source": [r.source for r in raws],
            "uri": [r.uri for r in raws],
            "bytes": [len(r.content) for r in raws],
            "fetched_at": [r.fetched_at for r in raws],
            "path": [landed_relpath(r) for r in raws],
        },
        schema_overrides={"fetched_at": pl.Datetime("us", "UTC")},
    )
    return rows, created
