"""Server power states (docs/model.md §4a): consolidation, sleep, wake latency, spare pool, per-device
GPU power, and ``power="always_on"`` reproducing the model that came before them."""

import math

import numpy as np
import polars as pl
import pytest

import sim_core
from gridshift.dc_params import FACILITY_PRESETS, DatacenterParams
from sim_core import physics as ph
from sim_core.testing import write_bundle

T_IN = 25.0 + 2.0  # default rack inlet (supply air 25 degC + 2 K)
IDLE_W = 120.0 + 0.02 * 400.0 * (T_IN - 16.0) / 12.0  # one idle server at the default inlet, W


def one_dc(tmp_path, tasks, n_steps=16, physics=None, **kw):
    """One DC of 10 CPU servers (640 cores, 128 GB each), no GPUs."""
    args = dict(locations=["A"], timezones=["UTC"], total_cores=640, total_gpus=0, total_mem_gb=1280,
                n_steps=n_steps, tasks=tasks, physics=[physics or DatacenterParams()])
    args.update(kw)
    return write_bundle(tmp_path, **args)


def waits(r):
    t = r.tasks.sort("task_id")
    return [(s - a).total_seconds() for s, a in zip(t["start_ts_utc"], t["arrival_ts_utc"], strict=True)]


# ---------------------------------------------------------------------------- engine
def test_load_drop_puts_servers_to_sleep(tmp_path):
    # ten 64-core tasks at t = 0 need all ten servers; once they end, only the spare pool stays on
    p = one_dc(tmp_path, {"arrival_ts_utc": np.zeros(10), "duration_s": np.full(10, 1800.0),
                          "cpu_cores": np.full(10, 64.0), "mem_gb": np.full(10, 1.0)},
               physics=DatacenterParams(server_sleep_w=5.0))
    r = sim_core.run(p, "local_only")
    s = r.steps.sort("step")
    # 9 woken at 0, up at 260 s; they end at 2060 s and free their servers at the 2700 s boundary
    assert waits(r) == [0.0] + [260.0] * 9
    assert s["servers_on"][1] == 10.0 and s["servers_asleep"][1] == 0.0
    quiet = s.filter(pl.col("step") >= 3)
    assert (quiet["servers_on"] == 1.0).all() and (quiet["servers_asleep"] == 9.0).all()
    assert (quiet["servers_waking"] == 0.0).all()
    # power falls to the spare pool (one idle server and its memory) plus the sleep floor of the nine
    cpu_w = IDLE_W + 9 * 5.0
    np.testing.assert_allclose(quiet["it_cpu_kw"].to_numpy(), cpu_w / 1000.0, rtol=1e-12)
    np.testing.assert_allclose(quiet["it_mem_kw"].to_numpy(), 128 * 0.1 / 1000.0, rtol=1e-12)
    np.testing.assert_allclose(quiet["it_sleep_kw"].to_numpy(), 9 * 5.0 / 1000.0, rtol=1e-12)
    np.testing.assert_allclose(quiet["it_idle_kw"].to_numpy(), (IDLE_W + 128 * 0.1) / 1000.0, rtol=1e-12)
    # always on: ten idle servers and all their memory at the same point
    a = sim_core.run(p, "local_only", power="always_on").steps.sort("step")
    assert (a["servers_on"] == 10.0).all() and (a["servers_asleep"] == 0.0).all()
    assert a["it_cpu_kw"][5] == pytest.approx(10 * IDLE_W / 1000.0, rel=1e-12)
    assert quiet["it_kw"][0] < 0.2 * a["it_kw"][5] and quiet["total_kw"][0] < a["total_kw"][5]
    # the idle share of IT energy is reported, and consolidation lowers it
    ra = sim_core.run(p, "local_only", power="always_on")
    assert 0.0 < r.totals["idle_share_of_it"] < ra.totals["idle_share_of_it"] < 1.0
    assert r.totals["it_sleep_kwh"] == pytest.approx(s["it_sleep_kwh"].sum(), rel=1e-12)
    assert r.totals["it_sleep_kwh"] > 0.0
    assert ra.totals["it_sleep_kwh"] == 0.0 and ra.totals["it_wake_kwh"] == 0.0


