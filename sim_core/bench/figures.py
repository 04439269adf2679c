"""Figures of a benchmark sweep (PNG, matplotlib's object API on the Agg canvas: no pyplot state).

* ``tradeoff.png``: cost vs carbon (both including transfers) — one small dot per seed, the mean
  per policy with its 95 % CI as error bars, and the Pareto front of the policy means.
* ``timeseries.png``: small multiples, one row per DC: its carbon intensity and price (the mean per period,
  with the period's range), and a heat map of the busy cores each policy (first seed) put there per period.
  A period is 15 min for a window of up to 2 days, an hour up to 14 days, a day beyond (a year reads as 365
  daily values, not 35,040 quarter-hours).
* ``frontier.png``: carbon vs the share of tasks late, the same marks and front (policies at equal service).
* ``utilisation.png``: mean CPU / GPU / memory utilisation per policy with 95 % CI.

Each builder returns the Figure; :func:`write_all` saves them with ``gridshift_plots.style.save_png``
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

from gridshift_plots.style import PALETTE, date_axis, palette_style, save_png, series_styles

from ..forecast import caption as forecast_caption
from ..policies import registry
from ..sla import late_rule
from .metrics import BASELINE
from .stats import pareto_front
from .sweep import Comparison

X_METRIC = "cost_incl_transfer_usd"
Y_METRIC = "carbon_incl_transfer_kg"
#: characters per title line before it wraps (the figures are 10-12 inches wide at 9-10 pt)
TITLE_WRAP = 110


def _title(text: str) -> str:
    return "\n".join(textwrap.fill(line, TITLE_WRAP) for line in text.splitlines())


def policy_styles(policies: Sequence[str]) -> dict[str, dict]:
    """Each policy's declared style: the registry's i-th policy (code order) gets ``PALETTE[i]``, so a policy
    looks the same in every figure of every sweep; a policy outside the registry or beyond the palette takes
    the entries no listed policy holds, and past 20 policies every one takes ``series_styles``' (distinct)."""
    order = {name: i for i, name in enumerate(registry.names())}
    own = {p: order[p] for p in policies if order.get(p, len(PALETTE)) < len(PALETTE)}
    free = [i for i in range(len(PALETTE)) if i not in set(own.values())]
    rest = [p for p in policies if p not in own]
    if len(rest) > len(free):
        return dict(zip(policies, series_styles(len(policies)), strict=True))
    own.update(zip(rest, free, strict=False))
    return {p: palette_style(own[p]) for p in policies}


def _stat(summary: pl.DataFrame, policy: str, metric: str) -> tuple[float, float]:
    row = summary.filter((pl.col("policy") == policy) & (pl.col("metric") == metric))
    if row.height == 0:
        return float("nan"), float("nan")
    return float(row["mean"][0]), float(row["ci95"][0])


#: a cluster of policy means gets a zoomed panel when it holds at least this many policies, and not all
ZOOM_MIN = 4
#: means closer than this share of the plot's extent (each axis scaled to its range) belong to one cluster
ZOOM_LINK = 0.25


def dense_cluster(xs: Sequence[float], ys: Sequence[float]) -> list[int]:
    """The indices of the largest cluster of points (single linkage at :data:`ZOOM_LINK` of each axis'
    range) when it holds at least :data:`ZOOM_MIN` points but not all of them (else empty): the means a
    tradeoff plot draws on top of one another."""
    pts = np.column_stack([xs, ys]).astype(float)
    ok = np.flatnonzero(np.isfinite(pts).all(axis=1))
    if ok.size < ZOOM_MIN + 1:
        return []
    span = np.ptp(pts[ok], axis=0)
    unit = pts[ok] / np.where(span > 0, span, 1.0)
    label = list(range(ok.size))
    for i in range(ok.size):  # union of every pair within the link distance (a few dozen points at most)
        for j in range(i + 1, ok.size):
            if np.hypot(*(unit[i] - unit[j])) <= ZOOM_LINK and label[i] != label[j]:
                old, new = label[j], label[i]
                label = [new if v == old else v for v in label]
    best = max(set(label), key=lambda v: (label.count(v), -label.index(v)))
    members = [int(ok[k]) for k in range(ok.size) if label[k] == best]
    return members if ZOOM_MIN <= len(members) < len(xs) else []


