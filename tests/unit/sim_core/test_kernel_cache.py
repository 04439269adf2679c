"""The engine's cache guard (``sim_core.engine.cache``): Numba keys a cached kernel on its own file only, so the
entries of an engine or policy module are dropped whenever its source or a source it imports changes -- and
only then (an edit of one policy recompiles that policy alone); and where Numba's cache index of a kernel lies."""

from __future__ import annotations

import ast
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from sim_core.engine import cache


def rel(paths, root=cache.SIM_CORE) -> set[str]:
    return {p.relative_to(root).as_posix() for p in paths}


def test_each_module_depends_on_what_it_imports_from_the_engine_and_the_policies_transitively():
    deps = {k.relative_to(cache.SIM_CORE).as_posix(): rel(v) for k, v in cache.deps().items()}
    assert {"engine/queues.py", "engine/step.py", "engine/loop.py", "policies/rules.py", "policies/registry.py",
            "policies/carbonflex/kernel.py"} <= set(deps)  # (a policy's subpackage too)
    assert deps["engine/layout.py"] == {"engine/layout.py"}
    assert deps["policies/registry.py"] == {"policies/registry.py"}
    # the rules' run loop is loop.py's, which calls step.py's begin_step / end_step, which call the queues...
    assert {"engine/loop.py", "engine/step.py", "engine/queues.py", "engine/servers.py", "policies/registry.py"} \
        <= deps["policies/rules.py"]
    assert "policies/plan.py" not in deps["policies/rules.py"] and "policies/gaia.py" not in deps["policies/rules.py"]
    assert "policies/plan.py" in deps["policies/gaia.py"]
    assert "policies/carbonflex/oracle.py" in deps["policies/carbonflex/kernel.py"]  # (from .oracle import ...)
    assert "engine/servers.py" not in deps["policies/plan.py"]


def ast_imports(path: Path, root: Path) -> set[tuple[str, ...]]:
    """The reference for the guard's scan of import lines: the same rule on Python's own parse."""
    parts = path.relative_to(root).with_suffix("").parts
    here = parts[:-1] if parts[-1] == "__init__" else parts
    package = here if path.name == "__init__.py" else here[:-1]
    out = set()
    for node in ast.walk(ast.parse(path.read_bytes())):
        if isinstance(node, ast.ImportFrom):
            named = tuple(node.module.split(".")) if node.module else ()
            if node.level:
                mod = package[:len(package) - node.level + 1] + named
            elif named[:1] == ("sim_core",):
                mod = named[1:]
            else:
                continue
            if named:
                out.add(mod)
            out.update(mod + (a.name,) for a in node.names)
        elif isinstance(node, ast.Import):
            out.update(tuple(a.name.split("."))[1:] for a in node.names if a.name.startswith("sim_core."))
    return out


def test_the_scan_of_import_lines_finds_what_pythons_parse_finds():
    for p in cache.source_files():
        found = cache._imported(p, cache.SIM_CORE, p.read_bytes())
        assert found == ast_imports(p, cache.SIM_CORE), p
    text = b"""from .capacity import (
    fits,  # a comment, names
    speedup as sp,
)
import sim_core.engine.layout
def f():
    from ..policies import registry
"""
    assert cache._imported(cache.SIM_CORE / "engine" / "x.py", cache.SIM_CORE, text) == {
        ("engine", "capacity"), ("engine", "capacity", "fits"), ("engine", "capacity", "speedup"),
        ("engine", "layout"), ("policies",), ("policies", "registry")}  # (from X import name: X and X.name)


@pytest.fixture()
def tree(tmp_path, monkeypatch):
    """A copy of the engine's and the policies' sources (``<tmp>/sim_core``) with a fake cache entry per module
    in each ``__pycache__``, the guard's stamps recorded; Numba's NUMBA_CACHE_DIR left out of it."""
    monkeypatch.setattr(cache.config, "CACHE_DIR", "")
    root = tmp_path / "sim_core"
    for pkg in cache.PACKAGES:
        shutil.copytree(cache.SIM_CORE / pkg, root / pkg, ignore=shutil.ignore_patterns("__pycache__"))
    assert len(cache.guard(root)) == len(cache.source_files(root))  # no stamp yet: every module's dropped
    for src in cache.source_files(root):
        entry(src).write_text("x")
        loop_entry(src).write_text("x")
    assert cache.guard(root) == []  # nothing changed
    return root


def entry(src: Path) -> Path:
    """A fake cache entry of module ``src`` (a Numba index, as Numba names it)."""
    return src.parent / "__pycache__" / f"{src.stem}.decide-12.py311.nbi"


