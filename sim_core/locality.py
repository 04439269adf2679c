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
"""

from __future__ import annotations

import numpy as np

from .scenario import Scenario, shared

#: dataset id of a task that reads no shared dataset
NO_DATASET = -1


def caption(options: dict) -> str:
    """The data-locality model of a run's (or a sweep's) canonical options, in words (the assumptions a
    sweep's table and compare.json name)."""
    if not options.get("locality", True):
        return "off, every move ships its dataset"
    return f"on, replicas kept {options.get('locality_retention_days')} days after last use"


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


def task_datasets(sc: Scenario) -> tuple[np.ndarray, np.ndarray]:
    """Per bundle task (bundle order): the dataset id (index into :func:`catalogue`, or :data:`NO_DATASET`)
    as int32 and the dataset's GB (0 without one) as float64; computed once per scenario."""
    memo = shared(sc)
    if "task_datasets" not in memo:
        memo["task_datasets"] = _match(sc)
    return memo["task_datasets"]


def _match(sc: Scenario) -> tuple[np.ndarray, np.ndarray]:
    _, data, moved = catalogue(sc)
    ds = np.full(sc.n_tasks, NO_DATASET, np.int32)
    for k in range(moved.shape[0]):  # a handful of entries; each a columnar comparison
        ds[sc.bandwidth_gb == moved[k]] = k
    ds_gb = np.ascontiguousarray(np.where(ds >= 0, data[np.maximum(ds, 0)] if data.size else 0.0, 0.0),
                                 dtype=np.float64)
    ds.flags.writeable = False
    ds_gb.flags.writeable = False
    return ds, ds_gb
