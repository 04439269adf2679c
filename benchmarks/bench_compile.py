"""First-run compile times of ``gridshift run`` (the Numba kernels), and what an edit of one source recompiles.

    ./run.sh python benchmarks/bench_compile.py              # prints, updates BENCHMARKS.md
    ./run.sh python benchmarks/bench_compile.py --no-write

Every figure is one fresh ``python -m gridshift_cli run <tiny bundle> --policy P`` process with an empty
temporary ``NUMBA_CACHE_DIR``, on a copy of ``sim_core`` in a temporary folder (first on ``PYTHONPATH``), so
that the edits below touch neither the working tree nor its cache:

* cold: the first run of ``lowest_carbon`` (wall to the notice on stderr, whole wall), then the same run warm
  (best of three); the compile is the difference;
* each other policy module's first run after that (the shared kernels cached): its own kernels;
* an edit of ``policies/rules.py`` (a comment appended), then ``lowest_carbon`` again: which cache indexes
  were rewritten, and the seconds; likewise an edit of ``engine/servers.py``.

``sim_core.precompile.COMPILE_S`` (the notice's estimate) is declared from these figures: the script prints the
dict, and the section lists the declared figures beside the measured ones. The section goes between ``<!-- compile:start -->`` and ``<!-- compile:end -->`` in BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import hashlib
import os
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
    end, and that line."""
    t0 = time.perf_counter()
    p = subprocess.Popen([sys.executable, "-m", "gridshift_cli", "run", bundle, "--policy", policy], env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=tempfile.gettempdir())
    first = p.stderr.readline()
    t_first = time.perf_counter() - t0
    out, err = p.communicate()
    wall = time.perf_counter() - t0
    if p.returncode:
        raise SystemExit(f"gridshift run --policy {policy} failed ({p.returncode}):\n{first}{err}")
    return {"wall": wall, "t_first": t_first, "notice": first.strip() if first.startswith("gridshift:") else ""}


def indexes(cache: Path) -> dict[str, float]:
    """Every cache index under ``cache`` (``<folder>/<file>``) -> its modification time."""
    return {f"{p.parent.name.rsplit('_', 1)[0]}/{p.name}": p.stat().st_mtime_ns for p in cache.rglob("*.nbi")}


def rewritten(before: dict, after: dict) -> list[str]:
    """The kernels whose index is new or rewritten (``folder/module.qualname``)."""
    return sorted({k.split("-")[0] for k, t in after.items() if before.get(k) != t})


def edit(path: Path) -> None:
    """Append a comment: a changed source (its digest), the same code."""
    path.write_text(path.read_text() + "\n# edited by benchmarks/bench_compile.py\n")


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()
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
        warm = min((timed_run(bundle, FIRST, env) for _ in range(WARM_REPEATS)), key=lambda r: r["wall"])
        print("warm", warm, flush=True)
        own = {}
        for spec in OTHERS:
            before = indexes(cache)
            r = timed_run(bundle, spec.name, env)
            own[spec.module] = (spec.name, r["wall"] - warm["wall"], rewritten(before, indexes(cache)), r["notice"])
            print(spec.module, own[spec.module], flush=True)
        edits = {}
        for rel in ("policies/rules.py", "engine/servers.py"):
            edit(src / "sim_core" / rel)
            before = indexes(cache)
            r = timed_run(bundle, FIRST, env)
            edits[rel] = (r["wall"] - warm["wall"], rewritten(before, indexes(cache)), r["notice"])
            print(rel, edits[rel], flush=True)
        again = timed_run(bundle, FIRST, env)
        print("again", again, flush=True)
    load1 = os.getloadavg()[0]
    rules_s = edits["policies/rules.py"][0]
    compile_s = cold["wall"] - warm["wall"]
    estimate = {"shared": round(compile_s - rules_s, 1), "sim_core.policies.rules": round(rules_s, 1)}
    estimate.update({m: round(v[1], 1) for m, v in own.items()})
    print("COMPILE_S =", estimate)

    def kernels(names: list[str]) -> str:
        return f"{len(names)}: " + ", ".join(f"`{n.split('/')[-1]}`" for n in names)

    rows = [
        "## First run: compiling the kernels (`gridshift run`)",
        "",
        f"Command: `{cmd}`  ",
        f"Machine: {machine()} (shared with other jobs: load average {load0:.1f} at the start, {load1:.1f} at the "
        f"end); measured {time.strftime('%Y-%m-%d')}. Each figure is one fresh `gridshift run` process on a "
        "3-DC one-day bundle (`sim_core.testing.tiny_bundle`; the compile does not depend on the bundle) with an "
        "empty temporary `NUMBA_CACHE_DIR`, on a copy of `sim_core` (the edits touch only the copy).",
        "",
        "| run | wall s | of which compiling s |",
        "|---|---|---|",
        f"| first `gridshift run --policy {FIRST}`, cold cache | {cold['wall']:.1f} | {compile_s:.1f} |",
        f"| … its notice on stderr, after | {cold['t_first']:.2f} | |",
        f"| the same run again (warm cache; best of {WARM_REPEATS}) | {warm['wall']:.1f} | 0 |",
    ]
    for module, (name, s, _k, _n) in own.items():
        rows.append(f"| first run of `{name}` after it (`{module.rsplit('.', 1)[-1]}` module's kernels) "
                    f"| {warm['wall'] + s:.1f} | {s:.1f} |")
    for rel, (s, _k, _n) in edits.items():
        rows.append(f"| `{FIRST}` after an edit of `sim_core/{rel}` | {warm['wall'] + s:.1f} | {s:.1f} |")
    rows.append(f"| `{FIRST}` once more (warm) | {again['wall']:.1f} | 0 |")
    rows += ["", f"The notice it printed: `{cold['notice']}`", "", "What each first run or edit compiled (cache "
             "indexes written):", ""]
    for name, _s, k, _n in own.values():
        rows.append(f"* `{name}`: {kernels(k)}")
    for rel, (_s, k, _n) in edits.items():
        rows.append(f"* edit of `{rel}`: {kernels(k)}")
    rows += ["", "The notice's estimate (`sim_core.precompile.COMPILE_S`, declared from an earlier run of this "
             "script) beside this run's figures:", "", "| part | declared s | measured now s |", "|---|---|---|"]
    rows += [f"| `{part}` | {COMPILE_S.get(part, float('nan')):.0f} | {s:.0f} |" for part, s in estimate.items()]
    publish("compile", "\n".join(rows), write=not args.no_write)


if __name__ == "__main__":
    main()
