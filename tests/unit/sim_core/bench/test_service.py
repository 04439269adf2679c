"""The ranking at matched service (``sim_core.bench.service``): each policy's carbon saving at the baseline's share
of tasks late, on summaries whose answers are worked out by hand."""

from __future__ import annotations

import polars as pl
import pytest

from sim_core.bench.service import METHOD, family, markdown, matched_service, ranking_lines
from sim_core.bench.stats import SUMMARY_SCHEMA


def _summary(points: dict[str, tuple[float, float, float]]) -> pl.DataFrame:
    """policy -> (share late, its CI, carbon saving %)."""
    rows = []
    for p, (late, ci, sav) in points.items():
        base = {"unit": "", "n_seeds": 3, "std": 0.0, "ci95_low": 0.0, "ci95_high": 0.0, "savings_ci95_pct": 0.1}
        rows.append({**base, "policy": p, "metric": "sla_violation_rate", "mean": late, "ci95": ci,
                     "savings_vs_local_only_pct": None})
        rows.append({**base, "policy": p, "metric": "carbon_incl_transfer_kg", "mean": 1000.0, "ci95": 1.0,
                     "savings_vs_local_only_pct": sav})
    return pl.DataFrame(rows, schema=SUMMARY_SCHEMA)


POINTS = {
    "local_only": (0.01, 0.01, 0.0),
    "lowest_carbon": (0.0, 0.0, 9.0),             # no later than local_only: its own saving
    "wait_awhile": (0.17, 0.01, 2.7),              # later; its family has wait_awhile_capacity at 0.01 and 1.0 %
    "wait_awhile_capacity": (0.01, 0.005, 1.0),
    "gaia_carbon_time": (0.08, 0.01, 3.4),         # later, and every GAIA variant here is later: not comparable
    "gaia_lowest_carbon_window": (0.16, 0.01, 2.6),
    "defer_to_greener": (0.02, 0.01, 6.5),         # CI reaches local_only's: meets it, keeps 6.5
}


def test_the_matched_saving_by_hand():
    m = {r["policy"]: r for r in matched_service(_summary(POINTS)).iter_rows(named=True)}
    assert m["local_only"]["matched_saving_pct"] == 0.0 and m["local_only"]["method"] == "as run"
    assert m["lowest_carbon"]["matched_saving_pct"] == 9.0
    assert m["defer_to_greener"]["matched_saving_pct"] == 6.5  # 0.02 - 0.01 <= 0.01 + 0.01
    # wait_awhile: the capacity variant meets the service (1.0 %); the line from it (0.01, 1.0) to wait_awhile
    # (0.17, 2.7) read at local_only's 0.01 is 1.0 too (the capacity variant sits at 0.01 exactly): 1.0
    assert m["wait_awhile"]["matched_saving_pct"] == pytest.approx(1.0)
    assert m["wait_awhile"]["method"] == "as wait_awhile_capacity"
    assert m["gaia_carbon_time"]["matched_saving_pct"] is None
    assert m["gaia_carbon_time"]["method"].startswith("not comparable: the gaia variants here are ≥ 8.00 %")
    assert m["wait_awhile"]["late_pct"] == pytest.approx(17.0) and m["wait_awhile"]["family"] == "wait_awhile"


def test_interpolation_between_a_variant_below_and_one_above_the_baselines_lateness():
    """local_only 5 % late (CI 0). Variant A: 2 % late, saving 1 %; variant B: 11 % late, saving 4 %. B is later:
    on the line from A to B at 5 %, 1 + 3 x (5 - 2) / (11 - 2) = 2 %; better than A's own 1 %."""
    pts = {"local_only": (0.05, 0.0, 0.0), "wait_awhile_capacity": (0.02, 0.0, 1.0),
           "wait_awhile": (0.11, 0.0, 4.0)}
    m = {r["policy"]: r for r in matched_service(_summary(pts)).iter_rows(named=True)}
    assert m["wait_awhile"]["matched_saving_pct"] == pytest.approx(2.0)
    assert m["wait_awhile"]["method"] == "between wait_awhile_capacity and wait_awhile"
    assert m["wait_awhile_capacity"]["matched_saving_pct"] == 1.0  # (it meets the service itself: as run)


def test_families_and_the_outputs():
    assert family("wait_awhile_threshold") == family("wait_awhile_capacity") == "wait_awhile"
    assert family("gaia_carbon_time_capacity") == "gaia" and family("lowest_carbon") == "lowest_carbon"
    assert family("not_a_policy") == "not_a_policy"
    f = matched_service(_summary(POINTS))
    lines = ranking_lines(f)
    assert lines[0].startswith("at matched service (local_only: 1.00 ± 1.00 % of tasks late)")
    assert lines[1].split()[0] == "lowest_carbon" and lines[-1].split()[0].startswith("gaia")  # best first, n/a last
    md = markdown(f)
    assert "| lowest_carbon | 0.00 ± 0.00 | 9.00 | 9.00 | as run |" in md and METHOD in md
    # without the baseline there is nothing to match
    assert matched_service(_summary({"lowest_carbon": POINTS["lowest_carbon"]})).height == 0
