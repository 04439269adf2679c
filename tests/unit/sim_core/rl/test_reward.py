"""Reward components, configuration, registry, errors and the MASAC utility (hand-computed)."""

from __future__ import annotations

import inspect

import numpy as np
import pytest

from sim_core.outcome import StepOutcome
from sim_core.rl.reward import (
    MASAC_DEFAULTS,
    REGISTRY,
    Reward,
    RewardConfigError,
    masac_terms,
    register_component,
    unregister_component,
)

BUILTINS = ("energy_cost", "carbon_emissions", "energy", "transfer_cost", "transfer_emissions", "sla_penalty",
            "water", "masac_utility")


def outcome(**kw):
    vals = dict(cost_usd=[1.5, 2.5], carbon_kg=[10.0, 30.0], total_kwh=[100.0, 28.0], water_l=[7.0, 9.0],
                busy_gpus=[10.0, 6.0], idle_gpus=[6.0, 2.0], transfer_cost_usd=0.5, transfer_kwh=1.5,
                transfer_carbon_kg=0.25, transfer_gb=5.0, sla_violations=2)
    vals.update(kw)
    return StepOutcome.from_values(2, cap_gpus=[16, 8], **vals)


def test_builtin_raw_values():
    o = outcome()
    r = Reward({n: 1.0 for n in BUILTINS[:-1]})
    _, raw = r.evaluate(o)
    assert raw == {"energy_cost": 4.0, "carbon_emissions": 40.0, "energy": 128.0, "transfer_cost": 0.5,
                   "transfer_emissions": 0.25, "sla_penalty": 2.0, "water": 16.0}
    assert set(BUILTINS) <= set(REGISTRY)


def test_weighted_normalised_sum_exact():
    o = outcome()
    r = Reward({"energy_cost": {"weight": 2.0, "norm": 4.0},       # 2 * 4 / 4 = 2
                "carbon_emissions": {"weight": 0.5, "norm": 10.0},  # 0.5 * 40 / 10 = 2
                "sla_penalty": 3,                                   # 3 * 2 / 1 (default norm) = 6
                "water": {"weight": 1.0, "norm": 8.0}})             # 16 / 8 = 2
    assert r(o) == -12.0
    val, raw = r.evaluate(o)
    assert val == -12.0 and raw["water"] == 16.0
    # zero weight removes a term; a negative weight turns a cost into a bonus
    assert Reward({"energy_cost": 0.0})(o) == 0.0
    assert Reward({"energy_cost": {"weight": -1.0, "norm": 2.0}})(o) == 2.0


def test_default_norms_are_used_and_positive():
    o = outcome()
    for name in BUILTINS:
        spec = REGISTRY[name]
        assert spec.norm > 0
    n = REGISTRY["energy_cost"].norm
    assert Reward({"energy_cost": 1.0})(o) == pytest.approx(-4.0 / n, rel=1e-15)


YAML = """
reward:
  components:
    energy_cost: {weight: 2.0, norm: 4.0}
    carbon_emissions:
      weight: 0.5
      norm: 10.0
    sla_penalty: 3
"""


def test_config_dict_yaml_text_and_file_agree(tmp_path):
    d = {"components": {"energy_cost": {"weight": 2.0, "norm": 4.0},
                        "carbon_emissions": {"weight": 0.5, "norm": 10.0}, "sla_penalty": 3}}
    f = tmp_path / "reward.yaml"
    f.write_text(YAML)
    o = outcome()
    rs = [Reward.from_config(d), Reward.from_config(YAML), Reward.from_config(f), Reward.from_config(str(f)),
          Reward(d["components"])]
    for r in rs:
        assert r(o) == -10.0
        assert r.to_config() == rs[0].to_config()
    assert rs[0].names == ("energy_cost", "carbon_emissions", "sla_penalty")
    # round trip
    assert Reward.from_config(rs[0].to_config())(o) == -10.0


