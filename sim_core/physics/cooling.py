"""The cooling plant term (docs/model.md §4, §4a, §4b): the air side (CRAC fans, airflow and temperatures), the
air-side economizer, the chiller with its integrated water-side economizer, heat rejection (cooling tower, dry
cooler, hybrid pads, or an air-cooled condenser) and pumps. :func:`facility_from_cooling` is the plant from its
cooling load on, the one model :func:`sim_core.physics.site.dc_step` and the optimum's power bound
(:func:`facility_kernel`) share."""

from __future__ import annotations

import math

from numba import njit

from .laws import fan_power
from .params import P
from .term import Identity, Term

#: what :func:`facility_from_cooling` returns (the chiller plant's outputs), in this order
PLANT_OUT = ("chiller_kw", "tower_fan_kw", "chw_pump_kw", "cw_pump_kw", "unmet_cooling_kw", "heat_rejected_kw",
             "t_cond_in_c", "chiller_plr", "chiller_cap_kw", "econ_kw", "econ_frac", "chiller_load_kw",
             "t_chw_return_c",
             # hybrid: 1.0 when the pads are wetted (0.0 otherwise and for every other condenser), and the air
             # temperature entering the heat-rejection equipment (the dry-bulb unless a hybrid's pads are on)
             "adiabatic_on", "t_coil_air_c")
#: the air side, then the air-side economizer (the share of the cooling load outside air carries), then the plant
OUTPUTS = ("crac_fan_kw", "cooling_load_kw", "t_inlet_c", "t_outlet_c", "t_return_c", "crac_airflow_m3_s",
           "air_econ_kw", "air_econ_frac") + PLANT_OUT
#: positions in :func:`facility_from_cooling`'s tuple of the plant's electrical loads, unmet cooling, heat
#: rejected, pads and coil air
PL_CHILLER, PL_TOWER, PL_CHW_PUMP, PL_CW_PUMP, PL_UNMET, PL_REJ, PL_ADIA, PL_TCOIL = (PLANT_OUT.index(n) for n in (
    "chiller_kw", "tower_fan_kw", "chw_pump_kw", "cw_pump_kw", "unmet_cooling_kw", "heat_rejected_kw",
    "adiabatic_on", "t_coil_air_c"))
#: the plant's outputs that are 0 while outside air carries the whole load (the plant is off; its temperatures,
#: capacity and the coil air stay as computed)
PLANT_OFF = tuple(n for n in PLANT_OUT if n not in ("t_cond_in_c", "chiller_cap_kw", "t_chw_return_c",
                                                    "t_coil_air_c"))


def derive(p) -> dict[str, float]:
    """The condenser, economizer and air-side economizer choices as numbers, and the inlet envelope's humidity
    ratios (:func:`envelope_ratios`)."""
    w_lo, w_hi = envelope_ratios(p)
    return {
        "condenser_is_water": 1.0 if p.condenser == "water" else 0.0,
        "condenser_is_dry": 1.0 if p.condenser in ("dry", "hybrid") else 0.0,
        "economizer_on": 1.0 if p.economizer == "integrated" and p.condenser != "air" else 0.0,
        "adiabatic_on": 1.0 if p.condenser == "hybrid" else 0.0,
        "air_econ_on": 0.0 if p.air_economizer == "none" else 1.0,
        "air_econ_evap": 1.0 if p.air_economizer == "direct_evaporative" else 0.0,
        "air_w_lo": w_lo, "air_w_hi": w_hi,
    }


