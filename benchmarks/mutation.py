"""Mutation testing of the data path and the engine's deadline and accounting code: do the tests notice a change?

Each target is a module (or some of its functions) and the focused tests that cover it. The script copies the
repository's code into a temporary directory once, then for every mutation site writes the module with that one
change (an AST operator mutation, below) and runs the focused tests against the copy in a fresh interpreter
(``pytest -x``, a timeout of 3 x the unmutated run + 30 s). A mutant is *killed* when the tests fail (or time
out), *survives* when they pass. Mutants listed in :data:`EQUIVALENT` (shown to behave exactly like the original)
are reported on their own and left out of the kill rate. Dependency-free: ``ast`` + ``subprocess``.

Operators (one change per mutant, deterministic order):

* comparisons: ``<`` <-> ``<=``, ``>`` <-> ``>=``, ``==`` <-> ``!=``, ``is`` <-> ``is not``, ``in`` <-> ``not in``
  (an interval's boundary, inclusive vs exclusive);
* arithmetic: ``+`` <-> ``-``, ``*`` <-> ``/``, ``//`` -> ``/``, ``%`` -> ``//``, ``&`` <-> ``|`` (polars
  masks), the same in augmented assignments (``+=`` <-> ``-=``: accumulation);
* logic: ``and`` <-> ``or``, ``not x`` -> ``x``, ``~x`` -> ``x``, ``-x`` -> ``x``;
* constants: an integer ``n`` -> ``n + 1``, a float ``x`` -> ``x + 1``, ``True`` <-> ``False``; the boundary
  keyword strings ``closed=`` (both/left/right/none) and join ``strategy=`` (backward <-> forward).

Docstrings, f-strings (messages), annotations and decorators are not mutated. The engine's kernels are Numba-jitted:
their tests run with ``NUMBA_DISABLE_JIT=1``, so the mutated Python source is what runs (the source Numba
compiles; a compile per mutant would take minutes).

Usage::

    nice -n 10 ./run.sh python -m benchmarks.mutation                 # every target, report to docs/mutation.md
    nice -n 10 ./run.sh python -m benchmarks.mutation --target resample --no-write
    ./run.sh python -m benchmarks.mutation --list                     # the mutants of each target, no test run
    nice -n 10 ./run.sh python -m benchmarks.mutation --target resample --only _interior_gaps   # some, kept nowhere
    ./run.sh python -m benchmarks.mutation --report                   # the report from the kept results

Results of each target are kept in ``--results`` (one JSON per target), so targets can be run one at a time; the
report (docs/mutation.md and the BENCHMARKS.md section) is written from every target's latest result.
"""

from __future__ import annotations

import argparse
import ast
import copy
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from benchmarks._report import ROOT, machine, update_section

PACKAGES = ("gridshift", "gridshift_plots", "gridshift_cli", "pipelines", "warehouse", "scenario_builder",
            "sim_core", "dagster_project", "benchmarks", "tests", "examples")
ROOT_FILES = ("pyproject.toml",)
DOCS = ROOT / "docs" / "mutation.md"
RESULTS = ROOT / ".mutation"
GOAL = 0.95


@dataclass(frozen=True)
class Target:
    """A module (``functions``: only these, by qualified name; empty = the whole module) and its focused tests."""

    name: str
    path: str
    tests: tuple[str, ...]
    functions: tuple[str, ...] = ()
    env: dict[str, str] = field(default_factory=dict)
    why: str = ""


