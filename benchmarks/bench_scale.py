"""The whole chain at the scale of the source cluster (issue 34): export, a year of simulation, a ×10 study.

On the main job's regions and year, from a home whose warehouse holds the grid signals (``--home``; an empty
one ingests them first, not timed as export):

1. **export** (the CLI in a fresh process, as a user runs it): the ``rack`` default, then ``--scale 1 --gpu
   H100`` (the candidate MW-class default: the synthetic workload derived at its load factor, then the
   bundle), then the same again from the populated warehouse; wall time and the process's peak RSS each;
2. **a full year under lowest_carbon** of the ×1 bundle: ``sim_core.run`` as a fresh script's first call
   (load, set-up, stepping, results) with the compile cache warm (a 1-day run in another process first);
   wall time and peak RSS; goal ≤ 10 s and ≤ 4 GB;
3. **×10** (``--x10``): the export and the year as in 1–2, if the machine's memory allows; otherwise the
   figures of ×1 scaled by the task count are printed as the floor (labelled as such, not measured).

    ./run.sh python benchmarks/bench_scale.py --home /tmp/scale-home [--mirror ../shared/data] [--x10]

Prints the section and writes it between ``<!-- scale:start -->`` and ``<!-- scale:end -->`` in BENCHMARKS.md
(``--no-write``: print only).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from benchmarks._report import machine, publish, run_child_json  # noqa: E402

REGIONS = "US-CAL-CISO,DE-LU,SG"
YEAR = 2023
GOAL_RUN_S, GOAL_RUN_GB, GOAL_X10_GB = 10.0, 4.0, 12.0

RUN = r"""
import json, os, resource, sys, time
t0 = time.perf_counter()
import sim_core
res = sim_core.run(sys.argv[1], sys.argv[2], seed=0, days=(float(sys.argv[3]) if sys.argv[3] != "-" else None))
t = time.perf_counter() - t0
print(json.dumps(dict(t_s=t, rss_mb=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0,
                      carbon_kg=res.totals["carbon_kg"],
                      load_avg=os.getloadavg()[0])))
"""


def _export(home: Path, mirror: Path, out: Path, *extra: str) -> dict:
    """``gridshift export`` in a fresh process: wall s, peak RSS of the process tree's largest child, the id."""
    cmd = [sys.executable, "-m", "gridshift_cli", "export", "--regions", REGIONS, "--year", str(YEAR),
           "--home", str(home), "--mirror", str(mirror), "--out", str(out), *extra]
    before = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    t = time.perf_counter()
    r = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    dt = time.perf_counter() - t
    if r.returncode:
        raise SystemExit(f"export failed ({' '.join(extra)}):\n{r.stdout[-2000:]}\n{r.stderr[-2000:]}")
    rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
    bid = next(line.split()[1] for line in r.stdout.splitlines() if line.startswith("id "))
    return {"t_s": dt, "rss_mb": (rss if rss > before else float("nan")) / 1024.0, "id": bid,
            "load_avg": os.getloadavg()[0]}


def _bundle_facts(path: Path) -> dict:
    m = json.loads((path / "manifest.json").read_text())
    dcs = json.loads((path / "datacenters.json").read_text())["datacenters"]
    return {"n_tasks": m["n_tasks"], "gpus": {d["location"]: d["total_gpus"] for d in dcs},
            "cores": {d["location"]: d["total_cores"] for d in dcs},
            "mb": sum(f.stat().st_size for f in path.iterdir()) / 1e6}


def _run_year(path: Path, days: str = "-") -> dict:
    run_child_json(RUN, path, "lowest_carbon", "1")  # the compile cache warm (another process)
    return run_child_json(RUN, path, "lowest_carbon", days)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--home", type=Path, required=True)
    ap.add_argument("--mirror", type=Path, default=ROOT.parent / "shared" / "data")
    ap.add_argument("--x10", action="store_true", help="also export and run ×10 (needs the memory)")
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()
    home, mirror = args.home.resolve(), args.mirror.resolve()
    out = home / "bench_scale_out"
    _export(home, mirror, out)  # the warehouse at the rack default's workload (it may hold another scale's)
    rack = _export(home, mirror, out)
    x1 = _export(home, mirror, out, "--scale", "1", "--gpu", "H100")
    x1_again = _export(home, mirror, out, "--scale", "1", "--gpu", "H100")
    assert x1["id"] == x1_again["id"], "the same build gave two ids"
    facts = _bundle_facts(out / x1["id"])
    year = _run_year(out / x1["id"])
    rows = [
        ("bundle ×1 (H100)", f"{REGIONS} × {YEAR}, {facts['n_tasks']:,} tasks, {facts['mb']:.0f} MB; GPUs per site "
                             + ", ".join(f"{k} {v:,.0f}" for k, v in facts["gpus"].items())),
        ("export, rack default, populated warehouse (CLI)", f"{rack['t_s']:.1f} s, {rack['rss_mb']:,.0f} MB peak "
                                                            f"(load {rack['load_avg']:.1f})"),
        ("export ×1, workload derived at its load factor (CLI)", f"{x1['t_s']:.1f} s, {x1['rss_mb']:,.0f} MB peak "
                                                                f"(load {x1['load_avg']:.1f})"),
        ("export ×1, populated warehouse (CLI)", f"{x1_again['t_s']:.1f} s ({x1_again['t_s'] / rack['t_s']:.1f}× "
                                                 f"the rack export; goal ≤ 2×; load {x1_again['load_avg']:.1f})"),
        ("a year ×1 under lowest_carbon, sim_core.run as a first call, cache warm",
         f"{year['t_s']:.1f} s, {year['rss_mb']:,.0f} MB peak (goal ≤ {GOAL_RUN_S:g} s, ≤ {GOAL_RUN_GB:g} GB; "
         f"load {year['load_avg']:.1f})"),
    ]
    if args.x10:
        x10 = _export(home, mirror, out, "--scale", "10", "--gpu", "H100")
        f10 = _bundle_facts(out / x10["id"])
        y10 = _run_year(out / x10["id"])
        rows += [("export ×10 (CLI)", f"{x10['t_s']:.1f} s, {x10['rss_mb']:,.0f} MB peak, {f10['n_tasks']:,} tasks"),
                 ("a year ×10 under lowest_carbon", f"{y10['t_s']:.1f} s, {y10['rss_mb']:,.0f} MB peak "
                                                    f"(goal ≤ {GOAL_X10_GB:g} GB)")]
    else:
        per_task_mb = year["rss_mb"] / facts["n_tasks"]
        rows.append(("×10 floor (not run: ×1's per-task figures × 10, linear in tasks)",
                     f"≈ {10 * facts['n_tasks']:,} tasks, ≈ {10 * year['t_s']:.0f} s and ≈ "
                     f"{10 * facts['n_tasks'] * per_task_mb / 1024:.0f} GB for the year"))
    cmd = "./run.sh python benchmarks/bench_scale.py --home HOME" + (" --x10" if args.x10 else "")
    body = (f"## Scale (issue 34: the source cluster's size, H100 sites)\n\nCommand: `{cmd}` — machine: {machine()}; "
            "the machine is shared, load averages as measured at each step\n\n| figure | value |\n|---|---|\n"
            + "\n".join(f"| {a} | {b} |" for a, b in rows))
    publish("scale", body, not args.no_write)


if __name__ == "__main__":
    main()
