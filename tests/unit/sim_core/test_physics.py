"""docs/model.md §4 properties of the per-datacenter physics."""

import math

import numpy as np
import pytest

from gridshift.dc_params import CHILLER_2015, DatacenterParams
from gridshift.wetbulb import stull_wetbulb
from sim_core import physics as ph

CAPS = [(50000, 1000, 80000), (110000, 300, 60000), (6400, 0, 1000)]
#: no UPS / transformer losses and no lighting: the hand-computed plant operating points below check the cooling
#: plant alone; the electrical losses have their own hand-computed test
PLANT_ONLY = dict(ups_loss_c0=0.0, ups_loss_c1=0.0, ups_loss_c2=0.0, transformer_nameplate_eff=1.0, lighting_frac=0.0)


def plant_2015(**kw) -> DatacenterParams:
    """The "chiller-2015" design (18 degC supply air, 6.67 degC chilled water, no air-side economizer) with ``kw``:
    the chiller plant's tests below pin its operating points by hand; the default design's outside air has its
    own tests (test_air_economizer.py)."""
    return DatacenterParams(**{**CHILLER_2015, **kw})


def run(p, caps, u, t_db, t_wb, ug=None, um=None):
    c, g, m = caps
    ug = u if ug is None else ug
    um = u if um is None else um
    r = ph.compute(ph.param_vector(p), c, g, m, u * c, ug * g, um * m, t_db, t_wb)
    return {k: float(v[0, 0]) for k, v in r.items()}


def grid():
    for cond, design in ((c, d) for c in ("water", "air", "hybrid") for d in (plant_2015, DatacenterParams)):
        p = design(condenser=cond)
        for caps in CAPS:
            for u in (0.0, 0.1, 0.37, 0.8, 1.0):
                for t in (-10.0, 0.0, 18.0, 30.0, 40.0):
                    wb = float(stull_wetbulb(t, 50.0))
                    yield p, caps, u, t, wb


def _gpu_w(n_gpu, u):
    """GPU power (W) of ``n_gpu`` V100s with u x n_gpu allocated, per device: floor(b) devices at log2(1 + 0.52)
    (gpu_alloc_util), one device allocated f = b - floor(b) at log2(1 + 0.52 f), the others idle at 35 W."""
    b = u * n_gpu
    full, f = math.floor(b), b - math.floor(b)
    w = full * (35 + 215 * math.log2(1.52)) + (35 + 215 * math.log2(1 + f * 0.52) if f else 0.0)
    return w + (n_gpu - full - (1 if f else 0)) * 35


def _parts(r):
    """Every power the facility draws: IT, the cooling (CRAC fans, chiller, heat-rejection fans, pumps), the
    electrical losses (UPS, transformer / distribution) and the lighting."""
    return (r["it_kw"] + r["crac_fan_kw"] + r["chiller_kw"] + r["tower_fan_kw"] + r["chw_pump_kw"] + r["cw_pump_kw"]
            + r["ups_loss_kw"] + r["transformer_loss_kw"] + r["lighting_kw"])


def _carried(r):
    """The cooling load as the three carry it: outside air, the water-side economizer and the chiller."""
    return r["air_econ_kw"] + r["econ_kw"] + r["chiller_load_kw"]


def test_conservation_every_point():
    for p, caps, u, t, wb in grid():
        r = run(p, caps, u, t, wb)
        # the cooling load is the electrical power dissipated in the white space
        assert r["cooling_load_kw"] == pytest.approx(r["it_kw"] + r["crac_fan_kw"] + r["lighting_kw"], rel=1e-12)
        assert r["it_kw"] == pytest.approx(r["it_cpu_kw"] + r["it_gpu_kw"] + r["it_mem_kw"] + r["it_fan_kw"],
                                           rel=1e-12)
        # air-side energy balance: the CRAC airflow carries the IT heat across return - supply
        rho_cp = p.air_density_kg_m3 * p.air_cp_j_per_kg_k
        carried = rho_cp * r["crac_airflow_m3_s"] * (r["t_return_c"] - p.supply_air_c) / 1000.0
        assert carried == pytest.approx(r["it_kw"], rel=1e-12)
        rack = rho_cp * r["server_airflow_m3_s"] * (r["t_outlet_c"] - r["t_inlet_c"]) / 1000.0
        assert rack == pytest.approx(r["it_kw"], rel=1e-12)
        # total is the sum of its parts (nothing left out)
        # energy in = IT + cooling + electrical losses (+ lighting): the total is the sum of its parts
        assert r["total_kw"] == pytest.approx(_parts(r), rel=1e-12)
        assert r["ups_loss_kw"] > 0 and r["transformer_loss_kw"] > 0 and r["lighting_kw"] > 0
        # the default chiller (sized for a tower) is short with a hybrid at 40 degC dry-bulb (reported as
        # unmet cooling, docs/validation.md); everywhere else in the grid it covers the load
        if p.condenser != "hybrid" or t <= 30.0:
            assert r["unmet_cooling_kw"] == 0.0
        # heat rejected = met cooling load + chiller work
        met = r["cooling_load_kw"] - r["air_econ_kw"] - r["unmet_cooling_kw"]
        assert r["heat_rejected_kw"] == pytest.approx(met + r["chiller_kw"], rel=1e-12)


def test_pue_range_and_idle_above_full():
    # the plant without free cooling: PUE 1.1-1.7 everywhere (docs/model.md §4)
    p = plant_2015(economizer="none")
    for caps in CAPS[:2]:
        for t in np.linspace(-10, 40, 11):
            wb = float(stull_wetbulb(t, 50.0))
            pues = [run(p, caps, u, t, wb)["total_kw"] / run(p, caps, u, t, wb)["it_kw"] for u in (0.1, 0.4, 0.7, 1.0)]
            assert all(1.1 <= x <= 1.7 for x in pues), (t, pues)
            if t <= 35:
                idle = run(p, caps, 0.0, t, wb)
                full = run(p, caps, 1.0, t, wb)
                assert idle["total_kw"] / idle["it_kw"] > full["total_kw"] / full["it_kw"]
    # air-cooled defaults stay in range too
    pa = plant_2015(condenser="air")
    for t in (-10.0, 20.0, 40.0):
        for u in (0.1, 1.0):
            r = run(pa, CAPS[0], u, t, float(stull_wetbulb(t, 50.0)))
            assert 1.1 <= r["total_kw"] / r["it_kw"] <= 1.7


