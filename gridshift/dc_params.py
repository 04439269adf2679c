"""Physical parameters of one datacenter: the ONE place where their defaults live.

Stdlib only, so that the bundle builder can import it to write ``datacenters.json``'s
``physics`` object and ``sim_core`` can read it back. Every field name carries its unit; every
default carries a note on where the number comes from, and every numeric field a valid range with its
physical reason (``PARAM_RANGES``, one table next to the fields): a value of the wrong type, non-finite or
outside its range, or breaking a joint rule (``DatacenterParams._check_joint``), is refused by name with a
:class:`ParamError`, wherever the parameters enter. ``to_dict``/``from_dict`` round-trip through JSON and
reject unknown keys.

The model that uses these numbers is described in ``docs/simulation.md`` (section Simulation) and
specified in docs/model.md §4.
"""

from __future__ import annotations

import dataclasses
import json
import math
from dataclasses import dataclass, field, fields
from typing import Any

from gridshift.param_ranges import PARAM_RANGES

_DT_INPUTS = "chiller_cond_min_c, cond_design_water_c, chw_supply_c, chw_design_c, chiller_dt_max"
_PUMP_INPUTS = ("chiller_cop_water (chiller_cop_air when air-cooled), chiller_capacity_factor, the chiller curves "
                "and chiller_min_plr")

__all__ = ["DatacenterParams", "GPU_PRESETS", "GPU_GENERATIONS", "GpuGeneration",
           "CONDENSER_TYPES", "ECONOMIZER_TYPES", "AIR_ECONOMIZER_TYPES",
           "CHILLER_2015", "FACILITY_PRESETS",
           "GPU_POWER_MODELS", "ABSENT_MEANS", "PARAM_RANGES", "ParamError", "physics_column"]

#: GPU boards: (idle W, max W). Max = board power (TDP):
#: * V100 250 W: NVIDIA Tesla V100 PCIe Product Brief PB-08744-001_v03 (Oct 2017), board power 250 W (300 W
#:   for SXM2), as reported by hwupgrade.it at launch (docs/validation.md, published figure [19]).
#: * A100 400 W: NVIDIA A100 Tensor Core GPU datasheet (2021), "Max thermal design power (TDP)": 400 W for the
#:   A100 SXM (40 and 80 GB; 250-300 W PCIe); the "Thermal Design Power (TDP) from nvidia-smi" of the A100 40 GB
#:   SXM4 in AWS p4d.24xlarge instances is "400W" (S. Prasanna, table of AWS GPU instances,
#:   gist.github.com/shashankprasanna/10ebe6dc1ba1d8d93db17da4e2cc890e); Hugging Face lists "Power 400W"
#:   (huggingface.co/hardware/a100).
#: * H100 700 W: NVIDIA H100 Tensor Core GPU datasheet, "Max thermal design power (TDP) Up to 700W
#:   (configurable)" for the H100 SXM (300-350 W PCIe); "NVIDIA H100 SXM (Data Center Version): Up to 700 Watts"
#:   (RunPod, runpod.io/ai-faq/what-is-the-power-consumption-of-the-nvidia-h100-gpu); "NVIDIA SXM H100 ... Power
#:   700W" (huggingface.co/hardware/h100).
#: Idle: OUR CHOICE, no measured idle figure per model was read. V100 35 W: SustainCluster's
#: configs/dcs/dc_config.json (HewlettPackard/sustain-cluster, commit 293fbd1), the model the log2 GPU curve
#: comes from, gives "NVIDIA_V100": [25, 250], i.e. 25 W idle; we keep 35 W because every published result
#: uses it; changing it is open (docs/simulation.md, "Defaults that differ from their best source"). A100
#: 50 W, H100 70 W: 12.5 % and 10 % of board power, in line with the V100's 14 %; the only measurement read
#: gives increments, not absolute idle power: a CUDA context adds "+26-66 W over bare idle (26-50 W on HBM
#: architectures ...)" on H100 and A100 (Vadari, "The Model Parking Tax", arXiv:2605.23918, abstract).
GPU_PRESETS: dict[str, tuple[float, float]] = {
    "V100": (35.0, 250.0),
    "A100": (50.0, 400.0),
    "H100": (70.0, 700.0),
}


@dataclass(frozen=True)
class GpuGeneration:
    """A site's GPU hardware: 8-GPU servers of one board (``GPU_PRESETS``) and the server's host power.

    The model's GPU server is one of the site's CPU servers (its CPUs, memory and fans are charged there) with
    ``gpus_per_server`` GPUs. An 8-GPU HGX/DGX server draws more than its GPUs and such a CPU server: NVSwitches,
    NICs, storage and the fans of a 6.5-10.2 kW chassis. ``host_extra_w`` is that remainder at the system's
    rated maximum: system power - 8 x board TDP - ``cpu_server_max_w`` (400 W, the CPU server of the model).
    It is spread over the 8 GPUs and drawn in proportion to their activity: it is added to each GPU's maximum
    on the log2 curve (``gpu_max_w`` = board TDP + host_extra_w / 8), not to its idle power (no idle system
    power of either DGX was read), so at full load a server draws its rated maximum and at idle its boards'
    idle power (an upper bound at full load: the rating is a power-supply budget, not a measurement).
    """

    model: str
    system_max_w: float  # the 8-GPU system's rated maximum power (W); 0 = the server is the model's CPU server
    source: str

    @property
    def board(self) -> tuple[float, float]:
        return GPU_PRESETS[self.model]

    @property
    def host_extra_w(self) -> float:
        """The server's power beyond its 8 boards and the model's CPU server, at its rated maximum (W)."""
        if self.system_max_w <= 0.0:
            return 0.0
        return self.system_max_w - 8.0 * self.board[1] - DatacenterParams.cpu_server_max_w

    def physics(self) -> dict[str, object]:
        """The ``DatacenterParams`` overrides of this generation."""
        idle, peak = self.board
        return {"gpu_model": self.model, "gpu_idle_w": idle, "gpu_max_w": peak + self.host_extra_w / 8.0,
                "gpus_per_server": 8.0}


#: The GPU generations a site can have (``--gpu``). ``V100``: the model before issue 34, bit for bit (the board
#: alone, its server the model's CPU server: no host extra). ``A100``: NVIDIA DGX A100 datasheet, "System Power
#: Usage 6.5 kW max" (8 x A100 SXM 40/80 GB): host extra 6,500 - 3,200 - 400 = 2,900 W, 362.5 W per GPU.
#: ``H100``: NVIDIA DGX H100 datasheet, "System power usage ~10.2 kW max" (8 x H100 SXM): host extra 10,200 -
#: 5,600 - 400 = 4,200 W, 525 W per GPU.
GPU_GENERATIONS: dict[str, GpuGeneration] = {
    "V100": GpuGeneration("V100", 0.0, "the model before issue 34: the board alone"),
    "A100": GpuGeneration("A100", 6500.0, "NVIDIA DGX A100 datasheet: System Power Usage 6.5 kW max"),
    "H100": GpuGeneration("H100", 10200.0, "NVIDIA DGX H100 datasheet: System power usage ~10.2 kW max"),
}

