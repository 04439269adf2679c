"""The physics terms: one declaration each (its parameters, from a registry with ranges; its named outputs, the
per-step columns of the results; the module whose kernels compute them) and the conservation identities those
outputs enter. :func:`check` evaluates every identity on a run's per-step frame, so a test (or a user) sees at
once that a new term's energy, carbon, cost or water is accounted for.

Where the kernels live: IT, the cooling plant, the power chain and water are computed together in
``sim_core.physics.dc_step`` (one jitted pass per site and step: splitting it into a call per term costs 5-11 %
of stepping, measured when ``facility_from_cooling`` was split out), network energy in ``sim_core.transfer``,
the battery in ``sim_core.battery``. The declarations name the slots those kernels already fill, so the results
are bit for bit what they were.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import polars as pl

from gridshift.battery_params import BATTERY_RANGES
from gridshift.param_ranges import PARAM_RANGES

from . import battery as B
from . import physics as PH


@dataclass(frozen=True)
class Identity:
    """``total`` = sum of ``sign x column`` over ``parts``, every row of the per-step frame (to rounding)."""

    name: str
    total: str
    parts: tuple[tuple[float, str], ...]
    doc: str


@dataclass(frozen=True)
class PhysicsTerm:
    """One physics term. ``params``: its parameter names in ``registry`` (``PARAM_RANGES`` of
    ``gridshift.dc_params`` or ``BATTERY_RANGES`` of ``gridshift.battery_params``, each with its range);
    ``outputs``: its columns of the per-step frame; ``module``: where its kernels are; ``enters``: the identities
    its outputs are part of; ``optional``: present only when its option is on (the battery)."""

    name: str
    module: str
    params: tuple[str, ...]
    outputs: tuple[str, ...]
    enters: tuple[str, ...]
    doc: str
    optional: bool = False

    def ranges(self) -> dict:
        """Each parameter's declared range (``gridshift.bounds.Bound``; derived parameters have none)."""
        reg = BATTERY_RANGES if self.name == "battery" else PARAM_RANGES
        return {p: reg[p] for p in self.params if p in reg}


_FACILITY = ("crac_fan_kw", "chiller_kw", "tower_fan_kw", "chw_pump_kw", "cw_pump_kw")
_CHAIN = ("ups_loss_kw", "transformer_loss_kw", "lighting_kw")
_WATER = ("water_evap_l", "water_drift_l", "water_blowdown_l", "air_econ_water_l")

IDENTITIES: tuple[Identity, ...] = (
    Identity("facility_power", "total_kw", tuple((1.0, c) for c in ("it_kw",) + _FACILITY + _CHAIN),
             "facility power = IT + CRAC fans + chiller + heat-rejection fans + pumps + UPS + transformer + lighting"),
    Identity("white_space_heat", "cooling_load_kw", ((1.0, "it_kw"), (1.0, "crac_fan_kw"), (1.0, "lighting_kw")),
             "the cooling load is every watt dissipated in the white space (docs/model.md §4)"),
    Identity("water", "water_l", tuple((1.0, c) for c in _WATER),
             "water = tower evaporation + drift + blowdown + the air-side economizer's evaporation"),
    Identity("grid_energy", "grid_kwh", ((1.0, "total_kwh"), (1.0, "battery_charge_kwh"),
                                         (-1.0, "battery_discharge_kwh")),
             "grid energy = facility energy + battery charge - battery discharge"),
    Identity("carbon", "carbon_kg", ((1.0, "grid_carbon_kg"),),
             "a site's carbon is its grid energy x the step's carbon intensity"),
    Identity("cost", "cost_usd", ((1.0, "grid_cost_usd"),), "a site's cost is its grid energy x the step's price"),
    Identity("storage", "battery_loss_kwh", ((1.0, "battery_charge_kwh"), (-1.0, "battery_discharge_kwh"),
                                             (-1.0, "battery_soc_delta_kwh")),
             "what a battery took and did not give back or keep: charge - discharge - change of energy held"),
)