def test_burst_at_sleeping_servers_waits_for_the_wake(tmp_path):
    # five 64-core tasks at t = 100 s: the spare server takes one at once, four servers are woken
    # at 100 s and are up 260 s later (the default wake latency)
    p = one_dc(tmp_path, {"arrival_ts_utc": np.full(5, 100.0), "duration_s": np.full(5, 3600.0),
                          "cpu_cores": np.full(5, 64.0), "mem_gb": np.full(5, 1.0)})
    r = sim_core.run(p, "local_only")
    assert waits(r) == [0.0, 260.0, 260.0, 260.0, 260.0]
    s0 = r.steps.sort("step").row(0, named=True)
    # busy time follows the real starts: one task from 100 s, four from 360 s
    assert s0["busy_cores"] == pytest.approx(64 * 800 / 900 + 4 * 64 * 540 / 900, rel=1e-12)
    # the four woken servers: waking 100 -> 360 s, on from 360 s; the spare on all step
    assert s0["servers_waking"] == pytest.approx(4 * 260 / 900, rel=1e-12)
    assert s0["servers_on"] == pytest.approx(1 + 4 * 540 / 900, rel=1e-12)
    assert s0["servers_on"] + s0["servers_waking"] + s0["servers_asleep"] == pytest.approx(10.0, rel=1e-12)
    # waking servers draw their peak power (server_wake_power_frac x cpu_server_max_w) and memory
    assert s0["it_wake_kw"] == pytest.approx(4 * 260 / 900 * (400.0 + 128 * 0.1) / 1000.0, rel=1e-12)
    # always on: no wait
    assert waits(sim_core.run(p, "local_only", power="always_on")) == [0.0] * 5
    # a shorter wake latency (an S3-like state) is honoured
    q = one_dc(tmp_path / "s3", {"arrival_ts_utc": np.full(5, 100.0), "duration_s": np.full(5, 3600.0),
                                 "cpu_cores": np.full(5, 64.0), "mem_gb": np.full(5, 1.0)},
               physics=DatacenterParams(server_wake_s=5.0))
    assert waits(sim_core.run(q, "local_only")) == [0.0, 5.0, 5.0, 5.0, 5.0]


def test_wake_delay_reaches_the_sla(tmp_path):
    # one task needing all ten servers, 400 s long: deadline 100 + 1.5 x 400 = 700 s
    p = one_dc(tmp_path, {"arrival_ts_utc": [100.0], "duration_s": [400.0], "cpu_cores": [640.0], "mem_gb": [1.0]})
    r = sim_core.run(p, "local_only")
    t = r.tasks.row(0, named=True)
    assert waits(r) == [260.0] and t["violated"]  # finishes at 760 s
    assert r.totals["sla_violations"] == 1
    assert sim_core.run(p, "local_only", power="always_on").totals["sla_violations"] == 0


def test_wake_across_a_step_boundary_starts_in_the_next_step(tmp_path):
    # 128 cores at 800 s: the spare server and one woken at 800 s, up at 1060 s (step 1)
    p = one_dc(tmp_path, {"arrival_ts_utc": [800.0], "duration_s": [1800.0], "cpu_cores": [128.0], "mem_gb": [1.0]})
    sc = sim_core.load(p)
    r = sim_core.run(sc, "local_only")
    assert waits(r) == [260.0]
    s = r.steps.sort("step")
    assert s["started"].to_list()[:3] == [0, 1, 0] and s["running"].to_list()[:2] == [0, 1]
    assert s["busy_cores"][0] == 0.0
    assert s["busy_cores"][1] == pytest.approx(128 * (1800 - 1060) / 900, rel=1e-12)
    assert s["queue_len"][0] == 1  # waiting for its server at the end of step 0
    assert s["servers_waking"][0] == pytest.approx(100 / 900, rel=1e-12)
    # step 1: the rest of that wake, and the spare pool's server woken at the 900 s boundary (the
    # queued task counts as demand there: 2 servers + 1 spare)
    assert s["servers_waking"][1] == pytest.approx((160 + 260) / 900, rel=1e-12)
    # the step API attributes the start, energy and counts to the same steps
    sim = sim_core.Simulator(sc, seed=0)
    sim.reset()
    started, it_kwh, waking = [], [], []
    while not sim.done:
        _, info = sim.step(sim.builtin_actions("local_only"))
        started.append(info["tasks_started"])
        it_kwh.append(float(info["it_kwh"][0]))
        waking.append(float(info["servers_waking"][0]))
    assert started == s["started"].to_list()
    np.testing.assert_array_equal(np.array(it_kwh), s["it_kwh"].to_numpy())
    np.testing.assert_array_equal(np.array(waking), s["servers_waking"].to_numpy())