#: heat rejection: "hybrid" (the default) = the dry cooler below with adiabatic pre-cooling of its inlet air
#: (wetted pads) above a switch-over dry-bulb, evaporating water only then; "water" = open wet cooling tower
#: (evaporates water all year); "dry" = closed dry cooler (fluid cooler, sensible only, no water) on the
#: condenser-water loop of a water-cooled chiller; "air" = air-cooled chiller (no condenser-water loop, no
#: economizer).
CONDENSER_TYPES = ("hybrid", "water", "dry", "air")
#: water-side economizer: "integrated" = plate heat exchanger upstream of the chiller (partial free cooling);
#: "none" = chiller only.
ECONOMIZER_TYPES = ("integrated", "none")
#: air-side economizer: "direct_evaporative" = outside air into the hall (mixed with return air) whenever it is
#: within the inlet envelope's humidity limits, cooled toward the supply set point by direct evaporation and
#: humidified by the same media when too dry (Meta's design, as its Open Compute Project post describes it);
#: "direct" = outside air without evaporation or humidification (only hours already inside the envelope);
#: "none" = the chiller plant alone (with its water-side economizer).
AIR_ECONOMIZER_TYPES = ("direct_evaporative", "direct", "none")
#: how the log2 GPU curve is applied: "per_device" = to each allocated GPU at its own utilisation, the others
#: at idle power, in both power modes (docs/model.md §4a); "fleet_average" = to the site's average allocation
#: with every GPU at that point (gridshift 0.1's ``power="always_on"`` model, kept only for its preset: it makes
#: one busy GPU in a large site draw more than a fully busy one)
GPU_POWER_MODELS = ("per_device", "fleet_average")

#: Named facility models, as overrides of the defaults. ``gridshift-0.1``: the facility as gridshift 0.1
#: modelled it before the climate-sensitive revision — no economizer, the chiller's curves held at the
#: old lower ΔT limit of −4.5 (a condenser-water floor of 29.44 − 4.5 × 2.778 °C), the old tower fan
#: fraction, its wet cooling tower, no electrical losses or lighting, the GPU curve on the fleet-average
#: allocation in always_on — so that ``--datacenters reference --physics gridshift-0.1`` run with
#: ``power="always_on"`` reproduces that version's numbers for comparisons with results of that era
#: (SustainCluster's setup).
#: ``chiller-2015``: the plant gridshift modelled before issue 24's cooling design (and the default until then):
#: supply air 18 degC, chilled water 6.67 degC (AHRI 550/590's rating point), no air-side economizer; the rest
#: (hybrid dry cooler, integrated water-side economizer, electrical losses) as the default.
CHILLER_2015: dict[str, object] = {"supply_air_c": 18.0, "chw_supply_c": 6.67, "chw_design_c": 6.67,
                                   "air_economizer": "none"}
FACILITY_PRESETS: dict[str, dict[str, object]] = {
    "default": {},
    "chiller-2015": dict(CHILLER_2015),
    "gridshift-0.1": {**CHILLER_2015, "condenser": "water", "economizer": "none",
                      "chiller_cond_min_c": 29.44 - 4.5 * 2.778,
                      "tower_fan_design_frac": 0.01,
                      # no electrical losses or lighting in facility energy (the cooling-only PUE of that era)
                      "ups_loss_c0": 0.0, "ups_loss_c1": 0.0, "ups_loss_c2": 0.0,
                      "transformer_nameplate_eff": 1.0, "lighting_frac": 0.0,
                      # the log2 GPU curve on the fleet-average allocation (that version's always_on model)
                      "gpu_power_model": "fleet_average"},
}


#: Fields added after bundles were first written, with the value that reproduces a bundle written without them
#: (what the model did then): no electrical losses or lighting, the fleet-average GPU curve in always_on.
ABSENT_MEANS: dict[str, object] = {
    "ups_loss_c0": 0.0, "ups_loss_c1": 0.0, "ups_loss_c2": 0.0, "transformer_nameplate_eff": 1.0,
    "lighting_frac": 0.0, "gpu_power_model": "fleet_average", "air_economizer": "none",
}



class ParamError(ValueError):
    """A DatacenterParams value is of the wrong type, outside its declared range or breaks a joint rule.
    ``name`` is the field (for a joint rule: the first field it names)."""

    def __init__(self, name: str, message: str) -> None:
        self.name = name
        super().__init__(message)


class ParamTypeError(ParamError, TypeError):
    """A DatacenterParams field that must be a number is not one."""


def physics_column(exc: Exception) -> str:
    """The column a file's refusal names for a bad ``physics`` object: ``physics.<field>`` when known."""
    name = getattr(exc, "name", None)
    return f"physics.{name}" if isinstance(name, str) else "physics"


def _number(name: str, v: Any) -> float:
    """``v`` as a float if it is a real number (not a bool) in ``PARAM_RANGES[name]``; else :class:`ParamError`."""
    b = PARAM_RANGES[name]
    if isinstance(v, bool) or not isinstance(v, int | float):
        raise ParamTypeError(name, f"{name} must be a number in {b.describe()} ({b.reason}), got {v!r} "
                                   f"({type(v).__name__})")
    try:
        x = float(v)
    except OverflowError:  # an int beyond the float range
        x = math.inf
    if not (math.isfinite(x) and b.admits(x)):
        raise ParamError(name, f"{name} = {v!r} is outside its range {b.describe()} ({b.reason})")
    return x


def _curve_error(p: DatacenterParams, prefix: str, n: int, why: str) -> ParamError:
    """A refusal of a curve, naming each of its ``n`` coefficients ``<prefix>0..`` and its value."""
    names = [f"{prefix}{i}" for i in range(n)]
    return ParamError(names[0], f"{', '.join(f'{k} = {getattr(p, k)!r}' for k in names)}: {why}")


def _quadratic_min(c0: float, c1: float, c2: float, lo: float, hi: float) -> tuple[float, float]:
    """(min, max) of c0 + c1 x + c2 x^2 over [lo, hi] (ends and vertex)."""
    xs = [lo, hi]
    if c2 != 0.0 and lo < -c1 / (2.0 * c2) < hi:
        xs.append(-c1 / (2.0 * c2))
    ys = [c0 + c1 * x + c2 * x * x for x in xs]
    return min(ys), max(ys)


def _cubic_min(c: tuple[float, float, float, float], lo: float, hi: float) -> float:
    """Minimum of c0 + c1 x + c2 x^2 + c3 x^3 over [lo, hi] (ends and the derivative's roots)."""
    c0, c1, c2, c3 = c
    xs = [lo, hi]
    a, b, cc = 3.0 * c3, 2.0 * c2, c1  # derivative a x^2 + b x + cc
    if a != 0.0:
        disc = b * b - 4.0 * a * cc
        if disc >= 0.0:
            xs += [(-b + s * math.sqrt(disc)) / (2.0 * a) for s in (-1.0, 1.0)]
    elif b != 0.0:
        xs.append(-cc / b)
    return min(c0 + x * (c1 + x * (c2 + x * c3)) for x in xs if lo <= x <= hi)