TERM = Term(
    "cooling_plant",
    ("supply_air_c", "supply_approach_k", "return_approach_k", "air_density_kg_m3",
     "air_cp_j_per_kg_k", "crac_fan_design_frac", "crac_min_airflow_ratio",
     "chiller_cop_water", "chiller_cop_air", "chiller_capacity_factor",
     "chw_supply_c", "chw_design_c", "cond_design_water_c", "cond_design_air_c",
     "chiller_cap_c0", "chiller_cap_c1", "chiller_cap_c2",
     "chiller_pow_c0", "chiller_pow_c1", "chiller_pow_c2",
     "chiller_flf_c0", "chiller_flf_c1", "chiller_flf_c2",
     "chiller_cond_min_c", "chiller_dt_max", "chiller_min_plr", "chw_range_k",
     "wse_hx_approach_k",
     "tower_design_wetbulb_c", "tower_approach_k", "tower_fan_design_frac",
     "tower_wetbulb_sens_per_k", "tower_min_airflow_ratio",
     "dry_cooler_approach_k", "dry_cooler_fan_design_frac", "dry_cooler_air_dt_k",
     "hybrid_switchover_c", "adiabatic_pad_effectiveness",
     "chw_pump_design_frac", "cw_pump_design_frac", "pump_min_flow_ratio",
     "pump_curve_c0", "pump_curve_c1", "pump_curve_c2", "pump_curve_c3",
     "inlet_dewpoint_min_c", "inlet_dewpoint_max_c", "inlet_rh_max",
     "condenser_is_water", "condenser_is_dry", "economizer_on", "adiabatic_on", "air_econ_on", "air_econ_evap",
     "air_w_lo", "air_w_hi"),
    OUTPUTS, "air side, air- and water-side economizers, chiller, heat rejection and pumps",
    enters={"facility_power": tuple((1.0, c) for c in ("crac_fan_kw", "chiller_kw", "tower_fan_kw", "chw_pump_kw",
                                                       "cw_pump_kw")),
            "white_space_heat": ((1.0, "crac_fan_kw"),)},
    identities=(Identity("white_space_heat", "cooling_load_kw",
                         "the cooling load is every watt dissipated in the white space (docs/model.md §4)"),),
    derive=derive,
)

# (IT's parameters the air side reads: the server temperature rise and airflow)
P_SERVER_DT = P["server_delta_t_design_k"]
P_SUPPLY, P_SUPPLY_APP, P_RETURN_APP = P["supply_air_c"], P["supply_approach_k"], P["return_approach_k"]
P_RHO, P_CP, P_CRAC_FRAC = P["air_density_kg_m3"], P["air_cp_j_per_kg_k"], P["crac_fan_design_frac"]
P_CRAC_MIN, P_COP_WATER, P_COP_AIR = P["crac_min_airflow_ratio"], P["chiller_cop_water"], P["chiller_cop_air"]
P_CAP_FACTOR, P_CHW_SUPPLY, P_CHW_DESIGN = P["chiller_capacity_factor"], P["chw_supply_c"], P["chw_design_c"]
P_COND_DESIGN_W, P_COND_DESIGN_A = P["cond_design_water_c"], P["cond_design_air_c"]
P_CAP0, P_CAP1, P_CAP2 = P["chiller_cap_c0"], P["chiller_cap_c1"], P["chiller_cap_c2"]
P_POW0, P_POW1, P_POW2 = P["chiller_pow_c0"], P["chiller_pow_c1"], P["chiller_pow_c2"]
P_FLF0, P_FLF1, P_FLF2 = P["chiller_flf_c0"], P["chiller_flf_c1"], P["chiller_flf_c2"]
P_COND_MIN, P_DT_MAX, P_MIN_PLR = P["chiller_cond_min_c"], P["chiller_dt_max"], P["chiller_min_plr"]
P_CHW_RANGE, P_HX_APP, P_TOWER_WB = P["chw_range_k"], P["wse_hx_approach_k"], P["tower_design_wetbulb_c"]
P_TOWER_APP, P_TOWER_FRAC = P["tower_approach_k"], P["tower_fan_design_frac"]
P_TOWER_SENS, P_TOWER_MIN = P["tower_wetbulb_sens_per_k"], P["tower_min_airflow_ratio"]
P_DRY_APP, P_DRY_FRAC = P["dry_cooler_approach_k"], P["dry_cooler_fan_design_frac"]
P_DRY_AIR_DT, P_SWITCHOVER = P["dry_cooler_air_dt_k"], P["hybrid_switchover_c"]
P_PAD_EFF, P_CHW_PUMP = P["adiabatic_pad_effectiveness"], P["chw_pump_design_frac"]
P_CW_PUMP, P_PUMP_MIN = P["cw_pump_design_frac"], P["pump_min_flow_ratio"]
P_PC0, P_PC1, P_PC2, P_PC3 = (P[f"pump_curve_c{i}"] for i in range(4))
P_LATENT = P["latent_heat_kj_per_kg"]  # (the water term's: evaporative cooling of outside air)
P_AIR_ECON, P_AIR_EVAP = P["air_econ_on"], P["air_econ_evap"]  # air_economizer != "none", "direct_evaporative"
P_W_LO, P_W_HI = P["air_w_lo"], P["air_w_hi"]  # the inlet envelope's humidity ratios (envelope_ratios)
P_COND_WATER = P["condenser_is_water"]  # wet cooling tower
P_COND_DRY = P["condenser_is_dry"]  # dry cooler (condenser-water loop; "dry" or "hybrid")
P_ECON = P["economizer_on"]  # integrated water-side economizer (water, dry or hybrid)
P_ADIABATIC = P["adiabatic_on"]  # the dry cooler has adiabatic pre-cooling pads ("hybrid")


