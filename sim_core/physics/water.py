"""The water term (docs/model.md §4a, §4b): what a wet cooling tower evaporates, drifts and blows down, what a
hybrid dry cooler's adiabatic pads evaporate, and what the air-side economizer evaporates into outside air (L per
step). It reads the cooling plant's heat rejected and the state of its pads (``sim_core.physics.cooling``)."""

from __future__ import annotations

from numba import njit

from gridshift.timestep import STEP_S

from .params import P
from .term import Identity, Term

OUTPUTS = ("water_evap_l", "water_drift_l", "water_blowdown_l", "water_l", "air_econ_water_l")
#: what :func:`plant_water` returns, in this order (the heat rejection's water and its sum)
PLANT_WATER = OUTPUTS[:4]
_PARTS = ("water_evap_l", "water_drift_l", "water_blowdown_l", "air_econ_water_l")

TERM = Term(
    "water",
    ("latent_heat_kj_per_kg", "drift_frac", "cw_range_k", "water_cp_kj_per_kg_k", "cycles_of_concentration"),
    OUTPUTS, "evaporation, drift and blowdown of the heat rejection, and the air-side economizer's evaporation",
    enters={"water": tuple((1.0, c) for c in _PARTS)},
    identities=(Identity("water", "water_l",
                         "water = tower evaporation + drift + blowdown + the air-side economizer's evaporation"),),
)

P_LATENT, P_DRIFT, P_CW_RANGE = P["latent_heat_kj_per_kg"], P["drift_frac"], P["cw_range_k"]
P_WATER_CP, P_CYCLES = P["water_cp_kj_per_kg_k"], P["cycles_of_concentration"]
# (the cooling plant's: which heat rejection, and the pads' coil airflow)
P_COND_WATER, P_TOWER_MIN = P["condenser_is_water"], P["tower_min_airflow_ratio"]
P_DRY_AIR_DT, P_RHO = P["dry_cooler_air_dt_k"], P["air_density_kg_m3"]


@njit(cache=True, nogil=True)
def adiabatic_evaporation_l(p, q_rej_kw, q_rej_design_kw, t_db, t_coil, seconds):
    """Water the pads evaporate (L) in ``seconds``: m_air c_p (T_db - T_coil) / h_fg with the coil's air mass flow
    m_air = r Q_rej,design / (c_p dT_air,design), r its fans' airflow ratio (clamped as their power)."""
    if q_rej_design_kw <= 0.0:
        return 0.0
    r = min(max(q_rej_kw / q_rej_design_kw, p[P_TOWER_MIN]), 1.0)
    return r * q_rej_design_kw * (t_db - t_coil) / p[P_DRY_AIR_DT] * seconds / p[P_LATENT]


@njit(cache=True, nogil=True, inline="always")
def plant_water(p, rej, rej_d, t_db, t_coil, pads):
    """(evaporation, drift, blowdown, their sum) in L per step of heat rejection ``rej`` kW (design ``rej_d``): a
    wet tower rejects all its heat (economizer hours included) by evaporation, plus drift and blowdown; a hybrid
    evaporates what its pads take out of the air (only when they are on, ``pads``; no drift, pad bleed-off left
    out); a dry cooler or an air-cooled condenser uses none."""
    if p[P_COND_WATER] > 0.5:
        rej_kj = rej * STEP_S
        evap = rej_kj / p[P_LATENT]
        drift = p[P_DRIFT] * rej_kj / (p[P_WATER_CP] * p[P_CW_RANGE])
        blow = evap / (p[P_CYCLES] - 1.0)
    elif pads:
        evap = adiabatic_evaporation_l(p, rej, rej_d, t_db, t_coil, STEP_S)
        drift = 0.0
        blow = 0.0
    else:
        evap = 0.0
        drift = 0.0
        blow = 0.0
    return evap, drift, blow, evap + drift + blow


@njit(cache=True, nogil=True, inline="always")
def air_econ_water_l(p, dw, v_crac):
    """Water (kg = L per step) the air-side economizer evaporates: ``dw`` kg per kg of the supply air the CRAC
    units move (``v_crac`` m3/s)."""
    return dw * p[P_RHO] * v_crac * STEP_S
