"""Summarize a bundle, and plot its signals per region and its workload (PNG, matplotlib Agg)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl

from gridshift.bundle import MANIFEST, check_integrity, verify_bundle
from gridshift.home import safe_join


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


def plot(bundle: str | Path, out_dir: str | Path) -> list[Path]:
    """Write ``signals_<LOCATION>.png`` per region and ``workload.png`` into ``out_dir``."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    root = Path(bundle)
    out = Path(out_dir)
    m = verified_manifest(root)
    out.mkdir(parents=True, exist_ok=True)
    sig = pl.read_parquet(root / "signals.parquet")
    written = []
    for code in m["locations"]:
        d = sig.filter(pl.col("location") == code)
        t = d["ts_utc"].to_numpy()
        fig, axes = plt.subplots(4, 1, figsize=(12, 9), sharex=True)
        axes[0].plot(t, d["carbon_g_per_kwh"].to_numpy(), lw=0.4)
        axes[0].set_ylabel("gCO2eq/kWh")
        axes[1].plot(t, d["price_usd_per_mwh"].to_numpy(), lw=0.4, color="tab:orange")
        axes[1].set_ylabel("USD/MWh")
        axes[2].plot(t, d["temp_c"].to_numpy(), lw=0.4, label="dry-bulb")
        axes[2].plot(t, d["wetbulb_c"].to_numpy(), lw=0.4, label="wet-bulb")
        axes[2].set_ylabel("°C")
        axes[2].legend(loc="upper right")
        axes[3].plot(t, d["rh_pct"].to_numpy(), lw=0.4, color="tab:green")
        axes[3].set_ylabel("RH %")
        filled = (d["carbon_is_filled"] | d["price_is_filled"] | d["weather_is_filled"]).to_numpy()
        for ax in axes:
            ymin, ymax = ax.get_ylim()
            ax.fill_between(t, ymin, ymax, where=filled, color="red", alpha=0.3, step="mid", lw=0)
        fig.suptitle(f"{code} {m['year']} (bundle {m['bundle_id']}; red = filled)")
        fig.tight_layout()
        path = safe_join(out, f"signals_{code}.png")  # region codes cannot leave out_dir
        fig.savefig(path, dpi=90)
        plt.close(fig)
        written.append(path)
    tasks = pl.read_parquet(root / "tasks.parquet")
    fig, axes = plt.subplots(2, 3, figsize=(13, 7))
    if tasks.height:
        per_day = tasks.group_by(pl.col("arrival_ts_utc").dt.truncate("1d")).len().sort("arrival_ts_utc")
        axes[0, 0].plot(per_day["arrival_ts_utc"].to_numpy(), per_day["len"].to_numpy(), lw=0.6)
    axes[0, 0].set_title("tasks per day (UTC)")
    for ax, col in zip(axes.flat[1:], ("duration_s", "cpu_cores", "gpus", "mem_gb", "bandwidth_gb"), strict=True):
        if tasks.height:
            ax.hist(tasks[col].to_numpy(), bins=50, log=True)
        ax.set_title(col)
    fig.suptitle(f"workload {m['parameters'].get('workload')} {m['year']}: {tasks.height:,} tasks")
    fig.tight_layout()
    path = safe_join(out, "workload.png")
    fig.savefig(path, dpi=90)
    plt.close(fig)
    written.append(path)
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
