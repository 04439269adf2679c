"""Summarize a bundle, and plot its signals per region and its workload (PNG, matplotlib's object API)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl
from matplotlib.figure import Figure

from gridshift.bundle import MANIFEST, check_integrity, verify_bundle
from gridshift.home import safe_join
from gridshift_plots.style import date_axis, save_png


def read_manifest(bundle: Path) -> dict[str, Any]:
    """The manifest of a bundle whose files are intact (``BundleError`` otherwise)."""
    return check_integrity(Path(bundle))


def verified_manifest(bundle: Path) -> dict[str, Any]:
    """The manifest of a bundle that passes ``verify`` (integrity and every value within the bundle contract);
    its first problem, a ``BundleError`` naming file, column, rows and values, otherwise. A summary or plot of
    a bundle the simulator would refuse (a hash-valid file with infinite durations) would mislead."""
    res = verify_bundle(bundle)
    if not res.ok:
        raise res.problems[0]
    return read_manifest(bundle)


def summary(bundle: str | Path) -> dict[str, Any]:
    """Key facts of a verified bundle: id, year, locations, parameters, quality, task and signal statistics."""
    root = Path(bundle)
    m = verified_manifest(root)
    sig = pl.scan_parquet(root / "signals.parquet")
    stats = (
        sig.group_by("location", maintain_order=True)
        .agg(
            pl.len().alias("steps"),
            pl.col("carbon_g_per_kwh").mean().alias("carbon_mean"),
            pl.col("price_usd_per_mwh").mean().alias("price_mean"),
            pl.col("price_usd_per_mwh").min().alias("price_min"),
            pl.col("price_usd_per_mwh").max().alias("price_max"),
            pl.col("temp_c").mean().alias("temp_mean"),
            pl.col("wetbulb_c").max().alias("wetbulb_max"),
        )
        .collect()
    )
    tasks = pl.scan_parquet(root / "tasks.parquet").select(
        pl.len().alias("n_tasks"),
        pl.col("duration_s").mean().alias("mean_duration_s"),
        pl.col("cpu_cores").mean().alias("mean_cpu_cores"),
        pl.col("gpus").mean().alias("mean_gpus"),
        pl.col("mem_gb").mean().alias("mean_mem_gb"),
        pl.col("bandwidth_gb").mean().alias("mean_bandwidth_gb"),
    ).collect().row(0, named=True)
    size = sum(p.stat().st_size for p in root.iterdir() if p.is_file())
    return {
        "bundle_id": m.get("bundle_id"), "path": str(root), "year": m.get("year"),
        "n_steps": m.get("n_steps"), "locations": m.get("locations"), "parameters": m.get("parameters"),
        "gridshift_version": m.get("gridshift_version"), "quality": m.get("quality"),
        "signal_stats": stats.to_dicts(), "tasks": tasks, "bytes": size,
    }


#: the workload histograms: column, axis label with its unit, scale from the column's unit
WORKLOAD_HISTOGRAMS = (
    ("duration_s", "duration (h)", 1 / 3600),
    ("cpu_cores", "CPU (cores)", 1.0),
    ("gpus", "GPUs (devices)", 1.0),
    ("mem_gb", "memory (GB)", 1.0),
    ("bandwidth_gb", "data moved (GB)", 1.0),
)


def signals_figure(sig: pl.DataFrame, code: str, manifest: dict[str, Any]) -> Figure:
    """One region's carbon, price, temperatures and humidity over the year; filled steps shaded red."""
    d = sig.filter(pl.col("location") == code)
    t = d["ts_utc"].dt.replace_time_zone(None).to_numpy()
    fig = Figure(figsize=(12, 9), layout="constrained")
    axes = [fig.add_subplot(4, 1, 1)]
    axes += [fig.add_subplot(4, 1, i, sharex=axes[0]) for i in (2, 3, 4)]
    axes[0].plot(t, d["carbon_g_per_kwh"].to_numpy(), lw=0.4)
    axes[0].set_ylabel("carbon (gCO2eq/kWh)")
    axes[1].plot(t, d["price_usd_per_mwh"].to_numpy(), lw=0.4, color="tab:orange")
    axes[1].set_ylabel("price (USD/MWh)")
    axes[2].plot(t, d["temp_c"].to_numpy(), lw=0.4, label="dry-bulb")
    axes[2].plot(t, d["wetbulb_c"].to_numpy(), lw=0.4, label="wet-bulb")
    axes[2].set_ylabel("temperature (°C)")
    axes[2].legend(loc="upper right", fontsize=8)
    axes[3].plot(t, d["rh_pct"].to_numpy(), lw=0.4, color="tab:green")
    axes[3].set_ylabel("relative humidity (%)")
    filled = (d["carbon_is_filled"] | d["price_is_filled"] | d["weather_is_filled"]).to_numpy()
    for ax in axes:
        ymin, ymax = ax.get_ylim()
        ax.fill_between(t, ymin, ymax, where=filled, color="red", alpha=0.3, step="mid", lw=0)
    for ax in axes[:-1]:
        ax.tick_params(labelbottom=False)
    date_axis(axes[-1])
    axes[-1].set_xlabel("time (UTC)")
    fig.suptitle(f"{code} {manifest['year']} (bundle {manifest['bundle_id']}; red = filled)")
    return fig


