"""PNG figures of a derived workload: weekday × hour heatmap, duration and resource distributions.

Uses matplotlib's object API with the Agg canvas (no pyplot state, no display needed).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
from matplotlib.figure import Figure

from gridshift_plots.style import save_png
from pipelines.workload.derive import WEEKDAYS, Histogram, weekday_hour_profile

# column, axis label, unit scale, reference histogram variable
DISTRIBUTIONS = (
    ("duration_s", "duration (min)", 1 / 60, "duration"),
    ("cpu_cores", "CPU (cores)", 1.0, "cpu"),
    ("gpus", "GPU (GPUs)", 1.0, "gpu"),
    ("mem_gb", "memory (GB)", 1.0, "mem"),
    ("bandwidth_gb", "data moved (GB)", 1.0, "bandwidth"),
)


def heatmap_figure(profile: np.ndarray, title: str) -> Figure:
    """Mean tasks per 15 minutes by weekday (rows) and hour of day (columns)."""
    fig = Figure(figsize=(9, 3.4), layout="constrained")
    ax = fig.add_subplot()
    im = ax.imshow(profile, aspect="auto", cmap="viridis")
    ax.set_yticks(range(7), WEEKDAYS)
    ax.set_xticks(range(0, 24, 2))
    ax.set_xlabel("hour of day (UTC)")
    ax.set_title(title)
    fig.colorbar(im, ax=ax, label="mean tasks per 15 min")
    return fig


def distributions_figure(tasks: pl.DataFrame, title: str, reference: dict[str, Histogram] | None = None) -> Figure:
    """The density of each task size (derived), over the reference histogram where one is given."""
    fig = Figure(figsize=(15, 3.6), layout="constrained")
    for i, (col, label, scale, ref) in enumerate(DISTRIBUTIONS, start=1):
        ax = fig.add_subplot(1, len(DISTRIBUTIONS), i)
        x = tasks[col].to_numpy() * scale
        hist = reference.get(ref) if reference else None
        if hist is not None and len(x) and x.max() > 1.5 * hist.edges[-1]:
            hist = None  # e.g. the ai size model (GB to TB) against the 0-0.75 GB reference histogram
        bins = hist.edges if hist is not None else 40
        if hist is None and col == "bandwidth_gb" and len(x) and x.min() > 0 and x.max() > 100 * x.min():
            bins = np.logspace(np.log10(x.min()), np.log10(x.max()), 41)  # sizes span orders of magnitude
            ax.set_xscale("log")
        ax.hist(x, bins=bins, density=True, alpha=0.7, label="derived")
        if hist is not None:
            e = hist.edges
            dens = hist.counts / hist.counts.sum() / np.diff(e)
            ax.step(e[:-1], dens, where="post", color="black", lw=1, label="reference")
            ax.legend(fontsize=7)
        ax.set_xlabel(label)
        ax.set_ylabel("density (relative)" if i == 1 else "")
        ax.set_yticks([])
        ax.set_title(f"mean {np.mean(x):.3g}" if len(x) else "empty", fontsize=9)
    fig.suptitle(title)
    return fig


def plot_workload(tasks: pl.DataFrame, year: int, out_dir: Path, *, name: str = "workload",
                  reference: dict[str, Histogram] | None = None) -> list[Path]:
    """Write ``<name>_weekday_hour.png`` and ``<name>_distributions.png``; return their paths."""
    out_dir = Path(out_dir)
    prof = weekday_hour_profile(tasks, year)
    return [
        save_png(heatmap_figure(prof, f"{name} {year}: tasks per 15 min"), out_dir / f"{name}_weekday_hour.png"),
        save_png(distributions_figure(tasks, f"{name} {year}", reference), out_dir / f"{name}_distributions.png"),
    ]
