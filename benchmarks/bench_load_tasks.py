"""Benchmark: peak memory and time of ``sim_core.load`` on a bundle holding a 10× synthetic year of tasks.

    ./run.sh python benchmarks/bench_load_tasks.py [--mirror ../shared/data] [--factor 10] [--no-write]

The bundle (2 datacenters, a year of 15-minute steps, the tasks of ``SyntheticChunks`` at the load
factor, seed 0) is written to a temporary folder with ``sim_core.testing.write_bundle``; the load runs
in a fresh process, so its peak RSS (``resource.getrusage``) is its own. The floor is the process
after its imports plus the task arrays the loaded ``Scenario`` holds. Results are printed and written to
BENCHMARKS.md between the ``<!-- load-tasks:start -->`` and ``<!-- load-tasks:end -->`` markers.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
TASK_ARRAYS = ("task_id", "arrival_s", "duration_s", "cpu_cores", "gpus", "mem_gb", "gpu_mem_gb", "bandwidth_gb",
               "max_delay_s", "interruptible", "checkpoint_s", "min_scale", "max_scale", "marginal_throughput")


def build(mirror: Path, factor: float, root: Path) -> Path:
    sys.path.insert(0, str(ROOT))
    from pipelines.workload import chunked as ck
    from pipelines.workload import derive as wd
    from pipelines.workload import synthetic as sw
    from sim_core.testing import write_bundle

    _, hists = wd.REFERENCE.histograms(mirror)
    _, prof = wd.REFERENCE.weekday_hour(mirror)
    sp = sw.SyntheticParams(year=2023, load_factor=factor, seed=0)
    tasks = ck.derive_in_memory(sw.SyntheticChunks(sp, prof, hists, params=sw.derive_params(sp))).tasks
    return write_bundle(root, locations=("DE-LU", "FR"), timezones=("Europe/Berlin", "Europe/Paris"),
                        n_steps=35_040, tasks=tasks.select(wd.BUNDLE_COLUMNS), name="bench-load-tasks")


def measure(bundle: Path) -> dict:
    sys.path.insert(0, str(ROOT))
    import sim_core

    base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    t0, c0 = time.perf_counter(), time.process_time()
    s = sim_core.load(bundle)
    wall, cpu = time.perf_counter() - t0, time.process_time() - c0
    arrays = sum(getattr(s, c).nbytes for c in TASK_ARRAYS) / 2**20
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"n_tasks": s.n_tasks, "seconds": round(wall, 2), "cpu_s": round(cpu, 2), "import_rss_mb": round(base),
            "task_arrays_mb": round(arrays), "peak_rss_mb": round(peak), "over_floor_mb": round(peak - base - arrays)}


def render(r: dict, cmd: str, factor: float, file_mb: float, load0: float) -> str:
    return "\n".join([
        "## Loading a bundle's tasks (`sim_core.load`)",
        "",
        f"Command: `{cmd}` — a bundle of 2 datacenters × a year of 15-minute steps with the {factor:g}× synthetic "
        f"year (seed 0; tasks.parquet {file_mb:.1f} MB), loaded in a fresh process; 1-min load average at the "
        f"start {load0:.1f} (shared 2-core machine).",
        "",
        "| tasks | time (s) | CPU (s) | peak RSS (MB) | after imports (MB) | task arrays (MB) "
        "| above imports + arrays (MB) |",
        "|---:|---:|---:|---:|---:|---:|---:|",
        f"| {r['n_tasks']:,} | {r['seconds']} | {r['cpu_s']} | {r['peak_rss_mb']:,} | {r['import_rss_mb']} | "
        f"{r['task_arrays_mb']:,} | {r['over_floor_mb']} |",
        "",
        "The tasks are read by Parquet row groups into arrays allocated once (`gridshift.bundle.content.read_tasks`:",
        "arrival and ids first, then the other columns), so the peak is the arrays the `Scenario` keeps plus about",
        "one row group and the id-uniqueness check.",
    ])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    default_mirror = Path(os.environ.get("GRIDSHIFT_MIRROR", ROOT.parent / "shared/data"))
    ap.add_argument("--mirror", type=Path, default=default_mirror)
    ap.add_argument("--factor", type=float, default=10.0)
    ap.add_argument("--no-write", action="store_true", help="print only; leave BENCHMARKS.md alone")
    ap.add_argument("--measure", type=Path, help=argparse.SUPPRESS)
    ap.add_argument("--build", type=Path, help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.measure is not None:
        print(json.dumps(measure(a.measure)))
        return
    if a.build is not None:
        print(build(a.mirror.resolve(), a.factor, a.build))
        return
    load0 = os.getloadavg()[0]
    # build and load each in its own process: a child's peak RSS starts from its parent's at fork
    with tempfile.TemporaryDirectory() as d:
        built = subprocess.run([sys.executable, __file__, "--build", d, "--factor", str(a.factor), "--mirror",
                                str(a.mirror)], check=True, capture_output=True, text=True, cwd=ROOT)
        bundle = Path(built.stdout.strip().splitlines()[-1])
        file_mb = (bundle / "tasks.parquet").stat().st_size / 1e6
        out = subprocess.run([sys.executable, __file__, "--measure", str(bundle)], check=True, capture_output=True,
                             text=True, cwd=ROOT)
    r = json.loads(out.stdout.strip().splitlines()[-1])
    print(json.dumps(r))
    cmd = "./run.sh python benchmarks/bench_load_tasks.py" + (f" --factor {a.factor:g}" if a.factor != 10.0 else "")
    from benchmarks._report import publish

    publish("load-tasks", render(r, cmd, a.factor, file_mb, load0), not a.no_write)


if __name__ == "__main__":
    main()
