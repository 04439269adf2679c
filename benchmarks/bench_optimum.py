"""Offline-optimum benchmark: the optimum bracketed (``sim_core.optimum.bracket``: the LP's lower bound, and
the best deadline-meeting schedule found, run through the engine) on the main job's bundle (default: its
default export, ``gridshift export --regions US-CAL-CISO,DE-LU,SG --year 2023``, found or built in ``--home``;
``--bundle`` another; ``--synthetic`` the reference 5-DC cluster with a synthetic workload at the rack-sized main
job's rate of ~3,400 tasks a day): a 7-day window as one LP, the same window as rolling horizons of 1 and 2 days
(the horizon's effect), and a full year by rolling horizons.

    ./run.sh python benchmarks/bench_optimum.py --home DIR --no-year --week-horizons --mip-hours   # the page's
    ./run.sh python benchmarks/bench_optimum.py --bundle DIR/bundles/<id> --quick --no-write        # one week
    ./run.sh python benchmarks/bench_optimum.py --synthetic --year-only --year-horizon-days 1 --no-write
    ./run.sh python benchmarks/bench_optimum.py --bundle DIR/bundles/<id> --year-only --year-horizon-days 2 \\
        --year-variants 0 --checkpoint CKPT   # the page's year (its own section)
    ./run.sh python benchmarks/bench_optimum.py --quick --formulation classes   # the earlier LP, to compare
    ./run.sh python benchmarks/bench_optimum.py --quick --no-idle-floor         # the bound without its idle floor
    ./run.sh python benchmarks/bench_optimum.py --quick --no-rate-curves        # the curves without each rate

Per row: the bound and its LP's size, the upper bound, the bracket's width ((upper - lower) / lower, and as a
share of the part of the bound a schedule can change), the wall-clock seconds of the LP (set-up, assembly,
HiGHS; HiGHS alone beside it), of the rounding and of the engine's run, and the process CPU time (the machine
is shared: wall time grows with the load, CPU time much less). HiGHS runs with ``threads=2``.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks._main_bundle import add_bundle_args, chosen_bundle  # noqa: E402
from benchmarks._report import machine, publish  # noqa: E402

#: the main job's workload rate: 1.25 M tasks a year (README) -> ~3,425 a day
TASKS_PER_DAY = 3425
#: the long window's refill budget by default (``year_search``): six rounds at the plan's wake spare, as the page's
#: year ran (a year's run takes ~26 s at a tenth of the main job's size, a round several runs), where the week's
#: default (``refill.REFILL_ROUNDS``) runs up to 40 in phases
YEAR_REFILL_ROUNDS = 6
YEAR_REFILL_SPARES = (2.0,)


def measure(sc, name: str, days: float, horizon_days: float | None, lp: dict, clean: dict,
            search: dict | None = None) -> tuple[str, dict]:
    """One bracket, timed; its row is printed at once (the year takes hours on a loaded 2-core machine).
    ``clean``: {days: (policy, kg)}, the least run with no SLA violation of the window (computed once);
    ``search``: the upper end's search budget (``bracket``'s arguments; none: its defaults)."""
    from sim_core.optimum import bracket

    c0, t0 = time.process_time(), time.perf_counter()
    b = bracket(sc, seed=0, days=days, horizon_days=horizon_days, workload="origins", lp=lp,
                **(search or {}))  # (drained: the default)
    m = {"wall_s": time.perf_counter() - t0, "cpu_s": time.process_time() - c0, "b": b, "days": days,
         "horizon_days": horizon_days, "search": search or {}}
    if days not in clean:
        clean[days] = least_clean_run(sc, days)
    best = clean[days]
    if b.upper.sla_violations == 0 and b.upper.value <= best[1]:  # (a heuristic's run is also a candidate)
        best = (f"found: {b.upper.source}", b.upper.value)
    m["best"] = best
    print(row(name, m), flush=True)
    return name, m


def least_clean_run(sc, days: float) -> tuple[str, float]:
    """The least carbon of a registered policy's run (drained, the bound's work) with no SLA violation:
    a schedule of the optimum's set, so an upper bound of it."""
    import sim_core

    best = ("none", float("inf"))
    for p in sim_core.POLICIES:
        tot = sim_core.run(sc, p, seed=0, days=days, workload="origins").totals
        if tot["sla_violations"] == 0 and tot["carbon_incl_transfer_kg"] < best[1]:
            best = (p, tot["carbon_incl_transfer_kg"])
    return best


