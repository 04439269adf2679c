"""Print the README's main-job comparison table (markdown) from a ``compare --out`` folder.

    uv run python benchmarks/main_job_table.py results/

Reads ``summary.parquet`` (mean ± 95 % CI over seeds, savings paired per seed vs ``local_only``) and
``runs.parquet`` (mean waiting time); prints one row per policy in sweep order. Water is the site
cooling water (``water_l``), mean CPU utilisation the capacity-weighted share of core-steps in use
(``mean_cpu_util_frac``, in %).
"""

from __future__ import annotations

import sys
from pathlib import Path

import polars as pl

COLUMNS = [  # (metric, header, with saving, decimals, scale)
    ("carbon_kg", "facility carbon kg", True, 0, 1.0),
    ("transfer_carbon_kg", "transfer carbon kg", False, 0, 1.0),
    ("carbon_incl_transfer_kg", "carbon incl. transfers kg", True, 0, 1.0),
    ("cost_incl_transfer_usd", "cost incl. transfers USD", True, 0, 1.0),
    ("total_kwh", "energy kWh", False, 0, 1.0),
    ("water_l", "water L", True, 0, 1.0),
    ("mean_cpu_util_frac", "mean CPU util %", False, 1, 100.0),
    ("sla_violation_rate", "SLA violations %", False, 2, 100.0),
]


def _pm(mean: float, ci: float, decimals: int, scale: float = 1.0) -> str:
    m, c = mean * scale, ci * scale
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
    head.append("mean wait h")
    lines = ["| " + " | ".join(head) + " |", "|---|" + "---:|" * (len(head) - 1)]
    for p in policies:
        cells = [p]
        for metric, _, saving, dec, scale in COLUMNS:
            r = s.filter((pl.col("policy") == p) & (pl.col("metric") == metric)).row(0, named=True)
            cells.append(_pm(r["mean"], r["ci95"], dec, scale))
            if saving:
                cells.append(_pm(r["savings_vs_local_only_pct"], r["savings_ci95_pct"], 2))
        w = wait.filter(pl.col("policy") == p)["mean_wait_s"][0] / 3600.0
        cells.append(f"{w:.2f}")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines).replace("-", "−").replace("|−−−|", "|---|").replace("−−−:", "---:")


if __name__ == "__main__":
    print(table(Path(sys.argv[1] if len(sys.argv) > 1 else "results")))
    print(f"\n(command: uv run python benchmarks/main_job_table.py {sys.argv[1] if len(sys.argv) > 1 else 'results'})")
