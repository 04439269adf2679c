"""Every figure builder stays readable with many series: a distinct colour and marker per policy, a legend
entry for each thing drawn and nothing else, a unit on every axis, and no two labels overlapping."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np
import polars as pl
import pytest
from matplotlib.figure import Figure

from gridshift_plots.style import PALETTE, legend_labels, overlapping_labels, series_styles, spread

POLICIES = [f"policy_number_{i:02d}" for i in range(17)]  # the optimum table's 17 lines, with long names
UNIT = ("(", "/")  # every axis label names its unit: "… (USD)", "(% of capacity)", "gCO2eq/kWh"


def _key(style: dict) -> tuple:
    from matplotlib.colors import to_rgba

    return tuple(np.round(to_rgba(style["color"]), 6)), style["marker"]


@pytest.mark.parametrize("n", [1, 10, 17, 70, 71, 250])
def test_series_styles_are_pairwise_distinct(n):
    assert len({_key(s) for s in series_styles(n)}) == n


def _lab(color) -> np.ndarray:
    """CIELAB (D65) of a matplotlib colour: distances there follow what an eye tells apart."""
    from matplotlib.colors import to_rgb

    rgb = np.array(to_rgb(color))
    lin = np.where(rgb <= 0.04045, rgb / 12.92, ((rgb + 0.055) / 1.055) ** 2.4)
    xyz = np.array([[0.4124, 0.3576, 0.1805], [0.2126, 0.7152, 0.0722], [0.0193, 0.1192, 0.9505]]) @ lin
    xyz /= np.array([0.95047, 1.0, 1.08883])
    f = np.where(xyz > 0.008856, np.cbrt(xyz), 7.787 * xyz + 16 / 116)
    return np.array([116 * f[1] - 16, 500 * (f[0] - f[1]), 200 * (f[1] - f[2])])


def test_the_palette_has_twenty_four_colours_no_two_alike_each_with_a_marker():
    from itertools import combinations

    assert len(PALETTE) == 24 and len({c for c, _ in PALETTE}) == 24 and len({m for _, m in PALETTE}) == 12
    closest = min(np.linalg.norm(_lab(a) - _lab(b)) for (a, _), (b, _) in combinations(PALETTE, 2))
    assert closest >= 25, closest  # CIELAB distance: tab10's nearest pair is about 28
    assert all(_lab(c)[0] < 80 for c, _ in PALETTE)  # none too pale for a line on white
    assert all(PALETTE[i][1] != PALETTE[i + 1][1] for i in range(23))


def test_every_registered_policy_has_its_own_declared_style_in_every_figure():
    from sim_core.bench.figures import policy_styles
    from sim_core.policies import registry

    names = list(registry.names())
    every = policy_styles(names)
    assert len({s["color"] for s in every.values()}) == len(names)  # 21 policies, 21 colours
    assert len({(s["color"], s["marker"]) for s in every.values()}) == len(names)
    # a policy looks the same whatever else is in the sweep, in whatever order
    some = policy_styles(["vcc", "local_only", "lowest_carbon"])
    assert all(some[p] == every[p] for p in some)
    assert policy_styles(list(reversed(names))) == every
    # a policy outside the registry takes a colour no listed policy holds
    mixed = policy_styles([*names, "my_policy", "their_policy"])
    assert mixed["my_policy"]["color"] not in {s["color"] for s in every.values()}
    assert len({s["color"] for s in mixed.values()}) == len(names) + 2
    # past the palette, every one distinct all the same
    many = policy_styles([*names, *(f"extra_{i}" for i in range(10))])
    assert len({_key(s) for s in many.values()}) == len(names) + 10


@pytest.mark.parametrize(("ys", "gap", "want"), [
    ([2.0, 10.0, 20.0], 5.0, [2.0, 10.0, 20.0]),  # already apart: unmoved
    ([10.0, 10.0, 10.0], 4.0, [6.0, 10.0, 14.0]),  # a pile: spread around where it wants to be
    ([10.0, 11.0, 30.0], 4.0, [8.5, 12.5, 30.0]),  # only the clashing pair moves, about its mean
    ([0.0, 0.0], 4.0, [1.0, 5.0]),  # kept above the floor (1.0)
    ([50.0, 50.0], 4.0, [42.0, 46.0]),  # and under the ceiling (46.0)
])
def test_spread_keeps_order_and_gaps_and_moves_least(ys, gap, want):
    got = spread(ys, gap, 1.0, 46.0)
    assert got == pytest.approx(want)
    assert all(b - a >= gap - 1e-9 for a, b in zip(got, got[1:], strict=False))


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
    styles = {_key({"color": h.get_color(), "marker": h.get_marker()}) for h in marks}
    assert len(styles) == len(POLICIES), "two policies drawn alike"
    assert overlapping_labels(fig) == []
    _assert_units(fig)


def test_the_frontier_draws_carbon_against_the_share_late_in_percent():
    """frontier.png is the trade-off plot on (share of tasks late in %, carbon): the means sit at 100 x the
    summary's fraction, and the Pareto front is over lateness and carbon."""
    from sim_core.bench.figures import tradeoff

    runs, summary = _runs_and_summary(POLICIES[:4])
    late = [0.0, 0.02, 0.10, 0.30]
    runs = runs.with_columns(pl.col("policy").replace_strict(dict(zip(POLICIES[:4], late, strict=True)))
                             .alias("sla_violation_rate"))
    summary = pl.concat([summary, pl.DataFrame([{"policy": p, "metric": "sla_violation_rate", "mean": v, "ci95": 0.0}
                                                for p, v in zip(POLICIES[:4], late, strict=True)])])
    fig = tradeoff(runs, summary, x="sla_violation_rate", x_scale=100.0, x_label="tasks late (% of tasks started)")
    xs = [float(c.lines[0].get_xdata()[0]) for c in fig.axes[0].containers]
    assert xs == [0.0, 2.0, 10.0, 30.0]
    assert fig.axes[0].get_xlabel() == "tasks late (% of tasks started)"
    assert overlapping_labels(fig) == []


