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
    o = outcome()
    # busy GPUs 16 -> 4 GPU-h; idle GPUs 8 -> 2 GPU-h; cost 4 USD; DC carbon 40 kg + transfer 0.25 kg
    t = masac_terms(o)
    assert t["revenue"] == 2.0 * 4.0
    assert t["idle_cost"] == 0.5 * 2.0
    assert t["energy_cost"] == 4.0
    assert t["carbon_cost"] == pytest.approx(85.0 * 40.25 / 1000.0, rel=1e-15)
    assert t["migration_cost"] == 0.5  # the bundle's egress USD by default
    assert t["utility"] == pytest.approx(8.0 - 4.0 - 1.0 - 3.42125 - 0.5, rel=1e-14)
    p = dict(revenue_usd_per_gpu_h=10.0, idle_usd_per_gpu_h=1.0, carbon_usd_per_t=100.0, migration_usd_per_gb=0.2,
             include_transfer_carbon=False)
    u = masac_terms(o, **p)["utility"]
    assert u == pytest.approx(40.0 - 4.0 - 2.0 - 4.0 - 1.0, rel=1e-14)  # 29
    # as a benefit term of a Reward: + w * U / norm
    r = Reward({"masac_utility": {"weight": 2.0, "norm": 10.0, "params": p}})
    assert r(o) == pytest.approx(2.0 * 29.0 / 10.0, rel=1e-14)
    assert r.evaluate(o)[1]["masac_utility"] == pytest.approx(29.0, rel=1e-14)


def test_masac_defaults_are_the_documented_ones():
    for fn in (masac_terms, REGISTRY["masac_utility"].fn):
        sig = inspect.signature(fn)
        defaults = {k: v.default for k, v in sig.parameters.items() if k != "o"}
        assert defaults == MASAC_DEFAULTS
    assert REGISTRY["masac_utility"].kind == "benefit"
    assert np.isfinite(Reward({"masac_utility": 1.0})(outcome()))
