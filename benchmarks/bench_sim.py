"""sim_core benchmark: a full year (35,040 steps), the reference 5-DC cluster, a synthetic
1.3 M-task workload, ``lowest_carbon``; plus a scaling curve in load and in datacenter count.

    ./run.sh python benchmarks/bench_sim.py            # headline + scaling, updates BENCHMARKS.md
    ./run.sh python benchmarks/bench_sim.py --quick    # headline only

The headline includes the phases of a full-year ``sim_core.run`` (set-up, stepping, results) on the reference
cluster and on the main job's regions and year at the rack preset with V100s (``--rack-bundle``; by default that
bundle in the home), the same size as the reference cluster; the main job at its default size (×1 of the source
cluster) is ``benchmarks/bench_scale.py``'s.

Each measurement runs in a fresh subprocess so that peak RSS is the run's own. The bundles are
written first (by another subprocess) into a temporary directory. The figures are printed and
written between ``<!-- sim:start -->`` and ``<!-- sim:end -->`` in BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from benchmarks._main_bundle import export_command  # noqa: E402
from benchmarks._report import machine, publish, run_child, run_child_json  # noqa: E402
from gridshift import scale  # noqa: E402

CHILD = r"""
import json, os, resource, sys, time
t_imp = time.perf_counter()
import numpy as np
import sim_core
from sim_core import engine as E
from sim_core.policies import registry, rules
from sim_core.simulator import Prepared
from sim_core.result import build_result
t_imp = time.perf_counter() - t_imp
path, policy, days = sys.argv[1], sys.argv[2], (float(sys.argv[3]) if sys.argv[3] != "-" else None)
t = time.perf_counter(); sc = sim_core.load(path); t_load = time.perf_counter() - t
# compile/first call on a 1-day window (cache state decides whether this compiles)
t = time.perf_counter(); sim_core.run(sc, policy, days=1); t_first = time.perf_counter() - t
# stepping: best of 3 runs, each on fresh arrays (a single run varies by up to 1.5x with the machine's noise)
t_prep, t_step = [], []
for _ in range(3):
    prep = None
    t = time.perf_counter()
    # (drain=False: the window's steps only, as the recorded timings; sim_core.drain)
    prep = Prepared(sc, 0, days=days, policy_code=registry.code(policy), drain=False)
    t_prep.append(time.perf_counter() - t)
    t = time.perf_counter(); rules.run(prep.tasks, prep.state, prep.ctx, prep.info, None, registry.code(policy), prep.n)
    t_step.append(time.perf_counter() - t)
t_prep, t_step = min(t_prep), min(t_step)
# as sim_core.run does: totals + steps now, per-task frames on first access
t = time.perf_counter(); res = build_result(prep, policy, lazy_tasks=True); t_res = time.perf_counter() - t
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
t = time.perf_counter(); res.tasks; t_tasks = time.perf_counter() - t
rss_tasks = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
print(json.dumps(dict(n_tasks=int(prep.hi - prep.lo), n_dc=sc.n_dc, n_steps=prep.n, t_import=t_imp,
    t_load=t_load, t_first=t_first, t_prep=t_prep, t_step=t_step, t_result=t_res, peak_rss_mb=rss,
    t_tasks=t_tasks, peak_rss_tasks_mb=rss_tasks,
    started=res.totals["tasks_started"], sla=res.totals["sla_violations"],
    carbon_kg=res.totals["carbon_kg"], pue=res.totals["pue"])))
"""

#: the phases of ``sim_core.run`` for a built-in policy (set-up, stepping with the drain, results), each the best
#: of ``repeats`` full-year runs in one process after a 1-day warm-up, each run's arrays dropped before the next
#: (as in a sweep); ``t_first_run``: the first full-year run of the process (it also builds the window's shared
#: arrays and touches fresh memory). The phases are sim_core.run's own three calls; the
#: child checks that they give sim_core.run's totals.
PHASES = r"""
import json, os, sys, time
import sim_core
from sim_core.drain import run_drained
from sim_core.result import build_result
from sim_core.simulator import Prepared, policy_spec
path, policy, repeats = sys.argv[1], sys.argv[2], int(sys.argv[3])
sc = sim_core.load(path)
sim_core.run(sc, policy, days=1)
t = time.perf_counter(); ref = sim_core.run(sc, policy); t_first = time.perf_counter() - t
spec = policy_spec(policy)
best = {"t_setup": [], "t_step": [], "t_result": [], "t_run": []}
for _ in range(repeats):
    t0 = time.perf_counter()
    prep = Prepared(sc, 0, policy_code=spec.code, controls=spec.stateful)
    t1 = time.perf_counter()
    kern = spec.kernel()
    run_drained(prep, lambda j: kern(prep.tasks, prep.state, prep.ctx, prep.info, prep.plan, spec.code, j))
    t2 = time.perf_counter()
    res = build_result(prep, policy, lazy_tasks=True)
    t3 = time.perf_counter()
    for k, v in (("t_setup", t1 - t0), ("t_step", t2 - t1), ("t_result", t3 - t2), ("t_run", t3 - t0)):
        best[k].append(v)
    assert res.totals == ref.totals, "the phases must be sim_core.run's"
    n_tasks, n_out = int(prep.hi - prep.lo), prep.n_out
    del prep, res  # (a sweep keeps a run's totals, not its arrays: the next run reuses their memory)