def test_spare_pool_is_kept_on(tmp_path):
    p = one_dc(tmp_path, {"arrival_ts_utc": np.zeros(0)}, physics=DatacenterParams(server_spare_min=3.0))
    s = sim_core.run(p, "local_only").steps
    assert (s["servers_on"] == 3.0).all() and (s["servers_asleep"] == 7.0).all()
    # a spare pool as large as the DC: every server on, but GPUs and power per device still
    q = one_dc(tmp_path / "all", {"arrival_ts_utc": np.zeros(0)}, physics=DatacenterParams(server_spare_min=10.0))
    assert (sim_core.run(q, "local_only").steps["servers_on"] == 10.0).all()


def random_tasks(n, seed, horizon):
    rng = np.random.default_rng(seed)
    return {"arrival_ts_utc": np.sort(rng.uniform(0, horizon, n)), "duration_s": rng.uniform(300, 7200, n),
            "cpu_cores": rng.choice([1.0, 4.0, 16.0, 64.0], n), "gpus": rng.choice([0.0, 0.0, 0.25, 0.5, 1.0, 4.0], n),
            "mem_gb": rng.uniform(1, 64, n), "bandwidth_gb": rng.uniform(0, 2, n)}


def test_managed_runs_hold_capacity_conservation_and_determinism(tmp_path):
    caps = {"A": (640, 16, 2560), "B": (384, 8, 1024), "C": (256, 0, 1024)}
    tasks = random_tasks(1500, 4, 86400)
    p = write_bundle(tmp_path, locations=list(caps), timezones=["UTC", "Europe/Paris", "Asia/Tokyo"],
                     total_cores=[c[0] for c in caps.values()], total_gpus=[c[1] for c in caps.values()],
                     total_mem_gb=[c[2] for c in caps.values()], n_steps=192, tasks=tasks,
                     signals={"carbon_g_per_kwh": np.random.default_rng(1).uniform(50, 500, (3, 192))})
    sc = sim_core.load(p)
    for pol in ("lowest_carbon", "round_robin", "random"):
        r = sim_core.run(sc, pol, seed=2)
        assert r.totals["tasks_started"] > 1000
        t = r.tasks.filter(pl.col("start_ts_utc").is_not_null())
        assert (t["start_ts_utc"] >= t["ready_ts_utc"]).all()
        for loc, (c, g, m) in caps.items():
            s = r.steps.filter(pl.col("location") == loc)
            n_srv = math.ceil(c / 64)
            n_g = min(math.ceil(g / 8), n_srv) if g else 0
            # every server is on, waking or asleep
            np.testing.assert_allclose((s["servers_on"] + s["servers_waking"] + s["servers_asleep"]).to_numpy(),
                                       n_srv, rtol=1e-12)
            assert (s["servers_on"] >= 1.0 - 1e-12).all()  # the spare pool
            # work runs only on servers that are on (time-weighted: busy <= capacity on)
            assert (s["busy_cores"] <= np.minimum(s["servers_on"] * 64, c) + 1e-9).all(), (pol, loc)
            assert (s["busy_mem_gb"] <= s["servers_on"] * (m / n_srv) + 1e-9).all(), (pol, loc)
            if g:  # (GPU servers on <= servers on, and <= the GPU servers there are)
                assert (s["busy_gpus"] <= np.minimum(s["servers_on"].to_numpy(), n_g) * 8 + 1e-9).all(), (pol, loc)
            # instantaneous total capacity never exceeded
            tt = r.tasks.filter((pl.col("dest") == loc) & pl.col("start_ts_utc").is_not_null())
            ev_t = np.r_[tt["start_ts_utc"].dt.epoch("us").to_numpy(), tt["finish_ts_utc"].dt.epoch("us").to_numpy()]
            for col, cap in (("cpu_cores", c), ("gpus", g), ("mem_gb", m)):
                v = tasks[col][tt["task_id"].to_numpy()]
                ev_v = np.r_[v, -v]
                order = np.lexsort((ev_v, ev_t))
                assert np.cumsum(ev_v[order]).max() <= cap + 1e-9, (pol, loc, col)
            # conservation of energy still holds with power states
            np.testing.assert_allclose(s["cooling_load_kw"].to_numpy(),
                                       (s["it_kw"] + s["crac_fan_kw"] + s["lighting_kw"]).to_numpy(), rtol=1e-12)
        # determinism
        r2 = sim_core.run(p, pol, seed=2)
        assert r2.steps.equals(r.steps) and r2.tasks.equals(r.tasks) and r2.totals == r.totals