def row(name: str, m: dict) -> str:
    b = m["b"]
    lo, up = b.lower, b.upper
    free = lo.value - lo.baseline_carbon_kg
    lp_s = lo.solve_s + lo.build_s
    who, hi = m["best"]
    return (f"| {name} | {lo.steps / 96:.2f} | {lo.n_tasks:,} | {lo.n_cols:,} | {lo.value:,.1f} | "
            f"{lo.baseline_carbon_kg:,.1f} | {up.plan_value:,.1f} | {up.plan_late} | {hi:,.1f} ({who}) | "
            f"{100 * (hi - lo.value) / lo.value:.2f} | {100 * (hi - lo.value) / free:.1f} | "
            f"{lp_s:.1f} ({lo.solve_s:.1f}) | {up.plan_s:.1f} | {up.sim_s:.1f} | {m['wall_s']:.1f} | "
            f"{m['cpu_s']:.1f} |")


def mip_rows(tmp: str, tasks_per_day: int, windows_days: list[float], time_limit_s: float, bench_sc=None,
             windows_h: tuple[float, ...] = ()) -> list[str]:
    """The integrality gap on small windows (``sim_core.optimum.mip``): a 3-site cut of the reference cluster with
    ``tasks_per_day`` synthetic tasks a day (windows of ``windows_days``), and the benchmark's own bundle
    ``bench_sc`` (windows of ``windows_h`` hours from its start), one row each: the fluid LP's bound, the integer
    model's LP relaxation and its MIP (each task one whole run), HiGHS's status and times."""
    import sim_core
    from sim_core.optimum import integrality_gap
    from sim_core.testing import reference_bundle

    cases = []
    if windows_days:
        n_days = int(max(windows_days)) + 2
        syn = sim_core.load(reference_bundle(tmp, n_tasks=tasks_per_day * n_days, n_steps=96 * n_days, n_dc=3,
                                             name="optimum-mip"))
        cases += [(f"synthetic, {d:g} day{'s' if d != 1 else ''}", syn, d * 96) for d in windows_days]
    if bench_sc is not None:
        cases += [(f"{bench_sc.bundle_id}, {h:g} h", bench_sc, h * 4) for h in windows_h]
    out = []
    for name, sc, steps in cases:
        t0 = time.perf_counter()
        g = integrality_gap(sc, seed=0, steps=int(round(steps)), workload="origins", time_limit_s=time_limit_s)
        out.append(f"| {name} | {g.n_tasks:,} | {g.n_columns:,} | {g.fluid_lp:,.2f} | "
                   f"{g.relaxation:,.2f} | {g.mip:,.2f} | {g.mip_bound:,.2f} | {g.status} | {100 * g.gap:.2f} | "
                   f"{100 * g.gap_of_changeable:.2f} | "
                   f"{100 * g.gap_to_fluid:.2f} | {g.relax_s:.1f} | {g.mip_s:.1f} | {time.perf_counter() - t0:.1f} |")
        print(out[-1], flush=True)
    return out


