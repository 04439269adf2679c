"""Why ``defer_to_greener`` saves less as the allowed delay grows (docs/baselines.md, "defer_to_greener and the
allowed delay"): per allowed delay, its carbon split into datacenter and transfer emissions, the tasks it moves,
the data they carry and their transit delays, next to ``local_only``.

    ./run.sh python benchmarks/defer_delay_analysis.py --bundle <home>/bundles/<id> [--days 7] [--seed 0]

Every task is given the allowed delay (``sim_core.bench.gap.with_allowed_delay``, as the savings-vs-delay figure
of docs/optimum_table.md does); run options are gridshift's defaults.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import polars as pl

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from benchmarks._report import bundle_window_args  # noqa: E402

DELAYS_H = (0, 2, 6, 12, 24)  # benchmarks/optimum_table.py's sweep
NONE_MOVED = "no task moved"  # the transit-delay cell when the window moves no task (no mean, no p90)


def transit_delay_cell(td_h: np.ndarray) -> str:
    """Mean / p90 of the moved tasks' transit delays (h), or ``NONE_MOVED`` when none was moved."""
    if td_h.size == 0:
        return NONE_MOVED
    return f"{td_h.mean():.2f} / {np.quantile(td_h, 0.9):.2f}"


def main() -> None:
    args = bundle_window_args(__doc__.split("\n\n", 1)[0])

    import sim_core
    from sim_core.bench.gap import with_allowed_delay

    sc0 = sim_core.load(args.bundle)
    base = sim_core.run(sc0, "local_only", seed=args.seed, days=args.days).totals["carbon_incl_transfer_kg"]
    print(f"local_only: {base:,.0f} kg (datacenters only: it moves nothing)")
    print("| allowed delay h | carbon incl. transfers kg | saving % | datacenter kg | transfer kg | tasks moved "
          "| data moved TB | moved tasks' transit delay: mean h / p90 h |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|")
    for h in DELAYS_H:
        r = sim_core.run(with_allowed_delay(sc0, 3600.0 * h), "defer_to_greener", seed=args.seed, days=args.days)
        t = r.totals
        moved = r.tasks.filter(pl.col("remote").fill_null(False))
        td = moved["transit_delay_s"].to_numpy() / 3600.0
        tb = t["transfer_kwh"] / r.options["transfer_kwh_per_gb"] / 1000.0  # the run's own kWh per GB
        print(f"| {h} | {t['carbon_incl_transfer_kg']:,.0f} | {100 * (base - t['carbon_incl_transfer_kg']) / base:.1f} "
              f"| {t['carbon_kg']:,.0f} | {t['transfer_carbon_kg']:,.0f} | {moved.height:,} | {tb:.1f} "
              f"| {transit_delay_cell(td)} |")


if __name__ == "__main__":
    main()
