"""Outputs of a sweep: the files (runs/summary Parquet, compare.json, figures) and the headline
summary as table cells, a caption and Markdown (what the CLI prints and the Dagster asset shows)."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl

from gridshift.atomic import atomic_write_bytes
from gridshift.parquet import parquet_bytes

from ..forecast import caption as forecast_caption
from ..forecast import is_oracle
from ..locality import caption as locality_caption
from ..sla import late_rule
from . import service
from .metrics import BASELINE
from .sweep import Comparison


def write_outputs(cmp: Comparison, out_dir, *, figures: bool = True) -> list:
    """Write runs.parquet, summary.parquet, service.parquet (the ranking at matched service,
    ``bench.service``), compare.json (with the sweep's :func:`assumptions`), summary.md (every headline column and
    the matched-service ranking) and (``figures``) the PNGs into ``out_dir``,
    each atomically. Nothing in them depends on time, host or path: two sweeps give the same bytes."""
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    params = {**cmp.params(), "assumptions": assumptions(cmp)}
    files = [("runs.parquet", parquet_bytes(cmp.runs)), ("summary.parquet", parquet_bytes(cmp.summary)),
             ("service.parquet", parquet_bytes(service.matched_service(cmp.summary, cmp.policies))),
             ("compare.json", (json.dumps(params, indent=1, sort_keys=True) + "\n").encode()),
             ("summary.md", summary_markdown(cmp).encode())]
    if cmp.gap is not None:
        files.append(("gap.parquet", parquet_bytes(cmp.gap)))
    for name, data in files:
        atomic_write_bytes(out / name, data)
        written.append(out / name)
    if figures:
        from . import figures as F  # (matplotlib only when figures are asked for)

        written += F.write_all(cmp, out)
    return written


def assumptions(cmp: Comparison) -> dict[str, str]:
    """The parameters that decide a sweep's conclusions, named next to its results: what the policies
    were told of the future, the carbon accounting basis, what a moved GB costs in energy and where its
    emissions are counted, which GB move (data locality), the datacenters and their cooling design, the
    workload, the power mode and the deadlines."""
    o = cmp.options
    built = (cmp.scenario.manifest.get("parameters", {}) if cmp.scenario is not None else {})
    basis = o.get("carbon_basis") or built.get("carbon_basis") or "bundle default"
    sla = o.get("sla_multiplier")
    return {
        "forecast": forecast_caption(o),
        "carbon basis": str(basis),
        "transfer energy": f"{o.get('transfer_kwh_per_gb')} kWh/GB, emissions at the {o.get('transfer_emissions')} "
                           "grid" if o.get("transfer_emissions") == "mean" else
                           f"{o.get('transfer_kwh_per_gb')} kWh/GB, emissions at the origin's grid",
        "data locality": locality_caption(o),
        "datacenters": f"{built.get('datacenters', 'n/a')}, cooling physics {built.get('physics', 'n/a')}",
        "workload": f"{built.get('workload', 'n/a')} (realisation {o.get('workload')}), flexibility "
                    f"{built.get('flexibility', 'n/a')}",
        "power": str(o.get("power")),
        "deadlines": late_rule(sla),
    }


def assumptions_line(cmp: Comparison) -> str:
    return "assumptions: " + "; ".join(f"{k}: {v}" for k, v in assumptions(cmp).items())


#: Metrics shown in the Markdown summary: name, label, decimals, scale.
HEADLINE = (("cost_incl_transfer_usd", "cost USD", 2, 1.0), ("carbon_incl_transfer_kg", "carbon kg", 2, 1.0),
            ("sla_violation_rate", "tasks late %", 2, 100.0),
            ("total_kwh", "energy kWh", 1, 1.0), ("water_l", "water L", 0, 1.0),
            ("transfer_cost_usd", "transfer USD", 2, 1.0),
            ("mean_cpu_util_frac", "CPU util %", 3, 100.0))
SAVINGS_SHOWN = (("cost_incl_transfer_usd", "cost saving %"), ("carbon_incl_transfer_kg", "carbon saving %"))


def fmt_ci(mean: float | None, ci: float | None, digits: int, scale: float = 1.0) -> str:
    """``mean ± ci`` (``mean`` alone when the CI is undefined; ``n/a`` for a missing/NaN mean)."""
    if mean is None or mean != mean:
        return "n/a"
    s = f"{mean * scale:,.{digits}f}"
    return s if ci is None or ci != ci else f"{s} ± {ci * scale:,.{digits}f}"


def summary_rows(cmp: Comparison) -> tuple[list[str], list[list[str]]]:
    """Header and cells of the headline summary: one row per policy, mean ± 95 % CI over seeds."""
    has_base = BASELINE in cmp.policies
    header = ["policy", *[h[1] for h in HEADLINE], *([s[1] for s in SAVINGS_SHOWN] if has_base else [])]
    rows = []
    mark = " [oracle]" if is_oracle(cmp.options) else ""  # every row of a perfect-foresight sweep says so
    for pol in cmp.policies:
        by = {r["metric"]: r for r in cmp.summary.filter(pl.col("policy") == pol).iter_rows(named=True)}
        cells = [pol + mark] + [fmt_ci(by[m]["mean"], by[m]["ci95"], d, k) for m, _, d, k in HEADLINE]
        if has_base:
            cells += [fmt_ci(by[m]["savings_vs_local_only_pct"], by[m]["savings_ci95_pct"], 2)
                      for m, _ in SAVINGS_SHOWN]
        if cmp.gap is not None:
            g = cmp.gap.filter(pl.col("policy") == pol).row(0, named=True)
            cells += [fmt_ci(g["gap_kg"], g["gap_kg_ci95"], 2), fmt_ci(g["gap_pct"], g["gap_pct_ci95"], 2)]
        rows.append(cells)
    if cmp.gap is not None:
        header += ["gap to optimum kg", "gap to optimum %"]
    return header, rows


def summary_caption(cmp: Comparison) -> str:
    base = (f"savings: per seed vs {BASELINE} (same seed), then mean ± 95 % CI" if BASELINE in cmp.policies
            else f"no savings: {BASELINE} is not in the sweep")
    return (f"{len(cmp.policies)} policies × {len(cmp.seeds)} seeds on bundle {cmp.bundle_id}, "
            f"{cmp.options['steps']} steps from step {cmp.options['start_step']}, gridshift {cmp.gridshift_version}; "
            f"forecast: {forecast_caption(cmp.options)}; "
            f"mean ± 95 % CI (Student t) over seeds; cost and carbon include transfers; {base}"
            + (f"; {gap_caption(cmp)}" if cmp.gap is not None else ""))


def gap_caption(cmp: Comparison) -> str:
    """How the gap column was measured: the bound's kind and its figures (docs/optimum.md)."""
    b = next(iter(cmp.bounds.values()))
    how = f"rolling {b.horizon_steps // 96}-day horizons" if b.rolling else "one LP over the window"
    return (f"gap: carbon incl. transfers minus the offline optimum's {b.kind} lower bound (HiGHS, {how}; "
            f"mean bound {cmp.gap['bound_kg'][0]:,.2f} kg, of which {b.baseline_carbon_kg:,.2f} kg no schedule "
            f"changes for seed {b.seed}), per seed; a bound over schedules meeting every deadline")



