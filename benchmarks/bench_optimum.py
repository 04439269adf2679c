"""Offline-optimum benchmark: the solve time of the LP bound (``sim_core.optimum``) on a 7-day window
of a 5-site bundle at the main job's load (the reference 5-DC cluster, a synthetic workload at the
main job's rate of ~3,400 tasks a day), and on a 28-day window as rolling 7-day horizons.

    ./run.sh python benchmarks/bench_optimum.py            # both, updates BENCHMARKS.md
    ./run.sh python benchmarks/bench_optimum.py --quick    # the 7-day window only, prints only
    ./run.sh python benchmarks/bench_optimum.py --quick --formulation classes   # the earlier LP, to compare

Times are wall-clock seconds of the whole ``optimum(...)`` call (set-up, LP assembly, HiGHS) and of
HiGHS alone, with the process CPU time next to them (the machine is shared: wall time grows with the
load, CPU time much less). HiGHS runs with ``threads=2``.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks._report import machine, update_section  # noqa: E402

#: the main job's workload rate: 1.25 M tasks a year (README) -> ~3,425 a day
TASKS_PER_DAY = 3425


def measure(path: Path, days: float, horizon_days: float | None, formulation: str) -> dict:
    import sim_core
    from sim_core.optimum import optimum

    sc = sim_core.load(path)
    c0, t0 = time.process_time(), time.perf_counter()
    r = optimum(sc, seed=0, days=days, horizon_days=horizon_days, workload="origins", formulation=formulation)
    return {"wall_s": time.perf_counter() - t0, "cpu_s": time.process_time() - c0, "r": r}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--formulation", default="cumulative", choices=["cumulative", "classes"])
    args = ap.parse_args()
    from sim_core.testing import reference_bundle

    days_total = 7 if args.quick else 28
    with tempfile.TemporaryDirectory() as tmp:
        path = reference_bundle(tmp, n_tasks=TASKS_PER_DAY * (days_total + 1), n_steps=96 * (days_total + 1),
                                name="optimum-bench")
        rows = [("7-day window, one LP", measure(path, 7, 7.0, args.formulation))]
        if not args.quick:
            rows.append(("28-day window, rolling 7-day horizons", measure(path, 28, 7.0, args.formulation)))
    load = os.getloadavg()[0]
    cmd = "./run.sh python benchmarks/bench_optimum.py" + (" --quick" if args.quick else "")
    if args.formulation != "cumulative":
        cmd += f" --formulation {args.formulation}"
    lines = ["## Offline optimum (LP bound, HiGHS)", "",
             f"`{cmd}` — {machine()}, load average {load:.1f} when it finished (a shared machine). Reference "
             f"5-DC cluster, synthetic signals, a synthetic workload at the main job's rate ({TASKS_PER_DAY:,} "
             f"tasks/day), seed 0, formulation `{args.formulation}`, default class key (docs/optimum.md).", "",
             "| window | tasks | classes | LP columns | rows | non-zeros | total wall s | HiGHS wall s | CPU s "
             "| bound kg CO2 | of which no schedule changes |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for name, m in rows:
        r = m["r"]
        lines.append(f"| {name} | {r.n_tasks:,} | {r.n_classes:,} | {r.n_cols:,} | {r.n_rows:,} | {r.nnz:,} | "
                     f"{m['wall_s']:.1f} | {r.solve_s:.1f} | {m['cpu_s']:.1f} | {r.value:,.1f} | "
                     f"{r.baseline_carbon_kg:,.1f} |")
    body = "\n".join(lines)
    print(body)
    if not args.quick:
        update_section("optimum", body)


if __name__ == "__main__":
    main()
