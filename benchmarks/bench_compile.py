"""First-run compile times of ``gridshift run`` (the Numba kernels), and what an edit of one source recompiles.

    ./run.sh python benchmarks/bench_compile.py              # prints, updates BENCHMARKS.md
    ./run.sh python benchmarks/bench_compile.py --no-write

Every figure is one fresh ``python -m gridshift_cli run <tiny bundle> --policy P`` process with an empty
temporary ``NUMBA_CACHE_DIR``, on a copy of ``sim_core`` in a temporary folder (first on ``PYTHONPATH``), so
that the edits below touch neither the working tree nor its cache:

* cold: the first run of ``lowest_carbon`` (wall to the notice on stderr, whole wall, CPU seconds), then the
  same run warm (least CPU of three); the compile is the difference;
* each other policy module's first run after that (the shared kernels cached): its own kernels;
* an edit of ``policies/rules.py`` (a comment appended), then ``lowest_carbon`` again: which cache indexes
  were rewritten, and the seconds; likewise an edit of ``engine/servers.py``.

``sim_core.precompile.COMPILE_S`` (the notice's estimate) is declared from these figures: the script prints the
dict, and the section lists the declared figures beside the measured ones. The section goes between
``<!-- compile:start -->`` and ``<!-- compile:end -->`` in BENCHMARKS.md.

    ./run.sh python benchmarks/bench_compile.py --recompile [--source DIR]

What one edit recompiles when every policy is warm (section ``recompile``): the warm-up of all the built-in
policies (``python -m sim_core.precompile`` with every name, one fresh process) from a cold cache, then again
after each edit in :data:`EDITS` (a policy's kernel module, a new policy's entry in the registry, one policy's
parameter in the registry, an engine module): its CPU and wall seconds and the kernels it rewrote. ``--source``:
the ``sim_core`` folder to copy (default this checkout's; another tree's gives its figures to compare).
"""

from __future__ import annotations

import argparse
import hashlib
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from benchmarks._report import machine, publish  # noqa: E402
from sim_core.policies import registry  # noqa: E402 - the policies' table (pure Python)
from sim_core.precompile import COMPILE_S  # noqa: E402

#: warm runs of the README's policy whose fastest is the baseline (a shared machine's noise)
WARM_REPEATS = 3
#: the README's policy, then one policy of each other kernel module
FIRST = "lowest_carbon"
OTHERS = tuple(registry.get(n) for n in ("wait_awhile", "gaia_carbon_time", "carbonscaler", "vcc", "carbonflex"))


def timed_run(bundle: str, policy: str, env: dict) -> dict:
    """One fresh ``gridshift run``: seconds to its first stderr line (the notice, on a cold cache) and to its
    end, its CPU seconds (user + system: what a compile costs whatever else the machine runs), and that
    line."""
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    p = subprocess.Popen([sys.executable, "-m", "gridshift_cli", "run", bundle, "--policy", policy], env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tempfile.gettempdir())
    first = p.stderr.readline()
    t_first = time.perf_counter() - t0
    out, err = p.communicate()
    wall = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode:
        raise SystemExit(f"gridshift run --policy {policy} failed ({p.returncode}):\n{first}{err}")
    cpu = r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime
    return {"wall": wall, "cpu": cpu, "t_first": t_first,
            "notice": first.strip() if first.startswith("gridshift:") else ""}


def indexes(cache: Path) -> dict[str, float]:
    """Every cache index under ``cache`` (``<folder>/<file>``) -> its modification time."""
    return {f"{p.parent.name.rsplit('_', 1)[0]}/{p.name}": p.stat().st_mtime_ns for p in cache.rglob("*.nbi")}


def rewritten(before: dict, after: dict) -> list[str]:
    """The kernels whose index is new or rewritten (``folder/module.qualname``)."""
    return sorted({k.split("-")[0] for k, t in after.items() if before.get(k) != t})


def edit(path: Path) -> None:
    """Append a comment: a changed source (its digest), the same code."""
    path.write_text(append(path.read_text()))


#: a new policy's entry appended to the registry (its kernel module is never imported: no run uses it); written
#: to run on any version of the registry (a ``code`` is given only where a spec still takes one)
NEW_ENTRY = """
# appended by benchmarks/bench_compile.py: a new policy's entry
from dataclasses import fields as _fields
_new = {f.name: getattr(BUILTIN[0], f.name) for f in _fields(PolicySpec) if f.init}
_new.update(name="bench_new_policy", module="sim_core.policies.bench_new_policy", description="a new rule")
if "code" in _new:
    _new["code"] = 1000
register(PolicySpec(**_new))
"""


def append(text: str) -> str:
    """A comment appended: a changed source (its digest), the same code."""
    return text + "\n# edited by benchmarks/bench_compile.py\n"


