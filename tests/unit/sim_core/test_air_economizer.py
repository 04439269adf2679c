"""The default cooling design's air-side economizer (issue 24 item 3): outside air within the inlet envelope's
humidity limits, mixed, evaporatively cooled or humidified, the chiller plant trimming or off. Operating points
by hand (the psychrometrics written out here from ASHRAE Fundamentals ch. 1, independently of the kernel),
conservation and monotonicity; the chiller plant's own points are in test_physics.py."""

import math

import numpy as np
import pytest

from gridshift.dc_params import CHILLER_2015, FACILITY_PRESETS, DatacenterParams
from gridshift.wetbulb import stull_wetbulb
from sim_core import physics as ph

CAPS = (50000.0, 1000.0, 80000.0)
P = DatacenterParams()


def run(p, u, t_db, t_wb):
    c, g, m = CAPS
    r = ph.compute(ph.param_vector(p), c, g, m, u * c, u * g, u * m, t_db, t_wb)
    return {k: float(v[0, 0]) for k, v in r.items()}


def w_of(t_db, t_wb):
    """Humidity ratio at 101.325 kPa from dry- and wet-bulb (ASHRAE Fundamentals 2017 ch. 1, eq. 33; Magnus)."""
    pws = 0.61094 * math.exp(17.625 * t_wb / (t_wb + 243.04))
    ws = 0.621945 * pws / (101.325 - pws)
    return ((2501 - 2.326 * t_wb) * ws - 1.006 * (t_db - t_wb)) / (2501 + 1.86 * t_db - 4.186 * t_wb)


def w_dew(dp):
    pw = 0.61094 * math.exp(17.625 * dp / (dp + 243.04))
    return 0.621945 * pw / (101.325 - pw)


def facility_parts(r):
    return (r["it_kw"] + r["crac_fan_kw"] + r["chiller_kw"] + r["tower_fan_kw"] + r["chw_pump_kw"] + r["cw_pump_kw"]
            + r["ups_loss_kw"] + r["transformer_loss_kw"] + r["lighting_kw"])


def test_the_default_design_is_inside_the_recommended_envelope_and_the_old_plant_is_named():
    assert P.supply_air_c + P.supply_approach_k == 27.0  # rack inlet at the envelope's upper limit
    assert (P.inlet_dewpoint_min_c, P.inlet_dewpoint_max_c, P.inlet_rh_max) == (5.5, 15.0, 0.60)
    assert P.air_economizer == "direct_evaporative" and P.chw_supply_c == P.chw_design_c == 20.0
    old = DatacenterParams(**FACILITY_PRESETS["chiller-2015"])
    assert (old.supply_air_c, old.chw_supply_c, old.air_economizer) == (18.0, 6.67, "none")
    assert all(FACILITY_PRESETS["gridshift-0.1"][k] == v for k, v in CHILLER_2015.items())


def test_cool_air_inside_the_envelope_carries_the_whole_load_and_the_plant_is_off():
    t, wb = 10.0, float(stull_wetbulb(10.0, 90.0))  # dew point ~8.4 degC: inside 5.5-15
    r = run(P, 0.5, t, wb)
    assert r["air_econ_frac"] == 1.0 and r["air_econ_kw"] == r["cooling_load_kw"]
    for k in ("chiller_kw", "tower_fan_kw", "chw_pump_kw", "cw_pump_kw", "heat_rejected_kw", "econ_kw",
              "chiller_load_kw", "unmet_cooling_kw", "water_evap_l", "water_l", "air_econ_water_l"):
        assert r[k] == 0.0, k
    assert r["total_kw"] == pytest.approx(facility_parts(r), rel=1e-12)
    assert r["total_kw"] - r["it_kw"] == pytest.approx(r["crac_fan_kw"] + r["ups_loss_kw"] + r["transformer_loss_kw"]
                                                       + r["lighting_kw"], rel=1e-12)


def test_dry_cold_air_is_humidified_by_hand():
    """-5 degC at 50 % RH (dew point ~ -13 degC): outside air still carries everything; the media make up the
    humidity-ratio deficit of the outside-air share of the supply, (T_ret - T_sup) / (T_ret - T_db)."""
    t, wb = -5.0, float(stull_wetbulb(-5.0, 50.0))
    r = run(P, 0.5, t, wb)
    assert r["air_econ_frac"] == 1.0 and r["chiller_kw"] == 0.0
    x_oa = (r["t_return_c"] - P.supply_air_c) / (r["t_return_c"] - t)
    want = P.air_density_kg_m3 * r["crac_airflow_m3_s"] * x_oa * (w_dew(5.5) - w_of(t, wb)) * 900.0
    assert want > 0 and r["air_econ_water_l"] == pytest.approx(want, rel=1e-9)
    assert r["water_l"] == r["air_econ_water_l"]
    # without evaporative media such air is outside the envelope: the chiller plant carries the load
    d = run(DatacenterParams(air_economizer="direct"), 0.5, t, wb)
    assert d["air_econ_frac"] == 0.0 and d["air_econ_water_l"] == 0.0 and d["chw_pump_kw"] > 0.0


