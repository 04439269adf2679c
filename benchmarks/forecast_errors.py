"""Errors of the issued 5-minute MOER forecasts in the data mirror, by lead time, and the lead exponent
fitted to them (the ``lead`` row of gridshift/data/forecast/skill.csv: the mean of the files' fits).

    ./run.sh python benchmarks/forecast_errors.py [--mirror ../shared/data]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from sim_core import forecast as F  # noqa: E402


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mirror", type=Path, default=REPO.parent / "shared" / "data")
    args = ap.parse_args()
    fits = []
    for path in sorted((args.mirror / "moer-5min").glob("*.csv.gz")):
        e = F.moer_forecast_errors(path)
        p = F.fit_lead_exponent(e)
        fits.append(p)
        print(f"{path.name}: lead exponent {p:.4f}; MAE at 5 min {e['mae'][0]:.6f}, at 180 min {e['mae'][-1]:.6f} "
              f"(persistence {e['persistence_mae'][-1]:.6f})")
    if fits:
        print(f"mean exponent {sum(fits) / len(fits):.4f} over {len(fits)} files")
    print(f"command: ./run.sh python benchmarks/forecast_errors.py --mirror {args.mirror}")


if __name__ == "__main__":
    main()