def loop_entry(src: Path) -> Path:
    """A fake cache entry of the run loop ``engine.loop.policy_loop`` files under module ``src``."""
    return src.parent / "__pycache__" / f"{src.stem}.decide_loop-40.py311.nbi"


def edit_and_guard(root: Path, name: str) -> tuple[set[str], set[str]]:
    """Append a comment to ``root/name``, run the guard: (the modules it reports, those that lost an entry)."""
    dropped, gone, _loops_only = edit_guard_loops(root, name)
    return dropped, gone


def edit_guard_loops(root: Path, name: str) -> tuple[set[str], set[str], set[str]]:
    """:func:`edit_and_guard`, and the modules that lost their run loop's entry only."""
    src = root / name
    src.write_text(src.read_text() + "\n# an edit\n")
    dropped = rel(cache.guard(root), root)
    gone = {p for p in rel(cache.source_files(root), root) if not entry(root / p).exists()}
    gone_loops = {p for p in rel(cache.source_files(root), root) if not loop_entry(root / p).exists()}
    assert gone <= gone_loops  # (a loop calls its module's other kernels)
    for p in cache.source_files(root):  # Numba writes them again at the next run
        entry(p).write_text("x")
        loop_entry(p).write_text("x")
    return dropped, gone_loops, gone_loops - gone


def test_an_edit_of_one_policy_drops_that_policys_entries_only(tree):
    assert edit_and_guard(tree, "policies/gaia.py") == ({"policies/gaia.py"}, {"policies/gaia.py"})
    assert edit_and_guard(tree, "policies/rules.py") == ({"policies/rules.py"}, {"policies/rules.py"})
    assert cache.guard(tree) == []  # and once recorded, the next run keeps them


def test_an_edit_of_a_shared_module_drops_its_importers_and_nothing_else(tree):
    baselines = {"policies/plan.py", "policies/gaia.py", "policies/vcc.py", "policies/carbonscaler.py",
                 "policies/wait_awhile.py", "policies/carbonflex/__init__.py", "policies/carbonflex/kernel.py",
                 "policies/carbonflex/oracle.py"}
    dropped, gone = edit_and_guard(tree, "policies/plan.py")
    assert dropped == gone == baselines  # the rules keep theirs
    dropped, gone, loops_only = edit_guard_loops(tree, "engine/servers.py")
    assert dropped == gone
    assert {"engine/servers.py", "engine/queues.py", "engine/step.py", "engine/loop.py", "engine/__init__.py",
            "policies/rules.py", "policies/gaia.py", "policies/carbonflex/kernel.py"} <= gone
    assert not gone & {"engine/layout.py", "engine/capacity.py", "engine/information.py", "engine/flexible.py",
                       "policies/plan.py", "policies/registry.py", "policies/carbonflex/oracle.py"}
    # each policy's run loop calls the step (hence the servers): recompiled; its decision and helpers import
    # less of the engine and keep theirs, unless they import the servers themselves (GAIA's RES-First)
    assert {"policies/rules.py", "policies/wait_awhile.py", "policies/vcc.py", "policies/carbonscaler.py",
            "policies/carbonflex/kernel.py"} <= loops_only
    assert "policies/gaia.py" not in loops_only


def test_stale_entries_are_dropped_once_and_other_modules_are_left_alone(tmp_path):
    d = tmp_path / "__pycache__"
    d.mkdir()
    ours = [d / "step.end_step-90.py311.nbi", d / "step.end_step-90.py311.1.nbc"]
    theirs = [d / "queues.queue_minima-3.py311.nbi", d / "physics.step_energy-12.py311.nbi"]
    for f in [*ours, *theirs]:
        f.write_text("x")
    assert cache.drop_stale(d, "step", "digest-a")  # no stamp yet: dropped, stamp written
    assert not any(f.exists() for f in ours) and all(f.exists() for f in theirs)
    assert (d / f"step{cache.STAMP_SUFFIX}").read_text() == "digest-a"
    ours[0].write_text("x")  # written by Numba with these sources
    assert not cache.drop_stale(d, "step", "digest-a") and ours[0].exists()
    assert cache.drop_stale(d, "step", "digest-b") and not ours[0].exists()  # a source changed


def test_a_missing_cache_directory_is_created_with_its_stamp(tmp_path):
    d = tmp_path / "nested" / "__pycache__"
    assert cache.drop_stale(d, "step", "digest-a")
    assert (d / f"step{cache.STAMP_SUFFIX}").read_text() == "digest-a"


