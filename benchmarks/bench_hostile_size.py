"""Peak memory of refusing a padded 2 GB mirror file (issue 27: bounded memory on any input).

    ./run.sh python benchmarks/bench_hostile_size.py                 # 2 GiB, streamed padding
    ./run.sh python benchmarks/bench_hostile_size.py --gib 0.2 --sparse

Builds a mirror in a temporary folder whose Electricity Maps DE-LU 2023 file is the real file (read from
the shared data folder, ``GRIDSHIFT_SHARED_DATA``, default ``../shared/data``) followed by one data row whose
estimation-method field is padded with text to ``--gib`` GiB (``--sparse``: a sparse file of zeros
instead, no disk written), every other file linking the real one. It then runs the real command,
``gridshift ingest`` (the Dagster assets, the warehouse, the CLI's report), in a subprocess, and
prints the command, its exit status, the line of its refusal naming the file, and the child's peak
resident memory (``resource.getrusage(RUSAGE_CHILDREN).ru_maxrss``). The temporary folder — the padded
file with it — is deleted afterwards. A benchmark, not a CI test: CI checks the same limit on sparse
files one byte above it (tests/integration/warehouse/test_hostile_size.py).
"""

from __future__ import annotations

import argparse
import os
import resource
import shlex
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from benchmarks._report import machine, publish

ROOT = Path(__file__).resolve().parents[1]
RELPATH = "electricitymaps/DE-LU/DE-LU_2023_hourly.csv"
CHUNK = 16 << 20


def shared_data() -> Path:
    return Path(os.environ.get("GRIDSHIFT_SHARED_DATA") or ROOT.parent / "shared" / "data").resolve()


def build_mirror(shared: Path, tmp: Path, size: int, *, sparse: bool) -> Path:
    """A mirror whose DE-LU 2023 carbon file is padded to ``size`` bytes (streamed, never held in memory)."""
    mirror = tmp / "mirror"
    for src in (shared / "electricitymaps" / "DE-LU").iterdir():
        dst = mirror / src.relative_to(shared)
        dst.parent.mkdir(parents=True, exist_ok=True)
        dst.symlink_to(src)
    target = mirror / RELPATH
    target.unlink()
    real = (shared / RELPATH).read_bytes()
    with target.open("wb") as fh:
        fh.write(real)
        if sparse:
            fh.truncate(size)
            return mirror
        last = real.rstrip(b"\n").rsplit(b"\n", 1)[-1]
        fh.write(last.rsplit(b",", 1)[0] + b",")  # a copy of the last row, its last field padded
        block = b"x" * CHUNK
        left = size - fh.tell() - 1
        while left > 0:
            fh.write(block[:min(CHUNK, left)])
            left -= CHUNK
        fh.write(b"\n")
    return mirror


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--gib", type=float, default=2.0, help="size of the padded file in GiB (default 2)")
    ap.add_argument("--sparse", action="store_true", help="a sparse file of zeros instead of written padding")
    ap.add_argument("--no-write", action="store_true", help="print only; leave BENCHMARKS.md as it is")
    args = ap.parse_args()
    size = int(args.gib * (1 << 30))
    with tempfile.TemporaryDirectory(prefix="gridshift-hostile-") as tmp:
        mirror = build_mirror(shared_data(), Path(tmp), size, sparse=args.sparse)
        cmd = [sys.executable, "-m", "gridshift_cli", "ingest", "--regions", "DE-LU", "--year", "2023",
               "--sources", "carbon", "--mirror", str(mirror), "--home", str(Path(tmp) / "home")]
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, check=False)
        took = time.perf_counter() - t0
        peak_kib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss
        on_disk = os.stat(mirror / RELPATH).st_blocks * 512
    out = proc.stdout + proc.stderr
    refusal = [ln.strip() for ln in out.splitlines() if "above the limit" in ln or "DE-LU_2023_hourly.csv" in ln]
    cli = "./run.sh python benchmarks/bench_hostile_size.py" + (f" --gib {args.gib:g}" if args.gib != 2.0 else "") + (
        " --sparse" if args.sparse else "")
    body = "\n".join([
        "## Hostile input: a padded mirror file", "",
        f"`{cli}` — {machine()}, load average {os.getloadavg()[0]:.1f} at the end (a shared machine). The real "
        "Electricity Maps DE-LU 2023 file padded to the size below, ingested by the real command in a subprocess "
        f"(`{shlex.join(['gridshift', *cmd[3:7], *cmd[7:9]])} ...`); peak resident memory of that process "
        "(`resource.getrusage(RUSAGE_CHILDREN).ru_maxrss`).", "",
        "| padded file | on disk | exit status | wall s | peak RSS | refusal |",
        "|---|---:|---:|---:|---:|---|",
        f"| {size:,} bytes ({'sparse' if args.sparse else 'written'}) | {on_disk:,} bytes | {proc.returncode} | "
        f"{took:.1f} | {peak_kib / 1024:,.0f} MiB | {(refusal[:1] or ['(none found)'])[0][:160]} |",
    ])
    publish("hostile_size", body, write=not args.no_write)

if __name__ == "__main__":
    main()