def new_entry(text: str) -> str:
    """The registry with :data:`NEW_ENTRY` appended."""
    return text + NEW_ENTRY


def gaia_grid(text: str) -> str:
    """GAIA's start grid (``grid_steps``) from every hour to every half hour: one policy family's parameter."""
    old = 'Param("grid_steps", 4,'
    if text.count(old) != 1:
        raise SystemExit(f"the registry has no single {old!r} to edit")
    return text.replace(old, 'Param("grid_steps", 2,')


#: (file under sim_core, what the edit is, the edit)
EDITS = (
    ("policies/gaia.py", "a comment appended to one policy's kernel module", append),
    ("policies/registry.py", "a new policy's entry appended to the registry", new_entry),
    ("policies/registry.py", "one policy's parameter changed in the registry (GAIA's `grid_steps` 4 -> 2)",
     gaia_grid),
    ("engine/servers.py", "a comment appended to an engine module", append),
)


def timed_warm(names: list[str], env: dict) -> dict:
    """One fresh ``python -m sim_core.precompile NAMES``: its wall and CPU seconds."""
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    p = subprocess.run([sys.executable, "-m", "sim_core.precompile", *names], env=env, capture_output=True,
                       text=True, cwd=tempfile.gettempdir())
    wall = time.perf_counter() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode:
        raise SystemExit(f"python -m sim_core.precompile failed ({p.returncode}):\n{p.stderr}")
    return {"wall": wall, "cpu": r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime,
            "said": p.stderr.strip().splitlines()[-1]}