def power_slack(sc, res, lower) -> tuple[list[str], int, list[str], list[str]]:
    """The markdown rows of ``sim_core.optimum.slack.bracket_slack`` at ``res``'s state (a drained run of the
    bound's window: the bracket's upper end, or a policy's): the power bound by term against the engine's, the
    count of steps where the bound exceeds the engine (must be 0), the decomposition of upper - lower, and per site
    its mean intensity and the LP's and the run's shares of the busy GPU-hours."""
    from sim_core.optimum.slack import TERMS, bracket_slack

    s = bracket_slack(sc, res, lower)
    rows = [f"| {nm} | {lo:,.1f} | {en:,.1f} | {en - lo:,.1f} | {100 * (en - lo) / en:.1f} |"
            for nm, lo, en in zip(TERMS, s.bound_kg, s.engine_kg, strict=True)]
    width = s.upper_kg - s.lower_kg
    parts = (("lower bound (the LP)", s.lower_kg, None),
             ("the schedule: where and when its work runs, its transfers, its drain (the bound at the run's busy "
              "resources with the fewest servers that hold them, + its transfers, - the lower bound)",
              s.schedule_kg, 1),
             ("servers on or waking beyond the fewest that hold the busy resources (whole servers, the spare pool "
              "kept on top of the work, queued work, wakes)", s.servers_kg, 1),
             ("the power bound's error at the run's own state (the engine's facility carbon - the bound's)",
              s.power_kg, 1),
             ("upper end (the run)", s.upper_kg, None))
    dec = [f"| {nm} | {v:,.1f} | {'' if sh is None else f'{100 * v / width:.1f}'} |" for nm, v, sh in parts]
    share = s.gpu_share
    site_rows = [f"| {sc.locations[d]} | {s.site_ci[d]:.0f} | {share[0, d]:.1f} | {share[1, d]:.1f} |"
                 for d in range(sc.n_dc)]
    return rows, s.steps_above, dec, site_rows


def findings(rows: list[tuple[str, dict]]) -> str:
    """The sentences the table's rows support: each rolling-horizon bound against the one-LP bound of the
    same window (the horizon's effect), and whether each window's bracket is closed by a deadline-meeting run."""
    out = []
    one = {m["days"]: m["b"].lower.value for _, m in rows if m["horizon_days"] is None}
    for name, m in rows:
        b, who = m["b"], m["best"][0]
        if m["horizon_days"] is not None and m["days"] in one:
            below = 100 * (1 - b.lower.value / one[m["days"]])
            out.append(f"{name}: the bound is {below:.1f} % below one LP over the same window (work that could run on "
                       "either side of a horizon's boundary is required in neither, so shorter horizons loosen it).")
        if b.lower.resumed_horizons:
            out.append(f"{name}: {b.lower.resumed_horizons} of the bound's {b.lower.n_horizons} horizons were read "
                       "from the checkpoint, so its LP seconds are those of their first solve and the total wall time "
                       "counts this run only.")
        if who == "none":
            out.append(f"{name}: no run meets every deadline, so the bracket has no upper end.")
        else:
            plan = ("meets every deadline" if b.upper.plan_late == 0 else
                    f"starts {b.upper.plan_late:,} tasks late (not a bound)")
            end = f"the best schedule the search found ({who[7:]})" if who.startswith("found: ") else \
                f"`{who}`'s run, lower than every schedule the search found"
            out.append(f"{name}: the LP schedule rounded and run by the engine {plan}; {b.upper.runs} engine runs "
                       f"(candidates, repairs, local search, {b.upper.refills} refill rounds kept); the upper end is "
                       f"{end}.{refill_words(b.upper)}")
    return "\n".join(f"- {x}" for x in out)


def refill_words(upper) -> str:
    """The best run's value after each refill round kept, with the round's wake spare, so the page shows whether
    the rounds still paid when they stopped (each phase at its first round finding nothing lower, or the budget)."""
    if not upper.refill_values:
        return ""
    steps = " → ".join([f"{upper.refill_from:,.1f}"] + [f"{v:,.1f} ({w:g})" for v, w in
                                                          zip(upper.refill_values, upper.refill_spares, strict=True)])
    return f" The refill rounds, kg (the round's wake spare): {steps}."