def _policy_marks(ax, runs: pl.DataFrame, summary: pl.DataFrame, policies: Sequence[str], styles: dict, x: str,
                  y: str) -> None:
    """Per policy, its seeds (small, faint) and its mean ± 95 % CI (error bars, labelled for the legend)."""
    for pol in policies:
        st = styles[pol]
        sub = runs.filter(pl.col("policy") == pol)
        ax.scatter(sub[x].to_numpy(), sub[y].to_numpy(), s=12, color=st["color"], marker=st["marker"],
                   alpha=0.35, linewidths=0)
        (mx, cx), (my, cy) = _stat(summary, pol, x), _stat(summary, pol, y)
        ax.errorbar([mx], [my], xerr=[_z(cx)], yerr=[_z(cy)], fmt=st["marker"], ms=7, color=st["color"],
                    ecolor=st["color"], elinewidth=1, capsize=3,
                    label=pol + (" (baseline)" if pol == BASELINE else ""), zorder=3)


def tradeoff(runs: pl.DataFrame, summary: pl.DataFrame, *, title: str = "", x: str = X_METRIC,
             y: str = Y_METRIC, x_label: str = "cost incl. transfers (USD)",
             y_label: str = "carbon incl. transfers (kg CO2eq)", x_scale: float = 1.0) -> Figure:
    """Cost vs carbon: per-seed points and per-policy means (± 95 % CI), one declared colour and marker per
    policy (:func:`policy_styles`), the Pareto-optimal means circled (joined by a dashed line when there are
    several). When most means crowd together (:func:`dense_cluster`), a second panel zooms on them (the
    rectangle on the first marks where). ``x_scale`` multiplies the x values as drawn (100: a fraction in %)."""
    if x_scale != 1.0:
        runs = runs.with_columns(pl.col(x) * x_scale)
        summary = summary.with_columns(pl.when(pl.col("metric") == x).then(pl.col(c) * x_scale).otherwise(pl.col(c))
                                       for c in ("mean", "ci95"))
    policies = list(dict.fromkeys(runs["policy"].to_list()))
    styles = policy_styles(policies)
    stats = [(*_stat(summary, p, x), *_stat(summary, p, y)) for p in policies]  # (mean x, ci x, mean y, ci y)
    front = pareto_front([s[0] for s in stats], [s[2] for s in stats])
    crowd = dense_cluster([s[0] for s in stats], [s[2] for s in stats])
    fig = Figure(figsize=(15, 6.5) if crowd else (11, 6), layout="constrained")
    axes = fig.subplots(1, 2 if crowd else 1, squeeze=False)[0]
    shown = [policies, [policies[i] for i in crowd]]
    handles = []
    for ax, pols in zip(axes, shown, strict=False):
        _policy_marks(ax, runs, summary, pols, styles, x, y)
        pts = sorted((stats[policies.index(p)][0], stats[policies.index(p)][2]) for p in pols
                     if front[policies.index(p)])
        if len(pts) > 1:
            ax.plot([p[0] for p in pts], [p[1] for p in pts], "--", color="0.3", lw=1, zorder=2)
        circles = ax.scatter([p[0] for p in pts], [p[1] for p in pts], s=200, facecolors="none", edgecolors="0.15",
                             linewidths=1.2, zorder=4, label="Pareto-optimal policy mean")
        handles = handles or [*ax.containers, *([circles] if pts else [])]
        ax.set_xlabel(x_label)
        ax.set_ylabel(y_label)
        ax.grid(True, alpha=0.3)
        ax.ticklabel_format(axis="both", style="plain", useOffset=False)
    if crowd:
        box = [(stats[i][0] - _z(stats[i][1]), stats[i][2] - _z(stats[i][3]), stats[i][0] + _z(stats[i][1]),
                stats[i][2] + _z(stats[i][3])) for i in crowd]
        x0, y0 = min(b[0] for b in box), min(b[1] for b in box)
        x1, y1 = max(b[2] for b in box), max(b[3] for b in box)
        px, py = 0.05 * (x1 - x0 or 1.0), 0.05 * (y1 - y0 or 1.0)
        axes[1].set_xlim(x0 - px, x1 + px)
        axes[1].set_ylim(y0 - py, y1 + py)
        axes[0].indicate_inset((x0 - px, y0 - py, x1 - x0 + 2 * px, y1 - y0 + 2 * py), edgecolor="0.35", lw=0.8)
        axes[1].set_title(f"zoom on the rectangle: {len(crowd)} policies", fontsize=9)
    n = runs["seed"].n_unique()
    axes[0].set_title(_title(title or f"cost vs carbon: {len(policies)} policies × {n} seeds "
                                      "(small marks: seeds; large: mean ± 95 % CI)"), fontsize=9)
    fig.legend(handles=handles, fontsize=8, loc="outside right center", ncol=1 + len(policies) // 24)
    return fig


def _z(ci: float) -> float:
    return 0.0 if math.isnan(ci) else ci


#: the period a window's series are shown at: (longest window in days, polars duration, label)
PERIODS = ((2.0, "15m", "15-min"), (14.0, "1h", "hourly"), (math.inf, "1d", "daily"))


def series_period(ts: pl.Series) -> tuple[str, str]:
    """The period (polars duration, label) the time series of a window of ``ts`` are shown at."""
    days = (ts.max() - ts.min()).total_seconds() / 86400 if ts.len() else 0.0
    return next((every, label) for longest, every, label in PERIODS if days <= longest)


def per_period(df: pl.DataFrame, col: str, every: str) -> pl.DataFrame:
    """``col`` per location and period (``every``): its mean, min and max over the period's steps."""
    return (df.sort("location", "ts_utc")
              .group_by_dynamic("ts_utc", every=every, group_by="location")
              .agg(pl.col(col).mean().alias("mean"), pl.col(col).min().alias("lo"), pl.col(col).max().alias("hi"))
              .sort("location", "ts_utc"))


def _naive(ts: pl.Series) -> np.ndarray:
    return ts.dt.replace_time_zone(None).to_numpy()


def timeseries(series: Mapping[str, pl.DataFrame], *, seed: int | None = None, note: str = "") -> Figure:
    """Small multiples, one row per DC: carbon intensity and price (mean per period, the period's range
    shaded), then a heat map of the busy cores (mean per period) each policy put at that DC: where and when
    the policies put the load, readable for a year and 17 policies. ``note`` (the sweep's forecast model)
    heads the figure."""
    policies = list(series)
    first = series[policies[0]]
    locations = list(dict.fromkeys(first["location"].to_list()))
    colors = {loc: st["color"] for loc, st in zip(locations, series_styles(len(locations)), strict=True)}
    every, label = series_period(first["ts_utc"])
    carbon, price = per_period(first, "carbon_g_per_kwh", every), per_period(first, "price_usd_per_mwh", every)
    busy = {p: per_period(series[p], "busy_cores", every) for p in policies}
    row_h = max(1.9, 0.13 * len(policies) + 0.8)
    fig = Figure(figsize=(13, row_h * len(locations) + 0.9), layout="constrained")
    grid = fig.add_gridspec(len(locations), 3, width_ratios=(1, 1, 1.7))
    top = None
    for r, loc in enumerate(locations):
        axes = [fig.add_subplot(grid[r, c], sharex=top) for c in range(3)]
        top = top or axes[0]
        for ax, frame, unit, what in ((axes[0], carbon, "gCO2eq/kWh", "grid carbon intensity"),
                                      (axes[1], price, "USD/MWh", "electricity price")):
            f = frame.filter(pl.col("location") == loc)
            t = _naive(f["ts_utc"])
            ax.fill_between(t, f["lo"].to_numpy(), f["hi"].to_numpy(), color=colors[loc], alpha=0.25, lw=0)
            ax.plot(t, f["mean"].to_numpy(), color=colors[loc], lw=1)
            ax.set_ylabel(unit, fontsize=7)
            ax.set_title(f"{loc}: {what}", fontsize=8, loc="left")
        frames = [busy[p].filter(pl.col("location") == loc) for p in policies]
        # (drained runs end where their work ended: every row on the longest run's periods, blank past its end)
        longest = max(frames, key=lambda f: f.height)
        t = _naive(longest["ts_utc"])
        step = t[1] - t[0] if t.size > 1 else np.timedelta64(15, "m")
        z = np.full((len(frames), t.size), np.nan)
        for i, f in enumerate(frames):
            z[i, :f.height] = f["mean"].to_numpy()
        z = np.ma.masked_invalid(z)
        mesh = axes[2].pcolormesh(np.append(t, t[-1] + step), np.arange(len(policies) + 1), z, cmap="viridis",
                                  shading="flat", rasterized=True)
        axes[2].set_yticks(np.arange(len(policies)) + 0.5, policies, fontsize=6)
        axes[2].invert_yaxis()
        axes[2].set_title(f"{loc}: busy cores per policy ({label} mean"
                          + (f", seed {seed})" if seed is not None else ")"), fontsize=8, loc="left")
        bar = fig.colorbar(mesh, ax=axes[2], pad=0.01, fraction=0.04)
        bar.set_label("busy (cores)", fontsize=7)
        bar.ax.tick_params(labelsize=6)
        for ax in axes:
            ax.tick_params(labelsize=6)
            if r < len(locations) - 1:
                ax.tick_params(labelbottom=False)
        for ax in axes[:2]:
            ax.grid(True, alpha=0.3)
        if r == len(locations) - 1:
            for ax in axes:
                date_axis(ax)
                ax.set_xlabel("time (UTC)", fontsize=7)
    fig.suptitle(_title(f"{label} mean (shaded: the range within each period)"
                        + (f" — policies' forecast: {note}" if note else "")), fontsize=8)
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


def frontier(cmp: Comparison) -> Figure:
    """Carbon vs lateness (``frontier.png``): the share of tasks late (``sim_core.sla.late_rule``) against the
    carbon incl. transfers, per seed and per policy mean ± 95 % CI, the policies no other beats on both circled
    and joined: the frontier on which policies compare at equal service (``bench.service``)."""
    title = (f"bundle {cmp.bundle_id}: carbon vs lateness, {len(cmp.policies)} policies × {len(cmp.seeds)} seeds "
             f"({cmp.options['steps']} steps from step {cmp.options['start_step']}; small marks: seeds; large: mean "
             f"± 95 % CI)\nlate: {late_rule(cmp.options.get('sla_multiplier', 1.5))}")
    return tradeoff(cmp.runs, cmp.summary, title=title, x="sla_violation_rate", x_scale=100.0,
                    x_label="tasks late (% of tasks started)")


def write_all(cmp: Comparison, out_dir: Path) -> list[Path]:
    """The figures of a sweep into ``out_dir`` (the time series only if a series is available)."""
    out = Path(out_dir)
    note = forecast_caption(cmp.options)
    title = (f"bundle {cmp.bundle_id}: cost vs carbon, {len(cmp.policies)} policies × {len(cmp.seeds)} seeds "
             f"(small marks: seeds; large: mean ± 95 % CI; {cmp.options['steps']} steps from step "
             f"{cmp.options['start_step']})\nforecast: {note}")
    paths = [save_png(tradeoff(cmp.runs, cmp.summary, title=title), out / "tradeoff.png"),
             save_png(frontier(cmp), out / "frontier.png")]
    series = {p: cmp.series[p] for p in cmp.policies if p in cmp.series}
    if series:
        paths.append(save_png(timeseries(series, seed=cmp.seeds[0], note=note), out / "timeseries.png"))
    paths.append(save_png(utilisation(cmp.summary, cmp.policies, note=note), out / "utilisation.png"))
    return paths
