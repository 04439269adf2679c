"""The valid range of every numeric ``DatacenterParams`` field with its physical reason (one table, checked by
``gridshift.dc_params.DatacenterParams`` itself). Stdlib only, as ``gridshift.dc_params``."""

from __future__ import annotations

from gridshift.bounds import Bound

__all__ = ["PARAM_RANGES"]

_FLOOR = ("a floor on flow as a fraction of design flow: at most design (1), and at least 1 %: below it a fan or "
          "pump is stopped, not modulated (SustainCluster's lowest server airflow ratio is 0.01)")
_CURVE = ("coefficient of a curve normalised to ~1 at its rating point (EnergyPlus's curve sets lie well inside "
          "+-10); the curve itself is checked over its operating range (docs/bundle_format.md)")
_FAN = "fan power per kW of heat rejected: 0.012-0.021 for towers on the market (Energies 2023, 16(9), 3661)"
_PUMP = "pump power per kW of design cooling: 0.015-0.025 (the sources above)"

#: The valid range of every numeric DatacenterParams field with its physical reason: declared once, checked
#: by DatacenterParams itself, so wherever parameters enter (a datacenters or sites file at export, a bundle at
#: verify/load, the Python API) a value outside is refused by name, never clipped. Joint rules (idle <= max,
#: curves positive over their operating range, ...) are checked after these: see ``DatacenterParams``.
PARAM_RANGES: dict[str, Bound] = {
    "cores_per_server": Bound(1.0, 4096.0, "a server has at least one core; the largest 2-socket servers hold "
                                           "2 x 192 (AMD EPYC 9965)"),
    "cpu_server_max_w": Bound(1.0, 10_000.0, "a server's CPU part draws watts to ~2 kW; 10 kW is no single server"),
    "cpu_server_idle_w": Bound(0.0, 10_000.0, "a power (and idle <= max <= nameplate)"),
    "cpu_server_nameplate_w": Bound(1.0, 10_000.0, "a server's rated maximum (and idle <= max <= nameplate)"),
    "cpu_leakage_frac": Bound(0.0, 1.0, "a fraction of cpu_server_max_w (measured: under 0.5 %/K)"),
    "cpu_leakage_ref_c": Bound(0.0, 50.0, "a rack-inlet temperature (ASHRAE allowable classes: 5-45 degC)"),
    "cpu_leakage_span_k": Bound(1.0, 100.0, "a temperature span (it divides; the source's is 12 K)"),
    "gpu_idle_w": Bound(0.0, 2000.0, "data-centre GPU board powers are at most ~1,200 W (and idle <= max)"),
    "gpu_max_w": Bound(1.0, 2000.0, "data-centre GPU board powers are 250 W (V100) to ~1,200 W"),
    "gpu_alloc_util": Bound(0.0, 1.0, "a busy-time fraction"),
    "gpus_per_server": Bound(1.0, 64.0, "a GPU server holds at least one GPU; HGX/DGX boards hold 8"),
    "server_sleep_w": Bound(0.0, 10_000.0, "a power, at most the idle power"),
    "gpu_sleep_w": Bound(0.0, 2000.0, "a power, at most the GPU's idle power"),
    "server_wake_s": Bound(0.0, 900.0, "the engine lets a wake span at most one 15-min step"),
    "server_wake_power_frac": Bound(0.0, 1.0, "a booting server draws at most its full-load power (AutoScale: "
                                              "peak power during setup)"),
    "server_spare_min": Bound(0.0, 1e6, "a whole number of servers (a million is more than any site holds)"),
    "mem_static_w_per_gb": Bound(0.0, 10.0, "DRAM draws 0.07-0.125 W/GB (sources above); 10 is ~100x"),
    "mem_dynamic_w_per_gb": Bound(0.0, 10.0, "DRAM draws well under 1 W/GB in use; 10 is ~50x"),
    "it_fan_design_frac": Bound(0.0, 1.0, "a fraction of the design IT heat (sources: 5-15 %)"),
    "it_fan_min_airflow_ratio": Bound(0.01, 1.0, _FLOOR),
    "server_delta_t_design_k": Bound(1.0, 50.0, "air temperature rise across a server (it divides; ~11-12 K)"),
    "supply_air_c": Bound(5.0, 45.0, "a supply-air set point within ASHRAE's allowable inlet classes (5-45 degC)"),
    "supply_approach_k": Bound(0.0, 20.0, "supply-to-inlet mixing, 0 (contained) to ~10 K (sources: 2-8 K)"),
    "return_approach_k": Bound(0.0, 20.0, "outlet-to-return mixing (sources: 1-4 K)"),
    "air_density_kg_m3": Bound(0.5, 1.5, "air at 0-5,000 m and -20..50 degC"),
    "air_cp_j_per_kg_k": Bound(950.0, 1100.0, "dry air 1,005 J/(kg K), humid air a few % more"),
    "crac_fan_design_frac": Bound(0.0, 1.0, "a fraction of the design IT power"),
    "crac_min_airflow_ratio": Bound(0.01, 1.0, _FLOOR),
    "chiller_cop_water": Bound(1.0, 12.3, "a chiller moves more heat than it uses (> 1) and less than a Carnot "
                                          "machine at the rating point: 279.8 K / (29.44 - 6.67) K = 12.3"),
    "chiller_cop_air": Bound(1.0, 9.9, "> 1, and below Carnot at the rating point: 279.8 K / (35 - 6.67) K = 9.9"),
    "chiller_capacity_factor": Bound(0.1, 10.0, "rated capacity / design cooling load: a chiller of this site"),
    "chw_supply_c": Bound(1.0, 25.0, "chilled water above freezing; high-temperature systems supply ~20 degC"),
    "chw_design_c": Bound(1.0, 25.0, "a chilled-water rating temperature (AHRI 550/590: 6.67 degC)"),
    "cond_design_water_c": Bound(10.0, 50.0, "a condenser-water rating temperature (AHRI 550/590: 29.44 degC)"),
    "cond_design_air_c": Bound(10.0, 60.0, "a condenser-air rating temperature (AHRI: 35 degC)"),
    **{f"chiller_{c}_c{i}": Bound(-10.0, 10.0, _CURVE) for c in ("cap", "pow", "flf") for i in range(3)},
    "chiller_cond_min_c": Bound(0.0, 45.0, "an entering condenser-water temperature above freezing"),
    "chiller_dt_max": Bound(0.0, 20.0, "the curves' upper input limit (default 10; CapRatio's vertex is 15.4)"),
    "chiller_min_plr": Bound(0.0, 1.0, "a part-load ratio"),
    "chw_range_k": Bound(0.5, 20.0, "chilled-water return - supply at design (AHRI 550/590: 5.56 K)"),
    "wse_hx_approach_k": Bound(0.0, 10.0, "a plate heat exchanger's approach (1-3 K)"),
    "tower_design_wetbulb_c": Bound(-20.0, 40.0, "a design wet-bulb (the hottest climates' are ~32 degC)"),
    "tower_approach_k": Bound(0.5, 20.0, "a cooling tower's approach (market median 5 K)"),
    "tower_fan_design_frac": Bound(0.0, 0.2, _FAN),
    "tower_wetbulb_sens_per_k": Bound(0.0, 0.2, "relative airflow per K of wet-bulb (default 4 %/K)"),
    "tower_min_airflow_ratio": Bound(0.01, 1.0, _FLOOR),
    "dry_cooler_approach_k": Bound(0.5, 40.0, "a dry cooler's approach (market median 10 K)"),
    "dry_cooler_fan_design_frac": Bound(0.0, 0.2, _FAN),
    "dry_cooler_air_dt_k": Bound(0.5, 30.0, "the coil's air-side rise (it divides; default 5.56 K)"),
    "hybrid_switchover_c": Bound(-50.0, 60.0, "an outdoor dry-bulb"),
    "adiabatic_pad_effectiveness": Bound(0.0, 1.0, "above 1 the pad would cool the air below its wet-bulb",
                                         low_inclusive=False),
    "chw_pump_design_frac": Bound(0.0, 0.2, _PUMP),
    "cw_pump_design_frac": Bound(0.0, 0.2, _PUMP),
    "pump_min_flow_ratio": Bound(0.01, 1.0, _FLOOR),
    **{f"pump_curve_c{i}": Bound(-10.0, 10.0, _CURVE) for i in range(4)},
    "latent_heat_kj_per_kg": Bound(2200.0, 2550.0, "water's latent heat: 2,501 kJ/kg at 0 degC, 2,257 at 100 degC"),
    "drift_frac": Bound(0.0, 0.01, "a fraction of circulating water (EnergyPlus: typically 0.002-0.2 %)"),
    "cw_range_k": Bound(0.5, 20.0, "condenser-water range (the drift divides by it; default 5.56 K)"),
    "water_cp_kj_per_kg_k": Bound(4.0, 4.3, "liquid water: 4.18-4.22 kJ/(kg K) from 0 to 100 degC"),
    "cycles_of_concentration": Bound(1.5, 50.0, "blowdown = evaporation / (cycles - 1); towers run 3-5 "
                                                "(EnergyPlus), 50 is near-zero blowdown"),
    "ups_loss_c0": Bound(0.0, 0.2, "UPS no-load loss as a fraction of its rating: 1.3 % in the WP108 fit; a UPS "
                                   "losing a fifth of its rating at no load is no UPS on the market"),
    "ups_loss_c1": Bound(0.0, 0.2, "UPS proportional loss per unit load (0.64 % in the fit); double-conversion "
                                   "units are 90-97 % efficient"),
    "ups_loss_c2": Bound(0.0, 0.2, "UPS square-law loss at full load (1.1 % in the fit; 1-4 % quoted)"),
    "transformer_nameplate_eff": Bound(0.5, 1.0, "an efficiency, 1 = no loss; distribution transformers are "
                                                 "~97-99.5 % efficient at their rating load"),
    "transformer_nameplate_pul": Bound(0.05, 1.0, "the per-unit load of the nameplate efficiency: 0.35 dry-type, "
                                                  "0.5 liquid-filled (NEMA TP-1); it divides"),
    "inlet_dewpoint_min_c": Bound(-30.0, 30.0, "a dew point at the IT inlet (ASHRAE's classes span -12 to 24 "
                                               "degC; and min < max)"),
    "inlet_dewpoint_max_c": Bound(-30.0, 30.0, "a dew point at the IT inlet (ASHRAE's classes span -12 to 24 "
                                               "degC; and min < max)"),
    "inlet_rh_max": Bound(0.05, 1.0, "a relative humidity (fraction); ASHRAE's classes allow 8-90 %",
                          ),
    "lighting_frac": Bound(0.0, 0.2, "lighting as a fraction of design IT power: ~1 % in a data hall; 20 % would "
                                     "be an office, not a white space"),
}
