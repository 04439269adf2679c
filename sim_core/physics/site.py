"""One datacenter and step (docs/model.md §4, §4a, §4b) composed of the physics terms, and the kernels that apply
it to a run (:func:`physics_kernel`) or to one step of the step API (:func:`step_energy`).

:func:`dc_step` calls each term's kernels (``MODULES``, in this order: IT, cooling plant, water, power chain) in one
jitted pass and writes what they return into ``out``, whose slots follow the terms' declared outputs
(``Term.outputs``, term by term). One pass, and the terms' kernels inlined or returning tuples: a call per term
writing into ``out`` ran 5-11 % slower. Parameters: a float64 vector per datacenter (:func:`param_vector`,
``sim_core.physics.params``).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from gridshift.dc_params import DatacenterParams
from gridshift.timestep import STEP_H as STEP_HOURS

from . import cooling, power_chain, water
from . import it as it_term
from .cooling import (
    P_CP,
    P_CRAC_FRAC,
    P_RHO,
    P_SUPPLY,
    P_SUPPLY_APP,
    PL_ADIA,
    PL_REJ,
    PL_TCOIL,
    air_economizer,
    air_side,
    chiller_cop,
    facility_from_cooling,
)
from .it import (
    IT_AIRFLOW,
    IT_KW,
    P_CORES_PER_SERVER,
    P_ITFAN_FRAC,
    P_MEM_DYN,
    P_MEM_STATIC,
    cpu_server_power,
    gpu_power,
    it_power,
)
from .params import DERIVED_PARAMS, PARAM_NAMES
from .power_chain import chain, lighting
from .water import air_econ_water_l, plant_water

#: the terms :func:`dc_step` composes, in its order; the output slots follow their declared outputs
MODULES = (it_term, cooling, water, power_chain)


def layout(modules) -> dict[str, int]:
    """Each output's slot in ``out``: the terms' declared outputs (``TERM.outputs``), term by term in ``modules``'
    order (a term added at the end leaves every other slot where it was)."""
    return {name: i for i, name in enumerate(n for m in modules for n in m.TERM.outputs)}


SLOT = layout(MODULES)
N_OUT = len(SLOT)
#: the outputs in the per-step frame's column order: as published (results files keep it; the golden digests
#: pin it), then the outputs of any term added since, in the terms' order
_PUBLISHED = (
    "it_cpu_kw", "it_gpu_kw", "it_mem_kw", "it_fan_kw", "it_kw", "servers_on", "servers_waking", "servers_asleep",
    "it_idle_kw", "it_sleep_kw", "it_wake_kw", "crac_fan_kw", "chiller_kw", "tower_fan_kw", "chw_pump_kw",
    "cw_pump_kw", "total_kw", "cooling_load_kw", "unmet_cooling_kw", "heat_rejected_kw", "t_inlet_c", "t_outlet_c",
    "t_return_c", "t_cond_in_c", "server_airflow_m3_s", "crac_airflow_m3_s", "chiller_plr", "chiller_cap_kw",
    "water_evap_l", "water_drift_l", "water_blowdown_l", "water_l", "econ_kw", "econ_frac", "chiller_load_kw",
    "t_chw_return_c", "adiabatic_on", "t_coil_air_c", "ups_loss_kw", "transformer_loss_kw", "lighting_kw",
    "air_econ_kw", "air_econ_frac", "air_econ_water_l")
OUT_NAMES = _PUBLISHED + tuple(n for n in SLOT if n not in _PUBLISHED)
if set(OUT_NAMES) != set(SLOT):
    raise ValueError(f"published physics outputs no term declares: {sorted(set(OUT_NAMES) - set(SLOT))}")


def _slots(names) -> np.ndarray:
    return np.array([SLOT[n] for n in names], dtype=np.int64)


#: the slots of each tuple a term's kernel returns (its ``OUTPUTS``, ``PLANT_OUT``, ``PLANT_WATER`` order)
IT_SLOTS = _slots(it_term.OUTPUTS)
PLANT_SLOTS = _slots(cooling.PLANT_OUT)
WATER_SLOTS = _slots(water.PLANT_WATER)
#: what is 0 while outside air carries the whole load: the plant is off (its temperatures, capacity and the coil
#: air stay as computed), and so is its water
PLANT_OFF = _slots(cooling.PLANT_OFF + water.PLANT_WATER)
O_IT, O_TOTAL, O_WATER, O_UNMET = SLOT["it_kw"], SLOT["total_kw"], SLOT["water_l"], SLOT["unmet_cooling_kw"]
O_SRV_ON, O_SRV_WAKE, O_SRV_SLEEP = SLOT["servers_on"], SLOT["servers_waking"], SLOT["servers_asleep"]
O_IDLE, O_SLEEP, O_WAKE = SLOT["it_idle_kw"], SLOT["it_sleep_kw"], SLOT["it_wake_kw"]
O_CRAC, O_COOL, O_V_CRAC = SLOT["crac_fan_kw"], SLOT["cooling_load_kw"], SLOT["crac_airflow_m3_s"]
O_TIN, O_TOUT, O_TRET = SLOT["t_inlet_c"], SLOT["t_outlet_c"], SLOT["t_return_c"]
O_CHILLER, O_TOWER, O_CHW_PUMP, O_CW_PUMP = (SLOT[n] for n in ("chiller_kw", "tower_fan_kw", "chw_pump_kw",
                                                              "cw_pump_kw"))
O_UPS, O_TR, O_LIGHT = SLOT["ups_loss_kw"], SLOT["transformer_loss_kw"], SLOT["lighting_kw"]
O_AIR_KW, O_AIR_F, O_AIR_W = SLOT["air_econ_kw"], SLOT["air_econ_frac"], SLOT["air_econ_water_l"]


def param_vector(p: DatacenterParams) -> np.ndarray:
    """The float64 parameter vector of one datacenter, in ``PARAM_NAMES`` order (the derived parameters from
    their terms' ``derive``)."""
    d = p.to_dict()
    derived: dict[str, float] = {}
    for m in MODULES:
        if m.TERM.derive is not None:
            derived.update(m.TERM.derive(p))
    missing = [n for n in DERIVED_PARAMS if n not in derived]
    if missing:
        raise ValueError(f"derived parameters no term's derive computes: {missing}")
    vals = []
    for name in PARAM_NAMES:
        vals.append(derived[name] if name in derived else float(d[name]))
    return np.asarray(vals, dtype=np.float64)


@njit(cache=True, nogil=True)
def design_point(p, cap_cores, cap_gpus, cap_mem):
    """Design (full-load) values: IT heat excl. fans, IT power, cooling load, heat rejected (kW)."""
    # (np.ceil stays a float: no undefined float -> int conversion for a non-finite capacity)
    n_servers = np.ceil(cap_cores / p[P_CORES_PER_SERVER]) if cap_cores > 0 else 0.0
    t_in = p[P_SUPPLY] + p[P_SUPPLY_APP]
    heat = (n_servers * cpu_server_power(p, 1.0, t_in) + cap_gpus * gpu_power(p, 1.0)
            + cap_mem * (p[P_MEM_STATIC] + p[P_MEM_DYN])) / 1000.0
    it_fan = p[P_ITFAN_FRAC] * heat
    it = heat + it_fan
    crac = p[P_CRAC_FRAC] * it
    cool = it + crac
    rej = cool * (1.0 + 1.0 / chiller_cop(p))
    return n_servers, heat, it, cool, rej


@njit(cache=True, nogil=True)
def dc_step(p, cap_cores, cap_gpus, cap_mem, busy_cores, busy_gpus, busy_mem, t_db, t_wb, on_c, on_g, wk_c, wk_g,
            managed, out):
    """Fill ``out`` (N_OUT) for one datacenter and step: busy_* time-weighted over the step, t_db/t_wb outdoor dry /
    wet bulb (degC), on_*/wk_* and ``managed`` the server power states (``it.it_power``)."""
    n_servers, heat_d, it_d, cool_d, rej_d = design_point(p, cap_cores, cap_gpus, cap_mem)
    rho_cp = p[P_RHO] * p[P_CP]  # J/(m3 K)
    t_in = p[P_SUPPLY] + p[P_SUPPLY_APP]

    # IT equipment (kW), incl. server fans
    itv = it_power(p, n_servers, heat_d, it_d, rho_cp, t_in, cap_cores, cap_gpus, cap_mem, busy_cores,
                   busy_gpus, busy_mem, on_c, on_g, wk_c, wk_g, managed)
    for k in range(IT_SLOTS.shape[0]):
        out[IT_SLOTS[k]] = itv[k]
    it = itv[IT_KW]
    v_srv = itv[IT_AIRFLOW]

    # air side
    t_out, t_ret, v_crac, crac = air_side(p, it, it_d, v_srv, rho_cp, t_in)

    # conservation: the cooling load is all electrical power dissipated in the white space (IT, CRAC fans,
    # lighting; the UPS and transformer losses are rejected outside it)
    light = lighting(p, it_d)
    cool = it + crac + light

    # outside air carries f_air of it (exactly 0 without an air-side economizer); the chiller plant (chiller,
    # water-side economizer, heat rejection, pumps: PLANT_OUT order) the rest, and is off when f_air = 1
    f_air, dw = air_economizer(p, t_db, t_wb, t_ret)
    air_kw = f_air * cool
    plant = facility_from_cooling(p, cool - air_kw if f_air > 0.0 else cool, t_db, t_wb, cool_d, rej_d)
    for k in range(PLANT_SLOTS.shape[0]):
        out[PLANT_SLOTS[k]] = plant[k]
    wat = plant_water(p, plant[PL_REJ], rej_d, t_db, plant[PL_TCOIL], plant[PL_ADIA] > 0.5)
    for k in range(WATER_SLOTS.shape[0]):
        out[WATER_SLOTS[k]] = wat[k]
    if f_air >= 1.0:
        for k in range(PLANT_OFF.shape[0]):
            out[PLANT_OFF[k]] = 0.0
    air_w = air_econ_water_l(p, dw, v_crac)
    out[O_AIR_KW] = air_kw
    out[O_AIR_F] = f_air
    out[O_AIR_W] = air_w
    if air_w > 0.0:
        out[O_WATER] += air_w
    # the power chain (UPS, transformer) behind IT, CRAC fans and the plant
    ups, tr, total = chain(p, it + crac + out[O_CHILLER] + out[O_TOWER] + out[O_CHW_PUMP] + out[O_CW_PUMP], it,
                           it_d, light, rej_d)

    out[O_CRAC] = crac
    out[O_UPS] = ups
    out[O_TR] = tr
    out[O_LIGHT] = light
    out[O_TOTAL] = total
    out[O_COOL] = cool
    out[O_TIN] = t_in
    out[O_TOUT] = t_out
    out[O_TRET] = t_ret
    out[O_V_CRAC] = v_crac


#: rows of the server-state array ``srv`` (4, n_dc, n): time-weighted CPU-only / GPU servers on,
#: CPU-only / GPU servers waking (what the engine books in ``State.srv``)
SRV_ON_C, SRV_ON_G, SRV_WK_C, SRV_WK_G = range(4)


@njit(cache=True, nogil=True)
def physics_kernel(params, cap_cores, cap_gpus, cap_mem, busy_cores, busy_gpus, busy_mem,
                   temp_c, wetbulb_c, srv, managed, out):
    """Apply dc_step to every (dc, step): params (n_dc, N_PARAMS); busy/temp (n_dc, n); srv
    (4, n_dc, >= n) server states (read only when ``managed``); out (N_OUT, n_dc, n)."""
    n_dc, n = busy_cores.shape
    buf = np.empty(N_OUT)
    for d in range(n_dc):
        p = params[d]
        for k in range(n):
            dc_step(p, cap_cores[d], cap_gpus[d], cap_mem[d], busy_cores[d, k], busy_gpus[d, k],
                    busy_mem[d, k], temp_c[d, k], wetbulb_c[d, k], srv[SRV_ON_C, d, k], srv[SRV_ON_G, d, k],
                    srv[SRV_WK_C, d, k], srv[SRV_WK_G, d, k], managed, buf)
            for o in range(N_OUT):
                out[o, d, k] = buf[o]


def compute(params, cap_cores, cap_gpus, cap_mem, busy_cores, busy_gpus, busy_mem, temp_c, wetbulb_c,
            servers=None):
    """Python wrapper: a dict name -> (n_dc, n) array of every output, in ``OUT_NAMES`` order. ``servers``: None =
    every server on (``power="always_on"``); else (4, n_dc, n) time-weighted [CPU-only on, GPU on, CPU-only waking, GPU
    waking], broadcast like the busy arrays."""
    busy_cores = np.ascontiguousarray(np.atleast_2d(busy_cores), dtype=np.float64)
    shape = busy_cores.shape
    b = [np.ascontiguousarray(np.broadcast_to(np.atleast_2d(x), shape), dtype=np.float64)
         for x in (busy_gpus, busy_mem, temp_c, wetbulb_c)]
    params = np.ascontiguousarray(np.atleast_2d(params), dtype=np.float64)
    caps = [np.ascontiguousarray(np.atleast_1d(c), dtype=np.float64) for c in (cap_cores, cap_gpus, cap_mem)]
    if servers is None:
        srv = np.zeros((4, shape[0], shape[1]))
    else:
        srv = np.stack([np.broadcast_to(np.atleast_2d(np.asarray(x, dtype=np.float64)), shape) for x in servers])
        srv = np.ascontiguousarray(srv)
    out = np.empty((N_OUT, shape[0], shape[1]))
    physics_kernel(params, caps[0], caps[1], caps[2], busy_cores, b[0], b[1], b[2], b[3], srv, servers is not None,
                   out)
    return {name: out[SLOT[name]] for name in OUT_NAMES}


@njit(cache=True, nogil=True)
def priced(kwh, per_mwh):
    """Energy priced by a per-MWh signal, ``kwh x rate / 1000``: USD/MWh gives USD, gCO2eq/kWh (= kg/MWh) gives
    kg. The one place energy is priced: the run's results (``sim_core.result``, on arrays) and the step API
    (:func:`step_energy`, per DC) both call it, so the two can never price a kWh differently."""
    return kwh * per_mwh / 1000.0


# ---------------------------------------------------------------- one step of the step API
#: per-DC rows (and step sums) written by :func:`step_energy`
STEP_DC_NAMES = ("it_kwh", "total_kwh", "cost_usd", "carbon_kg", "water_l", "unmet_cooling_kwh",
                 "busy_cores", "busy_gpus", "busy_mem_gb", "idle_gpus",
                 "it_idle_kwh", "it_sleep_kwh", "it_wake_kwh", "servers_on", "servers_waking", "servers_asleep")
N_STEP_DC = len(STEP_DC_NAMES)


@njit(cache=True, nogil=True)
def step_energy(params, cap_cores, cap_gpus, cap_mem, part, srv, managed, j, temp_c, wetbulb_c, carbon, price, k,
                buf, out, tot):
    """One step of every datacenter exactly as the run results compute it (same ``dc_step``, same arithmetic): busy
    = max(part[:, d, j], 0), servers srv[:, d, j], signals at bundle step ``k``; ``out`` (N_STEP_DC, n_dc) in
    ``STEP_DC_NAMES`` order, their sums into ``tot``; ``buf`` is scratch (N_OUT)."""
    n_dc = cap_cores.shape[0]
    for r in range(N_STEP_DC):
        tot[r] = 0.0
    for d in range(n_dc):
        bc = max(part[0, d, j], 0.0)
        bg = max(part[1, d, j], 0.0)
        bm = max(part[2, d, j], 0.0)
        dc_step(params[d], cap_cores[d], cap_gpus[d], cap_mem[d], bc, bg, bm, temp_c[d, k], wetbulb_c[d, k],
                srv[SRV_ON_C, d, j], srv[SRV_ON_G, d, j], srv[SRV_WK_C, d, j], srv[SRV_WK_G, d, j], managed, buf)
        total_kwh = buf[O_TOTAL] * STEP_HOURS
        out[0, d] = buf[O_IT] * STEP_HOURS
        out[1, d] = total_kwh
        out[2, d] = priced(total_kwh, price[d, k])
        out[3, d] = priced(total_kwh, carbon[d, k])
        out[4, d] = buf[O_WATER]
        out[5, d] = buf[O_UNMET] * STEP_HOURS
        out[6, d] = bc
        out[7, d] = bg
        out[8, d] = bm
        out[9, d] = max(cap_gpus[d] - bg, 0.0)
        out[10, d] = buf[O_IDLE] * STEP_HOURS
        out[11, d] = buf[O_SLEEP] * STEP_HOURS
        out[12, d] = buf[O_WAKE] * STEP_HOURS
        out[13, d] = buf[O_SRV_ON]
        out[14, d] = buf[O_SRV_WAKE]
        out[15, d] = buf[O_SRV_SLEEP]
        for r in range(N_STEP_DC):
            tot[r] += out[r, d]
