"""The comparison table of docs/optimum_table.md, in the shape of the CarbonFlex paper's: for every
registered policy (``sim_core.POLICIES``: policies added later appear by themselves), its carbon saving
against a carbon-agnostic baseline (``local_only``: every task runs at its origin as soon as it can),
its distance from the offline optimum within the optimum's bracket (``sim_core.optimum.bracket``: the LP's
lower bound and the engine's value of the schedule rounded from it), and its mean delay (arrival -> start);
plus the savings-vs-allowed-delay figure (docs/img/savings_vs_delay.png).

    ./run.sh python benchmarks/optimum_table.py --home DIR                       # the main job's default export
    ./run.sh python benchmarks/optimum_table.py --bundle DIR/bundles/<id> --days 7   # another bundle
    ./run.sh python benchmarks/optimum_table.py --synthetic     # a synthetic 5-site one (below)

Without ``--bundle`` it measures the main job's default export (``gridshift export --regions US-CAL-CISO,DE-LU,SG
--year 2023``, found or built in ``--home``); with ``--synthetic`` it writes a synthetic bundle (the reference 5-DC
cluster, synthetic signals and ``--tasks-per-day`` synthetic tasks) into a temporary directory and says so in
the table's caption.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks._main_bundle import add_bundle_args, chosen_bundle  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
BASELINE = "local_only"
DELAYS_H = (0, 2, 6, 12, 24)


def table(sc, days: float, seed: int, cmd: str, what: str, horizon_days: float | None = None) -> str:
    import sim_core
    from sim_core.bench.metrics import run_metrics
    from sim_core.forecast import caption
    from sim_core.optimum import bracket

    t = time.perf_counter()
    b = bracket(sc, seed=seed, days=days, horizon_days=horizon_days)
    lo, up = b.lower, b.upper
    rows = {}
    for p in sim_core.POLICIES:
        res = sim_core.run(sc, p, seed=seed, days=days)
        m = run_metrics(res, sc)
        rows[p] = (res.totals["carbon_incl_transfer_kg"], m["mean_wait_s"], m["sla_violation_rate"], res.options,
                   int(res.totals["sla_violations"]))
    base = rows[BASELINE][0]
    # OPT is over schedules that meet every deadline: every run with no SLA violation (the plan's run or a
    # policy's, the same work) is one, and the least of them is the upper end of the bracket
    clean = {p: r[0] for p, r in rows.items() if r[4] == 0}
    if up.sla_violations == 0:
        clean[f"best found: {up.source}"] = up.value
    best_p = min(clean, key=clean.get) if clean else None
    hi = clean[best_p] if best_p else float("nan")
    width = (hi - lo.value) / lo.value

    def dist(v: float) -> str:
        return f"{100 * (v - hi) / hi:.2f} to {100 * (v - lo.value) / lo.value:.2f}"

    fc = caption(rows[BASELINE][3])
    lines = ["| policy | carbon incl. transfers kg | saving vs local_only % | from optimum % (bracket) "
             "| mean delay min | SLA violations % |", "|---|---:|---:|---:|---:|---:|"]
    for p, (c, wait, sla, _, _) in rows.items():
        lines.append(f"| {p} | {c:,.1f} | {100 * (base - c) / base:.2f} | {dist(c)} | {wait / 60:.1f} | "
                     f"{100 * sla:.2f} |")
    plan_role = ("meets every deadline" if up.plan_late == 0 else f"{up.plan_late:,} SLA violations: not a bound")
    lines.append(f"| *LP schedule rounded, run by the engine ({plan_role})* | {up.plan_value:,.1f} | "
                 f"{100 * (base - up.plan_value) / base:.2f} | {dist(up.plan_value)} | — | — |")
    lines.append(f"| *optimum: upper bound (least deadline-meeting run: {best_p})* | {hi:,.1f} | "
                 f"{100 * (base - hi) / base:.2f} | 0 to {100 * width:.2f} | — | 0 |")
    lines.append(f"| *optimum: lower bound (LP)* | {lo.value:,.1f} | {100 * (base - lo.value) / base:.2f} | "
                 f"{-100 * (hi - lo.value) / hi:.2f} to 0 | — | 0 |")
    how = (f"rolling {lo.horizon_steps / 96:g}-day horizons" if lo.rolling else "one LP")
    free = lo.value - lo.baseline_carbon_kg
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
           f"The optimum OPT (the least carbon of a schedule that meets every deadline) lies in [{lo.value:,.1f}, "
           f"{hi:,.1f}] kg: **bracket {100 * width:.2f} %** of the lower bound ({100 * (hi - lo.value) / free:.1f} % "
           f"of the {free:,.1f} kg of it a schedule can change; {lo.baseline_carbon_kg:,.1f} kg, the window's idle, no "
           "schedule changes). A policy's distance from the optimum, (value − OPT) / OPT, lies between (value − "
           "upper) / upper and (value − lower) / lower; a run with SLA violations is not in OPT's set (it may lie "
           "below the upper end, or below OPT: a negative figure). "
           f"Lower: the {lo.kind} bound of `sim_core.optimum` ({how}, "
           f"HiGHS {lo.status}, {lo.solve_s:.0f} s), a bound over schedules that meet every deadline. Upper: the "
           "least value of a run with no SLA violation — the best schedule `bracket` found (the LP's solution rounded "
           "to one (site, dispatch step) per task, also packed tighter and over-booked for the engine's queues, strong "
           "heuristics' runs, every candidate's late tasks started earlier, a local search, the best's tasks moved to "
           "cheaper capacity its run leaves free (refills); every candidate run "
           f"through the engine, drained as the policies: {up.runs} runs, "
           f"{up.sim_s:.0f} s; the best: {up.source}, {up.sla_violations:,} SLA violations; docs/optimum.md), or any "
           f"policy's run without one. Generated by `{cmd}` in "
           f"{time.perf_counter() - t:.0f} s.")
    return "\n".join(lines) + "\n\n" + cap + "\n"


def savings_figure(df, pols: list[str], title: str):
    """Carbon saving against the baseline per allowed delay, on two panels sharing the delay axis: the
    optimum's bound (dashed black) above, the policies below on a scale of their own (the bound is several
    times their savings: on one scale their lines would stack in a thin band). One line per policy in its
    declared style (``sim_core.bench.figures.policy_styles``), each named at its right end (no legend)."""
    from matplotlib.figure import Figure

    from gridshift_plots.style import direct_labels
    from sim_core.bench.figures import policy_styles

    styles = policy_styles(pols)
    fig = Figure(figsize=(11, max(6.0, 0.2 * len(pols) + 3.0)), layout="constrained")
    fig.get_layout_engine().set(rect=(0, 0, 0.8, 1))  # the right fifth holds the lines' names
    bound_ax, ax = fig.subplots(2, 1, sharex=True, height_ratios=(1, 3))
    s = df.filter(df["policy"] == "optimum (bound)").sort("allowed_delay_h")
    bx, by = s["allowed_delay_h"].to_numpy(), s["saving_pct"].to_numpy()
    bound_ax.plot(bx, by, color="k", lw=2, ls="--", marker="*", ms=7)
    bound_ax.set_ylabel("bound (%)")
    bound_ax.set_title(title, fontsize=8)
    ends = []
    for p in pols:
        s = df.filter(df["policy"] == p).sort("allowed_delay_h")
        x, y = s["allowed_delay_h"].to_numpy(), s["saving_pct"].to_numpy()
        ax.plot(x, y, ms=4, lw=1, **styles[p])
        ends.append((p, x[-1], y[-1], styles[p]["color"]))
    ax.set_xlabel("allowed delay of every task (h)")
    ax.set_ylabel(f"carbon saving vs {BASELINE} (%)")
    for a in (bound_ax, ax):
        a.grid(True, alpha=0.3)
    bound_ax.tick_params(labelbottom=False)
    direct_labels(bound_ax, [("optimum (bound)", bx[-1], by[-1], "k")])
    direct_labels(ax, ends)
    return fig


def figure(sc, days: float, seed: int, path: Path, what: str) -> None:
    import sim_core
    from gridshift_plots.style import save_png
    from sim_core.bench.gap import delay_sweep

    pols = [p for p in sim_core.POLICIES if p != BASELINE]
    df = delay_sweep(sc, pols, DELAYS_H, seed=seed, days=days, baseline=BASELINE)
    save_png(savings_figure(df, pols, f"savings vs allowed delay, {days:g} days, seed {seed}\n{what}"), path)


def main() -> None:
    ap = argparse.ArgumentParser()
    add_bundle_args(ap, "a synthetic 5-site bundle instead of a real one")
    ap.add_argument("--days", type=float, default=7.0)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--tasks-per-day", type=int, default=1000)
    ap.add_argument("--no-figure", action="store_true")
    ap.add_argument("--horizon-days", type=float, default=None,
                    help="the bound's rolling horizons (default: one LP over the window and its drain)")
    ap.add_argument("--out", type=Path, default=ROOT / "docs" / "optimum_table.md")
    args = ap.parse_args()
    import sim_core
    from gridshift.atomic import atomic_write_bytes

    argv = list(sys.argv[1:])
    # the user's home and mirror are not the reader's: name the bundle by its id
    argv = [f"<home>/bundles/{Path(a).name}" if i and argv[i - 1] == "--bundle" else
            "<home>" if i and argv[i - 1] == "--home" else "<mirror>" if i and argv[i - 1] == "--mirror" else a
            for i, a in enumerate(argv)]
    cmd = "./run.sh python benchmarks/optimum_table.py " + " ".join(argv)
    with tempfile.TemporaryDirectory() as tmp:
        if args.synthetic:
            from sim_core.testing import reference_bundle

            n_days = int(args.days) + 1
            path = reference_bundle(tmp, n_tasks=args.tasks_per_day * n_days, n_steps=96 * n_days, name="table")
            what = (f"synthetic 5-site bundle (reference cluster, synthetic signals, {args.tasks_per_day:,} "
                    "synthetic tasks/day)")
        else:
            path, what = chosen_bundle(args)
        sc = sim_core.load(path)
        body = table(sc, args.days, args.seed, cmd.strip(), what, args.horizon_days)
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
