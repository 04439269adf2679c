"""``scenario_builder ingest`` when its home cannot take the write: a file-size limit, a full disk, a read-only
home. Each is named in the short error block (the cause and the home), and nothing is half-written: the
warehouse's tables are as they were, no landed or temporary file is left.

The file-size limit is real for any user (``RLIMIT_FSIZE`` in the command's own process: the write fails
with EFBIG). A read-only home is a folder without write permission for an ordinary user, a read-only tmpfs
for root. A full disk needs a file system of its own: a small tmpfs, where the tests may mount one (root),
else that test is skipped and the classification of a real ENOSPC is covered by
``tests/unit/gridshift/test_storage_errors.py``.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from pathlib import Path

import pytest

from gridshift.home import Home
from warehouse.db import read_table
from warehouse.ingest import ingest_grid

#: the command's own process, under a file-size limit (bytes; 0: none)
COMMAND = """
import resource, sys
limit = int(sys.argv[1])
if limit:
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
sys.argv = ["scenario_builder", *sys.argv[2:]]
from gridshift_cli import main
main()
"""


def _ingest(home: Path, mirror: Path, year: int, *, fsize: int = 0) -> subprocess.CompletedProcess:
    args = ["ingest", "--regions", "DE-LU", "--year", str(year), "--sources", "carbon", "--mirror", str(mirror),
            "--home", str(home)]
    env = {**os.environ, "COLUMNS": "200"}
    return subprocess.run([sys.executable, "-c", COMMAND, str(fsize), *args], capture_output=True, text=True,
                          timeout=300, env=env, check=False)


def _state(home: Path) -> dict:
    """What must not change: every stored row of the tables an ingest writes, and the landed files."""
    h = Home(home)
    tables = {t: read_table(h.warehouse_path, f"SELECT * FROM {t} ORDER BY ALL").rows()
              for t in ("grid_carbon", "raw_files", "partition_quality")}
    return {**tables, "raw": sorted(str(p.relative_to(home)) for p in h.raw_dir.rglob("*") if p.is_file())}


def _no_partial_files(home: Path) -> None:
    leftovers = [p for p in home.rglob("*") if p.name.endswith((".tmp", ".partial", ".stale"))]
    assert leftovers == []
    wal = Home(home).warehouse_path.with_name("warehouse.duckdb.wal")
    assert not wal.exists() or wal.stat().st_size == 0  # no uncommitted transaction left to replay


def _seeded(home: Path, mirror: Path) -> dict:
    ingest_grid("carbon", "DE-LU", 2022, home=Home(home), mirror=mirror)
    state = _state(home)
    assert len(state["grid_carbon"]) == 8760
    return state


def test_a_file_size_limit_is_reported_as_file_too_large(tmp_path, shared_data):
    home = tmp_path / "home"
    before = _seeded(home, shared_data)
    # 1,000 KB: the landed CSV (725 KB) and Dagster's records fit, the warehouse's log of the year does not
    res = _ingest(home, shared_data, 2023, fsize=1_000 * 1024)
    out = res.stdout + res.stderr
    assert res.returncode == 1, out
    assert "cannot rollback" not in out
    assert f"grid_carbon DE-LU 2023 FAILED: cannot write to the gridshift home {home}: file too large" in out, out
    assert "next: free space on that disk, raise the file-size limit" in out
    assert _state(home) == before
    _no_partial_files(home)
    ok = _ingest(home, shared_data, 2023)  # the limit lifted: the same command succeeds
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert len(_state(home)["grid_carbon"]) == 2 * 8760


@contextlib.contextmanager
def _small_fs(path: Path, size_kb: int):
    """A tmpfs of ``size_kb`` at ``path``; skips the test where mounting is not allowed."""
    path.mkdir(parents=True)
    made = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size_kb}k", "tmpfs", str(path)],
                          capture_output=True, check=False)
    if made.returncode != 0:
        pytest.skip(f"cannot mount a small tmpfs here ({made.stderr.decode().strip()})")
    try:
        yield path
    finally:
        subprocess.run(["umount", str(path)], check=True)


def _fill(fs: Path, leave_kb: int) -> None:
    st = os.statvfs(fs)
    free = st.f_bavail * st.f_frsize
    with open(fs / "filler", "wb") as fh:
        fh.write(b"\0" * max(0, free - leave_kb * 1024))


def test_a_full_disk_is_named_and_nothing_is_half_written(tmp_path, shared_data):
    with _small_fs(tmp_path / "fs", 8 * 1024) as fs:
        home = fs / "home"
        first = _ingest(home, shared_data, 2022)  # the home with its Dagster records
        assert first.returncode == 0, first.stdout + first.stderr
        before = _state(home)
        _fill(fs, leave_kb=1_800)  # room for the landed CSV and the run's records, not the warehouse's log
        res = _ingest(home, shared_data, 2023)
        out = res.stdout + res.stderr
        assert res.returncode in (1, 2), out  # 1: the partition failed; 2: Dagster's own records could not be kept
        assert f"cannot write to the gridshift home {home}: the disk is full" in out, out
        assert "cannot rollback" not in out and "a bug in gridshift" not in out
        (fs / "filler").unlink()
        assert _state(home) == before
        _no_partial_files(home)


@contextlib.contextmanager
def _read_only_home(tmp_path: Path, shared_data: Path):
    """A seeded home that cannot be written to, and the words its refusal should use: a folder without
    write permission for an ordinary user; for root, who writes there anyway, a tmpfs remounted read-only.
    On leaving, the home must hold what it held (tables, landed files) and no partial file."""
    if os.geteuid() != 0:
        home = tmp_path / "home"
        before = _seeded(home, shared_data)
        home.chmod(0o555)
        try:
            yield home, "permission denied"
        finally:
            home.chmod(0o755)
        assert _state(home) == before
        _no_partial_files(home)
        return
    with _small_fs(tmp_path / "fs", 8 * 1024) as fs:
        home = fs / "home"
        before = _seeded(home, shared_data)
        subprocess.run(["mount", "-o", "remount,ro", str(fs)], check=True)
        try:
            yield home, "read-only file system"
        finally:
            subprocess.run(["mount", "-o", "remount,rw", str(fs)], check=True)
        assert _state(home) == before  # writable again (reading takes the lock file), before the unmount
        _no_partial_files(home)


def test_a_read_only_home_is_named(tmp_path, shared_data):
    with _read_only_home(tmp_path, shared_data) as (home, words):  # checks the home is as it was
        res = _ingest(home, shared_data, 2023)
    out = res.stdout + res.stderr
    assert res.returncode == 2, out
    assert f"error: cannot write to the gridshift home {home}: {words}" in out, out
    assert "a bug in gridshift" not in out
