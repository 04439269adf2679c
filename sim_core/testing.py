"""Write small (or large synthetic) valid bundles for tests, benchmarks, examples and RL users.

Every bundle goes through the one bundle-format module (``gridshift.bundle``): the same column
schemas, Parquet settings, manifest form and atomic writer as ``scenario_builder export``, so a test
bundle is a real bundle. ``write_bundle`` writes whatever values it is given (tests use it to build
hostile bundles); ``sim_core.load`` then decides whether they are acceptable.
"""

from __future__ import annotations

import datetime as dt
import math
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import polars as pl

from gridshift import clusters, locations
from gridshift.bundle import (
    FORMAT_VERSION,
    NETWORK_SCHEMA,
    SIGNALS_SCHEMA,
    STEP_S,
    TASK_FLEX_DEFAULTS,
    TASKS_SCHEMA,
    pretty_json,
    publish,
)
from gridshift.dc_params import DatacenterParams
from gridshift.parquet import parquet_bytes

SIGNAL_DEFAULTS = {"carbon_g_per_kwh": 300.0, "price_usd_per_mwh": 80.0, "temp_c": 20.0,
                   "wetbulb_c": 15.0, "rh_pct": 60.0}


def _matrix(v, n: int, diag: float) -> np.ndarray:
    m = np.array(v, dtype=np.float64) if not np.isscalar(v) else np.full((n, n), float(v))
    m = m.copy()
    np.fill_diagonal(m, diag)
    return m


