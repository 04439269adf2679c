"""Distributed sweep benchmark: runs/minute vs Dask workers (1, 2), against the in-process sweep.

    ./run.sh python benchmarks/bench_sweep.py                 # prints the figures, updates BENCHMARKS.md
    ./run.sh python benchmarks/bench_sweep.py --no-write      # prints only

The scenario: the reference 5-DC cluster with synthetic signals and a synthetic 200,000-task, 13-week
workload (``sim_core.testing.reference_bundle``); the sweep: 5 built-in policies × 4 seeds = 20 runs of
the 13 weeks, results as Parquet objects in a temporary folder. Each configuration runs the sweep once
to warm up (JIT cache load and bundle load in every worker, on other seeds) and then the timed sweep;
runs/minute = 20 / wall time of the timed sweep (submission, simulation, publication, indexing of the
receipts in memory; no warehouse). The Dask cluster is ``sim_core.bench.remote.local_cluster``: a
``LocalCluster`` on 127.0.0.1 with single-threaded worker processes and gridshift's worker config.
Figures are printed and written between ``<!-- sweep:start -->`` and ``<!-- sweep:end -->`` in
BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks._report import machine, publish  # noqa: E402

POLICIES = ["local_only", "round_robin", "lowest_carbon", "lowest_price", "defer_to_greener"]
SEEDS = [0, 1, 2, 3]
WARM_SEEDS = [100]
DAYS = 91
COMMAND = "./run.sh python benchmarks/bench_sweep.py"


def _sweep(bundle: Path, results: Path, seeds, client=None) -> float:
    from gridshift.results import ResultStore
    from sim_core.bench.sweep import compare

    store = ResultStore(str(results))
    t = time.perf_counter()
    cmp = compare(bundle, POLICIES, seeds, days=DAYS, store=store, executor=client,
                  results_url=str(results) if client is not None else None)
    wall = time.perf_counter() - t
    assert len(cmp.computed) == len(POLICIES) * len(seeds), "a run was reused: results folder not fresh"
    return wall


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()
    from distributed import Client

    import sim_core
    from sim_core.bench.remote import local_cluster
    from sim_core.testing import reference_bundle

    n_runs = len(POLICIES) * len(SEEDS)
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        bundle = reference_bundle(root / "bundles", n_tasks=200_000, n_steps=96 * DAYS, n_dc=5, seed=7)
        sc = sim_core.load(bundle)
        for p in POLICIES:  # compile or load the kernels in this process
            sim_core.run(sc, p, seed=0, days=1)
        _sweep(bundle, root / "warm-inproc", WARM_SEEDS)
        wall = _sweep(bundle, root / "inproc", SEEDS)
        rows.append(("in-process (no Dask)", 1, wall))
        print(f"in-process: {n_runs} runs in {wall:.1f} s = {60 * n_runs / wall:.1f} runs/min", flush=True)
        for workers in (1, 2):
            with local_cluster(workers) as cluster, Client(cluster) as client:
                client.wait_for_workers(workers)
                _sweep(bundle, root / f"warm-{workers}", [*WARM_SEEDS, 101][:max(workers, 1)], client)
                wall = _sweep(bundle, root / f"dask-{workers}", SEEDS, client)
            rows.append((f"Dask LocalCluster, {workers} worker process(es)", workers, wall))
            print(f"dask {workers} worker(s): {n_runs} runs in {wall:.1f} s = {60 * n_runs / wall:.1f} runs/min",
                  flush=True)
        same = all((root / "inproc").joinpath(p.relative_to(root / "dask-2")).read_bytes() == p.read_bytes()
                   for p in (root / "dask-2").rglob("*.parquet"))
        print(f"2-worker objects byte-identical to the in-process ones: {same}")
    base = rows[0][2]
    lines = [
        "## Distributed sweeps (runs/minute vs Dask workers)", "",
        f"Command: `{COMMAND}` — machine: {machine()}, **shared with other engineers' jobs while measured** "
        "(figures are indicative; the 2-worker speed-up is bounded by the 2 cores).", "",
        f"Sweep: {len(POLICIES)} policies × {len(SEEDS)} seeds = {n_runs} runs of {DAYS} days on the reference 5-DC "
        "cluster with a synthetic 200,000-task workload; results as Parquet objects in a local folder; warm workers "
        "(one warm-up sweep on other seeds first). Goal (issue 15): runs/minute reported vs workers; no goal figure.",
        "", "| engine | workers | wall time (s) | runs/minute | vs in-process |", "|---|---:|---:|---:|---:|",
    ]
    for name, w, wall in rows:
        lines.append(f"| {name} | {w} | {wall:.1f} | {60 * n_runs / wall:.1f} | {base / wall:.2f}× |")
    lines += ["", f"Objects written by the 2-worker sweep byte-identical to the in-process sweep's: {same}."]
    body = "\n".join(lines)
    publish("sweep", body, not args.no_write)


if __name__ == "__main__":
    main()
