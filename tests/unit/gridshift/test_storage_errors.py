"""A write that fails for want of storage is named by its cause, from the real errors the writers raise."""

from __future__ import annotations

import errno
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from gridshift.errors import DataError, StorageError, storage_cause, storage_error
from gridshift_cli.report import failure_block


def _enospc() -> OSError:
    """A real ENOSPC from the kernel: /dev/full refuses every write as a full disk does."""
    try:
        with open("/dev/full", "wb", buffering=0) as fh:
            fh.write(b"x")
    except OSError as exc:
        return exc
    raise AssertionError("/dev/full accepted a write")


@pytest.mark.skipif(not Path("/dev/full").exists(), reason="no /dev/full")
def test_a_real_enospc_is_the_disk_full():
    exc = _enospc()
    assert exc.errno == errno.ENOSPC
    assert storage_cause(exc) == "the disk is full (no space left on device)"
    wrapped = RuntimeError("commit failed")  # as a library re-raises it
    wrapped.__cause__ = exc
    assert storage_cause(wrapped) == "the disk is full (no space left on device)"
    shown = storage_error(wrapped, Path("/data/home"))
    assert isinstance(shown, StorageError)
    lines = failure_block(shown, None)
    assert lines[0] == ("error: cannot write to the gridshift home /data/home: "
                        "the disk is full (no space left on device)")
    assert lines[1] == "  [RuntimeError: commit failed]"
    assert lines[2].startswith("  next: free space on that disk")


def test_a_real_efbig_from_the_atomic_writer_is_file_too_large(tmp_path):
    code = ("import resource, sys\nresource.setrlimit(resource.RLIMIT_FSIZE, (4096, 4096))\n"
            "from pathlib import Path\nfrom gridshift.atomic import atomic_write_bytes\n"
            "from gridshift.errors import storage_cause\n"
            "try:\n    atomic_write_bytes(Path(sys.argv[1]), b'x' * 10000)\n"
            "except OSError as exc:\n    print(exc.errno, storage_cause(exc))\n")
    out = subprocess.run([sys.executable, "-c", code, str(tmp_path / "f.bin")], capture_output=True, text=True,
                         check=True).stdout.strip()
    assert out.startswith(f"{errno.EFBIG} file too large")
    assert not list(tmp_path.iterdir())  # the writer left nothing behind


def test_library_messages_are_classified_by_their_words(tmp_path):
    db = tmp_path / "ro.db"
    sqlite3.connect(db).close()
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    with pytest.raises(sqlite3.OperationalError) as info:
        con.execute("CREATE TABLE t (x)")
    assert storage_cause(info.value) == "read-only file system"
    duck = RuntimeError('TransactionContext Error: Failed to commit: Could not write file "/h/w.wal": File too large')
    assert storage_cause(duck).startswith("file too large")
    assert storage_cause(RuntimeError("(sqlite3.OperationalError) database or disk is full")).startswith("the disk")


def test_other_errors_are_left_as_they_are():
    assert storage_cause(ValueError("bad value")) is None
    assert storage_cause(OSError(errno.ECONNREFUSED, "Connection refused")) is None
    assert storage_error(DataError("the disk is full of negative values", file="f.csv")) is None
    assert storage_error(KeyError("x")) is None


def test_a_home_without_write_permission_is_named(tmp_path):
    from gridshift.home import Home
    from warehouse.ingest import writable_home

    target = tmp_path / "home"
    target.mkdir()
    target.chmod(0o555)
    try:
        if os.access(target, os.W_OK):
            pytest.skip("this user writes into read-only folders (root)")
        with pytest.raises(StorageError, match=f"cannot write to the gridshift home {target}: permission denied"):
            writable_home(Home(target))
        assert storage_cause(PermissionError(13, "Permission denied", str(target))) is None  # a reader gets it too
    finally:
        target.chmod(0o755)