def envelope_ratios(p) -> tuple[float, float]:
    """(lowest, highest) humidity ratio admitted to the inlet envelope: at the minimum dew point; the lower of the
    maximum dew point's and the maximum RH's at the rack inlet. Once per datacenter, not every step."""
    t_in = p.supply_air_c + p.supply_approach_k
    hi = min(vapour_ratio(sat_pressure_kpa(p.inlet_dewpoint_max_c)),
             vapour_ratio(p.inlet_rh_max * sat_pressure_kpa(t_in)))
    return vapour_ratio(sat_pressure_kpa(p.inlet_dewpoint_min_c)), hi


@njit(cache=True, nogil=True, inline="always")
def air_side(p, it, it_d, v_srv, rho_cp, t_in):
    """(server outlet, return air temperature degC, CRAC airflow m3/s, CRAC fan power kW) of one step: the servers
    heat their airflow ``v_srv`` by ``it`` kW; the CRAC units move the same heat at the return-to-supply rise, their
    fans at least ``crac_min_airflow_ratio`` of design airflow, cubic power."""
    t_out = t_in + it * 1000.0 / (rho_cp * v_srv) if v_srv > 0 else t_in
    t_ret = t_out + p[P_RETURN_APP]
    dt_crac = t_ret - p[P_SUPPLY]
    v_crac = it * 1000.0 / (rho_cp * dt_crac)
    dt_crac_d = p[P_SERVER_DT] + p[P_SUPPLY_APP] + p[P_RETURN_APP]
    v_crac_d = it_d * 1000.0 / (rho_cp * dt_crac_d)
    v_crac_run = max(v_crac, p[P_CRAC_MIN] * v_crac_d)
    crac = fan_power(p[P_CRAC_FRAC] * it_d, v_crac_run, v_crac_d)
    return t_out, t_ret, v_crac, crac


@njit(cache=True, nogil=True)
def pump_fraction(p, r):
    """Part-load power fraction of a variable-speed pump at flow ratio r (1 at r = 1)."""
    r = max(r, p[P_PUMP_MIN])
    f = p[P_PC0] + r * (p[P_PC1] + r * (p[P_PC2] + r * p[P_PC3]))
    f1 = p[P_PC0] + p[P_PC1] + p[P_PC2] + p[P_PC3]
    return f / f1


@njit(cache=True, nogil=True)
def air_cooled(p):
    """True for an air-cooled chiller (no condenser-water loop: no tower, dry cooler or economizer)."""
    return p[P_COND_WATER] < 0.5 and p[P_COND_DRY] < 0.5


@njit(cache=True, nogil=True)
def chiller_cop(p):
    """Rated COP: air-cooled, or water-cooled (cooling tower or dry cooler on its condenser loop)."""
    return p[P_COP_AIR] if air_cooled(p) else p[P_COP_WATER]


