"""The whole chain at the scale of the source cluster (issue 34): export and a year of simulation per scale.

On the main job's regions and year, from a home whose warehouse holds the grid signals (``--home``; an empty
one ingests them first), for each of ``--scales`` (the first is the default, ×1):

1. **export** (the CLI in a fresh process, as a user runs it) with ``--scale S --gpu H100``: first (it derives the
   synthetic workload at the scale's load factor when the warehouse holds another scale), then again from the
   populated warehouse;
2. **a full year under lowest_carbon**: ``sim_core.run`` as a fresh script's first call (load, set-up, stepping,
   results; its tasks taken a week of arrivals at a time, ``--chunk-steps``, sim_core.chunks) with the compile cache
   warm (a 1-day run in another process first), its address space capped at
   ``--cap-gb`` (12) so that a run too large for the machine ends in a MemoryError, reported, never in the
   kernel's OOM killer; wall time, peak RSS (and per task), the time of each phase (set-up: the bundle loaded and
   the window taken; stepping; results); goal ≤ 10 s and ≤ 4 GB;
3. the ``rack`` preset's export with V100s (the default before issue 34, byte for byte) from the populated warehouse
   (the comparison for "≤ 2× today's export"), how many
   of its tasks are identical (what exact cohort aggregation could merge), the per-task floor of the largest
   run that fit (kB of peak RSS and µs per task) and the time floor of a ×1 year at that run's per-task rates
   (stepping alone against the ≤ 10 s goal). ``benchmarks/profile_scale.py`` and ``profile_export.py`` break a
   year and an export down by phase.

    ./run.sh python benchmarks/bench_scale.py --home /tmp/scale-home [--scales 1,0.1] [--gpu H100]

Prints the section and writes it between ``<!-- scale:start -->`` and ``<!-- scale:end -->`` in BENCHMARKS.md
(``--no-write``: print only).

``--study S`` (×10: about 65,000 GPUs, 412 M tasks) measures one large study instead, in its own section
(``scale-study``): the export once, from a home whose warehouse already holds the study's workload (``gridshift
ingest --sources workload --load-factor L``, L the scale's, ``gridshift.scale.load_factor``: 11 min and 18 GB at ×10
under DuckDB's default memory limit), then the year under ``lowest_carbon`` in
chunks and without per-task results (``task_results=False``: their ~130 bytes per task on disk would be 54 GB), as a
fresh process's first call under the address-space cap (the compile cache warmed first by a 1-day run
of a small bundle, ``--warm-with``: exporting one here would derive its workload over the study's):

    ./run.sh python benchmarks/bench_scale.py --home /tmp/x10-home --study 10 --warm-with SMALL_BUNDLE
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from benchmarks._main_bundle import REGIONS, YEAR  # noqa: E402
from benchmarks._report import capped_run_line, machine, publish, run_child_capped  # noqa: E402
from gridshift import scale  # noqa: E402

GOAL_RUN_S, GOAL_RUN_GB, CAP_GB = 10.0, 4.0, 12.0

RUN = r"""
import json, os, resource, sys, time
cap = int(float(sys.argv[4]) * 2**30)
resource.setrlimit(resource.RLIMIT_AS, (cap, cap))  # a MemoryError at the cap, never the machine's OOM killer
t0 = time.perf_counter()
import sim_core
phases, last = {}, [t0, "import"]
def on_phase(name):  # (set-up: the bundle loaded and the window taken; stepping; results)
    now = time.perf_counter()
    phases[last[1]] = now - last[0]
    last[:] = [now, name]
res = sim_core.run(sys.argv[1], sys.argv[2], seed=0, days=(float(sys.argv[3]) if sys.argv[3] != "-" else None),
                   on_phase=on_phase, chunk_steps=(int(sys.argv[5]) if sys.argv[5] != "-" else None),
                   task_results=sys.argv[6] == "1")
