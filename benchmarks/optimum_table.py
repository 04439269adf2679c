"""The comparison table of docs/optimum_table.md, in the shape of the CarbonFlex paper's: for every
registered policy (``sim_core.POLICIES``: policies added later appear by themselves), its carbon saving
against a carbon-agnostic baseline (``local_only``: every task runs at its origin as soon as it can),
its distance from the offline optimum within the optimum's bracket (``sim_core.optimum.bracket``: the LP's
lower bound and the engine's value of the schedule rounded from it), and its mean delay (arrival -> start);
plus the savings-vs-allowed-delay figure (docs/img/savings_vs_delay.png).

    ./run.sh python benchmarks/optimum_table.py --bundle .gridshift/bundles/<id> --days 7   # a real bundle
    ./run.sh python benchmarks/optimum_table.py                 # no bundle: a synthetic 5-site one (below)

Without ``--bundle`` it writes a synthetic bundle (the reference 5-DC cluster, synthetic signals and
``--tasks-per-day`` synthetic tasks) into a temporary directory and says so in the table's caption.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

ROOT = Path(__file__).resolve().parents[1]
BASELINE = "local_only"
DELAYS_H = (0, 2, 6, 12, 24)


def table(sc, days: float, seed: int, cmd: str, what: str) -> str:
    import sim_core
    from sim_core.bench.metrics import run_metrics
    from sim_core.optimum import bracket

    t = time.perf_counter()
    b = bracket(sc, seed=seed, days=days)
    lo, up = b.lower, b.upper
    rows = {}
    for p in sim_core.POLICIES:
        res = sim_core.run(sc, p, seed=seed, days=days)
        m = run_metrics(res, sc)
        rows[p] = (res.totals["carbon_incl_transfer_kg"], m["mean_wait_s"], m["sla_violation_rate"], res.options)
    base = rows[BASELINE][0]
    # every run that meets every deadline is a schedule of the optimum's set: the best of them and the rounded
    # LP schedule is the best known upper bound
    clean = {p: r[0] for p, r in rows.items() if r[2] == 0.0}
    best_p = min(clean, key=clean.get) if clean else None
    best = min(up.value, clean[best_p]) if best_p else up.value
    from sim_core.forecast import caption

    fc = caption(rows[BASELINE][3])
    lines = ["| policy | carbon incl. transfers kg | saving vs local_only % | from optimum % (bracket) "
             "| mean delay min | SLA violations % |", "|---|---:|---:|---:|---:|---:|"]
    for p, (c, wait, sla, _) in rows.items():
        d_lo, d_hi = b.distance(c)
        lines.append(f"| {p} | {c:,.1f} | {100 * (base - c) / base:.2f} | {100 * d_lo:.2f} to {100 * d_hi:.2f} | "
                     f"{wait / 60:.1f} | {100 * sla:.2f} |")
    up_wait = up.totals["mean_wait_s"]
    up_sla = up.totals["sla_violation_rate"]
    lines.append(f"| *optimum: upper bound (LP schedule rounded, run by the engine)* | {up.value:,.1f} | "
                 f"{100 * (base - up.value) / base:.2f} | 0 to {100 * b.width:.2f} | {up_wait / 60:.1f} | "
                 f"{100 * up_sla:.2f} |")
    lines.append(f"| *optimum: lower bound (LP)* | {lo.value:,.1f} | {100 * (base - lo.value) / base:.2f} | "
                 f"{-100 * (up.value - lo.value) / up.value:.2f} to 0 | — | 0 |")
    how = (f"rolling {lo.horizon_steps // 96}-day horizons" if lo.rolling else "one LP")
    free = lo.value - lo.baseline_carbon_kg
    best_txt = (f" The best run with no SLA violation ({best_p}, {clean[best_p]:,.1f} kg) is an achievable value "
                f"too: with it the optimum lies in [{lo.value:,.1f}, {best:,.1f}] kg, a bracket of "
                f"{100 * (best - lo.value) / lo.value:.2f} %." if best_p and clean[best_p] < up.value else "")
    drain_h = (lo.steps - lo.window_steps) * 0.25
    work = (f"Every figure covers the same work: every task that arrived in the window, run to its end (runs drain: "
            f"arrivals stop at the window's end, the run goes on until its last task has finished, work left at the "
            f"drain's cap charged at the run's own rate; `totals`' `carbon_incl_transfer_kg`). The lower bound covers "
            f"the window and the drain to the last task's deadline ({drain_h:g} h past the window's end), every task's "
            "whole work; in the drain it counts the idle power only up to the last task's earliest possible finish "
            "(a run stops paying when its work ends, which the LP does not know). " if lo.steps > lo.window_steps
            else "Runs stop at the window's end (no drain): every figure covers the work done inside the window. ")
    cap = (f"{what}; {days:g} days from {lo.start_utc}, seed {seed}, forecast: {fc}; gridshift defaults otherwise. "
           + work +
           f"The optimum OPT lies in [{lo.value:,.1f}, {up.value:,.1f}] kg: **bracket {100 * b.width:.2f} %** of the "
           f"lower bound ({100 * (up.value - lo.value) / free:.1f} % of the {free:,.1f} kg of it a schedule can "
           f"change; {lo.baseline_carbon_kg:,.1f} kg no schedule changes). A policy's distance from the optimum, "
           "(value − OPT) / OPT, lies between (value − upper) / upper and (value − lower) / lower. Lower: the "
           f"{lo.kind} bound of `sim_core.optimum` ({how}, HiGHS {lo.status}, {lo.solve_s:.0f} s), a bound over "
           "schedules that meet every deadline; upper: its solution rounded to one (site, dispatch step) per task "
           f"and run through the engine, drained as the policies ({up.sla_violations} SLA violations, "
           f"{up.totals['drain_steps'] * 0.25:g} h of drain, {up.planned_past_window:,} tasks planned after the "
           f"bound's steps as their deadlines allow, rounding {up.plan_s:.0f} s, engine run "
           f"{up.sim_s:.0f} s; docs/optimum.md).{best_txt} Generated by `{cmd}` in {time.perf_counter() - t:.0f} s.")
    return "\n".join(lines) + "\n\n" + cap + "\n"


def savings_figure(df, pols: list[str], title: str):
    """Carbon saving against the baseline per allowed delay: one line per policy (distinct colour and
    marker), the optimum's bound dashed black."""
    from matplotlib.figure import Figure

    from gridshift.plotstyle import series_styles

    fig = Figure(figsize=(11, 5.5), layout="constrained")
    ax = fig.add_subplot(1, 1, 1)
    for p, st in zip(pols, series_styles(len(pols)), strict=True):
        s = df.filter(df["policy"] == p).sort("allowed_delay_h")
        ax.plot(s["allowed_delay_h"].to_numpy(), s["saving_pct"].to_numpy(), ms=4, lw=1, label=p, **st)
    s = df.filter(df["policy"] == "optimum (bound)").sort("allowed_delay_h")
    ax.plot(s["allowed_delay_h"].to_numpy(), s["saving_pct"].to_numpy(), color="k", lw=2, ls="--", marker="*",
            ms=7, label="optimum (bound)")
    ax.set_xlabel("allowed delay of every task (h)")
    ax.set_ylabel(f"carbon saving vs {BASELINE} (%)")
    ax.set_title(title, fontsize=8)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7, loc="center left", bbox_to_anchor=(1.01, 0.5))
    return fig