def test_warm_dry_air_is_evaporatively_cooled_to_the_supply_set_point_by_hand():
    t, wb = 30.0, float(stull_wetbulb(30.0, 20.0))  # wet-bulb ~16 degC: the pad could reach ~19 degC
    assert t - P.adiabatic_pad_effectiveness * (t - wb) < P.supply_air_c
    r = run(P, 0.5, t, wb)
    assert r["air_econ_frac"] == 1.0 and r["chiller_kw"] == 0.0 and r["chw_pump_kw"] == 0.0
    want = P.air_density_kg_m3 * r["crac_airflow_m3_s"] * P.air_cp_j_per_kg_k / 1000.0 * (t - P.supply_air_c) \
        / P.latent_heat_kj_per_kg * 900.0
    assert r["air_econ_water_l"] == pytest.approx(want, rel=1e-12)


def test_hot_air_is_precooled_and_the_plant_trims_the_rest_by_hand():
    """40 degC, wet-bulb ~21 degC: evaporation stops at the envelope's humidity ratio (dew point 15 degC), above
    the pad's own limit and the supply set point; the plant carries the rest."""
    t, wb = 40.0, float(stull_wetbulb(40.0, 17.0))
    c = P.air_cp_j_per_kg_k / 1000.0 / P.latent_heat_kj_per_kg
    t_air = max(t - P.adiabatic_pad_effectiveness * (t - wb), t - (w_dew(15.0) - w_of(t, wb)) / c)
    assert t_air == t - (w_dew(15.0) - w_of(t, wb)) / c and t_air > P.supply_air_c
    r = run(P, 0.5, t, wb)
    f = (r["t_return_c"] - t_air) / (r["t_return_c"] - P.supply_air_c)
    assert 0.0 < f < 1.0 and r["air_econ_frac"] == pytest.approx(f, rel=1e-12)
    assert r["air_econ_kw"] == pytest.approx(f * r["cooling_load_kw"], rel=1e-12)
    assert r["econ_kw"] + r["chiller_load_kw"] == pytest.approx((1 - f) * r["cooling_load_kw"], rel=1e-12)
    assert r["chiller_kw"] > 0.0
    want = P.air_density_kg_m3 * r["crac_airflow_m3_s"] * c * (t - t_air) * 900.0
    assert r["air_econ_water_l"] == pytest.approx(want, rel=1e-9)


def test_humid_air_is_not_admitted_and_the_plant_runs_as_without_an_air_side_economizer():
    t, wb = 30.0, float(stull_wetbulb(30.0, 80.0))  # dew point ~26 degC: above the envelope's 15
    r, none = run(P, 0.5, t, wb), run(DatacenterParams(air_economizer="none"), 0.5, t, wb)
    assert r["air_econ_frac"] == 0.0 and r["air_econ_water_l"] == 0.0
    for k in ph.OUT_NAMES:
        assert r[k] == none[k], k  # bit for bit


@pytest.mark.parametrize("air", ("direct_evaporative", "direct", "none"))
def test_conservation_and_monotone_in_dry_bulb_at_fixed_humidity(air):
    """Every step conserves energy and water; at a fixed outdoor humidity ratio total power never falls as the
    dry-bulb rises (outside air carries less, the plant more), on each side of the hybrid's pad switch-over
    (where wetting the pads lowers the plant's power: test_physics.py). Not for "direct": its outside air is
    refused below the minimum dew point, so near saturation a warmer hour (more moisture) can admit it."""
    p = DatacenterParams(air_economizer=air)
    temps = np.arange(-10.0, 40.01, 0.5)
    for u in (0.0, 0.3, 1.0):
        for w_target in (0.002, 0.006, 0.010, 0.014):
            prev = 0.0
            for t in temps:
                # the wet-bulb of air at dry-bulb t with humidity ratio w_target (bisection on w_of)
                lo, hi = -40.0, t
                for _ in range(80):
                    mid = 0.5 * (lo + hi)
                    lo, hi = (mid, hi) if w_of(t, mid) < w_target else (lo, mid)
                r = run(p, u, t, 0.5 * (lo + hi))
                assert r["cooling_load_kw"] == pytest.approx(r["it_kw"] + r["crac_fan_kw"] + r["lighting_kw"],
                                                             rel=1e-12)
                carried = r["air_econ_kw"] + r["econ_kw"] + r["chiller_load_kw"]
                assert r["cooling_load_kw"] == pytest.approx(carried, rel=1e-12)
                met = r["cooling_load_kw"] - r["air_econ_kw"] - r["unmet_cooling_kw"]
                assert r["heat_rejected_kw"] == pytest.approx(met + r["chiller_kw"], rel=1e-12, abs=1e-12)
                assert r["total_kw"] == pytest.approx(facility_parts(r), rel=1e-12)
                assert r["water_l"] == pytest.approx(r["water_evap_l"] + r["water_drift_l"] + r["water_blowdown_l"]
                                                     + r["air_econ_water_l"], rel=1e-12, abs=1e-12)
                assert 0.0 <= r["air_econ_frac"] <= 1.0 and r["air_econ_water_l"] >= 0.0
                if t > p.hybrid_switchover_c >= t - 0.5:
                    prev = 0.0
                if r["unmet_cooling_kw"] == 0.0 and air != "direct":
                    assert r["total_kw"] >= prev - 1e-9 * prev, (air, u, w_target, t)
                    prev = r["total_kw"]
