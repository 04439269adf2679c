"""Battery storage (sim_core.battery): the step checked by hand, a run on a hand-made bundle whose charge, discharge
and grid energy are recomputed by hand from its own frame, the conservation identities with the battery in them,
the step API and whole runs agreeing to the last bit, the LP bound with batteries, the Gym action, and the
refusals of bad parameters and targets."""

from __future__ import annotations

import math

import numpy as np
import pytest

import sim_core
from gridshift.battery_params import BatteryParamError, BatteryParams
from sim_core import battery as B
from sim_core import terms
from sim_core.options import RunOptionsError
from sim_core.policies.battery_rules import targets
from sim_core.testing import synthetic_signals, tiny_bundle

#: 100 kWh usable, 40 kW, 0.81 round trip (0.9 each way), no self-discharge: hand arithmetic stays exact-ish
HAND = BatteryParams(capacity_mwh=0.1, power_mw=0.04, round_trip_eff=0.81, self_discharge_per_month=0.0)


def _kernel(params: BatteryParams, load_kw, target_kw):
    vec = B.param_vector(params)[None, :]
    t = np.asarray(target_kw, dtype=np.float64)[None, :]
    load = np.broadcast_to(np.asarray(load_kw, dtype=np.float64), t.shape[1:])[None, :].copy()
    out = np.empty((B.N_OUT, 1, t.shape[1]))
    B.battery_kernel(np.ascontiguousarray(vec), load, np.ascontiguousarray(t), out)
    return {name: out[i, 0] for i, name in enumerate(B.OUT_NAMES)}


def test_charge_and_discharge_energy_by_hand():
    # 3 steps charging at 40 kW, 4 discharging at 40 kW, under a 100 kW site load (25 kWh a step)
    o = _kernel(HAND, 100.0, [40.0] * 3 + [-40.0] * 4)
    # charge: 40 kW x 0.25 h = 10 kWh drawn, 0.9 of it stored: 9, 18, 27 kWh held
    assert o["battery_charge_kwh"][:3] == pytest.approx([10.0] * 3, abs=1e-12)
    assert o["battery_soc_kwh"][:3] == pytest.approx([9.0, 18.0, 27.0], abs=1e-12)
    # discharge: 10 kWh delivered takes 10 / 0.9 = 11.111 kWh: 15.889, 4.778 left; then only 4.778 x 0.9 = 4.3
    assert o["battery_discharge_kwh"][3:] == pytest.approx([10.0, 10.0, 4.3, 0.0], abs=1e-12)
    assert o["battery_soc_kwh"][3:] == pytest.approx([27 - 100 / 9, 27 - 200 / 9, 0.0, 0.0], abs=1e-12)
    # grid = facility + charge - discharge
    assert o["grid_kwh"] == pytest.approx([35.0, 35.0, 35.0, 15.0, 15.0, 20.7, 25.0], abs=1e-12)
    # what was lost: 10 % each way; the round trip returns 0.81 of what it took
    assert o["battery_loss_kwh"].sum() == pytest.approx(30.0 - 24.3, abs=1e-12)
    assert o["battery_discharge_kwh"].sum() / o["battery_charge_kwh"].sum() == pytest.approx(0.81, abs=1e-12)


def test_limits_power_capacity_no_export_and_self_discharge():
    # a target above the power limit is done at the limit; the battery fills to soc_max and no further
    o = _kernel(HAND, 100.0, [1000.0] * 13)
    assert o["battery_charge_kwh"][0] == pytest.approx(10.0)
    assert o["battery_soc_kwh"][-1] == pytest.approx(100.0) and o["battery_soc_kwh"].max() <= 100.0
    assert o["battery_charge_kwh"].sum() == pytest.approx(100.0 / 0.9)
    # discharge never exceeds the site's load (no export): 8 kW load -> 2 kWh a step
    o = _kernel(HAND, 8.0, [40.0] * 2 + [-40.0] * 2)
    assert o["battery_discharge_kwh"][2:] == pytest.approx([2.0, 2.0])
    assert (o["grid_kwh"] >= 0.0).all()
    # self-discharge: 2 %/month keeps 0.98 ** (0.25 / 730) of the energy each idle step
    p = BatteryParams(capacity_mwh=0.1, power_mw=0.04, round_trip_eff=0.81)
    o = _kernel(p, 100.0, [40.0] + [0.0] * 96)
    keep = 0.98 ** (0.25 / 730.0)
    assert o["battery_soc_kwh"][-1] == pytest.approx(9.0 * keep ** 96, rel=1e-12)
    assert o["battery_soc_kwh"][-1] < 9.0
    # soc limits: 20-90 % of 100 kWh: starts at 20 kWh, never below it, never above 90
    p = BatteryParams(capacity_mwh=0.1, power_mw=0.04, round_trip_eff=0.81, self_discharge_per_month=0.0,
                      soc_min_frac=0.2, soc_max_frac=0.9)
    o = _kernel(p, 100.0, [40.0] * 12 + [-40.0] * 12)
    assert o["battery_soc_kwh"].max() == pytest.approx(90.0) and o["battery_soc_kwh"].min() == pytest.approx(20.0)
    assert o["battery_discharge_kwh"].sum() == pytest.approx(70.0 * 0.9)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    """The tiny 3-site bundle over two days of diurnal signals, its 8 tasks spread over 40 hours."""
    n = 8
    tasks = {"arrival_ts_utc": np.linspace(0, 3600 * 40, n), "duration_s": np.full(n, 2000.0),
             "cpu_cores": np.full(n, 4.0), "gpus": np.r_[np.zeros(n - 2), [0.5, 1.0]]}
    return sim_core.load(tiny_bundle(tmp_path_factory.mktemp("battery"), n_steps=192, tasks=tasks,
                                     signals=synthetic_signals(3, 192, seed=2)))


