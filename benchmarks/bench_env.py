"""Benchmark ``sim_core.gym.TaskSchedulingEnv``: env.step throughput with a trivial agent.

The reference 5-DC cluster (``sim_core.testing.reference_bundle``) with a synthetic workload at the
reference load (1.3 M tasks/year) and at 10x, a 14-day window (1,344 steps per episode), default
reward (energy cost + carbon + SLA). Agents: a constant action (single-action mode: action 2 = run
every pending task at datacenter index 1, DE-LU) and, in multi-action mode, the same action per
task given as a Python list; for comparison the bare ``Simulator`` with the same constant action.
Each figure is the best of ``--repeat`` whole episodes after a warm-up episode.
Updates only the ``env`` section of BENCHMARKS.md.

    ./run.sh python benchmarks/bench_env.py [--repeat 3] [--no-write]
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from benchmarks._report import machine, publish  # noqa: E402

COMMAND = "./run.sh python benchmarks/bench_env.py"
TASKS_PER_YEAR = 1_300_000
DAYS = 14
GOAL = 10_000  # env.step per second, single-action, constant action, 5 DCs


def episode(env, single: bool, action: int = 2) -> tuple[int, float]:
    obs, _ = env.reset(seed=0)
    n = 0
    t = time.perf_counter()
    done = False
    if single:
        while not done:
            obs, r, done, trunc, info = env.step(action)
            n += 1
    else:
        while not done:
            obs, r, done, trunc, info = env.step([action] * len(obs))
            n += 1
    return n, time.perf_counter() - t


def sim_loop(sc, fast: bool) -> tuple[int, float]:
    import sim_core

    sim = sim_core.Simulator(sc, 0, days=DAYS, single_action=True)
    sim.reset()
    n = 0
    t = time.perf_counter()
    while not sim.done:
        if fast:
            sim.step_fast(2)
        else:
            sim.step(2)
        n += 1
    return n, time.perf_counter() - t


def best_rate(fn, repeat: int) -> tuple[float, int]:
    fn()  # warm-up (JIT cache load, first allocations)
    best = 0.0
    n = 0
    for _ in range(repeat):
        n, dt = fn()
        best = max(best, n / dt)
    return best, n


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()

    import os

    import sim_core
    from sim_core.gym import TaskSchedulingEnv
    from sim_core.testing import reference_bundle

    load_avg = os.getloadavg()[0]
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for load in (1, 10):
            n_tasks = int(TASKS_PER_YEAR * load * DAYS / 365)
            t = time.perf_counter()
            sc = sim_core.load(reference_bundle(tmp, n_tasks=n_tasks, n_steps=96 * DAYS, name=f"env{load}"))
            print(f"{load}x load: bundle with {n_tasks:,} tasks written and loaded in {time.perf_counter() - t:.1f} s")
            t = time.perf_counter()
            env1 = TaskSchedulingEnv(sc, single_action=True)
            env1.reset(seed=0)
            t_make = time.perf_counter() - t
            r1, n = best_rate(lambda e=env1: episode(e, True), args.repeat)
            print(f"  single-action, constant action: {r1:,.0f} steps/s ({n} steps/episode)")
            rows.append((f"{load}×", f"{n_tasks:,}", "single-action, constant action", r1, t_make))
            if load == 1:
                envm = TaskSchedulingEnv(sc, single_action=False)
                rm, _ = best_rate(lambda e=envm: episode(e, False), args.repeat)
                print(f"  multi-action, constant action per task: {rm:,.0f} steps/s")
                rows.append((f"{load}×", f"{n_tasks:,}", "multi-action, list of one action per task", rm, None))
                rf, _ = best_rate(lambda s=sc: sim_loop(s, True), args.repeat)
                rs, _ = best_rate(lambda s=sc: sim_loop(s, False), args.repeat)
                print(f"  Simulator.step_fast: {rf:,.0f} steps/s; Simulator.step (dicts): {rs:,.0f} steps/s")
                rows.append((f"{load}×", f"{n_tasks:,}", "(Simulator.step_fast, no env)", rf, None))
                rows.append((f"{load}×", f"{n_tasks:,}", "(Simulator.step, obs/info dicts)", rs, None))

    head = rows[0][3]
    body = "\n".join([
        "## Gymnasium environment (sim_core.gym.TaskSchedulingEnv)",
        "",
        f"Command: `{COMMAND}` — machine: {machine()}; measured {time.strftime('%Y-%m-%d')} "
        f"(1-min load average at start: {load_avg:.1f})",
        "",
        f"Reference 5-DC cluster, synthetic workload, {DAYS}-day episodes ({96 * DAYS:,} steps), default reward "
        f"(energy cost + carbon + SLA), trivial agent; best of {args.repeat} episodes after a warm-up.",
        "",
        "| load | tasks in window | mode / agent | env.step per second | µs per step |",
        "|---|---|---|---:|---:|",
        *[f"| {a} | {b} | {c} | {r:,.0f} | {1e6 / r:.1f} |" for a, b, c, r, _ in rows],
        "",
        f"Goal: ≥ {GOAL:,} env.step/s in single-action mode with a constant action on 5 DCs: "
        f"{'met' if head >= GOAL else 'NOT met'} ({head:,.0f}/s at the reference load). "
        f"Environment construction + first reset: {rows[0][4]:.2f} s.",
    ])
    publish("env", body, not args.no_write)


if __name__ == "__main__":
    main()
