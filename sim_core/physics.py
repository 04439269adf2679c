"""Per-datacenter power, heat and water (docs/model.md §4, §4a, §4b) as Numba kernels.

:func:`dc_step`: one datacenter and step, from busy resources, server states and weather to every power
component: IT (:func:`it_power`), air side and air-side economizer (:func:`air_economizer`), cooling plant
(:func:`facility_from_cooling`, also sampled by the optimum through :func:`facility_kernel`), power-chain losses and
lighting. All helpers live in this module (Numba's cache is keyed per file). Parameters: a float64 vector per
datacenter (:func:`param_vector`, ``PARAM_NAMES`` order).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from gridshift.dc_params import DatacenterParams
from gridshift.timestep import STEP_H as STEP_HOURS
from gridshift.timestep import STEP_S

# ---------------------------------------------------------------- parameter vector layout
# Two blocks (IT, facility), each with its index constants below; indices are computed in this file (Numba
# freezes globals at compile time and keys its cache on this file, so they never go stale).
IT_PARAMS = (
    "cores_per_server", "cpu_server_max_w", "cpu_server_idle_w", "cpu_server_nameplate_w",
    "cpu_leakage_frac", "cpu_leakage_ref_c", "cpu_leakage_span_k",
    "gpu_idle_w", "gpu_max_w", "gpu_alloc_util", "gpus_per_server",
    "mem_static_w_per_gb", "mem_dynamic_w_per_gb",
    "it_fan_design_frac", "it_fan_min_airflow_ratio", "server_delta_t_design_k",
    # power states
    "server_sleep_w", "gpu_sleep_w", "server_wake_s", "server_wake_power_frac", "server_spare_min",
)
FACILITY_PARAMS = (
    "supply_air_c", "supply_approach_k", "return_approach_k", "air_density_kg_m3",
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
    "latent_heat_kj_per_kg", "drift_frac", "cw_range_k", "water_cp_kj_per_kg_k",
    "cycles_of_concentration",
    "ups_loss_c0", "ups_loss_c1", "ups_loss_c2", "transformer_nameplate_eff", "transformer_nameplate_pul",
    "lighting_frac", "inlet_dewpoint_min_c", "inlet_dewpoint_max_c", "inlet_rh_max",
)
# not dataclass fields: computed by param_vector from the ``condenser`` and ``economizer`` choices
# (a hybrid is a dry cooler, condenser_is_dry, with adiabatic pre-cooling, adiabatic_on)
DERIVED_PARAMS = ("condenser_is_water", "condenser_is_dry", "economizer_on", "adiabatic_on", "gpu_fleet_average",
                  "air_econ_on", "air_econ_evap", "air_w_lo", "air_w_hi")
PARAM_NAMES = IT_PARAMS + FACILITY_PARAMS + DERIVED_PARAMS
N_PARAMS = len(PARAM_NAMES)
_P = {name: i for i, name in enumerate(PARAM_NAMES)}
# IT equipment
P_CORES_PER_SERVER, P_CPU_MAX, P_CPU_IDLE = _P["cores_per_server"], _P["cpu_server_max_w"], _P["cpu_server_idle_w"]
P_CPU_NAMEPLATE, P_LEAK_FRAC, P_LEAK_REF = _P["cpu_server_nameplate_w"], _P["cpu_leakage_frac"], _P["cpu_leakage_ref_c"]
P_LEAK_SPAN, P_GPU_IDLE, P_GPU_MAX = _P["cpu_leakage_span_k"], _P["gpu_idle_w"], _P["gpu_max_w"]
P_GPU_ALLOC_U, P_GPUS_PER_SERVER, P_MEM_STATIC = _P["gpu_alloc_util"], _P["gpus_per_server"], _P["mem_static_w_per_gb"]
P_MEM_DYN, P_ITFAN_FRAC = _P["mem_dynamic_w_per_gb"], _P["it_fan_design_frac"]
P_ITFAN_MIN, P_SERVER_DT = _P["it_fan_min_airflow_ratio"], _P["server_delta_t_design_k"]
P_SLEEP_W, P_GPU_SLEEP_W, P_WAKE_S = _P["server_sleep_w"], _P["gpu_sleep_w"], _P["server_wake_s"]
P_WAKE_FRAC, P_SPARE_MIN = _P["server_wake_power_frac"], _P["server_spare_min"]
# facility: air side, chiller, tower, pumps, water
P_SUPPLY, P_SUPPLY_APP, P_RETURN_APP = _P["supply_air_c"], _P["supply_approach_k"], _P["return_approach_k"]
P_RHO, P_CP, P_CRAC_FRAC = _P["air_density_kg_m3"], _P["air_cp_j_per_kg_k"], _P["crac_fan_design_frac"]
P_CRAC_MIN, P_COP_WATER, P_COP_AIR = _P["crac_min_airflow_ratio"], _P["chiller_cop_water"], _P["chiller_cop_air"]
P_CAP_FACTOR, P_CHW_SUPPLY, P_CHW_DESIGN = _P["chiller_capacity_factor"], _P["chw_supply_c"], _P["chw_design_c"]
P_COND_DESIGN_W, P_COND_DESIGN_A = _P["cond_design_water_c"], _P["cond_design_air_c"]
P_CAP0, P_CAP1, P_CAP2 = _P["chiller_cap_c0"], _P["chiller_cap_c1"], _P["chiller_cap_c2"]
P_POW0, P_POW1, P_POW2 = _P["chiller_pow_c0"], _P["chiller_pow_c1"], _P["chiller_pow_c2"]
P_FLF0, P_FLF1, P_FLF2 = _P["chiller_flf_c0"], _P["chiller_flf_c1"], _P["chiller_flf_c2"]
P_COND_MIN, P_DT_MAX, P_MIN_PLR = _P["chiller_cond_min_c"], _P["chiller_dt_max"], _P["chiller_min_plr"]
P_CHW_RANGE, P_HX_APP, P_TOWER_WB = _P["chw_range_k"], _P["wse_hx_approach_k"], _P["tower_design_wetbulb_c"]
P_TOWER_APP, P_TOWER_FRAC = _P["tower_approach_k"], _P["tower_fan_design_frac"]
P_TOWER_SENS, P_TOWER_MIN = _P["tower_wetbulb_sens_per_k"], _P["tower_min_airflow_ratio"]
P_DRY_APP, P_DRY_FRAC = _P["dry_cooler_approach_k"], _P["dry_cooler_fan_design_frac"]
P_DRY_AIR_DT, P_SWITCHOVER = _P["dry_cooler_air_dt_k"], _P["hybrid_switchover_c"]
P_PAD_EFF, P_CHW_PUMP = _P["adiabatic_pad_effectiveness"], _P["chw_pump_design_frac"]
P_CW_PUMP, P_PUMP_MIN = _P["cw_pump_design_frac"], _P["pump_min_flow_ratio"]
P_PC0, P_PC1, P_PC2, P_PC3 = (_P[f"pump_curve_c{i}"] for i in range(4))
P_LATENT, P_DRIFT, P_CW_RANGE = _P["latent_heat_kj_per_kg"], _P["drift_frac"], _P["cw_range_k"]
P_WATER_CP, P_CYCLES = _P["water_cp_kj_per_kg_k"], _P["cycles_of_concentration"]
P_UPS0, P_UPS1, P_UPS2 = _P["ups_loss_c0"], _P["ups_loss_c1"], _P["ups_loss_c2"]
P_TR_EFF, P_TR_PUL = _P["transformer_nameplate_eff"], _P["transformer_nameplate_pul"]
P_LIGHT = _P["lighting_frac"]
P_AIR_ECON, P_AIR_EVAP = _P["air_econ_on"], _P["air_econ_evap"]  # air_economizer != "none", "direct_evaporative"
P_W_LO, P_W_HI = _P["air_w_lo"], _P["air_w_hi"]  # the inlet envelope's humidity ratios (envelope_ratios)
P_COND_WATER = _P["condenser_is_water"]  # wet cooling tower
P_COND_DRY = _P["condenser_is_dry"]  # dry cooler (condenser-water loop; "dry" or "hybrid")
P_ECON = _P["economizer_on"]  # integrated water-side economizer (water, dry or hybrid)
P_ADIABATIC = _P["adiabatic_on"]  # the dry cooler has adiabatic pre-cooling pads ("hybrid")
P_GPU_FLEET = _P["gpu_fleet_average"]  # gpu_power_model "fleet_average" (gridshift 0.1's always_on GPUs)

# ---------------------------------------------------------------- outputs of dc_step (same two blocks)
IT_OUT = ("it_cpu_kw", "it_gpu_kw", "it_mem_kw", "it_fan_kw", "it_kw",
          # server power states (time-weighted over the step) and the IT power of awake-but-unused
          # capacity (idle), of sleeping servers and of waking servers (kW, server fans excluded)
          "servers_on", "servers_waking", "servers_asleep", "it_idle_kw", "it_sleep_kw", "it_wake_kw")
FACILITY_OUT = (
    "crac_fan_kw", "chiller_kw", "tower_fan_kw", "chw_pump_kw", "cw_pump_kw", "total_kw",
    "cooling_load_kw", "unmet_cooling_kw", "heat_rejected_kw",
    "t_inlet_c", "t_outlet_c", "t_return_c", "t_cond_in_c",
    "server_airflow_m3_s", "crac_airflow_m3_s", "chiller_plr", "chiller_cap_kw",
    "water_evap_l", "water_drift_l", "water_blowdown_l", "water_l",
    "econ_kw", "econ_frac", "chiller_load_kw", "t_chw_return_c",
    # hybrid: 1.0 when the pads are wetted (0.0 otherwise and for every other condenser), and the air
    # temperature entering the heat-rejection equipment (the dry-bulb unless a hybrid's pads are on)
    "adiabatic_on", "t_coil_air_c",
    # electrical losses (UPS, transformer / distribution) and lighting, all in total_kw
    "ups_loss_kw", "transformer_loss_kw", "lighting_kw",
    # air-side economizer: the share of the cooling load outside air carries, and the water it evaporates
    # (evaporative cooling and humidification; also in water_l)
    "air_econ_kw", "air_econ_frac", "air_econ_water_l",
)
OUT_NAMES = IT_OUT + FACILITY_OUT
N_OUT = len(OUT_NAMES)
_O = {name: i for i, name in enumerate(OUT_NAMES)}
O_CPU, O_GPU, O_MEM, O_ITFAN, O_IT = (_O[n] for n in IT_OUT[:5])
O_SRV_ON, O_SRV_WAKE, O_SRV_SLEEP = _O["servers_on"], _O["servers_waking"], _O["servers_asleep"]
O_IDLE, O_SLEEP, O_WAKE = _O["it_idle_kw"], _O["it_sleep_kw"], _O["it_wake_kw"]
O_CRAC, O_CHILLER, O_TOWER, O_CHW_PUMP, O_CW_PUMP, O_TOTAL = (_O[n] for n in FACILITY_OUT[:6])
O_COOL, O_UNMET, O_REJ = _O["cooling_load_kw"], _O["unmet_cooling_kw"], _O["heat_rejected_kw"]
O_TIN, O_TOUT, O_TRET, O_TCOND = _O["t_inlet_c"], _O["t_outlet_c"], _O["t_return_c"], _O["t_cond_in_c"]
O_V_SERVER, O_V_CRAC = _O["server_airflow_m3_s"], _O["crac_airflow_m3_s"]
O_PLR, O_CAP = _O["chiller_plr"], _O["chiller_cap_kw"]
O_EVAP, O_DRIFT, O_BLOW, O_WATER = (_O[n] for n in ("water_evap_l", "water_drift_l", "water_blowdown_l",
                                                    "water_l"))
O_ECON, O_ECON_FRAC, O_CH_LOAD, O_TCHWR = (_O[n] for n in ("econ_kw", "econ_frac", "chiller_load_kw",
                                                           "t_chw_return_c"))
O_ADIA, O_TCOIL = _O["adiabatic_on"], _O["t_coil_air_c"]
O_UPS, O_TR, O_LIGHT = _O["ups_loss_kw"], _O["transformer_loss_kw"], _O["lighting_kw"]
O_AIR_KW, O_AIR_F, O_AIR_W = _O["air_econ_kw"], _O["air_econ_frac"], _O["air_econ_water_l"]
#: what :func:`facility_from_cooling` returns (the cooling plant's outputs), in this order (:func:`dc_step`
#: writes them into their ``OUT_NAMES`` slots, ``PLANT_SLOTS``; a test checks the two agree)
PLANT_OUT = ("chiller_kw", "tower_fan_kw", "chw_pump_kw", "cw_pump_kw", "unmet_cooling_kw", "heat_rejected_kw",
             "t_cond_in_c", "chiller_plr", "chiller_cap_kw", "water_evap_l", "water_drift_l", "water_blowdown_l",
             "water_l", "econ_kw", "econ_frac", "chiller_load_kw", "t_chw_return_c", "adiabatic_on", "t_coil_air_c")
#: the ``OUT_NAMES`` slot of each ``PLANT_OUT`` value
PLANT_SLOTS = np.array([_O[n] for n in PLANT_OUT], dtype=np.int64)
#: positions in :func:`facility_from_cooling`'s tuple of the plant's electrical loads and its unmet cooling
PL_CHILLER, PL_TOWER, PL_CHW_PUMP, PL_CW_PUMP, PL_UNMET = (PLANT_OUT.index(n) for n in (
    "chiller_kw", "tower_fan_kw", "chw_pump_kw", "cw_pump_kw", "unmet_cooling_kw"))
#: the plant's outputs that are 0 while outside air carries the whole load (the plant is off; its temperatures,
#: capacity and the coil air stay as computed)
PLANT_OFF = np.array([_O[n] for n in PLANT_OUT if n not in ("t_cond_in_c", "chiller_cap_kw", "t_chw_return_c",
                                                            "t_coil_air_c")], dtype=np.int64)



def envelope_ratios(p: DatacenterParams) -> tuple[float, float]:
    """(lowest, highest) humidity ratio admitted to the inlet envelope: at the minimum dew point; the lower of the
    maximum dew point's and the maximum RH's at the rack inlet. Once per datacenter, not every step."""
    t_in = p.supply_air_c + p.supply_approach_k
    hi = min(vapour_ratio(sat_pressure_kpa(p.inlet_dewpoint_max_c)),
             vapour_ratio(p.inlet_rh_max * sat_pressure_kpa(t_in)))
    return vapour_ratio(sat_pressure_kpa(p.inlet_dewpoint_min_c)), hi


def param_vector(p: DatacenterParams) -> np.ndarray:
    """The float64 parameter vector of one datacenter, in ``PARAM_NAMES`` order."""
    d = p.to_dict()
    w_lo, w_hi = envelope_ratios(p)
    derived = {
        "condenser_is_water": 1.0 if p.condenser == "water" else 0.0,
        "condenser_is_dry": 1.0 if p.condenser in ("dry", "hybrid") else 0.0,
        "economizer_on": 1.0 if p.economizer == "integrated" and p.condenser != "air" else 0.0,
        "adiabatic_on": 1.0 if p.condenser == "hybrid" else 0.0,
        "gpu_fleet_average": 1.0 if p.gpu_power_model == "fleet_average" else 0.0,
        "air_econ_on": 0.0 if p.air_economizer == "none" else 1.0,
        "air_econ_evap": 1.0 if p.air_economizer == "direct_evaporative" else 0.0,
        "air_w_lo": w_lo, "air_w_hi": w_hi,
    }
    vals = []
    for name in PARAM_NAMES:
        vals.append(derived[name] if name in derived else float(d[name]))
    return np.asarray(vals, dtype=np.float64)


# ---------------------------------------------------------------- helpers (jitted)
@njit(cache=True, nogil=True)
def fan_power(p_ref, v, v_ref):
    """Cubic fan law P = P_ref (V / V_ref)^3."""
    r = v / v_ref
    return p_ref * r * r * r


@njit(cache=True, nogil=True)
def cpu_server_power(p, u, t_inlet):
    """One CPU server's power (W) at utilisation u and inlet temperature (never above nameplate)."""
    leak = p[P_LEAK_FRAC] * p[P_CPU_MAX] * max(0.0, t_inlet - p[P_LEAK_REF]) / p[P_LEAK_SPAN]
    w = p[P_CPU_IDLE] + (p[P_CPU_MAX] - p[P_CPU_IDLE]) * u + leak
    return min(w, p[P_CPU_NAMEPLATE])


