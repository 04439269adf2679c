"""Benchmark: time and peak memory to derive a synthetic workload year (1× ≈ 1.3 M tasks, 10×, 100×).

    ./run.sh python benchmarks/bench_workload.py [--mirror ../shared/data] [--factors 1,10,100]
                                               [--derive 1,10] [--memory 1] [--ingest]

Each case runs in a fresh subprocess so its peak RSS (``resource.getrusage``) is its own.
"stream" = generate + filter + normalize + bandwidth + order + number, chunk by chunk
(``pipelines.workload.chunked``), written to a Parquet file in row groups (``write_tasks_parquet``);
"staging" = the stream with the ingest's staging-file settings (``STAGING_PARQUET_OPTIONS``: read
once by DuckDB, then deleted); "derive" = the same, every part numbered and dropped (no Parquet
write: the derivation's own rate);
"in memory" = the same derivation with every chunk held and sorted at once (``derive_in_memory``,
the reference the stream equals); "ingest" (with ``--ingest``, 1× only) adds Pandera validation and
the DuckDB write into a temporary home. The compiled kernels are loaded (Numba cache) before the
clock starts; that one-off cost per process is reported apart (``jit_load_s``). Results are printed
and written to BENCHMARKS.md between the ``<!-- workload:start -->`` and ``<!-- workload:end -->``
markers (``benchmarks._report.update_section``; other sections are kept).
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
YEAR = 2023


def _case(mirror: Path, factor: float, mode: str) -> dict:
    sys.path.insert(0, str(ROOT))
    from gridshift.home import Home
    from pipelines.workload import chunked as ck
    from pipelines.workload import derive as wd
    from pipelines.workload import kernels
    from pipelines.workload import synthetic as sw
    from warehouse.ingest_workload import commit_workload, prepare_workload

    base_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # after imports
    extra: dict = {}
    t0 = time.perf_counter()
    kernels.warm_up()  # load the compiled kernels (Numba's on-disk cache): once per process
    extra["jit_load_s"] = round(time.perf_counter() - t0, 2)
    c0 = time.process_time()
    t0 = time.perf_counter()
    if mode == "ingest":
        with tempfile.TemporaryDirectory() as d:
            prep = prepare_workload("synthetic", YEAR, mirror=mirror, seed=0, load_factor=factor)
            extra["prepare_seconds"] = round(time.perf_counter() - t0, 2)
            commit_workload(Home(Path(d)), prep)
            n = prep.tasks.height
    else:
        _, hists = wd.REFERENCE.histograms(mirror)
        _, prof = wd.REFERENCE.weekday_hour(mirror)
        sp = sw.SyntheticParams(year=YEAR, load_factor=factor, seed=0)
        chunks = sw.SyntheticChunks(sp, prof, hists, params=sw.derive_params(sp))
        if mode == "memory":
            n = ck.derive_in_memory(chunks).tasks.height
        elif mode == "derive":
            n = sum(part.height for part in ck.iter_tasks(chunks, chunks.workload, chunks.year))
        else:
            opts = ck.STAGING_PARQUET_OPTIONS if mode == "staging" else None
            with tempfile.TemporaryDirectory() as d:
                out = ck.write_tasks_parquet(chunks, Path(d) / "tasks.parquet", options=opts)
                n = out.n_tasks
                extra["file_mb"] = round(out.path.stat().st_size / 1e6, 1)
                extra["row_groups"] = out.n_row_groups
    wall = time.perf_counter() - t0
    extra["cpu_s"] = round(time.process_time() - c0, 2)  # all threads of the process
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # kB on Linux
    return {"factor": factor, "mode": mode, "n_tasks": n, "seconds": round(wall, 2),
            "tasks_per_s": round(n / wall), "peak_rss_mb": round(peak_mb), "import_rss_mb": round(base_mb), **extra}


def run_case(mirror: Path, factor: float, mode: str) -> dict:
    cmd = [sys.executable, __file__, "--mirror", str(mirror), "--one", str(factor), "--mode", mode]
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, cwd=ROOT)
    return json.loads(out.stdout.strip().splitlines()[-1])


def publish(section: str, write: bool) -> None:
    sys.path.insert(0, str(ROOT))
    from benchmarks._report import publish

    publish("workload", section, write)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    default_mirror = Path(os.environ.get("GRIDSHIFT_MIRROR", ROOT.parent / "shared/data"))
    ap.add_argument("--mirror", type=Path, default=default_mirror)
    ap.add_argument("--factors", default="1,10,100", help="load factors derived by the stream")
    ap.add_argument("--derive", default="1,10", help="load factors derived without the write ('' for none)")
    ap.add_argument("--staging", default="1,10",
                    help="load factors written with the ingest's staging Parquet settings ('' for none)")
    ap.add_argument("--memory", default="1", help="load factors also derived in memory ('' for none)")
    ap.add_argument("--ingest", action="store_true", help="also time validation + DuckDB write at 1×")
    ap.add_argument("--one", type=float, help=argparse.SUPPRESS)
    ap.add_argument("--mode", default="stream", help=argparse.SUPPRESS)
    ap.add_argument("--no-write", action="store_true", help="print only; leave BENCHMARKS.md alone")
    ap.add_argument("--render", type=Path, help="only render the section from a file of the cases' JSON lines")
    ap.add_argument("--load", type=float, default=float("nan"), help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.one is not None:
        print(json.dumps(_case(a.mirror.resolve(), a.one, a.mode)))
        return
    if a.render is not None:  # re-render earlier results (the JSON lines a run printed)
        rows = [json.loads(x) for x in a.render.read_text().splitlines() if x.startswith("{")]
        publish(render(rows, "./run.sh python benchmarks/bench_workload.py", a.load), not a.no_write)
        return
    mirror = a.mirror.resolve()
    load0 = os.getloadavg()[0]
    results = []
    cases = [(mode, float(f)) for mode, factors in (("stream", a.factors), ("staging", a.staging),
                                                     ("derive", a.derive), ("memory", a.memory))
             for f in factors.split(",") if f]
    for mode, f in cases + ([("ingest", 1.0)] if a.ingest else []):
        results.append(run_case(mirror, f, mode))
        print(json.dumps(results[-1]), flush=True)
    cmd = "./run.sh python benchmarks/bench_workload.py" + (
        f" --factors {a.factors}" if a.factors != "1,10,100" else "") + (
        f" --derive {a.derive}" if a.derive != "1,10" else "") + (
        f" --staging {a.staging}" if a.staging != "1,10" else "") + (
        f" --memory {a.memory}" if a.memory != "1" else "") + (" --ingest" if a.ingest else "")
    publish(render(results, cmd, load0), not a.no_write)


def render(results: list[dict], cmd: str, load0: float) -> str:
    """The BENCHMARKS.md section for ``results`` (the JSON lines the cases print)."""
    jit = [r["jit_load_s"] for r in results if "jit_load_s" in r]
    lines = [
        "## Workload derivation (synthetic year)",
        "",
        f"Command: `{cmd}` — year {YEAR}, seed 0; each case in a fresh process; peak = max RSS of that process "
        f"(≈ {results[0]['import_rss_mb']} MB of it is the imports); CPU time = all threads of the process"
        + (f"; loading the compiled kernels from Numba's cache, before the clock, took {min(jit)}–{max(jit)} s "
           "per process." if jit else "."),
        f"Machine: {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}; "
        f"1-min load average at the start: {load0:.1f} (the machine is shared with other jobs: wall times "
        "are upper bounds, CPU times the steadier figure).",
        "",
        "| load factor | what | tasks | time (s) | tasks/s | CPU time (s) | tasks per CPU-second | peak RSS (MB) |",
        "|---:|---|---:|---:|---:|---:|---:|---:|",
    ]
    for r in results:
        what = {
            "stream": f"stream: generate + derive by day → Parquet ({r.get('row_groups', 0)} row groups, "
                      f"{r.get('file_mb', 0)} MB)",
            "staging": f"stream → Parquet with the ingest's staging settings (zstd 1, no dictionaries; "
                       f"{r.get('file_mb', 0)} MB)",
            "derive": "derive: the same stream, parts numbered and dropped (no write)",
            "memory": "in memory: the same chunks held, sorted and numbered at once",
            "ingest": f"prepare ({r.get('prepare_seconds')} s: in memory, Pandera) + DuckDB write",
        }[r["mode"]]
        lines.append(f"| {r['factor']:g}× | {what} | {r['n_tasks']:,} | {r['seconds']} | {r['tasks_per_s']:,} | "
                     f"{r['cpu_s']} | {round(r['n_tasks'] / r['cpu_s']):,} | {r['peak_rss_mb']:,} |")
    stream = {r["factor"]: r for r in results if r["mode"] == "stream"}
    lines += ["", "Goals (issue 15, item 2):", ""]
    if 10.0 in stream:
        p10 = stream[10.0]["peak_rss_mb"]
        lines.append(f"* 10× peak ≤ 1.5 GB: {'met' if p10 <= 1536 else 'not met'} ({p10:,} MB).")
    if 100.0 in stream:
        r = stream[100.0]
        lines.append(f"* 100× completes, peak reported: {r['n_tasks']:,} tasks, peak {r['peak_rss_mb']:,} MB.")
    for mode, label in (("derive", "excluding the Parquet write"),
                        ("stream", "including the Parquet write (bundle settings, `PARQUET_OPTIONS`)"),
                        ("staging", "including the ingest's staging Parquet write")):
        rows = [r for r in results if r["mode"] == mode]
        if not rows:
            continue
        wall = max(rows, key=lambda r: r["tasks_per_s"])
        cpu = max(rows, key=lambda r: r["n_tasks"] / r["cpu_s"])
        per_cpu = round(cpu["n_tasks"] / cpu["cpu_s"])
        lines.append(f"* ≥ 1 M tasks/s derived, {label}: {'met' if wall['tasks_per_s'] >= 1_000_000 else 'not met'} "
                     f"on this machine (best {wall['tasks_per_s']:,} tasks/s wall at {wall['factor']:g}×; "
                     f"{per_cpu:,} tasks per CPU-second at {cpu['factor']:g}×).")
    return "\n".join(lines)


if __name__ == "__main__":
    main()