@njit(cache=True, nogil=True)
def chiller_condenser_temp(p, t_cond_in):
    """(rating temperature, temperature the chiller runs at): never below ``chiller_cond_min_c`` (tower bypass /
    head-pressure control); an air-cooled condenser is held at the same lift below its rating point."""
    if air_cooled(p):
        t_design = p[P_COND_DESIGN_A]
        t_min = t_design + (p[P_COND_MIN] - p[P_COND_DESIGN_W])
    else:
        t_design = p[P_COND_DESIGN_W]
        t_min = p[P_COND_MIN]
    return t_design, max(t_cond_in, t_min)


@njit(cache=True, nogil=True)
def chiller_curves(p, t_cond_in):
    """(CapRatio, PowRatio) (EnergyPlus Chiller:Electric): dT = (T_cond - T_cond,design) / 2.778 - (T_chw -
    T_chw,design), T_cond at least the chiller's minimum, dT capped at ``chiller_dt_max``."""
    t_design, t_run = chiller_condenser_temp(p, t_cond_in)
    dt = (t_run - t_design) / 2.778 - (p[P_CHW_SUPPLY] - p[P_CHW_DESIGN])
    dt = min(dt, p[P_DT_MAX])
    cap = p[P_CAP0] + p[P_CAP1] * dt + p[P_CAP2] * dt * dt
    pw = p[P_POW0] + p[P_POW1] * cap + p[P_POW2] * cap * cap
    return cap, pw


@njit(cache=True, nogil=True)
def chiller_power(p, load_kw, rated_cap_kw, t_cond_in):
    """Chiller electric power (kW), PLR, available capacity (kW) and unmet load (kW)."""
    cap_ratio, pow_ratio = chiller_curves(p, t_cond_in)
    avail = cap_ratio * rated_cap_kw
    cop = chiller_cop(p)
    unmet = 0.0
    met = load_kw
    if load_kw > avail:
        unmet = load_kw - avail
        met = avail
    if met <= 0.0 or avail <= 0.0:
        return 0.0, 0.0, avail, unmet
    plr = met / avail
    minp = p[P_MIN_PLR]
    if plr >= minp:
        flf = p[P_FLF0] + p[P_FLF1] * plr + p[P_FLF2] * plr * plr
        power = flf * pow_ratio * avail / cop
    else:
        # cycling below the minimum PLR: power at MinPLR times the on-fraction
        flf = p[P_FLF0] + p[P_FLF1] * minp + p[P_FLF2] * minp * minp
        power = flf * pow_ratio * avail / cop * (plr / minp)
    return power, plr, avail, unmet


@njit(cache=True, nogil=True)
def economizer_fraction(p, t_cw, t_chw_return):
    """Fraction of the cooling load the integrated water-side economizer carries: its plate heat exchanger cools the
    chilled-water return toward condenser water + approach, the chiller the rest (all when T_cw + approach <=
    T_chw,supply, none when >= T_chw,return)."""
    if p[P_ECON] < 0.5:
        return 0.0
    t_hx = t_cw + p[P_HX_APP]
    t_sup = p[P_CHW_SUPPLY]
    if t_hx <= t_sup:
        return 1.0
    if t_hx >= t_chw_return:
        return 0.0
    return (t_chw_return - t_hx) / (t_chw_return - t_sup)


@njit(cache=True, nogil=True)
def dry_cooler_fan_power(p, q_rej_kw, q_rej_design_kw):
    """Dry-cooler fan power (kW): 0.0105 x design heat x r^3, r = heat ratio clamped to [min, 1]."""
    r = min(max(q_rej_kw / q_rej_design_kw, p[P_TOWER_MIN]), 1.0)
    return fan_power(p[P_DRY_FRAC] * q_rej_design_kw, r, 1.0)


@njit(cache=True, nogil=True)
def coil_entering_air(p, t_db, t_wb):
    """(air temperature entering the dry-cooler coil, pads on): a hybrid above ``hybrid_switchover_c`` brings it to
    T_db - eps (T_db - T_wb) (a wet-bulb above the dry-bulb counts as saturated air); otherwise the dry-bulb."""
    if p[P_ADIABATIC] > 0.5 and t_db > p[P_SWITCHOVER]:
        return t_db - p[P_PAD_EFF] * max(t_db - t_wb, 0.0), True
    return t_db, False