@dataclass(frozen=True)
class DatacenterParams:
    """Physical parameters of one datacenter (defaults documented per field)."""

    # ---------------------------------------------------------------- CPU servers
    # Cores per CPU server: a common 2-socket x 32-core server (e.g. 2x AMD EPYC 7543).
    cores_per_server: float = 64.0
    # Server power at 100 % CPU and the leakage reference inlet, excluding memory and fans: 400 W.
    # OUR CHOICE, no source found: no SPECpower_ssj2008 result for a 2-socket 64-core server was read (the
    # result pages and the TU Dresden trend analysis, Troepgen et al., "16 Years of SPEC Power",
    # arXiv:2411.07062, were found, but no per-server figure in them was read). The only figure read is a
    # simulator's: SustainCluster (configs/dcs/dc_config.json, commit 293fbd1) "HP_PROLIANT": [110, 170],
    # i.e. 170 W full load and 110 W idle for its (smaller, unnamed-core-count) server; a different server,
    # so it is listed, not adopted (docs/simulation.md, "Defaults that differ from their best source").
    cpu_server_max_w: float = 400.0
    # Idle power: 120 W = 30 % of max. OUR CHOICE, no source found for the ratio of a server of this size;
    # SustainCluster's 110/170 W is 65 % idle/peak (listed in docs/simulation.md as a differing source; we keep
    # 30 % because every published result uses it; changing it is open).
    cpu_server_idle_w: float = 120.0
    # Nameplate (rated maximum) of the CPU part of a server: no server ever draws more. 420 W: OUR CHOICE, no
    # source found; 5 % above cpu_server_max_w, so that the leakage term below (at most +8 W at 28 degC
    # inlet) stays under it over the recommended inlet range and only hotter inlets are clipped.
    cpu_server_nameplate_w: float = 420.0
    # Inlet-temperature leakage: +2 % of cpu_server_max_w across 16 -> 28 degC inlet. Same value and span as
    # SustainCluster's server model (HewlettPackard/sustain-cluster, commit 293fbd1, configs/dcs/dc_config.json:
    # "CPU_POWER_RATIO_LB": [0.01, 1.00], "CPU_POWER_RATIO_UB": [0.03, 1.02], "INLET_TEMP_RANGE": [16, 28];
    # envs/sustaindc/datacenter_model.py cpu_curve1: the power ratio rises linearly by 0.03 - 0.01 = 0.02 of
    # full-load power over 16 -> 28 degC at any load), which cites Sun et al., "Prototype energy models for
    # data centers", Energy and Buildings 231 (2021) 110603: supports 0.02. Measurements of whole servers
    # (CPU plus fans, so not comparable one to one: server fans are a separate term here) are steeper:
    # "between 23 - 30 degC, the server power consumption correlated positively with the temperature, with a
    # server room-wide temperature sensitivity of 0.35 - 0.5 %/degC" (two Swiss colocation data centres,
    # "Temperature optimisation in data centres", summary at arxivlens.com); a 2009 Dell R410 drew +8 % from
    # 27 to 35 degC (GRC, "Experiment: Temperature Set Point vs Server Fan Power", 2016, Table 1).
    cpu_leakage_frac: float = 0.02
    cpu_leakage_ref_c: float = 16.0
    cpu_leakage_span_k: float = 12.0

    # ---------------------------------------------------------------- GPUs
    # Reference GPU: NVIDIA V100 (docs/model.md §4); see GPU_PRESETS for A100/H100.
    gpu_model: str = "V100"
    gpu_idle_w: float = GPU_PRESETS["V100"][0]
    gpu_max_w: float = GPU_PRESETS["V100"][1]
    # Mean utilisation of a GPU allocated to a task (the u of the log2 curve for an allocated
    # GPU: an allocation is not a utilisation). 0.52: Jeon et al., "Analysis of Large-Scale
    # Multi-Tenant GPU Clusters for DNN Training Workloads", USENIX ATC 2019, §1 (p. 948), on
    # Microsoft's Philly cluster: "the hardware utilization of GPUs in use is only around 52% on
    # average" (all GPUs in use, not only 1-GPU jobs; the per-job-size figures of the paper's
    # utilisation section were not checked here and are not relied on). The metric is nvidia-smi's
    # per-minute GPU utilisation (philly-traces README, file cluster_gpu_util), i.e. NVML's "percent
    # of time over the past sample period during which one or more kernels was executing on the
    # GPU" (nvmlUtilization_t.gpu): a busy-time fraction, not SM occupancy; we read it as the u of
    # the curve. Alibaba PAI names "the low GPU utilization" among its challenges (Weng et al.,
    # "MLaaS in the Wild", NSDI 2022, abstract); the Philly figure is kept so that GPU power is not
    # understated. A per-task utilisation (a bundle task attribute) is the natural extension; this
    # per-DC mean stands in for it.
    gpu_alloc_util: float = 0.52
    # GPUs per GPU server: 8 (the V100 machines of the Alibaba PAI 2020 trace, pai_machine_spec:
    # cap_gpu = 8, as in an NVIDIA DGX-1). The DC's GPUs sit in ceil(GPUs / 8) of its servers.
    gpus_per_server: float = 8.0
    # GPU_POWER_MODELS: per device (the default, both power modes) or gridshift 0.1's fleet average
    gpu_power_model: str = "per_device"

    # ---------------------------------------------------------------- power states (servers)
    # Used when a run manages server power (run option power="managed", the default); with
    # power="always_on" every server stays on and none of these is read.
    # A server with no work is switched off (ACPI S5, soft-off; servers rarely support S3) and
    # draws server_sleep_w; its GPUs draw gpu_sleep_w (no slot power when the host is off).
    # 0 W when off: Gandhi et al., "AutoScale: Dynamic, Robust Capacity Management for Multi-Tier
    # Data Centers", ACM TOCS 30(4), 2012, §2.1 (p. 14:5): a server marked for sleep is emulated "by
    # replacing its power consumption values with 0W" (their servers are switched off through the
    # PDU); and Harchol-Balter, "Performance Modeling and Design of Computer Systems" (CUP 2013),
    # the DelayedOff exercise of Ch. 27 (it "builds on Exercise 27.7"): "240 Watts when on, 180
    # Watts when idle, and 0 Watts when off". A BMC kept powered draws a few watts that this leaves
    # out: set server_sleep_w for it.
    server_sleep_w: float = 0.0
    gpu_sleep_w: float = 0.0
    # Wake (setup) time of a server from off: 260 s, measured by Gandhi et al. (AutoScale, TOCS 2012)
    # on their 2-socket quad-core 2.26 GHz Xeon servers: "in our lab the setup time for turning on an
    # application server is 260 seconds, during which time power is consumed at the peak rate of
    # 200W" (§1, p. 14:2; again §2.1, p. 14:5, "about 260 seconds"; Table III is run with it).
    # At most one step (900 s). (ACPI S3 resumes in ~3-5 s: Linux Documentation/power/states.txt;
    # set this to model a suspend-to-RAM state instead.)
    server_wake_s: float = 260.0
    # Power while waking, as a fraction of cpu_server_max_w: 1.0, a booting server draws its peak
    # power for the whole setup time: AutoScale (quoted above; §2.1: "the average power consumption
    # for our servers when they are busy or in setup is about 200W", idle about 140 W) and
    # Harchol-Balter 2013, the DelayedOff exercise: "Power is consumed at a rate of 240 Watts [the
    # on power] during the entire period I" (I = the setup time). Its GPUs draw gpu_idle_w and its
    # memory its static power meanwhile.
    server_wake_power_frac: float = 1.0
    # Spare pool: idle servers kept on, per server kind (CPU-only and GPU servers), beyond those
    # the running and queued work needs, so that an arriving task does not wait for a boot.
    # 1 per kind is the smallest pool that lets a lone arrival start at once (a choice, not a
    # measured figure: AutoScale sizes its spare capacity to the load; raise it for bursty sites).
    server_spare_min: float = 1.0

    # ---------------------------------------------------------------- memory
    # DRAM: 0.1 W/GB background + 0.2 W/GB when in use. OUR CHOICE, no source found for either figure: no
    # Micron DDR4 data sheet or power calculator output was read (only Micron's DDR2 note TN-47-04 turned up).
    # The one figure read is a simulator's: SustainCluster charges "0.07 * self.dc_memory_GB" W of background
    # memory power ("0.07 is the scaling factor for background power consumption in DRAM memory as discussed
    # in [7]", [7] = Lee et al., "GreenDIMM", MICRO-54, 2021; envs/sustaindc/datacenter_model.py, commit
    # 293fbd1) and has no load-dependent memory term. ENERGY STAR's server specification draft allowed more
    # idle power for memory: "Draft 2 Version 3.0 Specification for Computer Servers proposes an additional
    # memory adder of 0.125(watts)*AdditionalMem(GB) beyond 4 GB of installed memory" (P. Delforge, NRDC,
    # memo to EPA "Computer Server Memory and Power Supply Power Demand Analysis", 10 Oct 2017, §I; an
    # allowance that NRDC argued gives too much away, not a measurement). Sources give 0.07 and 0.125 W/GB;
    # our 0.1 lies between them and matches neither; we keep it because every published result uses it;
    # changing it is open (docs/simulation.md, "Defaults that differ from their best source").
    mem_static_w_per_gb: float = 0.1
    mem_dynamic_w_per_gb: float = 0.2

    # ---------------------------------------------------------------- server fans
    # Server fan power at design airflow as a fraction of the design IT heat: 5 %. Sources read give more:
    # "These fans can consume 10 to 15 percent or more of the total power drawn by the server ... if the
    # server's internal CPUs and other computing-related components draw 250 to 350 watts from the power
    # supply, the fans may require 30 to 75 watts" (J. Neudorfer, "How to Optimize the Energy Efficiency of
    # Your Server", eWeek, 5 Mar 2009, p. 3, "Server Fans"); SustainCluster's server fan is rated
    # "ITFAN_REF_P": 10.0 W at airflow ratio 1.0 for a 170 W server (configs/dcs/dc_config.json, commit
    # 293fbd1; 10 / 170 = 5.9 %, our arithmetic). Source gives 10-15 %; we keep 5 % because every published
    # result uses it (and variable-speed fans of newer servers run below full speed at design); changing it
    # is open (docs/simulation.md, "Defaults that differ from their best source").
    it_fan_design_frac: float = 0.05
    # Fans never go below 30 % of design airflow. OUR CHOICE, no source found (no fan-controller minimum duty
    # was read; SustainCluster has no floor: its airflow ratio reaches 0.01 at 16 degC inlet and 0 % load,
    # "IT_FAN_AIRFLOW_RATIO_LB": [0.01, 0.225]). A floor keeps idle servers cooled with some airflow.
    it_fan_min_airflow_ratio: float = 0.3
    # Rack air temperature rise at design airflow: 12 K. The nearest figure read: "The traditional cooling
    # unit is designed to operate based on approximately 20 degF differential of the air entering the unit
    # and leaving the cooling unit ... it takes 158 CFM at a dT of 20 degF to transfer one kilowatt of heat"
    # (J. Neudorfer, "Understanding the Physics of Airflow in High Density Environments", Data Center
    # Frontier, 1 Jul 2022); 20 degF = 11.1 K, and it is the cooling unit's dT, not the server's. Source gives
    # 11.1 K; we keep 12 K because every published result uses it; changing it is open (docs/simulation.md,
    # "Defaults that differ from their best source"). No ASHRAE TC9.9 text was read.
    server_delta_t_design_k: float = 12.0

    # ---------------------------------------------------------------- air side
    # Supply-air set point: 25 degC, so that the rack inlet (supply + supply_approach_k = 27 degC) sits at the top
    # of ASHRAE TC 9.9's recommended envelope, "increasing the upper limit to 27 degC (80.6 degF)" (D. Beaty, first
    # chair of TC 9.9, DatacenterPOST, "Data Center Temperature: ASHRAE's ..."; "all conditions are to be measured
    # at the IT equipment inlet"), which is where the hyperscalers run: Google's Bill Weihl recommended "raising the
    # thermostat to 27 degrees Celsius (80 degrees Fahrenheit)" (PC World / GoodGearGuide, "Google: Crank up the heat
    # in your data center"); Meta's Prineville inlet goes to 80 degF, Forest City's to 85 degF (Open Compute Project,
    # "Cooling an OCP data center in a hot and humid climate"). The old plant (18 degC) is the "chiller-2015"
    # preset (FACILITY_PRESETS).
    supply_air_c: float = 25.0
    # Rack inlet = supply + 2 K (mixing/recirculation); CRAC return = rack outlet + 1 K: the "supply approach
    # temperature" and "return approach temperature" of EnergyPlus's ITE object (Sun & Hong, LBNL, "Enhancements
    # to Improve Modeling of Data Centers", NREL/EnergyPlus design/FY2017/NFP_Enhancements to Improve Modeling
    # of Data Centers.md: T_in = T_supply + dT_supply, T_return = dT_return + T_return-mixed; "can be
    # calculated by CFD tools ... or provided by measurement data"), which gives no default value. The values
    # read differ: SustainCluster's "RACK_SUPPLY_APPROACH_TEMP_LIST" is 5.0-5.3 K and
    # "RACK_RETURN_APPROACH_TEMP_LIST" -2.5 to -3.7 K per rack (configs/dcs/dc_config.json, commit 293fbd1);
    # Upsite ("The Less Commonly Known Delta Ts in Data Center Cooling", 10 Nov 2021): "if you have 55 degF
    # being supplied, which is fairly typical ... by the time it reaches the IT equipment it is typically going
    # to be in the 70's" (over 8 K). We keep 2 K / 1 K (a well-managed, contained hall) because every published
    # result uses them; changing them is open (docs/simulation.md, "Defaults that differ from their best source").
    supply_approach_k: float = 2.0
    return_approach_k: float = 1.0
    # Air at ~25 degC, sea level.
    air_density_kg_m3: float = 1.19
    air_cp_j_per_kg_k: float = 1006.0
    # CRAC/CRAH fan power at design airflow: 4 % of the design IT power. OUR CHOICE, no source found (no CRAH
    # fan power per kW of cooling was read). Minimum airflow 60 % of design: OUR CHOICE, no source found; set,
    # like the pump floor, so that idle PUE stays above full-load PUE (docs/simulation.md, "Deviations");
    # units run with N+1 redundancy and keep the floor pressurised. Context read: "The average computer room
    # today has cooling capacity that is nearly four times the IT heat load ... the average running cooling
    # capacity was an astonishing 3.9 times (390%) the IT heat load" (Brill & Strong, Upsite, "Cooling
    # Capacity Factor (CCF) Reveals Stranded Capacity and Data Center Cost Savings", 45 sites): real rooms
    # move far more air than their load needs; chilled-water CRAHs "usually work effectively down to about
    # 20% of capacity" (TechTarget, "Sizing computer room air conditioners for data center energy
    # efficiency"; cooling capacity, not airflow).
    crac_fan_design_frac: float = 0.04
    crac_min_airflow_ratio: float = 0.6

    # ---------------------------------------------------------------- chiller (EnergyPlus
    # Chiller:Electric curves, coefficients as docs/model.md §4)
    # Heat rejection (CONDENSER_TYPES): "hybrid" (default: dry cooler with adiabatic pre-cooling above
    # hybrid_switchover_c, below), "water" (wet cooling tower), "dry" (dry cooler on the condenser-water
    # loop, no water use) or "air" (air-cooled chiller, no tower, no water). The hybrid is the default
    # because it is how the operators behind the published fleet WUEs cool: Microsoft, "across our global
    # datacenter fleet, outside air is our primary method of cooling for an average of nine months of the
    # year ... when required, we utilize an adiabatic cooling system" (Microsoft Environmental
    # Sustainability Report, "Getting to water positive"); AWS "seeks to eliminate cooling water use in
    # many of its facilities for most of the year and rely mostly on outside air" (ITBusiness.ca on AWS's
    # re:Invent 2022 water+ announcement). Sources with their addresses: docs/validation.md.
    condenser: str = "hybrid"
    # Rated COP: ASHRAE 90.1-2019 Table 6.8.1-3 minima ~6.1 (water-cooled centrifugal)
    # and ~2.9 (air-cooled); the air-cooled value is used when condenser == "air" (a dry cooler
    # serves a water-cooled chiller: 6.1).
    chiller_cop_water: float = 6.1
    chiller_cop_air: float = 2.9
    # Chiller rated capacity = 1.35 x the design cooling load. OUR CHOICE, no source found (no sizing rule was
    # read): with the curves below a tower's 40 degC day leaves CapRatio ~0.78, and 1.35 x 0.78 = 1.05 still
    # covers the full load (our arithmetic); see docs/simulation.md "Deviations" for the dry cooler.
    chiller_capacity_factor: float = 1.35
    # Chilled-water outlet 20 degC: the high-temperature chilled water of Schneider Electric White Paper 227 (Lin,
    # Avelar & Bean, "How Higher Chilled Water Temperature Can Improve Data Center Cooling System Efficiency"),
    # whose coils are redesigned "to provide adequate cooling efforts when CHW ... exceeds 20C" (MSP Channel's
    # summary); 5 K below the 25 degC supply air. The chiller is rated at its own leaving water
    # (chw_design_c = chw_supply_c) with the rated COP below kept (a chiller at 20 degC leaving water is more
    # efficient than at 6.67: conservative; no rating at 20 degC was read): the curves stay inside the range they
    # were fitted for. The water-side economizer then carries the whole load with condenser water below
    # 20 - 1.11 = 18.9 degC. "chiller-2015" (FACILITY_PRESETS) keeps 6.67 degC (44 degF, AHRI 550/590).
    # Condenser inlet 29.44 degC
    # (85 degF, water-cooled, AHRI 550/590) or 35 degC (95 degF, air-cooled).
    chw_supply_c: float = 20.0
    chw_design_c: float = 20.0
    cond_design_water_c: float = 29.44
    cond_design_air_c: float = 35.0
    # Curves (docs/model.md §4): CapRatio(dT), PowRatio(CapRatio), FullLoadFrac(PLR).
    chiller_cap_c0: float = 0.94483600
    chiller_cap_c1: float = -0.05700880
    chiller_cap_c2: float = 0.00185486
    chiller_pow_c0: float = 2.333
    chiller_pow_c1: float = -1.975
    chiller_pow_c2: float = 0.6121
    chiller_flf_c0: float = 0.03303
    chiller_flf_c1: float = 0.6852
    chiller_flf_c2: float = 0.2818
    # Minimum entering condenser-water temperature the chiller runs at: 12.8 degC (55 degF). Trane
    # CenTraVac CVGF manual, "Condenser Water Limitations": centrifugal chillers run down to a 5 psig
    # condenser-evaporator pressure differential, "safe minimum entering condenser water temperatures at
    # or below 12.8 degC (55 degF)"; colder tower water is held there by tower bypass / head-pressure
    # control, so the chiller's lift (and power) stops falling. It lies inside the range where the
    # curves above give a chiller never cheaper when hotter (dT >= -6.6, i.e. >= 11.1 degC water), and
    # below it the water-side economizer carries the load. An air-cooled condenser is held at the
    # same lift below its rating point (35 - (29.44 - 12.8) = 18.36 degC air).
    chiller_cond_min_c: float = 12.8
    # Upper input limit of dT (the CapRatio quadratic has its minimum at dT = 15.4; beyond 10 it is
    # outside any rating data: 57.2 degC condenser water, 62.8 degC air).
    chiller_dt_max: float = 10.0
    # Below this part-load ratio the chiller cycles: 0.05, the value of docs/model.md §4 and of
    # SustainCluster's chiller model (envs/sustaindc/datacenter_model.py, min_plr = 0.05, commit
    # 293fbd1). Not EnergyPlus's default: Chiller:Electric:EIR's "Minimum Part Load Ratio" defaults
    # to 0.1 (idd/Energy+.idd.in).
    chiller_min_plr: float = 0.05
    # Chilled-water design range (return - supply) 5.56 K (10 degF): AHRI Standard 550/590 standard
    # rating conditions (44 degF leaving, 2.4 gpm/ton => 54 degF entering). The return temperature
    # is supply + range x load / flow (flow = chilled-water pump flow ratio below).
    chw_range_k: float = 5.56

    # ---------------------------------------------------------------- water-side economizer
    # ECONOMIZER_TYPES: "integrated" = plate heat exchanger in series upstream of the chiller on the
    # chilled-water return, fed by the condenser-water loop (tower or dry cooler): ASHRAE 90.1-2010/
    # 2013 §6.5.1.2 requires water economizers to be integrated ("capable of providing partial
    # cooling even when additional mechanical cooling is required"); see S. T. Taylor, "How to
    # Design & Control Waterside Economizers", ASHRAE Journal, June 2014. Not used with "air".
    economizer: str = "integrated"
    # AIR_ECONOMIZER_TYPES: outside air into the hall, "direct_evaporative" by default: Meta's data centers "draw
    # the dry, desert air of Central Oregon into the penthouse ... and add water as needed to regulate humidity and
    # temperature" instead of chillers (T. Furlong, Facebook, "Designing for the open data center", 7x24 Exchange,
    # Fall 2014, p. 7); Microsoft uses outside air as its primary method of cooling for an average of nine months a
    # year, with adiabatic cooling when needed (docs/validation.md). The chiller plant above stays as the trim and
    # backup (Forest City installed DX coils "just in case": Open Compute Project, same post). Outside air is used
    # when its humidity is within the inlet envelope below; when warmer than the supply set point the hall runs on
    # 100 % outside air, cooled by evaporation (pad effectiveness adiabatic_pad_effectiveness, the same media) as far
    # as the humidity limit allows, and the chiller plant carries what is left down to the supply temperature. The
    # air handlers' fans are the CRAC fans above (same airflow and fan law; the extra pressure drop of the outside-air
    # path is left out, no figure was read).
    air_economizer: str = "direct_evaporative"
    # Inlet humidity envelope: ASHRAE TC 9.9's recommended range, "moisture limits ... lowered to a 5.5 degC (41.9
    # degF) dew point and increased to 60% RH & 15 degC (59 degF) dew point" (Beaty, DatacenterPOST, above; the 2008
    # envelope, the one read). Below the minimum dew point "direct_evaporative" humidifies the outside air it admits
    # (water = outside-air mass flow x humidity-ratio deficit); "direct" does not use outside air then.
    inlet_dewpoint_min_c: float = 5.5
    inlet_dewpoint_max_c: float = 15.0
    inlet_rh_max: float = 0.60
    # Heat-exchanger approach (chilled water leaving the HX minus condenser water entering it):
    # 1.11 K (2 degF), "the minimum recommended temperature approach" of a plate-and-frame heat
    # exchanger (HPAC Engineering, "Plate and frame heat exchangers", Fall 2017; 90.1 requires AHRI
    # Standard 400 certified units).
    wse_hx_approach_k: float = 1.11

    # ---------------------------------------------------------------- cooling tower
    # Design wet-bulb 23.89 degC (75 degF) and approach 5.55 K => 29.44 degC leaving water
    # (CTI STD-201 rating point). Market data agree: open wet towers have a median approach of 5 K
    # to the wet-bulb (6730 models of 27 manufacturers; Energies 2023, 16(9), 3661, Conclusions).
    tower_design_wetbulb_c: float = 23.89
    tower_approach_k: float = 5.55
    # Fan power at design = 0.0105 x the design heat rejected: EnergyPlus's cooling-tower autosizing
    # rule (CondenserLoopTowers.cc: HighSpeedFanPower = 0.0105 * DesTowerLoad). Open wet towers on
    # the market draw 0.012-0.021 kWel per kWth (Energies 2023, 16(9), 3661), fans and spray included.
    tower_fan_design_frac: float = 0.0105
    # Airflow needed grows 4 %/K of wet-bulb (saturated-air enthalpy difference shrinks as the wet-bulb
    # approaches the water temperature); exponential approximation. OUR CHOICE, no source found (no tower
    # selection data or Merkel-curve fit was read); EnergyPlus's towers compute this from the Merkel
    # relation or a YorkCalc/CoolTools model instead of a constant.
    tower_wetbulb_sens_per_k: float = 0.04
    # Fan floor 10 % of design airflow: the lower end of EnergyPlus's valid range for a variable-speed
    # tower's "Minimum Air Flow Rate Ratio" ("Valid entries are from 0.1 to 0.5", \default 0.2,
    # CoolingTower:VariableSpeed:Merkel, idd/Energy+.idd.in); below the E+ default, but at a cubic fan
    # law the floor is 0.1 % (0.2: 0.8 %) of a fan rated at ~1 % of the heat, immaterial to PUE.
    tower_min_airflow_ratio: float = 0.1

    # ---------------------------------------------------------------- dry cooler (condenser == "dry")
    # Approach (leaving fluid - entering air dry-bulb) at design: 10 K, the median of dry coolers on
    # the market (6730 cooling-tower models of 27 manufacturers: "Dry cooling has a median approach
    # of 10 K towards ambient DBT"; Energies 2023, 16(9), 3661, Conclusions). Widens in proportion
    # beyond full airflow, as the tower's. Sizing note: the chiller below is sized for a tower; with a
    # dry cooler its condenser water reaches 40 degC at 30 degC dry-bulb and, at full load, the default
    # chiller_capacity_factor runs short above that (reported as unmet cooling): raise it for "dry".
    dry_cooler_approach_k: float = 10.0
    # Fan power at design airflow = 0.0105 x design heat rejected (EnergyPlus FluidCoolers.cc
    # autosizing: HighSpeedFanPower = 0.0105 * DesFluidCoolerLoad); cubic fan law below it, floor as
    # the tower's. Sensible heat at a fixed approach: airflow ratio = heat ratio.
    dry_cooler_fan_design_frac: float = 0.0105
    # Coil air-side temperature rise at design airflow and heat (Q = m_air c_p dT_air): 5.56 K. Our
    # choice, not a published figure (no selection data was found to cite): the coil's air and water
    # capacity rates balanced (C_air = C_water), so the air warms by the condenser-water range
    # cw_range_k. It sets the air mass flow through the pads, so the hybrid's water is proportional to
    # 1 / dT_air: a coil selected for a larger air-side rise (less air) evaporates proportionally less.
    dry_cooler_air_dt_k: float = 5.56

    # ---------------------------------------------------------------- adiabatic pre-cooling (condenser == "hybrid")
    # Switch-over dry-bulb: 18.33 degC (65 degF). Pads are wetted only above it; at or below it the
    # hybrid is exactly the dry cooler. EVAPCO, FAQ "Dry bulb switchover temperature" ("the temperature at
    # which a closed circuit cooler can run fully dry ... and reject 100% of the design heat load"):
    # "eco-Hybrid coolers can achieve dry bulb switchover temperatures for full load (95/85/78 degF design
    # conditions) up to 65 degF" (https://www.evapco.com/faq/answer/dry-bulb-switchover-temperature).
    # Consistent with this model: 85 degF (29.44 degC) leaving fluid is cond_design_water_c, and
    # 29.44 - dry_cooler_approach_k = 19.44 degC is where the dry coil alone stops reaching it. (Microsoft
    # is often quoted as switching to evaporative cooling above 85 degF / 29.4 degC; no primary page
    # stating it was found, so that figure is not used.)
    hybrid_switchover_c: float = 18.33
    # Saturation effectiveness of the wetted pad, eps = (T_db - T_air,out) / (T_db - T_wb): 0.78. Munters
    # CELdek Technical Manual (GB-0016-0400), worked example: air at 40 degC dry-bulb / 19 degC wet-bulb
    # leaves the pad at 23.6 degC, (40 - 23.6) / (40 - 19) = 0.78; cellulose pads typically exceed 0.8
    # (rigid media 0.7-0.9 depending on depth and face velocity). The coil then sees T_db - eps (T_db - T_wb).
    adiabatic_pad_effectiveness: float = 0.78

    # ---------------------------------------------------------------- pumps (variable speed)
    # Design pump power per kW of design cooling: chilled water 0.025 (0.088 kW/ton), condenser water 0.02
    # (0.070 kW/ton). Chilled water: ASHRAE 90.1 Appendix G's baseline, as quoted by modellers: "One of the
    # requirements of Appendix G is to limit the pumping power to 22 W/GPM" (bldg-rate list, onebuilding.org,
    # 2 Sep 2009) and "The chilled water pumps are always ... modeled at 22 W/gpm" (energy-models.com forum,
    # "Hot water pumps (baseline)"); the standard itself was not read. With the AHRI 550/590 flow of 2.4 gpm/ton
    # (chw_range_k below): 22 W/gpm x 2.4 gpm/ton = 52.8 W/ton; / 3517 W/ton = 0.0150 kW/kW (our arithmetic).
    # Source gives 0.015; we keep 0.025 because every published result uses it; changing it is open
    # (docs/simulation.md, "Defaults that differ from their best source"). Condenser water: OUR CHOICE, no
    # source found; the only other Appendix G figure read is for hot water ("the baseline building design hot
    # water pump power shall be 19 W/gpm", same forum thread, quoting the 90.1 User's Manual p. G-30); no
    # condenser-water figure was read.
    chw_pump_design_frac: float = 0.025
    cw_pump_design_frac: float = 0.02
    # Minimum flow 70 % of design (chilled- and condenser-water pumps alike): OUR CHOICE, no source
    # gives 0.7. With the spec's chiller curves part load is otherwise more efficient than full load,
    # and the spec requires PUE at idle above PUE at full load (docs/model.md §4, "Properties the tests hold";
    # docs/simulation.md): this floor is the fixed loss that gives it. The code's floor (0.5, below) does
    # not: idle PUE falls below full-load PUE from -10 to 35 degC for one of the test grid's two
    # clusters and from 25 degC for the other (measured with the operating points of
    # tests/unit/sim_core/test_physics.py, plant without economizer). The sources found allow a lower floor:
    # * EnergyPlus Pump:VariableSpeed: "Design Minimum Flow Rate Fraction" \default 0.0
    #   (idd/Energy+.idd.in); its chillers' default flow mode "NotModulated is for either variable or
    #   constant pumping with flow controlled by the external plant system" (Chiller:Electric:EIR).
    # * Energy code: hydronic systems must "automatically vary fluid flow ... by reducing the system
    #   design flow rate by not less than 50 percent or the maximum reduction allowed by the
    #   equipment manufacturer for proper operation of equipment" (IECC C403.4.4 item 2 as adopted
    #   in WAC 51-11C-40344, Washington State Energy Code).
    # * Chiller makers: evaporator minimum and maximum flows are set by tube velocity, "the typical
    #   range was 3 ft/sec to 11 ft/sec ... specific chillers may accommodate evaporator flow rates as
    #   low as 1.5 ft/sec" (Trane Engineers Newsletter 31(4), 2002, Schwedler, "Variable-Primary-
    #   Flow Systems Revisited"); in percent the floor depends on the design velocity selected
    #   (3 ft/s is 27 % of 11 ft/s, 50 % of 6 ft/s: our arithmetic). A floor of at most 0.5 is what
    #   these support.
    pump_min_flow_ratio: float = 0.7
    # Part-load power curve of a variable-speed drive with a fixed pressure set point
    # (the shape ASHRAE 90.1 Appendix G uses for VSD fans, Table G3.1.3.15 method 2);
    # normalised so that flow ratio 1 gives the design power.
    pump_curve_c0: float = 0.0013
    pump_curve_c1: float = 0.1470
    pump_curve_c2: float = 0.9506
    pump_curve_c3: float = -0.0998

    # ---------------------------------------------------------------- water
    # A wet tower rejects its heat by evaporation (docs/model.md §4: evaporation = heat rejected /
    # latent heat), in economizer hours as well: it still rejects the whole cooling load. A dry cooler
    # or an air-cooled condenser evaporates nothing (no drift, no blowdown). A hybrid evaporates, with its
    # pads on, the sensible heat the pads take out of the air stream / latent heat (no drift, and pad
    # bleed-off is left out: no citable bleed rate was found).
    # Latent heat of vaporization at ~30 degC: 2430 kJ/kg; 2400 gives 1.5 L per kWh rejected.
    latent_heat_kj_per_kg: float = 2400.0
    # Drift: 0.005 % of circulating water. EnergyPlus's cooling towers: "Drift Loss Percent" \default
    # 0.008, "Typical values are between 0.002 and 0.2%" (CoolingTower:TwoSpeed, idd/Energy+.idd.in);
    # 0.005 % is inside that range (high-efficiency drift eliminators; the often-quoted CTI range of
    # 0.001-0.005 % for them was not checked against a CTI text).
    drift_frac: float = 0.00005
    # Condenser-water range 5.56 K (10 degF): sets the circulating flow.
    cw_range_k: float = 5.56
    water_cp_kj_per_kg_k: float = 4.186
    # Cycles of concentration: 5 (docs/model.md §4 default); blowdown = evap / (cycles - 1). EnergyPlus:
    # "Blowdown Concentration Ratio ... Typical values for tower operation are 3 to 5. The default
    # value is 3" (CoolingTower:TwoSpeed, idd/Energy+.idd.in): 5 is the water-saving end.
    cycles_of_concentration: float = 5.0

    # ---------------------------------------------------------------- electrical losses and lighting
    # Facility energy includes the power chain's losses and the lighting, so that PUE = total / IT is
    # comparable with operators' PUEs (docs/model.md §4b). Both loss heats are rejected outside the white
    # space (UPS and transformer rooms ventilated or outdoors: they are not in the cooling load); the
    # lighting heat is (lights are in the white space).
    # UPS (serves the IT equipment incl. server fans; rated at the design IT power): loss as a fraction of
    # the rating, c0 + c1 x + c2 x^2 at load fraction x = IT / design IT: no-load (fixed), proportional and
    # square-law losses, the three loss kinds of Schneider Electric (APC) White Paper 108, V. Avelar,
    # "Making Large UPS Systems More Efficient", rev. 2 ("No-load losses can represent over 40% of all UPS
    # losses ... Square-law losses become significant (1-4%) at higher UPS loads", Schneider Electric,
    # "Definitions of losses", 2012). Coefficients 0.01333 / 0.00640 / 0.01081: a curve fit attributed to
    # WP108 for a delta-conversion UPS, read in a secondary source (the paper's own table was not read):
    # efficiency x / (x + loss) = 94.1 % at 25 % load, 96.3 % at 50 %, 97.0 % at 100 % (our arithmetic);
    # no-load is 69 % of the losses at 50 % load and the square-law term 1.1 % at full load, inside the
    # quoted statements. A hyperscaler's distributed batteries lose less (set the three to 0 for none).
    ups_loss_c0: float = 0.01333
    ups_loss_c1: float = 0.00640
    ups_loss_c2: float = 0.01081
    # Transformer / distribution (serves the whole facility: IT, UPS losses, cooling, lighting; rated at the
    # design facility load, IT + CRAC fans + chiller at design): no-load (core) loss plus a load (winding)
    # loss rising with the square of the load, from a nameplate efficiency at a per-unit load, EnergyPlus's
    # ElectricLoadCenter:Transformer "NominalEfficiency" method (Input Output Reference): nameplate
    # efficiency 0.985 (the reference's example input; its default is 0.98) at per-unit load 0.35 ("According
    # to the NEMA ... Standard TP-1, the per unit load takes the value of 0.35 for dry-type distribution
    # transformers"), and the maximum efficiency at that same load (the reference's rule for a blank "Per Unit
    # Load for Maximum Efficiency"), so no-load loss = load loss at 35 % load. 1.0 = no loss.
    transformer_nameplate_eff: float = 0.985
    transformer_nameplate_pul: float = 0.35
    # Lighting: 1 % of the design IT power, on all the time. OUR CHOICE, no data-centre figure read: a lighting
    # power density of about 10 W/m2 (1 W/ft2) over a white space of about 1 kW of IT per m2; 0 = none.
    lighting_frac: float = 0.01

    # Non-physics metadata (kept out of the numeric vector): free text note.
    note: str = field(default="", compare=False)

    def __post_init__(self) -> None:
        """Refuse, by name, a value of the wrong type or outside ``PARAM_RANGES``, then the joint rules."""
        for name, allowed in (("condenser", CONDENSER_TYPES), ("economizer", ECONOMIZER_TYPES),
                              ("air_economizer", AIR_ECONOMIZER_TYPES), ("gpu_power_model", GPU_POWER_MODELS)):
            v = getattr(self, name)
            if not isinstance(v, str) or v not in allowed:
                raise ParamError(name, f"{name} must be one of {allowed}, got {v!r}")
        for name in ("gpu_model", "note"):
            if not isinstance(getattr(self, name), str):
                raise ParamTypeError(name, f"{name} must be a string, got {getattr(self, name)!r}")
        for name in self.numeric_fields():
            object.__setattr__(self, name, _number(name, getattr(self, name)))
        self._check_joint()

    def _check_joint(self) -> None:
        """The rules between fields (each value is already inside its own range)."""
        def bad(name: str, why: str) -> ParamError:
            return ParamError(name, f"{name}: {why}")

        if not (self.cpu_server_idle_w <= self.cpu_server_max_w <= self.cpu_server_nameplate_w):
            raise bad("cpu_server_idle_w", f"need cpu_server_idle_w ({self.cpu_server_idle_w!r}) <= cpu_server_max_w "
                                           f"({self.cpu_server_max_w!r}) <= cpu_server_nameplate_w "
                                           f"({self.cpu_server_nameplate_w!r})")
        if self.gpu_idle_w > self.gpu_max_w:
            raise bad("gpu_idle_w", f"need gpu_idle_w ({self.gpu_idle_w!r}) <= gpu_max_w ({self.gpu_max_w!r})")
        if self.server_sleep_w > self.cpu_server_idle_w or self.gpu_sleep_w > self.gpu_idle_w:
            raise bad("server_sleep_w", "a sleeping server (GPU) cannot draw more than an idle one "
                                        f"(server_sleep_w {self.server_sleep_w!r}, gpu_sleep_w {self.gpu_sleep_w!r})")
        if self.server_spare_min != math.floor(self.server_spare_min):
            raise bad("server_spare_min", f"must be a whole number of servers, got {self.server_spare_min!r}")
        if self.supply_approach_k + self.return_approach_k <= 0.0:
            # (the CRAC's air rise, return - supply, is at least their sum: the CRAC airflow divides by it)
            raise bad("supply_approach_k", f"supply_approach_k ({self.supply_approach_k!r}) + return_approach_k "
                                           f"({self.return_approach_k!r}) must be > 0 (the CRAC's air rise)")
        if self.inlet_dewpoint_min_c >= self.inlet_dewpoint_max_c:
            raise bad("inlet_dewpoint_min_c", f"need inlet_dewpoint_min_c ({self.inlet_dewpoint_min_c!r}) < "
                                              f"inlet_dewpoint_max_c ({self.inlet_dewpoint_max_c!r})")
        self._check_curves()

    def _check_curves(self) -> None:
        """The chiller and pump curves over the inputs the kernels give them: CapRatio in (0, 3], PowRatio in
        (0, 3], FullLoadFrac in [0, 1.5] (off-design a chiller's capacity and power stay within a few times
        their rating), the chiller curves ~1 at their rating point (EnergyPlus warns beyond +-10 %; accepted
        within +-50 %), and the pump curve >= 0 up to the largest flow ratio these chiller settings can ask of
        the condenser-water pump (:meth:`_pump_flow_max`)."""
        # dT = (T_cond,run - T_cond,design) / 2.778 - (T_chw - T_chw,design), T_cond,run >= the chiller's minimum
        # (the same offset for an air-cooled condenser), capped at chiller_dt_max
        dt_lo = (self.chiller_cond_min_c - self.cond_design_water_c) / 2.778 - (self.chw_supply_c - self.chw_design_c)
        dt_hi = self.chiller_dt_max
        dt_lo = min(dt_lo, dt_hi)
        cap = _quadratic_min(self.chiller_cap_c0, self.chiller_cap_c1, self.chiller_cap_c2, dt_lo, dt_hi)
        if not (cap[0] > 0.0 and cap[1] <= 3.0):
            raise _curve_error(self, "chiller_cap_c", 3, f"CapRatio(dT) spans [{cap[0]:.4g}, {cap[1]:.4g}] for dT in "
                                                        f"[{dt_lo:.4g}, {dt_hi:.4g}] (from {_DT_INPUTS}); it must "
                                                        "stay in (0, 3]")
        pw = _quadratic_min(self.chiller_pow_c0, self.chiller_pow_c1, self.chiller_pow_c2, *cap)
        if not (pw[0] > 0.0 and pw[1] <= 3.0):
            raise _curve_error(self, "chiller_pow_c", 3, f"PowRatio(CapRatio) spans [{pw[0]:.4g}, {pw[1]:.4g}] for "
                                                        f"CapRatio in [{cap[0]:.4g}, {cap[1]:.4g}] (from the "
                                                        f"chiller_cap curve and {_DT_INPUTS}); it must stay in (0, 3]")
        flf = _quadratic_min(self.chiller_flf_c0, self.chiller_flf_c1, self.chiller_flf_c2, self.chiller_min_plr, 1.0)
        if not (flf[0] >= 0.0 and flf[1] <= 1.5):
            raise _curve_error(self, "chiller_flf_c", 3, f"FullLoadFrac(PLR) spans [{flf[0]:.4g}, {flf[1]:.4g}] for "
                                                        f"PLR in [chiller_min_plr = {self.chiller_min_plr:g}, 1]; it "
                                                        "must stay in [0, 1.5]")
        rating = {"chiller_cap_c": self.chiller_cap_c0,
                  "chiller_pow_c": self.chiller_pow_c0 + self.chiller_pow_c1 + self.chiller_pow_c2,
                  "chiller_flf_c": self.chiller_flf_c0 + self.chiller_flf_c1 + self.chiller_flf_c2}
        for prefix, v in rating.items():
            if not 0.5 <= v <= 1.5:
                raise _curve_error(self, prefix, 3, f"the curve is {v:.4g} at its rating point (dT = 0, CapRatio = 1, "
                                                    "PLR = 1); a normalised curve is ~1 there (accepted 0.5-1.5)")
        pump = (self.pump_curve_c0, self.pump_curve_c1, self.pump_curve_c2, self.pump_curve_c3)
        r_max = self._pump_flow_max(cap[1], pw[1])
        if not sum(pump) > 0.0 or not _cubic_min(pump, self.pump_min_flow_ratio, r_max) >= 0.0:
            raise _curve_error(self, "pump_curve_c", 4, "the pump curve must be > 0 at design flow and >= 0 from "
                                                        f"pump_min_flow_ratio ({self.pump_min_flow_ratio:g}) to the "
                                                        f"largest flow ratio, {r_max:.4g}, that {_PUMP_INPUTS} can "
                                                        "ask of the condenser-water pump")

    def _pump_flow_max(self, cap_max: float, pow_max: float) -> float:
        """An upper bound of the condenser-water pump's flow ratio, the heat rejected over its design value,
        (met + chiller) / (cool_d (1 + 1/COP)) <= 1.5 (1 + chiller_max / cool_d): the cooling load never exceeds
        its design value by half (it is at most the design load plus the fans of servers above their share), and
        the chiller draws at most PowRatio_max / COP x max over PLR of FullLoadFrac(PLR) x min(available
        capacity, load / PLR) (one PLR grid, +10 %: an upper bound, never a result)."""
        load = 1.5
        avail = cap_max * self.chiller_capacity_factor
        lo = self.chiller_min_plr
        worst = 0.0
        for i in range(201):
            plr = lo + (1.0 - lo) * i / 200.0
            flf = self.chiller_flf_c0 + plr * (self.chiller_flf_c1 + plr * self.chiller_flf_c2)
            worst = max(worst, flf * (avail if plr <= 0.0 else min(avail, load / plr)))
        return max(1.0, load * (1.0 + 1.1 * pow_max / self.chiller_cop * worst))

    # ------------------------------------------------------------------ (de)serialisation
    @classmethod
    def numeric_fields(cls) -> tuple[str, ...]:
        """Names of the numeric (float) fields, in declaration order."""
        return tuple(f.name for f in fields(cls) if f.type in ("float", float))

    def to_dict(self) -> dict[str, Any]:
        """All fields as a JSON-serialisable dict."""
        return dataclasses.asdict(self)

    @classmethod
    def from_stored(cls, d: dict[str, Any]) -> DatacenterParams:
        """Build from a physics object stored in a bundle: a field added after the bundle was written (absent
        from ``d``) takes the value of ``ABSENT_MEANS``, the model of the version that wrote it, not today's
        default, so an older bundle keeps giving its numbers bit for bit; otherwise as :meth:`from_dict`."""
        return cls.from_dict({**{k: v for k, v in ABSENT_MEANS.items() if k not in d}, **d})

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> DatacenterParams:
        """Build from a dict (missing keys take defaults); unknown keys raise ``ValueError``."""
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(d) - known)
        if unknown:
            raise ValueError(f"unknown DatacenterParams keys: {unknown}")
        return cls(**d)

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), sort_keys=True)

    @classmethod
    def from_json(cls, s: str) -> DatacenterParams:
        return cls.from_dict(json.loads(s))

    def with_gpu(self, model: str) -> DatacenterParams:
        """A copy with the GPU generation ``model`` of GPU_GENERATIONS (its boards and their server's host)."""
        return dataclasses.replace(self, **GPU_GENERATIONS[model].physics())

    @property
    def chiller_cop(self) -> float:
        return self.chiller_cop_air if self.condenser == "air" else self.chiller_cop_water
