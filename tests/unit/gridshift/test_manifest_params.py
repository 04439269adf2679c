"""A re-sealed hostile manifest (edited, ids recomputed) is refused by name at ``verify`` and ``sim_core.load``:
its parameters are a contract too (``gridshift.bundle.manifest_params``), never a crash or a negative energy."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import numpy as np
import pytest

import sim_core
from gridshift.bundle import BundleError, verify_bundle
from gridshift.bundle.manifest_params import check_manifest_params
from tests.unit.gridshift.bundle_hostile import rewrite_manifest, valid_bundle
from tests.unit.gridshift.test_bundle_hostile import refused

EVIDENCE = Path("/work/shared/evidence/bundle-2b4ec50e860b97e0/manifest.json")
#: the ai catalogue as an exported bundle records it (two entries; the checkpoint is params x 12 bytes)
WP = {"bandwidth_model": "ai", "ai_checkpoint_bytes_per_param": 12.0, "ai_state_bytes_per_param": 16.0,
      "ai_read_gb_per_gpu_hour": 52.0, "ai_workloads": [["squad11-bert-base", 0.035, 110.0],
                                                        ["imagenet1k-resnet50", 154.642, 25.6]],
      "load_factor": 1.0, "seed": 0}
WHERE = "parameters.workload_params"


@pytest.fixture
def bundle(tmp_path):
    b = valid_bundle(tmp_path / "b")
    rewrite_manifest(b, lambda m: m["parameters"].__setitem__("workload_params", copy.deepcopy(WP)))
    return b


def test_the_bundle_with_a_catalogue_loads(bundle):
    assert verify_bundle(bundle).ok and sim_core.load(bundle).n_tasks == 8


def _set(path: str, value):
    def mutate(m):
        node, parts = m, path.split(".")
        for p in parts[:-1]:
            node = node[int(p)] if isinstance(node, list) else node[p]
        last = parts[-1]
        if value is _DROP:
            del node[int(last) if isinstance(node, list) else last]
        elif isinstance(node, list):
            node[int(last)] = value
        else:
            node[last] = value
    return mutate


_DROP = object()


@pytest.mark.parametrize(("path", "value", "column", "match"), [
    # the cases: a catalogue as a string, a short entry, a non-numeric size, a missing or string
    # checkpoint size, workload_params as a list, huge sizes (overflow), a checkpoint that is negative (the
    # dataset then exceeds what the task moves: negative transfer energy and cost)
    (f"{WHERE}.ai_workloads", "imagenet", f"{WHERE}.ai_workloads", "must be a JSON list"),
    (f"{WHERE}.ai_workloads.1", ["imagenet1k-resnet50", 154.642], f"{WHERE}.ai_workloads.1", "exactly 3 items"),
    (f"{WHERE}.ai_workloads.1.1", "154 GB", f"{WHERE}.ai_workloads.1.1", "finite JSON number"),
    (f"{WHERE}.ai_checkpoint_bytes_per_param", _DROP, f"{WHERE}.ai_checkpoint_bytes_per_param", "is required"),
    (f"{WHERE}.ai_checkpoint_bytes_per_param", "12", f"{WHERE}.ai_checkpoint_bytes_per_param", "finite JSON number"),
    (WHERE, [1, 2], WHERE, "must be a JSON object"),
    (f"{WHERE}.ai_workloads.0.2", 1e308, f"{WHERE}.ai_workloads.0.2", "outside [0, 1e+09]"),
    (f"{WHERE}.ai_workloads.0.1", 1e300, f"{WHERE}.ai_workloads.0.1", "outside [0, 1e+09]"),
    (f"{WHERE}.ai_workloads.1.2", -20_000.0, f"{WHERE}.ai_workloads.1.2", "outside [0, 1e+09]"),
    (f"{WHERE}.ai_checkpoint_bytes_per_param", -12.0, f"{WHERE}.ai_checkpoint_bytes_per_param", "outside (0, 1024]"),
    (f"{WHERE}.bandwidth_model", "fast", f"{WHERE}.bandwidth_model", "must be one of ai, reference, constant"),
    (f"{WHERE}.ai_workloads.0.0", 7, f"{WHERE}.ai_workloads.0.0", "must be a JSON string"),
    ("parameters.target_utilization", 7.0, "parameters.target_utilization", "outside (0, 1]"),
    ("flexibility", {"parameters": {"interruptible_share": 1.5}}, "flexibility.parameters.interruptible_share",
     "outside [0, 1]"),
    ("flexibility", {"parameters": {"max_scale": {"nbody": 1e6}}}, "flexibility.parameters.max_scale.nbody",
     "outside [1, 1024]"),
    ("sizing", {"sites": {"AA": {"capacity": {"total_cores": -5.0}}}}, "sizing.sites.AA.capacity.total_cores",
     "outside (0, 1e+09]"),
    ("sizing", {"sites": "AA"}, "sizing.sites", "must be a JSON object"),
])
def test_a_resealed_manifest_parameter_out_of_contract_is_refused_by_name(bundle, path, value, column, match):
    rewrite_manifest(bundle, _set(path, value))
    refused(bundle, file="manifest.json", column=column, match=match)


def test_a_negative_checkpoint_cannot_make_a_transfer_negative(tmp_path):
    """Today's loader gave -52 kWh / -278 USD of transfer for this catalogue: now it is refused at load."""
    wp = copy.deepcopy(WP)
    wp["ai_workloads"][1][2] = -10_000.0  # the checkpoint (params x 12 bytes) smaller than nothing
    b = valid_bundle(tmp_path / "n", parameters={"carbon_basis": "lca", "provider": "synthetic", "seed": 0,
                                                 "workload_params": wp})
    with pytest.raises(BundleError, match=r"ai_workloads\.1\.2 is outside \[0, 1e\+09\]"):
        sim_core.load(b)