@njit(cache=True, nogil=True)
def tower_airflow_ratio(p, q_rej_kw, q_rej_design_kw, t_wb):
    """Airflow ratio a cooling tower needs (unclamped): heat ratio x exp(s (wb - wb_design))."""
    return (q_rej_kw / q_rej_design_kw) * math.exp(p[P_TOWER_SENS] * (t_wb - p[P_TOWER_WB]))


@njit(cache=True, nogil=True)
def tower_fan_power(p, q_rej_kw, q_rej_design_kw, t_wb):
    """Cooling-tower fan power (kW): rated x r^3, r clamped to [min, 1]; rated at design."""
    r = tower_airflow_ratio(p, q_rej_kw, q_rej_design_kw, t_wb)
    r = min(max(r, p[P_TOWER_MIN]), 1.0)
    rated = p[P_TOWER_FRAC] * q_rej_design_kw
    return fan_power(rated, r, 1.0)


P_ATM_KPA = 101.325  # sea-level air pressure, as the air density (psychrometrics of the air-side economizer)


@njit(cache=True, nogil=True, inline="always")
def vapour_ratio(pw_kpa):
    """Humidity ratio (kg water / kg dry air) at vapour pressure ``pw_kpa`` (ASHRAE Fundamentals, ch. 1)."""
    return 0.621945 * pw_kpa / (P_ATM_KPA - pw_kpa)


@njit(cache=True, nogil=True, inline="always")
def sat_pressure_kpa(t):
    """Saturation vapour pressure over water (kPa), Magnus form (Alduchov & Eskridge 1996)."""
    return 0.61094 * math.exp(17.625 * t / (t + 243.04))


@njit(cache=True, nogil=True, inline="always")
def humidity_ratio(t_db, t_wb):
    """Humidity ratio of outdoor air from its dry- and wet-bulb (ASHRAE Fundamentals, ch. 1), at least 0."""
    ws = vapour_ratio(sat_pressure_kpa(t_wb))
    w = ((2501.0 - 2.326 * t_wb) * ws - 1.006 * (t_db - t_wb)) / (2501.0 + 1.86 * t_db - 4.186 * t_wb)
    return max(w, 0.0)


@njit(cache=True, nogil=True, inline="always")
def air_economizer(p, t_db, t_wb, t_ret):
    """(share of the cooling load outside air carries, water it takes per kg of supply air) for one step.

    Outside air is admitted only with its humidity ratio at most the envelope's (:func:`envelope_ratios`). At
    or below the supply set point it is mixed with return air to the set point (the whole load); too dry it is
    humidified ("direct_evaporative": outside-air share of the supply (T_ret - T_sup) / (T_ret - T_db) times the
    deficit) or refused ("direct"). Warmer: 100 % outside air, evaporatively cooled toward the supply temperature
    as far as the pad's effectiveness and the humidity limit allow (c_p dT / h_fg kg of water per kg of air); it
    carries the whole load at the supply temperature, (T_ret - T_air) / (T_ret - T_sup) below T_ret."""
    if p[P_AIR_ECON] < 0.5:
        return 0.0, 0.0
    t_sup = p[P_SUPPLY]
    w_out = humidity_ratio(t_db, t_wb)
    w_lo = p[P_W_LO]
    w_hi = p[P_W_HI]
    evap = p[P_AIR_EVAP] > 0.5
    if w_out > w_hi or (w_out < w_lo and not evap):
        return 0.0, 0.0
    short = max(w_lo - w_out, 0.0)  # humidity-ratio deficit the evaporative media make up
    if t_db <= t_sup:
        return 1.0, short * min((t_ret - t_sup) / (t_ret - t_db), 1.0)
    t_air = t_db
    if evap:
        c = p[P_CP] / 1000.0 / p[P_LATENT]  # kg of water per kg of air per K of evaporative cooling
        t_air = max(t_sup, t_db - p[P_PAD_EFF] * max(t_db - t_wb, 0.0), t_db - (w_hi - w_out) / c)
        short = max(short, c * (t_db - t_air))
    if t_air >= t_ret:
        return 0.0, 0.0
    return (1.0 if t_air <= t_sup else (t_ret - t_air) / (t_ret - t_sup)), short


