"""What the forecast issue cadence changes in results: each forecast-reading policy's carbon (incl. transfers)
with a forecast issued every step (15 min: the engine before the cadence, value for value) and hourly (the
default), on a bundle window (docs/simulation.md, "Information").

    ./run.sh python benchmarks/forecast_cadence_effect.py --bundle <home>/bundles/<id> [--days 7] [--seed 0]
"""

from __future__ import annotations

import sys
from pathlib import Path

POLICIES = ("defer_to_greener", "wait_awhile", "gaia_carbon_time", "carbonscaler", "vcc", "carbonflex")

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from benchmarks._report import bundle_window_args  # noqa: E402


def main() -> None:
    args = bundle_window_args(__doc__.split("\n\n", 1)[0])

    import sim_core

    sc = sim_core.load(args.bundle)
    print("| policy | every 15 min kg | every 60 min kg | change % |")
    print("|---|---:|---:|---:|")
    for pol in POLICIES:
        v = {e: sim_core.run(sc, pol, seed=args.seed, days=args.days, forecast_issue_every_min=e)
             .totals["carbon_incl_transfer_kg"] for e in (15, 60)}
        print(f"| `{pol}` | {v[15]:,.1f} | {v[60]:,.1f} | {100 * (v[60] - v[15]) / v[15]:+.2f} |", flush=True)


if __name__ == "__main__":
    main()
