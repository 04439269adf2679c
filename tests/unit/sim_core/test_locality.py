"""Data locality (docs/simulation.md "Data locality"): a task's shared dataset moves to a site only when that
site holds no replica used within the retention, its checkpoint always moves, the origin holds its dataset;
transfers' GB, cost, energy, emissions and delay follow, and ``locality=False`` is the old model exactly."""

from __future__ import annotations

import json
from dataclasses import asdict

import numpy as np
import polars as pl
import pytest

import sim_core
from pipelines.workload import derive as wd
from sim_core.locality import NO_DATASET, catalogue, task_datasets
from sim_core.options import RunOptionsError
from sim_core.testing import write_bundle

P = wd.DeriveParams()
#: the derivation's parameters as a bundle's manifest records them (JSON round trip)
WORKLOAD_PARAMS = json.loads(json.dumps(asdict(P)))
N_STEPS = 2 * 96
KWH_PER_GB = 0.06
USD_PER_GB = np.array([[0.0, 0.09], [0.09, 0.0]])


def moved_gb(k: int) -> tuple[float, float]:
    """(moved GB, data GB) of catalogue entry k, with the derivation's arithmetic."""
    data = np.array([d for _, d, _ in P.ai_workloads])
    ckpt = np.array([m for _, _, m in P.ai_workloads]) * 1e6 * P.ai_checkpoint_bytes_per_param / 1e9
    return float(data[k] + ckpt[k]), float(data[k])


def _bundle(root, bw: np.ndarray, arrival_s: np.ndarray, *, catalogue_in_manifest: bool = True):
    """Two sites; every task originates at site 0 (its population weight only) and asks 1 core for 30 min."""
    n = bw.shape[0]
    tasks = {"task_id": np.arange(n, dtype=np.int64), "arrival_ts_utc": arrival_s,
             "duration_s": np.full(n, 1800.0), "cpu_cores": np.ones(n), "gpus": np.zeros(n),
             "mem_gb": np.ones(n), "gpu_mem_gb": np.zeros(n), "bandwidth_gb": bw}
    params = {"carbon_basis": "lca", "provider": "synthetic", "seed": 0}
    if catalogue_in_manifest:
        params["workload_params"] = WORKLOAD_PARAMS
    # (distinct manifests must not share a bundle id's directory)
    return sim_core.load(write_bundle(root, locations=["AA", "BB"], timezones=["UTC", "UTC"],
                                      population_weight=[1.0, 0.0], n_steps=N_STEPS,
                                      signals={"carbon_g_per_kwh": np.array([[400.0] * N_STEPS, [50.0] * N_STEPS])},
                                      tasks=tasks, usd_per_gb=USD_PER_GB, throughput_mbps=1000.0,
                                      rtt_ms=50.0, parameters=params, name="cat" if catalogue_in_manifest else "nocat"))


def _away(obs):
    return 2  # every pending task to site 1 (BB): all remote


def _run(sc, **kw):
    return sim_core.run(sc, _away, seed=0, drain=False, transfer_kwh_per_gb=KWH_PER_GB, **kw)


IMAGENET = [n for n, _, _ in P.ai_workloads].index("imagenet1k-resnet50")
SQUAD = [n for n, _, _ in P.ai_workloads].index("squad11-bert-base")


@pytest.fixture(scope="module")
def mixed(tmp_path_factory):
    """40 tasks an hour apart: ImageNet (even), SQuAD (odd, but every 10th task a reference-sized input)."""
    n = 40
    bw = np.where(np.arange(n) % 2 == 0, moved_gb(IMAGENET)[0], moved_gb(SQUAD)[0])
    bw[1::10] = 0.4321  # matches no catalogue entry: the task's own input
    arrival = np.arange(n) * 3600.0 + 60.0
    root = tmp_path_factory.mktemp("loc")
    return _bundle(root, bw, arrival), _bundle(root, bw, arrival, catalogue_in_manifest=False), bw


def test_datasets_are_recovered_from_the_catalogue(mixed):
    sc, sc_plain, bw = mixed
    names, data, moved = catalogue(sc)
    assert names == tuple(n for n, _, _ in P.ai_workloads)
    ds, ds_gb = task_datasets(sc)
    expect = np.where(np.arange(40) % 2 == 0, IMAGENET, SQUAD)
    expect[1::10] = NO_DATASET
    np.testing.assert_array_equal(ds, expect)
    assert ds_gb[0] == 154.642 and ds_gb[3] == 0.035 and ds_gb[1] == 0.0
    assert catalogue(sc_plain)[0] == () and (task_datasets(sc_plain)[0] == NO_DATASET).all()


def test_a_dataset_moves_once_its_checkpoint_every_time(mixed):
    sc, _, bw = mixed
    r = _run(sc)
    x = r.transfers.sort("decision_ts_utc")
    tid = x["task_id"].to_numpy()
    gb = x["bandwidth_gb"].to_numpy()
    assert tid.shape[0] == 40  # every task ran away from its origin
    full_img, data_img = moved_gb(IMAGENET)
    full_sq, data_sq = moved_gb(SQUAD)
    img = tid % 2 == 0
    own = tid % 10 == 1
    sq = ~img & ~own
    # the first ImageNet / SQuAD task ships its dataset; every later one (within 30 days) only its checkpoint
    assert gb[img][0] == full_img and np.all(gb[img][1:] == full_img - data_img)
    assert gb[sq][0] == full_sq and np.all(gb[sq][1:] == full_sq - data_sq)
    assert np.all(gb[img][1:] > 0.3) and np.all(gb[sq][1:] > 1.3)  # a checkpoint always moves (0.31 / 1.32 GB)
    assert np.all(gb[own] == 0.4321)  # a task's own input always moves
    # cost, energy, emissions and delay follow the GB moved (origin AA at 400 g/kWh, 1000 Mbit/s, 50 ms)
    np.testing.assert_array_equal(x["cost_usd"].to_numpy(), gb * 0.09)
    np.testing.assert_array_equal(x["energy_kwh"].to_numpy(), gb * KWH_PER_GB)
    np.testing.assert_array_equal(x["carbon_kg"].to_numpy(), gb * KWH_PER_GB * 400.0 / 1000.0)
    np.testing.assert_allclose(x["delay_s"].to_numpy(), gb * 8.0 + 0.05, rtol=1e-12)


