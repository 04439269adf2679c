"""What a worker of a distributed sweep runs: one (policy, seed), published as its Parquet object.

:func:`run_and_publish` is a plain top-level function of plain arguments (the bundle directory, the
run key as a tuple, the canonical options, the results URL), so any engine can ship it to a worker
process on any machine: a Dask ``distributed`` worker (``sim_core.bench.compare(executor=client)``,
the ``benchmark_sweep_dask`` Dagster job on Dagster's Dask executor) or a local process pool. The worker
needs the same gridshift version, the bundle at the same path (a shared or synced folder), and access to
the results URL (a shared folder or S3, credentials from its own environment).

It returns a :class:`RunReceipt`: everything the warehouse index needs (key, options, metrics,
timings, worker, the object's URL and sha256) and no series, so little travels back to the client.
Scenarios are cached per worker process (the last two bundles), so a worker loads a bundle once per sweep.
"""

from __future__ import annotations

import datetime as dt
from collections import OrderedDict
from dataclasses import dataclass
from typing import Any

from gridshift.results import ResultStore, RunRef

_SCENARIOS: OrderedDict[str, Any] = OrderedDict()
_CACHE_SIZE = 2


@dataclass(frozen=True)
class RunReceipt:
    """A run published by a worker: the index row's contents (the series stays in the object)."""

    key: tuple
    options_json: str
    metrics: dict[str, float]
    started_utc: dt.datetime
    finished_utc: dt.datetime
    wall_time_s: float
    n_steps: int
    n_dc: int
    worker: str
    ref: RunRef


def _scenario(bundle_dir: str):
    import sim_core

    sc = _SCENARIOS.get(bundle_dir)
    if sc is None:
        sc = sim_core.load(bundle_dir)
        _SCENARIOS[bundle_dir] = sc
        while len(_SCENARIOS) > _CACHE_SIZE:
            _SCENARIOS.popitem(last=False)
    else:
        _SCENARIOS.move_to_end(bundle_dir)
    return sc


def run_and_publish(bundle_dir: str, key: tuple, options: dict[str, Any], results_url: str) -> RunReceipt:
    """Simulate ``key`` on the bundle at ``bundle_dir`` with the canonical ``options``, publish the run's
    object under ``results_url`` (atomically) and return its receipt."""
    from .run import RunKey, execute

    k = RunKey(*key)
    sc = _scenario(bundle_dir)
    if sc.bundle_id != k.bundle_id:
        raise ValueError(f"bundle at {bundle_dir} is {sc.bundle_id} on this worker, the run key names {k.bundle_id}")
    rec, _ = execute(sc, k, options)
    ref = ResultStore(results_url).put(rec)
    return RunReceipt(key=tuple(k), options_json=rec.options_json, metrics=rec.metrics, started_utc=rec.started_utc,
                      finished_utc=rec.finished_utc, wall_time_s=rec.wall_time_s, n_steps=rec.n_steps, n_dc=rec.n_dc,
                      worker=rec.worker, ref=ref)


#: Dask configuration for gridshift's workers: Dask's nanny starts each worker with
#: ``MALLOC_TRIM_THRESHOLD_=65536`` (aggressive return of freed memory to the OS); the simulation
#: allocates and frees large arrays per run, and with that setting a run took about 1.5x as long on a
#: worker as in process (measured here: 1.6-1.8 s against 1.1 s; unset: 1.1 s). ``None`` leaves glibc's
#: default (docs/distributed.md says how to set it for ``dask worker``).
WORKER_DASK_CONFIG = {"distributed.nanny.pre-spawn-environ.MALLOC_TRIM_THRESHOLD_": None}


def local_cluster(n_workers: int, **kwargs):
    """A ``distributed.LocalCluster`` of ``n_workers`` single-threaded worker processes (the simulation is
    single-threaded), with :data:`WORKER_DASK_CONFIG`. Every socket it opens, the dashboard's included,
    listens on 127.0.0.1 only (a free port for the dashboard); ``kwargs`` override that explicitly."""
    import dask
    from distributed import LocalCluster

    opts = {"n_workers": n_workers, "threads_per_worker": 1, "processes": True, "host": "127.0.0.1",
            "dashboard_address": "127.0.0.1:0", **kwargs}
    with dask.config.set(WORKER_DASK_CONFIG):
        return LocalCluster(**opts)
