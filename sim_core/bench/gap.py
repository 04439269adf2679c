"""The gap of every policy to the offline optimum (``sim_core.optimum``), and the savings-vs-allowed-delay
sweep (the CarbonFlex paper's figure: savings of each policy and of the optimum as the tasks' allowed
delay grows).

The optimum is computed once per seed (a seed draws the run's workload realisation and origins) on the
sweep's window and run options, so each run is compared with the bound of exactly its own tasks. The
gap is ``policy carbon - bound`` (kg CO2, carbon incl. transfers) and that over the bound (%), per seed,
then mean ± 95 % CI; the bound is a relaxation (docs/optimum.md), so a gap is an upper bound of how far
a policy is from the true optimum.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

import numpy as np
import polars as pl

from ..scenario import Scenario
from .stats import mean_ci

#: the metric the gap is measured on (the optimum's ``carbon`` objective bounds it)
GAP_METRIC = "carbon_incl_transfer_kg"


def optima(scenario: Scenario, seeds: Sequence[int], options: dict[str, Any], **kw) -> dict[int, Any]:
    """The carbon optimum of each seed on the sweep's canonical ``options`` (``run_options``)."""
    from ..optimum import optimum

    sim = {k: v for k, v in options.items() if k not in ("start_step", "steps")}
    return {int(s): optimum(scenario, seed=int(s), start=options["start_step"], steps=options["steps"], **sim, **kw)
            for s in seeds}


def gap_frame(runs: pl.DataFrame, bounds: dict[int, Any], forecast: str) -> pl.DataFrame:
    """One row per policy: the optimum's bound and the gap to it (absolute kg and %), mean ± 95 % CI over
    seeds, the forecast model of the runs and whether the bound is exact or a relaxation."""
    rows = []
    kinds = sorted({b.kind for b in bounds.values()})
    rolling = any(b.rolling for b in bounds.values())
    for pol in runs["policy"].unique(maintain_order=True).to_list():
        r = runs.filter(pl.col("policy") == pol)
        seeds = r["seed"].to_list()
        val = r[GAP_METRIC].to_numpy()
        bnd = np.array([bounds[int(s)].value for s in seeds])
        gap = val - bnd
        pct = 100.0 * gap / bnd
        g, p, b = mean_ci(gap.tolist()), mean_ci(pct.tolist()), mean_ci(bnd.tolist())
        rows.append({"policy": pol, "bound_kg": b.mean, "gap_kg": g.mean, "gap_kg_ci95": g.ci95,
                     "gap_pct": p.mean, "gap_pct_ci95": p.ci95, "min_gap_kg": float(gap.min()),
                     "bound_kind": ",".join(kinds) + (" (rolling horizons)" if rolling else ""),
                     "forecast": forecast, "seeds": len(seeds)})
    return pl.DataFrame(rows, schema={"policy": pl.String, "bound_kg": pl.Float64, "gap_kg": pl.Float64,
                                      "gap_kg_ci95": pl.Float64, "gap_pct": pl.Float64, "gap_pct_ci95": pl.Float64,
                                      "min_gap_kg": pl.Float64, "bound_kind": pl.String, "forecast": pl.String,
                                      "seeds": pl.Int64})


def with_allowed_delay(scenario: Scenario, delay_s: float) -> Scenario:
    """The scenario with every task's allowed delay set to ``delay_s`` (in memory; the bundle is untouched)."""
    if not (np.isfinite(delay_s) and delay_s >= 0):
        raise ValueError(f"allowed delay must be a finite number of seconds >= 0, got {delay_s!r}")
    return dataclasses.replace(scenario, max_delay_s=np.full(scenario.n_tasks, float(delay_s)))


def delay_sweep(scenario: Scenario, policies: Sequence[str], delays_h: Sequence[float], *, seed: int = 0,
                baseline: str = "local_only", optimum: bool = True, **run_kw) -> pl.DataFrame:
    """Carbon savings (%, carbon incl. transfers, vs ``baseline`` at the same allowed delay and seed) of every
    policy, and of the optimum's bound, for each allowed delay (hours) given to every task. ``run_kw``: the
    window and run options of ``sim_core.run``."""
    import sim_core

    from ..optimum import optimum as solve

    rows = []
    for h in delays_h:
        sc = with_allowed_delay(scenario, 3600.0 * float(h))
        carbon = {p: sim_core.run(sc, p, seed=seed, **run_kw).totals[GAP_METRIC] for p in {*policies, baseline}}
        base = carbon[baseline]
        for p in policies:
            rows.append({"allowed_delay_h": float(h), "policy": p, "carbon_kg": carbon[p],
                         "saving_pct": 100.0 * (base - carbon[p]) / base})
        if optimum:
            b = solve(sc, seed=seed, **run_kw)
            rows.append({"allowed_delay_h": float(h), "policy": "optimum (bound)", "carbon_kg": b.value,
                         "saving_pct": 100.0 * (base - b.value) / base})
    return pl.DataFrame(rows)
