"""Load and verify a scenario bundle (docs/bundle_format.md) into flat NumPy arrays."""

from __future__ import annotations

import datetime as dt
import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import polars as pl

from gridshift.dc_params import DatacenterParams
from gridshift.hashing import compute_bundle_id, sha256_file

from .physics import param_vector

FORMAT_VERSION = 1
REQUIRED_FILES = ("signals.parquet", "tasks.parquet", "network.parquet", "datacenters.json")
TASK_COLUMNS = ("task_id", "arrival_ts_utc", "duration_s", "cpu_cores", "gpus", "mem_gb",
                "gpu_mem_gb", "bandwidth_gb")
SIGNAL_COLUMNS = ("carbon_g_per_kwh", "price_usd_per_mwh", "temp_c", "wetbulb_c")


class BundleError(ValueError):
    """A bundle is missing, corrupt or of an unsupported format; the message names the file."""


@dataclass
class Scenario:
    """A verified bundle as flat arrays. Datacenter index order = manifest ``locations``."""

    path: Path | None
    bundle_id: str
    gridshift_version: str
    manifest: dict
    locations: list[str]
    timezones: list[str]
    population_weight: np.ndarray  # (n_dc,)
    cap_cores: np.ndarray  # (n_dc,)
    cap_gpus: np.ndarray
    cap_mem_gb: np.ndarray
    physics: list[DatacenterParams]
    params: np.ndarray  # (n_dc, N_PARAMS)
    start_utc: dt.datetime
    step_s: int
    n_steps: int
    # signals, (n_dc, n_steps) C-contiguous float64
    carbon_g_per_kwh: np.ndarray
    price_usd_per_mwh: np.ndarray
    temp_c: np.ndarray
    wetbulb_c: np.ndarray
    local_hour: np.ndarray  # (n_dc, n_steps) int8, local hour of the step start (DST aware)
    # tasks, (n_tasks,), sorted by arrival
    task_id: np.ndarray
    arrival_s: np.ndarray  # seconds since start_utc
    duration_s: np.ndarray
    cpu_cores: np.ndarray
    gpus: np.ndarray
    mem_gb: np.ndarray
    gpu_mem_gb: np.ndarray
    bandwidth_gb: np.ndarray
    # network, (n_dc, n_dc): [src, dst]
    usd_per_gb: np.ndarray
    throughput_mbps: np.ndarray
    rtt_ms: np.ndarray
    carbon_basis: str | None = None
    extra: dict = field(default_factory=dict)

    @property
    def n_dc(self) -> int:
        return len(self.locations)

    @property
    def n_tasks(self) -> int:
        return int(self.task_id.shape[0])

    def step_times(self) -> np.ndarray:
        """UTC start of every step as datetime64[us]."""
        t0 = np.datetime64(self.start_utc.replace(tzinfo=None), "us")
        return t0 + np.arange(self.n_steps, dtype=np.int64) * np.timedelta64(self.step_s * 1_000_000, "us")


def local_hours(timezones: list[str], start_utc: dt.datetime, n_steps: int, step_s: int) -> np.ndarray:
    """Local hour (0-23, DST aware, from the IANA zone) of every step start, (n_dc, n_steps)."""
    t0 = start_utc.replace(tzinfo=None)
    ts = pl.datetime_range(t0, t0 + dt.timedelta(seconds=step_s * (n_steps - 1)),
                           interval=f"{step_s}s", time_unit="us", time_zone="UTC", eager=True)
    out = np.empty((len(timezones), n_steps), dtype=np.int8)
    for i, tz in enumerate(timezones):
        out[i] = ts.dt.convert_time_zone(tz).dt.hour().to_numpy()
    return out


def _read_json(path: Path) -> dict:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError as e:
        raise BundleError(f"{path}: missing") from e
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise BundleError(f"{path}: not valid JSON ({e})") from e