def test_dense_cluster_finds_the_crowd_and_only_a_crowd():
    from sim_core.bench.figures import dense_cluster

    # the main job's shape: nine means within 2 % of the cost axis, four far away
    xs = [42_000 + 150 * i for i in range(9)] + [76_800, 78_500, 79_700, 81_700]
    ys = [94_600 + 400 * i for i in range(9)] + [91_600, 91_400, 88_900, 98_500]
    assert dense_cluster(xs, ys) == list(range(9))
    assert dense_cluster(xs[:3] + xs[9:], ys[:3] + ys[9:]) == []  # three together is no crowd
    assert dense_cluster([1.0, 1.01, 1.02, 1.03, 1.04], [5.0] * 5) == []  # all of them: nothing to zoom on
    assert dense_cluster([float("nan")] * 6, [1.0] * 6) == []


def test_tradeoff_zooms_on_a_crowd_of_means():
    from sim_core.bench.figures import tradeoff

    policies = POLICIES[:13]
    runs = pl.DataFrame([{"policy": p, "seed": s,
                          "cost_incl_transfer_usd": (42_000 + 150 * i if i < 9 else 77_000 + 1000 * i) + 10 * s,
                          "carbon_incl_transfer_kg": (94_600 + 400 * i if i < 9 else 90_000) + 5 * s}
                         for i, p in enumerate(policies) for s in range(3)])
    summary = pl.DataFrame([{"policy": p, "metric": m, "mean": float(runs.filter(pl.col("policy") == p)[m].mean()),
                             "ci95": 50.0} for p in policies
                            for m in ("cost_incl_transfer_usd", "carbon_incl_transfer_kg")])
    fig = tradeoff(runs, summary)
    main, zoom = fig.axes
    assert zoom.get_title() == "zoom on the rectangle: 9 policies"
    assert [c.get_label() for c in zoom.containers] == policies[:9]
    lo, hi = zoom.get_xlim()
    assert lo < 42_000 - 50 and 42_000 + 150 * 8 + 20 + 50 < hi < 77_000  # the crowd and its CIs, nothing else
    assert legend_labels(fig)[:13] == policies
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
    assert overlapping_labels(fig) == []
    _assert_units(fig)
    titles = [ax.get_title("left") for ax in fig.axes]
    for site in sites:  # one row per site: carbon, price, the policies' load
        assert [t for t in titles if t.startswith(f"{site}: ")] == [
            f"{site}: grid carbon intensity", f"{site}: electricity price",
            f"{site}: busy cores per policy (daily mean, seed 0)"]


