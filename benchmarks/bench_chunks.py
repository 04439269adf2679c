"""A year's memory with chunked stepping (issue 34 item 4, ``sim_core.chunks``): the same run in one chunk and in
chunks of ``--chunk-steps`` (a week by default), each ``sim_core.run(path)`` as a fresh process's first call (compile
cache warm: a 1-day run first), its address space capped at ``--cap-gb``; wall time, peak RSS (and per task), the
time of each phase and the peak RSS by its end, and whether the two runs' totals are identical, bit for bit.

    ./run.sh python benchmarks/bench_chunks.py BUNDLE [BUNDLE ...] [--chunk-steps 672] [--one-chunk-max-tasks N]

``--one-chunk-max-tasks``: the one-chunk run is skipped for a bundle with more tasks (default 10 M: a ×1 year's
one-chunk run, ~8.5 GB, does not fit beside the other jobs of this machine; its figures are those of the "Scale"
section). Prints the section and writes it between
``<!-- scale-chunks:start -->`` and ``<!-- scale-chunks:end -->`` in BENCHMARKS.md (``--no-write``: print only).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from benchmarks._report import capped_run_line, machine, publish, run_child_capped  # noqa: E402

CAP_GB = 12.0
WEEK_STEPS = 7 * 96

RUN = r"""
import json, os, resource, sys, time
cap = int(float(sys.argv[4]) * 2**30)
resource.setrlimit(resource.RLIMIT_AS, (cap, cap))  # a MemoryError at the cap, never the machine's OOM killer
t0 = time.perf_counter()
import sim_core
phases, peaks, last = {}, {}, [t0, "import"]
def peak_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0
def on_phase(name):  # (each phase's time, and the peak RSS by its end)
    now = time.perf_counter()
    phases[last[1]] = now - last[0]
    peaks[last[1]] = peak_mb()
    last[:] = [now, name]
chunk = None if sys.argv[3] == "-" else int(sys.argv[3])
days = None if sys.argv[2] == "-" else float(sys.argv[2])
res = sim_core.run(sys.argv[1], "lowest_carbon", seed=0, days=days, on_phase=on_phase, chunk_steps=chunk)
t = time.perf_counter() - t0
phases[last[1]] = t0 + t - last[0]
peaks[last[1]] = peak_mb()
tot = {k: (float(v).hex() if isinstance(v, float) else v) for k, v in res.totals.items()}
print(json.dumps(dict(t_s=t, rss_mb=peak_mb(), phases=phases, peaks=peaks,
                      tasks=res.totals["tasks"], totals=tot, load_avg=os.getloadavg()[0])))
"""


def _run(path: Path, days: str, chunk: str, cap_gb: float) -> dict:
    return run_child_capped(RUN, path, days, chunk, cap_gb, cap_gb=cap_gb)


def _fmt(y: dict) -> str:
    return capped_run_line(y, lambda k, v: f"{k} {v:.1f} s (peak by its end {y['peaks'][k]:,.0f} MB)",
                           time_per_task=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("bundles", nargs="+", type=Path)
    ap.add_argument("--chunk-steps", type=int, default=WEEK_STEPS)
    ap.add_argument("--cap-gb", type=float, default=CAP_GB)
    ap.add_argument("--one-chunk-max-tasks", type=int, default=10_000_000)
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()
    rows = []
    for b in args.bundles:
        m = json.loads((b / "manifest.json").read_text())
        gpus = sum(d["total_gpus"] for d in json.loads((b / "datacenters.json").read_text())["datacenters"])
        par = m.get("parameters") or {}
        # (named by scale and GPU, not by id: BENCHMARKS.md holds no hash but the README's bundle's)
        name = (f"×{par.get('scale', 1.0):g} {par.get('gpu', 'V100')}, {'+'.join(par.get('regions', []))} "
                f"{par.get('year', '')} ({m['n_tasks']:,} tasks, {gpus:,.0f} GPUs)")
        _run(b, "1", str(args.chunk_steps), args.cap_gb)  # (the compile cache warm)
        chunked = _run(b, "-", str(args.chunk_steps), args.cap_gb)
        rows.append((f"{name}: chunks of {args.chunk_steps} steps", _fmt(chunked)))
        if m["n_tasks"] <= args.one_chunk_max_tasks:
            one = _run(b, "-", "-", args.cap_gb)
            rows.append((f"{name}: one chunk", _fmt(one)))
            same = "refused" not in one and "refused" not in chunked and one["totals"] == chunked["totals"]
            rows.append((f"{name}: totals of the two runs", "identical, bit for bit" if same else "DIFFERENT"))
        print(rows[-1], flush=True)
    cmd = (f"./run.sh python benchmarks/bench_chunks.py BUNDLE... --chunk-steps {args.chunk_steps} "
           f"--one-chunk-max-tasks {args.one_chunk_max_tasks}")
    body = (f"## Scale: a year in chunks (memory bounded by the live tasks)\n\nCommand: `{cmd}`, lowest_carbon, "
            f"`sim_core.run(path)` as a fresh process's first call, cache warm — machine: {machine()}; shared with "
            "other jobs, load averages as measured at each run\n\n| run | figures |\n|---|---|\n"
            + "\n".join(f"| {a} | {b} |" for a, b in rows))
    publish("scale-chunks", body, not args.no_write)


if __name__ == "__main__":
    main()