print(json.dumps(dict({k: min(v) for k, v in best.items()}, t_first_run=t_first, n_tasks=n_tasks,
                      n_dc=sc.n_dc, n_steps=n_out, load_avg=os.getloadavg()[0])))
"""



RACK_JOB = f"./run.sh {export_command()} --mirror ../shared/data --scale rack --gpu V100"


MAKE = r"""
import sys
from sim_core.testing import reference_bundle
p = reference_bundle(sys.argv[1], n_tasks=int(sys.argv[2]), n_steps=int(sys.argv[3]), n_dc=int(sys.argv[4]),
                     name=sys.argv[5])
print(p)
"""


def make_bundle(tmp: Path, n_tasks: int, n_steps: int, n_dc: int, name: str) -> str:
    return run_child(MAKE, tmp, n_tasks, n_steps, n_dc, name)


def measure(path: str, policy: str = "lowest_carbon", days: float | None = None, env=None) -> dict:
    return run_child_json(CHILD, path, policy, "-" if days is None else days, env=env)


def phases(path: str, policy: str = "lowest_carbon", repeats: int = 3, env=None) -> dict:
    """Set-up, stepping and result-building seconds of a full-year ``sim_core.run`` (:data:`PHASES`)."""
    return run_child_json(PHASES, path, policy, repeats, env=env)


def rack_bundle(arg: str | None) -> Path:
    """The main job's rack bundle: ``--rack-bundle``, else in the home (``$GRIDSHIFT_HOME`` or ``.gridshift``)."""
    if arg:
        return Path(arg)
    return Path(os.environ.get("GRIDSHIFT_HOME", ROOT / ".gridshift")) / "bundles" / scale.RACK_MAIN_JOB_ID


def phase_rows(year: str, rack: Path, repeats: int) -> list[str]:
    """The table of a full-year run's phases on the reference cluster and on the main job's rack bundle."""
    rows = ["", f"Phases of a full-year `sim_core.run` (`lowest_carbon`, seed 0, defaults: drained, calibrated "
            f"forecast; best of {repeats} in one process after a 1-day warm-up, each run's arrays dropped before "
            "the next as in a sweep; first run: the process's first full-year run, which also builds the window's "
            "shared arrays and touches fresh memory):", "",
            "| bundle | tasks | set-up s | stepping s | results s | whole run s | first run s | load avg |",
            "|---|---|---|---|---|---|---|---|"]
    runs = [("reference 5-DC cluster, synthetic", year)]
    if rack.is_dir():
        runs.append((f"main job at `--scale rack --gpu V100`, bundle `{rack.name}`", str(rack)))
    else:
        print(f"the main job's rack bundle not found at {rack}: write it with `{RACK_JOB}` (or pass --rack-bundle)")
    for name, path in runs:
        r = phases(path, repeats=repeats)
        print(name, json.dumps(r))
        rows.append(f"| {name} | {r['n_tasks']:,} | {r['t_setup']:.2f} | {r['t_step']:.2f} | {r['t_result']:.2f} "
                    f"| {r['t_run']:.2f} | {r['t_first_run']:.2f} | {r['load_avg']:.1f} |")
    return rows


