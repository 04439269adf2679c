"""Battery storage at a site: its parameters, each with a cited default and a valid range (one declaration, checked
on construction). Stdlib only, as ``gridshift.dc_params``; the model that uses them is ``sim_core.battery``.

A battery is a run option, never part of a bundle (a bundle's id stays what it was): every site of a run gets one
battery of these parameters. ``capacity_mwh`` is the *usable* energy, as datasheets state it (a Tesla Megapack's
"3.9 MWh", a Powerwall's "13.5 kWh of usable energy"), so the state-of-charge limits default to its whole range.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields
from typing import Any

from gridshift.bounds import Bound
from gridshift.dc_params import ParamError

__all__ = ["BatteryParams", "BatteryParamError", "BATTERY_RANGES", "CYCLE_LIFE", "DEFAULT_DURATION_H",
           "HOURS_PER_MONTH"]

#: power = capacity / 4 h when no power is given: "a 4-hour device" is the NREL Annual Technology Baseline's
#: representative utility-scale battery (atb.nrel.gov/electricity/2020, Utility-Scale Battery Storage, "Capacity
#: Factor"), the duration Cole & Karmakar's cost projections focus on (NREL/TP-6A40-85332, 2023, abstract)
DEFAULT_DURATION_H = 4.0
#: a month of self-discharge: 8,760 h / 12
HOURS_PER_MONTH = 730.0
#: full cycles over a battery's life: Tesla's Megapack 3 announcement, "support for 10,000+ cycles" (as reported by
#: climovo.com, "Megapack 3 vs Megapack 2"); the degradation cost and the embodied carbon's amortisation use it
CYCLE_LIFE = 10_000.0

#: The valid range of every battery parameter with its reason (refused by name outside it, never clipped).
BATTERY_RANGES: dict[str, Bound] = {
    "capacity_mwh": Bound(0.0, 1e5, "usable energy per site: 0 (no battery) to 100 GWh, above the largest "
                                    "battery sites built (a few GWh)"),
    "power_mw": Bound(0.0, 1e5, "charge and discharge power limit per site (MW)", low_inclusive=False),
    "round_trip_eff": Bound(0.0, 1.0, "energy out / energy in over a full cycle: > 0 and at most 1 (no battery "
                                      "returns more than it took)", low_inclusive=False),
    "self_discharge_per_month": Bound(0.0, 0.99, "a fraction of the stored energy lost per month (lithium-ion: "
                                               "2-3 %; 99 % is a broken battery)"),
    "soc_min_frac": Bound(0.0, 1.0, "a fraction of the usable capacity (and soc_min_frac < soc_max_frac)"),
    "soc_max_frac": Bound(0.0, 1.0, "a fraction of the usable capacity (and soc_min_frac < soc_max_frac)"),
    "degradation_usd_per_mwh": Bound(0.0, 1e4, "wear per MWh discharged: capital cost / cycle life is tens of "
                                               "USD/MWh; 10,000 is beyond any battery"),
    "embodied_kg_per_kwh": Bound(0.0, 1e3, "production emissions per kWh of capacity: 10-394 kg CO2e/kWh in the "
                                           "literature (Ankathi et al., World Electr. Veh. J. 15(6), 245, 2024)"),
}


class BatteryParamError(ParamError):
    """A battery parameter of the wrong type, outside its range, or breaking a joint rule; ``name`` is the
    parameter."""


@dataclass(frozen=True)
class BatteryParams:
    """One site's battery. Defaults (each cited; a reviewer can check each figure at its source):

    * ``capacity_mwh`` 0: no battery (the default run is unchanged).
    * ``power_mw``: None = capacity / 4 h (``DEFAULT_DURATION_H``).
    * ``round_trip_eff`` 0.85: "Cole and Frazier (2020) identified 85% as a representative round-trip
      efficiency, and the 2020 ATB adopts this value" (NREL ATB 2020, Utility-Scale Battery Storage,
      "Round-Trip Efficiency"). Split evenly: sqrt(0.85) on charge and on discharge.
    * ``self_discharge_per_month`` 0.02: lithium-ion "2% to 3% per month" (Dirac Delta Science & Engineering
      Data, "Self Discharge", diracdelta.co.uk; the lower end, for LFP's stable chemistry). A secondary source:
      no manufacturer's figure for a grid system was found.
    * ``soc_min_frac`` 0, ``soc_max_frac`` 1: the capacity is usable energy (module docstring). SustainDC's
      rule-based battery controller keeps 0.2-0.9 of a nominal capacity (HewlettPackard/dc-rl, RBCBatteryAgent
      ``min_soc=0.2, max_soc=0.9``): set these to model a nominal rating instead.
    * ``degradation_usd_per_mwh`` 32.6: OUR ARITHMETIC, capital cost / cycle life: the mid projection of a 4-hour
      system's cost in 2030, $326/kWh (Cole & Karmakar, "Cost Projections for Utility-Scale Battery Storage: 2023
      Update", NREL/TP-6A40-85332, abstract) over 10,000 full cycles (Tesla's Megapack 3 announcement, "support
      for 10,000+ cycles", as reported by climovo.com, "Megapack 3 vs Megapack 2"): 326 / 10,000 USD per kWh
      discharged. Reported beside the energy cost, not in it (``cost_usd`` stays energy x price).
    * ``embodied_kg_per_kwh`` 109.3: OUR ARITHMETIC on Hao et al., "GHG Emissions from the Production of
      Lithium-Ion Batteries for Electric Vehicles in China", Sustainability 9(4), 504 (2017), abstract: "the GHG
      emissions from the production of a 28 kWh battery are 3061 kgCO2-eq" for LFP, i.e. 3061 / 28 kg per kWh.
      Amortised over the same 10,000 cycles per kWh discharged (``sim_core.battery``) and reported beside the
      operational carbon, not in it.
    """

    capacity_mwh: float = 0.0
    power_mw: float | None = None
    round_trip_eff: float = 0.85
    self_discharge_per_month: float = 0.02
    soc_min_frac: float = 0.0
    soc_max_frac: float = 1.0
    degradation_usd_per_mwh: float = 326.0 * 1000.0 / CYCLE_LIFE
    embodied_kg_per_kwh: float = 3061.0 / 28.0

    def __post_init__(self) -> None:
        if self.power_mw is None:  # (a 4-hour device; checked below like a given power when there is a battery)
            object.__setattr__(self, "power_mw", self.capacity_mwh / DEFAULT_DURATION_H)
        for f in fields(self):
            v = getattr(self, f.name)
            if not isinstance(v, int | float) or isinstance(v, bool):
                raise BatteryParamError(f.name, f"battery.{f.name} must be a number, got {v!r} "
                                                f"({type(v).__name__})")
            x = float(v)
            b = BATTERY_RANGES[f.name]
            no_battery = f.name == "power_mw" and x == 0.0 and self.capacity_mwh == 0.0
            if not math.isfinite(x) or not (b.admits(x) or no_battery):
                raise BatteryParamError(f.name, f"battery.{f.name} = {v!r} is outside {b.describe()}: {b.reason}")
            object.__setattr__(self, f.name, x)
        if not self.soc_min_frac < self.soc_max_frac:
            raise BatteryParamError("soc_min_frac", f"battery.soc_min_frac = {self.soc_min_frac!r} must be below "
                                                    f"battery.soc_max_frac = {self.soc_max_frac!r}")

    @property
    def on(self) -> bool:
        """Whether there is a battery (capacity > 0)."""
        return self.capacity_mwh > 0.0

    def to_dict(self) -> dict[str, float]:
        return {f.name: getattr(self, f.name) for f in fields(self)}

    @classmethod
    def from_value(cls, v: Any) -> BatteryParams:
        """A BatteryParams from itself or a mapping of its fields (unknown keys refused by name)."""
        if isinstance(v, cls):
            return v
        if not isinstance(v, dict):
            raise BatteryParamError("battery", f"battery must be None, a BatteryParams or a mapping of its "
                                               f"fields, got {type(v).__name__}")
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(v) - known)
        if unknown:
            raise BatteryParamError(str(unknown[0]), f"unknown battery parameter(s) {unknown}; known: "
                                                     f"{sorted(known)}")
        return cls(**v)
