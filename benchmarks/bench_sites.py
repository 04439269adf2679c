"""sim_core scaling in the number of sites (datacenters) and in load: the stepping time and peak memory
of a run with a built-in policy, each measured in a fresh process.

    ./run.sh python benchmarks/bench_sites.py                 # the curve below, updates BENCHMARKS.md
    ./run.sh python benchmarks/bench_sites.py --no-write --sites 5,100 --loads 1

Cluster: the reference five datacenters replicated cyclically to n sites (each with its own synthetic
carbon, price and weather series, ``sim_core.testing.synthetic_signals``), every site's capacity scaled
by ``load × 5 / n`` so that the whole cluster's capacity per task stays the reference's at every size and
load (the mean utilisation, and so the queueing work per task, is comparable along the curve). Load 1× =
1.3 M tasks a year (``sim_core.testing.synthetic_tasks``). Full years at 1×; the 10× rows run a
``--window-days`` window (13 M tasks a year do not fit this 2-core machine's time budget more than once).

Figures: **stepping** = the jitted loop ``policies.rules.run`` (what ``benchmarks/bench_sim.py`` calls
stepping), wall seconds and the process's CPU seconds (on a shared machine the CPU time is the steadier
figure); results = totals + the per-step frame (the physics of every site and step); peak RSS of the
process after stepping and after the results. Written between ``<!-- sites:start -->`` and
``<!-- sites:end -->`` in BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from benchmarks._report import machine, publish, run_child, run_child_json  # noqa: E402

TASKS_PER_YEAR = 1_300_000

MAKE = r"""
import sys
import numpy as np
from gridshift import clusters, locations
from sim_core.testing import synthetic_signals, synthetic_tasks, write_bundle
root, n_dc, n_steps, n_tasks, load, name = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), \
    float(sys.argv[5]), sys.argv[6]
ref = clusters.REFERENCE
sites = [ref[i % len(ref)] for i in range(n_dc)]
labels = [f"{s.location}.{i // len(ref)}" for i, s in enumerate(sites)]
regs = [locations.get(s.location) for s in sites]
macro = [r.macro_cluster for r in regs]
scale = load * len(ref) / n_dc
thr = np.array([[5000.0 if a == b else (160.0 if {a, b} == {"US", "EU"} else 60.0) for b in macro] for a in macro])
rtt = np.array([[2.0 if a == b else (70.0 if {a, b} == {"US", "EU"} else 200.0) for b in macro] for a in macro])
usd = np.array([[0.02 if a == b else 0.08 for b in macro] for a in macro])
p = write_bundle(root, locations=labels, timezones=[r.timezone for r in regs],
                 population_weight=[s.population_weight for s in sites],
                 total_cores=[max(s.total_cores * scale, 64.0) for s in sites],
                 total_gpus=[max(s.total_gpus * scale, 8.0) for s in sites],
                 total_mem_gb=[max(s.total_mem_gb * scale, 512.0) for s in sites],
                 n_steps=n_steps, signals=synthetic_signals(n_dc, n_steps, 0),
                 tasks=synthetic_tasks(n_tasks, n_steps, 0), usd_per_gb=usd, throughput_mbps=thr, rtt_ms=rtt,
                 name=name)
print(p)
"""

CHILD = r"""
import json, resource, sys, time
import sim_core
from sim_core import engine as E
from sim_core.policies import registry, rules
from sim_core.simulator import Prepared
from sim_core.result import build_result
path, policy = sys.argv[1], sys.argv[2]
sc = sim_core.load(path)
sim_core.run(sc, policy, days=1)  # compile / load the cache
prep = Prepared(sc, 0, days=None, policy_code=registry.code(policy))
rss0 = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
c, t = time.process_time(), time.perf_counter()
rules.run(prep.tasks, prep.state, prep.ctx, prep.info, None, registry.code(policy), prep.n)
t_step, c_step = time.perf_counter() - t, time.process_time() - c
rss_step = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
t = time.perf_counter(); res = build_result(prep, policy, lazy_tasks=True); t_res = time.perf_counter() - t
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
tot = res.totals
ends = ("tasks_started", "tasks_pending_at_end", "tasks_queued_at_end", "tasks_in_transit_at_end",
        "tasks_unschedulable")
