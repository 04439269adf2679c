"""Keep Numba's on-disk cache of the engine and the policies consistent across files, module by module.

Numba keys a cached kernel on its own source file (a hash of its contents) only: a kernel that calls, or inlines, a
kernel of another file (``end_step`` inlines ``queues.schedule``; a policy's run loop calls ``begin_step``)
would keep its stale machine code after that other file changed. :func:`guard` therefore gives each source
file of ``sim_core/engine`` and ``sim_core/policies`` (their subpackages included: ``policies/carbonflex``) a
digest over its own source and every source it imports from these packages, transitively (:func:`deps`), and
drops that module's cache entries when its digest differs from the one recorded with them. An edit to one
policy's module drops that policy's kernels only; an edit to an engine module drops the kernels of the
modules that import it (every policy's run loop imports :mod:`.loop`, hence :mod:`.step`); never a stale
kernel, and no cold compile of what the edit cannot reach. A policy module's run loop (``engine.loop``) is
keyed apart from its other kernels: an edit of the step or the queues recompiles each policy's loop, not its
decision and helpers, which import less of the engine.

A table that modules read constants from (the policy registry: each policy module freezes its own policies'
codes and parameters) enters a module's digest as the part of it that module reads (``tables``), not as its
whole source: a new policy's entry, or another policy's parameter, recompiles nothing else. ``sim_core``'s
``__init__`` runs :func:`guard` at import, before any kernel is called (Numba reads its cache at a kernel's first
call, not at its definition).
"""

from __future__ import annotations

import hashlib
import os
import re
import sys
from collections.abc import Callable, Mapping
from pathlib import Path

from numba import config

#: (``abspath``, not ``resolve``: Numba files the cache of a source under its absolute path, links kept)
SIM_CORE = Path(os.path.abspath(__file__)).parents[1]
#: the packages whose jitted kernels call one another across files
PACKAGES = ("engine", "policies", "physics")
#: a module's recorded digest, beside its entries: ``<stem>.kernels.sha256``
STAMP_SUFFIX = ".kernels.sha256"
#: the recorded digest of a policy module's run loops (``<stem>.loops.sha256``)
LOOPS_STAMP_SUFFIX = ".loops.sha256"
#: where a policy module's run loop comes from (``engine.loop.policy_loop``): the loop calls the step
#: (``begin_step`` / ``end_step``), and through it most of the engine; the module's own kernels need not. The
#: loops are filed under the module's source as ``<decide>_loop`` (:data:`LOOP_SUFFIX`).
LOOP_FILE = "engine/loop.py"
LOOP_SUFFIX = "_loop"


def source_files(root: Path = SIM_CORE) -> list[Path]:
    """The source files of the engine and the policies under ``root``, their subpackages included, in a fixed
    order."""
    return sorted(p for pkg in PACKAGES for p in (root / pkg).rglob("*.py") if "__pycache__" not in p.parts)


def _module_of(path: Path, root: Path) -> tuple[str, ...]:
    """``sim_core/policies/carbonflex/kernel.py`` -> ``("policies", "carbonflex", "kernel")`` (a package's
    ``__init__`` is the package)."""
    parts = path.relative_to(root).with_suffix("").parts
    return parts[:-1] if parts[-1] == "__init__" else parts


#: an import statement at the start of a line: ``from <dots><module> import <names or (names)>``, ``import <module>``
_FROM = re.compile(rb"^[ \t]*from[ \t]+(\.*)([\w.]*)[ \t]+import[ \t]+(\([^)]*\)|[^\n]*)", re.M)
_IMPORT = re.compile(rb"^[ \t]*import[ \t]+([\w.]+)", re.M)


def _imported(path: Path, root: Path, text: bytes) -> set[tuple[str, ...]]:
    """The modules below ``root`` that ``path`` (source ``text``) imports, relative or as ``sim_core.…``,
    anywhere in it (a function's own imports too); ``from X import name`` counts ``X`` and ``X.name`` (a
    submodule, when there is one), ``from . import name`` ``name`` alone. (A scan of the import lines, not a
    parse: the guard runs at every import of the engine. A line in a docstring that reads like an import can
    only add a dependency: a recompile too many, never a stale kernel.)"""
    here = _module_of(path, root)
    package = here if path.name == "__init__.py" else here[:-1]
    out: set[tuple[str, ...]] = set()
    for dots, module, names in _FROM.findall(text):
        named = tuple(module.decode().split(".")) if module else ()
        if dots:
            mod = package[:len(package) - len(dots) + 1] + named
        elif named[:1] == (root.name,):
            mod = named[1:]
        else:
            continue
        if named:  # (``from . import registry``: the module named, not the package)
            out.add(mod)
        listed = re.sub(rb"#[^\n]*", b"", names).strip(b"()")
        out.update(mod + (n.split()[0].decode(),) for n in listed.split(b",") if n.strip())
    for (module,) in (m.groups() for m in _IMPORT.finditer(text)):
        parts = tuple(module.decode().split("."))
        if parts[0] == root.name:
            out.add(parts[1:])
    return out


def deps(root: Path = SIM_CORE, texts: dict[Path, bytes] | None = None, cut: str | None = None
         ) -> dict[Path, list[Path]]:
    """Each source file (:func:`source_files`) -> itself and every source file it imports from the engine and
    the policies, transitively, in a fixed order (importing a package's module does not count its
    ``__init__``: a kernel calls functions, not packages). ``texts``: the files' contents, when read already.
    ``cut`` (a file below ``root``, posix): its imports are not followed, nor is it counted by the others."""
    texts = texts if texts is not None else {p: p.read_bytes() for p in source_files(root)}
    by_module = {_module_of(p, root): p for p in texts}
    direct = {p: {by_module[m] for m in _imported(p, root, t) if m in by_module} for p, t in texts.items()}
    if cut is not None:
        direct = {p: {q for q in ps if q != root / cut} for p, ps in direct.items()}
    out = {}
    for p in sorted(texts):
        seen, todo = {p}, [p]
        while todo:
            for q in direct[todo.pop()] - seen:
                seen.add(q)
                todo.append(q)
        out[p] = sorted(seen)
    return out


