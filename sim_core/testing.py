"""Write small (or large synthetic) valid bundles exactly as docs/bundle_format.md describes.

For tests, benchmarks and the Gymnasium wrapper, until real bundles are built by
``scenario_builder``. Every file is hashed and the bundle id computed as the format requires.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import shutil
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import polars as pl

from gridshift.dc_params import DatacenterParams
from gridshift.hashing import compute_bundle_id, sha256_file

from .scenario import FORMAT_VERSION

#: The reference 5-DC cluster (shared/data/reference/datacenters_reference.csv) with time zones.
REFERENCE_DCS = [
    # location, timezone, population_weight, total_cores, total_gpus, total_mem_gb, macro cluster
    ("US-CAL-CISO", "America/Los_Angeles", 0.18, 50000, 1000, 80000, "US"),
    ("DE-LU", "Europe/Berlin", 0.22, 85000, 600, 80000, "EU"),
    ("CL-SIC", "America/Santiago", 0.20, 110000, 300, 60000, "SA"),
    ("SG", "Asia/Singapore", 0.25, 75000, 700, 50000, "AP"),
    ("AU-NSW", "Australia/Sydney", 0.15, 65000, 300, 60000, "AP"),
]

SIGNAL_DEFAULTS = {"carbon_g_per_kwh": 300.0, "price_usd_per_mwh": 80.0, "temp_c": 20.0,
                   "wetbulb_c": 15.0, "rh_pct": 60.0}


def _matrix(v, n: int, diag: float) -> np.ndarray:
    m = np.array(v, dtype=np.float64) if not np.isscalar(v) else np.full((n, n), float(v))
    m = m.copy()
    np.fill_diagonal(m, diag)
    return m


def write_bundle(
    root: str | Path,
    *,
    locations: Sequence[str],
    timezones: Sequence[str],
    population_weight: Sequence[float] | None = None,
    total_cores: Sequence[float] | float = 1000,
    total_gpus: Sequence[float] | float = 16,
    total_mem_gb: Sequence[float] | float = 4000,
    physics: Sequence[DatacenterParams | Mapping] | None = None,
    n_steps: int = 96,
    year: int = 2023,
    signals: Mapping[str, object] | None = None,
    tasks: pl.DataFrame | Mapping[str, object] | None = None,
    usd_per_gb: object = 0.02,
    throughput_mbps: object = 100.0,
    rtt_ms: object = 100.0,
    parameters: Mapping | None = None,
    gridshift_version: str = "0.1.0",
    name: str | None = None,
) -> Path:
    """Write a bundle into ``root/<bundle_id>`` (or ``root/name``) and return its path.

    ``signals``: column name -> scalar, (n_steps,) array (all DCs) or (n_dc, n_steps) array.
    ``tasks``: DataFrame or mapping with the tasks.parquet columns; ``arrival_ts_utc`` may be given
    as seconds since the start (float/int arrays) instead of datetimes.
    """
    n_dc = len(locations)
    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    start = dt.datetime(year, 1, 1, tzinfo=dt.UTC)

    def per_dc(v, cast=float):
        if np.isscalar(v):
            return [cast(v)] * n_dc
        return [cast(x) for x in v]

    weights = per_dc(population_weight if population_weight is not None else 1.0 / n_dc)
    cores, gpus, mem = per_dc(total_cores), per_dc(total_gpus), per_dc(total_mem_gb)
    if physics is None:
        physics = [DatacenterParams()] * n_dc
    phys = [p.to_dict() if isinstance(p, DatacenterParams) else DatacenterParams.from_dict(dict(p)).to_dict()
            for p in physics]

    tmp = root / f".tmp-{name or 'bundle'}-{np.random.default_rng().integers(1 << 62)}"
    tmp.mkdir(parents=True)

    # signals
    sig = dict(SIGNAL_DEFAULTS)
    sig.update(signals or {})
    ts = pl.datetime_range(start, start + dt.timedelta(seconds=900 * (n_steps - 1)), interval="15m",
                           time_unit="us", time_zone="UTC", eager=True)
    cols: dict[str, object] = {
        "location": np.repeat(np.array(list(locations), dtype=object), n_steps),
        "ts_utc": pl.concat([ts] * n_dc),
    }
    for c in ("carbon_g_per_kwh", "price_usd_per_mwh", "temp_c", "wetbulb_c", "rh_pct"):
        a = np.broadcast_to(np.asarray(sig[c], dtype=np.float64), (n_dc, n_steps)) \
            if np.ndim(sig[c]) != 1 else np.broadcast_to(np.asarray(sig[c], dtype=np.float64)[None, :], (n_dc, n_steps))
        cols[c] = np.ascontiguousarray(a).reshape(-1)
    for c in ("carbon_is_estimated", "carbon_is_filled", "price_is_filled", "weather_is_filled"):
        cols[c] = np.zeros(n_dc * n_steps, dtype=bool)
    pl.DataFrame(cols).write_parquet(tmp / "signals.parquet")

    # tasks
    if tasks is None:
        tasks = {"arrival_ts_utc": np.zeros(0)}
    tdf = tasks if isinstance(tasks, pl.DataFrame) else None
    if tdf is None:
        t = dict(tasks)
        n = len(np.asarray(t["arrival_ts_utc"]))
        arr = np.asarray(t["arrival_ts_utc"])
        if arr.dtype.kind in "fiu":
            us = np.round(arr.astype(np.float64) * 1e6).astype(np.int64) + int(start.timestamp()) * 1_000_000
            arr_s = pl.Series(us).cast(pl.Datetime("us")).dt.replace_time_zone("UTC")
        else:
            arr_s = pl.Series(arr)
        def col(k, default):
            return np.asarray(t.get(k, np.full(n, default)), dtype=np.float64)
        tdf = pl.DataFrame({
            "task_id": np.asarray(t.get("task_id", np.arange(n)), dtype=np.int64),
            "arrival_ts_utc": arr_s,
            "duration_s": col("duration_s", 1800.0), "cpu_cores": col("cpu_cores", 1.0),
            "gpus": col("gpus", 0.0), "mem_gb": col("mem_gb", 1.0),
            "gpu_mem_gb": col("gpu_mem_gb", 0.0), "bandwidth_gb": col("bandwidth_gb", 0.1),
        })
    tdf = tdf.sort(["arrival_ts_utc", "task_id"])
    tdf.write_parquet(tmp / "tasks.parquet")

    # network
    u, th, rt = _matrix(usd_per_gb, n_dc, 0.0), _matrix(throughput_mbps, n_dc, 1e6), _matrix(rtt_ms, n_dc, 0.0)
    src, dst = np.meshgrid(np.arange(n_dc), np.arange(n_dc), indexing="ij")
    locs = np.array(list(locations), dtype=object)
    pl.DataFrame({"src_location": locs[src.ravel()], "dst_location": locs[dst.ravel()],
                  "usd_per_gb": u.ravel(), "throughput_mbps": th.ravel(), "rtt_ms": rt.ravel()}
                 ).write_parquet(tmp / "network.parquet")

    # datacenters.json
    dcs = [{"location": loc, "timezone": tz, "population_weight": w, "total_cores": c, "total_gpus": g,
            "total_mem_gb": m, "physics": p}
           for loc, tz, w, c, g, m, p in zip(locations, timezones, weights, cores, gpus, mem, phys, strict=True)]
    (tmp / "datacenters.json").write_text(json.dumps({"datacenters": dcs}, indent=1, sort_keys=True))

    files = {f: sha256_file(tmp / f) for f in ("signals.parquet", "tasks.parquet", "network.parquet",
                                                "datacenters.json")}
    manifest = {
        "format_version": FORMAT_VERSION,
        "gridshift_version": gridshift_version,
        "year": year, "step_s": 900, "n_steps": n_steps, "start_utc": start.isoformat(),
        "locations": list(locations),
        "parameters": dict(parameters or {"carbon_basis": "lca", "provider": "synthetic", "seed": 0}),
        "location_meta": {loc: {"timezone": tz} for loc, tz in zip(locations, timezones, strict=True)},
        "quality": {}, "lineage": [], "attributions": [], "resampling": {},
        "files": files,
    }
    manifest["bundle_id"] = compute_bundle_id(manifest)
    (tmp / "manifest.json").write_text(json.dumps(manifest, indent=1, sort_keys=True))
    final = root / (name or manifest["bundle_id"])
    if final.exists():
        shutil.rmtree(final)
    tmp.rename(final)
    return final


# ------------------------------------------------------------------ synthetic data
def synthetic_signals(n_dc: int, n_steps: int, seed: int = 0) -> dict[str, np.ndarray]:
    """Smooth diurnal/seasonal carbon, price, temperature and wet-bulb per DC (seeded)."""
    rng = np.random.default_rng(seed)
    k = np.arange(n_steps)
    day = 2 * math.pi * k / 96.0
    year = 2 * math.pi * k / 35040.0
    out = {c: np.empty((n_dc, n_steps)) for c in ("carbon_g_per_kwh", "price_usd_per_mwh", "temp_c",
                                                   "wetbulb_c", "rh_pct")}
    for d in range(n_dc):
        ph = rng.uniform(0, 2 * math.pi)
        base = rng.uniform(100, 600)
        out["carbon_g_per_kwh"][d] = base * (1 + 0.25 * np.sin(day + ph) + 0.1 * np.sin(year + ph)) \
            + rng.normal(0, 5, n_steps)
        out["price_usd_per_mwh"][d] = rng.uniform(40, 120) * (1 + 0.3 * np.sin(day + ph + 1)) \
            + rng.normal(0, 3, n_steps)
        t = rng.uniform(5, 25) + 8 * np.sin(year + ph) + 5 * np.sin(day + ph)
        out["temp_c"][d] = t
        out["rh_pct"][d] = 60.0
        out["wetbulb_c"][d] = t - 4.0
    return out


def synthetic_tasks(n_tasks: int, n_steps: int, seed: int = 0) -> pl.DataFrame:
    """Synthetic workload with the Alibaba-like marginals used by the benchmark: durations
    15-394 min (mean ~95), cores mean ~8.5, GPUs mean ~0.49, memory mean ~10.8 GB, input ~0.12 GB."""
    rng = np.random.default_rng(seed)
    horizon = n_steps * 900.0
    arr = np.sort(rng.uniform(0.0, horizon, n_tasks))
    dur_min = np.minimum(15.0 + rng.exponential(80.0, n_tasks), 394.0)
    cores = rng.choice(np.array([1, 2, 4, 8, 16, 32.0]), n_tasks, p=[0.10, 0.15, 0.26, 0.25, 0.16, 0.08])
    gpus = rng.choice(np.array([0, 0.25, 0.5, 1, 2, 4.0]), n_tasks, p=[0.55, 0.10, 0.10, 0.15, 0.07, 0.03])
    mem = np.maximum(rng.gamma(2.0, 5.4, n_tasks), 0.1)
    bw = rng.exponential(0.12, n_tasks)
    start_us = int(dt.datetime(2023, 1, 1, tzinfo=dt.UTC).timestamp()) * 1_000_000
    us = np.round(arr * 1e6).astype(np.int64) + start_us
    return pl.DataFrame({
        "task_id": np.arange(n_tasks, dtype=np.int64),
        "arrival_ts_utc": pl.Series(us).cast(pl.Datetime("us")).dt.replace_time_zone("UTC"),
        "duration_s": dur_min * 60.0, "cpu_cores": cores, "gpus": gpus, "mem_gb": mem,
        "gpu_mem_gb": gpus * 16.0, "bandwidth_gb": bw,
    })


def reference_bundle(root: str | Path, *, n_tasks: int, n_steps: int = 35040, seed: int = 0,
                     n_dc: int = 5, name: str | None = None) -> Path:
    """The reference 5-DC cluster (replicated cyclically for n_dc > 5) with synthetic signals
    and a synthetic workload of n_tasks tasks."""
    dcs = [REFERENCE_DCS[i % len(REFERENCE_DCS)] for i in range(n_dc)]
    locs = [d[0] if i < len(REFERENCE_DCS) else f"{d[0]}-{i // len(REFERENCE_DCS)}" for i, d in enumerate(dcs)]
    macro = [d[6] for d in dcs]
    # throughput/RTT between macro clusters (Persico et al. 2016 order of magnitude)
    thr = np.array([[1e6 if a == b else (160.0 if {a, b} == {"US", "EU"} else 60.0) for b in macro] for a in macro])
    rtt = np.array([[5.0 if a == b else (70.0 if {a, b} == {"US", "EU"} else 200.0) for b in macro] for a in macro])
    usd = np.array([[0.02 if a == b else 0.08 for b in macro] for a in macro])
    return write_bundle(
        root, locations=locs, timezones=[d[1] for d in dcs], population_weight=[d[2] for d in dcs],
        total_cores=[d[3] for d in dcs], total_gpus=[d[4] for d in dcs], total_mem_gb=[d[5] for d in dcs],
        n_steps=n_steps, signals=synthetic_signals(n_dc, n_steps, seed),
        tasks=synthetic_tasks(n_tasks, n_steps, seed), usd_per_gb=usd, throughput_mbps=thr, rtt_ms=rtt,
        name=name,
    )


#: three DCs at fixed UTC offsets (no DST): UTC-5, UTC+1, UTC+8 (the SIMULATION.md worked example)
TZ3 = ["America/Bogota", "Africa/Lagos", "Asia/Singapore"]
LOC3 = ["AA", "BB", "CC"]


def tiny_bundle(root, **kw) -> Path:
    """A 3-DC, one-day bundle with 8 small tasks (weights 0.4/0.5/0.3); ``kw`` overrides."""
    n = 8
    args = dict(locations=LOC3, timezones=TZ3, population_weight=[0.4, 0.5, 0.3], n_steps=96,
                total_cores=64, total_gpus=4, total_mem_gb=256,
                tasks={"arrival_ts_utc": np.linspace(0, 3600 * 6, n), "duration_s": np.full(n, 2000.0),
                       "cpu_cores": np.full(n, 4.0), "gpus": np.r_[np.zeros(n - 2), [0.5, 1.0]]})
    args.update(kw)
    return write_bundle(root, **args)