def test_custom_component_registration():
    try:
        @register_component("gpu_hours_test", kind="benefit", unit="GPU-h", norm=2.0)
        def gpu_hours_test(o, scale=1.0):
            """Busy GPU-hours."""
            return scale * o["busy_gpus"] * 0.25

        assert REGISTRY["gpu_hours_test"].kind == "benefit" and REGISTRY["gpu_hours_test"].params == {"scale": 1.0}
        o = outcome()
        # benefit: + w * v / norm = 1 * 4 / 2
        assert Reward({"gpu_hours_test": 1.0})(o) == 2.0
        r = Reward({"gpu_hours_test": {"weight": 1.0, "params": {"scale": 3.0}}, "energy_cost": {"norm": 1.0}})
        assert r(o) == 6.0 - 4.0
        assert r.evaluate(o)[1] == {"gpu_hours_test": 12.0, "energy_cost": 4.0}
        with pytest.raises(ValueError, match="already registered"):
            register_component("gpu_hours_test")(lambda o: 0.0)
        register_component("gpu_hours_test", replace=True)(lambda o: 7.0)
        assert Reward({"gpu_hours_test": 1.0})(o) == -7.0  # default kind: cost
        with pytest.raises(ValueError, match="kind"):
            register_component("x_test", kind="gain")
        with pytest.raises(RewardConfigError, match="norm"):
            register_component("y_test", norm=0.0)(lambda o: 0.0)
    finally:
        unregister_component("gpu_hours_test")
    assert "gpu_hours_test" not in REGISTRY


@pytest.mark.parametrize("cfg, match", [
    ({"energy_costs": 1.0}, "unknown reward component 'energy_costs'"),
    ({"energy_cost": {"norm": 0.0}}, "norm must be a positive"),
    ({"energy_cost": {"norm": -2.0}}, "norm must be a positive"),
    ({"energy_cost": {"norm": float("nan")}}, "norm must be a positive"),
    ({"energy_cost": {"norm": "big"}}, "norm must be a positive"),
    ({"energy_cost": {"weight": "heavy"}}, "weight must be a finite number"),
    ({"energy_cost": {"weight": float("inf")}}, "weight must be a finite number"),
    ({"energy_cost": {"wieght": 1.0}}, "unknown keys"),
    ({"masac_utility": {"params": {"revenue": 3.0}}}, "unknown params"),
    ({"components": {"energy_cost": 1.0}, "extra": 1}, "unknown keys"),
    ({}, "no components"),
    ("energy_cost: [1, 2", "invalid YAML"),
    ("- energy_cost\n- water\n", "must be a mapping"),
    ("energy_cost: {norm: -1}\n", "norm must be a positive"),
])
def test_config_errors(cfg, match):
    with pytest.raises(RewardConfigError, match=match):
        Reward.from_config(cfg)


def test_missing_yaml_file(tmp_path):
    with pytest.raises(RewardConfigError, match="cannot read"):
        Reward.from_config(tmp_path / "nope.yaml")


def test_unknown_error_lists_registered_components():
    with pytest.raises(RewardConfigError) as e:
        Reward({"carbon": 1.0})
    assert "carbon_emissions" in str(e.value) and "masac_utility" in str(e.value)


def test_outcome_names():
    o = outcome()
    assert o["idle_gpus"] == 8.0 and o.per_dc("busy_gpus").tolist() == [10.0, 6.0]
    with pytest.raises(KeyError, match="unknown step metric"):
        o["cost"]
    with pytest.raises(KeyError):
        o.per_dc("transfer_cost_usd")
    with pytest.raises(KeyError):
        StepOutcome.from_values(2, bogus=1.0)