BAT = {"capacity_mwh": 0.02, "round_trip_eff": 0.81}


def test_a_run_on_a_hand_made_bundle_books_the_battery_by_hand(tiny):
    r = sim_core.run(tiny, "lowest_carbon", seed=1, battery=BAT)
    s = r.steps
    n_dc = tiny.n_dc
    n = s.height // n_dc
    total = s["total_kwh"].to_numpy().reshape(n_dc, n)
    carbon = s["carbon_g_per_kwh"].to_numpy().reshape(n_dc, n)
    tg = targets("carbon_quantile", tiny.carbon_g_per_kwh, tiny.price_usd_per_mwh, 0, n, np.full(n_dc, 5.0))
    # the rule by hand at one step: site 0, step 50: its value against the past day's quartiles
    w = tiny.carbon_g_per_kwh[0, 0:51]
    x = tiny.carbon_g_per_kwh[0, 50]
    want = 5.0 if x <= np.quantile(w, 0.25) else (-5.0 if x >= np.quantile(w, 0.75) else 0.0)
    assert tg[0, 50] == want
    assert (tg > 0).any() and (tg < 0).any()
    # the battery replayed in plain Python from the frame's own facility energy: 20 kWh, 5 kW, 0.9 each way
    eta = math.sqrt(0.81)
    keep = 0.98 ** (0.25 / 730.0)
    ch_col = s["battery_charge_kwh"].to_numpy().reshape(n_dc, n)
    dis_col = s["battery_discharge_kwh"].to_numpy().reshape(n_dc, n)
    for d in range(n_dc):
        e = 0.0
        for k in range(n):
            e *= keep
            ch = dis = 0.0
            if tg[d, k] > 0:
                ch = min(1.25, (20.0 - e) / eta)
                e += ch * eta
            elif tg[d, k] < 0:
                dis = min(1.25, total[d, k], e * eta)
                e -= dis / eta
            assert ch_col[d, k] == pytest.approx(ch, abs=1e-9)
            assert dis_col[d, k] == pytest.approx(dis, abs=1e-9)
    assert ch_col.sum() > 0 and dis_col.sum() > 0
    grid = total + ch_col - dis_col
    np.testing.assert_allclose(s["grid_kwh"].to_numpy().reshape(n_dc, n), grid, rtol=0, atol=1e-12)
    assert r.totals["carbon_kg"] == pytest.approx((grid * carbon).sum() / 1000.0, rel=1e-12)
    t = r.totals
    assert t["grid_kwh"] == pytest.approx(t["total_kwh"] + t["battery_charge_kwh"] - t["battery_discharge_kwh"])
    assert t["battery_degradation_usd"] == pytest.approx(t["battery_discharge_kwh"] / 1000.0 * 32.6)
    assert t["battery_embodied_carbon_kg"] == pytest.approx(t["battery_discharge_kwh"] * 3061.0 / 28.0 / 1e4)
    assert r.options["battery"]["capacity_mwh"] == 0.02 and r.options["battery_policy"] == "carbon_quantile"


def test_conservation_identities_include_the_battery(tiny):
    r = sim_core.run(tiny, "lowest_carbon", seed=1, battery=BAT)
    res = terms.residuals(r.steps, np.zeros(tiny.n_dc))
    assert set(res) == {"facility_power", "white_space_heat", "water", "grid_energy", "carbon", "cost", "storage"}
    assert max(res.values()) < 1e-12, res
    # the storage identity can fail: a wrong starting energy breaks it
    assert terms.residuals(r.steps, np.full(tiny.n_dc, 1.0))["storage"] > 0.1
    # without a battery the grid identity reads the facility's energy, and the battery's identity is absent
    res0 = terms.residuals(sim_core.run(tiny, "lowest_carbon", seed=1).steps)
    assert "storage" not in res0 and res0["grid_energy"] == 0.0 and res0["carbon"] < 1e-12


