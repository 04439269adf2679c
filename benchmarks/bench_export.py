"""Benchmark ``gridshift export``: 5 regions x 1 year with the full synthetic workload at the rack preset with V100s
(the 1.26 M-task year: what the export costs besides the tasks; the default's size, ×1 of the source cluster, is
``benchmarks/bench_scale.py``'s).

Two figures: from scratch (empty home: the grid partitions, the neighbouring years, the reference
tables and the ~1.3 M-task synthetic workload are ingested first) and from a populated warehouse
(only assemble + write). Both run the CLI in a fresh process, as a user would. Updates only the
``export`` section of BENCHMARKS.md.

    ./run.sh python benchmarks/bench_export.py [--mirror ../shared/data] [--year 2023]
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from benchmarks._report import machine, update_section  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
REGIONS = "US-CAL-CISO,DE-LU,CL-SIC,SG,AU-NSW"  # the reference five-datacenter cluster
SIZE = ("--scale", "rack", "--gpu", "V100")  # the size this figure has always measured (module docstring)
GOAL_S = 5.0


def _export(home: Path, out: Path, mirror: Path, year: int, max_gap: float) -> tuple[float, str]:
    cmd = [sys.executable, "-m", "gridshift_cli", "export", "--regions", REGIONS, "--year", str(year),
           "--workload", "synthetic", "--max-gap-hours", f"{max_gap:g}", "--home", str(home), "--out", str(out),
           "--mirror", str(mirror), *SIZE]
    t = time.perf_counter()
    r = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True)
    dt = time.perf_counter() - t
    if r.returncode:
        raise SystemExit(f"export failed:\n{r.stdout}\n{r.stderr}")
    bid = next(line.split()[1] for line in r.stdout.splitlines() if line.startswith("id "))
    return dt, bid


def _inprocess(home: Path, out: Path, year: int, max_gap: float) -> float:
    from gridshift import scale
    from gridshift.home import Home
    from scenario_builder.bundle import BuildParams, assemble, write

    p = BuildParams(regions=tuple(REGIONS.split(",")), year=year, workload="synthetic", max_gap_hours=max_gap,
                    scale=scale.RACK_SCALE, gpu="V100")
    t = time.perf_counter()
    write(assemble(p, Home.resolve(home), spool=out), out)
    return time.perf_counter() - t


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mirror", type=Path, default=REPO.parent / "shared" / "data")
    ap.add_argument("--year", type=int, default=2023)
    # SG and AU-NSW weather for 2023 ends 8-11 h before the UTC year does (no 2024 file in the mirror)
    ap.add_argument("--max-gap-hours", type=float, default=12.0)
    args = ap.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="bench_export_"))
    try:
        home = tmp / "home"
        scratch_s, bid = _export(home, tmp / "out1", args.mirror.resolve(), args.year, args.max_gap_hours)
        warm_s, bid2 = _export(home, tmp / "out2", args.mirror.resolve(), args.year, args.max_gap_hours)
        core_s = _inprocess(home, tmp / "out3", args.year, args.max_gap_hours)
        assert bid == bid2, "the same build gave two ids"
        files = sorted((tmp / "out2" / bid).iterdir())
        same = all((tmp / "out1" / bid / f.name).read_bytes() == f.read_bytes() for f in files)
        size = sum(f.stat().st_size for f in files)
        import polars as pl

        n_tasks = pl.scan_parquet(tmp / "out2" / bid / "tasks.parquet").select(pl.len()).collect().item()
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    cmd = "./run.sh python benchmarks/bench_export.py"
    rows = [
        ("bundle", f"{REGIONS} x {args.year}, synthetic workload, {n_tasks:,} tasks, {size / 1e6:.1f} MB"),
        ("from scratch (CLI, empty home: ingest grid ±1 year, reference, workload; then build)", f"{scratch_s:.1f} s"),
        ("from a populated warehouse (CLI, fresh process incl. start-up)", f"{warm_s:.1f} s"),
        ("from a populated warehouse (in-process assemble + write)", f"{core_s:.2f} s"),
        ("same id and byte-identical files on the rebuild", "yes" if same else "NO"),
        ("goal", f"<= {GOAL_S:g} s from a populated warehouse"),
    ]
    body = (f"## Bundle export (5 regions x 1 year, full synthetic workload, rack preset)\n\nCommand: `{cmd}` — "
            f"machine: {machine()}\n\n| figure | value |\n|---|---|\n" + "\n".join(f"| {a} | {b} |" for a, b in rows))
    print(body)
    update_section("export", body)


if __name__ == "__main__":
    main()
