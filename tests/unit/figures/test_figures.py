"""Every figure builder stays readable with many series: a distinct colour and marker per policy, a legend
entry for each thing drawn and nothing else, a unit on every axis, and no two labels overlapping."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np
import polars as pl
import pytest
from matplotlib.figure import Figure

from gridshift.plotstyle import legend_labels, overlapping_labels, series_styles

POLICIES = [f"policy_number_{i:02d}" for i in range(17)]  # the optimum table's 17 lines, with long names
UNIT = ("(", "/")  # every axis label names its unit: "… (USD)", "(% of capacity)", "gCO2eq/kWh"


def _key(style: dict) -> tuple:
    return tuple(np.round(style["color"], 6)), style["marker"]


@pytest.mark.parametrize("n", [1, 10, 17, 70, 71, 250])
def test_series_styles_are_pairwise_distinct(n):
    assert len({_key(s) for s in series_styles(n)}) == n


def test_overlap_check_finds_overlapping_and_clipped_labels():
    fig = Figure(figsize=(3, 2))
    ax = fig.add_subplot()
    ax.text(0.5, 0.5, "first label")
    ax.text(0.5, 0.5, "second label")
    ax.set_title("a title far too long to fit inside a figure three inches wide, cut at both ends")
    bad = overlapping_labels(fig)
    assert ("first label", "second label") in bad
    assert any(b == "<outside>" and a.startswith("a title") for a, b in bad)


def _assert_units(fig: Figure) -> None:
    for ax in fig.axes:
        for label in (ax.get_xlabel(), ax.get_ylabel()):
            if label:
                assert any(u in label for u in UNIT), f"no unit in axis label {label!r}"


def _runs_and_summary(policies):
    rng = np.random.default_rng(0)
    runs = pl.DataFrame([{"policy": p, "seed": s, "cost_incl_transfer_usd": 1000 + 40 * i + rng.normal(0, 5),
                          "carbon_incl_transfer_kg": 5000 - 90 * i + 300 * (i % 3) + rng.normal(0, 9)}
                         for i, p in enumerate(policies) for s in range(3)])
    metrics = ("cost_incl_transfer_usd", "carbon_incl_transfer_kg", "mean_cpu_util_frac", "mean_gpu_util_frac",
               "mean_mem_util_frac")
    rows = []
    for i, p in enumerate(policies):
        sub = runs.filter(pl.col("policy") == p)
        for m in metrics:
            mean = float(sub[m].mean()) if m in sub.columns else 0.3 + 0.01 * i
            rows.append({"policy": p, "metric": m, "mean": mean, "ci95": abs(mean) * 0.01})
    return runs, pl.DataFrame(rows)


def test_tradeoff_one_style_per_policy_and_a_legend_of_what_is_drawn():
    from sim_core.bench.figures import tradeoff

    runs, summary = _runs_and_summary(POLICIES)
    fig = tradeoff(runs, summary)
    labels = legend_labels(fig)
    assert labels[: len(POLICIES)] == POLICIES
    assert labels[len(POLICIES):] == ["Pareto-optimal policy mean"]
    marks = [c.lines[0] for c in fig.axes[0].containers]  # the mean marker of each policy's error bar
    styles = {(tuple(np.round(h.get_color(), 6)), h.get_marker()) for h in marks}
    assert len(styles) == len(POLICIES), "two policies drawn alike"
    assert overlapping_labels(fig) == []
    _assert_units(fig)


def test_tradeoff_with_a_single_pareto_point_draws_no_front_line():
    from sim_core.bench.figures import tradeoff

    runs, summary = _runs_and_summary(POLICIES[:1])
    fig = tradeoff(runs, summary)
    assert legend_labels(fig) == [POLICIES[0], "Pareto-optimal policy mean"]
    assert not [line for line in fig.axes[0].get_lines() if line.get_linestyle() == "--"]


def test_utilisation_many_policies_no_overlap():
    from sim_core.bench.figures import utilisation

    _, summary = _runs_and_summary(POLICIES)
    fig = utilisation(summary, POLICIES, note="calibrated forecast, 24 h ahead, error from the real series")
    assert legend_labels(fig) == ["CPU", "GPU", "memory"]
    assert overlapping_labels(fig) == []
    _assert_units(fig)


def test_timeseries_many_sites_dates_do_not_collide():
    from sim_core.bench.figures import timeseries

    t0 = datetime(2023, 3, 1, tzinfo=UTC)
    sites = [f"SITE-{i}" for i in range(9)]
    frame = pl.DataFrame([{"location": loc, "step": k, "ts_utc": t0 + timedelta(minutes=15 * k),
                           "carbon_g_per_kwh": 300.0 + j, "price_usd_per_mwh": 80.0 + j, "busy_cores": 10.0 * j}
                          for j, loc in enumerate(sites) for k in range(96 * 30)])
    fig = timeseries({p: frame for p in POLICIES[:3]}, seed=0, note="oracle")
    assert legend_labels(fig) == sites
    assert overlapping_labels(fig) == []
    _assert_units(fig)


def test_savings_vs_delay_seventeen_policies():
    from benchmarks.optimum_table import savings_figure

    rows = [{"policy": p, "allowed_delay_h": float(h), "saving_pct": i * 0.5 + h * 0.1}
            for i, p in enumerate([*POLICIES, "optimum (bound)"]) for h in (0, 2, 6, 12, 24)]
    fig = savings_figure(pl.DataFrame(rows), POLICIES, "savings vs allowed delay, 7 days, seed 0")
    assert legend_labels(fig) == [*POLICIES, "optimum (bound)"]
    lines = fig.axes[0].get_lines()[: len(POLICIES)]
    assert len({(tuple(np.round(ln.get_color(), 6)), ln.get_marker()) for ln in lines}) == len(POLICIES)
    assert overlapping_labels(fig) == []
    _assert_units(fig)


def test_bundle_workload_figure_units_and_readable_dates():
    from scenario_builder.inspect import workload_figure

    n = 5000
    rng = np.random.default_rng(1)
    t0 = datetime(2023, 1, 1, tzinfo=UTC)
    tasks = pl.DataFrame({
        "arrival_ts_utc": [t0 + timedelta(minutes=int(m)) for m in np.sort(rng.integers(0, 525_600, n))],
        "duration_s": rng.exponential(3600, n), "cpu_cores": rng.integers(1, 64, n).astype(float),
        "gpus": rng.integers(0, 8, n).astype(float), "mem_gb": rng.exponential(30, n),
        "bandwidth_gb": rng.exponential(5, n)})
    fig = workload_figure(tasks, {"year": 2023, "parameters": {"workload": "alibaba-2020"}})
    assert overlapping_labels(fig) == []
    _assert_units(fig)


def test_workload_distributions_title_clear_of_the_panels():
    from pipelines.workload.plots import distributions_figure

    rng = np.random.default_rng(2)
    tasks = pl.DataFrame({"duration_s": rng.exponential(3600, 2000), "cpu_cores": rng.integers(1, 64, 2000) * 1.0,
                          "gpus": rng.integers(0, 8, 2000) * 1.0, "mem_gb": rng.exponential(30, 2000),
                          "bandwidth_gb": rng.exponential(5, 2000)})
    fig = distributions_figure(tasks, "synthetic 2023")
    assert overlapping_labels(fig) == []
