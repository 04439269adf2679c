"""Benchmark ``sim_core.gym.TaskSchedulingVectorEnv``: aggregate env-steps per second for 1, 8, 32, 64 envs.

The reference 5-DC cluster (``sim_core.testing.reference_bundle``) with a synthetic workload at the
reference load (1.3 M tasks/year), a 14-day bundle; every environment runs 7-day episodes (672 steps)
with its own seed, a constant action (2 = every pending task to datacenter index 1, DE-LU), the default
reward (energy cost + carbon + SLA, evaluated inside the jitted step). Each figure is
``num_envs x vector steps / wall seconds`` over ``--vector-steps`` steps (more than one episode, so the
Python autoresets are included), after a warm-up; serial (one thread) and parallel (Numba threads) for
each count, with the default forecast (``calibrated``) and, for comparison, ``persistence``. The single
environment (``TaskSchedulingEnv.step``) on the same bundle is the reference row. Updates only the
``vector_env`` section of BENCHMARKS.md.

    uv run python benchmarks/bench_vector_env.py [--vector-steps 800] [--no-write]
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from benchmarks._report import machine, publish  # noqa: E402

COMMAND = "uv run python benchmarks/bench_vector_env.py"
TASKS_PER_YEAR = 1_300_000
BUNDLE_DAYS = 14
EPISODE_DAYS = 7
GOAL = 250_000  # aggregate env-steps/s, single-action mode, 2 cores (issue 15, item 5)
COUNTS = (1, 8, 32, 64)


def vector_rate(sc, n: int, parallel: bool, vector_steps: int, forecast: str) -> tuple[float, float]:
    """(env-steps per wall second, env-steps per CPU second of this process)."""
    import numpy as np

    from sim_core.gym import TaskSchedulingVectorEnv

    venv = TaskSchedulingVectorEnv(sc, n, days=EPISODE_DAYS, parallel=parallel, forecast=forecast)
    venv.reset(seed=0)
    a = np.full(n, 2)
    for _ in range(20):  # warm-up (JIT cache load, first allocations)
        venv.step(a)
    t, c = time.perf_counter(), time.process_time()
    for _ in range(vector_steps):
        venv.step(a)
    wall, cpu = time.perf_counter() - t, time.process_time() - c
    return n * vector_steps / wall, n * vector_steps / cpu


def single_rate(sc, steps: int) -> tuple[float, float]:
    from sim_core.gym import TaskSchedulingEnv

    env = TaskSchedulingEnv(sc, single_action=True, days=EPISODE_DAYS)
    env.reset(seed=0)
    for _ in range(20):
        env.step(2)
    t, c = time.perf_counter(), time.process_time()
    for k in range(steps):
        *_, term, _, _ = env.step(2)
        if term:
            env.reset(seed=k)
    return steps / (time.perf_counter() - t), steps / (time.process_time() - c)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--vector-steps", type=int, default=800, help="vector steps per figure (> 672: one autoreset)")
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()

    import numba

    import sim_core
    from sim_core.testing import reference_bundle

    load_avg = os.getloadavg()[0]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        n_tasks = int(TASKS_PER_YEAR * BUNDLE_DAYS / 365)
        sc = sim_core.load(reference_bundle(tmp, n_tasks=n_tasks, n_steps=96 * BUNDLE_DAYS, name="vec"))
        r1, c1 = single_rate(sc, args.vector_steps)
        print(f"single TaskSchedulingEnv.step: {r1:,.0f} steps/s ({c1:,.0f} per CPU second)")
        for forecast in ("calibrated", "persistence"):
            for n in COUNTS:
                for parallel in (False, True):
                    if parallel and (n == 1 or forecast != "calibrated"):
                        continue
                    w, c = vector_rate(sc, n, parallel, args.vector_steps, forecast)
                    mode = f"parallel ({numba.get_num_threads()} threads)" if parallel else "serial"
                    print(f"{forecast:>11} {n:>3} envs {mode:>22}: {w:,.0f} env-steps/s ({c:,.0f} per CPU second)")
                    rows.append((forecast, n, mode, w, c))
    best = max(r[3] for r in rows)
    best_cal = max(r[3] for r in rows if r[0] == "calibrated")
    best_cpu = max(r[4] for r in rows if r[0] == "calibrated" and r[2] == "serial")
    body = "\n".join([
        "## Vector environment (sim_core.gym.TaskSchedulingVectorEnv)",
        "",
        f"Command: `{COMMAND}` — machine: {machine()}; measured {time.strftime('%Y-%m-%d')} "
        f"(1-min load average at start: {load_avg:.1f}; the machine is shared, so figures vary with its load)",
        "",
        f"Reference 5-DC cluster, 1× load, {EPISODE_DAYS}-day episodes (672 steps) with autoreset (included), "
        f"single-action mode, constant action, default reward; {args.vector_steps} vector steps per figure. "
        f"Single `TaskSchedulingEnv.step` on the same bundle, same moment: {r1:,.0f} steps/s "
        f"({c1:,.0f} per CPU second).",
        "",
        "| forecast model | envs | stepping | env-steps/s (wall) | env-steps per CPU second |",
        "|---|---:|---|---:|---:|",
        *[f"| {f} | {n} | {m} | {w:,.0f} | {c:,.0f} |" for f, n, m, w, c in rows],
        "",
        f"Goal: ≥ {GOAL:,} env-steps/s aggregate in single-action mode on 2 cores: "
        f"{'met' if best >= GOAL else 'NOT met'} (best {best:,.0f}/s wall; {best_cal:,.0f}/s with the default "
        f"`calibrated` forecast; per CPU second, serial, calibrated: up to {best_cpu:,.0f}, "
        f"{best_cpu / c1:.1f}× the single environment). Floor: the per-step kernels themselves — the "
        "calibrated forecast (issued once an hour: 2 signals × 5 sites × 96 leads, one counter-based normal "
        "per lead; re-indexed every step), the datacenter physics and the engine step — which the vector "
        "environment runs exactly as the single environment does (it removes the per-step Python, not the "
        "simulation), plus a run set-up per episode (≈ 8 ms of CPU per autoreset). The engine alone steps "
        "the same cluster and load in ≈ 9.4 µs a step (`bench_sim`: a 35,040-step year in 0.33 s), i.e. "
        "≈ 106,000 steps per core-second before any observation or reward: ≈ 210,000/s on 2 cores even with "
        "perfect parallel scaling, below the goal — it needs a faster simulation step, not a faster wrapper.",
    ])
    publish("vector_env", body, not args.no_write)


if __name__ == "__main__":
    main()