NO_JIT = {"NUMBA_DISABLE_JIT": "1"}
TARGETS = (
    Target("resample", "scenario_builder/resample.py", ("tests/unit/scenario_builder/test_resample.py",
                                                        "tests/unit/scenario_builder/test_resample_boundaries.py"),
           why="the data path's resampling onto the 15-minute grid: interpolation, hold, averaging, gaps"),
    Target("timestep", "gridshift/timestep.py", ("tests/unit/gridshift/test_timestep.py",
                                                 "tests/unit/scenario_builder/test_resample.py"),
           why="the time axis: the 15-minute step and its derived forms"),
    Target("check_time_grid", "pipelines/core/tabular.py", ("tests/unit/pipelines/core/test_time_grid.py",),
           functions=("check_time_grid",),
           why="the ingest's time-axis check: duplicates, off-grid timestamps, gaps beyond the fill limit"),
    Target("bounds", "gridshift/bounds.py", ("tests/unit/gridshift/test_bounds.py",),
           functions=("Bound.admits", "Bound.describe"),
           why="the fields' value ranges (inclusive bounds, NaN and infinities refused)"),
    Target("fields", "gridshift/fields.py", ("tests/unit/gridshift/test_fields_rules.py",),
           functions=("Field.__post_init__", "Field.but", "TableSpec.__post_init__", "_at_least", "_pct",
                      "_registry", "table"),
           why="the field registry's rules: types, restated fields, table specs (the registry's data is not "
               "mutated)"),
    Target("plausibility", "pipelines/core/plausibility.py", ("tests/unit/pipelines/core/test_plausibility.py",),
           why="per-partition plausibility of carbon, price and weather, the whole module: floors, swapped columns, "
               "scaled stretches, the direct and life-cycle columns an hour apart (factor lag), units, the daily "
               "cycle's phase"),
    Target("engine_deadline", "sim_core/engine/step.py", ("tests/unit/sim_core/test_engine_deadline.py",),
           functions=("begin_step",), env=NO_JIT,
           why="the engine's step start: arrivals inside the step, tasks undecided at their deadline forced "
               "to their origin"),
    Target("engine_accounting", "sim_core/physics/site.py", ("tests/unit/sim_core/test_step_accounting.py",),
           functions=("step_energy",), env=NO_JIT,
           why="the engine's per-step accounting: energy, cost and carbon per datacenter and their sums"),
    Target("engine_sla", "sim_core/engine/queues.py", ("tests/unit/sim_core/test_sla_segments.py",),
           functions=("_resume_segment",), env=NO_JIT,
           why="a resumed task's run segment and its SLA decided again (late when it finishes after its deadline), "
               "with the step's net count of violations"),
    Target("engine_tallies", "sim_core/result.py", ("tests/unit/sim_core/test_task_tallies.py",),
           functions=("_task_tallies",), env=NO_JIT,
           why="the run's per-task accounting: started, completed by the window's end, states at the end, "
               "remote, SLA violations, waits"),
)

_ORDER = ("not killed, not shown equivalent: polars keeps these rows in order without the flag today (the frame is "
          "sorted just before, and its sorted fast path keeps equal keys in place), so no test can tell; the flag "
          "guards the binned row's precedence over a coarse row at the same step against a change of that detail")
#: surviving mutants that no test could kill and that are not provably equivalent, with why
SURVIVOR_NOTES: dict[str, dict[str, str]] = {
    "resample": {"average_fine:132:94:True -> False": _ORDER, "average_fine:133:58:True -> False": _ORDER},
}
_HEAD = ("head(11) for head(10): DataError keeps only the first 10 rows and values it is given "
         "(gridshift.errors), so the refusal is the same")
