"""Which shared dataset each task of a bundle reads (data locality, docs/simulation.md "Data locality").

A bundle's task carries one size, ``bandwidth_gb``: what it moves when it runs away from its origin. Under
the ``ai`` size model (docs/workload.md) that size is a published workload's training data plus a checkpoint
of its model, ``data_gb[w] + params[w] x checkpoint bytes``, and the manifest records the catalogue
(``parameters.workload_params``). The dataset a task reads is therefore the catalogue entry whose size it
carries, recovered here by recomputing each entry's size with the derivation's own arithmetic and matching it
exactly; the dataset's GB is that entry's ``data_gb``, the rest (the checkpoint) always moves. A task whose
size matches no entry (CPU-only tasks and GPU shares too small for any entry, which carry a reference-model
input size; every task of a bundle built with another size model) has no shared dataset (id -1): its whole
size is its own input and always moves.

Who shares a dataset is the run option ``catalogue`` (docs/simulation.md "Data locality"):

* ``public`` (the default): every task that reads an entry reads the one shared copy of it, which every origin
  holds (nine public datasets, which a few moves replicate at every site);
* ``trace_groups``: datasets are private to the trace's tenants. The ``catalogue_tenants`` tenants (default
  ``gridshift.run_options.PAI_2020_USERS``, the PAI 2020 trace's users, cited there) are split evenly among the
  sites, each homed at one; a task belongs to one of its origin's tenants (drawn once per bundle task from the
  bundle's workload seed) and reads its tenant's own copy of its entry: a job group (tenant, entry) shares one
  dataset, held at the tenant's home, and two tenants reading ImageNet hold two copies. Sizes are the tasks' own
  (the bundle's, so a run without locality moves the same GB under either catalogue); only who shares a copy, and
  where it starts, changes.
"""

from __future__ import annotations

import numpy as np

from gridshift.run_options import CATALOGUES, PAI_2020_USERS

from .scenario import Scenario, shared

#: dataset id of a task that reads no shared dataset
NO_DATASET = -1
#: the random stream of the tenant draw (apart from the workload derivation's own streams)
_TENANT_STREAM = 35


def caption(options: dict) -> str:
    """The data-locality model of a run's (or a sweep's) canonical options, in words (the assumptions a
    sweep's table and compare.json name)."""
    if not options.get("locality", True):
        return "off, every move ships its dataset"
    words = f"on, replicas kept {options.get('locality_retention_days')} days after last use"
    if options.get("catalogue", "public") != "public":
        words += f"; datasets per tenant ({options.get('catalogue_tenants')} tenants, catalogue {options['catalogue']})"
    return words


def catalogue(sc: Scenario) -> tuple[tuple[str, ...], np.ndarray, np.ndarray]:
    """(names, data GB, moved GB) of the ``ai`` workload catalogue the bundle's tasks were sized from;
    empty when the bundle records none (another size model, or no derivation parameters)."""
    wp = (sc.manifest.get("parameters") or {}).get("workload_params") or {}
    entries = wp.get("ai_workloads") or ()
    if wp.get("bandwidth_model") != "ai" or not entries:
        return (), np.zeros(0), np.zeros(0)
    names = tuple(str(e[0]) for e in entries)
    data = np.array([float(e[1]) for e in entries])
    # the derivation's arithmetic (pipelines.workload.derive.assign_bandwidth), so that sizes match bit for bit
    ckpt = np.array([float(e[2]) for e in entries]) * 1e6 * float(wp["ai_checkpoint_bytes_per_param"]) / 1e9
    return names, data, data + ckpt


