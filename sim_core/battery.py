"""Battery storage per site: the first physics term added through the seam (``sim_core.terms``).

Each step a site's battery takes a target power (kW; > 0 charge, < 0 discharge, 0 idle) from the run's policy
(a Python policy through ``Simulator.step(..., battery=...)``, else the run's battery rule,
``sim_core.policies.battery_rules``) and does what its limits allow, in this order:

1. self-discharge: the stored energy E keeps ``(1 - self_discharge_per_month) ** (0.25 / 730)`` of itself;
2. charge: at most the power limit and what fills E up to ``soc_max``; the grid supplies ``charge_kwh``,
   of which ``sqrt(round_trip_eff)`` is stored;
3. discharge: at most the power limit, the site's facility load (a battery here never exports) and what takes E
   down to ``soc_min``; ``discharge_kwh`` reaches the site, ``discharge_kwh / sqrt(round_trip_eff)`` leaves E.

The site then draws **grid energy = facility energy + charge - discharge**, which carbon and cost are computed
from. Each battery starts at ``soc_min`` (it brings no energy into the run). The battery only shifts when energy is
bought: it never changes which tasks run where, so the whole-run results apply it after the stepping
(:func:`apply`), with the same :func:`battery_step` the step API uses, step by step (:func:`step`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numba import njit

from gridshift.battery_params import BATTERY_RANGES, CYCLE_LIFE, HOURS_PER_MONTH, BatteryParams
from gridshift.timestep import STEP_H

from .physics.term import Identity, Term

#: the parameter vector of one battery (kWh, kW, per-step factors), in this order
VEC_NAMES = ("capacity_kwh", "power_kw", "eta_charge", "eta_discharge", "keep_per_step", "soc_min_kwh",
             "soc_max_kwh")
B_CAP, B_P, B_ETA_C, B_ETA_D, B_KEEP, B_LO, B_HI = range(len(VEC_NAMES))
#: what the term adds per (site, step) to the results (kWh; the state of charge at the step's end)
OUT_NAMES = ("battery_charge_kwh", "battery_discharge_kwh", "battery_soc_kwh", "battery_loss_kwh", "grid_kwh")
O_CH, O_DIS, O_SOC, O_LOSS, O_GRID = range(len(OUT_NAMES))
N_OUT = len(OUT_NAMES)
_NET = ((1.0, "battery_charge_kwh"), (-1.0, "battery_discharge_kwh"))

TERM = Term(
    "battery", tuple(BATTERY_RANGES), OUT_NAMES,
    "battery storage per site: grid energy = facility energy + charge - discharge",
    # (carbon and cost through grid energy; the change of energy held is derived from battery_soc_kwh)
    enters={"grid_energy": _NET, "storage": _NET, "carbon": (), "cost": ()},
    identities=(
        Identity("grid_energy", "grid_kwh", "grid energy = facility energy + battery charge - battery discharge",
                 ((1.0, "total_kwh"),)),
        Identity("storage", "battery_loss_kwh", "what a battery took and did not give back or keep: change of "
                 "energy held subtracted from charge - discharge", ((-1.0, "battery_soc_delta_kwh"),)),
    ),
    registry=BATTERY_RANGES, optional=True,
)


def param_vector(bp: BatteryParams) -> np.ndarray:
    """The float64 vector of one battery (``VEC_NAMES`` order)."""
    cap = bp.capacity_mwh * 1000.0
    eta = math.sqrt(bp.round_trip_eff)
    keep = (1.0 - bp.self_discharge_per_month) ** (STEP_H / HOURS_PER_MONTH)
    return np.array([cap, bp.power_mw * 1000.0, eta, eta, keep, bp.soc_min_frac * cap, bp.soc_max_frac * cap])


@njit(cache=True, nogil=True)
def battery_step(b, soc, facility_kw, target_kw):
    """One step of one battery ``b`` (``VEC_NAMES``) holding ``soc`` kWh, under ``facility_kw`` of site load and
    a target ``target_kw``: (charge kWh from the grid, discharge kWh to the site, kWh held at the step's end)."""
    held = soc * b[B_KEEP]
    ch = 0.0
    dis = 0.0
    if target_kw > 0.0:
        room = b[B_HI] - held
        if room > 0.0:
            ch = min(target_kw, b[B_P]) * STEP_H
            if ch * b[B_ETA_C] >= room:  # (full: exactly soc_max, never above it by a rounding)
                ch = room / b[B_ETA_C]
                held = b[B_HI]
            else:
                held += ch * b[B_ETA_C]
    elif target_kw < 0.0:
        avail = held - b[B_LO]
        if avail > 0.0:
            dis = min(-target_kw, b[B_P], max(facility_kw, 0.0)) * STEP_H
            if dis / b[B_ETA_D] >= avail:  # (empty: exactly soc_min)
                dis = avail * b[B_ETA_D]
                held = b[B_LO]
            else:
                held -= dis / b[B_ETA_D]
    return ch, dis, held


@njit(cache=True, nogil=True)
def battery_kernel(bvec, total_kw, target_kw, out):
    """Every site's battery over a run: ``bvec`` (n_dc, 7), ``total_kw``/``target_kw`` (n_dc, n); fills ``out``
    (N_OUT, n_dc, n) in ``OUT_NAMES`` order (loss = what the battery took and did not give back or keep)."""
    n_dc, n = total_kw.shape
    for d in range(n_dc):
        b = bvec[d]
        soc = b[B_LO]
        for k in range(n):
            ch, dis, nxt = battery_step(b, soc, total_kw[d, k], target_kw[d, k])
            out[O_CH, d, k] = ch
            out[O_DIS, d, k] = dis
            out[O_SOC, d, k] = nxt
            out[O_LOSS, d, k] = soc + ch - dis - nxt
            out[O_GRID, d, k] = total_kw[d, k] * STEP_H + ch - dis
            soc = nxt


@dataclass
class BatteryRun:
    """A run's batteries: the parameters, the target of every (site, step) (kW; the rule's until a Python
    policy sets one) and, for the step API, each battery's energy now."""

    params: BatteryParams
    policy: str
    vec: np.ndarray  # (n_dc, 7)
    target_kw: np.ndarray  # (n_dc, n)
    soc_kwh: np.ndarray  # (n_dc,)
    last: np.ndarray  # (N_OUT, n_dc): the last step's outputs (step API)


def setup(params: BatteryParams | None, policy: str, carbon: np.ndarray, price: np.ndarray, s0: int,
          n: int) -> BatteryRun | None:
    """The run's batteries (None without one): the rule ``policy``'s targets from the bundle's signals
    (n_dc, n_bundle; the rule reads each step's own and past values only)."""
    if params is None or not params.on:
        return None
    from .policies.battery_rules import targets

    n_dc = carbon.shape[0]
    vec = np.ascontiguousarray(np.tile(param_vector(params), (n_dc, 1)))
    tgt = targets(policy, carbon, price, s0, n, vec[:, B_P])
    return BatteryRun(params=params, policy=policy, vec=vec, target_kw=tgt, soc_kwh=vec[:, B_LO].copy(),
                      last=np.zeros((N_OUT, n_dc)))


def apply(run: BatteryRun, total_kw: np.ndarray) -> dict[str, np.ndarray]:
    """The term's outputs over the run's first ``total_kw.shape[1]`` steps: name -> (n_dc, n) array."""
    tk = np.ascontiguousarray(total_kw, dtype=np.float64)
    n = tk.shape[1]
    out = np.empty((N_OUT, tk.shape[0], n))
    battery_kernel(run.vec, tk, np.ascontiguousarray(run.target_kw[:, :n]), out)
    return {name: out[i] for i, name in enumerate(OUT_NAMES)}


def step(run: BatteryRun, j: int, total_kwh: np.ndarray) -> np.ndarray:
    """Step ``j`` of every battery in the step API (after the site's energy ``total_kwh`` (n_dc,) is known):
    advances the energy held and returns ``run.last`` (N_OUT, n_dc), exactly as :func:`apply` computes it."""
    o = run.last
    for d in range(run.vec.shape[0]):
        fac_kw = total_kwh[d] / STEP_H  # (x 0.25 and / 0.25 are exact)
        soc = run.soc_kwh[d]
        ch, dis, nxt = battery_step(run.vec[d], soc, fac_kw, run.target_kw[d, j])
        o[O_CH, d], o[O_DIS, d], o[O_SOC, d] = ch, dis, nxt
        o[O_LOSS, d] = soc + ch - dis - nxt
        o[O_GRID, d] = fac_kw * STEP_H + ch - dis
        run.soc_kwh[d] = nxt
    return o


def wear(params: BatteryParams, discharge_kwh: float) -> tuple[float, float]:
    """(degradation USD, embodied kg CO2e) of ``discharge_kwh`` discharged: the throughput cost per MWh, and the
    production emissions per kWh of capacity amortised over the cycle life the degradation cost assumes
    (``gridshift.battery_params.CYCLE_LIFE``)."""
    usd = discharge_kwh / 1000.0 * params.degradation_usd_per_mwh
    kg = discharge_kwh * params.embodied_kg_per_kwh / CYCLE_LIFE
    return usd, kg