def test_step_api_matches_run_with_power_states(tmp_path):
    p = write_bundle(tmp_path, locations=["A", "B"], timezones=["UTC", "UTC"], total_cores=[640, 320],
                     total_gpus=[16, 8], total_mem_gb=[2560, 1280], n_steps=96, tasks=random_tasks(600, 9, 80000),
                     signals={"carbon_g_per_kwh": np.random.default_rng(2).uniform(50, 500, (2, 96))})
    sc = sim_core.load(p)
    ref = sim_core.run(sc, "lowest_carbon", seed=4)
    sim = sim_core.Simulator(sc, seed=4)
    sim.reset()
    sums = {k: 0.0 for k in ("it_kwh", "total_kwh", "carbon_kg", "it_idle_kwh", "it_sleep_kwh", "it_wake_kwh")}
    while not sim.done:
        o = sim.step_fast(sim.builtin_actions("lowest_carbon"))
        for k in sums:
            sums[k] += o[k]
    got = sim.result()
    assert got.steps.equals(ref.steps) and got.tasks.equals(ref.tasks) and got.totals == ref.totals
    for k, v in sums.items():
        assert v == pytest.approx(ref.totals[k], rel=1e-12), k


def test_power_option_validated(tmp_path):
    p = one_dc(tmp_path, {"arrival_ts_utc": [0.0]})
    for bad in ("sometimes", None, 1, True):
        with pytest.raises(sim_core.RunOptionsError, match="power"):
            sim_core.run(p, "local_only", power=bad)
    assert sim_core.run(p, "local_only", power="always_on").options["power"] == "always_on"
    assert sim_core.run(p, "local_only").options["power"] == "managed"


# ---------------------------------------------------------------------------- always_on = the old model
def always_on_bundle(root):
    rng = np.random.default_rng(7)
    n = 800
    tasks = {"arrival_ts_utc": np.sort(rng.uniform(0, 2 * 86400, n)), "duration_s": rng.uniform(900, 7200, n),
             "cpu_cores": rng.choice([1.0, 2.0, 4.0, 8.0], n), "gpus": rng.choice([0.0, 0.0, 0.5, 1.0, 2.0], n),
             "mem_gb": rng.uniform(1, 32, n), "bandwidth_gb": rng.uniform(0, 2, n)}
    k = np.arange(192)
    sig = {"carbon_g_per_kwh": np.stack([300 + 100 * np.sin(k / 15.0 + a) for a in (0.0, 2.0, 4.0)]),
           "temp_c": np.stack([15 + 10 * np.sin(k / 30.0 + a) for a in (0.0, 1.0, 2.0)])}
    sig["wetbulb_c"] = sig["temp_c"] - 4.0
    legacy = DatacenterParams(**FACILITY_PRESETS["gridshift-0.1"])  # the facility of that version
    return write_bundle(root, locations=["A", "B", "C"], timezones=["UTC", "Europe/Paris", "Asia/Tokyo"],
                        total_cores=[256, 128, 192], total_gpus=[16, 8, 0], total_mem_gb=[1024, 512, 768],
                        n_steps=192, signals=sig, tasks=tasks, physics=[legacy] * 3)


# Produced by the engine as it was before server power states and the climate-sensitive facility
# (commit 7e68bb6): this same bundle (whose physics is that version's facility preset),
# `sim_core.run(bundle, policy, seed=3)`, totals printed with repr(), the sums of the per-step
# it_gpu_kw / it_cpu_kw and total_kw of datacenter A at steps 40..43. The current engine with
# power="always_on" gave the same numbers bit for bit when they were recorded.
OLD_MODEL = {
    "lowest_carbon": dict(
        it_kwh=275.38188577134827, total_kwh=330.4207419644626, cost_usd=26.43365935715701,
        carbon_kg=95.89324650970035, water_l=596.419017593186, tasks_started=800, sla_violations=1,
        mean_wait_s=52.93143270508089, it_gpu_kw_sum=753.0267469402154, it_cpu_kw_sum=271.3061627190583,
        total_kw_a=[4.919370808912647, 4.996367332937794, 4.357698331732688, 4.774731862853344]),
    "round_robin": dict(
        it_kwh=276.83046546135955, total_kwh=331.16187879078865, cost_usd=26.49295030326309,
        carbon_kg=99.32433532452256, water_l=598.2072330754808, tasks_started=800, sla_violations=1,
        mean_wait_s=54.373454356165915, it_gpu_kw_sum=760.3509153268537, it_cpu_kw_sum=271.3054903139265,
        total_kw_a=[5.821976471251347, 5.739200002337698, 4.142625323327914, 4.662744961812364]),
}


