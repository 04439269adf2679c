"""compare reports each policy's gap to the offline optimum; the savings-vs-allowed-delay sweep."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest
from typer.testing import CliRunner

import sim_core
from gridshift_cli import app
from sim_core.bench import compare
from sim_core.bench.gap import delay_sweep, with_allowed_delay
from sim_core.bench.report import summary_markdown
from sim_core.optimum import optimum


def test_compare_reports_the_gap_per_seed(scenario):
    pols = ["local_only", "lowest_carbon", "defer_to_greener"]
    cmp = compare(scenario, pols, seeds=[0, 1], days=1, optimum=True, forecast="persistence")
    assert set(cmp.bounds) == {0, 1}
    g = cmp.gap
    assert g["policy"].to_list() == pols
    assert set(g["bound_kind"].to_list()) == {"relaxation"} and set(g["forecast"].to_list()) == {"persistence"}
    for pol in pols:
        r = cmp.runs.filter(pl.col("policy") == pol)
        gaps = [row["carbon_incl_transfer_kg"] - cmp.bounds[row["seed"]].value for row in r.iter_rows(named=True)]
        row = g.filter(pl.col("policy") == pol).row(0, named=True)
        assert row["gap_kg"] == pytest.approx(np.mean(gaps), rel=1e-12)
        assert row["min_gap_kg"] >= 0  # bound respected by every run
    # the bound is the optimum of the same window, seed and options as the runs
    b = optimum(scenario, seed=1, days=1, forecast="persistence")
    assert b.value == cmp.bounds[1].value
    md = summary_markdown(cmp)
    assert "gap to optimum %" in md and "relaxation lower bound" in md
    assert "optimum" in cmp.params() and cmp.params()["gap"][0]["policy"] == "local_only"


def test_cli_compare_optimum(bundle, tmp_path):
    res = CliRunner().invoke(app, ["compare", str(bundle), "--policies", "local_only,lowest_carbon", "--seeds", "0",
                                   "--days", "1", "--no-store", "--no-figures", "--optimum", "--out", str(tmp_path)])
    assert res.exit_code == 0, res.output
    assert "to opt. %" in res.output  # the column "gap to opt. %" (its header on two lines)
    gap = pl.read_parquet(tmp_path / "gap.parquet")
    assert gap.height == 2 and (gap["min_gap_kg"] >= 0).all()


def test_allowed_delay_sweep(scenario):
    """More allowed delay never raises the bound (a larger feasible set); the bundle itself is untouched."""
    before = scenario.max_delay_s.copy()
    df = delay_sweep(scenario, ["lowest_carbon", "defer_to_greener"], [0, 4, 12], seed=0, days=1)
    assert np.array_equal(scenario.max_delay_s, before)
    opt = df.filter(pl.col("policy") == "optimum (bound)").sort("allowed_delay_h")["carbon_kg"].to_numpy()
    assert (np.diff(opt) <= 1e-9 * opt[0]).all()
    # on this nearly idle reference cluster the idle floor holds the bound at every step, so delay cannot lower
    # it; the bound without the floor shows the LP using the delay
    loose = [optimum(with_allowed_delay(scenario, 3600.0 * h), seed=0, days=1, idle_floor=False).value for h in (0, 12)]
    assert loose[1] < loose[0]
    pols = df.filter(pl.col("policy") != "optimum (bound)")
    for row in pols.iter_rows(named=True):  # no policy beats the bound at its own allowed delay
        o = df.filter((pl.col("policy") == "optimum (bound)") & (pl.col("allowed_delay_h") == row["allowed_delay_h"]))
        assert row["carbon_kg"] >= o["carbon_kg"][0]
    # the deadline the engine enforces follows the override
    sc = with_allowed_delay(scenario, 7200.0)
    r = sim_core.run(sc, "local_only", seed=0, days=1, workload="origins")
    t = r.tasks
    dl = (t["deadline_ts_utc"] - t["arrival_ts_utc"]).dt.total_microseconds().to_numpy() / 1e6
    d = t["duration_s"].to_numpy()
    assert np.allclose(dl, np.maximum(7200.0 + d, 1.5 * d), atol=1e-5)  # the engine's rule
    with pytest.raises(ValueError, match="allowed delay"):
        with_allowed_delay(scenario, -1.0)