def search_words(search: dict) -> str:
    """The upper end's search as run (``bracket``'s arguments ``search``, its defaults for the rest), in words for
    the section's caption: which candidates, and how many local-search runs and refill rounds at most."""
    from sim_core.optimum.refill import REFILL_ROUNDS, REFILL_SPARES
    from sim_core.optimum.search import HEURISTICS, SEARCH_RUNS
    from sim_core.optimum.upper import PLAN_HOLD, PLAN_VARIANTS

    n_var = len(search.get("variants", PLAN_VARIANTS))
    hold = search.get("hold", PLAN_HOLD)
    heur = search.get("heuristics", HEURISTICS)
    refills = search.get("refill_rounds", REFILL_ROUNDS)
    spares = ", ".join(f"{w:g}" for w in search.get("refill_spares", REFILL_SPARES))
    parts = ["the LP plan"] + ([f"{n_var} tighter roundings of it"] if n_var else []) + ["the LP's assignment"]
    parts += [f"the assignment of an LP on each site's capacity / {hold:g} (a plan, not a bound)"] if hold else []
    parts += [f"the runs of {', '.join(f'`{h}`' for h in heur)}"] if heur else []
    return (f"{', '.join(parts)}, each repaired; a local search of {SEARCH_RUNS} runs; up to {refills} refill "
            f"round{'s' if refills != 1 else ''} in phases of wake spare {spares}")


def searches_words(rows: list[tuple[str, dict]]) -> str:
    """The searches the rows ran (:func:`search_words`), once when they share one, else per row by name."""
    words = {name: search_words(m["search"]) for name, m in rows}
    if len(set(words.values())) <= 1:
        return next(iter(words.values()), search_words({}))
    return "; ".join(f"{name}: {w}" for name, w in words.items())


def candidate_rows(rows: list[tuple[str, dict]]) -> list[str]:
    """Every candidate of each row's search (``UpperResult.candidates``: its engine value after its repairs, and
    its late tasks), least first: which start the upper end came from, and how far the others were."""
    out = []
    for name, m in rows:
        for cand, (value, late) in sorted(m["b"].upper.candidates.items(), key=lambda kv: (kv[1][1] > 0, kv[1][0])):
            out.append(f"| {name} | {cand} | {value:,.1f} | {late:,} |")
    return out