_EMPTY = "the only extra spans have an end at or before their start, which _finish drops"
#: mutants shown to behave like the original, by target and mutant key, with the reason
EQUIVALENT: dict[str, dict[str, str]] = {
    "timestep": {"<module>:16:16:86400 -> 86401": "86 401 // 900 == 86 400 // 900 == 96"},
    "check_time_grid": {
        "check_time_grid:145:32:10 -> 11": _HEAD, "check_time_grid:146:51:10 -> 11": _HEAD,
        "check_time_grid:158:32:10 -> 11": _HEAD, "check_time_grid:159:51:10 -> 11": _HEAD,
    },
    "plausibility": {
        "_sample:31:74:10 -> 11": _HEAD, "_scaled_rows:82:66:10 -> 11": _HEAD, "_carbon:158:57:10 -> 11": _HEAD,
        "_weather:220:72:10 -> 11": _HEAD,
        "_carbon:164:63:True -> False": "zip(strict=False) over two columns of one frame: always the same length",
        "_weather:208:104:False -> True": "the default of `allow` is never used: _weather's one caller, check, "
        "always passes it",
        "_scaled_rows:71:22:<= -> <": "with a level of 0 the rolling medians of |value| are never below 0, so no "
        "row is low and the check returns [] as the original does",
    },
    "engine_deadline": {
        "begin_step:94:70:> -> >=": "the run's options hold 0.0 or 1.0 (sim_core.simulator: float of a bool), never "
        "0.5: `> 0.5` and `>= 0.5` agree on both",
    },
    "resample": {
        "resample_continuous:185:58:-x -> x": "the first term's fill (used only on the first row) is the second "
        "term there, and min_horizontal skips a null: the spacing is the forward one either way",
        "resample_continuous:185:59:1 -> 2": "the first row's spacing is min(its spacing to the row after next, to the "
        "next row) = to the next row on sorted timestamps, as without the change",
        "resample_continuous:186:58:// -> /": "the spacing in seconds is compared only with 900 (`res_s < STEP_S`): "
        "floor(x) < 900 exactly when x < 900",
        "resample_continuous:186:76:3600000000 -> 3600000001": "the fill for a one-row source: 3 600 000 001 // "
        "1 000 000 == 3600, the same seconds",
        "resample_continuous:217:7:> -> >=": "first == lo makes a start-of-year gap [lo, lo) of length 0, which "
        "_finish drops",
        "resample_hold:250:7:> -> >=": "first == lo makes a start-of-year gap [lo, lo) of length 0, which _finish "
        "drops",
        "resample_continuous:220:7:< -> <=": "last == last_step makes k = 0: an end-of-year gap of length 0, which "
        "_finish drops",
        "_interior_gaps:165:11:> -> >=": "a next point exactly on time gives the span [t + r, t + r); " + _EMPTY,
        "_interior_gaps:165:11:- -> +": "every pair is kept, on time or early too: their spans [t + r, nxt) are "
        "empty or negative; " + _EMPTY,
        "resample_hold:253:7:+ -> -": "where the original condition fails (last + r > last_step), k = (last_step - "
        "last) // r <= 0, so the extra end-of-year gap [last + r, last + (k + 1) r) is empty or negative: " + _EMPTY,
        "_finish:276:38:> -> >=": "no producer makes a gap of length 0 (each is guarded: a late next point, "
        "first > lo, last < last_step, last + r <= last_step), so the filter drops nothing either way",
    },
}

_CMP = {ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt, ast.Eq: ast.NotEq, ast.NotEq: ast.Eq,
        ast.Is: ast.IsNot, ast.IsNot: ast.Is, ast.In: ast.NotIn, ast.NotIn: ast.In}
_BIN = {ast.Add: ast.Sub, ast.Sub: ast.Add, ast.Mult: ast.Div, ast.Div: ast.Mult, ast.FloorDiv: ast.Div,
        ast.Mod: ast.FloorDiv, ast.BitAnd: ast.BitOr, ast.BitOr: ast.BitAnd}
_SYM = {ast.Lt: "<", ast.LtE: "<=", ast.Gt: ">", ast.GtE: ">=", ast.Eq: "==", ast.NotEq: "!=", ast.Is: "is",
        ast.IsNot: "is not", ast.In: "in", ast.NotIn: "not in", ast.Add: "+", ast.Sub: "-", ast.Mult: "*",
        ast.Div: "/", ast.FloorDiv: "//", ast.Mod: "%", ast.BitAnd: "&", ast.BitOr: "|", ast.And: "and",
        ast.Or: "or"}
