"""Physics throughput: ``sim_core.physics.compute`` (every physics term of every site and step: what a run's results
spend on physics, and what ``dc_step`` costs the step API) over a full year of the reference 5-DC cluster, in both
power modes, busy resources and server states drawn at random. Best of ``--repeats``: the thread's CPU seconds (steady
on a loaded machine) and the wall seconds. Prints its figures and command; run it on two checkouts for an A/B.

    ./run.sh python benchmarks/bench_physics.py [--repeats 30]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from benchmarks._report import machine  # noqa: E402
from benchmarks.bench_sim import make_bundle  # noqa: E402


def best_of(fn, repeats: int) -> tuple[float, float]:
    """(least thread CPU seconds, least wall seconds) of ``repeats`` calls of ``fn`` after one warm-up call."""
    fn()
    cpu, wall = [], []
    for _ in range(repeats):
        c, w = time.thread_time(), time.perf_counter()
        fn()
        cpu.append(time.thread_time() - c)
        wall.append(time.perf_counter() - w)
    return min(cpu), min(wall)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeats", type=int, default=30)
    args = ap.parse_args()
    import sim_core
    from sim_core import physics as ph

    with tempfile.TemporaryDirectory() as tmp:
        sc = sim_core.load(make_bundle(Path(tmp), 1000, 35040, 5, "physics"))
    rng = np.random.default_rng(0)
    n = sc.temp_c.shape[1]
    busy = [rng.uniform(0.0, 1.0, (sc.n_dc, n)) * c[:, None] for c in (sc.cap_cores, sc.cap_gpus, sc.cap_mem_gb)]
    servers = [rng.uniform(0.0, 20.0, (sc.n_dc, n)) for _ in range(4)]
    out = {}
    for power, srv in (("always_on", None), ("managed", servers)):
        cpu, wall = best_of(lambda srv=srv: ph.compute(sc.params, sc.cap_cores, sc.cap_gpus, sc.cap_mem_gb, *busy,
                                                       sc.temp_c, sc.wetbulb_c, servers=srv), args.repeats)
        out[power] = {"cpu_s": cpu, "wall_s": wall, "ns_per_dc_step_cpu": 1e9 * cpu / (sc.n_dc * n)}
    print(f"Command: ./run.sh python benchmarks/bench_physics.py --repeats {args.repeats}")
    print(f"Machine: {machine()}; {sc.n_dc} sites x {n:,} steps")
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