def test_total_monotone_in_each_utilisation_and_ambient():
    for cond in ("water", "air"):
        p = plant_2015(condenser=cond)
        caps = CAPS[0]
        us = np.linspace(0, 1, 21)
        for t in (-10.0, 20.0, 38.0):
            wb = float(stull_wetbulb(t, 50.0))
            for which in ("cpu", "gpu", "mem"):
                tot = []
                for u in us:
                    kw = dict(u=0.5, ug=0.5, um=0.5)
                    kw[{"cpu": "u", "gpu": "ug", "mem": "um"}[which]] = u
                    tot.append(run(p, caps, kw["u"], t, wb, ug=kw["ug"], um=kw["um"])["total_kw"])
                assert np.all(np.diff(tot) >= -1e-12), (cond, t, which)
        for u in (0.0, 0.5, 1.0):
            ts = np.linspace(-15, 45, 61)
            rs = [run(p, caps, u, t, float(stull_wetbulb(t, 50.0))) for t in ts]
            tot = np.array([r["total_kw"] for r in rs])
            unmet = np.array([r["unmet_cooling_kw"] for r in rs])
            # no unmet cooling with default sizing up to 40 degC; beyond, the chiller is at its
            # (shrinking) capacity and the shortfall is reported as unmet cooling instead
            assert (unmet[ts <= 40] == 0).all()
            ok = (unmet[1:] == 0) & (unmet[:-1] == 0)
            assert np.all(np.diff(tot)[ok] >= -1e-12), (cond, u)
            assert np.all(np.diff(unmet) >= -1e-12)
            # wet-bulb alone (water-cooled) never lowers the total either
            tot = [run(p, caps, u, 30.0, wb)["total_kw"] for wb in np.linspace(-5, 30, 36)]
            assert np.all(np.diff(tot) >= -1e-12)


def test_chiller_monotone_in_condenser_temperature_and_load():
    for cond in ("water", "air", "dry"):
        pv = ph.param_vector(plant_2015(condenser=cond))
        rated = 1000.0
        for load in (0.0, 10.0, 30.0, 49.0, 51.0, 200.0, 600.0, 900.0, 1200.0):
            out = np.array([ph.chiller_power(pv, load, rated, tc) for tc in np.linspace(-30, 60, 181)])
            met = out[:, 3] == 0  # where capacity covers the load (else unmet is reported)
            ok = met[1:] & met[:-1]
            assert np.all(np.diff(out[:, 0])[ok] >= -1e-12), (cond, load)
            assert np.all(np.diff(out[:, 3]) >= -1e-12)
        for tc in (-10.0, 15.0, 29.44, 35.0, 45.0):
            pw = [ph.chiller_power(pv, ld, rated, tc)[0] for ld in np.linspace(0, 1300, 261)]
            assert np.all(np.diff(pw) >= -1e-12), (cond, tc)
    # the reference defect: a wrong dT reference made the chiller cheaper when hotter outside
    pv = ph.param_vector(plant_2015())
    assert ph.chiller_power(pv, 700.0, 1000.0, 35.0)[0] > ph.chiller_power(pv, 700.0, 1000.0, 25.0)[0]


def test_chiller_curves_match_energyplus_coefficients():
    pv = ph.param_vector(plant_2015())
    # at 29.44 + 2.778 degC (dT = 1) with design chilled water
    cap, pw = ph.chiller_curves(pv, 29.44 + 2.778)
    assert cap == pytest.approx(0.94483600 - 0.05700880 + 0.00185486, abs=1e-12)
    assert pw == pytest.approx(2.333 - 1.975 * cap + 0.6121 * cap * cap, abs=1e-12)
    power, plr, avail, unmet = ph.chiller_power(pv, 500.0, 1000.0, 29.44)
    c0 = 0.94483600
    p0 = 2.333 - 1.975 * c0 + 0.6121 * c0**2
    x = 500.0 / (c0 * 1000.0)
    assert plr == pytest.approx(x, abs=1e-12) and avail == pytest.approx(c0 * 1000.0, abs=1e-9)
    assert power == pytest.approx((0.03303 + 0.6852 * x + 0.2818 * x * x) * p0 * c0 * 1000.0 / 6.1, abs=1e-9)
    # beyond capacity: unmet load is reported, not hidden
    power, plr, avail, unmet = ph.chiller_power(pv, 1200.0, 1000.0, 29.44)
    assert plr == 1.0 and unmet == pytest.approx(1200.0 - avail, abs=1e-9) and unmet > 0


def test_fan_laws_cubic():
    assert ph.fan_power(3.0, 2.0, 1.0) == pytest.approx(8 * ph.fan_power(3.0, 1.0, 1.0), rel=1e-15)
    assert ph.fan_power(5.0, 0.8, 0.4) == pytest.approx(8 * ph.fan_power(5.0, 0.4, 0.4), rel=1e-15)
    # server and CRAC fans in the datacenter: double the heat above the minimum -> 8x the fan power
    p = plant_2015(it_fan_min_airflow_ratio=0.01, crac_min_airflow_ratio=0.01)
    caps = (64000, 0, 1000)
    a = run(p, caps, 0.0, 20.0, 15.0)  # idle heat
    pv = ph.param_vector(p)
    _, heat_d, it_d, _, _ = ph.design_point(pv, *caps)
    heat_a = a["it_kw"] - a["it_fan_kw"]
    assert a["it_fan_kw"] == pytest.approx(p.it_fan_design_frac * heat_d * (heat_a / heat_d) ** 3, rel=1e-12)
    r1 = ph.compute(pv, *caps, 0.1 * 64000, 0, 0, 20.0, 15.0)
    h1 = float(r1["it_kw"][0, 0] - r1["it_fan_kw"][0, 0])
    # find the utilisation with exactly twice the heat (CPU power is linear in u)
    cpu1 = float(r1["it_cpu_kw"][0, 0])
    mem = float(r1["it_mem_kw"][0, 0])
    idle_cpu = a["it_cpu_kw"]
    u2 = 0.1 * (2 * h1 - mem - idle_cpu) / (cpu1 - idle_cpu)
    r2 = ph.compute(pv, *caps, u2 * 64000, 0, 0, 20.0, 15.0)
    assert float(r2["server_airflow_m3_s"][0, 0]) == pytest.approx(2 * float(r1["server_airflow_m3_s"][0, 0]), rel=1e-9)
    assert float(r2["it_fan_kw"][0, 0]) == pytest.approx(8 * float(r1["it_fan_kw"][0, 0]), rel=1e-9)


