"""Bundle writes under concurrency and crashes: one complete directory, no error, nothing partial."""

from __future__ import annotations

import json
import multiprocessing as mp
import os
import signal
import time
from pathlib import Path

import pytest

from gridshift import atomic
from gridshift.bundle import DATA_FILES, MANIFEST, verify_bundle

FILES = sorted((*DATA_FILES, MANIFEST))


def _publish(root: str, files: dict, manifest: dict, barrier, out) -> None:
    from gridshift.bundle import publish

    barrier.wait()
    out.put(str(publish(files, manifest, Path(root)).path))


def _watch(root: str, stop, seen) -> None:
    """Reader: whenever a bundle directory is visible under ``root``, it must hold every file."""
    bad = 0
    while not stop.is_set():
        for entry in os.listdir(root):
            if entry.startswith("."):
                continue
            try:
                names = sorted(os.listdir(os.path.join(root, entry)))
            except FileNotFoundError:
                continue
            if names != FILES:
                bad += 1
    seen.value = bad


def test_concurrent_writers_of_one_bundle_id_end_with_one_complete_directory(tmp_path):
    from sim_core.testing import tiny_bundle

    src = tiny_bundle(tmp_path / "src")
    files = {n: (src / n).read_bytes() for n in DATA_FILES}
    manifest = json.loads((src / MANIFEST).read_text())
    ctx = mp.get_context("spawn")
    for trial in range(4):
        root = tmp_path / f"t{trial}"
        root.mkdir()
        barrier, stop, seen, out = ctx.Barrier(4), ctx.Event(), ctx.Value("i", -1), ctx.Queue()
        reader = ctx.Process(target=_watch, args=(str(root), stop, seen), daemon=True)
        writers = [ctx.Process(target=_publish, args=(str(root), files, manifest, barrier, out), daemon=True)
                   for _ in range(4)]
        reader.start()
        try:
            for w in writers:
                w.start()
            for w in writers:
                w.join(600)
        finally:
            stop.set()
            reader.join(30)
        assert [w.exitcode for w in writers] == [0, 0, 0, 0]  # no writer failed
        paths = {out.get(timeout=5) for _ in writers}
        assert len(paths) == 1
        assert [p.name for p in root.iterdir()] == [Path(next(iter(paths))).name]  # no partial or stale copy left
        assert verify_bundle(next(iter(paths))).ok
        assert seen.value == 0, "a reader saw a bundle directory with files missing"


def _slow_writer(final: str) -> None:
    def fill(tmp: Path) -> None:
        (tmp / "half").write_bytes(b"x" * 1_000_000)
        time.sleep(120)

    atomic.publish_directory(Path(final), fill, lambda p: False)


def test_a_killed_writer_leaves_a_partial_that_the_next_write_removes(tmp_path, monkeypatch):
    final = tmp_path / "bundle"
    proc = mp.get_context("spawn").Process(target=_slow_writer, args=(str(final),))
    proc.start()
    deadline = time.time() + 300  # a spawned interpreter's imports: slow on a loaded machine
    while not any(p.name.endswith(".partial") and (p / "half").exists() for p in tmp_path.iterdir()):
        assert time.time() < deadline, "the writer never started"
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)
    proc.join()
    partials = [p for p in tmp_path.iterdir() if p.name.endswith(".partial")]
    assert len(partials) == 1 and not final.exists()
    monkeypatch.setattr(atomic, "STALE_AFTER_S", 0.0)

    def fill(tmp: Path) -> None:
        (tmp / "done").write_text("ok")

    assert atomic.publish_directory(final, fill, lambda p: (p / "done").exists())
    assert [p.name for p in tmp_path.iterdir()] == ["bundle"] and (final / "done").read_text() == "ok"


def test_a_live_writers_partial_is_never_removed(tmp_path, monkeypatch):
    monkeypatch.setattr(atomic, "STALE_AFTER_S", 0.0)
    final = tmp_path / "bundle"

    def fill(tmp: Path) -> None:
        # while this writer holds its partial, another publish in the same folder cleans up
        assert atomic.remove_stale_partials(tmp_path, "bundle") == []
        assert tmp.is_dir()
        (tmp / "done").write_text("ok")

    assert atomic.publish_directory(final, fill, lambda p: (p / "done").exists())


def test_an_incomplete_copy_is_replaced_and_a_complete_one_reused(tmp_path):
    final = tmp_path / "bundle"
    final.mkdir()
    (final / "junk").write_text("half")

    def fill(tmp: Path) -> None:
        (tmp / "done").write_text("ok")

    complete = lambda p: (p / "done").exists()  # noqa: E731
    assert atomic.publish_directory(final, fill, complete) is True
    assert sorted(p.name for p in final.iterdir()) == ["done"]
    assert atomic.publish_directory(final, lambda tmp: pytest.fail("must not write"), complete) is False
    assert [p.name for p in tmp_path.iterdir()] == ["bundle"]


def test_a_failing_fill_leaves_nothing(tmp_path):
    def fill(tmp: Path) -> None:
        (tmp / "a").write_text("x")
        raise RuntimeError("disk full")

    with pytest.raises(RuntimeError):
        atomic.publish_directory(tmp_path / "bundle", fill, lambda p: False)
    assert list(tmp_path.iterdir()) == []


def test_atomic_write_many_writes_every_file_whole_with_its_mode(tmp_path):
    items = [(tmp_path / "a" / f"f{i}", bytes([i]) * (1000 + i)) for i in range(5)]
    assert atomic.atomic_write_many(items, mode=0o444) == [p for p, _d in items]
    for path, data in items:
        assert path.read_bytes() == data and (path.stat().st_mode & 0o777) == 0o444
    assert sorted(p.name for p in (tmp_path / "a").iterdir()) == [f"f{i}" for i in range(5)]  # no temporaries


def test_atomic_write_many_leaves_nothing_when_a_rename_fails(tmp_path, monkeypatch):
    items = [(tmp_path / f"f{i}", b"x" * 10) for i in range(4)]
    real, calls = os.replace, []

    def flaky(src, dst):
        calls.append(dst)
        if len(calls) == 3:
            raise OSError(28, "No space left on device")
        real(src, dst)

    monkeypatch.setattr(atomic.os, "replace", flaky)
    with pytest.raises(OSError, match="No space"):
        atomic.atomic_write_many(items)
    assert len(calls) == 3 and list(tmp_path.iterdir()) == []  # the two renamed files removed, no temporaries