def _utc_us(seconds: np.ndarray, start: dt.datetime) -> pl.Series:
    us = np.round(np.asarray(seconds, dtype=np.float64) * 1e6).astype(np.int64) + int(start.timestamp()) * 1_000_000
    return pl.Series(us).cast(pl.Datetime("us")).dt.replace_time_zone("UTC")


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
    as seconds since the start (float/int arrays) instead of datetimes. Flexibility columns that are not
    given take ``gridshift.bundle.TASK_FLEX_DEFAULTS`` (no allowed delay, not interruptible, no checkpoint
    overhead, not elastic), so a task is exactly a version-1 task unless told otherwise.
    """
    n_dc = len(locations)
    start = dt.datetime(year, 1, 1, tzinfo=dt.UTC)

    def per_dc(v):
        return [float(v)] * n_dc if np.isscalar(v) else [float(x) for x in v]

    weights = per_dc(population_weight if population_weight is not None else 1.0 / n_dc)
    cores, gpus, mem = per_dc(total_cores), per_dc(total_gpus), per_dc(total_mem_gb)
    phys = [p.to_dict() if isinstance(p, DatacenterParams) else DatacenterParams.from_dict(dict(p)).to_dict()
            for p in (physics if physics is not None else [DatacenterParams()] * n_dc)]

    # signals
    sig = {**SIGNAL_DEFAULTS, **(signals or {})}
    ts = pl.datetime_range(start, start + dt.timedelta(seconds=STEP_S * (n_steps - 1)), interval=f"{STEP_S}s",
                           time_unit="us", time_zone="UTC", eager=True)
    cols: dict[str, object] = {"location": np.repeat(np.array(list(locations), dtype=object), n_steps),
                               "ts_utc": pl.concat([ts] * n_dc)}
    for c in SIGNAL_DEFAULTS:
        v = np.asarray(sig[c], dtype=np.float64)
        cols[c] = np.ascontiguousarray(np.broadcast_to(v[None, :] if v.ndim == 1 else v, (n_dc, n_steps))).reshape(-1)
    for c in ("carbon_is_estimated", "carbon_is_filled", "price_is_filled", "weather_is_filled"):
        cols[c] = np.zeros(n_dc * n_steps, dtype=bool)

    # tasks
    if tasks is None:
        tasks = {"arrival_ts_utc": np.zeros(0)}
    if isinstance(tasks, pl.DataFrame):
        tdf = tasks.with_columns(**{c: pl.lit(v) for c, v in TASK_FLEX_DEFAULTS.items() if c not in tasks.columns})
    else:
        t = dict(tasks)
        arr = np.asarray(t["arrival_ts_utc"])
        n = len(arr)

        def col(k, default):
            return np.asarray(t.get(k, np.full(n, default)), dtype=np.float64)

        tdf = pl.DataFrame({
            "task_id": np.asarray(t.get("task_id", np.arange(n)), dtype=np.int64),
            "arrival_ts_utc": _utc_us(arr, start) if arr.dtype.kind in "fiu" else pl.Series(arr),
            "duration_s": col("duration_s", 1800.0), "cpu_cores": col("cpu_cores", 1.0),
            "gpus": col("gpus", 0.0), "mem_gb": col("mem_gb", 1.0),
            "gpu_mem_gb": col("gpu_mem_gb", 0.0), "bandwidth_gb": col("bandwidth_gb", 0.1),
            **{c: np.broadcast_to(np.asarray(t.get(c, v), dtype=type(v) if isinstance(v, bool) else np.float64),
                                  (n,)).copy()
               for c, v in TASK_FLEX_DEFAULTS.items()},
        })

    # network
    u, th, rt = _matrix(usd_per_gb, n_dc, 0.0), _matrix(throughput_mbps, n_dc, 1e6), _matrix(rtt_ms, n_dc, 0.0)
    src, dst = np.meshgrid(np.arange(n_dc), np.arange(n_dc), indexing="ij")
    locs = np.array(list(locations), dtype=object)
    net = pl.DataFrame({"src_location": locs[src.ravel()], "dst_location": locs[dst.ravel()],
                        "usd_per_gb": u.ravel(), "throughput_mbps": th.ravel(), "rtt_ms": rt.ravel()})

    dcs = [{"location": loc, "timezone": tz, "population_weight": w, "total_cores": c, "total_gpus": g,
            "total_mem_gb": m, "physics": p}
           for loc, tz, w, c, g, m, p in zip(locations, timezones, weights, cores, gpus, mem, phys, strict=True)]
    files = {
        "signals.parquet": parquet_bytes(pl.DataFrame(cols), SIGNALS_SCHEMA),
        "tasks.parquet": parquet_bytes(tdf.sort(["arrival_ts_utc", "task_id"]), TASKS_SCHEMA),
        "network.parquet": parquet_bytes(net, NETWORK_SCHEMA),
        "datacenters.json": pretty_json({"datacenters": dcs}),
    }
    manifest = {
        "format_version": FORMAT_VERSION, "gridshift_version": gridshift_version,
        "year": year, "step_s": STEP_S, "n_steps": n_steps, "start_utc": start.isoformat(),
        "locations": list(locations),
        "parameters": dict(parameters or {"carbon_basis": "lca", "provider": "synthetic", "seed": 0}),
        "location_meta": {loc: {"timezone": tz} for loc, tz in zip(locations, timezones, strict=True)},
        "quality": {}, "lineage": [], "attributions": [], "resampling": {},
    }
    return publish(files, manifest, Path(root), name=name).path


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
    horizon = float(n_steps * STEP_S)
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
                     n_dc: int = 5, name: str | None = None, tasks: pl.DataFrame | None = None,
                     capacity_scale: float = 1.0) -> Path:
    """The reference 5-DC cluster (``gridshift.clusters.REFERENCE``, replicated cyclically for n_dc > 5)
    with synthetic signals and a synthetic workload of n_tasks tasks (or the given ``tasks``).
    ``capacity_scale`` multiplies every site's cores, GPUs and memory (SustainCluster's reference cluster
    is sized far above this workload: at 1.3 M tasks a year its GPUs are ≈ 3 % busy)."""
    ref = clusters.REFERENCE
    sites = [ref[i % len(ref)] for i in range(n_dc)]
    locs = [s.location if i < len(ref) else f"{s.location}-{i // len(ref)}" for i, s in enumerate(sites)]
    regs = [locations.get(s.location) for s in sites]
    macro = [r.macro_cluster for r in regs]
    # throughput/RTT between macro clusters (Persico et al. 2016 order of magnitude)
    thr = np.array([[1e6 if a == b else (160.0 if {a, b} == {"US", "EU"} else 60.0) for b in macro] for a in macro])
    rtt = np.array([[5.0 if a == b else (70.0 if {a, b} == {"US", "EU"} else 200.0) for b in macro] for a in macro])
    usd = np.array([[0.02 if a == b else 0.08 for b in macro] for a in macro])
    return write_bundle(
        root, locations=locs, timezones=[r.timezone for r in regs],
        population_weight=[s.population_weight for s in sites],
        total_cores=[s.total_cores * capacity_scale for s in sites],
        total_gpus=[s.total_gpus * capacity_scale for s in sites],
        total_mem_gb=[s.total_mem_gb * capacity_scale for s in sites],
        n_steps=n_steps, signals=synthetic_signals(n_dc, n_steps, seed),
        tasks=synthetic_tasks(n_tasks, n_steps, seed) if tasks is None else tasks, usd_per_gb=usd,
        throughput_mbps=thr, rtt_ms=rtt,
        name=name,
    )


#: three DCs at fixed UTC offsets (no DST): UTC-5, UTC+1, UTC+8 (the worked example of docs/model.md §2)
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