def _col(df: pl.DataFrame, name: str, fname: str) -> pl.Series:
    if name not in df.columns:
        raise BundleError(f"{fname}: missing column {name!r}")
    return df.get_column(name)


def load(path: str | Path, *, verify: bool = True) -> Scenario:
    """Verify a bundle directory (format version, bundle id, sha256 of every file) and load it."""
    root = Path(path)
    if not root.is_dir():
        raise BundleError(f"{root}: not a bundle directory")
    mpath = root / "manifest.json"
    manifest = _read_json(mpath)
    fv = manifest.get("format_version")
    if fv != FORMAT_VERSION:
        raise BundleError(f"{mpath}: format_version {fv!r} is not supported (expected {FORMAT_VERSION})")
    files = manifest.get("files")
    if not isinstance(files, dict):
        raise BundleError(f"{mpath}: no 'files' table")
    for name in REQUIRED_FILES:
        if name not in files:
            raise BundleError(f"{mpath}: 'files' does not list {name}")
    if verify:
        bid = compute_bundle_id(manifest)
        if manifest.get("bundle_id") != bid:
            raise BundleError(f"{mpath}: bundle_id {manifest.get('bundle_id')!r} does not match its "
                              f"content ({bid})")
        for name, digest in files.items():
            fp = root / name
            if not fp.is_file():
                raise BundleError(f"{fp}: missing (listed in manifest.json)")
            got = sha256_file(fp)
            if got != digest:
                raise BundleError(f"{fp}: sha256 {got} does not match manifest.json ({digest})")

    locations = list(manifest["locations"])
    n_dc = len(locations)
    step_s = int(manifest.get("step_s", 900))
    if step_s != 900:
        raise BundleError(f"{mpath}: step_s {step_s} unsupported (900 expected)")
    n_steps = int(manifest["n_steps"])
    start = dt.datetime.fromisoformat(manifest["start_utc"]).astimezone(dt.UTC)

    # datacenters.json
    dpath = root / "datacenters.json"
    dcs = _read_json(dpath).get("datacenters")
    if not isinstance(dcs, list) or [d.get("location") for d in dcs] != locations:
        raise BundleError(f"{dpath}: datacenters must list the manifest locations in order")
    try:
        physics = [DatacenterParams.from_dict(d.get("physics", {})) for d in dcs]
    except (ValueError, TypeError) as e:
        raise BundleError(f"{dpath}: bad physics parameters ({e})") from e
    timezones = [str(d["timezone"]) for d in dcs]
    weight = np.array([float(d["population_weight"]) for d in dcs])
    cap_cores = np.array([float(d["total_cores"]) for d in dcs])
    cap_gpus = np.array([float(d["total_gpus"]) for d in dcs])
    cap_mem = np.array([float(d["total_mem_gb"]) for d in dcs])
    params = np.ascontiguousarray(np.stack([param_vector(p) for p in physics]))

    # signals.parquet
    spath = root / "signals.parquet"
    try:
        sig = pl.read_parquet(spath, columns=["location", "ts_utc", *SIGNAL_COLUMNS])
    except Exception as e:  # noqa: BLE001 - any reader error is a bundle error
        raise BundleError(f"{spath}: cannot read ({e})") from e
    if sig.height != n_dc * n_steps:
        raise BundleError(f"{spath}: {sig.height} rows, expected {n_dc} x {n_steps}")
    locs = sig.get_column("location").to_numpy().reshape(n_dc, n_steps)
    if not all((locs[i] == loc).all() for i, loc in enumerate(locations)):
        raise BundleError(f"{spath}: rows not sorted by location in manifest order")
    ts = sig.get_column("ts_utc").dt.epoch("us").to_numpy().reshape(n_dc, n_steps)
    t0_us = int(start.timestamp()) * 1_000_000
    expect = t0_us + np.arange(n_steps, dtype=np.int64) * step_s * 1_000_000
    if not (ts == expect[None, :]).all():
        raise BundleError(f"{spath}: ts_utc is not the grid start_utc + {step_s} k")
    arrays = {}
    for c in SIGNAL_COLUMNS:
        a = np.array(_col(sig, c, str(spath)).to_numpy(), dtype=np.float64, copy=True).reshape(n_dc, n_steps)
        if not np.isfinite(a).all():
            raise BundleError(f"{spath}: column {c} has missing or non-finite values")
        arrays[c] = np.ascontiguousarray(a)
    del sig

    # tasks.parquet, one column at a time (reading the whole frame first doubles the peak memory
    # of a 1.3 M-task load). Always fresh writable C arrays: the Numba signature (and its cache
    # entry) is then the same whether polars could hand out a zero-copy view or not.
    tpath = root / "tasks.parquet"

    def task_column(name: str) -> pl.Series:
        try:
            return pl.read_parquet(tpath, columns=[name]).to_series()
        except Exception as e:  # noqa: BLE001 - any reader error is a bundle error
            raise BundleError(f"{tpath}: cannot read column {name!r} ({e})") from e

    arr_us = task_column("arrival_ts_utc").dt.epoch("us").to_numpy()
    arrival_s = (arr_us - t0_us).astype(np.float64) / 1e6
    del arr_us
    if arrival_s.size and np.any(np.diff(arrival_s) < 0):
        raise BundleError(f"{tpath}: not sorted by arrival_ts_utc")
    tcols = {c: np.array(task_column(c).to_numpy(), dtype=np.float64, order="C", copy=True)
             for c in TASK_COLUMNS[2:]}
    if tcols["duration_s"].size and not (tcols["duration_s"] > 0).all():
        raise BundleError(f"{tpath}: duration_s must be > 0")
    task_id = np.array(task_column("task_id").to_numpy(), dtype=np.int64, copy=True)

    # network.parquet -> (src, dst) matrices
    npath = root / "network.parquet"
    net = pl.read_parquet(npath, columns=["src_location", "dst_location", "usd_per_gb",
                                          "throughput_mbps", "rtt_ms"])
    idx = {loc: i for i, loc in enumerate(locations)}
    mats = {c: np.full((n_dc, n_dc), np.nan) for c in ("usd_per_gb", "throughput_mbps", "rtt_ms")}
    for row in net.iter_rows(named=True):
        s, d = idx.get(row["src_location"]), idx.get(row["dst_location"])
        if s is None or d is None:
            continue
        for c in mats:
            mats[c][s, d] = float(row[c])
    off = ~np.eye(n_dc, dtype=bool)
    for c, m in mats.items():
        if np.isnan(m[off]).any():
            raise BundleError(f"{npath}: {c} missing for some ordered location pair")
        np.fill_diagonal(m, 0.0 if c != "throughput_mbps" else np.inf)

    return Scenario(
        path=root, bundle_id=str(manifest.get("bundle_id")),
        gridshift_version=str(manifest.get("gridshift_version", "")), manifest=manifest,
        locations=locations, timezones=timezones, population_weight=weight,
        cap_cores=cap_cores, cap_gpus=cap_gpus, cap_mem_gb=cap_mem, physics=physics, params=params,
        start_utc=start, step_s=step_s, n_steps=n_steps,
        carbon_g_per_kwh=arrays["carbon_g_per_kwh"], price_usd_per_mwh=arrays["price_usd_per_mwh"],
        temp_c=arrays["temp_c"], wetbulb_c=arrays["wetbulb_c"],
        local_hour=local_hours(timezones, start, n_steps, step_s),
        task_id=task_id, arrival_s=arrival_s, **tcols,
        usd_per_gb=mats["usd_per_gb"], throughput_mbps=mats["throughput_mbps"], rtt_ms=mats["rtt_ms"],
        carbon_basis=(manifest.get("parameters") or {}).get("carbon_basis"),
    )