#: a table file (its path below the root, posix) -> what of it the kernels of a module (its dotted name) read
Tables = Mapping[str, Callable[[str], bytes]]


def dotted(path: Path, root: Path = SIM_CORE) -> str:
    """The module name of source file ``path`` (``sim_core.policies.carbonflex.kernel``; a package's ``__init__``:
    the package)."""
    return ".".join((root.name, *_module_of(path, root)))


def digest(files: list[Path], root: Path = SIM_CORE, texts: dict[Path, bytes] | None = None,
           tables: Tables | None = None) -> str:
    """sha256 over the paths (below ``root``) and contents of ``files`` (``texts``: their contents, when read
    already); a file of ``tables`` counts as what the other ``files`` read of it."""
    h = hashlib.sha256()
    for p in files:
        name = p.relative_to(root).as_posix()
        if tables and name in tables:
            body = b"".join(tables[name](dotted(q, root)) for q in files if q.relative_to(root).as_posix()
                            not in tables)
        else:
            body = texts[p] if texts else p.read_bytes()
        h.update(name.encode() + b"\0" + body + b"\0")
    return h.hexdigest()


def cache_dirs(src_dir: Path) -> list[Path]:
    """Where Numba may keep the cache of kernels defined in ``src_dir`` (Numba's documented cache locations):
    ``__pycache__`` beside the sources, and when ``NUMBA_CACHE_DIR`` is set the folder Numba files them under
    there, ``<folder name>_<sha1 of the folder's absolute path>``."""
    dirs = [src_dir / "__pycache__"]
    if config.CACHE_DIR:
        dirs.append(Path(config.CACHE_DIR) / f"{src_dir.name}_{hashlib.sha1(str(src_dir).encode()).hexdigest()}")
    return dirs


def index_file(kernel) -> Path:
    """Where the cache index of the jitted ``kernel`` (a ``numba.njit(cache=True)`` dispatcher) lies: Numba
    names it ``<module file stem>.<qualname>-<first line>.py<major><minor>.nbi`` in the folder :func:`cache_dirs`
    gives for its source file (``NUMBA_CACHE_DIR``'s when that is set: Numba then uses it alone)."""
    code = kernel.py_func.__code__
    src = Path(os.path.abspath(code.co_filename))
    name = f"{src.stem}.{kernel.py_func.__qualname__}".replace("<", "").replace(">", "")
    base = f"{name}-{code.co_firstlineno}.py{sys.version_info[0]}{sys.version_info[1]}{getattr(sys, 'abiflags', '')}"
    return cache_dirs(src.parent)[-1 if config.CACHE_DIR else 0] / f"{base}.nbi"


def is_cached(kernel) -> bool:
    """Whether ``kernel``'s compiled code is on disk, so that its first call loads rather than compiles: its
    index exists (one ``stat``). Exact for the engine's and the policies' kernels, whose entries :func:`guard`
    (run at import) drops when their sources change; a kernel of another module keeps its index when its own
    source changes (Numba then finds the index stale and recompiles)."""
    return index_file(kernel).is_file()


def is_loop(entry: Path) -> bool:
    """Whether cache entry ``entry`` (``<stem>.<qualname>-<line>.py311.nbi`` / ``.<n>.nbc``) is a run loop's."""
    return entry.name.split("-", 1)[0].endswith(LOOP_SUFFIX)


def drop_stale(cache_dir: Path, stem: str, want: str, loops: bool | None = None) -> bool:
    """Delete the cache entries (``<stem>.*.nbi`` / ``.nbc``) of module ``stem`` in ``cache_dir`` unless its
    stamp there records ``want``, then record it; True when the stamp was missing or different. ``loops``:
    True, only its run loops' entries (:func:`is_loop`; their own stamp); False, all but those; None, all. A
    read-only directory keeps no stamp (Numba writes nothing there either)."""
    stamp = cache_dir / f"{stem}{LOOPS_STAMP_SUFFIX if loops else STAMP_SUFFIX}"
    try:
        if stamp.read_text() == want:
            return False
    except OSError:
        pass
    for f in cache_dir.glob(f"{stem}.*.nb[ic]"):
        if loops is None or is_loop(f) == loops:
            f.unlink(missing_ok=True)
    try:
        cache_dir.mkdir(parents=True, exist_ok=True)
        tmp = stamp.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_text(want)
        tmp.replace(stamp)
    except OSError:
        pass
    return True


def guard(root: Path = SIM_CORE, tables: Tables | None = None) -> list[Path]:
    """Drop the cache entries of each engine and policy module whose source, or a source it imports (of a table
    in ``tables``: the part it reads), changed since they were written; the source files whose entries were
    dropped (or had no stamp yet)."""
    texts = {p: p.read_bytes() for p in source_files(root)}
    own = deps(root, texts, cut=LOOP_FILE)
    dropped = []
    for src, files in deps(root, texts).items():
        want = digest(files, root, texts, tables)
        hit = False
        for d in cache_dirs(src.parent):
            if own[src] == files:  # (no run loop: one digest for every kernel)
                hit |= drop_stale(d, src.stem, want)
            else:  # its run loops on everything they call; its other kernels on what they import themselves
                hit |= drop_stale(d, src.stem, want, loops=True)
                hit |= drop_stale(d, src.stem, digest(own[src], root, texts, tables), loops=False)
        if hit:
            dropped.append(src)
    return dropped
