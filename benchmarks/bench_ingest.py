"""Time the full-mirror ingest into a fresh home (the foundation's performance figure).

Command: uv run python benchmarks/bench_ingest.py [--mirror ../shared/data] [--no-write]
"""

from __future__ import annotations

import argparse
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks._report import machine, update_section  # noqa: E402

COMMAND = "uv run python benchmarks/bench_ingest.py"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mirror", default=str(REPO.parent / "shared" / "data"))
    ap.add_argument("--no-write", action="store_true", help="print only; leave BENCHMARKS.md alone")
    args = ap.parse_args()
    mirror = Path(args.mirror).resolve()
    size_mb = sum(p.stat().st_size for sub in ("electricitymaps", "prices/standardized", "open-meteo", "egress")
                  for p in (mirror / sub).rglob("*") if p.is_file()) / 1e6
    with tempfile.TemporaryDirectory() as home:
        cmd = [sys.executable, "-m", "scenario_builder", "ingest", "--regions", "all", "--year", "2022,2023",
               "--mirror", str(mirror), "--home", home]
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, text=True)
        wall = time.perf_counter() - t0
        if proc.returncode != 0:
            print(proc.stdout, proc.stderr)
            raise SystemExit(proc.returncode)
        peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
        import duckdb

        con = duckdb.connect(str(Path(home) / "warehouse.duckdb"), read_only=True)
        rows = {t: con.execute(f"SELECT count(*) FROM {t}").fetchone()[0]
                for t in ("grid_carbon", "grid_price", "weather", "egress_price", "network_path", "raw_files")}
        con.close()
    total = sum(v for k, v in rows.items() if k != "raw_files")
    lines = [
        "## Full-mirror ingest (fresh home)",
        "",
        f"Command: `{COMMAND}` — machine: {machine()}",
        "",
        "| figure | value |",
        "|---|---|",
        f"| input files read | {rows['raw_files']} ({size_mb:.0f} MB) |",
        f"| rows written | {total:,} ({', '.join(f'{k} {v:,}' for k, v in rows.items() if k != 'raw_files')}) |",
        f"| wall time (CLI, incl. start-up, Dagster in-process runs, validation) | {wall:.1f} s |",
        f"| throughput | {total / wall:,.0f} rows/s |",
        f"| peak RSS | {peak_mb:.0f} MB |",
        "| goal | whole mirror (≈ 0.9 M rows) in < 30 s on 2 cores |",
    ]
    body = "\n".join(lines)
    print(body)
    if not args.no_write:
        update_section("ingest", body)


if __name__ == "__main__":
    main()