_STRINGS = {"closed": {"both": "left", "left": "both", "right": "both", "none": "both"},
            "strategy": {"backward": "forward", "forward": "backward"}}


@dataclass(frozen=True)
class Mutant:
    key: str  # function:line:col:change (" #2" for a second one there), stable while the module's text is
    line: int
    change: str


def _scopes(tree: ast.Module, functions: tuple[str, ...]) -> list[ast.AST]:
    """The nodes to mutate: the named (qualified) functions, or the whole module."""
    if not functions:
        return [tree]
    found: dict[str, ast.AST] = {}

    def walk(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                name = f"{prefix}{child.name}"
                found[name] = child
                walk(child, name + ".")

    walk(tree, "")
    missing = [f for f in functions if f not in found]
    if missing:
        raise SystemExit(f"mutation: no function {missing} in the module")
    return [found[f] for f in functions]


def _skipped(tree: ast.Module) -> set[int]:
    """ids of nodes never mutated: docstrings, f-strings, annotations, decorators."""
    skip: set[int] = set()

    def mark(node: ast.AST | None) -> None:
        if node is not None:
            skip.update(id(n) for n in ast.walk(node))

    for node in ast.walk(tree):
        if isinstance(node, ast.JoinedStr):
            mark(node)
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Module):
            body = node.body
            if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
                mark(body[0])
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            for d in node.decorator_list:
                mark(d)
            mark(node.returns)
            for a in [*node.args.args, *node.args.kwonlyargs, *node.args.posonlyargs]:
                mark(a.annotation)
        if isinstance(node, ast.ClassDef):
            for d in node.decorator_list:
                mark(d)
        if isinstance(node, ast.AnnAssign):
            mark(node.annotation)
    return skip


def _sites(tree: ast.Module, functions: tuple[str, ...]):
    """Every (node, index of the change, description) in source order; the change is applied by :func:`_apply`."""
    skip = _skipped(tree)
    kw_strings: dict[int, str] = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.keyword) and node.arg in _STRINGS and isinstance(node.value, ast.Constant):
            kw_strings[id(node.value)] = node.arg
    seen: set[int] = set()
    out = []
    for scope in _scopes(tree, functions):
        for node in ast.walk(scope):
            if id(node) in skip or id(node) in seen:
                continue
            seen.add(id(node))
            if isinstance(node, ast.Compare):
                for i, op in enumerate(node.ops):
                    if type(op) in _CMP:
                        out.append((node, i, f"{_SYM[type(op)]} -> {_SYM[_CMP[type(op)]]}"))
            elif isinstance(node, ast.BinOp | ast.AugAssign) and type(node.op) in _BIN:
                eq = "=" if isinstance(node, ast.AugAssign) else ""
                out.append((node, 0, f"{_SYM[type(node.op)]}{eq} -> {_SYM[_BIN[type(node.op)]]}{eq}"))
            elif isinstance(node, ast.BoolOp):
                other = "or" if isinstance(node.op, ast.And) else "and"
                out.append((node, 0, f"{_SYM[type(node.op)]} -> {other}"))
            elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not | ast.Invert | ast.USub):
                sym = {ast.Not: "not ", ast.Invert: "~", ast.USub: "-"}[type(node.op)]
                out.append((node, 0, f"{sym}x -> x"))
            elif isinstance(node, ast.Constant):
                v = node.value
                if isinstance(v, bool):
                    out.append((node, 0, f"{v} -> {not v}"))
                elif isinstance(v, int | float):
                    out.append((node, 0, f"{v!r} -> {v + 1!r}"))
                elif isinstance(v, str) and id(node) in kw_strings and v in _STRINGS[kw_strings[id(node)]]:
                    out.append((node, 0, f"{kw_strings[id(node)]}={v!r} -> {_STRINGS[kw_strings[id(node)]][v]!r}"))
    out.sort(key=lambda s: (s[0].lineno, s[0].col_offset, s[1], s[2]))
    return out