# Recorded on main at a12e90a (before issue 24: network energy, electrical losses, cooling design, GPU model) with
# this bundle (physics = the gridshift-0.1 preset, as ``--physics gridshift-0.1`` exports it), seed 3 and
# transfer_kwh_per_gb=0.06 (that version's default), totals printed with repr(): the preset must keep giving
# them bit for bit, in both power modes.
PRESET_0_1 = {
    ("managed", "lowest_carbon"): dict(
        it_kwh=186.84558773492205, total_kwh=229.05411719570733, cost_usd=18.32432937565659,
        carbon_kg=66.24918376068828, water_l=406.4957971322527, transfer_kwh=30.830572774670102,
        transfer_carbon_kg=9.19000001262334),
    ("managed", "round_robin"): dict(
        it_kwh=190.4254883440602, total_kwh=232.90023258129656, cost_usd=18.632018606503724,
        carbon_kg=69.91498222649126, water_l=413.75953469137414, transfer_kwh=32.143621688883655,
        transfer_carbon_kg=8.814173515916206),
    ("always_on", "lowest_carbon"): dict(
        it_kwh=275.38188577134827, total_kwh=330.4207419644626, cost_usd=26.43365935715701,
        carbon_kg=95.89324650970035, water_l=596.419017593186, transfer_kwh=30.830572774670102,
        transfer_carbon_kg=9.19000001262334),
    ("always_on", "round_robin"): dict(
        it_kwh=276.83046546135955, total_kwh=331.16187879078865, cost_usd=26.49295030326309,
        carbon_kg=99.32433532452256, water_l=598.2072330754808, transfer_kwh=32.143621688883655,
        transfer_carbon_kg=8.814173515916206),
}


@pytest.mark.parametrize(("power", "policy"), sorted(PRESET_0_1))
def test_gridshift_0_1_preset_reproduces_its_totals_bit_for_bit(tmp_path, power, policy):
    r = sim_core.run(always_on_bundle(tmp_path), policy, seed=3, power=power, transfer_kwh_per_gb="aslan2018-2015")
    for k, v in PRESET_0_1[(power, policy)].items():
        assert r.totals[k] == v, (k, r.totals[k], v)
    s = r.steps
    for k in ("ups_loss_kw", "transformer_loss_kw", "lighting_kw"):
        assert (s[k] == 0.0).all(), k


@pytest.mark.parametrize("policy", sorted(OLD_MODEL))
def test_always_on_reproduces_the_old_engine(tmp_path, policy):
    ref = OLD_MODEL[policy]
    r = sim_core.run(always_on_bundle(tmp_path), policy, seed=3, power="always_on")
    for k in ("tasks_started", "sla_violations"):
        assert r.totals[k] == ref[k], k
    for k in ("it_kwh", "total_kwh", "cost_usd", "carbon_kg", "water_l", "mean_wait_s"):
        assert r.totals[k] == pytest.approx(ref[k], rel=1e-13, abs=0.0), k
    s = r.steps.sort(["dc", "step"])
    assert float(s["it_gpu_kw"].sum()) == pytest.approx(ref["it_gpu_kw_sum"], rel=1e-13, abs=0.0)
    assert float(s["it_cpu_kw"].sum()) == pytest.approx(ref["it_cpu_kw_sum"], rel=1e-13, abs=0.0)
    np.testing.assert_allclose(s.filter(pl.col("dc") == 0)["total_kw"].to_numpy()[40:44], ref["total_kw_a"],
                               rtol=1e-13, atol=0.0)
    # and the default (managed) model is a different one on the same bundle
    m = sim_core.run(always_on_bundle(tmp_path / "m"), policy, seed=3)
    assert m.totals["it_kwh"] < r.totals["it_kwh"]


# ---------------------------------------------------------------------------- physics (IT part)
def managed(p, caps, busy, servers, t_db=25.0, t_wb=20.0):
    """physics.compute for one DC and step with the given server states [on_c, on_g, wk_c, wk_g]."""
    r = ph.compute(ph.param_vector(p), *caps, *busy, t_db, t_wb, servers=[[[v]] for v in servers])
    return {k: float(v[0, 0]) for k, v in r.items()}


def test_server_layout():
    pv = ph.param_vector(DatacenterParams())
    assert ph.server_layout(pv, 6400.0, 10.0, 1000.0) == (100.0, 2.0, 8.0, 10.0)
    assert ph.server_layout(pv, 6400.0, 1000.0, 1000.0) == (100.0, 100.0, 10.0, 10.0)  # GPUs on every server
    assert ph.server_layout(pv, 6400.0, 0.0, 1000.0) == (100.0, 0.0, 0.0, 10.0)
    assert ph.server_layout(pv, 0.0, 8.0, 100.0) == (0.0, 0.0, 0.0, 0.0)  # no servers: always on