@njit(cache=True, nogil=True)
def gpu_power(p, u):
    """One GPU's power (W): P_idle + (P_max - P_idle) log2(1 + u) (Tang & Fu 2020)."""
    return p[P_GPU_IDLE] + (p[P_GPU_MAX] - p[P_GPU_IDLE]) * math.log2(1.0 + u)


@njit(cache=True, nogil=True)
def gpus_busy_power(p, b):
    """(Power W, device count) of ``b`` allocated GPUs (time-weighted, may be fractional), per device: floor(b)
    devices at gpu_power(gpu_alloc_util), one at gpu_power(f x gpu_alloc_util), f = b - floor(b)."""
    if b <= 0.0:
        return 0.0, 0.0
    u = p[P_GPU_ALLOC_U]
    nf = np.floor(b)
    f = b - nf
    if f > 0.0:
        return nf * gpu_power(p, u) + gpu_power(p, f * u), nf + 1.0
    return nf * gpu_power(p, u), nf


@njit(cache=True, nogil=True)
def server_layout(p, cap_cores, cap_gpus, cap_mem):
    """(servers, GPU servers, GPUs per GPU server, memory GB per server): ceil(cores / cores_per_server) servers
    sharing the memory, the GPUs in ceil(GPUs / gpus_per_server) of them (all of them when that is more); no cores:
    no servers, GPUs and memory always on."""
    # (np.ceil stays a float: no undefined float -> int conversion for a non-finite capacity)
    n = np.ceil(cap_cores / p[P_CORES_PER_SERVER]) if cap_cores > 0 else 0.0
    ng = 0.0
    gps = 0.0
    if n > 0 and cap_gpus > 0:
        ng = np.ceil(cap_gpus / p[P_GPUS_PER_SERVER])
        gps = p[P_GPUS_PER_SERVER]
        if ng > n:
            ng = n
            gps = cap_gpus / n
    mps = cap_mem / n if n > 0 else 0.0
    return n, ng, gps, mps


