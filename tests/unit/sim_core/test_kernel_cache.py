"""The engine's cache guard (``sim_core.engine.cache``): Numba keys a cached kernel on its own file only, so
the entries of the engine's and the policies' modules are dropped whenever any of their sources changes."""

from __future__ import annotations

from sim_core.engine import cache


def test_the_digest_covers_every_engine_and_policy_source():
    names = {(p.parent.name, p.name) for p in cache.source_files()}
    assert {("engine", "queues.py"), ("engine", "step.py"), ("engine", "loop.py"), ("policies", "rules.py"),
            ("policies", "registry.py"), ("carbonflex", "kernel.py")} <= names  # (a policy's subpackage too)
    assert cache.digest() == cache.digest()
    files = cache.source_files()
    assert cache.digest(files[:-1]) != cache.digest(files)


def test_stale_entries_are_dropped_once_and_other_modules_are_left_alone(tmp_path):
    d = tmp_path / "__pycache__"
    d.mkdir()
    ours = [d / "step.end_step-90.py311.nbi", d / "step.end_step-90.py311.1.nbc", d / "queues.queue_minima-3.py311.nbi"]
    theirs = d / "physics.step_energy-12.py311.nbi"
    for f in [*ours, theirs]:
        f.write_text("x")
    assert cache.drop_stale(d, ["step", "queues"], "digest-a")  # no stamp yet: dropped, stamp written
    assert not any(f.exists() for f in ours) and theirs.exists()
    assert (d / cache.STAMP).read_text() == "digest-a"
    ours[0].write_text("x")  # written by Numba with these sources
    assert not cache.drop_stale(d, ["step", "queues"], "digest-a") and ours[0].exists()
    assert cache.drop_stale(d, ["step", "queues"], "digest-b") and not ours[0].exists()  # a source changed


def test_a_missing_cache_directory_is_created_with_its_stamp(tmp_path):
    d = tmp_path / "nested" / "__pycache__"
    assert cache.drop_stale(d, ["step"], "digest-a")
    assert (d / cache.STAMP).read_text() == "digest-a"