def test_one_busy_gpu_in_a_large_site_draws_at_most_one_busy_gpu():
    p = DatacenterParams()
    caps = (64000.0, 1000.0, 100000.0)  # 1000 servers, 125 GPU servers of 8 V100
    on = [875.0, 125.0, 0.0, 0.0]  # every server on: only the GPU model differs from always_on
    idle = managed(p, caps, (0.0, 0.0, 0.0), on)
    one = managed(p, caps, (0.0, 1.0, 0.0), on)
    full = managed(p, caps, (0.0, 1000.0, 0.0), on)
    busy_w = (one["it_gpu_kw"] - idle["it_gpu_kw"]) * 1000.0 + p.gpu_idle_w  # what the busy device draws
    assert busy_w == pytest.approx(p.gpu_idle_w + (p.gpu_max_w - p.gpu_idle_w) * math.log2(1.0 + p.gpu_alloc_util),
                                   rel=1e-9)
    assert busy_w <= p.gpu_max_w
    assert full["it_gpu_kw"] / 1000.0 * 1000.0 == pytest.approx(busy_w * 1000 / 1000.0, rel=1e-9)  # 1000 alike
    # the reference defect, kept only in gridshift 0.1's preset (always_on): log2 of the fleet-average allocation
    # makes one allocated GPU of 1000 add 215 x 1000 x log2(1.001) = 310 W, more than a fully busy V100 (250 W)
    fleet = ph.param_vector(DatacenterParams(gpu_power_model="fleet_average"))
    r0 = ph.compute(fleet, *caps, 0.0, 0.0, 0.0, 25.0, 20.0)
    r1 = ph.compute(fleet, *caps, 0.0, 1.0, 0.0, 25.0, 20.0)
    legacy_w = float(r1["it_gpu_kw"][0, 0] - r0["it_gpu_kw"][0, 0]) * 1000.0
    assert legacy_w == pytest.approx(215.0 * 1000 * math.log2(1.001), rel=1e-9) and legacy_w > p.gpu_max_w
    # an allocated GPU is not a busy GPU: it runs at gpu_alloc_util
    hot = managed(DatacenterParams(gpu_alloc_util=1.0), caps, (0.0, 1.0, 0.0), on)
    assert (hot["it_gpu_kw"] - idle["it_gpu_kw"]) * 1000.0 == pytest.approx(p.gpu_max_w - p.gpu_idle_w, rel=1e-9)


def test_fractional_gpus_are_packed_per_device():
    p = DatacenterParams()
    caps = (6400.0, 16.0, 1000.0)  # 100 servers, 2 GPU servers
    r = managed(p, caps, (0.0, 2.5, 0.0), [98.0, 2.0, 0.0, 0.0])
    u = p.gpu_alloc_util

    def g(x):
        return 35.0 + 215.0 * math.log2(1.0 + x)

    # two devices fully allocated, one half allocated (at half the SM utilisation), 13 idle
    assert r["it_gpu_kw"] == pytest.approx((2 * g(u) + g(0.5 * u) + 13 * 35.0) / 1000.0, rel=1e-12)
    # continuous and non-decreasing in the allocation
    xs = np.linspace(0.0, 16.0, 321)
    ys = [managed(p, caps, (0.0, x, 0.0), [98.0, 2.0, 0.0, 0.0])["it_gpu_kw"] for x in xs]
    assert np.all(np.diff(ys) >= -1e-15) and max(np.diff(ys)) < 0.05 * (250 - 35) / 1000.0 * 2


