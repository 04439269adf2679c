"""Where the main job's export spends its memory and time at a scale (issue 34 item 4), phase by phase.

From a home whose warehouse already holds the scale's workload (run ``gridshift export --scale S`` once first;
``benchmarks/bench_scale.py`` does), builds the main job's bundle in this process (``scenario_builder.bundle``'s
``assemble`` and ``write``, what the export's last asset runs) while a thread samples the resident set every
20 ms, and prints each phase's wall time and the peak resident set during it:

1. ``tasks.write_tasks``: the workload's tasks streamed from the warehouse to the tasks file, window by window
   (query, casts, sort, flexibility columns, the sizing demand and the flexibility summary, Parquet);
2. ``datacenters.build``: sizing every site from the accumulated demand;
3. ``parquet_bytes``: the other files' Parquet bytes;
4. ``publish``: hashing and the atomic write (the tasks file renamed in);

then a floor: the tasks file written again from rows already in memory (what any export of these tasks pays).

    ./run.sh python benchmarks/profile_export.py --home HOME --scale 0.1 [--gpu H100] [--no-write]

A printout, not a timed test. Prints the section and writes it between ``<!-- export-profile:start -->`` and
``<!-- export-profile:end -->`` in BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from benchmarks._main_bundle import REGIONS, YEAR  # noqa: E402
from benchmarks._report import machine, publish  # noqa: E402
from benchmarks.profile_scale import rss_mb  # noqa: E402

#: a bundle file by its schema's first column
FILES = {"task_id": "tasks.parquet", "location": "signals.parquet", "src_location": "network.parquet"}


class Sampler:
    """The peak resident set since :meth:`reset`, sampled every 20 ms by a daemon thread."""

    def __init__(self) -> None:
        self.peak = rss_mb()
        threading.Thread(target=self._loop, daemon=True).start()

    def _loop(self) -> None:
        while True:
            self.peak = max(self.peak, rss_mb())
            time.sleep(0.02)

    def reset(self) -> float:
        now = rss_mb()
        self.peak = now
        return now


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--home", type=Path, required=True)
    ap.add_argument("--scale", default="0.1")
    ap.add_argument("--gpu", default="H100")
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()

    import scenario_builder.bundle as SB
    from gridshift import scale as scale_mod
    from gridshift.home import Home

    params = SB.BuildParams(regions=tuple(REGIONS.split(",")), year=YEAR, scale=scale_mod.parse(args.scale),
                            gpu=args.gpu)
    home = Home.resolve(args.home)
    sampler = Sampler()
    rows: list[tuple[str, float, float, float]] = []  # (phase, s, RSS at its start, peak during it)

    def timed(name: str, fn):
        def wrapper(*a, **kw):
            start = sampler.reset()
            t = time.perf_counter()
            out = fn(*a, **kw)
            what = name
            if fn is parquet_bytes:  # (which file: by its schema's first column)
                what = f"{name} ({FILES.get(a[1].names[0], a[1].names[0])})"
            rows.append((what, time.perf_counter() - t, start, max(sampler.peak, rss_mb())))
            sampler.reset()
            return out
        return wrapper

    # (the phases, by the module attributes assemble and write call them through)
    SB.tasks_mod.write_tasks = timed("stream the tasks to their file (query by window, casts, sort, flexibility, "
                                     "demand, Parquet)", SB.tasks_mod.write_tasks)
    SB.dc_mod.build = timed("size the sites from the demand", SB.dc_mod.build)
    parquet_bytes = SB.parquet_bytes
    SB.parquet_bytes = timed("Parquet bytes (zstd)", parquet_bytes)
    SB.publish = timed("publish (hash, atomic write)", SB.publish)
    base = rss_mb()
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(dir=home.root) as out:
        built = SB.write(SB.assemble(params, home, spool=Path(out)), Path(out))
        total = time.perf_counter() - t0
        n_tasks = built.manifest["n_tasks"]
        write_s, write_cpu = _parquet_floor(built.path / "tasks.parquet", Path(out) / "again.parquet")
    lines = ["## Scale: where the export's memory and time go\n",
             f"Command: `./run.sh python benchmarks/profile_export.py --home HOME --scale {args.scale} --gpu "
             f"{args.gpu}` ({REGIONS} × {YEAR}, {n_tasks:,} tasks; the warehouse already holds the scale's "
             f"workload) — machine: {machine()}; shared with other jobs, load {os.getloadavg()[0]:.1f}. The "
             f"process before: {base:,.0f} MB resident; each phase's time and the peak resident set during it "
             "(sampled every 20 ms):\n",
             "| phase | s | µs per task | RSS at its start MB | peak during it MB | peak B per task above the start "
             "of the build |", "|---|---|---|---|---|---|"]
    lines += [f"| {name} | {dt:.2f} | {1e6 * dt / n_tasks:.3f} | {start:,.0f} | {peak:,.0f} | "
              f"{(peak - base) * 2**20 / n_tasks:.0f} |" for name, dt, start, peak in rows]
    lines.append(f"| whole build (assemble and write) | {total:.2f} | {1e6 * total / n_tasks:.3f} | {base:,.0f} | "
                 f"{max(p for *_, p in rows):,.0f} | |")
    lines.append(f"\nA floor under the export's time: the tasks file written again alone (its rows held in memory "
                 f"first, untimed; the bundle's Parquet settings, zstd level 3) took {write_s:.2f} s "
                 f"({write_cpu:.2f} CPU-s), {1e6 * write_s / n_tasks:.3f} µs per task.")
    publish("export-profile", "\n".join(lines), not args.no_write)


def _parquet_floor(path: Path, out: Path) -> tuple[float, float]:
    """Seconds (wall, and CPU of all the process's threads) to write the tasks file at ``path`` again (to ``out``)
    from frames already in memory: the encoding and write that any export of these tasks pays, whatever it reads them
    from."""
    import polars as pl
    import pyarrow.parquet as pq

    from gridshift.bundle import TASKS_SCHEMA
    from gridshift.parquet import write_parquet_batches

    f = pq.ParquetFile(path)
    groups = list(range(f.num_row_groups))
    frames = [pl.from_arrow(f.read_row_groups(groups[k:k + 8])) for k in range(0, len(groups), 8)]
    t, c = time.perf_counter(), time.process_time()
    write_parquet_batches(out, frames, TASKS_SCHEMA)
    return time.perf_counter() - t, time.process_time() - c


if __name__ == "__main__":
    main()