assert sum(tot[k] for k in ends) == tot["tasks"]
print(json.dumps(dict(n_dc=sc.n_dc, n_steps=prep.n, n_tasks=int(prep.hi - prep.lo), t_step=t_step, c_step=c_step,
                      t_result=t_res, rss_before_mb=rss0, rss_step_mb=rss_step, rss_mb=rss,
                      util=float(res.steps["cpu_util"].mean()), started=tot["tasks_started"])))
"""


SWEEP = r"""
import json, resource, sys, time
from sim_core.bench.sweep import compare
t = time.perf_counter()
c = compare(sys.argv[1], policies=sys.argv[2].split(","), seeds=[int(x) for x in sys.argv[3].split(",")])
wall = time.perf_counter() - t
rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
print(json.dumps(dict(runs=c.runs.height, wall=wall, rss_mb=rss)))
"""


LAYOUT = r"""
import json, sys, time
import numpy as np
import sim_core
from sim_core import engine as E
from sim_core.policies import registry, rules
from sim_core.simulator import Prepared
sc = sim_core.load(sys.argv[1])
code = registry.code(sys.argv[2])
STEP_ARRAYS = ("srv", "rel", "part", "diff", "run_part", "run_diff", "m_queue", "m_transit", "m_pending")


def prepared(layout):
    prep = Prepared(sc, 0, days=None, policy_code=code)
    if layout == "dc-major":  # the storage before engine.steps_major: C order, (.., n_dc, n_steps)
        prep.state = prep.state._replace(**{k: np.ascontiguousarray(getattr(prep.state, k)) for k in STEP_ARRAYS})
        prep.info = prep.info._replace(**{k: np.ascontiguousarray(getattr(prep.info, k))
                                          for k in ("act", "hist", "known")})
    return prep


out = {}
for layout in ("dc-major", "step-major", "dc-major", "step-major"):
    p = prepared(layout)
    rules.run(p.tasks, p.state, p.ctx, p.info, None, code, 96)  # compile this layout's signature (cache)
    p = prepared(layout)
    c = time.process_time()
    rules.run(p.tasks, p.state, p.ctx, p.info, None, code, p.n)
    out.setdefault(layout, []).append(time.process_time() - c)
    out.setdefault(layout + "_part_sum", float(np.asarray(p.state.part).sum()))