def test_masac_utility_hand_computed():
    """Every term of the paper's Eqs. 2-7 by hand, with Table I's alpha 0.05 USD/GPU-h, mu 100 USD/t, beta 10 %."""
    o = outcome(it_kwh=[80.0, 20.0], transfers=2)
    # site 0: eta 100/80 = 1.25, P 1.5/100 = 0.015 USD/kWh, I 10/100 = 0.1 kg/kWh; busy 10, idle 6 GPUs
    # site 1: eta 28/20 = 1.4,  P 2.5/28 USD/kWh,          I 30/28 kg/kWh;         busy 6, idle 2 GPUs
    t = masac_terms(o)
    assert t["revenue"] == pytest.approx(0.05 * 16 * 0.25, rel=1e-14)  # 0.2
    assert t["energy_cost"] == pytest.approx(1.25 * 0.3 * 0.015 * 10 * 0.25 + 1.4 * 0.3 * 2.5 / 28 * 6 * 0.25,
                                             rel=1e-14)  # 0.0140625 + 0.05625
    assert t["gpu_profit"] == pytest.approx(0.2 - 0.0703125, rel=1e-14)  # U1
    assert t["idle_cost"] == pytest.approx(0.00084375 + 0.001875, rel=1e-13)  # U2 = eta beta rho idle P h
    assert t["carbon_cost"] == pytest.approx(0.0099375 + 0.06975, rel=1e-13)  # U3 = mu eta rho (busy + beta idle) h I
    assert t["migration_cost"] == pytest.approx(0.5 + 100 * 0.25 / 1000, rel=1e-14)  # U4: egress + mu o
    # U5: 2 remote jobs x 4.27 GB x (0.5 USD / 5 GB + 100 USD/t x 0.25 kg / 5 GB)
    assert t["retrieval_cost"] == pytest.approx(2 * 4.27 * (0.1 + 0.005), rel=1e-14)
    u = 0.1296875 - 0.00271875 - 0.0796875 - 0.525 - 0.8967
    assert t["utility"] == pytest.approx(u, rel=1e-12)
    p = dict(revenue_usd_per_gpu_h=2.0, carbon_usd_per_t=50.0, idle_power_ratio=0.5, gpu_kw=1.0, pue=1.5,
             result_gb=1.0, migration_usd_per_gb=0.2, include_transfer_carbon=False)
    t2 = masac_terms(o, **p)
    assert t2["idle_cost"] == pytest.approx(1.5 * 0.5 * 1.0 * 0.25 * (6 * 0.015 + 2 * 2.5 / 28), rel=1e-13)
    assert t2["carbon_cost"] == pytest.approx(50 * 1.5 * 0.25 * ((10 + 3) * 0.1 + (6 + 1) * 30 / 28) / 1000,
                                              rel=1e-13)
    assert t2["migration_cost"] == pytest.approx(0.2 * 5.0, rel=1e-14)  # no transfer carbon
    assert t2["retrieval_cost"] == pytest.approx(2 * 1.0 * 0.2, rel=1e-14)
    # as a benefit term of a Reward: + w * U / norm
    r = Reward({"masac_utility": {"weight": 2.0, "norm": 10.0, "params": p}})
    assert r(o) == pytest.approx(2.0 * t2["utility"] / 10.0, rel=1e-14)
    assert r.evaluate(o)[1]["masac_utility"] == pytest.approx(t2["utility"], rel=1e-14)


def test_masac_utility_without_energy_or_transfers():
    """A site that drew no energy has no price or intensity to read (its energy terms are 0, not NaN); a step
    without transfers has no migration or retrieval cost; more revenue per GPU-hour raises the utility exactly."""
    o = outcome(it_kwh=[0.0, 20.0], total_kwh=[0.0, 28.0], cost_usd=[0.0, 2.5], carbon_kg=[0.0, 30.0],
                transfer_cost_usd=0.0, transfer_carbon_kg=0.0, transfer_gb=0.0, transfers=0)
    t = masac_terms(o)
    assert all(np.isfinite(v) for v in t.values())
    assert t["migration_cost"] == 0.0 and t["retrieval_cost"] == 0.0
    assert t["energy_cost"] == pytest.approx(1.4 * 0.3 * 2.5 / 28 * 6 * 0.25, rel=1e-14)  # site 0 adds nothing
    assert masac_terms(o, revenue_usd_per_gpu_h=1.05)["utility"] - t["utility"] == pytest.approx(16 * 0.25,
                                                                                                 rel=1e-12)


@pytest.mark.parametrize("params, name", [({"idle_power_ratio": 1.5}, "idle_power_ratio"),
                                          ({"gpu_kw": -0.3}, "gpu_kw"), ({"pue": 0.9}, "pue"),
                                          ({"result_gb": float("nan")}, "result_gb")])
def test_masac_paper_parameters_are_range_checked(params, name):
    with pytest.raises(RewardConfigError, match=name):
        Reward({"masac_utility": {"params": params}})


def test_masac_defaults_are_the_documented_ones():
    for fn in (masac_terms, REGISTRY["masac_utility"].fn):
        sig = inspect.signature(fn)
        defaults = {k: v.default for k, v in sig.parameters.items() if k != "o"}
        assert defaults == MASAC_DEFAULTS
    assert REGISTRY["masac_utility"].kind == "benefit"
    assert np.isfinite(Reward({"masac_utility": 1.0})(outcome()))