def recompile(source: Path, write: bool) -> None:
    """The ``recompile`` section: the warm-up of every built-in policy, cold, warm, and after each edit."""
    names = list(registry.names())
    cmd = "./run.sh python benchmarks/bench_compile.py --recompile"
    load0 = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="bench-recompile-") as tmpd:
        tmp = Path(tmpd)
        src = tmp / "src"
        shutil.copytree(source, src / "sim_core", ignore=shutil.ignore_patterns("__pycache__"))
        cache = tmp / "cache"
        env = dict(os.environ, NUMBA_CACHE_DIR=str(cache), PYTHONPATH=os.pathsep.join([str(src), str(ROOT)]))
        cold = timed_warm(names, env)
        print("cold", cold, flush=True)
        warm = timed_warm(names, env)
        print("warm", warm, flush=True)
        rows = []
        for rel, what, change in EDITS:
            path = src / "sim_core" / rel
            path.write_text(change(path.read_text()))
            before = indexes(cache)
            r = timed_warm(names, env)
            rows.append((f"`sim_core/{rel}`: {what}", r, rewritten(before, indexes(cache))))
            print(rows[-1], flush=True)
    load1 = os.getloadavg()[0]

    def modules(kernels: list[str]) -> str:
        mods = sorted({k.split("/")[-1].split(".")[0] for k in kernels})
        return f"{len(kernels)} in {len(mods)} modules" + (f" ({', '.join(f'`{m}`' for m in mods)})" if mods else "")

    out = [
        "## What one edit recompiles (the warm-up of every policy)",
        "",
        f"Command: `{cmd}`  ",
        f"Machine: {machine()} (shared with other jobs: load average {load0:.1f} at the start, {load1:.1f} at the "
        f"end); measured {time.strftime('%Y-%m-%d')}. Each figure is one fresh `python -m sim_core.precompile` "
        f"process warming all {len(names)} built-in policies on a copy of `sim_core` with its own "
        "`NUMBA_CACHE_DIR`; each edit is made to the copy after the previous figure, so each row recompiles that "
        "edit alone. CPU seconds are what the compile costs (wall seconds grow with the load).",
        "",
        "| warm-up of every policy | CPU s | wall s | kernels recompiled |",
        "|---|---|---|---|",
        f"| cold cache | {cold['cpu']:.1f} | {cold['wall']:.1f} | all |",
        f"| warm cache (nothing edited) | {warm['cpu']:.1f} | {warm['wall']:.1f} | 0 |",
        *(f"| after an edit of {what} | {r['cpu']:.1f} | {r['wall']:.1f} | {modules(k)} |" for what, r, k in rows),
    ]
    publish("recompile", "\n".join(out), write=write)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--no-write", action="store_true")
    ap.add_argument("--recompile", action="store_true", help="what one edit recompiles (section recompile)")
    ap.add_argument("--source", type=Path, default=ROOT / "sim_core", help="the sim_core folder to measure")
    args = ap.parse_args()
    if args.recompile:
        recompile(args.source, write=not args.no_write)
        return
    cmd = "./run.sh python benchmarks/bench_compile.py"
    load0 = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="bench-compile-") as tmpd:
        tmp = Path(tmpd)
        src = tmp / "src"
        shutil.copytree(ROOT / "sim_core", src / "sim_core", ignore=shutil.ignore_patterns("__pycache__"))
        cache = tmp / "cache"
        env = dict(os.environ, NUMBA_CACHE_DIR=str(cache), PYTHONPATH=os.pathsep.join([str(src), str(ROOT)]))
        from sim_core.testing import tiny_bundle

        bundle = str(tiny_bundle(tmp / "bundles"))
        cold = timed_run(bundle, FIRST, env)
        print("cold", cold, flush=True)
        copy = f"policies_{hashlib.sha1(str(src / 'sim_core' / 'policies').encode()).hexdigest()}"
        if not (cache / copy).is_dir():  # (Numba files a folder's kernels under <name>_<sha1 of its path>)
            raise SystemExit(f"the copy of sim_core in {src} was not the one imported: no {cache / copy}")
        warm = min((timed_run(bundle, FIRST, env) for _ in range(WARM_REPEATS)), key=lambda r: r["cpu"])
        print("warm", warm, flush=True)
        rows = []  # (what, part, run, kernels compiled)
        for spec in OTHERS:
            before = indexes(cache)
            r = timed_run(bundle, spec.name, env)
            rows.append((f"first run of `{spec.name}` after it", spec.module, r, rewritten(before, indexes(cache))))
            print(rows[-1], flush=True)
        for rel, part in (("policies/rules.py", "sim_core.policies.rules"), ("engine/servers.py", None)):
            edit(src / "sim_core" / rel)
            before = indexes(cache)
            r = timed_run(bundle, FIRST, env)
            rows.append((f"`{FIRST}` after an edit of `sim_core/{rel}`", part, r, rewritten(before, indexes(cache))))
            print(rows[-1], flush=True)
        again = timed_run(bundle, FIRST, env)
        print("again", again, flush=True)
    load1 = os.getloadavg()[0]

    def compiling(r: dict, key: str) -> float:
        return r[key] - warm[key]

    measured = {part: round(compiling(r, "cpu"), 1) for _w, part, r, _k in rows if part}
    measured = {"shared": round(compiling(cold, "cpu") - measured["sim_core.policies.rules"], 1), **measured}
    print("COMPILE_S (CPU seconds) =", measured)

    def kernels(names: list[str]) -> str:
        return f"{len(names)}: " + ", ".join(f"`{n.split('/')[-1]}`" for n in names)

    def row(what: str, r: dict, warm_run: bool = False) -> str:
        c = ("0", "0") if warm_run else (f"{compiling(r, 'cpu'):.1f}", f"{compiling(r, 'wall'):.1f}")
        return f"| {what} | {r['cpu']:.1f} | {r['wall']:.1f} | {c[0]} | {c[1]} |"

    out = [
        "## First run: compiling the kernels (`gridshift run`)",
        "",
        f"Command: `{cmd}`  ",
        f"Machine: {machine()} (shared with other jobs: load average {load0:.1f} at the start, {load1:.1f} at the "
        f"end); measured {time.strftime('%Y-%m-%d')}. Each figure is one fresh `gridshift run` process on a "
        "3-DC one-day bundle (`sim_core.testing.tiny_bundle`; the compile does not depend on the bundle) with an "
        "empty temporary `NUMBA_CACHE_DIR`, on a copy of `sim_core` (the edits touch only the copy). CPU seconds "
        "(user + system of the process) are what the compile costs; wall seconds grow with the machine's load "
        "(on an idle core they are about the CPU seconds). Compiling = the run's figure less the warm run's.",
        "",
        "| run | CPU s | wall s | compiling, CPU s | compiling, wall s |",
        "|---|---|---|---|---|",
        row(f"first `gridshift run --policy {FIRST}`, cold cache", cold),
        f"| … its notice on stderr, after | | {cold['t_first']:.2f} | | |",
        row(f"the same run again, warm cache (least CPU of {WARM_REPEATS})", warm, warm_run=True),
        *(row(what, r) for what, _p, r, _k in rows),
        row(f"`{FIRST}` once more (warm)", again, warm_run=True),
        "",
        f"The notice it printed: `{cold['notice']}`",
        "",
        "What each first run or edit compiled (cache indexes written):",
        "",
        *(f"* {what}: {kernels(k)}" for what, _p, _r, k in rows),
        "",
        "The notice's estimate (`sim_core.precompile.COMPILE_S`, CPU seconds declared from a run of this script) "
        "beside this run's:",
        "",
        "| part | declared s | measured now, CPU s |",
        "|---|---|---|",
        *(f"| `{part}` | {COMPILE_S.get(part, float('nan')):.0f} | {v:.1f} |" for part, v in measured.items()),
    ]
    publish("compile", "\n".join(out), write=not args.no_write)


if __name__ == "__main__":
    main()
