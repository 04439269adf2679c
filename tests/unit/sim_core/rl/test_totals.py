"""Per-step results of the step API summed over a run equal the run totals (same seed, actions)."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

import sim_core
from sim_core.gym import TaskSchedulingEnv
from sim_core.options import TRANSFER_KWH_PER_GB
from sim_core.rl.reward import Reward
from sim_core.transfer import transfer_one

COMPONENTS = {  # reward component -> run total
    "energy_cost": "cost_usd", "carbon_emissions": "carbon_kg", "energy": "total_kwh",
    "transfer_cost": "transfer_cost_usd", "transfer_emissions": "transfer_carbon_kg",
    "sla_penalty": "sla_violations", "water": "water_l",
}
RTOL = 1e-9


def drive(sc, policy, seed, **kw):
    sim = sim_core.Simulator(sc, seed, **kw)
    sim.reset()
    reward = Reward({k: 1.0 for k in COMPONENTS})
    acc = dict.fromkeys(COMPONENTS, 0.0)
    per_step = []
    while not sim.done:
        o = sim.step_fast(sim.builtin_actions(policy))
        _, raw = reward.evaluate(o)
        for k, v in raw.items():
            acc[k] += v
        per_step.append((o.step, o.dc.copy(), o.xfer.copy()))
    return sim, acc, per_step


@pytest.mark.parametrize("kw", [{}, {"transfer_emissions": "mean"}, {"transfer_kwh_per_gb": 0.11},
                                {"start": 20, "steps": 60}])
def test_step_components_sum_to_run_totals(busy, kw):
    sim, acc, _ = drive(busy, "lowest_carbon", 3, **kw)
    res = sim_core.run(busy, "lowest_carbon", seed=3, **kw)
    t = res.totals
    # the case must exercise every component
    assert t["tasks_remote"] > 50 and t["sla_violations"] > 10 and t["transfer_carbon_kg"] > 0
    for comp, total in COMPONENTS.items():
        np.testing.assert_allclose(acc[comp], t[total], rtol=RTOL, err_msg=comp)
    # and the step-driven run is the same run
    assert sim.result().totals == t


def test_per_step_values_match_the_steps_frame(busy):
    _, _, per_step = drive(busy, "lowest_carbon", 1)
    res = sim_core.run(busy, "lowest_carbon", seed=1)
    st = res.steps.sort(["dc", "step"])
    n_dc = busy.n_dc
    from sim_core.physics import STEP_DC_NAMES
    from sim_core.transfer import STEP_XFER_NAMES
    steps = np.array([k for k, _, _ in per_step])
    dc = np.stack([d for _, d, _ in per_step], axis=2)  # (fields, n_dc, n)
    x = np.stack([v for _, _, v in per_step], axis=1)  # (fields, n)
    assert steps.tolist() == list(range(96))
    for name in ("total_kwh", "it_kwh", "cost_usd", "carbon_kg", "water_l", "busy_cores", "busy_gpus"):
        want = st[name].to_numpy().reshape(n_dc, -1)
        # the very same arithmetic on the very same inputs: bit-identical
        np.testing.assert_array_equal(dc[STEP_DC_NAMES.index(name)], want, err_msg=name)
    by_step = st.group_by("step").agg(pl.col("transfer_cost_usd").sum(), pl.col("transfer_carbon_kg").sum(),
                                      pl.col("sla_violations").sum(), pl.col("transfers_out").sum(),
                                      pl.col("started").sum()).sort("step")
    for name, col in (("transfer_cost_usd", "transfer_cost_usd"), ("transfer_carbon_kg", "transfer_carbon_kg"),
                      ("sla_violations", "sla_violations"), ("transfers", "transfers_out"),
                      ("tasks_started", "started")):
        np.testing.assert_allclose(x[STEP_XFER_NAMES.index(name)], by_step[col].to_numpy(), rtol=1e-12, atol=1e-12,
                                   err_msg=name)
    assert x[STEP_XFER_NAMES.index("sla_violations")].sum() > 10


def test_step_info_dict_has_transfer_and_sla(busy):
    sim = sim_core.Simulator(busy, 0)
    sim.reset()
    seen = dict(transfer_cost_usd=0.0, sla_violations=0, transfers=0)
    while not sim.done:
        _, info = sim.step(sim.builtin_actions("lowest_carbon"))
        assert isinstance(info["sla_violations"], int) and info["cost_usd"].shape == (busy.n_dc,)
        for k in seen:
            seen[k] += info[k]
    t = sim_core.run(busy, "lowest_carbon", seed=0).totals
    assert seen["sla_violations"] == t["sla_violations"] and seen["transfers"] == t["tasks_remote"]
    np.testing.assert_allclose(seen["transfer_cost_usd"], t["transfer_cost_usd"], rtol=RTOL)


def test_env_info_components_sum_to_run_totals(busy):
    env = TaskSchedulingEnv(busy, reward={k: 1.0 for k in COMPONENTS}, seed=2)
    obs, _ = env.reset()
    acc = dict.fromkeys(COMPONENTS, 0.0)
    done = False
    while not done:
        obs, r, done, _, info = env.step(env.baseline_action("lowest_carbon"))
        for k, v in info["components"].items():
            acc[k] += v
    t = sim_core.run(busy, "lowest_carbon", seed=2).totals
    for comp, total in COMPONENTS.items():
        np.testing.assert_allclose(acc[comp], t[total], rtol=RTOL, err_msg=comp)


def test_transfer_rule_matches_result_rows(busy):
    """``transfer_one`` applied to each remote task reproduces the run's per-task transfer rows exactly."""
    for basis in ("origin", "mean"):
        res = sim_core.run(busy, "lowest_carbon", seed=0, transfer_emissions=basis)
        tr = res.transfers
        assert tr.height > 50
        loc = {name: i for i, name in enumerate(busy.locations)}
        step = ((tr["decision_ts_utc"].dt.epoch("us").to_numpy() // 1_000_000
                 - int(busy.start_utc.timestamp())) // 900)
        for r, row in enumerate(tr.iter_rows(named=True)):
            o, d, k = loc[row["src_location"]], loc[row["dst_location"]], int(step[r])
            want = transfer_one(row["bandwidth_gb"], busy.usd_per_gb[o, d], TRANSFER_KWH_PER_GB,
                                busy.carbon_g_per_kwh[o, k], busy.carbon_g_per_kwh[d, k], basis == "mean")
            assert (row["cost_usd"], row["energy_kwh"], row["carbon_kg"]) == want
        remote = res.tasks["remote"].to_numpy()
        np.testing.assert_array_equal(res.tasks["transfer_cost_usd"].to_numpy()[remote], tr["cost_usd"].to_numpy())


@pytest.mark.parametrize("lo, hi", [(0, 0), (0, 1), (3, 5), (0, 8), (1, 9), (5, 2060), (7, 4099), (0, 4103),
                                    (4096, 4103)])
def test_sum_flags_matches_numpy(lo, hi):
    from sim_core.transfer import sum_flags

    v = (np.random.default_rng(lo + hi).random(4103) < 0.7).astype(np.int8)
    v[: lo] = 1  # outside the range: must not count
    assert sum_flags(v, lo, hi) == int(v[lo:hi].sum())
    ones = np.ones(5000, np.int8)  # > 255 words of all-ones: the per-byte folding must not overflow
    assert sum_flags(ones, 3, 4999) == 4996


def test_step_physics_breakdown_matches_outcome(busy):
    sim = sim_core.Simulator(busy, 0)
    sim.reset()
    with pytest.raises(ValueError, match="has not run"):
        sim.step_physics(0)
    for _ in range(30):
        o = sim.step_fast(sim.builtin_actions("lowest_carbon"))
    ph = sim.step_physics()
    np.testing.assert_array_equal(ph["total_kw"] * 0.25, o.per_dc("total_kwh"))
    np.testing.assert_array_equal(ph["water_l"], o.per_dc("water_l"))
    parts = sum(ph[k] for k in ("it_kw", "crac_fan_kw", "chiller_kw", "tower_fan_kw", "chw_pump_kw", "cw_pump_kw",
                                "lighting_kw", "ups_loss_kw", "transformer_loss_kw"))
    np.testing.assert_allclose(parts, ph["total_kw"], rtol=1e-12)
    assert o.step == 29 and o["busy_cores"] > 0


def test_default_reward_charges_a_policy_that_moves_data_for_the_move(busy):
    """Every task sent to CC (most originate elsewhere): the default reward's episode sum is minus every cost
    the totals report, egress and transfer emissions included, each at its stated weight and norm."""
    from sim_core.rl.reward import DEFAULT_REWARD, KG_NORM, USD_NORM

    env = TaskSchedulingEnv(busy, single_action=True, seed=2)
    assert env.reward.to_config()["components"] == DEFAULT_REWARD
    env.reset(seed=2)
    total, raw_sum, terminated = 0.0, dict.fromkeys(DEFAULT_REWARD, 0.0), False
    while not terminated:
        _, r, terminated, _, info = env.step(3)
        total += r
        for k, v in info["components"].items():
            raw_sum[k] += v
    t = env.result().totals
    assert t["transfer_cost_usd"] > 1.0 and t["transfer_carbon_kg"] > 0.1  # the policy moves data
    moving = t["transfer_cost_usd"] / USD_NORM + t["transfer_carbon_kg"] / KG_NORM
    want = -(t["cost_usd"] / USD_NORM + t["carbon_kg"] / KG_NORM + t["sla_violations"] + t["water_l"] / 500.0) - moving
    np.testing.assert_allclose(total, want, rtol=RTOL)
    np.testing.assert_allclose(raw_sum["transfer_cost"], t["transfer_cost_usd"], rtol=RTOL)
    np.testing.assert_allclose(raw_sum["transfer_emissions"], t["transfer_carbon_kg"], rtol=RTOL)
    # without the transfer terms the same episode would score better by exactly what the moves cost
    no_move = Reward({k: v for k, v in DEFAULT_REWARD.items() if not k.startswith("transfer_")})
    env2 = TaskSchedulingEnv(busy, single_action=True, seed=2, reward=no_move)
    env2.reset(seed=2)
    total2, terminated = 0.0, False
    while not terminated:
        _, r, terminated, _, _ = env2.step(3)
        total2 += r
    np.testing.assert_allclose(total2 - total, moving, rtol=1e-9)