def test_hand_computed_managed_operating_point():
    """100 servers (6400 cores, 2 of them GPU servers with 8 + 2 V100), 1000 GB; 40 CPU-only and both
    GPU servers on, 5 CPU-only waking, 53 asleep (time-weighted); 2000 cores, 3.5 GPUs, 300 GB busy."""
    p = DatacenterParams(server_sleep_w=4.0, gpu_sleep_w=1.0)
    r = managed(p, (6400.0, 10.0, 1000.0), (2000.0, 3.5, 300.0), [40.0, 2.0, 5.0, 0.0])
    leak = 0.02 * 400 * (T_IN - 16) / 12
    u_on = 2000.0 / (42 * 64)
    cpu = (42 * (120 + 280 * u_on + leak) + 5 * 400.0 + 53 * 4.0) / 1000
    assert r["it_cpu_kw"] == pytest.approx(cpu, abs=1e-12)

    def g(x):
        return 35.0 + 215.0 * math.log2(1.0 + x)

    # GPUs: the 10 are all on (2 GPU servers); 3 fully allocated, one half; 6 free; none asleep
    gpu = (3 * g(0.52) + g(0.5 * 0.52) + 6 * 35.0) / 1000
    assert r["it_gpu_kw"] == pytest.approx(gpu, abs=1e-12)
    mem = ((42 + 5) * 10 * 0.1 + 300 * 0.2) / 1000  # memory of servers on or waking, 10 GB each
    assert r["it_mem_kw"] == pytest.approx(mem, abs=1e-12)
    heat = cpu + gpu + mem
    heat_d = (100 * (400 + leak) + 10 * 250 + 1000 * 0.3) / 1000
    a = 47 / 100  # share of the servers whose fans run
    rr = max(0.3, heat / (a * heat_d))
    assert r["it_fan_kw"] == pytest.approx(a * 0.05 * heat_d * rr**3, abs=1e-12)
    rho_cp = 1.19 * 1006
    v_srv = a * rr * 1.05 * heat_d * 1000 / (rho_cp * 12)
    assert r["server_airflow_m3_s"] == pytest.approx(v_srv, rel=1e-12)
    assert r["it_kw"] == pytest.approx(heat + a * 0.05 * heat_d * rr**3, abs=1e-12)
    assert (r["servers_on"], r["servers_waking"], r["servers_asleep"]) == (42.0, 5.0, 53.0)
    idle = (42 * (120 + leak) * (1 - u_on) + 6 * 35.0 + (420 - 300) * 0.1) / 1000
    assert r["it_idle_kw"] == pytest.approx(idle, abs=1e-12)
    assert r["it_sleep_kw"] == pytest.approx(53 * 4.0 / 1000, abs=1e-12)
    assert r["it_wake_kw"] == pytest.approx((5 * 400.0 + 5 * 10 * 0.1) / 1000, abs=1e-12)


def test_managed_physics_conservation_and_monotone_in_utilisation():
    caps = (64000.0, 1000.0, 100000.0)  # 1000 servers: 875 CPU-only, 125 GPU servers
    states = ([875.0, 125.0, 0.0, 0.0], [300.0, 40.0, 20.0, 5.0], [1.0, 1.0, 0.0, 0.0], [0.0, 0.0, 0.0, 0.0])
    for cond in ("water", "air"):
        p = DatacenterParams(condenser=cond, server_sleep_w=5.0)
        for st in states:
            n_on = st[0] + st[1]
            cores_on, gpus_on, mem_on = n_on * 64, min(st[1] * 8, 1000.0), n_on * 100
            for t in (-10.0, 20.0, 38.0):
                wb = t - 4.0
                base = np.array([0.5 * cores_on, 0.5 * gpus_on, 0.5 * mem_on])
                for which in range(3):
                    tot = []
                    for u in np.linspace(0, 1, 11):
                        b = base.copy()
                        b[which] = u * (cores_on, gpus_on, mem_on)[which]
                        r = managed(p, caps, tuple(b), st, t, wb)
                        tot.append(r["total_kw"])
                        assert r["cooling_load_kw"] == pytest.approx(r["it_kw"] + r["crac_fan_kw"] + r["lighting_kw"],
                                                                     rel=1e-12)
                        assert r["it_kw"] == pytest.approx(r["it_cpu_kw"] + r["it_gpu_kw"] + r["it_mem_kw"]
                                                           + r["it_fan_kw"], rel=1e-12)
                        assert 0.0 <= r["it_idle_kw"] + r["it_sleep_kw"] + r["it_wake_kw"] <= r["it_kw"] + 1e-12
                        assert r["servers_on"] + r["servers_waking"] + r["servers_asleep"] == pytest.approx(1000.0)
                    assert np.all(np.diff(tot) >= -1e-12), (cond, st, t, which)
        # the same busy work costs less IT power with fewer idle servers on
        r_all = managed(p, caps, (640.0, 8.0, 1000.0), states[0])
        r_few = managed(p, caps, (640.0, 8.0, 1000.0), [9.0, 1.0, 0.0, 0.0])
        assert r_few["it_kw"] < 0.1 * r_all["it_kw"]


def test_every_server_asleep_draws_only_the_sleep_floor():
    p = DatacenterParams(server_sleep_w=6.0, gpu_sleep_w=2.0)
    r = managed(p, (6400.0, 16.0, 1000.0), (0.0, 0.0, 0.0), [0.0, 0.0, 0.0, 0.0])
    assert r["it_kw"] == pytest.approx((100 * 6.0 + 16 * 2.0) / 1000.0, rel=1e-12)
    assert r["it_fan_kw"] == 0.0 and r["server_airflow_m3_s"] == 0.0 and r["it_idle_kw"] == 0.0
    assert r["cooling_load_kw"] == pytest.approx(r["it_kw"] + r["crac_fan_kw"] + r["lighting_kw"], rel=1e-12)