def _apply(node: ast.AST, i: int) -> None:
    """Change ``node`` in place (a node of a deep copy of the module)."""
    if isinstance(node, ast.Compare):
        node.ops[i] = _CMP[type(node.ops[i])]()
    elif isinstance(node, ast.BinOp | ast.AugAssign):
        node.op = _BIN[type(node.op)]()
    elif isinstance(node, ast.BoolOp):
        node.op = ast.Or() if isinstance(node.op, ast.And) else ast.And()
    elif isinstance(node, ast.Constant):
        v = node.value
        if isinstance(v, bool):
            node.value = not v
        elif isinstance(v, int | float):
            node.value = v + 1
        else:
            node.value = next(m[v] for m in _STRINGS.values() if v in m)
    else:
        raise AssertionError(node)


class _Unwrap(ast.NodeTransformer):
    """Replace one unary operation by its operand (``not x`` -> ``x``)."""

    def __init__(self, target: ast.AST) -> None:
        self.target = target

    def visit_UnaryOp(self, node: ast.UnaryOp) -> ast.AST:
        if node is self.target:
            return node.operand
        return self.generic_visit(node)


def mutants(source: str, target: Target) -> list[tuple[Mutant, str]]:
    """Every mutant of ``source`` with the mutated module's text, in a deterministic order."""
    tree = ast.parse(source)
    scope_of = _scope_names(tree)
    out = []
    seen: dict[str, int] = {}
    for n, (node, i, change) in enumerate(_sites(tree, target.functions)):
        mutated = copy.deepcopy(tree)
        twin = _sites(mutated, target.functions)[n][0]
        if isinstance(twin, ast.UnaryOp):
            mutated = _Unwrap(twin).visit(mutated)
        else:
            _apply(twin, i)
        key = f"{scope_of.get(node.lineno, '<module>')}:{node.lineno}:{node.col_offset}:{change}"
        seen[key] = seen.get(key, 0) + 1
        if seen[key] > 1:  # nested operations that start at the same column (a + b + c): the 2nd, 3rd, ...
            key += f" #{seen[key]}"
        out.append((Mutant(key, node.lineno, change), ast.unparse(ast.fix_missing_locations(mutated))))
    return out


def _scope_names(tree: ast.Module) -> dict[int, str]:
    """Source line -> the innermost function or class (qualified name) it belongs to."""
    names: dict[int, str] = {}

    def walk(node: ast.AST, prefix: str) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                name = f"{prefix}{child.name}"
                for ln in range(child.lineno, (child.end_lineno or child.lineno) + 1):
                    names[ln] = name
                walk(child, name + ".")

    walk(tree, "")
    return names


def _copy_tree(dst: Path) -> None:
    """The repository's code and tests (with their bytecode, whose timestamps copy2 keeps) into ``dst``."""
    for pkg in PACKAGES:
        if (ROOT / pkg).is_dir():
            shutil.copytree(ROOT / pkg, dst / pkg, copy_function=shutil.copy2,
                            ignore=shutil.ignore_patterns("*.nbi", "*.nbc"))
    for f in ROOT_FILES:
        shutil.copy2(ROOT / f, dst / f)


