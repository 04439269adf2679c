"""The manifest's own parameters as a contract: every one declared with its JSON type and range.

Why: a bundle's seal (file hashes, the id over the manifest) proves only that nothing changed since it was
sealed, not that what was sealed is sane; whoever can edit a bundle can re-seal it. ``sim_core`` computes
with manifest parameters (the ``ai`` workload catalogue of ``parameters.workload_params`` decides which GB
a task's move ships, ``sim_core.locality``), so those are checked like the data files: by type and
:class:`gridshift.bounds.Bound`, at ``verify`` and ``sim_core.load`` alike (``read_header``), and refused
by name (the manifest, the parameter's path, its value). The task counts the manifest claims are checked
against the tasks file once it is read (:func:`check_counts`).

A path is dotted; ``*`` is every key of an object or every item of a list; a digit is a list index. An
optional parameter may be absent (older or test bundles record less), never of another type.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from gridshift.bounds import Bound
from gridshift.bundle.errors import BundleError
from gridshift.bundle.format import is_int, is_number
from gridshift.dc_params import GPU_GENERATIONS
from gridshift.fields import FIELDS
from gridshift.limits import BUNDLE
from gridshift.scale import SCALE_MAX, SCALE_MIN

__all__ = ["MANIFEST_PARAMS", "Param", "check_counts", "check_manifest_params", "ranges"]


@dataclass(frozen=True)
class Param:
    """One manifest parameter: its JSON type (``object``, ``list``, ``number``, ``integer``, ``string``), its
    range (numbers), the allowed strings, a list's exact length, whether it must be there (when its parent
    is) and whether it may be null."""

    kind: str
    bound: Bound | None = None
    choices: tuple[str, ...] = ()
    length: int | None = None
    max_items: int = 100_000
    required: bool = False
    nullable: bool = False


_TASKS = Bound(0.0, float(BUNDLE.tasks.limit), "a task count of a bundle (gridshift.limits)")
_SHARE = Bound(0.0, 1.0, "a share of the tasks")
_SEED = Bound(0.0, 2.0 ** 63 - 1, "a seed of numpy's SeedSequence (0..2**63 - 1)")
_HOURS = Bound(0.0, 8784.0, "a span within one (leap) year")
_BYTES_PER_PARAM = Bound(0.0, 1024.0, "bytes per model parameter: fp32 weights are 4, with Adam's two moments 12, "
                                      "mixed-precision training state 16-20; 1 KiB is no checkpoint format",
                         low_inclusive=False)
_PARAMS_M = Bound(0.0, 1e9, "a model's parameters in millions (the largest published are ~2e6 M)")
_UTIL = Bound(0.0, 1.0, "a target utilisation of the installed capacity", low_inclusive=False)


def _num(name_or_bound: str | Bound, **kw: Any) -> Param:
    b = FIELDS[name_or_bound].bound if isinstance(name_or_bound, str) else name_or_bound
    return Param("number", bound=b, **kw)


_WP = "parameters.workload_params"
_FP = "flexibility.parameters"
_SITE = "sizing.sites.*"

#: Every manifest parameter a reader may use, declared once (docs/bundle_format.md, "Parameter ranges").
MANIFEST_PARAMS: dict[str, Param] = {
    "n_tasks": Param("integer", bound=_TASKS),
    "parameters.carbon_basis": Param("string", nullable=True),
    "parameters.seed": Param("integer", bound=_SEED),
    "parameters.target_utilization": _num(_UTIL),
    "parameters.scale": _num(Bound(SCALE_MIN, SCALE_MAX,
                                   "× the PAI 2020 cluster's GPUs (gridshift.scale; absent = rack)")),
    "parameters.gpu": Param("string", choices=tuple(GPU_GENERATIONS)),
    "parameters.max_gap_hours": _num(_HOURS),
    "parameters.max_edge_fill_hours": _num(_HOURS),
    "parameters.regions": Param("list", max_items=BUNDLE.datacenters.limit),
    "parameters.regions.*": Param("string"),
    _WP: Param("object", nullable=True),
    f"{_WP}.bandwidth_model": Param("string", choices=("ai", "reference", "constant")),
    f"{_WP}.ai_workloads": Param("list", max_items=1024),
    f"{_WP}.ai_workloads.*": Param("list", length=3),
    f"{_WP}.ai_workloads.*.0": Param("string", required=True),
    f"{_WP}.ai_workloads.*.1": _num("bandwidth_gb", required=True),
    f"{_WP}.ai_workloads.*.2": _num(_PARAMS_M, required=True),
    f"{_WP}.ai_checkpoint_bytes_per_param": _num(_BYTES_PER_PARAM),
    f"{_WP}.ai_state_bytes_per_param": _num(_BYTES_PER_PARAM),
    f"{_WP}.ai_read_gb_per_gpu_hour": _num(Bound(0.0, 1e6, "GB a GPU reads per hour (ImageNet training: 52)",
                                                 low_inclusive=False)),
    f"{_WP}.bandwidth_constant_gb": _num("bandwidth_gb"),
    f"{_WP}.bandwidth_mem_corr": _num(Bound(-1.0, 1.0, "a correlation")),
    f"{_WP}.load_factor": _num(Bound(0.0, 1000.0, "a multiple of the trace's load", low_inclusive=False)),
    f"{_WP}.seed": Param("integer", bound=_SEED),
    "flexibility": Param("object"),
    "flexibility.seed": Param("integer", bound=_SEED),
    "flexibility.n_tasks": Param("integer", bound=_TASKS),
    "flexibility.n_interruptible": Param("integer", bound=_TASKS),
    "flexibility.n_elastic": Param("integer", bound=_TASKS),
    "flexibility.n_by_max_delay_s": Param("object"),
    "flexibility.n_by_max_delay_s.*": Param("integer", bound=_TASKS),
    "flexibility.checkpoint_s_median": _num("checkpoint_s", nullable=True),
    _FP: Param("object"),
    f"{_FP}.interruptible_share": _num(_SHARE),
    f"{_FP}.elastic_share": _num(_SHARE),
    f"{_FP}.short_max_delay_s": _num("max_delay_s"),
    f"{_FP}.long_max_delay_s": _num("max_delay_s"),
    f"{_FP}.short_max_duration_s": _num("duration_s"),
    f"{_FP}.checkpoint_gb_per_gpu_mem_gb": _num(Bound(0.0, 100.0, "checkpoint GB per GB of GPU memory (0.75)")),
    f"{_FP}.storage_gb_per_s": _num(Bound(0.0, 1e6, "checkpoint storage bandwidth", low_inclusive=False)),
    f"{_FP}.max_scale": Param("object"),
    f"{_FP}.max_scale.*": _num("max_scale"),
    f"{_FP}.fitted_marginal_throughput": Param("object"),
    f"{_FP}.fitted_marginal_throughput.*": _num("marginal_throughput"),
    f"{_FP}.scaling_profiles": Param("object"),
    f"{_FP}.scaling_profiles.*": Param("list", max_items=1024),
    f"{_FP}.scaling_profiles.*.*": _num(Bound(0.0, 1e15, "a throughput", low_inclusive=False)),
    "sizing": Param("object"),
    "sizing.method": Param("string"),
    "sizing.target_utilization": _num(_UTIL),
    "sizing.sites": Param("object", max_items=BUNDLE.datacenters.limit),
    _SITE: Param("object"),
    f"{_SITE}.capacity": Param("object"),
    **{f"{_SITE}.capacity.{k}": _num(k) for k in ("total_cores", "total_gpus", "total_mem_gb")},
    **{f"{_SITE}.{d}": Param("object") for d in ("mean_demand", "p99_demand")},
    **{f"{_SITE}.{d}.{k}": _num(k) for d in ("mean_demand", "p99_demand") for k in ("cpu_cores", "gpus", "mem_gb")},
}
_TYPES = {"object": dict, "list": list, "string": str}


def ranges() -> dict[str, Bound]:
    """The declared numeric ranges by path (the docs' table)."""
    return {p: d.bound for p, d in MANIFEST_PARAMS.items() if d.bound is not None}


def _resolve(manifest: dict[str, Any], path: str) -> Iterator[tuple[str, Any, bool]]:
    """(concrete path, value, present) of every value ``path`` names, where its parent exists and is a
    container of the declared type (parents are declared, and checked, before their children)."""
    nodes: list[tuple[str, Any]] = [("", manifest)]
    parts = path.split(".")
    for i, part in enumerate(parts):
        last = i == len(parts) - 1
        nxt: list[tuple[str, Any]] = []
        for where, node in nodes:
            here = f"{where}.{part}" if where else part
            if part == "*":
                items = node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
                nxt += [(f"{where}.{k}", v) for k, v in items]
            elif isinstance(node, dict):
                if part in node:
                    nxt.append((here, node[part]))
                elif last:
                    yield here, None, False
            elif isinstance(node, list) and part.isdigit():
                if int(part) < len(node):
                    nxt.append((here, node[int(part)]))
                elif last:
                    yield here, None, False
        nodes = [(w, v) for w, v in nxt if last or isinstance(v, dict | list)]
    for where, v in nodes:
        yield where, v, True


def _problem(p: Param, v: Any) -> str | None:
    if v is None:
        return None if p.nullable else "must not be null"
    if p.kind in ("number", "integer"):
        if p.kind == "integer" and not is_int(v):
            return "must be a JSON integer"
        if not is_number(v):
            return "must be a finite JSON number"
        if p.bound is not None and not p.bound.admits(float(v)):
            return f"is outside {p.bound.describe()} ({p.bound.reason})"
        return None
    if not isinstance(v, _TYPES[p.kind]):
        return f"must be a JSON {p.kind} (got {type(v).__name__})"
    if p.choices and v not in p.choices:
        return f"must be one of {', '.join(p.choices)}"
    if p.length is not None and len(v) != p.length:
        return f"must have exactly {p.length} items (got {len(v)})"
    if isinstance(v, list | dict) and len(v) > p.max_items:
        return f"has {len(v):,} items, more than {p.max_items:,}"
    return None


def check_manifest_params(manifest: dict[str, Any], file: str) -> None:
    """Refuse the first manifest parameter of the wrong type, out of its range, or missing where required."""
    for path, p in MANIFEST_PARAMS.items():
        for where, v, present in _resolve(manifest, path):
            why = ("is required" if p.required else None) if not present else _problem(p, v)
            if why is not None:
                raise BundleError(f"manifest parameter {where} {why}", file=file, column=where, rows=[0], values=[v])
    wp = (manifest.get("parameters") or {}).get("workload_params")
    if isinstance(wp, dict) and wp.get("bandwidth_model") == "ai" and wp.get("ai_workloads") \
            and "ai_checkpoint_bytes_per_param" not in wp:
        where = f"{_WP}.ai_checkpoint_bytes_per_param"
        raise BundleError(f"manifest parameter {where} is required with an ai workload catalogue (it sizes each "
                          "task's checkpoint)", file=file, column=where)


def check_counts(manifest: dict[str, Any], tasks: Mapping[str, np.ndarray], file: str) -> None:
    """The task counts the manifest claims (``n_tasks``; ``flexibility.n_tasks``, ``n_interruptible``, ``n_elastic``
    as ``pipelines.workload.flexibility.summary`` counts them) against the tasks file's."""
    check_count_values(manifest, int(tasks["task_id"].shape[0]), int(tasks["interruptible"].sum()),
                       int((tasks["max_scale"] > 1.0).sum()), file)


def check_count_values(manifest: dict[str, Any], n: int, n_interruptible: int, n_elastic: int, file: str) -> None:
    """:func:`check_counts` given the tasks file's counts (a reader that does not hold its columns whole)."""
    flex = manifest.get("flexibility") if isinstance(manifest.get("flexibility"), dict) else {}
    actual = {"n_tasks": (manifest.get("n_tasks"), n), "flexibility.n_tasks": (flex.get("n_tasks"), n),
              "flexibility.n_interruptible": (flex.get("n_interruptible"), n_interruptible),
              "flexibility.n_elastic": (flex.get("n_elastic"), n_elastic)}
    for where, (claim, count) in actual.items():
        if claim is not None and claim != count:
            raise BundleError(f"manifest parameter {where} is {claim:,}, but tasks.parquet holds {count:,}",
                              file=file, column=where, rows=[0], values=[claim])