def tenants_per_site(n_dc: int, tenants: int) -> int:
    """Tenants homed at each site under ``trace_groups``: ``tenants`` split evenly, at least one per site."""
    return max(1, -(-int(tenants) // max(int(n_dc), 1)))


def n_datasets(sc: Scenario, preset: str = "public", tenants: int = PAI_2020_USERS) -> int:
    """How many datasets a run's replica sets track: the catalogue's entries, once per tenant of every site
    under ``trace_groups``."""
    k = len(catalogue(sc)[0])
    return k if _preset(preset) == "public" else k * sc.n_dc * tenants_per_site(sc.n_dc, tenants)


def window_datasets(sc: Scenario, rows: np.ndarray, origin: np.ndarray, preset: str = "public",
                    tenants: int = PAI_2020_USERS) -> tuple[np.ndarray, np.ndarray]:
    """The dataset id (below :func:`n_datasets`, or :data:`NO_DATASET`; int32) and the dataset's GB of a run's
    tasks: bundle rows ``rows``, origins ``origin``. ``public``: the :func:`task_datasets` entry;
    ``trace_groups``: ``((origin x tenants per site) + tenant) x entries + entry``, the tenant one of the origin's
    (:func:`task_tenants`)."""
    ds, gb = _match(sc, sc.bandwidth_gb[rows])  # (per task: the window's rows alone, no bundle-wide array)
    if _preset(preset) == "public":
        return ds, gb
    per = tenants_per_site(sc.n_dc, tenants)
    group = origin.astype(np.int64) * per + task_tenants(sc, per)[rows]
    out = np.where(ds >= 0, group * len(catalogue(sc)[0]) + ds, NO_DATASET).astype(np.int32)
    return out, gb


def task_tenants(sc: Scenario, per_site: int) -> np.ndarray:
    """Which of its origin's ``per_site`` tenants each bundle task belongs to (0..per_site-1): uniform, one draw
    per task in bundle order from the bundle's workload seed (the manifest's ``parameters.seed``), so a bundle
    gives the same draws on every machine and for every run seed; computed once per scenario."""
    memo = shared(sc).setdefault("task_tenants", {})
    if per_site not in memo:
        seed = int((sc.manifest.get("parameters") or {}).get("seed", 0))
        rng = np.random.default_rng(np.random.SeedSequence([seed, _TENANT_STREAM]))
        t = rng.integers(0, per_site, size=sc.n_tasks, dtype=np.int64)
        t.flags.writeable = False
        memo[per_site] = t
    return memo[per_site]


def replication_share(rep: np.ndarray, used: np.ndarray) -> float:
    """The share of (site, dataset) pairs that held a replica during a run, among the datasets its tasks read:
    ``rep`` is the run's replica state (sites x datasets, last use; -inf: never held; the engine's ``State.rep``),
    ``used`` the dataset ids of its tasks (:data:`NO_DATASET` ignored). 1.0: every dataset read reached every
    site; NaN when no task read one."""
    ids = np.unique(used[used >= 0])
    if ids.size == 0:
        return float("nan")
    return float(np.isfinite(rep[:, ids]).mean())


def _preset(preset: str) -> str:
    if preset not in CATALOGUES:
        raise ValueError(f"catalogue must be one of {CATALOGUES}, got {preset!r}")
    return preset


def task_datasets(sc: Scenario) -> tuple[np.ndarray, np.ndarray]:
    """Per bundle task (bundle order): the dataset id (index into :func:`catalogue`, or :data:`NO_DATASET`)
    as int32 and the dataset's GB (0 without one) as float64; computed once per scenario."""
    memo = shared(sc)
    if "task_datasets" not in memo:
        ds, ds_gb = _match(sc, sc.bandwidth_gb)
        ds.flags.writeable = False
        ds_gb.flags.writeable = False
        memo["task_datasets"] = ds, ds_gb
    return memo["task_datasets"]


def _match(sc: Scenario, bandwidth_gb: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The dataset id and GB of tasks of ``sc`` whose transfer sizes are ``bandwidth_gb`` (task by task: the same
    for a task whichever tasks are matched with it)."""
    _, data, moved = catalogue(sc)
    ds = np.full(bandwidth_gb.shape[0], NO_DATASET, np.int32)
    for k in range(moved.shape[0]):  # a handful of entries; each a columnar comparison
        ds[bandwidth_gb == moved[k]] = k
    ds_gb = np.ascontiguousarray(np.where(ds >= 0, data[np.maximum(ds, 0)] if data.size else 0.0, 0.0),
                                 dtype=np.float64)
    return ds, ds_gb