@njit(cache=True, nogil=True)
def it_power(p, n_servers, heat_d, it_d, rho_cp, t_in, cap_cores, cap_gpus, cap_mem, busy_cores, busy_gpus,
             busy_mem, on_c, on_g, wk_c, wk_g, managed, out):
    """The IT equipment of one datacenter and step: fills the ``IT_OUT`` slots of ``out`` and returns
    (IT power kW incl. server fans, server airflow m3/s).

    ``managed`` False (``power="always_on"``): every server on, the CPU load spread over all, GPUs per device
    (``gpu_power_model="fleet_average"``, gridshift 0.1 only: the curve at the fleet-average allocation).
    ``managed`` True: ``on_c``/``on_g`` CPU-only/GPU servers on, ``wk_c``/``wk_g`` waking (time-weighted), the
    rest asleep: CPUs on at their own utilisation, waking at server_wake_power_frac x max, asleep at
    server_sleep_w; GPUs per device (:func:`gpus_busy_power`), idle or asleep otherwise; memory static W/GB when
    on or waking plus dynamic W/GB in use; fans of the servers on or waking (share a) move the airflow their heat
    needs, floor it_fan_min_airflow_ratio, power a x P_fan,design x r^3. Idle power: the draw of capacity on but
    unused; sleep and wake power: the servers in those states (fans in none of the three).
    """
    w_gidle = p[P_GPU_IDLE]
    w_mstat = p[P_MEM_STATIC]
    if not managed:
        u_cpu = min(max(busy_cores / cap_cores, 0.0), 1.0) if cap_cores > 0 else 0.0
        u_gpu = min(max(busy_gpus / cap_gpus, 0.0), 1.0) if cap_gpus > 0 else 0.0
        used_mem = min(max(busy_mem, 0.0), cap_mem)
        cpu = n_servers * cpu_server_power(p, u_cpu, t_in) / 1000.0
        if p[P_GPU_FLEET] > 0.5:  # gridshift 0.1: the curve at the fleet-average allocation, every GPU there
            gpu = cap_gpus * gpu_power(p, u_gpu) / 1000.0 if cap_gpus > 0 else 0.0
            g_free_w = (cap_gpus - u_gpu * cap_gpus) * w_gidle
        else:  # per device, as managed: the allocated devices on the curve, the others idle
            busy_gpu_w, n_dev = gpus_busy_power(p, min(max(busy_gpus, 0.0), cap_gpus))
            g_free_w = max(cap_gpus - n_dev, 0.0) * w_gidle
            gpu = (busy_gpu_w + g_free_w) / 1000.0
        mem = (cap_mem * p[P_MEM_STATIC] + used_mem * p[P_MEM_DYN]) / 1000.0
        heat = cpu + gpu + mem
        # server fans: airflow follows the heat (min ratio), cubic power
        v_design = it_d * 1000.0 / (rho_cp * p[P_SERVER_DT])
        r_srv = max(p[P_ITFAN_MIN], heat / heat_d) if heat_d > 0 else p[P_ITFAN_MIN]
        v_srv = r_srv * v_design
        it_fan = fan_power(p[P_ITFAN_FRAC] * heat_d, v_srv, v_design)
        n_on = n_servers
        n_wk = 0.0
        n_sl = 0.0
        idle = (n_servers * cpu_server_power(p, 0.0, t_in) * (1.0 - u_cpu)
                + g_free_w + (cap_mem - used_mem) * w_mstat) / 1000.0
        sleep = 0.0
        wake = 0.0
    else:
        _, _, gps, mps = server_layout(p, cap_cores, cap_gpus, cap_mem)
        n_on = max(on_c, 0.0) + max(on_g, 0.0)
        n_wk = max(wk_c, 0.0) + max(wk_g, 0.0)
        n_sl = max(n_servers - n_on - n_wk, 0.0)
        if n_servers > 0:
            cores_on = min(n_on * p[P_CORES_PER_SERVER], cap_cores)
            g_on = min(max(on_g, 0.0) * gps, cap_gpus)
            g_wk = min(max(wk_g, 0.0) * gps, cap_gpus - g_on)
            m_on = min(n_on * mps, cap_mem)
            m_wk = min(n_wk * mps, cap_mem - m_on)
            a = min((n_on + n_wk) / n_servers, 1.0)
        else:  # no servers: GPUs and memory are always on
            cores_on = 0.0
            g_on = cap_gpus
            g_wk = 0.0
            m_on = cap_mem
            m_wk = 0.0
            a = 1.0
        g_sl = max(cap_gpus - g_on - g_wk, 0.0)
        u_on = min(max(busy_cores / cores_on, 0.0), 1.0) if cores_on > 0 else 0.0
        b_gpu = min(max(busy_gpus, 0.0), g_on)
        used_mem = min(max(busy_mem, 0.0), m_on)
        w_srv_idle = cpu_server_power(p, 0.0, t_in)
        w_wake = p[P_WAKE_FRAC] * p[P_CPU_MAX]
        cpu_w = n_on * cpu_server_power(p, u_on, t_in) + n_wk * w_wake + n_sl * p[P_SLEEP_W]
        busy_gpu_w, n_dev = gpus_busy_power(p, b_gpu)
        g_free = max(g_on - n_dev, 0.0)  # devices on that hold no allocation
        gpu_w = busy_gpu_w + g_free * w_gidle + g_wk * w_gidle + g_sl * p[P_GPU_SLEEP_W]
        mem_w = (m_on + m_wk) * w_mstat + used_mem * p[P_MEM_DYN]
        cpu = cpu_w / 1000.0
        gpu = gpu_w / 1000.0
        mem = mem_w / 1000.0
        heat = cpu + gpu + mem
        v_design = it_d * 1000.0 / (rho_cp * p[P_SERVER_DT])
        if a > 0.0 and heat_d > 0.0:
            r_srv = max(p[P_ITFAN_MIN], heat / (a * heat_d))
            v_srv = a * r_srv * v_design
            it_fan = a * p[P_ITFAN_FRAC] * heat_d * r_srv * r_srv * r_srv
        else:  # every server asleep: no server fan runs
            v_srv = 0.0
            it_fan = 0.0
        idle = (n_on * w_srv_idle * (1.0 - u_on) + g_free * w_gidle + (m_on - used_mem) * w_mstat) / 1000.0
        sleep = (n_sl * p[P_SLEEP_W] + g_sl * p[P_GPU_SLEEP_W]) / 1000.0
        wake = (n_wk * w_wake + g_wk * w_gidle + m_wk * w_mstat) / 1000.0
    it = heat + it_fan
    out[O_CPU] = cpu
    out[O_GPU] = gpu
    out[O_MEM] = mem
    out[O_ITFAN] = it_fan
    out[O_IT] = it
    out[O_SRV_ON] = n_on
    out[O_SRV_WAKE] = n_wk
    out[O_SRV_SLEEP] = n_sl
    out[O_IDLE] = idle
    out[O_SLEEP] = sleep
    out[O_WAKE] = wake
    return it, v_srv


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
def adiabatic_evaporation_l(p, q_rej_kw, q_rej_design_kw, t_db, t_coil, seconds):
    """Water the pads evaporate (L) in ``seconds``: m_air c_p (T_db - T_coil) / h_fg with the coil's air mass flow
    m_air = r Q_rej,design / (c_p dT_air,design), r its fans' airflow ratio (clamped as their power)."""
    if q_rej_design_kw <= 0.0:
        return 0.0
    r = min(max(q_rej_kw / q_rej_design_kw, p[P_TOWER_MIN]), 1.0)
    return r * q_rej_design_kw * (t_db - t_coil) / p[P_DRY_AIR_DT] * seconds / p[P_LATENT]


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