def year_search(args) -> dict:
    """The long window's upper-end search, as given (``--year-heuristics``, ``--year-variants``,
    ``--year-refill-rounds``, ``--year-refill-spares``): a year's candidate runs, each repaired, are what its search
    costs (126 runs with six refill rounds and no tighter roundings took 55 min at a tenth of the main job's size,
    BENCHMARKS.md), so a year's search is budgeted: by default six refill rounds at the plan's wake spare, where
    the week's default runs up to 40 in six phases, and no planning LP (``upper.PLAN_HOLD``: a second LP of the
    year, about an hour)."""
    from sim_core.optimum.upper import PLAN_VARIANTS

    out: dict = {}
    if args.year_heuristics is not None:
        out["heuristics"] = tuple(args.year_heuristics)
    if args.year_variants is not None:
        out["variants"] = PLAN_VARIANTS[:args.year_variants]
    out["refill_rounds"] = args.year_refill_rounds
    out["refill_spares"] = tuple(args.year_refill_spares)
    out["hold"] = None
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--quick", action="store_true", help="the 7-day window only")
    ap.add_argument("--no-year", action="store_true", help="leave out the full year")
    ap.add_argument("--year-only", action="store_true", help="the full year only")
    ap.add_argument("--year-horizon-days", type=float, nargs="+", default=[7.0],
                    help="the long window's horizon lengths (one row each: the horizon's effect)")
    ap.add_argument("--year-days", type=float, default=365.0,
                    help="the long window's length (a shorter one where a year does not finish in time)")
    ap.add_argument("--year-heuristics", nargs="*", default=None,
                    help="the long window's heuristic candidates (default: bracket's, HEURISTICS)")
    ap.add_argument("--year-variants", type=int, default=None,
                    help="the long window's rounding variants: the first N of PLAN_VARIANTS (default: all)")
    ap.add_argument("--year-refill-rounds", type=int, default=YEAR_REFILL_ROUNDS,
                    help="the long window's refill rounds at most (bracket's default: REFILL_ROUNDS)")
    ap.add_argument("--year-refill-spares", type=float, nargs="+", default=list(YEAR_REFILL_SPARES),
                    help="the long window's refill phases, a wake spare each (bracket's default: REFILL_SPARES)")
    ap.add_argument("--week-horizons", type=float, nargs="*", default=[2.0, 1.0],
                    help="the rolling horizons of the 7-day window's extra rows")
    add_bundle_args(ap, "the reference 5-DC cluster with a synthetic workload instead of a bundle")
    ap.add_argument("--formulation", default="cumulative", choices=["cumulative", "classes"])
    ap.add_argument("--no-idle-floor", action="store_true", help="the bound without its idle floor (to compare)")
    ap.add_argument("--no-rate-curves", action="store_true",
                    help="the cumulative curves without each member's rate (the earlier bound, to compare)")
    ap.add_argument("--mip-days", type=float, nargs="*", default=[1.0, 2.0],
                    help="window lengths of the integrality-gap rows (none: no rows)")
    ap.add_argument("--mip-tasks-per-day", type=int, default=60,
                    help="synthetic tasks a day of the integrality-gap bundle (one binary per task, site and start)")
    ap.add_argument("--mip-hours", type=float, nargs="*", default=[1.0],
                    help="window lengths (h) of integrality-gap rows on the benchmark's own bundle (none: no rows)")
    ap.add_argument("--mip-time-limit", type=float, default=240.0, help="HiGHS's MIP time limit per window (s)")
    ap.add_argument("--slack-policy", default="upper",
                    help="the run the section's first bracket (the week's one LP, or the year) is decomposed at: "
                         "'upper' (its upper end's run), a policy, or ''")
    ap.add_argument("--checkpoint", type=Path, default=None,
                    help="keep each horizon's LP solution in this folder, keyed by the LP: an interrupted run "
                         "resumes where it stopped, a run with the same LPs reads them")
    ap.add_argument("--no-write", action="store_true", help="print only (BENCHMARKS.md untouched)")
    args = ap.parse_args()
    import sim_core
    from sim_core.testing import reference_bundle

    year = not (args.quick or args.no_year)
    days_total = args.year_days if year else 7
    rows = []
    clean: dict = {}
    lp = {"formulation": args.formulation, "idle_floor": not args.no_idle_floor, "checkpoint": args.checkpoint,
          "rate_curves": not args.no_rate_curves}
    with tempfile.TemporaryDirectory() as tmp:
        if args.synthetic:
            n_days = min(int(days_total) + 1, 365)  # (a bundle holds one year at most)
            path = reference_bundle(tmp, n_tasks=TASKS_PER_DAY * n_days, n_steps=96 * n_days, name="optimum-bench")
            what = (f"Reference 5-DC cluster, synthetic signals, a synthetic workload at the rack-sized main job's "
                    f"rate ({TASKS_PER_DAY:,} tasks/day)")
        else:
            path, what = chosen_bundle(args)
            what = what[0].upper() + what[1:]
        sc = sim_core.load(path)
        if not args.year_only:
            rows.append(measure(sc, "7 days, one LP", 7, None, lp, clean))
        if not (args.quick or args.year_only):
            for h in args.week_horizons:
                rows.append(measure(sc, f"7 days, rolling {h:g}-day horizons", 7, h, lp, clean))
        if year:
            search = year_search(args)
            for h in args.year_horizon_days:
                rows.append(measure(sc, f"{days_total:g} days, rolling {h:g}-day horizons", days_total, h, lp, clean,
                                    search))
        slack = None
        if args.slack_policy and rows:  # the section's first window (the week's one LP, or the year)
            first, fm = rows[0]
            br = fm["b"]
            res = br.upper.run if args.slack_policy == "upper" else \
                sim_core.run(sc, args.slack_policy, seed=0, days=fm["days"], workload="origins")
            who = f"the upper end's run ({br.upper.source})" if args.slack_policy == "upper" else \
                f"`{args.slack_policy}`'s drained run"
            slack = (*power_slack(sc, res, br.lower), who, first)
        mip = mip_rows(tmp, args.mip_tasks_per_day, args.mip_days, args.mip_time_limit, sc, args.mip_hours) \
            if (args.mip_days or args.mip_hours) and not args.year_only else []
    load = os.getloadavg()[0]
    cmd = "./run.sh python benchmarks/bench_optimum.py" + (" --quick" if args.quick else "")
    cmd += f" --bundle <home>/bundles/{args.bundle.name}" if args.bundle is not None else ""
    cmd += " --synthetic" if args.synthetic else ""
    cmd += " --home <home>" if args.bundle is None and not args.synthetic else ""
    cmd += " --no-year" if args.no_year else ""
    cmd += " --year-only" if args.year_only and year else ""
    cmd += f" --year-days {args.year_days:g}" if year and args.year_days != 365 else ""
    if year and args.year_horizon_days != [7.0]:
        cmd += " --year-horizon-days " + " ".join(f"{h:g}" for h in args.year_horizon_days)
    if year and args.year_heuristics is not None:
        cmd += " --year-heuristics" + "".join(f" {h}" for h in args.year_heuristics)
    cmd += f" --year-variants {args.year_variants}" if year and args.year_variants is not None else ""
    if year and args.year_refill_rounds != YEAR_REFILL_ROUNDS:
        cmd += f" --year-refill-rounds {args.year_refill_rounds}"
    if year and tuple(args.year_refill_spares) != YEAR_REFILL_SPARES:
        cmd += " --year-refill-spares" + "".join(f" {w:g}" for w in args.year_refill_spares)
    if not (args.quick or args.year_only) and args.week_horizons != [2.0, 1.0]:
        cmd += " --week-horizons" + "".join(f" {h:g}" for h in args.week_horizons)
    cmd += f" --formulation {args.formulation}" if args.formulation != "cumulative" else ""
    cmd += " --no-idle-floor" if args.no_idle_floor else ""
    cmd += " --no-rate-curves" if args.no_rate_curves else ""
    cmd += f" --slack-policy {args.slack_policy or chr(39) * 2}" if args.slack_policy != "upper" else ""
    if args.mip_days != [1.0, 2.0]:
        cmd += " --mip-days" + "".join(f" {d:g}" for d in args.mip_days)
    cmd += f" --mip-tasks-per-day {args.mip_tasks_per_day}" if args.mip_tasks_per_day != 60 else ""
    cmd += f" --mip-time-limit {args.mip_time_limit:g}" if args.mip_time_limit != 240.0 else ""
    if args.mip_hours != [1.0]:
        cmd += " --mip-hours" + "".join(f" {h:g}" for h in args.mip_hours)
    section = "optimum-year" if args.year_only else "optimum"
    title = "Offline optimum over a year" if args.year_only else "Offline optimum bracketed"
    lines = [f"## {title} (LP lower bound, engine-run upper bound)", "",
             f"`{cmd}` — {machine()}, load average {load:.1f} when it finished (a shared machine). {what}, "
             f"seed 0, runs drained (equal work: the bound covers the window and the drain to the last deadline), "
             f"formulation `{args.formulation}`, default class key, rate curves "
             f"{'off' if args.no_rate_curves or args.formulation != 'cumulative' else 'on'}, idle floor "
             f"{'off' if args.no_idle_floor else 'on'} (docs/optimum.md). "
             "Lower: the LP bound (kg CO2 incl. transfers; bound days: the window and the drain to the last "
             "deadline); fixed: the part of it no schedule changes (the window's idle); plan kg: the engine's carbon "
             "of the schedule rounded from the LP, late: its SLA violations (a bound only where late is 0); upper: "
             f"the least run with no SLA violation (the best schedule `bracket` found — candidates: "
             f"{searches_words(rows)} — or a registered policy's run), a "
             "schedule of the optimum's set; bracket: (upper - lower) / lower, and as a share of lower - fixed; "
             "LP s: set-up + assembly + HiGHS (HiGHS alone); "
             "engine s: every candidate's run; total wall/CPU s: the bracket (LP, rounding, search), the policies' "
             "runs not included.", "",
             "| window | bound days | tasks | LP columns | lower kg | fixed kg | plan kg | late | upper kg (run) "
             "| bracket % | of changeable % | LP s | rounding s | engine s | total wall s | CPU s |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    lines += [row(name, m) for name, m in rows]
    lines += ["", findings(rows)]
    if rows:
        lines += ["", "The upper end's candidates (each an engine run of the window, after its repairs; late: its "
                  "tasks that missed their deadline, a bound only where 0), least first:", "",
                  "| window | candidate | kg | late |", "|---|---|---:|---:|", *candidate_rows(rows)]
    if slack:
        lines += ["", f"Where the bracket of {slack[5]} lies, at {slack[4]}: its busy resources and servers per site "
                  "and step "
                  "put into the bound's terms (`optimum.power.bound_at`, raised to the idle floor), kg CO2 (kWh x "
                  "intensity); each part's share of upper - lower.", "",
                  "| part | kg | of the bracket % |", "|---|---:|---:|", *slack[2], "",
                  "Where the work runs: each site's mean intensity over the window and its share of the busy "
                  "GPU-hours in the LP's solution and in that run.", "",
                  "| site | mean g/kWh | LP GPU-h % | run GPU-h % |", "|---|---:|---:|---:|", *slack[3], "",
                  "The power bound at that run's state by term, against the engine's own; the servers on are split "
                  "into GPU and CPU-only ones where that gives the least IT heat (the engine does not report the "
                  f"split), so the IT row's gap is an upper estimate. Steps where the bound exceeds the engine: "
                  f"{slack[1]}.", "",
                  "| term | bound kg | engine kg | gap kg | gap % |", "|---|---:|---:|---:|---:|", *slack[0]]
    if mip:
        lines += ["", f"Integrality gap on small windows (`sim_core.optimum.integrality_gap`, docs/optimum.md): "
                  f"synthetic: the reference cluster's first 3 sites, synthetic signals, {args.mip_tasks_per_day} "
                  "synthetic tasks a day; and the benchmark's bundle from its start; seed 0, drained (so the bound's "
                  "steps run to the last deadline), `workload=\"origins\"`. Fluid LP: the bound above (`optimum`); "
                  "relaxation: the integer model (one binary per task, site and start: each task one whole run at "
                  "scale 1, starts on the step grid) with its binaries in [0, 1]; MIP: its best integer schedule and "
                  f"HiGHS's dual bound (time limit {args.mip_time_limit:g} s); gap: (MIP - relaxation) / relaxation, "
                  "the same as a share of relaxation - fixed (the part a schedule can change), and (MIP - fluid LP) "
                  "/ fluid LP.",
                  "",
                  "| window | tasks | binaries | fluid LP kg | relaxation kg | MIP kg | MIP bound kg | HiGHS | "
                  "gap % | gap, of changeable % | vs fluid LP % | relaxation s | MIP s | total s |",
                  "|---|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|", *mip]
    publish(section, "\n".join(lines), write=not (args.no_write or args.quick))


if __name__ == "__main__":
    main()
