"""The main job's results table (docs/results.md) from a ``compare --out`` folder.

    ./run.sh python benchmarks/main_job_table.py results/            # print the table
    ./run.sh python benchmarks/main_job_table.py results/ --write    # also write docs/results.md
    ./run.sh python benchmarks/main_job_table.py rack/ --write --section rack_job   # the rack preset's table

Reads ``summary.parquet`` (mean ± 95 % CI over seeds, savings paired per seed vs ``local_only``),
``runs.parquet`` (mean waiting time) and ``compare.json`` (bundle id, seeds, options); one row per policy
in sweep order, the share of tasks late beside the carbon (``sim_core.sla.late_rule``) and the saving at matched
service (``sim_core.bench.service``), then that ranking. Water is the site cooling water (``water_l``), mean CPU
utilisation the capacity-weighted share of core-steps in use (``mean_cpu_util_frac``, in %). ``--write`` replaces
the ``main_job`` section of docs/results.md (the text around it is kept) and copies the sweep's ``tradeoff.png``
and ``frontier.png`` to docs/img/tradeoff_main_job.png and docs/img/frontier_main_job.png; ``--section NAME``
writes the section and figures named NAME instead (``rack_job``: the main job at the rack preset with V100s;
``carbonflex_job``: CarbonFlex on the main job's bundle, swept beside ``local_only`` after the others).
"""

from __future__ import annotations

import argparse
import json
import shutil
from pathlib import Path

import polars as pl

from benchmarks._report import ROOT, update_section
from sim_core.bench import service
from sim_core.sla import late_rule

RESULTS_MD = ROOT / "docs" / "results.md"
FIGURE = ROOT / "docs" / "img" / "tradeoff_main_job.png"
FRONTIER = ROOT / "docs" / "img" / "frontier_main_job.png"

COLUMNS = [  # (metric, header, with saving, decimals, scale)
    ("carbon_kg", "facility carbon kg", True, 0, 1.0),
    ("transfer_carbon_kg", "transfer carbon kg", False, 0, 1.0),
    ("carbon_incl_transfer_kg", "carbon incl. transfers kg", True, 0, 1.0),
    ("sla_violation_rate", "tasks late %", False, 2, 100.0),
    ("cost_incl_transfer_usd", "cost incl. transfers USD", True, 0, 1.0),
    ("total_kwh", "energy kWh", False, 0, 1.0),
    ("water_l", "water L", True, 0, 1.0),
    ("mean_cpu_util_frac", "mean CPU util %", False, 1, 100.0),
]


def _pm(mean: float | None, ci: float | None, decimals: int, scale: float = 1.0) -> str:
    """mean ± ci; "n/a" where the summary has none (a saving against a baseline that used none of it)."""
    if mean is None:
        return "n/a"
    m, c = mean * scale, (ci or 0.0) * scale
    if decimals == 0:
        return f"{m:,.0f} ± {c:,.0f}" if abs(c) >= 0.5 else f"{m:,.0f}"
    return f"{m:,.{decimals}f} ± {c:,.{decimals}f}"


def table(folder: Path) -> str:
    s = pl.read_parquet(folder / "summary.parquet")
    runs = pl.read_parquet(folder / "runs.parquet")
    policies = list(dict.fromkeys(runs["policy"].to_list()))
    wait = runs.group_by("policy").agg(pl.col("mean_wait_s").mean())
    head = ["policy"]
    for _, h, saving, _, _ in COLUMNS:
        head += [h] + (["saving %"] if saving else [])
    head += ["saving at matched service %", "mean wait h"]
    matched = {r["policy"]: r for r in service.matched_service(s, policies).iter_rows(named=True)}
    lines = ["| " + " | ".join(head) + " |", "|---|" + "---:|" * (len(head) - 1)]
    for p in policies:
        cells = [p]
        for metric, _, saving, dec, scale in COLUMNS:
            r = s.filter((pl.col("policy") == p) & (pl.col("metric") == metric)).row(0, named=True)
            cells.append(_pm(r["mean"], r["ci95"], dec, scale))
            if saving:
                cells.append(_pm(r["savings_vs_local_only_pct"], r["savings_ci95_pct"], 2))
        m = matched[p]["matched_saving_pct"]
        cells.append("not comparable" if m is None else f"{m:.2f}")
        w = wait.filter(pl.col("policy") == p)["mean_wait_s"][0] / 3600.0
        cells.append(f"{w:.2f}")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines).replace("-", "−").replace("|−−−|", "|---|").replace("−−−:", "---:")


def section(folder: Path, name: str = "main_job") -> str:
    """The generated part of docs/results.md: what was run, on which bundle, and the table."""
    params = json.loads((folder / "compare.json").read_text())
    opts = params["options"]
    return "\n".join([
        f"Bundle `{params['bundle_id']}`, gridshift {params['gridshift_version']}, seeds "
        f"{', '.join(map(str, params['seeds']))}, {opts['steps']:,} steps from step {opts['start_step']}, "
        f"power `{opts['power']}`, forecast `{opts['forecast']}` issued every {opts['forecast_issue_every_min']} min "
        f"({len(params['policies'])} policies). Mean ± 95 % CI over the seeds (Student t); savings paired per seed "
        f"vs `local_only`.",
        "",
        table(folder),
        "",
        f"Late: {late_rule(opts.get('sla_multiplier', 1.5))} (the code's rule, `sim_core/sla.py`); `tasks late %` "
        "is the share of the tasks started. " + service.METHOD[0].upper() + service.METHOD[1:] + ". Ranked at "
        "matched service:",
        "",
        service.markdown(service.matched_service(pl.read_parquet(folder / "summary.parquet"))).split("\n\n")[0],
        "",
        f"![cost vs carbon of the policies × seeds on bundle {params['bundle_id']}](img/tradeoff_{name}.png)",
        "",
        f"![carbon vs tasks late of the policies × seeds on bundle {params['bundle_id']}: the frontier at equal "
        f"service](img/frontier_{name}.png)",
        "",
        "Generated by `./run.sh python benchmarks/main_job_table.py <compare --out folder> --write"
        + ("" if name == "main_job" else f" --section {name}") + "`.",
    ])


def write(folder: Path, results_md: Path = RESULTS_MD, figure: Path = FIGURE, frontier: Path = FRONTIER,
          name: str = "main_job") -> str:
    """Replace the ``name`` section of ``results_md`` (the text around it kept) and copy the sweep's
    cost-vs-carbon and carbon-vs-lateness figures to ``figure`` and ``frontier``; return the section."""
    body = section(folder, name)
    update_section(name, body, results_md)
    shutil.copyfile(folder / "tradeoff.png", figure)
    shutil.copyfile(folder / "frontier.png", frontier)
    return body


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description="the main job's results table from a compare --out folder")
    ap.add_argument("folder", nargs="?", default="results", type=Path)
    ap.add_argument("--write", action="store_true", help="write docs/results.md and its figure")
    ap.add_argument("--section", default="main_job", choices=("main_job", "rack_job", "carbonflex_job"),
                    help="the page's section (and figures) to write: the main job, it at the rack preset, or "
                         "CarbonFlex's runs on the main job's bundle beside local_only (a sweep of their own)")
    args = ap.parse_args(argv)
    figure, frontier = (ROOT / "docs" / "img" / f"{kind}_{args.section}.png" for kind in ("tradeoff", "frontier"))
    print(write(args.folder, figure=figure, frontier=frontier, name=args.section) if args.write
          else section(args.folder, args.section))
    if args.write:
        print(f"updated {RESULTS_MD.relative_to(ROOT)}, {figure.relative_to(ROOT)} and {frontier.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
