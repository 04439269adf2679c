"""Where a year's memory and time go, per task, on one bundle (issue 34 item 4: "fast at that scale").

Runs ``sim_core.run(bundle_path, "lowest_carbon")``'s phases one by one in this process (cache warm: run a day of
the bundle first, or run this twice) and prints, for each phase, its wall time, the process's resident set
after it (``/proc/self/statm``) and its peak so far (``ru_maxrss``), and the bytes of the arrays it holds, split
into per-task arrays (one value per task of the year or of the window) and the rest:

1. ``sim_core.load``: the bundle's task columns (``Scenario``);
2. ``window_tasks``: the run's ``Tasks`` (the window's task inputs, the realised year's ids);
3. ``Prepared``'s other parts: the engine ``State`` (per task and per step), the information buffers;
4. stepping (the policy's jitted loop, drain included);
5. ``build_result`` (physics of every step, the per-task passes; the per-task frames are lazy).

    ./run.sh python benchmarks/profile_scale.py BUNDLE [--label 0.1] [--days D] [--functions N] [--no-write]

A printout, not a timed test: the figures say which arrays to make narrower, stream or drop. Prints the section
and writes it between ``<!-- scale-profile:start -->`` and ``<!-- scale-profile:end -->`` in BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import os
import resource
import sys
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from benchmarks._report import machine, publish  # noqa: E402

PAGE = os.sysconf("SC_PAGE_SIZE")


def rss_mb() -> float:
    """The resident set now, MB."""
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * PAGE / 2**20


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def split_bytes(obj, n_per_task: set[int]) -> tuple[int, int, list[tuple[str, int]]]:
    """(bytes of the per-task arrays, bytes of the rest, the per-task arrays by name and bytes) of a
    namedtuple / dataclass of arrays; an array is per-task when its first dimension is one of ``n_per_task``.
    Views count once, by their base."""
    seen: set[int] = set()
    per, rest, named = 0, 0, []
    fields = obj._asdict().items() if hasattr(obj, "_asdict") else vars(obj).items()
    for name, a in fields:
        if not isinstance(a, np.ndarray):
            continue
        base = a.base if a.base is not None and isinstance(a.base, np.ndarray) else a
        if id(base) in seen:
            continue
        seen.add(id(base))
        if a.ndim == 1 and a.shape[0] in n_per_task:
            per += base.nbytes
            named.append((f"{name} {a.dtype}", base.nbytes))
        else:
            rest += base.nbytes
    return per, rest, named


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("bundle", type=Path)
    ap.add_argument("--days", type=float, default=None, help="a window of D days (default: the bundle's year)")
    ap.add_argument("--label", default="?", help="the bundle's scale, as the section names it (e.g. 0.1)")
    ap.add_argument("--no-write", action="store_true")
    ap.add_argument("--functions", type=int, default=0, help="also print the N functions of most own time (cProfile)")
    args = ap.parse_args()
    prof = None
    if args.functions:
        import cProfile

        prof = cProfile.Profile()
        prof.enable()

    import sim_core
    from sim_core import simulator as SIM
    from sim_core.drain import run_drained
    from sim_core.policies import registry
    from sim_core.result import build_result

    rows: list[tuple[str, float, float, float, str]] = []
    t_all = time.perf_counter()

    def mark(name: str, t: float, note: str = "") -> None:
        rows.append((name, time.perf_counter() - t, rss_mb(), peak_mb(), note))

    import tempfile

    from sim_core.testing import tiny_bundle

    with tempfile.TemporaryDirectory() as d:  # (the loader's imports and buffers first: not per task)
        sim_core.run(tiny_bundle(Path(d)), "lowest_carbon")
    base = rss_mb()
    t = time.perf_counter()
    sc = sim_core.load(args.bundle)
    n_year = sc.n_tasks
    per, _, named_sc = split_bytes(sc, {n_year})
    mark("sim_core.load (the bundle's task columns)", t, f"{per / n_year:.0f} B/task of the year in {len(named_sc)} "
                                                         "arrays")
    spec = registry.get("lowest_carbon")
    t = time.perf_counter()
    prep = SIM.Prepared(sc, 0, days=args.days, policy_code=spec.code, controls=spec.stateful, consume=True)
    n_w = prep.tasks.arrival.shape[0]
    per_t, _, named_t = split_bytes(prep.tasks, {n_w})
    per_s, rest_s, named_s = split_bytes(prep.state, {n_w, max(n_w, 1)})
    info_b = sum(a.nbytes for a in prep.info if isinstance(a, np.ndarray))
    mark("Prepared (Tasks, engine State, information)", t,
         f"Tasks {per_t / n_w:.0f} B/task, ids {prep.task_id.nbytes / n_w:.0f} B/task, State {per_s / n_w:.0f} "
         f"B/task + {rest_s / 2**20:.0f} MB per step/site, information {info_b / 2**20:.0f} MB")
    kern = spec.kernel()
    t = time.perf_counter()
    run_drained(prep, lambda j_end: kern(prep.tasks, prep.state, prep.ctx, prep.info, prep.plan, spec.code, j_end))
    prep.end_stepping()
    mark("stepping (lowest_carbon's jitted loop, drain included)", t, f"{prep.n_out:,} steps")
    t = time.perf_counter()
    res = build_result(prep, "lowest_carbon", lazy_tasks=True)
    mark("build_result (physics, per-task passes; frames lazy)", t, f"carbon {res.totals['carbon_kg']:.6f} kg")
    total = time.perf_counter() - t_all
    if prof is not None:
        import pstats

        prof.disable()
        pstats.Stats(prof).sort_stats("tottime").print_stats(args.functions)

    days = "" if args.days is None else f" --days {args.days:g}"
    lines = ["## Scale: where a year's memory and time go per task\n",
             f"Command: `./run.sh python benchmarks/profile_scale.py BUNDLE{days}` on the ×{args.label} bundle "
             f"({n_year:,} tasks; {n_w:,} in the run's realised window) — machine: {machine()}; shared with other "
             f"jobs, load {os.getloadavg()[0]:.1f}. The process after the loader's imports and a tiny run: "
             f"{base:,.0f} MB resident; each phase's time, resident set after it and peak so far:\n",
             "| phase | s | µs per task | RSS MB | peak MB | what it holds |", "|---|---|---|---|---|---|"]
    lines += [f"| {name} | {dt:.2f} | {1e6 * dt / max(n_w, 1):.3f} | {r:,.0f} | {p:,.0f} | {note} |"
              for name, dt, r, p, note in rows]
    lines.append(f"| whole | {total:.2f} | {1e6 * total / max(n_w, 1):.3f} | | {peak_mb():,.0f} | "
                 f"{(peak_mb() - base) * 2**20 / max(n_w, 1):.0f} B of peak RSS per task above that process |")
    lines.append("\nPer-task arrays, bytes per task (the engine-only ones are dropped once the stepping ends; the "
                 "scenario's are consumed as the window is taken):\n")
    for label, named, n in (("Scenario", named_sc, n_year), ("Tasks", named_t, n_w), ("State", named_s, n_w)):
        lines.append(f"- {label}: " + ", ".join(f"{k} {b / n:.0f}" for k, b in sorted(named, key=lambda x: -x[1])))
    publish("scale-profile", "\n".join(lines), not args.no_write)


if __name__ == "__main__":
    main()
