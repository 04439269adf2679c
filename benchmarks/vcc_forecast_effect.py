"""Whether VCC follows the carbon forecast (docs/baselines.md, "VCC"): its carbon, GPU-hours done and deadline
misses next to ``local_only`` with the calibrated and the oracle forecast, then how many of its task starts
change (oracle forecast) when the carbon of the days after the second is scaled, in every hour (a uniform
scaling: the day's ranking of hours, and so the curve, stays) or in hours 0-11 UTC only.

    ./run.sh python benchmarks/vcc_forecast_effect.py --bundle <home>/bundles/<id> [--days 7] [--seed 0]
"""

from __future__ import annotations

import dataclasses
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from benchmarks._report import bundle_window_args  # noqa: E402

FACTORS = (0.2, 3.0)  # the range issue 23 perturbed the future carbon by


def main() -> None:
    args = bundle_window_args(__doc__.split("\n\n", 1)[0])

    import sim_core

    sc = sim_core.load(args.bundle)
    print("| policy | forecast | carbon kg | GPU-hours done | deadline misses |")
    print("|---|---|---:|---:|---:|")
    for pol, fc in (("local_only", "calibrated"), ("vcc", "calibrated"), ("vcc", "oracle")):
        t = sim_core.run(sc, pol, seed=args.seed, days=args.days, forecast=fc).totals
        print(f"| `{pol}` | {fc} | {t['carbon_kg']:,.1f} | {t['work_gpu_hours']:,.1f} | {t['sla_violations']:,} |",
              flush=True)
    base = sim_core.run(sc, "vcc", seed=args.seed, days=args.days, forecast="oracle").tasks["start_ts_utc"]
    hour = (np.arange(sc.carbon_g_per_kwh.shape[1]) % 96) // 4
    later = np.arange(hour.shape[0]) >= 2 * 96
    print("\n| future carbon scaled | hours | starts changed |")
    print("|---:|---|---:|")
    for f in FACTORS:
        for sel, name in ((later, "all"), (later & (hour < 12), "0-11 UTC")):
            c = sc.carbon_g_per_kwh.copy()
            c[:, sel] *= f
            s = sim_core.run(dataclasses.replace(sc, carbon_g_per_kwh=c), "vcc", seed=args.seed, days=args.days,
                             forecast="oracle").tasks["start_ts_utc"]
            print(f"| x{f} | {name} | {int((s != base).sum()):,} of {base.len():,} |", flush=True)


if __name__ == "__main__":
    main()