def test_cpu_never_above_nameplate_and_gpu_count_as_configured():
    p = plant_2015()
    pv = ph.param_vector(p)
    for u in (0.0, 0.5, 1.0):
        for tin in (10.0, 20.0, 28.0, 45.0):
            assert ph.cpu_server_power(pv, u, tin) <= p.cpu_server_nameplate_w
    assert ph.cpu_server_power(pv, 0.0, 16.0) == pytest.approx(120.0)
    # +2 % of P_max across 16 -> 28 degC
    assert ph.cpu_server_power(pv, 0.5, 28.0) - ph.cpu_server_power(pv, 0.5, 16.0) == pytest.approx(0.02 * 400)
    # every configured GPU is counted, per device: half of them allocated (at gpu_alloc_util, 3.5 of 7: three
    # devices fully and one half allocated), the others idle
    for n_gpu in (0, 7, 1000):
        r = run(p, (6400, n_gpu, 1000), 0.5, 20.0, 15.0)
        assert r["it_gpu_kw"] == pytest.approx(_gpu_w(n_gpu, 0.5) / 1000.0, rel=1e-12)


def test_tower_fan_rated_at_design_and_small():
    p = plant_2015()
    pv = ph.param_vector(p)
    q_d = 1000.0
    assert ph.tower_fan_power(pv, q_d, q_d, p.tower_design_wetbulb_c) == pytest.approx(p.tower_fan_design_frac * q_d)
    assert ph.tower_fan_power(pv, 500.0, q_d, 20.0) < ph.tower_fan_power(pv, 800.0, q_d, 20.0)
    assert ph.tower_fan_power(pv, 500.0, q_d, 10.0) < ph.tower_fan_power(pv, 500.0, q_d, 20.0)
    for p_, caps, u, t, wb in grid():
        r = run(p_, caps, u, t, wb)
        if r["heat_rejected_kw"] > 0:
            assert r["tower_fan_kw"] <= 0.02 * r["heat_rejected_kw"]


def test_water_scales_with_load_and_size():
    p = plant_2015(condenser="water")
    r = run(p, CAPS[0], 0.5, 25.0, 20.0)
    rej_kwh = r["heat_rejected_kw"] * 0.25
    assert r["water_evap_l"] / rej_kwh == pytest.approx(1.5, rel=1e-12)
    assert r["water_blowdown_l"] == pytest.approx(r["water_evap_l"] / 4.0, rel=1e-12)
    assert r["water_l"] == pytest.approx(r["water_evap_l"] + r["water_drift_l"] + r["water_blowdown_l"], rel=1e-12)
    lo, hi = run(p, CAPS[0], 0.1, 25.0, 20.0), run(p, CAPS[0], 0.9, 25.0, 20.0)
    assert hi["water_l"] > lo["water_l"] * 1.5
    big = run(p, (2 * 50000, 2000, 160000), 0.5, 25.0, 20.0)
    assert big["water_l"] == pytest.approx(2 * r["water_l"], rel=0.01)
    assert run(plant_2015(condenser="air"), CAPS[0], 0.5, 25.0, 20.0)["water_l"] == 0.0


def test_hand_computed_operating_point():
    """100 CPU servers (6400 cores), 10 V100, 1000 GB; half busy; 25 degC dry / 20 degC wet bulb."""
    r = run(plant_2015(condenser="water", **PLANT_ONLY), (6400, 10, 1000), 0.5, 25.0, 20.0, um=0.4)
    # IT, written out
    t_in = 18.0 + 2.0
    leak = 0.02 * 400 * (t_in - 16) / 12  # 2.6667 W
    cpu = 100 * (120 + 280 * 0.5 + leak) / 1000  # 26.266667 kW
    gpu = (5 * (35 + 215 * math.log2(1.52)) + 5 * 35) / 1000  # 5 of 10 allocated, per device: 0.9993767 kW
    mem = (1000 * 0.1 + 400 * 0.2) / 1000  # 0.18 kW
    assert r["it_cpu_kw"] == pytest.approx(26.266666666666666, abs=1e-9)
    assert r["it_gpu_kw"] == pytest.approx(0.9993766729440254, abs=1e-9)
    assert r["it_mem_kw"] == pytest.approx(0.18, abs=1e-9)
    heat = cpu + gpu + mem
    heat_d = (100 * (400 + leak) + 10 * 250 + 1000 * 0.3) / 1000
    it_d = 1.05 * heat_d
    fan = 0.05 * heat_d * (heat / heat_d) ** 3
    it = heat + fan
    assert r["it_fan_kw"] == pytest.approx(fan, abs=1e-9)
    rho_cp = 1.19 * 1006
    v_srv = (heat / heat_d) * it_d * 1000 / (rho_cp * 12)
    t_out = t_in + it * 1000 / (rho_cp * v_srv)
    t_ret = t_out + 1.0
    v_crac = it * 1000 / (rho_cp * (t_ret - 18.0))
    v_crac_d = it_d * 1000 / (rho_cp * 15.0)
    crac = 0.04 * it_d * (max(v_crac, 0.6 * v_crac_d) / v_crac_d) ** 3
    assert r["t_outlet_c"] == pytest.approx(t_out, abs=1e-9)
    assert r["crac_fan_kw"] == pytest.approx(crac, abs=1e-9)
    cool = it + crac
    cool_d = it_d * 1.04
    rej_d = cool_d * (1 + 1 / 6.1)
    r_need = cool * (1 + 1 / 6.1) / rej_d * math.exp(0.04 * (20.0 - 23.89))
    t_cond = 20.0 + 5.55 * max(1.0, r_need)
    dt = (t_cond - 29.44) / 2.778
    cap = 0.944836 - 0.0570088 * dt + 0.00185486 * dt * dt
    powr = 2.333 - 1.975 * cap + 0.6121 * cap * cap
    avail = cap * 1.35 * cool_d
    plr = cool / avail
    chiller = (0.03303 + 0.6852 * plr + 0.2818 * plr * plr) * powr * avail / 6.1
    assert r["t_cond_in_c"] == pytest.approx(t_cond, abs=1e-9)
    assert r["chiller_kw"] == pytest.approx(chiller, abs=1e-9)
    rej = cool + chiller
    rt = min(max(rej / rej_d * math.exp(0.04 * (20.0 - 23.89)), 0.1), 1.0)
    tower = 0.0105 * rej_d * rt**3

    def pump(x):
        x = max(x, 0.7)
        return (0.0013 + 0.147 * x + 0.9506 * x * x - 0.0998 * x**3) / (0.0013 + 0.147 + 0.9506 - 0.0998)

    chw = 0.025 * cool_d * pump(cool / cool_d)
    cw = 0.02 * cool_d * pump(rej / rej_d)
    assert r["tower_fan_kw"] == pytest.approx(tower, abs=1e-9)
    assert r["chw_pump_kw"] == pytest.approx(chw, abs=1e-9)
    assert r["cw_pump_kw"] == pytest.approx(cw, abs=1e-9)
    assert r["total_kw"] == pytest.approx(it + crac + chiller + tower + chw + cw, abs=1e-9)
    water = rej * 900 / 2400 * (1 + 1 / 4) + 0.00005 * rej * 900 / (4.186 * 5.56)
    assert r["water_l"] == pytest.approx(water, abs=1e-9)


