"""The IT equipment term: servers (CPU, leakage with inlet temperature), GPUs per device, memory and server fans,
in their power states (on, waking, asleep) (docs/model.md §4). :func:`it_power` is one site and step."""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from .laws import fan_power
from .params import P
from .term import Term

OUTPUTS = ("it_cpu_kw", "it_gpu_kw", "it_mem_kw", "it_fan_kw", "it_kw",
           # server power states (time-weighted over the step) and the IT power of awake-but-unused
           # capacity (idle), of sleeping servers and of waking servers (kW, server fans excluded)
           "servers_on", "servers_waking", "servers_asleep", "it_idle_kw", "it_sleep_kw", "it_wake_kw",
           "server_airflow_m3_s")


def derive(p) -> dict[str, float]:
    """``gpu_fleet_average``: 1 for ``gpu_power_model="fleet_average"`` (gridshift 0.1's always-on GPUs)."""
    return {"gpu_fleet_average": 1.0 if p.gpu_power_model == "fleet_average" else 0.0}


TERM = Term(
    "it",
    ("cores_per_server", "cpu_server_max_w", "cpu_server_idle_w", "cpu_server_nameplate_w",
     "cpu_leakage_frac", "cpu_leakage_ref_c", "cpu_leakage_span_k",
     "gpu_idle_w", "gpu_max_w", "gpu_alloc_util", "gpus_per_server",
     "mem_static_w_per_gb", "mem_dynamic_w_per_gb",
     "it_fan_design_frac", "it_fan_min_airflow_ratio", "server_delta_t_design_k",
     "server_sleep_w", "gpu_sleep_w", "server_wake_s", "server_wake_power_frac", "server_spare_min",
     "gpu_fleet_average"),
    OUTPUTS, "servers, GPUs, memory and server fans in their power states",
    enters={"facility_power": ((1.0, "it_kw"),), "white_space_heat": ((1.0, "it_kw"),)},
    derive=derive,
)

P_CORES_PER_SERVER, P_CPU_MAX, P_CPU_IDLE = P["cores_per_server"], P["cpu_server_max_w"], P["cpu_server_idle_w"]
P_CPU_NAMEPLATE, P_LEAK_FRAC, P_LEAK_REF = P["cpu_server_nameplate_w"], P["cpu_leakage_frac"], P["cpu_leakage_ref_c"]
P_LEAK_SPAN, P_GPU_IDLE, P_GPU_MAX = P["cpu_leakage_span_k"], P["gpu_idle_w"], P["gpu_max_w"]
P_GPU_ALLOC_U, P_GPUS_PER_SERVER, P_MEM_STATIC = P["gpu_alloc_util"], P["gpus_per_server"], P["mem_static_w_per_gb"]
P_MEM_DYN, P_ITFAN_FRAC = P["mem_dynamic_w_per_gb"], P["it_fan_design_frac"]
P_ITFAN_MIN, P_SERVER_DT = P["it_fan_min_airflow_ratio"], P["server_delta_t_design_k"]
P_SLEEP_W, P_GPU_SLEEP_W, P_WAKE_S = P["server_sleep_w"], P["gpu_sleep_w"], P["server_wake_s"]
P_WAKE_FRAC, P_SPARE_MIN = P["server_wake_power_frac"], P["server_spare_min"]
P_GPU_FLEET = P["gpu_fleet_average"]  # gpu_power_model "fleet_average" (gridshift 0.1's always_on GPUs)
#: positions in :func:`it_power`'s tuple (``OUTPUTS`` order) of the IT power and the server airflow
IT_KW, IT_AIRFLOW = OUTPUTS.index("it_kw"), OUTPUTS.index("server_airflow_m3_s")


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
             busy_mem, on_c, on_g, wk_c, wk_g, managed):
    """The IT equipment of one datacenter and step: its ``OUTPUTS``, in that order (IT power in kW incl. server
    fans, the server airflow in m3/s).

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
    v_design = it_d * 1000.0 / (rho_cp * p[P_SERVER_DT])  # the server fans' design airflow (m3/s)
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
    return cpu, gpu, mem, it_fan, it, n_on, n_wk, n_sl, idle, sleep, wake, v_srv