@njit(cache=True, nogil=True, inline="always")
def facility_from_cooling(p, cool, t_db, t_wb, cool_d, rej_d):
    """The cooling plant of one datacenter and step from its cooling load ``cool`` (kW): the ``PLANT_OUT`` values
    (the water its heat rejection takes is the water term's, ``sim_core.physics.water``).
    ``t_db``/``t_wb``: outdoor dry/wet bulb (degC); ``cool_d``/``rej_d``: design cooling load and heat rejected
    (kW, ``site.design_point``). The one model of the plant: ``dc_step`` calls it, the optimum's power bound
    samples it through :func:`facility_kernel`."""
    # heat rejection: condenser-water temperature from the tower / dry cooler, or outdoor air
    rated_cap = p[P_CAP_FACTOR] * cool_d
    wet = p[P_COND_WATER] > 0.5
    dry = p[P_COND_DRY] > 0.5
    # the air entering a dry cooler's coil (pre-cooled by a hybrid's pads above its switch-over)
    t_coil, pads = coil_entering_air(p, t_db, t_wb) if dry else (t_db, False)
    if wet or dry:
        # estimated with the chiller carrying the whole load (only matters beyond full airflow)
        q_est = min(cool, rated_cap) * (1.0 + 1.0 / chiller_cop(p))
        if wet:
            r_need = tower_airflow_ratio(p, q_est, rej_d, t_wb)
            # beyond full airflow the tower cannot hold its approach: it widens in proportion
            t_cond = t_wb + p[P_TOWER_APP] * max(1.0, r_need)
        else:
            t_cond = t_coil + p[P_DRY_APP] * max(1.0, q_est / rej_d)
    else:
        t_cond = t_db

    # chilled water: flow follows the load (pump minimum), return = supply + range x load / flow
    load_ratio = cool / cool_d if cool_d > 0 else 0.0
    chw_flow = max(load_ratio, p[P_PUMP_MIN])
    t_chwr = p[P_CHW_SUPPLY] + p[P_CHW_RANGE] * load_ratio / chw_flow
    # integrated water-side economizer carries a fraction; the chiller the rest (exactly 0 when all)
    f_econ = economizer_fraction(p, t_cond, t_chwr)
    if f_econ >= 1.0:
        econ = cool
        ch_load = 0.0
    else:
        econ = f_econ * cool
        ch_load = cool - econ
    chiller, plr, cap_avail, unmet = chiller_power(p, ch_load, rated_cap, t_cond)
    met = cool - unmet
    rej = met + chiller

    if wet:
        tower = tower_fan_power(p, rej, rej_d, t_wb)
    elif dry:
        tower = dry_cooler_fan_power(p, rej, rej_d)
    else:
        tower = 0.0
    cw_pump = p[P_CW_PUMP] * cool_d * pump_fraction(p, rej / rej_d) if wet or dry else 0.0
    chw_pump = p[P_CHW_PUMP] * cool_d * pump_fraction(p, met / cool_d) if cool_d > 0 else 0.0

    return (chiller, tower, chw_pump, cw_pump, unmet, rej, t_cond, plr, cap_avail, econ, f_econ, ch_load, t_chwr,
            1.0 if pads else 0.0, t_coil)


@njit(cache=True, nogil=True)
def facility_kernel(p, cool, t_db, t_wb, cool_d, rej_d, plant_kw, unmet_kw):
    """:func:`facility_from_cooling` over 1-D arrays (same length): plant power (kW, ``dc_step``'s order) into
    ``plant_kw``, unmet cooling into ``unmet_kw``. Here because Numba's cache is keyed on the caller's file."""
    for i in range(cool.shape[0]):
        plant = facility_from_cooling(p, cool[i], t_db[i], t_wb[i], cool_d, rej_d)
        plant_kw[i] = plant[PL_CHILLER] + plant[PL_TOWER] + plant[PL_CHW_PUMP] + plant[PL_CW_PUMP]
        unmet_kw[i] = plant[PL_UNMET]