def test_a_year_is_drawn_as_daily_means_one_heat_map_row_per_policy():
    """365 daily values per site and policy (not 35,040 quarter-hours): the heat map holds each day's mean,
    the price panel each day's mean and its range."""
    from sim_core.bench.figures import series_period, timeseries

    t0 = datetime(2023, 1, 1, tzinfo=UTC)
    n = 96 * 365
    ts = pl.datetime_range(t0, t0 + timedelta(minutes=15 * (n - 1)), "15m", eager=True, time_zone="UTC")
    k = np.arange(n)
    frames = {p: pl.DataFrame({"location": ["DE-LU"] * n, "step": k, "ts_utc": ts,
                               "carbon_g_per_kwh": 300.0 + (k % 96), "price_usd_per_mwh": 50.0 + (k % 4),
                               "busy_cores": (k // 96) * (i + 1.0) + (k % 2)})
              for i, p in enumerate(POLICIES)}
    assert series_period(ts) == ("1d", "daily")
    assert series_period(ts[:96 * 14]) == ("1h", "hourly") and series_period(ts[:192]) == ("15m", "15-min")
    fig = timeseries(frames, seed=3)
    carbon_ax, price_ax, heat_ax = fig.axes[:3]
    z = heat_ax.collections[0].get_array().reshape(len(POLICIES), 365)
    day = np.arange(365)
    assert np.allclose(z, np.outer(np.arange(1, len(POLICIES) + 1), day) + 0.5)  # the day's mean, per policy
    assert [t.get_text() for t in heat_ax.get_yticklabels()] == POLICIES
    mean_line = price_ax.get_lines()[0].get_ydata()
    assert len(mean_line) == 365 and np.allclose(mean_line, 51.5)
    assert overlapping_labels(fig) == []
    _assert_units(fig)


def test_drained_runs_of_different_lengths_share_one_heat_map():
    """Drained runs end where their work ended, so policies' series differ in length (a mid-year week: 174 and
    182 hourly periods): every row is drawn on the longest run's periods, blank past its own end."""
    from sim_core.bench.figures import timeseries

    t0 = datetime(2023, 7, 1, tzinfo=UTC)
    frames = {}
    for i, (p, n) in enumerate(zip(POLICIES[:2], (96 * 7 + 24, 96 * 7 + 56), strict=True)):
        ts = pl.datetime_range(t0, t0 + timedelta(minutes=15 * (n - 1)), "15m", eager=True, time_zone="UTC")
        k = np.arange(n)
        frames[p] = pl.DataFrame({"location": ["SG"] * n, "step": k, "ts_utc": ts, "carbon_g_per_kwh": 400.0,
                                  "price_usd_per_mwh": 80.0, "busy_cores": np.full(n, 10.0 * (i + 1))})
    fig = timeseries(frames, seed=0)
    z = fig.axes[2].collections[0].get_array()
    assert z.shape == (2, 182)  # hourly periods of the longer run
    assert np.ma.getmaskarray(z)[0].sum() == 182 - 174 and z[0, :174].tolist() == [10.0] * 174
    assert not np.ma.getmaskarray(z)[1].any() and z[1].tolist() == [20.0] * 182


def test_savings_vs_delay_seventeen_policies():
    from benchmarks.optimum_table import savings_figure

    rows = [{"policy": p, "allowed_delay_h": float(h), "saving_pct": i * 0.5 + h * 0.1}
            for i, p in enumerate([*POLICIES, "optimum (bound)"]) for h in (0, 2, 6, 12, 24)]
    fig = savings_figure(pl.DataFrame(rows), POLICIES, "savings vs allowed delay, 7 days, seed 0")
    assert legend_labels(fig) == []  # the lines are named at their ends
    bound_ax, ax = fig.axes
    lines = [ln for ln in ax.get_lines() if ln.get_marker() not in ("None", "", None)]
    assert len(lines) == len(POLICIES)
    assert len({(ln.get_color(), ln.get_marker()) for ln in lines}) == len(POLICIES)
    assert len({ln.get_color() for ln in lines}) == len(POLICIES)  # 17 colours, not 10 reused
    names = {t.get_text(): t for t in ax.texts}
    assert set(names) == set(POLICIES) and [t.get_text() for t in bound_ax.texts] == ["optimum (bound)"]
    for ln, p in zip(lines, POLICIES, strict=True):  # each name in its line's colour, in the lines' order
        assert names[p].get_color() == ln.get_color()
    # the names stand in the order of the lines' last values (which rise with the policy's index here)
    assert sorted(POLICIES, key=lambda p: names[p].get_position()[1]) == POLICIES
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
