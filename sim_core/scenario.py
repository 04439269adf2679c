"""A verified scenario bundle (docs/bundle_format.md) as flat NumPy arrays: what the kernels run on."""

from __future__ import annotations

import datetime as dt
import weakref
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from gridshift.bundle import BundleError, load_content
from gridshift.dc_params import DatacenterParams
from gridshift.origin import local_hours

from .physics import param_vector

__all__ = ["BundleError", "Scenario", "load", "local_hours", "shared"]

#: per scenario (by id, checked through a weak reference): what its runs share
_SHARED: dict[int, tuple] = {}


def shared(sc) -> dict:
    """The dict of seed-free arrays derived from scenario ``sc`` that its runs share (read-only for the
    kernels; sim_core.forecast, sim_core.simulator), dropped once ``sc`` is gone. A scenario's arrays are
    read as they are when first needed: change a scenario by building another (``dataclasses.replace``),
    not by writing into its arrays."""
    entry = _SHARED.get(id(sc))
    if entry is None or entry[0]() is not sc:
        entry = (weakref.ref(sc), {})
        _SHARED[id(sc)] = entry
        for k in [k for k, (ref, _) in _SHARED.items() if ref() is None]:
            del _SHARED[k]
    return entry[1]


@dataclass
class Scenario:
    """A verified bundle as flat arrays. Datacenter index order = manifest ``locations``. A scenario that
    ``sim_core.run`` loaded from a path for one run is consumed by it (``simulator.window_tasks``): its task
    columns are None afterwards, so that a year of them is not held beside the run's window."""

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
    # task flexibility (format 2; docs/bundle_format.md): float64 arrays, ``interruptible`` bool
    max_delay_s: np.ndarray
    interruptible: np.ndarray
    checkpoint_s: np.ndarray
    min_scale: np.ndarray
    max_scale: np.ndarray
    marginal_throughput: np.ndarray
    # network, (n_dc, n_dc): [src, dst]
    usd_per_gb: np.ndarray
    throughput_mbps: np.ndarray
    rtt_ms: np.ndarray
    carbon_basis: str | None = None
    extra: dict = field(default_factory=dict)
    #: per datacenter, the registry location whose signals it shares (its own label unless the bundle
    #: holds several datacenters per location or cloud-region sites; scenario_builder.sites)
    signal_location: list[str] | None = None

    @property
    def signal_locations(self) -> list[str]:
        """What market rules and forecast skill are looked up by: the signals' location per datacenter."""
        return list(self.signal_location) if self.signal_location is not None else list(self.locations)

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


#: the scenario's per-task columns (the bundle's tasks.parquet as arrays)
TASK_COLUMNS = ("task_id", "arrival_s", "duration_s", "cpu_cores", "gpus", "mem_gb", "gpu_mem_gb", "bandwidth_gb",
                "max_delay_s", "interruptible", "checkpoint_s", "min_scale", "max_scale", "marginal_throughput")


def load(path: str | Path, tasks: bool = True, *, lazy_tasks: bool = False) -> Scenario:
    """Load a bundle for simulation: integrity (only the format's files, no links, every sha256, the id)
    and content (types, finiteness, ranges, grid, references) are checked first by the one bundle-format
    module, so every kernel runs on arrays it can index safely. Any problem is a :class:`BundleError`
    naming the file, column, first rows and values. ``tasks=False``: the scenario without its task columns
    (:data:`TASK_COLUMNS` are None), for a caller that runs from the path (a sweep: ``sim_core.bench.sweep``).
    ``lazy_tasks`` (a chunked run's own scenario, ``sim_core.chunks``): the task columns other than arrivals
    are read from the file as the run's chunks ask for rows (``gridshift.bundle.content.TaskColumn``: indexed
    by rows like an array, checked as read), so that the bundle's year of them is never held whole."""
    content = load_content(path, tasks=tasks, lazy_tasks=lazy_tasks)
    h = content.header
    dcs = content.datacenters
    physics = [d["physics"] for d in dcs]
    timezones = [d["timezone"] for d in dcs]
    sig, tasks, net = content.signals, content.tasks, content.network
    for m, diag in (("usd_per_gb", 0.0), ("throughput_mbps", np.inf), ("rtt_ms", 0.0)):
        np.fill_diagonal(net[m], diag)  # a task run at its origin moves no data
    return Scenario(
        path=content.root, bundle_id=str(content.manifest["bundle_id"]),
        gridshift_version=str(content.manifest["gridshift_version"]), manifest=content.manifest,
        locations=h.locations, timezones=timezones,
        population_weight=np.array([d["population_weight"] for d in dcs]),
        cap_cores=np.array([d["total_cores"] for d in dcs]), cap_gpus=np.array([d["total_gpus"] for d in dcs]),
        cap_mem_gb=np.array([d["total_mem_gb"] for d in dcs]), physics=physics,
        params=np.ascontiguousarray(np.stack([param_vector(p) for p in physics])),
        start_utc=h.start_utc, step_s=h.step_s, n_steps=h.n_steps,
        carbon_g_per_kwh=sig["carbon_g_per_kwh"], price_usd_per_mwh=sig["price_usd_per_mwh"],
        temp_c=sig["temp_c"], wetbulb_c=sig["wetbulb_c"],
        local_hour=local_hours(timezones, h.start_utc, h.n_steps, h.step_s),
        **{c: None if tasks is None else tasks[c] for c in TASK_COLUMNS},
        usd_per_gb=net["usd_per_gb"], throughput_mbps=net["throughput_mbps"], rtt_ms=net["rtt_ms"],
        carbon_basis=h.carbon_basis,
        signal_location=[str(d.get("signal_location", d["location"])) for d in dcs],
    )
