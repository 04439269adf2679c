"""Helpers to build corrupted mirrors: symlink the real files, replace one with a modified copy."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path


def mirror_with(shared: Path, tmp: Path, relpath: str, mutate: Callable[[bytes], bytes]) -> Path:
    """A mirror in ``tmp`` where ``relpath`` is ``mutate(real bytes)`` and every other file links the real one.

    Every directory of the mirror is a real directory and only files are symlinks, so replacing
    the target (unlink the link, write a new file) can never write through to ../shared/data.
    """
    mirror = tmp / "mirror"
    for src in shared.rglob("*"):
        dst = mirror / src.relative_to(shared)
        if src.is_dir():
            dst.mkdir(parents=True, exist_ok=True)
        else:
            dst.parent.mkdir(parents=True, exist_ok=True)
            dst.symlink_to(src)
    target = mirror / relpath
    original = (shared / relpath).read_bytes()
    assert target.is_symlink() and not target.parent.is_symlink()
    target.unlink()
    target.write_bytes(mutate(original))
    return mirror


#: what a home records about runs, not data: the Dagster instance (run history, the UI's lineage) and the
#: full reports of failed commands. A refused input is meant to appear there.
RUN_RECORDS = ("dagster", "logs")


def tree_digest(root: Path) -> str:
    """sha256 over every data file's relative path and bytes under ``root`` (the warehouse, raw landings,
    bundles, HTTP cache; not the run records) — missing root → empty digest."""
    h = hashlib.sha256()
    if root.exists():
        for p in sorted(root.rglob("*")):
            if p.is_file() and p.relative_to(root).parts[0] not in RUN_RECORDS:
                h.update(str(p.relative_to(root)).encode())
                h.update(p.read_bytes())
    return h.hexdigest()


def replace_line(lineno: int, new: Callable[[str], str]) -> Callable[[bytes], bytes]:
    """Mutation: rewrite line ``lineno`` (1-based, header is line 1) of a text file."""

    def _mut(data: bytes) -> bytes:
        lines = data.decode("utf-8").split("\n")
        lines[lineno - 1] = new(lines[lineno - 1])
        return "\n".join(lines).encode("utf-8")

    return _mut


def year_instance(*years: int):
    """An in-memory Dagster instance holding ``years`` as year partitions (the dynamic dimension of the grid and
    workload assets: ``dagster_project.partitions.add_years``), for materializing a partition outside the runner."""
    import dagster as dg

    from dagster_project.partitions import add_years

    instance = dg.DagsterInstance.ephemeral()
    add_years(instance, years)
    return instance
