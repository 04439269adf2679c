"""Benchmark: time and peak memory to derive a synthetic workload year (1× ≈ 1.3 M tasks, 10×).

    uv run python benchmarks/bench_workload.py [--mirror ../shared/data] [--factors 1,10] [--ingest]

Each case runs in a fresh subprocess so its peak RSS (``resource.getrusage``) is its own.
"derive" = generate the synthetic trace + filter + normalize + bandwidth + extend + finalize;
"ingest" (with ``--ingest``, 1× only) adds Pandera validation and the DuckDB write into a
temporary home. Results are printed and written to BENCHMARKS.md between the
``<!-- workload:start -->`` and ``<!-- workload:end -->`` markers (other sections are kept).
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
START, END = "<!-- workload:start -->", "<!-- workload:end -->"
YEAR = 2023


def _case(mirror: Path, factor: float, ingest: bool) -> dict:
    sys.path.insert(0, str(ROOT))
    from gridshift.home import Home
    from warehouse.ingest_workload import commit_workload, prepare_workload

    t0 = time.perf_counter()
    if ingest:
        with tempfile.TemporaryDirectory() as d:
            prep = prepare_workload("synthetic", YEAR, mirror=mirror, seed=0, load_factor=factor)
            t_prep = time.perf_counter() - t0
            commit_workload(Home(Path(d)), prep)
            n = prep.tasks.height
    else:
        from pipelines.workload import derive as wd
        from pipelines.workload import synthetic as sw

        _, hists = wd.REFERENCE.histograms(mirror)
        _, prof = wd.REFERENCE.weekday_hour(mirror)
        trace = sw.generate(sw.SyntheticParams(year=YEAR, load_factor=factor, seed=0), prof, hists)
        frame, params = sw.to_trace_frame(trace), trace.derive_params()
        del trace  # as the ingest does
        der = wd.derive(frame, workload="synthetic", year=YEAR, params=params, bandwidth_reference=hists["bandwidth"])
        n = der.tasks.height
        t_prep = None
    wall = time.perf_counter() - t0
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # kB on Linux
    return {"factor": factor, "mode": "ingest" if ingest else "derive", "n_tasks": n, "seconds": round(wall, 2),
            "prepare_seconds": round(t_prep, 2) if t_prep is not None else None, "peak_rss_mb": round(peak_mb)}


def run_case(mirror: Path, factor: float, ingest: bool) -> dict:
    cmd = [sys.executable, __file__, "--mirror", str(mirror), "--one", str(factor)] + (["--ingest-one"] if ingest
                                                                                     else [])
    out = subprocess.run(cmd, check=True, capture_output=True, text=True, cwd=ROOT)
    return json.loads(out.stdout.strip().splitlines()[-1])


def update_benchmarks_md(section: str, path: Path = ROOT / "BENCHMARKS.md") -> None:
    block = f"{START}\n{section.rstrip()}\n{END}"
    text = path.read_text() if path.exists() else "# Benchmarks\n"
    if START in text and END in text:
        head, rest = text.split(START, 1)
        tail = rest.split(END, 1)[1]
        text = head + block + tail
    else:
        text = text.rstrip() + "\n\n" + block + "\n"
    path.write_text(text)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    default_mirror = Path(os.environ.get("GRIDSHIFT_MIRROR", ROOT.parent / "shared/data"))
    ap.add_argument("--mirror", type=Path, default=default_mirror)
    ap.add_argument("--factors", default="1,10")
    ap.add_argument("--ingest", action="store_true", help="also time validation + DuckDB write at 1×")
    ap.add_argument("--one", type=float, help=argparse.SUPPRESS)
    ap.add_argument("--ingest-one", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--no-write", action="store_true", help="print only; leave BENCHMARKS.md alone")
    a = ap.parse_args()
    if a.one is not None:
        print(json.dumps(_case(a.mirror.resolve(), a.one, a.ingest_one)))
        return
    mirror = a.mirror.resolve()
    results = [run_case(mirror, float(f), False) for f in a.factors.split(",")]
    if a.ingest:
        results.append(run_case(mirror, 1.0, True))
    cmd = "uv run python benchmarks/bench_workload.py" + (f" --factors {a.factors}" if a.factors != "1,10" else "") + (
        " --ingest" if a.ingest else "")
    lines = [
        "## Workload derivation (synthetic year)",
        "",
        f"Command: `{cmd}` — year {YEAR}, seed 0; each case in a fresh process; peak = max RSS of that process.",
        f"Machine: {platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}. "
        "Goal: ≤ 10 s and ≤ 1 GB for 1.3 M tasks.",
        "",
        "| load factor | what | tasks | time (s) | peak RSS (MB) |",
        "|---:|---|---:|---:|---:|",
    ]
    for r in results:
        what = "generate + derive" if r["mode"] == "derive" else (
            f"prepare ({r['prepare_seconds']} s: generate, derive, Pandera) + DuckDB write")
        lines.append(f"| {r['factor']:g}× | {what} | {r['n_tasks']:,} | {r['seconds']} | {r['peak_rss_mb']:,} |")
    section = "\n".join(lines)
    print(section)
    if not a.no_write:
        update_benchmarks_md(section)


if __name__ == "__main__":
    main()