def test_servers_on_always_hold_the_running_work(tmp_path):
    """White-box invariant, checked after every step: the servers left on at the boundary (after
    switching idle ones off) hold every task still running after it, per resource."""
    from sim_core import engine as E

    p = write_bundle(tmp_path, locations=["A", "B"], timezones=["UTC", "UTC"], total_cores=[1000, 300],
                     total_gpus=[20, 3], total_mem_gb=[3000, 900], n_steps=96, tasks=random_tasks(900, 11, 80000))
    sim = sim_core.Simulator(sim_core.load(p), seed=1)
    sim.reset()
    checked = 0
    while not sim.done:
        sim.step(sim.builtin_actions("round_robin"))
        S, C, j = sim.prep.state, sim.prep.ctx, sim.step_index - 1
        if j + 1 >= sim.prep.n:
            break
        cfg, cap = C.srv_cfg, C.cap
        for d in range(2):
            nc, ng = S.srv_on[d, E.K_CPU], S.srv_on[d, E.K_GPU]
            assert nc <= cfg[d, E.CFG_N_C] and ng <= cfg[d, E.CFG_N_G]
            assert nc + ng + S.srv_wk[d].sum() <= cfg[d, E.CFG_N_C] + cfg[d, E.CFG_N_G]
            running = cap[d] - S.free[d] - S.rel[:, d, j + 1]
            on_cap = [min((nc + ng) * cfg[d, E.CFG_CPS], cap[d, 0]), min(ng * cfg[d, E.CFG_GPS], cap[d, 1]),
                      min((nc + ng) * cfg[d, E.CFG_MPS], cap[d, 2])]
            assert np.all(running <= np.array(on_cap) + 1e-9), (j, d, running, on_cap)
            checked += running[0] > 0
    assert checked > 50


def test_one_gpu_model_in_both_power_modes():
    """The same busy GPUs draw the same GPU power per device under managed (every server on) and always_on: the
    allocated devices on the log2 curve at gpu_alloc_util (a fractional one at its share), every other GPU at idle
    power, by hand; gridshift 0.1's fleet-average curve (its preset only) is another model, and it makes one busy
    GPU in a large site draw more than that GPU and 999 idle ones."""
    caps = (64000.0, 1000.0, 100000.0)  # 1000 servers: 875 CPU-only, 125 GPU servers of 8
    p = DatacenterParams(condenser="water")
    pv = ph.param_vector(p)
    u = p.gpu_alloc_util
    for bg in (0.0, 0.5, 1.0, 3.5, 37.0, 500.0, 999.25, 1000.0):
        busy = (3200.0, bg, 5000.0)
        on = managed(p, caps, busy, [875.0, 125.0, 0.0, 0.0])
        r = ph.compute(pv, *caps, *busy, 25.0, 20.0)  # servers=None: always_on
        ao = {k: float(v[0, 0]) for k, v in r.items()}
        n, f = math.floor(bg), bg - math.floor(bg)
        dev = n + (1 if f > 0 else 0)
        w = n * float(ph.gpu_power(pv, u)) + (float(ph.gpu_power(pv, f * u)) if f > 0 else 0.0) + (1000 - dev) * 35.0
        assert ao["it_gpu_kw"] == pytest.approx(w / 1000.0, rel=1e-12), bg
        assert on["it_gpu_kw"] == pytest.approx(ao["it_gpu_kw"], rel=1e-12), bg
        # always_on's idle power counts the GPUs that hold no allocation, at idle power, like managed's
        assert ao["it_idle_kw"] >= (1000 - dev) * 35.0 / 1000.0 - 1e-12
    # the fleet-average curve of gridshift 0.1 (only through its preset)
    legacy = ph.param_vector(DatacenterParams(condenser="water", gpu_power_model="fleet_average"))
    one = {k: float(v[0, 0]) for k, v in ph.compute(legacy, *caps, 3200.0, 1.0, 5000.0, 25.0, 20.0).items()}
    per = {k: float(v[0, 0]) for k, v in ph.compute(pv, *caps, 3200.0, 1.0, 5000.0, 25.0, 20.0).items()}
    assert one["it_gpu_kw"] == pytest.approx(1000 * (35.0 + 215.0 * math.log2(1.001)) / 1000.0, rel=1e-12)
    assert one["it_gpu_kw"] > per["it_gpu_kw"]
    assert DatacenterParams(**FACILITY_PRESETS["gridshift-0.1"]).gpu_power_model == "fleet_average"
    with pytest.raises(ValueError, match="gpu_power_model"):
        DatacenterParams(gpu_power_model="average")