@njit(cache=True, nogil=True, inline="always")
def ups_loss(p, it, it_d):
    """UPS loss (kW) carrying ``it`` kW, rated at the design IT power ``it_d``: the rating times
    c0 + c1 x + c2 x^2 at load fraction x = it / it_d (no-load, proportional, square-law losses)."""
    if it_d <= 0.0:
        return 0.0
    x = it / it_d
    return it_d * (p[P_UPS0] + x * (p[P_UPS1] + x * p[P_UPS2]))


@njit(cache=True, nogil=True, inline="always")
def transformer_loss(p, load, rated):
    """Transformer / distribution loss (kW) serving ``load`` kW, rated ``rated`` kW: no-load loss plus load
    loss x (load / rated)^2, both from the nameplate efficiency at per-unit load ``transformer_nameplate_pul``
    with the maximum efficiency there (no-load loss = load loss at that load; EnergyPlus's
    ElectricLoadCenter:Transformer nominal-efficiency method)."""
    if rated <= 0.0:
        return 0.0
    pul = p[P_TR_PUL]
    half = 0.5 * pul * rated * (1.0 / p[P_TR_EFF] - 1.0)  # each of the two losses at the nameplate load
    y = load / rated
    return half + half * (y * y) / (pul * pul)


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


# inlined, returning a tuple dc_step writes itself: as a call, or writing into ``out``, dc_step ran 5-11 % slower
@njit(cache=True, nogil=True, inline="always")
def facility_from_cooling(p, cool, t_db, t_wb, cool_d, rej_d):
    """The cooling plant of one datacenter and step from its cooling load ``cool`` (kW): the ``PLANT_OUT`` values.
    ``t_db``/``t_wb``: outdoor dry/wet bulb (degC); ``cool_d``/``rej_d``: design cooling load and heat rejected
    (kW, :func:`design_point`). The one model of the plant: :func:`dc_step` calls it, the optimum's power bound
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

    # water (L per step): a wet tower rejects all its heat (economizer hours included) by evaporation,
    # plus drift and blowdown; a hybrid evaporates what its pads take out of the air (only when they are
    # on; no drift, pad bleed-off left out); a dry cooler or an air-cooled condenser uses none
    if wet:
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

    return (chiller, tower, chw_pump, cw_pump, unmet, rej, t_cond, plr, cap_avail, evap, drift, blow,
            evap + drift + blow, econ, f_econ, ch_load, t_chwr, 1.0 if pads else 0.0, t_coil)


@njit(cache=True, nogil=True)
def dc_step(p, cap_cores, cap_gpus, cap_mem, busy_cores, busy_gpus, busy_mem, t_db, t_wb, on_c, on_g, wk_c, wk_g,
            managed, out):
    """Fill ``out`` (N_OUT) for one datacenter and step: busy_* time-weighted over the step, t_db/t_wb outdoor dry /
    wet bulb (degC), on_*/wk_* and ``managed`` the server power states (:func:`it_power`)."""
    n_servers, heat_d, it_d, cool_d, rej_d = design_point(p, cap_cores, cap_gpus, cap_mem)
    rho_cp = p[P_RHO] * p[P_CP]  # J/(m3 K)
    t_in = p[P_SUPPLY] + p[P_SUPPLY_APP]

    # IT equipment (kW), incl. server fans
    it, v_srv = it_power(p, n_servers, heat_d, it_d, rho_cp, t_in, cap_cores, cap_gpus, cap_mem, busy_cores,
                         busy_gpus, busy_mem, on_c, on_g, wk_c, wk_g, managed, out)

    # air side
    t_out = t_in + it * 1000.0 / (rho_cp * v_srv) if v_srv > 0 else t_in
    t_ret = t_out + p[P_RETURN_APP]
    dt_crac = t_ret - p[P_SUPPLY]
    v_crac = it * 1000.0 / (rho_cp * dt_crac)
    dt_crac_d = p[P_SERVER_DT] + p[P_SUPPLY_APP] + p[P_RETURN_APP]
    v_crac_d = it_d * 1000.0 / (rho_cp * dt_crac_d)
    v_crac_run = max(v_crac, p[P_CRAC_MIN] * v_crac_d)
    crac = fan_power(p[P_CRAC_FRAC] * it_d, v_crac_run, v_crac_d)

    # conservation: the cooling load is all electrical power dissipated in the white space (IT, CRAC fans,
    # lighting; the UPS and transformer losses are rejected outside it)
    light = p[P_LIGHT] * it_d
    cool = it + crac + light

    # outside air carries f_air of it (exactly 0 without an air-side economizer); the chiller plant (chiller,
    # water-side economizer, heat rejection, pumps, water: PLANT_OUT order) the rest, and is off when f_air = 1
    f_air, dw = air_economizer(p, t_db, t_wb, t_ret)
    air_kw = f_air * cool
    plant = facility_from_cooling(p, cool - air_kw if f_air > 0.0 else cool, t_db, t_wb, cool_d, rej_d)
    for k in range(PLANT_SLOTS.shape[0]):
        out[PLANT_SLOTS[k]] = plant[k]
    if f_air >= 1.0:
        for k in range(PLANT_OFF.shape[0]):
            out[PLANT_OFF[k]] = 0.0
    air_w = dw * p[P_RHO] * v_crac * STEP_S  # kg = L of water per step
    out[O_AIR_KW] = air_kw
    out[O_AIR_F] = f_air
    out[O_AIR_W] = air_w
    if air_w > 0.0:
        out[O_WATER] += air_w
    total = it + crac + out[O_CHILLER] + out[O_TOWER] + out[O_CHW_PUMP] + out[O_CW_PUMP]
    # the power chain: the UPS carries the IT, the transformer everything behind it (rated at the design
    # facility load, IT + CRAC fans + chiller = rej_d); each term is exactly 0 when its parameters say none
    ups = ups_loss(p, it, it_d)
    behind = total + light + ups
    tr = transformer_loss(p, behind, rej_d)
    total = behind + tr

    out[O_CRAC] = crac
    out[O_UPS] = ups
    out[O_TR] = tr
    out[O_LIGHT] = light
    out[O_TOTAL] = total
    out[O_COOL] = cool
    out[O_TIN] = t_in
    out[O_TOUT] = t_out
    out[O_TRET] = t_ret
    out[O_V_SERVER] = v_srv
    out[O_V_CRAC] = v_crac


@njit(cache=True, nogil=True)
def facility_kernel(p, cool, t_db, t_wb, cool_d, rej_d, plant_kw, unmet_kw):
    """:func:`facility_from_cooling` over 1-D arrays (same length): plant power (kW, :func:`dc_step`'s order) into
    ``plant_kw``, unmet cooling into ``unmet_kw``. Here because Numba's cache is keyed on the caller's file."""
    for i in range(cool.shape[0]):
        plant = facility_from_cooling(p, cool[i], t_db[i], t_wb[i], cool_d, rej_d)
        plant_kw[i] = plant[PL_CHILLER] + plant[PL_TOWER] + plant[PL_CHW_PUMP] + plant[PL_CW_PUMP]
        unmet_kw[i] = plant[PL_UNMET]


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
    """Python wrapper: a dict name -> (n_dc, n) array of every OUT_NAMES metric. ``servers``: None = every server
    on (``power="always_on"``); else (4, n_dc, n) time-weighted [CPU-only on, GPU on, CPU-only waking, GPU
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
    return {name: out[i] for i, name in enumerate(OUT_NAMES)}


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
