"""Figures of a benchmark sweep (PNG, matplotlib's object API on the Agg canvas: no pyplot state).

* ``tradeoff.png``: cost vs carbon (both including transfers) — one small dot per seed, the mean
  per policy with its 95 % CI as error bars, and the Pareto front of the policy means.
* ``timeseries.png``: per DC, carbon intensity and price over the window, then for each policy
  (first seed) the busy cores per DC, stacked: where the policy put the load, and when.
* ``utilisation.png``: mean CPU / GPU / memory utilisation per policy with 95 % CI.

Each builder returns the Figure; :func:`write_all` saves them with ``gridshift.plotstyle.save_png``
(atomic; same inputs ⇒ same bytes with the same matplotlib version).
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import polars as pl
from matplotlib.figure import Figure

from gridshift.plotstyle import date_axis, save_png, series_styles

from ..forecast import caption as forecast_caption
from .metrics import BASELINE
from .stats import pareto_front
from .sweep import Comparison

X_METRIC = "cost_incl_transfer_usd"
Y_METRIC = "carbon_incl_transfer_kg"
#: characters per title line before it wraps (the figures are 10-12 inches wide at 9-10 pt)
TITLE_WRAP = 110


def _title(text: str) -> str:
    return "\n".join(textwrap.fill(line, TITLE_WRAP) for line in text.splitlines())


def _stat(summary: pl.DataFrame, policy: str, metric: str) -> tuple[float, float]:
    row = summary.filter((pl.col("policy") == policy) & (pl.col("metric") == metric))
    if row.height == 0:
        return float("nan"), float("nan")
    return float(row["mean"][0]), float(row["ci95"][0])


def tradeoff(runs: pl.DataFrame, summary: pl.DataFrame, *, title: str = "", x: str = X_METRIC,
             y: str = Y_METRIC) -> Figure:
    """Cost vs carbon: per-seed points and per-policy means (± 95 % CI), one colour and marker per
    policy, the Pareto-optimal means circled (joined by a dashed line when there are several)."""
    policies = list(dict.fromkeys(runs["policy"].to_list()))
    styles = series_styles(len(policies))
    fig = Figure(figsize=(11, 6), layout="constrained")
    ax = fig.add_subplot(1, 1, 1)
    means, handles = [], []
    for pol, st in zip(policies, styles, strict=True):
        sub = runs.filter(pl.col("policy") == pol)
        ax.scatter(sub[x].to_numpy(), sub[y].to_numpy(), s=12, color=st["color"], marker=st["marker"],
                   alpha=0.35, linewidths=0)
        mx, cx = _stat(summary, pol, x)
        my, cy = _stat(summary, pol, y)
        means.append((pol, mx, my))
        handles.append(ax.errorbar([mx], [my], xerr=[0 if math.isnan(cx) else cx], yerr=[0 if math.isnan(cy) else cy],
                    fmt=st["marker"], ms=7, color=st["color"], ecolor=st["color"], elinewidth=1, capsize=3,
                    label=pol + (" (baseline)" if pol == BASELINE else ""), zorder=3))
    front = pareto_front([m[1] for m in means], [m[2] for m in means])
    pts = sorted((mx, my) for (_, mx, my), f in zip(means, front, strict=True) if f)
    if len(pts) > 1:
        ax.plot([p[0] for p in pts], [p[1] for p in pts], "--", color="0.3", lw=1, zorder=2)
    if pts:
        handles.append(ax.scatter([p[0] for p in pts], [p[1] for p in pts], s=200, facecolors="none",
                                  edgecolors="0.15", linewidths=1.2, zorder=4, label="Pareto-optimal policy mean"))
    ax.set_xlabel("cost incl. transfers (USD)")
    ax.set_ylabel("carbon incl. transfers (kg CO2eq)")
    n = runs["seed"].n_unique()
    ax.set_title(_title(title or f"cost vs carbon: {len(policies)} policies × {n} seeds "
                                 "(small marks: seeds; large: mean ± 95 % CI)"), fontsize=9)
    ax.grid(True, alpha=0.3)
    ax.ticklabel_format(axis="both", style="plain", useOffset=False)
    ax.legend(handles=handles, fontsize=8, loc="center left", bbox_to_anchor=(1.01, 0.5),
              ncol=1 + len(policies) // 24)
    return fig


def timeseries(series: Mapping[str, pl.DataFrame], *, seed: int | None = None, note: str = "") -> Figure:
    """Carbon intensity and price per DC, then busy cores per DC (stacked) for each policy; ``note``
    (the sweep's forecast model) heads the figure."""
    policies = list(series)
    first = series[policies[0]]
    locations = list(dict.fromkeys(first["location"].to_list()))
    colors = {loc: st["color"] for loc, st in zip(locations, series_styles(len(locations)), strict=True)}
    n_rows = 2 + len(policies)
    fig = Figure(figsize=(11, 1.9 * n_rows + 0.8), layout="constrained")
    axes = [fig.add_subplot(n_rows, 1, 1)]
    axes += [fig.add_subplot(n_rows, 1, i + 1, sharex=axes[0]) for i in range(1, n_rows)]

    def per_dc(df: pl.DataFrame, col: str) -> tuple[np.ndarray, dict[str, np.ndarray]]:
        df = df.sort(["location", "step"])
        t = df.filter(pl.col("location") == locations[0])["ts_utc"].dt.replace_time_zone(None).to_numpy()
        return t, {loc: df.filter(pl.col("location") == loc)[col].to_numpy() for loc in locations}

    t, carbon = per_dc(first, "carbon_g_per_kwh")
    _, price = per_dc(first, "price_usd_per_mwh")
    for loc in locations:
        axes[0].plot(t, carbon[loc], color=colors[loc], lw=1, label=loc)
        axes[1].plot(t, price[loc], color=colors[loc], lw=1)
    axes[0].set_ylabel("gCO2eq/kWh", fontsize=8)
    axes[0].set_title(_title("grid carbon intensity per DC" + (f" — policies' forecast: {note}" if note else "")),
                      fontsize=9, loc="left")
    axes[1].set_ylabel("USD/MWh", fontsize=8)
    axes[1].set_title("electricity price per DC", fontsize=9, loc="left")
    fig.legend(*axes[0].get_legend_handles_labels(), fontsize=7, loc="outside upper right",
               ncol=min(len(locations), 8))
    for ax, pol in zip(axes[2:], policies, strict=True):
        tt, busy = per_dc(series[pol], "busy_cores")
        ax.stackplot(tt, *[busy[loc] for loc in locations], colors=[colors[loc] for loc in locations],
                     alpha=0.85, linewidth=0)
        ax.set_ylabel("busy (cores)", fontsize=8)
        ax.set_title(f"load per DC — {pol}" + (f" (seed {seed})" if seed is not None else ""), fontsize=9, loc="left")
    for ax in axes:
        ax.grid(True, alpha=0.3)
        ax.tick_params(labelsize=7)
    for ax in axes[:-1]:
        ax.tick_params(labelbottom=False)
    date_axis(axes[-1])
    axes[-1].set_xlabel("time (UTC)")
    return fig


def utilisation(summary: pl.DataFrame, policies: Sequence[str], *, note: str = "") -> Figure:
    """Grouped horizontal bars (a policy's name per row, readable for any number): mean CPU / GPU / memory
    utilisation (%) per policy, ± 95 % CI; ``note`` (the
    sweep's forecast model) in the title."""
    res = (("mean_cpu_util_frac", "CPU"), ("mean_gpu_util_frac", "GPU"), ("mean_mem_util_frac", "memory"))
    fig = Figure(figsize=(8, max(3.5, 0.45 * len(policies) + 1.8)), layout="constrained")
    ax = fig.add_subplot(1, 1, 1)
    y = np.arange(len(policies), dtype=float)
    h = 0.8 / len(res)
    for i, ((metric, label), st) in enumerate(zip(res, series_styles(len(res)), strict=True)):
        stats = [_stat(summary, p, metric) for p in policies]
        m = np.array([100 * s[0] for s in stats])
        e = np.array([0.0 if math.isnan(s[1]) else 100 * s[1] for s in stats])
        ax.barh(y + (i - 1) * h, m, h, xerr=e, capsize=2, color=st["color"], label=label)
    ax.set_yticks(y, list(policies), fontsize=8)
    ax.invert_yaxis()  # the first policy on top, as in the tables
    ax.set_xlabel("mean utilisation (% of capacity)")
    ax.set_title(_title("cluster utilisation per policy (capacity-weighted over DCs and steps; ± 95 % CI)"
                        + (f"\nforecast: {note}" if note else "")), fontsize=9)
    ax.grid(True, axis="x", alpha=0.3)
    fig.legend(fontsize=8, ncol=3, loc="outside lower center")
    return fig


def write_all(cmp: Comparison, out_dir: Path) -> list[Path]:
    """The three figures of a sweep into ``out_dir`` (the time series only if a series is available)."""
    out = Path(out_dir)
    note = forecast_caption(cmp.options)
    title = (f"bundle {cmp.bundle_id}: cost vs carbon, {len(cmp.policies)} policies × {len(cmp.seeds)} seeds "
             f"(small marks: seeds; large: mean ± 95 % CI; {cmp.options['steps']} steps from step "
             f"{cmp.options['start_step']})\nforecast: {note}")
    paths = [save_png(tradeoff(cmp.runs, cmp.summary, title=title), out / "tradeoff.png")]
    series = {p: cmp.series[p] for p in cmp.policies if p in cmp.series}
    if series:
        paths.append(save_png(timeseries(series, seed=cmp.seeds[0], note=note), out / "timeseries.png"))
    paths.append(save_png(utilisation(cmp.summary, cmp.policies, note=note), out / "utilisation.png"))
    return paths