def test_conservation_totals_steps_and_step_api(mixed):
    """The run totals, the transfers frame and the step API's per-step transfer flows agree under locality."""
    sc, _, _ = mixed
    r = _run(sc)
    x = r.transfers
    t = r.totals
    assert t["transfer_cost_usd"] == pytest.approx(x["cost_usd"].sum(), rel=1e-12)
    assert t["transfer_kwh"] == pytest.approx(x["energy_kwh"].sum(), rel=1e-12)
    assert t["transfer_carbon_kg"] == pytest.approx(x["carbon_kg"].sum(), rel=1e-12)
    assert t["transfer_kwh"] == pytest.approx(x["bandwidth_gb"].sum() * KWH_PER_GB, rel=1e-12)
    sim = sim_core.Simulator(sc, seed=0, drain=False, transfer_kwh_per_gb=KWH_PER_GB)
    sim.reset()
    gb = kwh = cost = 0.0
    while not sim.done:
        _, info = sim.step(2)
        gb += info["transfer_gb"]
        kwh += info["transfer_kwh"]
        cost += info["transfer_cost_usd"]
    assert gb == pytest.approx(x["bandwidth_gb"].sum(), rel=1e-12)
    assert kwh == pytest.approx(t["transfer_kwh"], rel=1e-12)
    assert cost == pytest.approx(t["transfer_cost_usd"], rel=1e-12)


def test_retention_expires(mixed):
    """With a retention shorter than the gap between two uses (tasks 2 h apart per dataset), every move ships
    the dataset again: exactly the old numbers."""
    sc, _, bw = mixed
    r = _run(sc, locality_retention_days=1.0 / 24)  # 1 h < 2 h
    x = r.transfers.sort("task_id")
    np.testing.assert_array_equal(x["bandwidth_gb"].to_numpy(), bw)
    r2 = _run(sc, locality_retention_days=3.0 / 24)  # 3 h > 2 h: kept
    assert r2.totals["transfer_kwh"] < 0.2 * r.totals["transfer_kwh"]


def test_locality_off_is_the_old_model(mixed):
    """locality=False on a bundle with datasets gives exactly what a bundle without a catalogue gives (where
    locality cannot apply): the model before data locality, bit for bit."""
    sc, sc_plain, bw = mixed
    off = _run(sc, locality=False)
    plain = _run(sc_plain)
    assert off.totals == plain.totals
    assert off.transfers.equals(plain.transfers)
    assert off.steps.equals(plain.steps)
    np.testing.assert_array_equal(off.transfers.sort("task_id")["bandwidth_gb"].to_numpy(), bw)
    on = _run(sc)
    assert on.totals["transfer_kwh"] < off.totals["transfer_kwh"]
    assert on.totals["transfer_cost_usd"] < off.totals["transfer_cost_usd"]


@pytest.mark.parametrize("kw", [{"locality": 1}, {"locality": "yes"}, {"locality_retention_days": -1.0},
                                {"locality_retention_days": float("nan")}, {"locality_retention_days": True}])
def test_bad_locality_options_are_refused(mixed, kw):
    sc, _, _ = mixed
    with pytest.raises(RunOptionsError, match=next(iter(kw))):
        sim_core.run(sc, "local_only", seed=0, days=1, **kw)


def test_datasets_match_the_derivation(tmp_path):
    """Sizes drawn by the workload derivation itself (pipelines.workload.derive.assign_bandwidth, `ai` model)
    are matched back to the very entry it chose, for every task (GPU tasks of every size: every entry feasible
    for some)."""
    n = 3000
    rng = np.random.default_rng(7)
    gpus = rng.choice([1.0, 2.0, 8.0, 64.0, 256.0], n)
    tasks = pl.DataFrame({"source_line": np.arange(n), "gpus": gpus, "gpu_mem_gb": gpus * 80.0,
                          "duration_s": rng.choice([3600.0, 36000.0, 360000.0], n), "mem_gb": np.full(n, 64.0)})
    out = wd.assign_bandwidth(tasks, P, None, np.random.default_rng(5))
    g = np.random.default_rng(5)
    g.standard_normal(n)  # (assign_bandwidth draws the reference model's noise first)
    choice = wd.ai_workload_choice(tasks, P, g.random(n))
    assert (choice >= 0).all() and len(set(choice.tolist())) == len(P.ai_workloads)
    bw = out.sort("source_line")["bandwidth_gb"].to_numpy()
    sc = _bundle(tmp_path, bw, np.arange(n) * 50.0)
    ds, ds_gb = task_datasets(sc)
    np.testing.assert_array_equal(ds, choice)
    np.testing.assert_array_equal(ds_gb, np.array([d for _, d, _ in P.ai_workloads])[choice])
