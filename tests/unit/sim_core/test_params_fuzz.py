"""Hostile physics parameters: every DatacenterParams field fuzzed with 0, -1, tiny, huge, NaN, inf and a wrong
type is either refused by name (the error names the field and its declared range) or gives finite,
non-negative energy that is conserved, on every heat-rejection type and power mode.

The physics kernel runs on a small grid of loads, weather and server states (``physics.compute``: the same
``dc_step`` the engine's results use), so the ~550 pairs take seconds; one small full run per condenser type
checks a representative subset of the admitted extremes end to end. Conservation as in test_physics.py."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import sim_core
from gridshift.dc_params import AIR_ECONOMIZER_TYPES, CONDENSER_TYPES, PARAM_RANGES, DatacenterParams, ParamError
from gridshift.wetbulb import stull_wetbulb
from sim_core import physics as ph
from sim_core.testing import tiny_bundle

HOSTILE = (0, -1.0, 1e-300, 1e300, math.nan, math.inf, "7")
FIELDS = tuple(f.name for f in dataclasses.fields(DatacenterParams))
NUMERIC = DatacenterParams.numeric_fields()
#: (cores, GPUs, GB): a GPU site, a CPU site, a small site without GPUs
CAPS = np.array([[50000.0, 1000.0, 80000.0], [110000.0, 300.0, 60000.0], [6400.0, 0.0, 1000.0]])
UTIL = (0.0, 0.37, 1.0)
TEMPS = (-10.0, 18.0, 30.0, 40.0)  # (30: outside air evaporatively cooled, the plant trimming)
#: every power output (kW) and water output (L) must be >= 0
NON_NEGATIVE = ("it_cpu_kw", "it_gpu_kw", "it_mem_kw", "it_fan_kw", "it_kw", "crac_fan_kw", "chiller_kw",
                "tower_fan_kw", "chw_pump_kw", "cw_pump_kw", "total_kw", "cooling_load_kw", "unmet_cooling_kw",
                "heat_rejected_kw", "water_evap_l", "water_drift_l", "water_blowdown_l", "water_l", "econ_kw",
                "chiller_load_kw", "it_idle_kw", "it_sleep_kw", "it_wake_kw", "server_airflow_m3_s",
                "crac_airflow_m3_s", "ups_loss_kw", "transformer_loss_kw", "lighting_kw", "air_econ_kw",
                "air_econ_frac", "air_econ_water_l")


def build(name: str, value, condenser: str, air: str) -> DatacenterParams | ParamError:
    """The parameters with one field set (and the heat rejection and air-side economizer), or the refusal."""
    kw = {k: v for k, v in (("condenser", condenser), ("air_economizer", air)) if k != name}
    try:
        return DatacenterParams(**kw, **{name: value})
    except ParamError as exc:
        return exc


def assert_named_refusal(exc: BaseException, names) -> None:
    """A refusal is a ParamError (ValueError; ParamTypeError also a TypeError) whose message names a field set."""
    assert isinstance(exc, ParamError), repr(exc)
    assert any(n in str(exc) for n in names), (names, str(exc))


def assert_conserved(p: DatacenterParams, r: dict[str, np.ndarray], where: str) -> None:
    """Finite, non-negative, conserved: the laws of test_physics.test_conservation_every_point over arrays."""
    for k, v in r.items():
        assert np.all(np.isfinite(v)), (where, k, v)
    for k in NON_NEGATIVE:
        assert np.all(r[k] >= 0.0), (where, k, r[k].min())

    def close(a, b, what):
        if not np.size(b):
            return
        np.testing.assert_allclose(a, b, rtol=1e-9, atol=1e-9 * (1.0 + float(np.max(np.abs(b)))),
                                   err_msg=f"{where}: {what}")

    close(r["cooling_load_kw"], r["it_kw"] + r["crac_fan_kw"] + r["lighting_kw"],
          "cooling load = IT + CRAC fans + lighting")
    close(r["it_kw"], r["it_cpu_kw"] + r["it_gpu_kw"] + r["it_mem_kw"] + r["it_fan_kw"], "IT = its parts")
    close(r["total_kw"], r["it_kw"] + r["crac_fan_kw"] + r["chiller_kw"] + r["tower_fan_kw"] + r["chw_pump_kw"]
          + r["cw_pump_kw"] + r["ups_loss_kw"] + r["transformer_loss_kw"] + r["lighting_kw"], "total = its parts")
    close(r["cooling_load_kw"], r["air_econ_kw"] + r["econ_kw"] + r["chiller_load_kw"],
          "cooling = outside air + water-side economizer + chiller load")
    close(r["water_l"], r["water_evap_l"] + r["water_drift_l"] + r["water_blowdown_l"] + r["air_econ_water_l"],
          "water = tower / pads + outside-air evaporation and humidification")
    met = r["cooling_load_kw"] - r["air_econ_kw"] - r["unmet_cooling_kw"]
    close(r["heat_rejected_kw"], met + r["chiller_kw"], "heat rejected = met load + chiller work")
    rho_cp = p.air_density_kg_m3 * p.air_cp_j_per_kg_k
    close(rho_cp * r["crac_airflow_m3_s"] * (r["t_return_c"] - p.supply_air_c) / 1000.0, r["it_kw"],
          "the CRAC airflow carries the IT heat")
    fans = r["server_airflow_m3_s"] > 0.0
    close((rho_cp * r["server_airflow_m3_s"] * (r["t_outlet_c"] - r["t_inlet_c"]) / 1000.0)[fans],
          r["it_kw"][fans], "the server airflow carries the IT heat")


def run_kernel(p: DatacenterParams) -> list[tuple[str, dict[str, np.ndarray]]]:
    """The physics over CAPS x UTIL x TEMPS, always-on and managed (half on, a quarter waking; all asleep)."""
    pv = np.tile(ph.param_vector(p), (len(CAPS), 1))
    u = np.array([x for x in UTIL for _ in TEMPS])
    t = np.array([x for _ in UTIL for x in TEMPS])
    wb = np.array([float(stull_wetbulb(x, 50.0)) for x in t])
    busy = [np.outer(CAPS[:, r], u) for r in range(3)]
    args = (pv, CAPS[:, 0], CAPS[:, 1], CAPS[:, 2], *busy, np.tile(t, (len(CAPS), 1)), np.tile(wb, (len(CAPS), 1)))
    n = np.array([ph.server_layout(pv[d], *CAPS[d])[0] for d in range(len(CAPS))])
    ng = np.array([ph.server_layout(pv[d], *CAPS[d])[1] for d in range(len(CAPS))])
    shape = (len(CAPS), len(u))
    half = [np.broadcast_to(x[:, None], shape) for x in ((n - ng) * 0.5, ng * 0.5, (n - ng) * 0.25, ng * 0.25)]
    asleep = [np.zeros(shape)] * 4
    out = [("always_on", ph.compute(*args))]
    for label, srv in (("managed", half), ("asleep", asleep)):
        out.append((label, ph.compute(*args[:4], *(b * (label == "managed") for b in busy), *args[7:],
                                      servers=srv)))
    return out


def test_every_field_has_a_declared_range():
    """One declaration (gridshift.dc_params.PARAM_RANGES) covers every numeric field, each with its reason."""
    assert set(PARAM_RANGES) == set(NUMERIC)
    for name, b in PARAM_RANGES.items():
        assert math.isfinite(b.low) and math.isfinite(b.high) and b.low < b.high and len(b.reason) > 10, name
        default = getattr(DatacenterParams(), name)
        assert b.admits(default), (name, default, b.describe())


@pytest.mark.parametrize("air", ("direct_evaporative", "none"))
@pytest.mark.parametrize("condenser", CONDENSER_TYPES)
def test_hostile_value_in_every_field_is_refused_by_name_or_conserved(condenser, air):
    """The issue's fuzz: 25 of 284 such pairs used to pass validation and then divide by zero or give NaN,
    -inf or negative totals (chw_pump_design_frac = -1: -26,428 kWh, PUE -674)."""
    admitted = 0
    for name in FIELDS:
        for value in HOSTILE:
            got = build(name, value, condenser, air)
            if isinstance(got, ParamError):
                assert_named_refusal(got, [name])
                assert f"{value!r}" in str(got) or name in ("condenser", "economizer", "air_economizer"), str(got)
                outside = isinstance(value, str) or not (math.isfinite(value) and PARAM_RANGES[name].admits(value)) \
                    if name in PARAM_RANGES else False
                if outside:  # (a value inside its range is refused by a joint rule, which names the fields)
                    assert PARAM_RANGES[name].describe() in str(got), str(got)
                continue
            admitted += 1
            for label, r in run_kernel(got):
                assert_conserved(got, r, f"{name}={value!r} {condenser} {air} {label}")
    # 0 and tiny are valid for fractions, powers and some coefficients; nothing else gets through
    assert 30 < admitted < 2 * len(NUMERIC)


def test_refusals_name_the_field_at_every_entry():
    """The same refusal, by name, for a wrong type, a value outside the range and a joint rule."""
    with pytest.raises(TypeError, match=r"cores_per_server must be a number in \[1, 4096\]"):
        DatacenterParams(cores_per_server="64")
    with pytest.raises(ValueError, match=r"chiller_cop_water = 0.0 is outside its range \[1, 12.3\] \(a chiller "):
        DatacenterParams(chiller_cop_water=0.0)
    with pytest.raises(ValueError, match=r"chiller_pow_c0 = 2.333, chiller_pow_c1 = -1.975, chiller_pow_c2 = -1.0: "
                                         r"PowRatio\(CapRatio\) spans \[-2.169"):
        DatacenterParams(chiller_pow_c2=-1.0)
    with pytest.raises(ValueError, match=r"supply_approach_k \(0.0\) \+ return_approach_k \(0.0\) must be > 0"):
        DatacenterParams(supply_approach_k=0.0, return_approach_k=0.0)
    with pytest.raises(ValueError, match="pump_curve_c0 = -1.0, .*pump_curve_c3 = -0.0998: the pump curve"):
        DatacenterParams(pump_curve_c0=-1.0)
    with pytest.raises(ValueError, match="outside its range"):
        DatacenterParams(cores_per_server=10**400)  # an int beyond the float range


def _in_range(name: str):
    b = PARAM_RANGES[name]
    lo = b.low if b.low_inclusive else math.nextafter(b.low, math.inf)
    return st.tuples(st.just(name), st.one_of(st.just(lo), st.just(b.high),
                                              st.floats(lo, b.high, allow_nan=False, allow_infinity=False)))


@settings(max_examples=300, deadline=None, derandomize=True, suppress_health_check=[HealthCheck.too_slow])
@given(pairs=st.lists(st.sampled_from(NUMERIC).flatmap(_in_range), min_size=1, max_size=8),
       condenser=st.sampled_from(CONDENSER_TYPES), economizer=st.sampled_from(("integrated", "none")),
       air=st.sampled_from(AIR_ECONOMIZER_TYPES))
def test_values_inside_their_ranges_combined(pairs, condenser, economizer, air):
    """Several fields at once anywhere inside their ranges (ends included): a joint rule refuses by naming one
    of them, or the physics is finite, non-negative and conserved."""
    kw = dict(pairs)
    try:
        p = DatacenterParams(condenser=condenser, economizer=economizer, air_economizer=air, **kw)
    except ParamError as exc:
        assert_named_refusal(exc, list(kw))
        return
    for label, r in run_kernel(p):
        assert_conserved(p, r, f"{kw} {condenser} {economizer} {air} {label}")


#: admitted extremes, one per datacenter of a full run: (field, value)
FULL_RUN_CASES = (
    [("it_fan_design_frac", 0.0), ("crac_fan_design_frac", 1.0), ("chiller_min_plr", 1.0)],
    [("mem_static_w_per_gb", 1e-300), ("pump_min_flow_ratio", 0.01), ("cycles_of_concentration", 1.5)],
    [("chiller_capacity_factor", 0.1), ("server_wake_s", 900.0), ("cpu_server_idle_w", 0.0)],
)


@pytest.mark.parametrize("condenser", CONDENSER_TYPES)
def test_full_run_with_extreme_admitted_parameters(tmp_path, condenser):
    """A whole run (managed and always-on power) on a bundle whose datacenters carry admitted extremes: the
    run's totals are finite and non-negative and its per-step physics conserved."""
    for i, cases in enumerate(FULL_RUN_CASES):
        physics = [DatacenterParams(condenser=condenser, **dict([c])) for c in cases]
        sc = sim_core.load(tiny_bundle(tmp_path / f"{i}", physics=physics))
        for power in ("managed", "always_on"):
            res = sim_core.run(sc, "lowest_carbon", seed=0, power=power)
            for k in ("total_kwh", "it_kwh", "carbon_kg", "cost_usd", "water_l"):
                assert math.isfinite(res.totals[k]) and res.totals[k] >= 0.0, (cases, power, k, res.totals[k])
            assert res.totals["total_kwh"] >= res.totals["it_kwh"] > 0.0
            steps = res.steps
            for d, p in enumerate(physics):
                rows = steps.filter(steps["dc"] == d)
                assert_conserved(p, {k: rows[k].to_numpy() for k in ph.OUT_NAMES}, f"{cases[d]} {power}")
            assert steps["total_kwh"].sum() == pytest.approx(res.totals["total_kwh"], rel=1e-12)