def test_air_cooled_operating_point():
    """Air-cooled condenser: condenser inlet = dry bulb, design 35 degC, COP 2.9, no tower."""
    r = run(plant_2015(condenser="air"), (6400, 0, 1000), 1.0, 35.0, 20.0)
    pv = ph.param_vector(plant_2015(condenser="air"))
    _, _, it_d, cool_d, _ = ph.design_point(pv, 6400, 0, 1000)
    assert r["t_cond_in_c"] == 35.0 and r["tower_fan_kw"] == 0.0 and r["cw_pump_kw"] == 0.0
    cap = 0.944836
    powr = 2.333 - 1.975 * cap + 0.6121 * cap * cap
    avail = cap * 1.35 * cool_d
    plr = r["cooling_load_kw"] / avail
    assert r["chiller_kw"] == pytest.approx((0.03303 + 0.6852 * plr + 0.2818 * plr**2) * powr * avail / 2.9,
                                            abs=1e-9)


def test_wetbulb_stull_reference_value():
    # Stull (2011): T = 20 degC, RH = 50 % -> Tw = 13.7 degC
    assert float(stull_wetbulb(20.0, 50.0)) == pytest.approx(13.7, abs=0.05)


# ---------------------------------------------------------------- free cooling, dry cooler, climate
def _by_hand_it(caps, u, um):
    """IT side of the (6400, 10, 1000) hand-computed points, written out as in the test above."""
    n_srv = caps[0] / 64
    t_in = 18.0 + 2.0
    leak = 0.02 * 400 * (t_in - 16) / 12
    cpu = n_srv * (120 + 280 * u + leak) / 1000
    gpu = _gpu_w(caps[1], u) / 1000
    mem = (caps[2] * 0.1 + um * caps[2] * 0.2) / 1000
    heat = cpu + gpu + mem
    heat_d = (n_srv * (400 + leak) + caps[1] * 250 + caps[2] * 0.3) / 1000
    it_d = 1.05 * heat_d
    it = heat + 0.05 * heat_d * (heat / heat_d) ** 3
    rho_cp = 1.19 * 1006
    v_srv = (heat / heat_d) * it_d * 1000 / (rho_cp * 12)
    t_ret = t_in + it * 1000 / (rho_cp * v_srv) + 1.0
    v_crac = it * 1000 / (rho_cp * (t_ret - 18.0))
    v_crac_d = it_d * 1000 / (rho_cp * 15.0)
    crac = 0.04 * it_d * (max(v_crac, 0.6 * v_crac_d) / v_crac_d) ** 3
    return it, crac, it_d * 1.04


def _pump(x):
    x = max(x, 0.7)
    return (0.0013 + 0.147 * x + 0.9506 * x * x - 0.0998 * x**3) / (0.0013 + 0.147 + 0.9506 - 0.0998)


def _chiller_by_hand(load, cool_d, t_run, t_design, cop):
    dt = (t_run - t_design) / 2.778
    cap = 0.944836 - 0.0570088 * dt + 0.00185486 * dt * dt
    powr = 2.333 - 1.975 * cap + 0.6121 * cap * cap
    avail = cap * 1.35 * cool_d
    plr = load / avail
    x = max(plr, 0.05)
    return (0.03303 + 0.6852 * x + 0.2818 * x * x) * powr * avail / cop * min(plr / 0.05, 1.0), plr


def test_partial_free_cooling_operating_point():
    """Wet tower, 4 degC dry / 2 degC wet bulb, half busy: the economizer pre-cools the chilled-water
    return, the chiller (at its 12.8 degC minimum condenser temperature) carries the rest."""
    caps = (6400, 10, 1000)
    r = run(plant_2015(condenser="water", **PLANT_ONLY), caps, 0.5, 4.0, 2.0, um=0.4)
    it, crac, cool_d = _by_hand_it(caps, 0.5, 0.4)
    cool = it + crac
    rej_d = cool_d * (1 + 1 / 6.1)
    t_cw = 2.0 + 5.55  # the tower holds its approach (airflow ratio needed < 1 here)
    assert cool * (1 + 1 / 6.1) / rej_d * math.exp(0.04 * (2.0 - 23.89)) < 1
    lr = cool / cool_d
    t_chwr = 6.67 + 5.56 * lr / max(lr, 0.7)
    f = (t_chwr - (t_cw + 1.11)) / (t_chwr - 6.67)
    assert 0 < f < 1
    ch_load = cool - f * cool
    chiller, plr = _chiller_by_hand(ch_load, cool_d, 12.8, 29.44, 6.1)
    assert plr > 0.05
    rej = cool + chiller
    tower = 0.0105 * rej_d * min(max(rej / rej_d * math.exp(0.04 * (2.0 - 23.89)), 0.1), 1.0) ** 3
    chw = 0.025 * cool_d * _pump(cool / cool_d)
    cw = 0.02 * cool_d * _pump(rej / rej_d)
    assert r["t_cond_in_c"] == pytest.approx(t_cw, abs=1e-9)
    assert r["t_chw_return_c"] == pytest.approx(t_chwr, abs=1e-9)
    assert r["econ_frac"] == pytest.approx(f, abs=1e-12)
    assert r["econ_kw"] == pytest.approx(f * cool, abs=1e-9)
    assert r["chiller_load_kw"] == pytest.approx(ch_load, abs=1e-9)
    assert r["chiller_kw"] == pytest.approx(chiller, abs=1e-9)
    assert r["tower_fan_kw"] == pytest.approx(tower, abs=1e-9)
    assert r["total_kw"] == pytest.approx(it + crac + chiller + tower + chw + cw, abs=1e-9)
    # the tower still rejects the whole load (free-cooled part included) by evaporation
    water = rej * 900 / 2400 * (1 + 1 / 4) + 0.00005 * rej * 900 / (4.186 * 5.56)
    assert r["water_l"] == pytest.approx(water, abs=1e-9)