def _pytest(workdir: Path, target: Target, timeout: float | None) -> tuple[str, float, str]:
    """Run the target's tests in ``workdir``: ('passed' | 'failed' | 'timeout', seconds, last output line)."""
    # the focused tests are unit tests: they never read the data mirror, so the suite's end-of-session guard
    # that hashes it (tests/conftest.py) is pointed at an empty path instead of rehashing 89 MB per mutant
    env = {**os.environ, "PYTHONPATH": str(workdir), "PYTHONDONTWRITEBYTECODE": "1",
           "GRIDSHIFT_SHARED_DATA": str(workdir / "no-shared-data"), **target.env}
    cmd = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", "--no-header", *target.tests]
    t0 = time.monotonic()
    try:
        done = subprocess.run(cmd, cwd=workdir, env=env, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return "timeout", time.monotonic() - t0, ""
    lines = (done.stdout + done.stderr).strip().splitlines()
    return ("passed" if done.returncode == 0 else "failed"), time.monotonic() - t0, (lines[-1] if lines else "")


def run_target(target: Target, log, only: str | None = None) -> dict:
    """Run every mutant of ``target`` (``only``: those whose key contains it); the result as a JSON-able dict (each
    equivalent or explained survivor carries its reason, ``why``, as the script stated it for that run)."""
    source = (ROOT / target.path).read_text()
    muts = [(m, text) for m, text in mutants(source, target) if only is None or only in m.key]
    equivalent = EQUIVALENT.get(target.name, {})
    load0 = os.getloadavg()
    t_start = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="gridshift-mutation-") as tmp:
        work = Path(tmp)
        _copy_tree(work)
        module_file = work / target.path
        for pyc in (module_file.parent / "__pycache__").glob(module_file.stem + ".*.pyc"):
            pyc.unlink()
        # the copy, not the worktree, is what the tests import
        mod = target.path.removesuffix(".py").replace("/", ".")
        where = subprocess.run([sys.executable, "-c", f"import {mod} as m; print(m.__file__)"], cwd=work,
                               env={**os.environ, "PYTHONPATH": str(work), **target.env}, capture_output=True,
                               text=True, check=True).stdout.strip()
        if not Path(where).resolve().is_relative_to(work.resolve()):
            raise SystemExit(f"mutation: {mod} is imported from {where}, not from the copy in {work}")
        state, base_s, summary = _pytest(work, target, None)
        log(f"[{target.name}] unmutated: {state} in {base_s:.1f} s ({summary}); {len(muts)} mutants")
        if state != "passed":
            raise SystemExit(f"mutation: the tests of {target.name} fail without a mutation: {summary}")
        timeout = 3 * base_s + 30
        rows = []
        for k, (m, text) in enumerate(muts, 1):
            module_file.write_text(text)
            state, secs, _ = _pytest(work, target, timeout)
            status = {"failed": "killed", "timeout": "timeout", "passed": "survived"}[state]
            row = {"key": m.key, "line": m.line, "change": m.change, "status": status, "seconds": round(secs, 1)}
            if status == "survived" and m.key in equivalent:
                row.update(status="equivalent", why=equivalent[m.key])
            elif status == "survived" and m.key in SURVIVOR_NOTES.get(target.name, {}):
                row["why"] = SURVIVOR_NOTES[target.name][m.key]
            rows.append(row)
            log(f"[{target.name}] {k}/{len(muts)} {row['status']:10s} {m.key}")
        module_file.write_text(source)
    stale = sorted(set(equivalent) - {r["key"] for r in rows if r["status"] == "equivalent"})
    return {"target": target.name, "path": target.path, "functions": list(target.functions),
            "tests": list(target.tests), "env": target.env, "why": target.why, "mutants": rows,
            "unmutated_s": round(base_s, 1),
            "wall_s": round(time.monotonic() - t_start, 1), "load_start": [round(x, 1) for x in load0],
            "load_end": [round(x, 1) for x in os.getloadavg()], "stale_equivalents": stale,
            "date_utc": datetime.now(UTC).strftime("%Y-%m-%d %H:%M"), "machine": machine(),
            "platform": platform.platform()}


def _counts(res: dict) -> dict:
    c = {s: sum(r["status"] == s for r in res["mutants"]) for s in ("killed", "timeout", "survived", "equivalent")}
    judged = c["killed"] + c["timeout"] + c["survived"]
    c["total"] = len(res["mutants"])
    c["rate"] = (c["killed"] + c["timeout"]) / judged if judged else 1.0
    return c


