"""Read a local input file whole, safely: a regular file only, within its size limit, never a hang.

A path gridshift reads (the home's ``gridshift.json``, a mirror file) may be a directory, a FIFO (an
``open`` that waits for a writer forever), a link to ``/dev/zero`` (endless bytes) or a sparse file claiming
gigabytes. :func:`read_bounded` opens without blocking, refuses anything but a regular file from its
``fstat`` — before reading a byte — and reads at most limit + 1 bytes, so a file that grows while read is
refused too, as is one rewritten in place while read (its size or times moved between the ``fstat`` before
and after). The bytes returned are the ones read once: hash and parse those same bytes, never the path again
(a file rewritten during an ingest is then one version or the other, never a mix).
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from gridshift.errors import DataError
from gridshift.limits import Limit

_KINDS = ((stat.S_ISDIR, "a directory"), (stat.S_ISFIFO, "a FIFO (named pipe)"), (stat.S_ISCHR, "a character device"),
          (stat.S_ISBLK, "a block device"), (stat.S_ISSOCK, "a socket"))


def _kind(mode: int) -> str:
    return next((name for test, name in _KINDS if test(mode)), "not a regular file")


def read_bounded(path: Path, limit: Limit, *, file: str, what: str = "the file",
                 error: type[DataError] = DataError) -> bytes:
    """The bytes of regular file ``path`` (links followed) if it is within ``limit``; anything else is refused
    as ``error`` naming ``file`` (the caller's name for it, without credentials): not a regular file, larger
    than the limit on disk, or grown past it while read. ``FileNotFoundError`` passes through."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    st = os.fstat(fd)
    if not stat.S_ISREG(st.st_mode):
        os.close(fd)
        raise error(f"{what} is {_kind(st.st_mode)}, not a regular file; refused before reading it", file=file)
    with os.fdopen(fd, "rb") as fh:
        limit.check(st.st_size, file=file, what=what, error=error)
        content = fh.read(limit.limit + 1)
        after = os.fstat(fh.fileno())
    limit.check(len(content), file=file, what=f"{what} (it grew while read)", error=error)
    if _version(after) != _version(st) or len(content) != st.st_size:
        raise error(f"{what} changed while it was read (rewritten in place: its size or modification time moved); "
                    "the bytes read may mix two versions, so nothing is kept — rerun once the file is complete",
                    file=file)
    return content


def _version(st: os.stat_result) -> tuple[int, int, int]:
    """What changes when a file's content is rewritten in place: size, modification and change times."""
    return st.st_size, st.st_mtime_ns, st.st_ctime_ns