def cold_compile_s(path: str) -> float:
    """First-call time with an empty Numba cache (a fresh NUMBA_CACHE_DIR)."""
    with tempfile.TemporaryDirectory() as cache:
        env = dict(os.environ, NUMBA_CACHE_DIR=cache)
        return measure(path, days=1, env=env)["t_first"]


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="headline only (no scaling curve)")
    ap.add_argument("--tasks", type=int, default=1_300_000)
    ap.add_argument("--scaling-days", type=float, default=14.0)
    ap.add_argument("--no-write", action="store_true")
    ap.add_argument("--rack-bundle", help="the main job's bundle at the rack preset (default: its id in the home)")
    ap.add_argument("--repeats", type=int, default=3, help="full-year runs per phase measurement (best kept)")
    args = ap.parse_args()
    cmd = "./run.sh python benchmarks/bench_sim.py" + (" --quick" if args.quick else "")
    lines = []
    with tempfile.TemporaryDirectory() as tmpd:
        tmp = Path(tmpd)
        t = time.perf_counter()
        year = make_bundle(tmp, args.tasks, 35040, 5, "year5")
        print(f"bundle written in {time.perf_counter() - t:.1f} s: {year}")
        cold = cold_compile_s(year)
        m = measure(year)
        print(json.dumps(m, indent=1))
        print(f"cold compile (first call, empty cache): {cold:.1f} s")
        head = [
            "## Simulation (sim_core)",
            "",
            f"Command: `{cmd}`  ",
            f"Machine: {machine()}; "
            f"measured {time.strftime('%Y-%m-%d')}. Each figure from a fresh process.",
            "",
            "Full year (35,040 steps), reference 5-DC cluster, synthetic workload, `lowest_carbon`, seed 0:",
            "",
            "| metric | value |",
            "|---|---|",
            f"| tasks | {m['n_tasks']:,} |",
            f"| bundle load (verify sha256 + read) | {m['t_load']:.2f} s |",
            f"| first call, cold Numba cache (compile) | {cold:.1f} s |",
            f"| first call, warm cache (1-day run) | {m['t_first']:.2f} s |",
            f"| run set-up (origins, arrays) | {m['t_prep']:.2f} s |",
            f"| **stepping (jitted loop, 35,040 steps; best of 3)** | **{m['t_step']:.2f} s** |",
            f"| results: totals + per-step frame (physics) | {m['t_result']:.2f} s |",
            f"| per-task frames (`tasks`, `transfers`; built on first access) | {m['t_tasks']:.2f} s |",
            f"| tasks per second (stepping) | {m['n_tasks'] / m['t_step']:,.0f} |",
            f"| DC-steps per second (stepping) | {m['n_dc'] * m['n_steps'] / m['t_step']:,.0f} |",
            f"| per step | {1e6 * m['t_step'] / m['n_steps']:.1f} µs |",
            f"| peak RSS of the process (import ≈ 125 MB of it) | {m['peak_rss_mb']:.0f} MB |",
            f"| peak RSS after also building the per-task frames | {m['peak_rss_tasks_mb']:.0f} MB |",
            f"| tasks started / SLA violations | {m['started']:,} / {m['sla']:,} |",
            "",
            "Reference (SustainCluster, 2-core machine): ≈ 100 s per 5-DC year (≈ 3 ms/step), 1.2 GB RSS.",
            f"Speed-up of the stepping: ≈ {100.0 / m['t_step']:,.0f}×.",
        ]
        lines += head
        lines += phase_rows(year, rack_bundle(args.rack_bundle), args.repeats)
        if not args.quick:
            days = args.scaling_days
            n_win = int(days * 96)
            rows = ["", f"Scaling, load ({days:g}-day window, 5 DCs; 1× = 1.3 M tasks/year):", "",
                    "| load | tasks | stepping s | µs/step | tasks/s | peak RSS MB |", "|---|---|---|---|---|---|"]
            for mult in (1, 10, 100):
                n_tasks = int(args.tasks * mult * n_win / 35040)
                p = make_bundle(tmp, n_tasks, n_win, 5, f"load{mult}")
                r = measure(p)
                print(mult, json.dumps(r))
                rows.append(f"| {mult}× | {r['n_tasks']:,} | {r['t_step']:.3f} | {1e6 * r['t_step'] / r['n_steps']:.1f}"
                            f" | {r['n_tasks'] / r['t_step']:,.0f} | {r['peak_rss_mb']:.0f} |")
                Path(p).joinpath("tasks.parquet").unlink()
            rows += ["", "Scaling, datacenters (full year, 1× load, reference DCs replicated):", "",
                     "| DCs | tasks | stepping s | DC-steps/s | results s | peak RSS MB |", "|---|---|---|---|---|---|"]
            for n_dc in (5, 20, 50):
                r = m if n_dc == 5 else measure(make_bundle(tmp, args.tasks, 35040, n_dc, f"dc{n_dc}"))
                print(n_dc, json.dumps(r))
                dcs_per_s = r['n_dc'] * r['n_steps'] / r['t_step']
                rows.append(f"| {n_dc} | {r['n_tasks']:,} | {r['t_step']:.3f} | {dcs_per_s:,.0f}"
                            f" | {r['t_result']:.2f} | {r['peak_rss_mb']:.0f} |")
            lines += rows
    publish("sim", "\n".join(lines), not args.no_write)


if __name__ == "__main__":
    main()