t = time.perf_counter() - t0
phases[last[1]] = t0 + t - last[0]
print(json.dumps(dict(t_s=t, rss_mb=resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0, phases=phases,
                      tasks=res.totals["tasks"], carbon_kg=res.totals["carbon_kg"], load_avg=os.getloadavg()[0])))
"""


#: runs a command and prints its peak RSS (kB): the export's own, whatever ran before it
PEAK = "import resource, subprocess, sys; r = subprocess.run(sys.argv[1:]); " \
       "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, file=sys.stderr); sys.exit(r.returncode)"


def _export(home: Path, mirror: Path, out: Path, *extra: str) -> dict:
    """``gridshift export`` in a fresh process: wall s, its peak RSS, the id."""
    cmd = [sys.executable, "-c", PEAK, sys.executable, "-m", "gridshift_cli", "export", "--regions", REGIONS,
           "--year", str(YEAR), "--home", str(home), "--mirror", str(mirror), "--out", str(out), *extra]
    t = time.perf_counter()
    r = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True)
    dt = time.perf_counter() - t
    if r.returncode:
        raise SystemExit(f"export failed ({' '.join(extra)}):\n{r.stdout[-2000:]}\n{r.stderr[-2000:]}")
    bid = next(line.split()[1] for line in r.stdout.splitlines() if line.startswith("id "))
    return {"t_s": dt, "rss_mb": int(r.stderr.strip().splitlines()[-1]) / 1024.0, "id": bid,
            "load_avg": os.getloadavg()[0]}


def _bundle_facts(path: Path) -> dict:
    m = json.loads((path / "manifest.json").read_text())
    dcs = json.loads((path / "datacenters.json").read_text())["datacenters"]
    return {"n_tasks": m["n_tasks"], "gpus": {d["location"]: d["total_gpus"] for d in dcs},
            "cores": {d["location"]: d["total_cores"] for d in dcs},
            "mb": sum(f.stat().st_size for f in path.iterdir()) / 1e6}


def _distinct_tasks(path: Path) -> tuple[int, int]:
    """(tasks, distinct tasks once the id is dropped): what exact aggregation (one cohort per set of identical
    tasks) could collapse."""
    import polars as pl

    t = pl.read_parquet(path / "tasks.parquet").drop("task_id")
    return t.height, t.unique().height


def _capped_run(path: Path, days: str, cap_gb: float, chunk: str, task_results: bool = True) -> dict:
    """``RUN`` in a fresh process (``chunk``: its ``chunk_steps``, "-" for one chunk; ``task_results``: its per-task
    results kept): its figures, or ``{"refused": ...}`` when it ran out of memory under the cap."""
    return run_child_capped(RUN, path, "lowest_carbon", days, cap_gb, chunk, int(task_results), cap_gb=cap_gb)


def _run_year(path: Path, cap_gb: float, chunk: str) -> dict:
    """A year under lowest_carbon in a fresh process whose address space is capped at ``cap_gb``, after a 1-day
    run in another process warms the compile cache (a bundle whose 1-day run already runs out of memory is
    reported as such)."""
    warm = _capped_run(path, "1", cap_gb, chunk)
    return warm if "refused" in warm else _capped_run(path, "-", cap_gb, chunk)


def _fmt_run(y: dict, goal: str) -> str:
    return capped_run_line(y, lambda k, v: f"{k} {v:.1f} s ({1e6 * v / y['tasks']:.2f} µs/task)", goal=goal)


def _study(args, home: Path, mirror: Path) -> None:
    """``--study S``: one export and one year in chunks at scale S, in the ``scale-study`` section."""
    out = home / "bench_scale_out"
    opts = ("--scale", args.study, "--gpu", args.gpu)
    exported = _export(home, mirror, out, *opts)
    f = _bundle_facts(out / exported["id"])
    gb = sum(p.stat().st_size for p in home.glob("warehouse.duckdb*")) / 2**30
    warm = _capped_run(args.warm_with, "1", args.cap_gb, args.chunk_steps)
    if "refused" in warm:
        raise SystemExit(f"the warm-up run failed: {warm}")
    y = _capped_run(out / exported["id"], "-", args.cap_gb, args.chunk_steps, task_results=False)
    rows = [
        (f"×{args.study} {args.gpu}: bundle",
         f"{REGIONS} × {YEAR}, {f['n_tasks']:,} tasks, {f['mb']:,.0f} MB; GPUs per site "
         + ", ".join(f"{k} {v:,.0f}" for k, v in f["gpus"].items()) + f" ({sum(f['gpus'].values()):,.0f} in all)"),
        (f"×{args.study}: export (`gridshift export --scale {args.study} --gpu {args.gpu}`, a fresh process, from a "
         "warehouse holding the scale's workload)",
         f"{exported['t_s']:.1f} s ({1e6 * exported['t_s'] / f['n_tasks']:.2f} µs/task), {exported['rss_mb']:,.0f} "
         f"MB peak RSS (load {exported['load_avg']:.1f}); warehouse {gb:.1f} GB on disk"),
        (f"×{args.study}: a year under lowest_carbon, sim_core.run as a first call, cache warm, chunks of "
         f"{args.chunk_steps} steps, no per-task results (task_results=False: ~130 B per task on disk would be "
         f"{130 * f['n_tasks'] / 1e9:.0f} GB), address space capped at {args.cap_gb:g} GB",
         capped_run_line(y, lambda k, v: f"{k} {v:.1f} s", goal=f"≤ {args.cap_gb:g} GB", time_per_task=True)),
    ]
    if "refused" not in y:
        rows.append((f"×{args.study}: the year's totals", f"{y['tasks']:,} tasks, {y['carbon_kg'] / 1e3:,.1f} t CO2"))
    _publish("scale-study", f"Scale: a ×{args.study} study (bounded memory)",
             f"--study {args.study} --warm-with SMALL_BUNDLE", args, rows)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--home", type=Path, required=True)
    ap.add_argument("--mirror", type=Path, default=ROOT.parent / "shared" / "data")
    ap.add_argument("--scales", default="1,0.1", help="scales to export and run (the first is the default, ×1)")
    ap.add_argument("--gpu", default="H100")
    ap.add_argument("--cap-gb", type=float, default=CAP_GB, help="address-space cap of each year's run")
    ap.add_argument("--chunk-steps", default=str(7 * 96),
                    help="the year's run takes its tasks this many steps of arrivals at a time (sim_core.chunks; "
                         "'-': all at once)")
    ap.add_argument("--study", help="one study at this scale instead (its own section; see the module docstring)")
    ap.add_argument("--warm-with", type=Path, help="--study: a small bundle whose 1-day run warms the compile cache")
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()
    home, mirror = args.home.resolve(), args.mirror.resolve()
    if args.study:
        if args.warm_with is None:
            ap.error("--study needs --warm-with SMALL_BUNDLE")
        _study(args, home, mirror)
        return
    out = home / "bench_scale_out"
    chunks = "one chunk" if args.chunk_steps == "-" else f"chunks of {args.chunk_steps} steps (sim_core.chunks)"
    rows = []
    per_task = []
    per_task_scales: list[float] = []
    for sc in args.scales.split(","):
        first = _export(home, mirror, out, "--scale", sc, "--gpu", args.gpu)
        again = _export(home, mirror, out, "--scale", sc, "--gpu", args.gpu)
        assert first["id"] == again["id"], "the same build gave two ids"
        f = _bundle_facts(out / again["id"])
        y = _run_year(out / again["id"], args.cap_gb, args.chunk_steps)
        rows += [
            (f"×{sc} {args.gpu}: bundle", f"{REGIONS} × {YEAR}, {f['n_tasks']:,} tasks, {f['mb']:.0f} MB; GPUs per "
                                          "site " + ", ".join(f"{k} {v:,.0f}" for k, v in f["gpus"].items())),
            (f"×{sc}: export, first (derives the workload when the warehouse holds another scale)",
             f"{first['t_s']:.1f} s, {first['rss_mb']:,.0f} MB peak RSS (load {first['load_avg']:.1f})"),
            (f"×{sc}: export, populated warehouse", f"{again['t_s']:.1f} s, {again['rss_mb']:,.0f} MB peak RSS "
                                                    f"(load {again['load_avg']:.1f})"),
            (f"×{sc}: a year under lowest_carbon, sim_core.run as a first call, cache warm, {chunks}",
             _fmt_run(y, f"≤ {GOAL_RUN_S:g} s, ≤ {GOAL_RUN_GB:g} GB")),
        ]
        if "refused" not in y:
            per_task.append((f["n_tasks"], y))
            per_task_scales.append(float(sc))
    rack_opts = ("--scale", "rack", "--gpu", "V100")
    _export(home, mirror, out, *rack_opts)  # the warehouse back at the rack preset's workload
    rack = _export(home, mirror, out, *rack_opts)
    n_rack, n_distinct = _distinct_tasks(out / rack["id"])
    rows += [
        ("rack with V100 (the default before issue 34): export, populated warehouse",
         f"{rack['t_s']:.1f} s, {rack['rss_mb']:,.0f} MB peak RSS (load {rack['load_avg']:.1f})"),
        ("rack with V100: its bundle is the main job's before issue 34, byte for byte",
         "yes, " + rack["id"] if rack["id"] == scale.RACK_MAIN_JOB_ID else f"NO ({rack['id']})"),
        ("identical tasks (what exact cohorts could merge), rack year",
         f"{n_rack - n_distinct:,} of {n_rack:,}: every task is distinct (continuous sizes, second-resolution "
         "arrivals)"),
    ]
    if per_task:
        n, y = max(per_task, key=lambda p: p[0])
        kb = y["rss_mb"] * 1024 / n
        rows.append(("floor per task (largest run that fit)", f"{kb:.2f} kB peak RSS and {1e6 * y['t_s'] / n:.2f} µs "
                                                                f"per task of the year ({n:,} tasks)"))
        n1 = round(n / float(max(per_task_scales))) if per_task_scales else n
        us = {k: 1e6 * v / n for k, v in y["phases"].items()}
        rows.append(("time floor of a ×1 year at that run's per-task rates (the ≤ 10 s goal allows "
                     f"{1e7 / n1:.2f} µs/task)",
                     f"stepping alone {us.get('stepping', 0.0):.2f} µs/task × {n1:,} = "
                     f"{us.get('stepping', 0.0) * n1 / 1e6:.0f} s; set-up (load, window) "
                     f"{us.get('set-up', 0.0) * n1 / 1e6:.0f} s; results {us.get('results', 0.0) * n1 / 1e6:.0f} s"))
    _publish("scale", "Scale (issue 34: the source cluster's size)", f"--scales {args.scales}", args, rows)


def _publish(section: str, title: str, what: str, args, rows: list[tuple[str, str]]) -> None:
    """The section's table of ``rows`` under ``title``, with the command that wrote it (``what``: its scales)."""
    cap = "" if args.cap_gb == CAP_GB else f" --cap-gb {args.cap_gb:g}"
    cmd = (f"./run.sh python benchmarks/bench_scale.py --home HOME {what} --gpu {args.gpu}{cap} "
           f"--chunk-steps {args.chunk_steps}")
    body = (f"## {title}\n\nCommand: `{cmd}` — machine: {machine()}; shared with other jobs, load averages as "
            "measured at each step\n\n| figure | value |\n|---|---|\n" + "\n".join(f"| {a} | {b} |" for a, b in rows))
    publish(section, body, not args.no_write)


if __name__ == "__main__":
    main()