COMMAND = "nice -n 10 ./run.sh python -m benchmarks.mutation"


def report(results: list[dict], baselines: list[dict] = ()) -> str:
    """docs/mutation.md: the command, per-target figures, survivors and equivalent mutants with their reasons."""
    lines = [
        "# Mutation testing",
        "",
        "<!-- generated by benchmarks/mutation.py; do not edit by hand -->",
        "",
        "Do the tests notice when the data path's or the engine's code changes? `benchmarks/mutation.py` makes one",
        "small change at a time (a comparison's boundary `<` <-> `<=`, an operator, a constant off by one, a",
        "polars `closed=` or join `strategy=`; the operators are listed in the script's docstring) to a module of the",
        "data path or the engine's deadline and accounting code, runs that module's focused tests against the",
        "changed copy, and counts the mutant *killed* when a test fails (or the run times out). The goal is at",
        f"least {GOAL:.0%} killed per module; a mutant shown to behave exactly like the original (*equivalent*) is",
        "listed with the reason and left out of the rate: kill rate = (killed + timeout) / (mutants - equivalent).",
        "",
        "How it runs: the repository's code and tests are copied into a temporary directory once per target; each",
        "mutant is the module with one change (written from its syntax tree), and the target's tests run against",
        "the copy in a fresh interpreter (`pytest -x`, timeout 3 x the unmutated run + 30 s); the unmutated run",
        "must pass first, and the script checks that the copy, not the worktree, is what the tests import. The",
        "engine's kernels are Numba-jitted: their tests run with `NUMBA_DISABLE_JIT=1`, so the mutated Python",
        "source is what runs (the source Numba compiles). The focused tests are unit tests that never read the",
        "data mirror, so the suite's guard that hashes the mirror at the end of a session is pointed at an empty",
        "path during these runs. Docstrings, f-strings (messages), annotations and decorators are not mutated.",
        "",
        "Not covered here: the scheduler's own start-time SLA check",
        "(`engine.queues.schedule`, a 120-line kernel whose deadline comparison `f > T_deadline[i]` is the same rule",
        "`_resume_segment` applies, covered below),",
        "the flexible-task controls (`engine.flexible`) and the run's result frames (`sim_core.result._steps_frame`,",
        "which computes cost and carbon with the same expressions as `physics.step_energy`).",
        "",
        f"Command (all targets; `--target NAME` for one): `{COMMAND}`",
        "",
        "| target | module (functions) | mutants | killed | timeout | survived | equivalent | kill rate |",
        "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |",
    ]
    for res in results:
        c = _counts(res)
        where = res["path"] + (f" ({', '.join(res['functions'])})" if res["functions"] else "")
        lines.append(f"| {res['target']} | `{where}` | {c['total']} | {c['killed']} | {c['timeout']} | "
                     f"{c['survived']} | {c['equivalent']} | {c['rate']:.1%} |")
    if baselines:
        lines += ["", "Before the boundary tests of issue #38 (the suite's tests of that time, same mutants): "
                  + "; ".join(f"{b['target']} {_counts(b)['killed'] + _counts(b)['timeout']} of "
                              f"{_counts(b)['total']} killed ({_counts(b)['rate']:.1%}), tests "
                              + ", ".join(f"`{t}`" for t in b["tests"]) for b in baselines) + "."]
    lines += ["", "## Targets and their tests", ""]
    for res in results:
        env = " ".join(f"{k}={v}" for k, v in res["env"].items())
        lines.append(f"- **{res['target']}**: {res['why']}. Tests: {', '.join(f'`{t}`' for t in res['tests'])}"
                     + (f" (run with `{env}`)" if env else "") + f". Unmutated run {res['unmutated_s']} s; all "
                     f"mutants {res['wall_s'] / 60:.1f} min; run {res['date_utc']} UTC on {res['machine']}, load "
                     f"average {res['load_start'][0]} at the start, {res['load_end'][0]} at the end.")
    lines += ["", "## Surviving mutants", ""]
    survivors = [(res["target"], r) for res in results for r in res["mutants"] if r["status"] == "survived"]
    lines += ([f"- {t}: `{r['key']}`" + (f": {r['why']}" if "why" in r else "") for t, r in survivors] or ["None."])
    lines += ["", "## Equivalent mutants", ""]
    eq = [(res["target"], r) for res in results for r in res["mutants"] if r["status"] == "equivalent"]
    lines += ([f"- {t}: `{r['key']}`: {r['why']}" for t, r in eq] or ["None."])
    stale = [(res["target"], k) for res in results for k in res["stale_equivalents"]]
    if stale:  # listed in EQUIVALENT but killed or no longer made: the list needs a look
        lines += ["", "Listed as equivalent but not a surviving mutant of this run:", "",
                  *[f"- {t}: `{k}`" for t, k in stale]]
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--target", action="append", choices=[t.name for t in TARGETS],
                    help="run only this target (repeatable); default: all")
    ap.add_argument("--list", action="store_true", help="print the mutants of each target and exit (no tests)")
    ap.add_argument("--results", type=Path, default=RESULTS,
                    help="where each target's result JSON is kept (and, in its baseline/, earlier results to quote)")
    ap.add_argument("--no-write", action="store_true", help="print the report; leave docs/ and BENCHMARKS.md")
    ap.add_argument("--report", action="store_true", help="run nothing: write the report from the kept results")
    ap.add_argument("--only", metavar="TEXT", help="run only the mutants whose key contains TEXT (to work on a "
                    "survivor); prints their fate and keeps no result")
    args = ap.parse_args()
    chosen = [t for t in TARGETS if not args.target or t.name in args.target]
    if args.list:
        for t in chosen:
            for m, _ in mutants((ROOT / t.path).read_text(), t):
                print(f"{t.name}\t{m.key}")
        return
    args.results.mkdir(parents=True, exist_ok=True)
    if args.only:
        for t in chosen:
            run_target(t, lambda s: print(s, flush=True), args.only)
        return
    for t in [] if args.report else chosen:
        res = run_target(t, lambda s: print(s, flush=True))
        tmp = args.results / f"{t.name}.json.tmp"
        tmp.write_text(json.dumps(res, indent=1))
        tmp.replace(args.results / f"{t.name}.json")
    results = [json.loads((args.results / f"{t.name}.json").read_text()) for t in TARGETS
               if (args.results / f"{t.name}.json").exists()]
    base_dir = args.results / "baseline"
    baselines = [json.loads((base_dir / f"{t.name}.json").read_text()) for t in TARGETS
                 if (base_dir / f"{t.name}.json").exists()]
    body = report(results, baselines)
    print(body)
    if args.no_write:
        return
    DOCS.write_text(body)
    rows = [f"| {r['target']} | `{r['path']}` | {_counts(r)['total']} | {_counts(r)['equivalent']} | "
            f"{_counts(r)['rate']:.1%} |" for r in results]
    loads = [r["load_start"][0] for r in results] + [r["load_end"][0] for r in results]
    update_section("mutation", "\n".join([
        "## Mutation testing (data path, engine deadline and accounting)", "",
        f"`{COMMAND}` — {results[0]['machine']}, load average {min(loads)} to {max(loads)} during the run (a shared "
        f"machine), {sum(r['wall_s'] for r in results) / 60:.0f} min in all. Kill rate per module (goal {GOAL:.0%}; "
        "equivalent mutants left out, each with its reason, and the operators, tests and survivors in "
        "[docs/mutation.md](docs/mutation.md)).", "",
        "| target | module | mutants | equivalent | kill rate |", "| --- | --- | ---: | ---: | ---: |", *rows]))
    print(f"wrote {DOCS.relative_to(ROOT)} and the mutation section of BENCHMARKS.md")


if __name__ == "__main__":
    main()