def test_dry_cooler_operating_point():
    """Dry cooler: condenser water = dry-bulb + 10 K, water-cooled chiller (COP 6.1), fans at
    0.0105 x design heat x ratio^3, no water at all."""
    caps = (6400, 10, 1000)
    r = run(plant_2015(condenser="dry", **PLANT_ONLY), caps, 0.5, 30.0, 20.0, um=0.4)
    it, crac, cool_d = _by_hand_it(caps, 0.5, 0.4)
    cool = it + crac
    rej_d = cool_d * (1 + 1 / 6.1)
    assert min(cool, 1.35 * cool_d) * (1 + 1 / 6.1) < rej_d
    t_cw = 30.0 + 10.0
    chiller, _ = _chiller_by_hand(cool, cool_d, t_cw, 29.44, 6.1)
    rej = cool + chiller
    fan = 0.0105 * rej_d * min(max(rej / rej_d, 0.1), 1.0) ** 3
    chw = 0.025 * cool_d * _pump(cool / cool_d)
    cw = 0.02 * cool_d * _pump(rej / rej_d)
    assert r["t_cond_in_c"] == pytest.approx(t_cw, abs=1e-9)
    assert r["econ_frac"] == 0.0
    assert r["chiller_kw"] == pytest.approx(chiller, abs=1e-9)
    assert r["tower_fan_kw"] == pytest.approx(fan, abs=1e-9)
    assert r["total_kw"] == pytest.approx(it + crac + chiller + fan + chw + cw, abs=1e-9)
    assert r["water_l"] == 0.0 and r["water_evap_l"] == 0.0


def test_dry_cooler_uses_no_water_and_conserves_energy():
    p = plant_2015(condenser="dry")
    for caps in CAPS:
        for u in (0.0, 0.3, 1.0):
            for t in (-10.0, 5.0, 20.0, 35.0):
                r = run(p, caps, u, t, float(stull_wetbulb(t, 50.0)))
                assert r["water_l"] == 0.0 and r["water_evap_l"] == 0.0 and r["water_blowdown_l"] == 0.0
                assert r["water_drift_l"] == 0.0
                white = r["it_kw"] + r["crac_fan_kw"] + r["lighting_kw"]  # all heat dissipated in the white space
                assert r["cooling_load_kw"] == pytest.approx(white, rel=1e-12)
                assert r["cooling_load_kw"] == pytest.approx(_carried(r), rel=1e-12)
                met = r["cooling_load_kw"] - r["air_econ_kw"] - r["unmet_cooling_kw"]
                assert r["heat_rejected_kw"] == pytest.approx(met + r["chiller_kw"], rel=1e-12)
                assert r["tower_fan_kw"] <= 0.0105 * r["heat_rejected_kw"] * 1.35 * (1 + 1 / 6.1) + 1e-12
    # total power never falls as it gets warmer or busier (where cooling is met)
    for u in (0.0, 0.5, 1.0):
        ts = np.linspace(-15, 45, 121)
        rs = [run(p, CAPS[0], u, t, float(stull_wetbulb(t, 50.0))) for t in ts]
        tot = np.array([r["total_kw"] for r in rs])
        ok = np.array([r["unmet_cooling_kw"] == 0 for r in rs])
        assert ok.sum() > 60 and np.all(np.diff(tot)[ok[1:] & ok[:-1]] >= -1e-12), u
    for t in (-10.0, 10.0, 30.0):
        tot = [run(p, CAPS[0], u, t, float(stull_wetbulb(t, 50.0)))["total_kw"] for u in np.linspace(0, 1, 21)]
        assert np.all(np.diff(tot) >= -1e-12), t
    # the dry-bulb, not the wet-bulb, sets its condenser water
    a = run(p, CAPS[0], 0.5, 25.0, 10.0)
    b = run(p, CAPS[0], 0.5, 25.0, 24.0)
    assert a["total_kw"] == b["total_kw"] and a["t_cond_in_c"] == 35.0


def test_economizer_only_hours_have_chiller_power_exactly_zero():
    for cond in ("water", "dry"):
        p = plant_2015(condenser=cond)
        for caps in CAPS:
            for u in (0.0, 0.2, 0.6, 1.0):
                for t in (-20.0, -12.0, -6.0):
                    r = run(p, caps, u, t, float(stull_wetbulb(t, 60.0)))
                    assert r["econ_frac"] == 1.0, (cond, u, t)
                    assert r["chiller_kw"] == 0.0 and r["chiller_load_kw"] == 0.0 and r["chiller_plr"] == 0.0
                    assert r["econ_kw"] == r["cooling_load_kw"] and r["unmet_cooling_kw"] == 0.0
                    assert r["heat_rejected_kw"] == r["cooling_load_kw"]
                    # pumps and heat-rejection fans keep running
                    assert r["chw_pump_kw"] > 0 and r["cw_pump_kw"] > 0 and r["tower_fan_kw"] > 0
                    if cond == "water":  # a wet tower rejects the free-cooled heat by evaporation
                        assert r["water_evap_l"] == pytest.approx(r["heat_rejected_kw"] * 900 / 2400, rel=1e-12)
                    else:
                        assert r["water_l"] == 0.0
                    off = run(plant_2015(condenser=cond, economizer="none"), caps, u, t,
                              float(stull_wetbulb(t, 60.0)))
                    assert off["chiller_kw"] > 0 and r["total_kw"] < off["total_kw"]