def test_battery_off_leaves_results_and_options_as_they_were(tiny):
    r0 = sim_core.run(tiny, "lowest_carbon", seed=1)
    r_zero = sim_core.run(tiny, "lowest_carbon", seed=1, battery={"capacity_mwh": 0.0})
    assert "battery" not in r0.options and "battery_policy" not in r0.options
    assert not any(c.startswith("battery_") or c == "grid_kwh" for c in r0.steps.columns)
    assert r_zero.steps.equals(r0.steps)
    assert {k: v for k, v in r_zero.totals.items()} == r0.totals
    # a battery that never moves: the same carbon and cost, bit for bit
    r_idle = sim_core.run(tiny, "lowest_carbon", seed=1, battery=BAT, battery_policy="idle")
    assert r_idle.totals["carbon_kg"] == r0.totals["carbon_kg"] and r_idle.totals["cost_usd"] == r0.totals["cost_usd"]


def test_a_python_policy_sets_targets_and_the_step_api_matches_the_run(tiny):
    def policy(obs):
        k = obs["step"]
        return 0 if k % 2 else None, None, (4.0 if (k // 8) % 2 == 0 else -4.0)

    sim = sim_core.Simulator(tiny, 1, battery=BAT)
    obs = sim.reset()
    assert obs["battery_soc_kwh"].tolist() == [0.0] * tiny.n_dc
    kg = usd = ch = 0.0
    while not sim.done:
        a, _, b = policy(obs)
        obs, info = sim.step(a, battery=b)
        kg += info["carbon_kg"].sum()
        usd += info["cost_usd"].sum()
        ch += info["battery_charge_kwh"].sum()
    res = sim.result()
    assert kg == pytest.approx(res.totals["carbon_kg"], rel=1e-12)
    assert usd == pytest.approx(res.totals["cost_usd"], rel=1e-12)
    assert ch == pytest.approx(res.totals["battery_charge_kwh"], rel=1e-12) and ch > 0
    # the same policy through sim_core.run: identical totals
    r = sim_core.run(tiny, policy, seed=1, battery=BAT)
    assert r.totals == res.totals


def test_bad_battery_parameters_and_targets_are_refused_by_name(tiny):
    with pytest.raises(BatteryParamError) as e:
        BatteryParams(capacity_mwh=10.0, round_trip_eff=1.2)
    assert e.value.name == "round_trip_eff" and "1.2" in str(e.value)
    with pytest.raises(BatteryParamError) as e:
        BatteryParams(capacity_mwh=10.0, soc_min_frac=0.9, soc_max_frac=0.5)
    assert e.value.name == "soc_min_frac"
    with pytest.raises(BatteryParamError) as e:
        BatteryParams(capacity_mwh=float("nan"))
    assert e.value.name == "capacity_mwh"
    with pytest.raises(BatteryParamError) as e:
        BatteryParams(capacity_mwh=10.0, power_mw=0.0)
    assert e.value.name == "power_mw"
    with pytest.raises(BatteryParamError) as e:
        BatteryParams.from_value({"capacity_mwh": 1.0, "chemistry": "LFP"})
    assert e.value.name == "chemistry"
    with pytest.raises(RunOptionsError, match=r"battery\.capacity_mwh"):
        sim_core.run(tiny, "lowest_carbon", battery={"capacity_mwh": -1.0})
    with pytest.raises(RunOptionsError, match="battery_policy"):
        sim_core.run(tiny, "lowest_carbon", battery=BAT, battery_policy="greenest")
    sim = sim_core.Simulator(tiny, 1)
    sim.reset()
    with pytest.raises(RunOptionsError, match="without batteries"):
        sim.step(None, battery=1.0)
    sim = sim_core.Simulator(tiny, 1, battery=BAT)
    sim.reset()
    with pytest.raises(RunOptionsError, match=r"battery\[1\]"):
        sim.step(None, battery=[1.0, float("inf"), 0.0])
    with pytest.raises(RunOptionsError, match="one per site"):
        sim.step(None, battery=[1.0, 2.0])
    assert sim.step_index == 0  # nothing half-done


def test_every_term_declares_registered_parameters_and_real_outputs(tiny):
    r = sim_core.run(tiny, "lowest_carbon", seed=1, battery=BAT)
    for t in terms.TERMS:
        assert t.outputs and all(o in r.steps.columns for o in t.outputs), t.name
        assert set(t.enters) <= {i.name for i in terms.IDENTITIES}
        if t.name != "network":
            assert t.ranges(), t.name
    assert set(terms.term("battery").ranges()) == set(terms.term("battery").params)


def test_the_optimum_includes_the_battery_and_stays_a_bound(tiny):
    from sim_core.optimum import optimum

    big = {"capacity_mwh": 0.05, "round_trip_eff": 0.81}
    without = optimum(tiny, seed=1, days=1)
    with_b = optimum(tiny, seed=1, days=1, battery=big)
    assert with_b.status == "Optimal"
    # more freedom can only lower the bound, and here it does (the signals swing 25 % over the day)
    assert with_b.value < without.value - 1e-9
    # the bound holds for the runs with that battery that meet every deadline
    checked = 0
    for pol in ("local_only", "lowest_carbon"):
        for rule in ("carbon_quantile", "idle"):
            t = sim_core.run(tiny, pol, seed=1, days=1, battery=big, battery_policy=rule).totals
            if t["sla_violations"] == 0:
                assert t["carbon_incl_transfer_kg"] >= with_b.value - 1e-9, (pol, rule)
                checked += 1
    assert checked >= 2
    # the reported energy is grid energy: it includes the battery's losses
    assert with_b.energy_kwh >= without.energy_kwh - 1e-6


def test_the_gym_env_takes_an_optional_battery_action(tiny):
    from sim_core.gym import TaskSchedulingEnv

    with pytest.raises(ValueError, match="battery run option"):
        TaskSchedulingEnv(tiny, single_action=True, battery_action=True, days=1)
    env = TaskSchedulingEnv(tiny, single_action=True, battery_action=True, days=1, battery=BAT)
    obs, _ = env.reset(seed=1)
    assert env.action_space.contains({"tasks": 1, "battery": np.full(3, 0.5, np.float32)})
    charged = 0.0
    for _ in range(8):
        obs, r, term, trunc, info = env.step({"tasks": 1, "battery": np.full(3, 1.0, np.float32)})
        charged += env.sim.prep.battery.last[B.O_CH].sum()
    assert charged == pytest.approx(8 * 3 * 1.25)  # 5 kW x 0.25 h, each site, each step
    with pytest.raises(ValueError, match="fractions"):
        env.step({"tasks": 1, "battery": np.full(3, 2.0)})
    # the vector environment's own jitted step has no battery: refused, not silently priced without it
    from sim_core.rl.vector import TaskSchedulingVectorEnv

    with pytest.raises(ValueError, match="no batteries"):
        TaskSchedulingVectorEnv(tiny, 2, days=1, battery=BAT)


def test_the_validation_cycle_returns_the_published_round_trip():
    """docs/validation.md's battery section: a full cycle returns round_trip_eff (no self-discharge) and a little
    less with the default 2 %/month; set to EIA's fleet figure it reproduces 0.82."""
    import sys
    from pathlib import Path

    sys.path.insert(0, str(Path(__file__).resolve().parents[3]))
    from benchmarks.battery_validation import round_trip

    assert round_trip(BatteryParams(capacity_mwh=100.0, self_discharge_per_month=0.0))[2] == pytest.approx(0.85,
                                                                                                           abs=1e-12)
    rt = round_trip(BatteryParams(capacity_mwh=100.0))[2]
    assert 0.849 < rt < 0.85
    assert round_trip(BatteryParams(capacity_mwh=100.0, round_trip_eff=0.82, self_discharge_per_month=0.0))[2] \
        == pytest.approx(0.82, abs=1e-12)
    assert round_trip(BatteryParams(capacity_mwh=100.0), idle_steps=48)[2] < rt


def test_the_rule_ranks_each_step_in_its_trailing_day_as_numpy_does():
    """The sliding sorted window of battery_rules gives numpy's quantiles: every step of 3 sites, a window that
    starts inside the bundle, and a flat stretch (ties: charging wins)."""
    from sim_core.policies.battery_rules import quantile_targets

    sig = np.ascontiguousarray(synthetic_signals(3, 1200, 4)["carbon_g_per_kwh"])
    sig[1, 500:700] = 300.0
    for s0, n in ((0, 1200), (150, 700)):
        out = np.zeros((3, n))
        quantile_targets(sig, s0, n, 96, 0.25, 0.75, np.array([1.0, 2.0, 3.0]), out)
        for d in range(3):
            for j in range(n):
                k = s0 + j
                w = sig[d, max(0, k - 95):k + 1]
                x = sig[d, k]
                want = 1.0 if x <= np.quantile(w, 0.25) else (-1.0 if x >= np.quantile(w, 0.75) else 0.0)
                assert out[d, j] == want * (d + 1.0), (s0, d, j)
    assert (out[1, 500 - 150 + 96:700 - 150] > 0).all()  # a flat day charges