print(json.dumps(out))
"""


def make(tmp: Path, n_dc: int, n_steps: int, load: float) -> str:
    n_tasks = int(TASKS_PER_YEAR * load * n_steps / 35040)
    return run_child(MAKE, tmp, n_dc, n_steps, n_tasks, load, f"s{n_dc}x{load:g}")


def measure(path: str, policy: str) -> dict:
    return run_child_json(CHILD, path, policy)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--sites", default="5,25,50,100,200")
    ap.add_argument("--loads", default="1,10")
    ap.add_argument("--window-days", type=float, default=14.0, help="window of the loads above 1x")
    ap.add_argument("--policy", default="lowest_carbon")
    ap.add_argument("--sweep-sites", type=int, default=200, help="sites of the sweep measured (0: none)")
    ap.add_argument("--sweep-policies", default="local_only,lowest_carbon")
    ap.add_argument("--sweep-seeds", default="0,1")
    ap.add_argument("--layout-sites", type=int, default=0,
                    help="only compare the stepping CPU time of the step-major storage with the former dc-major "
                         "one on a year of this many sites (prints, writes nothing)")
    ap.add_argument("--sweep-only", action="store_true",
                    help="measure only the sweep and replace its paragraph in BENCHMARKS.md")
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()
    sizes = [int(x) for x in args.sites.split(",") if x]
    loads = [float(x) for x in args.loads.split(",") if x]
    cmd = "./run.sh python benchmarks/bench_sites.py" + "".join(
        f" {k} {v}" for k, v, d in (("--sites", args.sites, "5,25,50,100,200"), ("--loads", args.loads, "1,10"),
                                    ("--policy", args.policy, "lowest_carbon")) if v != d)
    if args.layout_sites:
        with tempfile.TemporaryDirectory() as tmpd:
            p = make(Path(tmpd), args.layout_sites, 35040, 1.0)
            r = run_child_json(LAYOUT, p, args.policy)
        print(f"command: ./run.sh python benchmarks/bench_sites.py --layout-sites {args.layout_sites}")
        print(f"{args.layout_sites} sites, 1x year, {args.policy}: stepping CPU s, dc-major (before) "
              f"{min(r['dc-major']):.2f}, step-major (now) {min(r['step-major']):.2f} (best of 2 each); "
              f"same busy-core sum: {r['dc-major_part_sum'] == r['step-major_part_sum']}")
        return
    if args.sweep_only:
        sizes, loads = [], []
    rows = []
    load0 = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as tmpd:
        tmp = Path(tmpd)
        for load in loads:
            n_steps = 35040 if load == 1 else int(args.window_days * 96)
            for n in sizes:
                t = time.perf_counter()
                p = make(tmp, n, n_steps, load)
                t_make = time.perf_counter() - t
                r = measure(p, args.policy)
                r.update(load=load, t_make=t_make)
                print(json.dumps(r), flush=True)
                rows.append(r)
                shutil.rmtree(p)
        sweep = None
        if args.sweep_sites:
            p = make(tmp, args.sweep_sites, 35040, 1.0)
            sweep = run_child_json(SWEEP, p, args.sweep_policies, args.sweep_seeds)
            print(json.dumps(sweep), flush=True)
    lines = [
        "## Scaling in sites × load (sim_core)",
        "",
        f"Command: `{cmd}`  ",
        f"Machine: {machine()} (shared with other work); measured {time.strftime('%Y-%m-%d')}, 1-min load average "
        f"{load0:.1f} at the start and {os.getloadavg()[0]:.1f} at the end (the stepping is one thread: its CPU "
        "seconds are what it takes on a core of its own, wall seconds wait for a core). Each row a fresh "
        "process; policy "
        f"`{args.policy}`, seed 0, servers power-managed; the cluster's capacity per task constant along the "
        "curve (see the script's docstring).",
        "",
        "Goals (issue 15): a 100-site, 1×-load year steps in ≤ 2 s; a 200-site sweep fits in memory "
        "(this machine: 23 GB, 2 cores, so a sweep runs ≤ 2 processes at once).",
        "",
        "| sites | load | steps | tasks | stepping wall s | stepping CPU s | µs/step | results s | "
        "peak RSS after stepping MB | peak RSS with results MB | mean CPU util |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for r in rows:
        lines.append(f"| {r['n_dc']} | {r['load']:g}× | {r['n_steps']:,} | {r['n_tasks']:,} | {r['t_step']:.2f} | "
                     f"{r['c_step']:.2f} | {1e6 * r['t_step'] / r['n_steps']:.0f} | {r['t_result']:.2f} | "
                     f"{r['rss_step_mb']:,.0f} | {r['rss_mb']:,.0f} | {r['util']:.2f} |")
    if sweep is not None:
        publish("sites_sweep", f"Sweep (`sim_core.bench.sweep.compare`, one process, as `python -m sim_core compare` "
                f"runs it): {args.sweep_sites} sites, full year at 1×, policies {args.sweep_policies}, seeds "
                f"{args.sweep_seeds}: {sweep['runs']} runs in {sweep['wall']:.0f} s, **peak RSS "
                f"{sweep['rss_mb']:,.0f} MB** (runs are sequential in the process; each run's arrays are freed "
                f"before the next). Measured with `{cmd}{' --sweep-only' if args.sweep_only else ''}`.",
                not args.no_write)
    if not args.sweep_only:
        publish("sites", "\n".join(lines), not args.no_write)


if __name__ == "__main__":
    main()
