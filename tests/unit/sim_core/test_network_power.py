"""Network energy as a power model (sim_core.network_power): the fixed share's arithmetic, the exact
proportionality of transfer emissions to the marginal intensity (what lets one pair of runs give the saving at
any intensity), the break-even intensity, and refusals of bad parameters."""

from __future__ import annotations

import math

import numpy as np
import pytest

import sim_core
from sim_core import network_power as N
from sim_core.testing import reference_bundle


@pytest.fixture(scope="module")
def sc(tmp_path_factory):
    # 1,500 tasks over two days on the reference cluster at 5 % of its size: lowest_carbon moves ~1,200 of
    # them and saves ~17 % before transfers; local_only keeps every task home
    return sim_core.load(reference_bundle(tmp_path_factory.mktemp("np"), n_tasks=1500, n_steps=2 * 96, seed=5,
                                          capacity_scale=0.05, name="netpower"))


def _run(sc, policy, kwh):
    return sim_core.run(sc, policy, seed=0, transfer_kwh_per_gb=kwh)


def test_unit_conversion_and_presets():
    # 0.03 W per Mbps carried: 0.03 J per Mb, x 8,000 Mb/GB = 240 J/GB = 6.667e-5 kWh/GB
    assert N.w_per_mbps_to_kwh_per_gb(0.03) == pytest.approx(240.0 / 3.6e6, rel=1e-15)
    m = N.NETWORK_POWER_MODELS
    assert m["malmodin2020-baseload"].marginal_kwh_per_gb == 0.0
    assert m["malmodin2020-marginal"].marginal_kwh_per_gb == pytest.approx(6.6667e-5, rel=1e-4)
    assert all(x.baseload_w_per_mbps == 0.03 for x in m.values())
    assert m["malmodin2020-marginal"].run_options() == {"transfer_kwh_per_gb": 240.0 / 3.6e6}
    lo, hi = N.MARGINAL_KWH_PER_GB_RANGE
    assert lo == 0.0 and hi == 0.06


@pytest.mark.parametrize("field,value", [("baseload_w_per_mbps", -0.01), ("marginal_kwh_per_gb", float("nan")),
                                         ("marginal_kwh_per_gb", math.inf), ("baseload_w_per_mbps", "0.03")])
def test_bad_model_refused_by_name(field, value):
    kw = {"baseload_w_per_mbps": 0.03, "marginal_kwh_per_gb": 0.0, field: value}
    with pytest.raises(ValueError, match=f"'bad'.*{field}"):
        N.NetworkPowerModel("bad", source="test", **kw)


def test_fixed_share_by_hand(sc):
    m = N.NETWORK_POWER_MODELS["malmodin2020-baseload"]
    kwh, kg = N.fixed_kwh(sc, m, 10, 20)
    thr, ci = sc.throughput_mbps, sc.carbon_g_per_kwh[:, 10:30]
    exp_kwh = exp_kg = 0.0
    for i in range(sc.n_dc):
        for j in range(sc.n_dc):
            if i != j:
                exp_kwh += 0.03 * thr[i, j] / 1000 * 0.25 * 20
                exp_kg += sum(0.03 * thr[i, j] / 1000 * 0.25 * (ci[i, s] + ci[j, s]) / 2 / 1000 for s in range(20))
    assert kwh == pytest.approx(exp_kwh, rel=1e-12) and kwh > 0
    assert kg == pytest.approx(exp_kg, rel=1e-12) and kg > 0
    # the capacity: every ordered pair of distinct sites once (the diagonal is infinite in a loaded scenario)
    off = ~np.eye(sc.n_dc, dtype=bool)
    assert N.path_capacity_mbps(sc) == pytest.approx(float(thr[off].sum()))
    with pytest.raises(ValueError, match="outside bundle"):
        N.fixed_kwh(sc, m, sc.n_steps - 5, 10)


def test_transfer_emissions_are_proportional_and_the_saving_extrapolates(sc):
    """Runs at 0.00375 and 0.06 kWh/GB: the same work carbon and decisions, transfer emissions x 16 exactly;
    the saving predicted from the first pair equals the saving of the runs at 0.06 and at 0."""
    k1, k2 = 0.00375, 0.06
    b1, p1 = _run(sc, "local_only", k1).totals, _run(sc, "lowest_carbon", k1).totals
    b2, p2 = _run(sc, "local_only", k2).totals, _run(sc, "lowest_carbon", k2).totals
    b0, p0 = _run(sc, "local_only", 0.0).totals, _run(sc, "lowest_carbon", 0.0).totals
    assert p1["tasks_remote"] > b1["tasks_remote"] and p1["transfer_carbon_kg"] > b1["transfer_carbon_kg"]
    for one, two in ((b1, b2), (p1, p2)):
        assert one["tasks_remote"] == two["tasks_remote"] and one["carbon_kg_equal_work"] == two["carbon_kg_equal_work"]
        assert two["transfer_kwh"] == pytest.approx(one["transfer_kwh"] * (k2 / k1), rel=1e-12)
        assert two["transfer_carbon_kg"] == pytest.approx(one["transfer_carbon_kg"] * (k2 / k1), rel=1e-12)
    for k, b, p in ((k2, b2, p2), (0.0, b0, p0)):
        real = 100 * (b["carbon_incl_transfer_kg"] - p["carbon_incl_transfer_kg"]) / b["carbon_incl_transfer_kg"]
        assert N.saving_at(b1, p1, k1, k) == pytest.approx(real, abs=1e-9)
    # the break-even: the saving there is zero, on either side its sign differs
    be = N.break_even_kwh_per_gb(b1, p1, k1)
    assert N.saving_at(b1, p1, k1, 0.0) > 0 and 0 < be < math.inf
    assert N.saving_at(b1, p1, k1, be) == pytest.approx(0.0, abs=1e-9)
    assert N.saving_at(b1, p1, k1, 0.5 * be) > 0 > N.saving_at(b1, p1, k1, 2 * be)
    # the fixed share dilutes the saving and never flips it
    _, fkg = N.fixed_kwh(sc, N.NETWORK_POWER_MODELS["malmodin2020-baseload"], 0, sc.n_steps)
    for k in (0.0, k1, k2):
        plain, diluted = N.saving_at(b1, p1, k1, k), N.saving_at(b1, p1, k1, k, fixed_kg=fkg)
        assert np.sign(plain) == np.sign(diluted) and abs(diluted) < abs(plain)


def test_break_even_edge_cases():
    t = {"carbon_incl_transfer_kg": 100.0, "transfer_carbon_kg": 0.0}
    moved = {"carbon_incl_transfer_kg": 95.0, "transfer_carbon_kg": 5.0}  # work 90: saves 10 before transfers
    assert N.break_even_kwh_per_gb(t, moved, 0.01) == pytest.approx(10.0 / 500.0)
    assert N.break_even_kwh_per_gb(t, {"carbon_incl_transfer_kg": 90.0, "transfer_carbon_kg": 0.0}, 0.01) == math.inf
    assert math.isnan(N.break_even_kwh_per_gb(t, {"carbon_incl_transfer_kg": 110.0, "transfer_carbon_kg": 5.0}, 0.01))
    with pytest.raises(ValueError, match="0 kWh/GB"):
        N.break_even_kwh_per_gb(t, moved, 0.0)
