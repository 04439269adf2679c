"""Figures of a benchmark sweep (PNG, matplotlib's object API on the Agg canvas: no pyplot state).

* ``tradeoff.png``: cost vs carbon (both including transfers) — one small dot per seed, the mean
  per policy with its 95 % CI as error bars, and the Pareto front of the policy means.
* ``timeseries.png``: per DC, carbon intensity and price over the window, then for each policy
  (first seed) the busy cores per DC, stacked: where the policy put the load, and when.
* ``utilisation.png``: mean CPU / GPU / memory utilisation per policy with 95 % CI.

Every file is written atomically (``gridshift.atomic``); same inputs ⇒ same bytes (same
matplotlib version): fixed size, dpi and fonts, and no time stamp in the PNG.
"""

from __future__ import annotations

import io
import math
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import polars as pl
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from gridshift.atomic import atomic_write_bytes

from ..forecast import caption as forecast_caption
from .metrics import BASELINE
from .stats import pareto_front
from .sweep import Comparison

X_METRIC = "cost_incl_transfer_usd"
Y_METRIC = "carbon_incl_transfer_kg"
DPI = 110
_PNG_META = {"Software": None}  # no matplotlib version string: identical bytes across patch releases


def _colors(n: int) -> list:
    from matplotlib import colormaps

    cmap = colormaps["tab10"]
    return [cmap(i % 10) for i in range(n)]


def _save(fig: Figure, path: Path) -> Path:
    FigureCanvasAgg(fig)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=DPI, metadata=_PNG_META)
    atomic_write_bytes(Path(path), buf.getvalue())
    return Path(path)


def _stat(summary: pl.DataFrame, policy: str, metric: str) -> tuple[float, float]:
    row = summary.filter((pl.col("policy") == policy) & (pl.col("metric") == metric))
    if row.height == 0:
        return float("nan"), float("nan")
    return float(row["mean"][0]), float(row["ci95"][0])


def tradeoff_figure(runs: pl.DataFrame, summary: pl.DataFrame, path: Path, *, title: str = "",
                    x: str = X_METRIC, y: str = Y_METRIC) -> Path:
    """Cost vs carbon scatter with per-seed points, per-policy means (± 95 % CI) and the Pareto front."""
    policies = list(dict.fromkeys(runs["policy"].to_list()))
    colors = _colors(len(policies))
    fig = Figure(figsize=(7.5, 5.5))
    ax = fig.add_subplot(1, 1, 1)
    means = []
    for pol, c in zip(policies, colors, strict=True):
        sub = runs.filter(pl.col("policy") == pol)
        ax.scatter(sub[x].to_numpy(), sub[y].to_numpy(), s=14, color=c, alpha=0.45, linewidths=0)
        mx, cx = _stat(summary, pol, x)
        my, cy = _stat(summary, pol, y)
        means.append((pol, mx, my))
        ax.errorbar([mx], [my], xerr=[0 if math.isnan(cx) else cx], yerr=[0 if math.isnan(cy) else cy],
                    fmt="o", ms=8, color=c, ecolor=c, elinewidth=1, capsize=3,
                    label=pol + (" (baseline)" if pol == BASELINE else ""), zorder=3)
    front = pareto_front([m[1] for m in means], [m[2] for m in means])
    pts = sorted((mx, my) for (_, mx, my), f in zip(means, front, strict=True) if f)
    if pts:
        ax.plot([p[0] for p in pts], [p[1] for p in pts], "--", color="0.3", lw=1, zorder=2,
                label="Pareto front (policy means)")
        ax.scatter([p[0] for p in pts], [p[1] for p in pts], s=170, facecolors="none", edgecolors="0.15",
                   linewidths=1.2, zorder=4)
    ax.set_xlabel("cost incl. transfers (USD)")
    ax.set_ylabel("carbon incl. transfers (kg CO2eq)")
    n = runs["seed"].n_unique()
    ax.set_title(title or f"cost vs carbon: {len(policies)} policies × {n} seeds "
                          "(dots: seeds; markers: mean ± 95 % CI)", fontsize=10)
    ax.grid(True, alpha=0.3)
    ax.ticklabel_format(axis="both", style="plain", useOffset=False)
    ax.legend(fontsize=8, loc="best")
    fig.tight_layout()
    return _save(fig, path)