def test_economizer_fraction_and_changeover():
    pv = ph.param_vector(plant_2015())
    # all of the load when T_cw + 1.11 <= 6.67, none from T_cw + 1.11 >= T_chw,return, linear between
    assert ph.economizer_fraction(pv, 6.67 - 1.11, 12.23) == 1.0
    assert ph.economizer_fraction(pv, 12.23 - 1.11, 12.23) == 0.0
    assert ph.economizer_fraction(pv, 20.0, 12.23) == 0.0
    assert ph.economizer_fraction(pv, 8.0, 12.23) == pytest.approx((12.23 - 9.11) / (12.23 - 6.67), abs=1e-12)
    assert ph.economizer_fraction(ph.param_vector(plant_2015(economizer="none")), -20.0, 12.23) == 0.0
    assert ph.economizer_fraction(ph.param_vector(plant_2015(condenser="air")), -20.0, 12.23) == 0.0
    # across the changeovers the total moves continuously (no jump at either end)
    p = plant_2015(condenser="water")
    wbs = np.linspace(-4.0, 9.0, 2601)
    rs = [run(p, CAPS[0], 0.5, wb + 2.0, wb) for wb in wbs]
    tot = np.array([r["total_kw"] for r in rs])
    f = np.array([r["econ_frac"] for r in rs])
    assert (f == 1).any() and ((f > 0) & (f < 1)).any() and (f == 0).any()
    assert np.all(np.diff(tot) >= -1e-12)
    assert np.max(np.diff(tot)) < 0.01 * tot.mean()


def test_pue_range_with_free_cooling():
    """With the economizer: PUE 1.1-1.7 in hours without free cooling; below 1.1 only in free-cooling
    hours (docs/model.md §4a), never under the lowest published annual PUE of a campus (1.04, Google
    Central Ohio trailing twelve months, Data Centre Magazine Feb 2026) and never above the same
    plant without an economizer."""
    p = plant_2015()
    off = plant_2015(economizer="none")
    n_fc = 0
    for caps in CAPS[:2]:
        for t in np.linspace(-10, 40, 11):
            wb = float(stull_wetbulb(t, 50.0))
            for u in (0.1, 0.4, 0.7, 1.0):
                r = run(p, caps, u, t, wb)
                r0 = run(off, caps, u, t, wb)
                pue, pue0 = r["total_kw"] / r["it_kw"], r0["total_kw"] / r0["it_kw"]
                if r["econ_frac"] == 0.0:
                    assert 1.1 <= pue <= 1.7 and pue == pue0, (t, u, pue)
                else:
                    n_fc += 1
                    assert 1.04 <= pue < pue0 <= 1.7, (t, u, pue, pue0)
            idle, full = run(p, caps, 0.0, t, wb), run(p, caps, 1.0, t, wb)
            if t <= 35:
                assert idle["total_kw"] / idle["it_kw"] > full["total_kw"] / full["it_kw"]
    assert n_fc > 0


def test_chiller_power_has_no_flat_zone_above_its_minimum_condenser_temperature():
    """Hotter condenser water costs strictly more above 12.8 degC (no clamp flattens the curve); below
    it the chiller runs at its minimum lift (tower bypass / head pressure control) and, with a
    condenser-water loop, the economizer takes over the load."""
    p = plant_2015()
    pv = ph.param_vector(p)
    raw = pv.copy()  # no minimum at all: a kernel probe below the declared range (0-45 degC), so set in the vector
    raw[ph.P_COND_MIN] = -100.0
    tcs = np.linspace(p.chiller_cond_min_c, 45.0, 323)
    for load in (10.0, 30.0, 100.0, 300.0, 600.0, 900.0):
        out = np.array([ph.chiller_power(pv, load, 1000.0, tc) for tc in tcs])
        met = out[:, 3] == 0
        ok = met[1:] & met[:-1]
        assert ok.sum() > 50
        assert np.all(np.diff(out[:, 0])[ok] > 0), load
        # above the minimum the floor changes nothing: the raw curves give the same power
        out_raw = np.array([ph.chiller_power(raw, load, 1000.0, tc)[0] for tc in tcs])
        np.testing.assert_array_equal(out[:, 0], out_raw)
        # below it: constant at the minimum's value
        below = [ph.chiller_power(pv, load, 1000.0, tc)[0] for tc in (-20.0, 0.0, 12.0)]
        assert below == [out[0, 0]] * 3
    # why a minimum is physics and not decoration: the raw curves extrapolated below ~11 degC make a
    # part-loaded chiller *cheaper* as the water gets warmer
    low = np.array([ph.chiller_power(raw, 100.0, 1000.0, tc)[0] for tc in np.linspace(-5.0, 11.0, 161)])
    assert np.any(np.diff(low) < 0)
    # an air-cooled chiller is held at the same lift below its rating point (18.36 degC air)
    pa = ph.param_vector(plant_2015(condenser="air"))
    assert ph.chiller_condenser_temp(pa, 0.0) == (35.0, pytest.approx(35.0 - (29.44 - 12.8)))


def _annual_pue(p, mean_c, caps=CAPS[0], u=0.5):
    """Annual PUE of a synthetic hourly year: mean + 8 K seasonal + 4 K diurnal swing, RH 70 %."""
    h = np.arange(8760)
    t = mean_c + 8.0 * np.sin(2 * np.pi * h / 8760) + 4.0 * np.sin(2 * np.pi * h / 24)
    wb = stull_wetbulb(t, 70.0)
    c, g, m = caps
    r = ph.compute(ph.param_vector(p), c, g, m, np.full(h.size, u * c), u * g, u * m, t, wb)
    return float(r["total_kw"].sum() / r["it_kw"].sum())


def test_annual_pue_rises_with_wetbulb_climate_without_a_flat_zone():
    means = np.arange(-5.0, 30.1, 2.5)
    for cond in ("hybrid", "water", "dry"):
        pues = np.array([_annual_pue(plant_2015(condenser=cond), m) for m in means])
        # strictly rising, and at least 0.002 of PUE per 2.5 K everywhere: no flat zone
        assert np.all(np.diff(pues) > 0.002), (cond, np.round(pues, 4))
    # without an economizer the cold climates are where it flattens (the reason for free cooling)
    flat = np.array([_annual_pue(plant_2015(condenser="water", economizer="none"), m) for m in means[:4]])
    assert np.all(np.diff(flat) < 0.002)


# ---------------------------------------------------------------- hybrid (adiabatic) dry cooler, the default
def test_default_heat_rejection_is_the_hybrid():
    assert plant_2015().condenser == "hybrid"


