"""Keep Numba's on-disk cache of the engine and the policies consistent across files.

Numba keys a cached kernel on its own source file (its time stamp) only: a kernel that calls, or inlines, a
kernel of another file (``end_step`` inlines ``queues.schedule``; a policy's run loop calls ``begin_step``)
would keep its stale machine code after that other file changed. :func:`guard` hashes every source file of
``sim_core/engine`` and ``sim_core/policies`` (their subpackages included: ``policies/carbonflex``) and drops all
their cache entries when the hash differs from the one recorded with them (a cold compile, never a stale
kernel).
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from numba import config

SIM_CORE = Path(__file__).resolve().parents[1]
#: the packages whose jitted kernels call one another across files
PACKAGES = ("engine", "policies")
STAMP = "kernels.sha256"


def source_files() -> list[Path]:
    """The source files of the engine and the policies, their subpackages included, in a fixed order."""
    return sorted(p for pkg in PACKAGES for p in (SIM_CORE / pkg).rglob("*.py") if "__pycache__" not in p.parts)


def digest(files: list[Path] | None = None) -> str:
    """sha256 over the paths (below ``sim_core``) and contents of ``files`` (default :func:`source_files`)."""
    h = hashlib.sha256()
    for p in source_files() if files is None else files:
        h.update(p.relative_to(SIM_CORE).as_posix().encode() + b"\0" + p.read_bytes() + b"\0")
    return h.hexdigest()


def cache_dirs(src_dir: Path) -> list[Path]:
    """Where Numba may keep the cache of kernels defined in ``src_dir``: ``__pycache__`` beside the sources, or
    the mirror of the source directory under ``NUMBA_CACHE_DIR`` when that is set."""
    dirs = [src_dir / "__pycache__"]
    if config.CACHE_DIR:
        dirs.append(Path(config.CACHE_DIR) / src_dir.relative_to(src_dir.anchor))
    return dirs


def drop_stale(cache_dir: Path, stems: list[str], want: str) -> bool:
    """Delete the cache entries (``<stem>.*.nbi`` / ``.nbc``) of the modules ``stems`` in ``cache_dir`` unless the
    stamp there records ``want``, then record it; True when the stamp was missing or different. A read-only
    directory keeps no stamp (Numba writes nothing there either)."""
    stamp = cache_dir / STAMP
    try:
        if stamp.read_text() == want:
            return False
    except OSError:
        pass
    for stem in stems:
        for f in cache_dir.glob(f"{stem}.*.nb[ic]"):
            f.unlink(missing_ok=True)
    try:
        cache_dir.mkdir(parents=True, exist_ok=True)
        tmp = stamp.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(want)
        tmp.replace(stamp)
    except OSError:
        pass
    return True


def guard() -> bool:
    """Drop the engine's and the policies' cache entries if any of their sources changed since they were
    written; True when something was dropped."""
    want = digest()
    dropped = False
    for src in sorted({p.parent for p in source_files()}):
        stems = sorted(p.stem for p in src.glob("*.py"))
        for d in cache_dirs(src):
            dropped |= drop_stale(d, stems, want)
    return dropped
