"""Atomic file and directory writes: readers never see a half-written file or directory.

``publish_directory`` is safe when several processes publish the same directory at once (the
first complete copy wins, the others reuse it) and after a crash (a writer killed mid-write leaves
a ``.partial`` directory that the next publish in the same folder removes).
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import shutil
import tempfile
import time
import uuid
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

#: a partial directory younger than this is never treated as stale (its writer may still be
#: between creating it and locking it)
STALE_AFTER_S = 60.0


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def atomic_write_bytes(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` via a temporary file in the same folder and an atomic rename.

    The file gets the mode an ordinary ``open(path, "w")`` would give (0666 less the umask), not
    the 0600 of the temporary file.
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        os.fchmod(fd, 0o666 & ~_umask())
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(tmp)
        raise


def atomic_write_many(items: Sequence[tuple[Path, bytes]], *, mode: int | None = None) -> list[Path]:
    """:func:`atomic_write_bytes` for many *new* files at once: each appears whole under its name or not
    at all. Every file is first written to its temporary name, then all are synced together (a few
    threads: one ``fsync`` after another costs a disk round trip each), then renamed into place.
    ``mode`` (e.g. 0o444) is applied before the rename. Returns the paths written, in order.

    All or nothing: on an error the temporary files are removed, and so are the files this call had
    already renamed into place (hence *new* files: a path that existed before would be lost), then the
    exception propagates.
    """
    mode = (0o666 & ~_umask()) if mode is None else mode
    pending: list[tuple[int | None, str, Path]] = []
    done: list[Path] = []
    try:
        for path, data in items:
            path = Path(path)
            path.parent.mkdir(parents=True, exist_ok=True)
            fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
            pending.append((fd, tmp, path))
            os.fchmod(fd, mode)
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view):]
        fds = [fd for fd, _tmp, _path in pending]
        if len(fds) > 1:
            with ThreadPoolExecutor(min(8, len(fds))) as pool:
                list(pool.map(os.fsync, fds))
        elif fds:
            os.fsync(fds[0])
        for i, (fd, tmp, path) in enumerate(pending):
            pending[i] = (None, tmp, path)  # closed: never closed twice (the number may be reused)
            os.close(fd)
        for _fd, tmp, path in pending:
            os.replace(tmp, path)
            done.append(path)
        return done
    except BaseException:
        for fd, tmp, _path in pending:
            if fd is not None:
                with contextlib.suppress(OSError):
                    os.close(fd)
            with contextlib.suppress(FileNotFoundError):
                os.unlink(tmp)
        for path in done:
            with contextlib.suppress(FileNotFoundError):
                path.unlink()
        raise


def _fsync_tree(root: Path) -> None:
    for dirpath, _dirs, names in os.walk(root):
        for n in names:
            fd = os.open(os.path.join(dirpath, n), os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
        fd = os.open(dirpath, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


def remove_stale_partials(parent: Path, name: str) -> list[Path]:
    """Remove the leftovers of writers of ``parent/name`` that died: ``.name.*.partial`` directories
    no live writer holds (each writer keeps an exclusive ``flock`` on its partial directory, released by
    the kernel when the process dies, even by ``kill -9``) and ``.name.*.stale`` ones. Returns them."""
    removed = []
    if not parent.is_dir():
        return removed
    now = time.time()
    for entry in parent.iterdir():
        if not entry.name.startswith(f".{name}."):
            continue
        if entry.name.endswith(".stale"):
            shutil.rmtree(entry, ignore_errors=True)
            removed.append(entry)
            continue
        if not entry.name.endswith(".partial") or entry.is_symlink() or not entry.is_dir():
            continue
        try:
            if now - entry.stat().st_mtime < STALE_AFTER_S:
                continue
            fd = os.open(entry, os.O_RDONLY)
        except FileNotFoundError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            continue  # a live writer holds it
        finally:
            os.close(fd)  # closing drops our lock again
        shutil.rmtree(entry, ignore_errors=True)
        removed.append(entry)
    return removed


def publish_directory(final: Path, fill: Callable[[Path], None], is_complete: Callable[[Path], bool]) -> bool:
    """Create ``final`` atomically: ``fill(tmp)`` writes into a private sibling directory, which is
    renamed to ``final`` only when complete. Returns ``True`` if this call published it, ``False`` if a
    complete copy (``is_complete(final)``) was already there or appeared meanwhile (it is kept).

    Concurrent writers of the same ``final`` never fail and never expose a partial directory: a
    rename onto an existing directory fails, so the loser checks the winner's copy and reuses it. An
    incomplete copy at ``final`` (not ``is_complete``) is renamed aside atomically and replaced. On any
    error in ``fill`` the private directory is removed and ``final`` is untouched.
    """
    final = Path(final)
    parent = final.parent
    parent.mkdir(parents=True, exist_ok=True)
    remove_stale_partials(parent, final.name)
    if final.is_dir() and is_complete(final):
        return False
    tmp = Path(tempfile.mkdtemp(prefix=f".{final.name}.", suffix=".partial", dir=parent))
    lock = os.open(tmp, os.O_RDONLY)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX)
        tmp.chmod(0o777 & ~_umask())  # mkdtemp makes it 0700
        fill(tmp)
        _fsync_tree(tmp)
        while True:
            try:
                os.rename(tmp, final)
                return True
            except OSError as exc:
                if exc.errno not in (errno.ENOTEMPTY, errno.EEXIST, errno.ENOTDIR, errno.EISDIR):
                    raise
                if final.is_dir() and is_complete(final):
                    shutil.rmtree(tmp, ignore_errors=True)
                    return False
                aside = parent / f".{final.name}.{uuid.uuid4().hex}.stale"
                try:
                    os.rename(final, aside)
                except FileNotFoundError:
                    continue  # it went away meanwhile: try again
                shutil.rmtree(aside, ignore_errors=True)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    finally:
        os.close(lock)