def test_manifest_task_counts_must_match_the_tasks_file(bundle):
    rewrite_manifest(bundle, lambda m: m.__setitem__("n_tasks", 5))
    refused(bundle, file="manifest.json", column="n_tasks", match="is 5, but tasks.parquet holds 8")
    rewrite_manifest(bundle, lambda m: m.__setitem__("n_tasks", 8))
    assert verify_bundle(bundle).ok
    rewrite_manifest(bundle, lambda m: m.__setitem__("flexibility", {"n_tasks": 8, "n_interruptible": 3}))
    refused(bundle, file="manifest.json", column="flexibility.n_interruptible", match="is 3, but tasks.parquet holds 0")


def test_nothing_else_escapes_as_another_error_type(bundle):
    """Every shape of hostile workload_params is a BundleError (no IndexError, KeyError, ValueError...)."""
    rng = np.random.default_rng(0)
    shapes = [None, 1, -1.5, "x", [], {}, [[]], [["a"]], [["a", "b", "c"]], [[1, 2, 3]], {"a": 1}, True, [None] * 3]
    keys = ["ai_workloads", "ai_checkpoint_bytes_per_param", "bandwidth_model"]
    for _ in range(40):
        wp = copy.deepcopy(WP)
        wp[keys[rng.integers(len(keys))]] = shapes[rng.integers(len(shapes))]
        rewrite_manifest(bundle, lambda m, wp=wp: m["parameters"].__setitem__("workload_params", wp))
        try:
            sim_core.load(bundle)
        except BundleError:
            assert not verify_bundle(bundle).ok
        else:
            assert verify_bundle(bundle).ok


@pytest.mark.skipif(not EVIDENCE.is_file(), reason="the exported evidence bundle is not in this checkout's mirror")
def test_a_real_exported_manifest_is_within_the_contract():
    check_manifest_params(json.loads(EVIDENCE.read_text()), str(EVIDENCE))