def summary_markdown(cmp: Comparison) -> str:
    header, rows = summary_rows(cmp)
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    ranked = service.markdown(service.matched_service(cmp.summary, cmp.policies))
    return ("\n".join(lines) + "\n\n" + summary_caption(cmp) + "\n\n" + assumptions_line(cmp) + "\n"
            + ("\n" + ranked if ranked else ""))


#: The printed table's columns (everything else, energy included, is in the output files): metric, label,
#: decimals, scale, with its 95 % CI. Chosen so that a full-year sweep's table fits 120 columns without cutting
#: a value: the absolute cost is the mean alone (its CI is in summary.md), its saving carries the CI.
COMPACT = (("carbon_incl_transfer_kg", "carbon kg", 0, 1.0, True), ("sla_violation_rate", "late %", 1, 100.0, True),
           ("work_gpu_hours", "GPU-h done", 0, 1.0, True), ("cost_incl_transfer_usd", "cost USD", 0, 1.0, False))


def compact_rows(cmp: Comparison) -> tuple[list[str], list[list[str]]]:
    """Header and cells of the printed summary: carbon, GPU-hours done and SLA violations (mean ± 95 % CI), the
    cost (mean), the cost and carbon savings against the baseline (as in summary.md: positive = less than the
    baseline) and the gap to the optimum when measured."""
    has_base = BASELINE in cmp.policies
    header = ["policy", *[c[1] for c in COMPACT], *([label for _, label in SAVINGS_SHOWN] if has_base else [])]
    if cmp.gap is not None:
        header.append("gap to opt. %")
    mark = " [oracle]" if is_oracle(cmp.options) else ""
    rows = []
    for pol in cmp.policies:
        by = {r["metric"]: r for r in cmp.summary.filter(pl.col("policy") == pol).iter_rows(named=True)}
        cells = [pol + mark] + [fmt_ci(by[m]["mean"], by[m]["ci95"] if ci else None, d, k)
                                for m, _, d, k, ci in COMPACT]
        if has_base:
            cells += [fmt_ci(by[m]["savings_vs_local_only_pct"], by[m]["savings_ci95_pct"], 1)
                      for m, _ in SAVINGS_SHOWN]
        if cmp.gap is not None:
            g = cmp.gap.filter(pl.col("policy") == pol).row(0, named=True)
            cells.append(fmt_ci(g["gap_pct"], g["gap_pct_ci95"], 1))
        rows.append(cells)
    return header, rows