def workload_figure(tasks: pl.DataFrame, manifest: dict[str, Any]) -> Figure:
    """Tasks per day, and the distribution of each task size (log counts), each axis with its unit."""
    fig = Figure(figsize=(13, 7), layout="constrained")
    axes = [fig.add_subplot(2, 3, i) for i in range(1, 7)]
    if tasks.height:
        per_day = tasks.group_by(pl.col("arrival_ts_utc").dt.truncate("1d")).len().sort("arrival_ts_utc")
        axes[0].plot(per_day["arrival_ts_utc"].dt.replace_time_zone(None).to_numpy(), per_day["len"].to_numpy(),
                     lw=0.6)
    date_axis(axes[0])
    axes[0].set_xlabel("arrival day (UTC)")
    axes[0].set_ylabel("arrivals (tasks per day)")
    for ax, (col, label, scale) in zip(axes[1:], WORKLOAD_HISTOGRAMS, strict=True):
        if tasks.height:
            ax.hist(tasks[col].to_numpy() * scale, bins=50, log=True)
        ax.set_xlabel(label)
        ax.set_ylabel("tasks (log scale)")
    fig.suptitle(f"workload {manifest['parameters'].get('workload')} {manifest['year']}: {tasks.height:,} tasks")
    return fig


def plot(bundle: str | Path, out_dir: str | Path) -> list[Path]:
    """Write ``signals_<LOCATION>.png`` per region and ``workload.png`` into ``out_dir`` (a verified bundle)."""
    root = Path(bundle)
    out = Path(out_dir)
    m = verified_manifest(root)
    sig = pl.read_parquet(root / "signals.parquet")
    # region codes cannot leave out_dir (safe_join)
    written = [save_png(signals_figure(sig, code, m), safe_join(out, f"signals_{code}.png")) for code in m["locations"]]
    tasks = pl.read_parquet(root / "tasks.parquet")
    written.append(save_png(workload_figure(tasks, m), safe_join(out, "workload.png")))
    return written


def list_bundles(bundles_dir: str | Path) -> list[dict[str, Any]]:
    """Bundles (directories holding a manifest.json) under ``bundles_dir``, by id."""
    root = Path(bundles_dir)
    out = []
    if not root.is_dir():
        return out
    for child in sorted(root.iterdir()):
        if not child.is_dir() or child.name.startswith(".") or not (child / MANIFEST).is_file():
            continue
        try:
            m = read_manifest(child)
        except (OSError, ValueError):
            out.append({"bundle_id": child.name, "path": str(child), "error": "unreadable manifest"})
            continue
        out.append({
            "bundle_id": m.get("bundle_id"), "path": str(child), "year": m.get("year"),
            "locations": m.get("locations", []), "workload": (m.get("parameters") or {}).get("workload"),
            "n_tasks": m.get("n_tasks"), "bytes": sum(p.stat().st_size for p in child.iterdir() if p.is_file()),
        })
    return out