def figure(sc, days: float, seed: int, path: Path, what: str) -> None:
    import sim_core
    from gridshift.plotstyle import save_png
    from sim_core.bench.gap import delay_sweep

    pols = [p for p in sim_core.POLICIES if p != BASELINE]
    df = delay_sweep(sc, pols, DELAYS_H, seed=seed, days=days, baseline=BASELINE)
    save_png(savings_figure(df, pols, f"savings vs allowed delay, {days:g} days, seed {seed}\n{what}"), path)


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--bundle", type=Path, default=None)
    ap.add_argument("--days", type=float, default=7.0)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--tasks-per-day", type=int, default=1000)
    ap.add_argument("--no-figure", action="store_true")
    ap.add_argument("--out", type=Path, default=ROOT / "docs" / "optimum_table.md")
    args = ap.parse_args()
    import sim_core
    from gridshift.atomic import atomic_write_bytes

    argv = list(sys.argv[1:])
    if args.bundle is not None:  # the user's home is not the reader's: name the bundle by its id
        argv = [f"<home>/bundles/{Path(a).name}" if i and argv[i - 1] == "--bundle" else a for i, a in enumerate(argv)]
    cmd = "./run.sh python benchmarks/optimum_table.py " + " ".join(argv)
    with tempfile.TemporaryDirectory() as tmp:
        if args.bundle is None:
            from sim_core.testing import reference_bundle

            n_days = int(args.days) + 1
            path = reference_bundle(tmp, n_tasks=args.tasks_per_day * n_days, n_steps=96 * n_days, name="table")
            what = (f"synthetic 5-site bundle (reference cluster, synthetic signals, {args.tasks_per_day:,} "
                    "synthetic tasks/day)")
        else:
            path = args.bundle
            what = f"bundle {path.name}"
        sc = sim_core.load(path)
        body = table(sc, args.days, args.seed, cmd.strip(), what)
        if not args.no_figure:
            figure(sc, args.days, args.seed, ROOT / "docs" / "img" / "savings_vs_delay.png", what)
    text = ("# Policies against the offline optimum\n\nIn the shape of the CarbonFlex paper's comparison: carbon "
            "saving against a carbon-agnostic baseline, distance from the optimum (bracketed between a lower and "
            "an upper bound), mean delay. Every registered policy "
            "appears (`sim_core.POLICIES`). How the optimum is computed and what it relaxes: "
            "[optimum.md](optimum.md).\n\n" + body
            + ("\n![savings vs allowed delay](img/savings_vs_delay.png)\n" if not args.no_figure else ""))
    print(text)
    atomic_write_bytes(args.out, text.encode())


if __name__ == "__main__":
    main()