def timeseries_figure(series: Mapping[str, pl.DataFrame], path: Path, *, seed: int | None = None,
                      note: str = "") -> Path:
    """Carbon intensity and price per DC, then busy cores per DC (stacked) for each policy; ``note``
    (the sweep's forecast model) heads the figure."""
    policies = list(series)
    first = series[policies[0]]
    locations = list(dict.fromkeys(first["location"].to_list()))
    colors = dict(zip(locations, _colors(len(locations)), strict=True))
    n_rows = 2 + len(policies)
    fig = Figure(figsize=(10, 1.9 * n_rows + 0.6))
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
        axes[1].plot(t, price[loc], color=colors[loc], lw=1, label=loc)
    axes[0].set_ylabel("gCO2eq/kWh", fontsize=8)
    axes[0].set_title("grid carbon intensity per DC" + (f" — policies' forecast: {note}" if note else ""),
                      fontsize=9, loc="left")
    axes[1].set_ylabel("USD/MWh", fontsize=8)
    axes[1].set_title("electricity price per DC", fontsize=9, loc="left")
    axes[0].legend(fontsize=7, ncol=min(len(locations), 6), loc="upper right")
    for ax, pol in zip(axes[2:], policies, strict=True):
        tt, busy = per_dc(series[pol], "busy_cores")
        ax.stackplot(tt, *[busy[loc] for loc in locations], colors=[colors[loc] for loc in locations],
                     labels=locations, alpha=0.85, linewidth=0)
        ax.set_ylabel("busy cores", fontsize=8)
        ax.set_title(f"load per DC — {pol}" + (f" (seed {seed})" if seed is not None else ""), fontsize=9, loc="left")
    for ax in axes:
        ax.grid(True, alpha=0.3)
        ax.tick_params(labelsize=7)
    for ax in axes[:-1]:
        ax.tick_params(labelbottom=False)
    axes[-1].set_xlabel("UTC")
    fig.tight_layout()
    return _save(fig, path)


def utilisation_figure(summary: pl.DataFrame, policies: Sequence[str], path: Path, *, note: str = "") -> Path:
    """Grouped bars: mean CPU / GPU / memory utilisation (%) per policy, ± 95 % CI; ``note`` (the
    sweep's forecast model) in the title."""
    res = (("mean_cpu_util_frac", "CPU"), ("mean_gpu_util_frac", "GPU"), ("mean_mem_util_frac", "memory"))
    fig = Figure(figsize=(max(6.0, 1.3 * len(policies) + 2), 4.2))
    ax = fig.add_subplot(1, 1, 1)
    x = np.arange(len(policies), dtype=float)
    w = 0.8 / len(res)
    for i, ((metric, label), c) in enumerate(zip(res, _colors(len(res)), strict=True)):
        stats = [_stat(summary, p, metric) for p in policies]
        m = np.array([100 * s[0] for s in stats])
        e = np.array([0.0 if math.isnan(s[1]) else 100 * s[1] for s in stats])
        ax.bar(x + (i - 1) * w, m, w, yerr=e, capsize=2, color=c, label=label)
    ax.set_xticks(x, list(policies), rotation=20, ha="right", fontsize=8)
    ax.set_ylabel("mean utilisation (% of capacity)")
    ax.set_title("cluster utilisation per policy (capacity-weighted over DCs and steps; ± 95 % CI)"
                 + (f"\nforecast: {note}" if note else ""), fontsize=9)
    top = max([b.get_height() for b in ax.patches if math.isfinite(b.get_height())] or [1.0])
    ax.set_ylim(0, top * 1.25 if top > 0 else 1.0)
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend(fontsize=8, ncol=3, loc="upper center")
    fig.tight_layout()
    return _save(fig, path)


def write_all(cmp: Comparison, out_dir: Path) -> list[Path]:
    """The three figures of a sweep into ``out_dir`` (the time series only if a series is available)."""
    out = Path(out_dir)
    note = forecast_caption(cmp.options)
    paths = [tradeoff_figure(cmp.runs, cmp.summary, out / "tradeoff.png",
                             title=f"bundle {cmp.bundle_id}: cost vs carbon, {len(cmp.policies)} policies × "
                                   f"{len(cmp.seeds)} seeds\n(dots: seeds; markers: mean ± 95 % CI; "
                                   f"{cmp.options['steps']} steps from step {cmp.options['start_step']})"
                                   f"\nforecast: {note}")]
    series = {p: cmp.series[p] for p in cmp.policies if p in cmp.series}
    if series:
        paths.append(timeseries_figure(series, out / "timeseries.png", seed=cmp.seeds[0], note=note))
    paths.append(utilisation_figure(cmp.summary, cmp.policies, out / "utilisation.png", note=note))
    return paths