def test_hybrid_is_the_dry_cooler_at_or_below_its_switchover():
    """No water at or below the switch-over dry-bulb (18.33 degC): every output equals the plain dry
    cooler's, bit for bit, whatever the humidity and load."""
    hyb, dry = plant_2015(), plant_2015(condenser="dry")
    assert hyb.hybrid_switchover_c == 18.33
    for caps in CAPS:
        for u in (0.0, 0.3, 1.0):
            for t in (-15.0, 0.0, 10.0, 18.0, 18.33):
                for rh in (10.0, 50.0, 100.0):
                    wb = float(stull_wetbulb(t, rh))
                    a, b = run(hyb, caps, u, t, wb), run(dry, caps, u, t, wb)
                    assert a == b, (caps, u, t, rh)
                    assert a["water_l"] == 0.0 and a["adiabatic_on"] == 0.0 and a["t_coil_air_c"] == t


def test_hybrid_above_switchover_evaporates_and_cools_the_condenser_water():
    """Above the switch-over the pads are on: water > 0, the coil sees T_db - eps (T_db - T_wb), so the
    condenser water is colder than the plain dry cooler's and the plant never draws more."""
    hyb, dry, wet = plant_2015(), plant_2015(condenser="dry"), plant_2015(condenser="water")
    for caps in CAPS:
        for u in (0.0, 0.3, 1.0):
            for t in (18.4, 22.0, 30.0, 38.0):
                for rh in (15.0, 50.0, 90.0):
                    wb = float(stull_wetbulb(t, rh))
                    a, b = run(hyb, caps, u, t, wb), run(dry, caps, u, t, wb)
                    assert a["adiabatic_on"] == 1.0 and a["water_evap_l"] > 0.0
                    assert a["water_l"] == a["water_evap_l"]  # no drift, no blowdown (bleed-off left out)
                    assert a["t_coil_air_c"] == pytest.approx(t - 0.78 * (t - wb), abs=1e-12)
                    assert a["t_cond_in_c"] < b["t_cond_in_c"]
                    assert a["t_cond_in_c"] - a["t_coil_air_c"] == pytest.approx(b["t_cond_in_c"] - t, abs=1e-12)
                    if b["unmet_cooling_kw"] == 0.0:
                        assert a["total_kw"] <= b["total_kw"] and a["chiller_kw"] <= b["chiller_kw"]
                    assert a["unmet_cooling_kw"] <= b["unmet_cooling_kw"]
                    # the drier the air, the more the pads evaporate (per kWh rejected)
                    if rh == 15.0:
                        assert a["water_l"] / a["heat_rejected_kw"] > run(hyb, caps, u, t, float(
                            stull_wetbulb(t, 90.0)))["water_l"] / a["heat_rejected_kw"]
            # the wet tower in the same hour: the pads' water is not the tower's
            assert run(wet, caps, 0.5, 30.0, 20.0)["water_l"] != run(hyb, caps, 0.5, 30.0, 20.0)["water_l"]
    # saturated air: the pads are on but cannot cool it, so nothing evaporates and the coil sees T_db
    s = run(hyb, CAPS[0], 0.5, 25.0, 25.0)
    assert s["adiabatic_on"] == 1.0 and s["water_l"] == 0.0
    assert s["total_kw"] == run(dry, CAPS[0], 0.5, 25.0, 25.0)["total_kw"]
    # a wet-bulb above the dry-bulb (rounding of the weather) counts as saturated, never as heating
    assert run(hyb, CAPS[0], 0.5, 25.0, 25.3)["water_l"] == 0.0


def test_hybrid_operating_point_by_hand():
    """(6400, 10, 1000) half busy, 32 degC dry / 20 degC wet bulb, written out."""
    caps = (6400, 10, 1000)
    r = run(plant_2015(**PLANT_ONLY), caps, 0.5, 32.0, 20.0, um=0.4)
    it, crac, cool_d = _by_hand_it(caps, 0.5, 0.4)
    cool = it + crac
    rej_d = cool_d * (1 + 1 / 6.1)
    assert cool * (1 + 1 / 6.1) < rej_d  # within full airflow: the approach holds at 10 K
    t_coil = 32.0 - 0.78 * (32.0 - 20.0)  # 22.64 degC
    t_cw = t_coil + 10.0
    chiller, _ = _chiller_by_hand(cool, cool_d, t_cw, 29.44, 6.1)
    rej = cool + chiller
    ra = min(max(rej / rej_d, 0.1), 1.0)
    fan = 0.0105 * rej_d * ra**3
    chw = 0.025 * cool_d * _pump(cool / cool_d)
    cw = 0.02 * cool_d * _pump(rej / rej_d)
    # air mass flow m = ra Q_d / (c_p dT_air); water = m c_p (T_db - T_coil) / h_fg over 900 s
    m_air = ra * rej_d / (1.006 * 5.56)  # kg/s
    evap = m_air * 1.006 * (32.0 - t_coil) * 900 / 2400  # kg = L per step
    assert r["t_coil_air_c"] == pytest.approx(22.64, abs=1e-12)
    assert r["t_cond_in_c"] == pytest.approx(t_cw, abs=1e-9)
    assert r["econ_frac"] == 0.0 and r["adiabatic_on"] == 1.0
    assert r["chiller_kw"] == pytest.approx(chiller, abs=1e-9)
    assert r["tower_fan_kw"] == pytest.approx(fan, abs=1e-9)  # fan power as the dry cooler's
    assert r["total_kw"] == pytest.approx(it + crac + chiller + fan + chw + cw, abs=1e-9)
    assert r["water_evap_l"] == pytest.approx(evap, abs=1e-9) and r["water_l"] == r["water_evap_l"]
    # per-step WUE (L per IT kWh) of this hour: evaporation / (IT kW x 0.25 h)
    assert r["water_l"] / (r["it_kw"] * 0.25) == pytest.approx(evap / (it * 0.25), rel=1e-9)