KERNEL = '''
from numba import njit


@njit(cache=True)
def twice(x):
    return 2 * x
'''

PROBE = '''
import sys
sys.path.insert(0, sys.argv[1])
from sim_core.engine import cache
import mod
before = cache.is_cached(mod.twice)
assert mod.twice(21) == 42
print(before, cache.is_cached(mod.twice), cache.index_file(mod.twice))
'''


@pytest.mark.parametrize("numba_cache_dir", [False, True])
def test_is_cached_finds_the_index_numba_writes(tmp_path, numba_cache_dir):
    """A real compile in a fresh process: the index is where :func:`cache.index_file` says, in the module's
    ``__pycache__`` or under ``NUMBA_CACHE_DIR``; absent before the first call, present after it."""
    (tmp_path / "mod.py").write_text(textwrap.dedent(KERNEL))
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    if numba_cache_dir:
        env["NUMBA_CACHE_DIR"] = str(tmp_path / "numba-cache")
    out = subprocess.run([sys.executable, "-c", PROBE, str(tmp_path)], capture_output=True, text=True, env=env,
                         timeout=300, check=True).stdout.split()
    before, after, index = out[0], out[1], Path(out[2])
    assert (before, after) == ("False", "True")
    assert index.is_file() and index.name == f"mod.twice-5.py{sys.version_info[0]}{sys.version_info[1]}.nbi"
    if numba_cache_dir:  # <folder name>_<sha1 of its path>
        assert index.parent.parent == tmp_path / "numba-cache" and index.parent.name.startswith(f"{tmp_path.name}_")
    else:
        assert index.parent == tmp_path / "__pycache__"
    assert sorted(p.name for p in index.parent.glob("mod.*")) == [f"{index.stem}.1.nbc", index.name]


def test_the_registry_counts_as_each_modules_own_policies_entries(tree):
    """A table (the registry) enters a module's digest as what that module reads of it: an edit of the file
    alone, a new policy's entry, or another policy's parameter drops nothing; a policy's own entry drops the
    modules that run it (and only those)."""
    read = {"sim_core.policies.gaia": b"gaia=1:grid_steps=4;", "sim_core.policies.carbonflex": b"carbonflex=2:k=5;"}
    tables = {"policies/registry.py": lambda module: b"".join(v for m, v in read.items()
                                                               if module == m or module.startswith(m + "."))}

    def guard_again() -> tuple[set[str], set[str]]:
        dropped = rel(cache.guard(tree, tables), tree)
        gone = {p for p in rel(cache.source_files(tree), tree) if not entry(tree / p).exists()}
        for p in cache.source_files(tree):
            entry(p).write_text("x")
            loop_entry(p).write_text("x")
        return dropped, gone

    guard_again()  # (the fixture recorded the whole file: the first guard with the table records its parts)
    assert guard_again() == (set(), set())
    reg = tree / "policies" / "registry.py"
    reg.write_text(reg.read_text() + "\n# a comment, a new docstring\n")
    assert guard_again() == (set(), set())
    read["sim_core.policies.a_new_policy"] = b"a_new_policy=3:;"  # a new policy's entry
    assert guard_again() == (set(), set())
    read["sim_core.policies.gaia"] = b"gaia=1:grid_steps=2;"  # one policy's parameter
    assert guard_again() == ({"policies/gaia.py"}, {"policies/gaia.py"})
    read["sim_core.policies.carbonflex"] = b"carbonflex=2:k=7;"
    cf = {"policies/carbonflex/__init__.py", "policies/carbonflex/kernel.py", "policies/carbonflex/oracle.py"}
    assert guard_again() == (cf, cf)


def test_importing_sim_core_ran_the_guard_with_the_registry():
    """``import sim_core`` stamps each policy module with its sources and its own policies' registry entries."""
    import sim_core  # noqa: F401 (runs the guard)
    from sim_core.policies import registry, rules

    src = cache.SIM_CORE / "policies" / "rules.py"
    want = cache.digest(cache.deps()[src], tables={registry.TABLE_FILE: registry.frozen})
    assert want != cache.digest(cache.deps()[src])  # (the registry counts as the rules' entries, not its text)
    stamp = cache.index_file(rules.decide).parent / f"rules{cache.LOOPS_STAMP_SUFFIX}"
    assert stamp.read_text() == want
    assert cache.is_loop(cache.index_file(rules.run)) and not cache.is_loop(cache.index_file(rules.decide))
