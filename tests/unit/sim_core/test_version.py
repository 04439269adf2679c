"""The run version leaves out ``sim_core.optimum`` (``sim_core.result.RUN_EXCLUDES``), so stored runs outlive an
improvement of the optimum's search. That is sound only while no run imports it: these tests walk the static import
graph (every import statement, those inside functions too) from ``sim_core`` and every registered policy module."""

from __future__ import annotations

import ast
from pathlib import Path

import sim_core
from sim_core.policies import registry
from sim_core.result import RUN_EXCLUDES, gridshift_version, optimum_version

ROOT = Path(sim_core.__file__).resolve().parents[1]


def _file(module: str) -> Path | None:
    """The source of a module of ``sim_core`` or ``gridshift`` (None for any other module)."""
    if module.split(".")[0] not in ("sim_core", "gridshift"):
        return None
    base = ROOT.joinpath(*module.split("."))
    for p in (base / "__init__.py", base.with_suffix(".py")):
        if p.is_file():
            return p
    return None


def _imports(module: str, path: Path) -> set[str]:
    """The modules ``path`` (module ``module``) imports, relative imports resolved; ``from X import y`` counts as
    importing X and, when it is one, the submodule X.y."""
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_bytes())):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                parts = package.split(".")
                base = ".".join(parts[: len(parts) - node.level + 1] + ([node.module] if node.module else []))
            else:
                base = node.module or ""
            out.add(base)
            out.update(f"{base}.{a.name}" for a in node.names)
    return out


def reachable(roots: list[str]) -> set[str]:
    """Every ``sim_core``/``gridshift`` module reachable from ``roots`` through import statements (a submodule's
    import runs its packages' ``__init__`` too)."""
    seen: set[str] = set()
    todo = list(roots)
    while todo:
        m = todo.pop()
        if m in seen or _file(m) is None:
            continue
        seen.add(m)
        parts = m.split(".")
        todo.extend(".".join(parts[:i]) for i in range(1, len(parts)))
        todo.extend(_imports(m, _file(m)))
    return seen


def test_no_run_imports_the_excluded_packages():
    roots = ["sim_core", "sim_core.simulator", *[s.module for s in registry.BUILTIN]]
    mods = reachable(roots)
    assert "sim_core.simulator" in mods and "sim_core.engine" in mods and len(mods) > 40
    leaked = sorted(m for m in mods for e in RUN_EXCLUDES if m == f"sim_core.{e}" or m.startswith(f"sim_core.{e}."))
    assert leaked == [], f"a run imports {leaked}: drop them from sim_core.result.RUN_EXCLUDES or the import"


def test_the_walk_sees_lazy_imports():
    # sim_core.bench.gap imports the optimum inside its functions: the walk must find it, or the test above is void
    assert "sim_core.optimum.solve" in reachable(["sim_core.bench.gap"])


def test_optimum_version_extends_the_run_version():
    run, opt = gridshift_version(), optimum_version()
    assert run.count("+sim.") == 1 and len(run.rpartition(".")[2]) == 12
    assert opt.startswith(run + ".opt.") and len(opt.rpartition(".")[2]) == 12