TERMS: tuple[PhysicsTerm, ...] = (
    PhysicsTerm("it", "sim_core.physics", tuple(p for p in PH.IT_PARAMS), PH.IT_OUT, ("facility_power",
                "white_space_heat"), "servers, GPUs, memory and server fans in their power states"),
    PhysicsTerm("cooling_plant", "sim_core.physics",
                tuple(p for p in PH.FACILITY_PARAMS if not p.startswith(("ups_", "transformer_", "lighting_")))
                + ("condenser_is_water", "condenser_is_dry", "economizer_on", "adiabatic_on", "air_econ_on",
                   "air_econ_evap"),
                ("crac_fan_kw",) + tuple(PH.PLANT_OUT) + ("air_econ_kw", "air_econ_frac"),
                ("facility_power", "white_space_heat"),
                "air side, air- and water-side economizers, chiller, heat rejection and pumps"),
    PhysicsTerm("electrical_losses", "sim_core.physics",
                ("ups_loss_c0", "ups_loss_c1", "ups_loss_c2", "transformer_nameplate_eff",
                 "transformer_nameplate_pul", "lighting_frac"), _CHAIN, ("facility_power", "white_space_heat"),
                "UPS and transformer / distribution losses and lighting"),
    PhysicsTerm("water", "sim_core.physics",
                ("latent_heat_kj_per_kg", "drift_frac", "cw_range_k", "water_cp_kj_per_kg_k",
                 "cycles_of_concentration"),
                _WATER + ("water_l",), ("water",), "evaporation, drift and blowdown of the heat rejection"),
    PhysicsTerm("network", "sim_core.transfer", ("transfer_kwh_per_gb",),
                ("transfer_kwh", "transfer_carbon_kg", "transfer_cost_usd"), (),
                "energy, emissions and egress cost of moving a task's data (a run option, not a site parameter)"),
    PhysicsTerm("battery", "sim_core.battery", tuple(BATTERY_RANGES), B.OUT_NAMES,
                ("grid_energy", "carbon", "cost", "storage"),
                "battery storage per site: grid energy = facility energy + charge - discharge", optional=True),
)


def term(name: str) -> PhysicsTerm:
    for t in TERMS:
        if t.name == name:
            return t
    raise KeyError(f"no physics term {name!r}; the terms: {', '.join(t.name for t in TERMS)}")


def _with_derived(steps: pl.DataFrame, soc0_kwh: np.ndarray | None) -> pl.DataFrame:
    """The frame with the columns an identity reads that the frame does not carry: grid energy without a battery
    (the facility's, no charge or discharge), the grid energy's carbon and cost at the step's signals, and each
    battery's change of energy held in the step (the frame is site-major, each site's
    steps in order; ``soc0_kwh`` (n_dc,): the energy before the first step)."""
    if "grid_kwh" not in steps.columns:
        steps = steps.with_columns(pl.col("total_kwh").alias("grid_kwh"), pl.lit(0.0).alias("battery_charge_kwh"),
                                   pl.lit(0.0).alias("battery_discharge_kwh"))
    steps = steps.with_columns((pl.col("grid_kwh") * pl.col("carbon_g_per_kwh") / 1000.0).alias("grid_carbon_kg"),
                               (pl.col("grid_kwh") * pl.col("price_usd_per_mwh") / 1000.0).alias("grid_cost_usd"))
    if "battery_soc_kwh" not in steps.columns:
        return steps
    n_dc = steps["dc"].n_unique()
    soc = steps["battery_soc_kwh"].to_numpy().reshape(n_dc, -1)
    s0 = np.zeros(n_dc) if soc0_kwh is None else np.asarray(soc0_kwh, dtype=np.float64)
    prev = np.concatenate([s0[:, None], soc[:, :-1]], axis=1)
    return steps.with_columns(pl.Series("battery_soc_delta_kwh", (soc - prev).reshape(-1)))


def residuals(steps: pl.DataFrame, soc0_kwh: np.ndarray | None = None) -> dict[str, float]:
    """The largest relative residual of every identity whose columns the frame has (a battery's identities only
    with batteries; ``soc0_kwh``: each battery's energy before the first step, its ``soc_min``),
    max |total - sum parts| / max(1, |total|)."""
    df = _with_derived(steps, soc0_kwh)
    out = {}
    for ident in IDENTITIES:
        cols = [ident.total] + [c for _, c in ident.parts]
        if any(c not in df.columns for c in cols):
            continue
        tot = df[ident.total].to_numpy()
        s = np.zeros_like(tot)
        for sign, c in ident.parts:
            s = s + sign * df[c].to_numpy()
        out[ident.name] = float(np.max(np.abs(tot - s) / np.maximum(1.0, np.abs(tot)))) if tot.size else 0.0
    return out