def test_hybrid_conserves_energy_and_is_monotone_on_each_side_of_the_switchover():
    p = plant_2015()
    for caps in CAPS:
        for u in (0.0, 0.3, 1.0):
            for t in (-10.0, 5.0, 18.33, 18.5, 26.0, 35.0):
                r = run(p, caps, u, t, float(stull_wetbulb(t, 40.0)))
                white = r["it_kw"] + r["crac_fan_kw"] + r["lighting_kw"]  # all heat dissipated in the white space
                assert r["cooling_load_kw"] == pytest.approx(white, rel=1e-12)
                assert r["cooling_load_kw"] == pytest.approx(_carried(r), rel=1e-12)
                met = r["cooling_load_kw"] - r["air_econ_kw"] - r["unmet_cooling_kw"]
                assert r["heat_rejected_kw"] == pytest.approx(met + r["chiller_kw"], rel=1e-12)
                assert r["total_kw"] == pytest.approx(_parts(r), rel=1e-12)
    # total power never falls as it gets warmer, within each mode (pads off / pads on, RH fixed)
    sw = p.hybrid_switchover_c
    for u in (0.0, 0.5, 1.0):
        for lo, hi in ((-15.0, sw), (sw + 1e-6, 45.0)):
            ts = np.linspace(lo, hi, 121)
            rs = [run(p, CAPS[0], u, t, float(stull_wetbulb(t, 50.0))) for t in ts]
            tot = np.array([r["total_kw"] for r in rs])
            ok = np.array([r["unmet_cooling_kw"] == 0 for r in rs])
            assert ok.sum() > 40 and np.all(np.diff(tot)[ok[1:] & ok[:-1]] >= -1e-12), (u, lo)
            w = np.array([r["water_l"] for r in rs])  # (with unmet cooling less heat is rejected)
            assert np.all(np.diff(w)[ok[1:] & ok[:-1]] >= -1e-12)
        # at the switch-over the pads switch on: the plant gets cheaper in one step (the point of them)
        below = run(p, CAPS[0], u, sw, float(stull_wetbulb(sw, 50.0)))
        above = run(p, CAPS[0], u, sw + 0.01, float(stull_wetbulb(sw + 0.01, 50.0)))
        assert above["t_cond_in_c"] < below["t_cond_in_c"] and above["total_kw"] <= below["total_kw"]
    # water grows with the heat rejected (fan airflow) and is zero-floored by the fans' minimum airflow
    ws = [run(p, CAPS[0], u, 30.0, 20.0)["water_l"] for u in np.linspace(0, 1, 11)]
    assert np.all(np.diff(ws) >= -1e-12) and ws[0] > 0


def test_electrical_losses_by_hand():
    """UPS (no-load + proportional + square-law, rated at the design IT power), transformer (no-load + load
    loss from a nameplate efficiency at 35 % load, rated at the design facility load) and lighting (a
    fraction of the design IT power, in the cooling load), written out; the same point without them differs
    by exactly their power plus the plant's response to the lighting heat."""
    caps = (6400, 10, 1000)
    p = plant_2015(condenser="water")
    r = run(p, caps, 0.5, 25.0, 20.0, um=0.4)
    leak = 0.02 * 400 * (20.0 - 16) / 12
    heat_d = (100 * (400 + leak) + 10 * 250 + 1000 * 0.3) / 1000
    it_d = 1.05 * heat_d
    cool_d = it_d * 1.04
    rej_d = cool_d * (1 + 1 / 6.1)
    x = r["it_kw"] / it_d
    ups = it_d * (0.01333 + 0.0064 * x + 0.01081 * x * x)
    assert r["ups_loss_kw"] == pytest.approx(ups, rel=1e-12)
    light = 0.01 * it_d
    assert r["lighting_kw"] == pytest.approx(light, rel=1e-12)
    assert r["cooling_load_kw"] == pytest.approx(r["it_kw"] + r["crac_fan_kw"] + light, rel=1e-12)
    behind = (r["it_kw"] + r["crac_fan_kw"] + r["chiller_kw"] + r["tower_fan_kw"] + r["chw_pump_kw"] + r["cw_pump_kw"]
              + light + ups)
    half = 0.5 * 0.35 * rej_d * (1 / 0.985 - 1)  # no-load loss = load loss at 35 % load
    tr = half + half * (behind / rej_d) ** 2 / 0.35**2
    assert r["transformer_loss_kw"] == pytest.approx(tr, rel=1e-12)
    assert r["total_kw"] == pytest.approx(behind + tr, rel=1e-12)
    # the UPS curve: 94.1 % / 96.3 % / 97.0 % efficient at 25 / 50 / 100 % load
    pv = ph.param_vector(p)
    eff = [xx / (xx + ph.ups_loss(pv, xx, 1.0)) for xx in (0.25, 0.5, 1.0)]
    np.testing.assert_allclose(eff, [0.9410, 0.9630, 0.9704], atol=5e-4)
    # the transformer is 98.5 % efficient at 35 % load and most efficient there
    ld = np.linspace(0.05, 1.0, 96)
    teff = ld / (ld + np.array([ph.transformer_loss(pv, y, 1.0) for y in ld]))
    assert ph.transformer_loss(pv, 0.35, 1.0) == pytest.approx(0.35 * (1 / 0.985 - 1), rel=1e-12)
    assert ld[int(np.argmax(teff))] == pytest.approx(0.35, abs=0.006)
    # without them: the same IT, no loss outputs, a lower total
    q = run(plant_2015(condenser="water", **PLANT_ONLY), caps, 0.5, 25.0, 20.0, um=0.4)
    assert q["it_kw"] == r["it_kw"] and q["ups_loss_kw"] == q["transformer_loss_kw"] == q["lighting_kw"] == 0.0
    assert q["total_kw"] == pytest.approx(_parts(q), rel=1e-12) and q["total_kw"] < r["total_kw"]


def test_electrical_losses_raise_pue_into_the_operators_range_and_fall_with_load():
    """PUE with the electrical losses: the UPS's and transformer's no-load losses make the PUE at 10 % load
    higher than at full load, and the losses add at least 2 % of IT at every point of the grid."""
    for p, caps, u, t, wb in grid():
        r = run(p, caps, u, t, wb)
        losses = r["ups_loss_kw"] + r["transformer_loss_kw"] + r["lighting_kw"]
        assert losses >= 0.02 * r["it_kw"]
    p = plant_2015()
    lo = run(p, CAPS[0], 0.1, 10.0, float(stull_wetbulb(10.0, 50.0)))
    hi = run(p, CAPS[0], 1.0, 10.0, float(stull_wetbulb(10.0, 50.0)))
    elec = [(r["ups_loss_kw"] + r["transformer_loss_kw"] + r["lighting_kw"]) / r["it_kw"] for r in (lo, hi)]
    assert elec[0] > elec[1]
