"""Where a bracket's width lies, measured at a real schedule's own state (docs/optimum.md "Where the week's
bracket comes from"): the run's busy resources and servers on or waking per site and step, put into the power
bound's terms (``power.bound_at``, raised to the idle floor), against the engine's own terms.

The width upper - lower (``upper``: the run's ``carbon_incl_transfer_kg``) splits exactly into three parts:

- the schedule: the bound at the run's busy resources with the fewest servers that hold them (as the LP's
  rows allow), plus the run's transfers, less the LP's bound (where and when the work runs, and the drain);
- the servers: the bound at the run's own servers on or waking instead (whole servers, the spare pool, queued
  work, wakes);
- the power bound's error: the engine's facility carbon less the bound's at that state.

The engine does not report how its servers on split into GPU and CPU-only ones; the split that gives the least
IT heat is taken (GPU servers: the fewest that hold the busy GPUs), so the IT term's error is an upper estimate.
Carbon only: each step's kW x 0.25 h x the site's intensity. A separate module from ``power`` (which ``solve``
imports) because it needs ``solve``'s idle floor.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from gridshift.timestep import STEP_H

from .power import bound_at, facility_pieces, site_power
from .solve import OptimumResult, idle_floor_kw

#: the power terms compared, in :attr:`BracketSlack.bound_kg`'s order
TERMS = ("IT excl. server fans", "server fans", "CRAC fans", "plant, lighting, UPS, transformer", "total")


@dataclass
class BracketSlack:
    """The power bound against the engine at one run's state, and the bracket's width split into its parts
    (kg CO2). ``schedule_kg + servers_kg + power_kg == upper_kg - lower_kg``."""

    bound_kg: np.ndarray  # (len(TERMS),) the bound's terms at the run's state, kg
    engine_kg: np.ndarray  # (len(TERMS),) the engine's own terms, kg
    steps_above: int  # (site, step) pairs where the bound exceeds the engine's total (0 for a valid bound)
    lower_kg: float  # the LP's bound
    upper_kg: float  # the run's carbon incl. transfers
    transfer_kg: float  # the run's transfer emissions
    schedule_kg: float
    servers_kg: float
    power_kg: float
    site_ci: np.ndarray  # (n_dc,) each site's mean intensity over the window, g/kWh
    gpu_h: np.ndarray  # (2, n_dc) busy GPU-hours: the LP's solution (0 without a profile), the run

    @property
    def gpu_share(self) -> np.ndarray:
        """(2, n_dc) each site's share of the busy GPU-hours (%): the LP's, the run's."""
        tot = self.gpu_h.sum(axis=1, keepdims=True)
        return 100.0 * self.gpu_h / np.where(tot > 0, tot, 1.0)


def bracket_slack(sc, res, lower: OptimumResult) -> BracketSlack:
    """The slack of the bracket [``lower``, ``res``] at ``res``'s state (a drained run of ``lower``'s window,
    carbon objective: the bracket's upper end, or any policy's run); ``sc`` the scenario both were computed on."""
    st = res.steps
    s0 = int(st["step"].min())
    n = max(int(st["step"].max()) - s0 + 1, lower.steps)
    sl = slice(s0, s0 + n)
    managed = res.options["power"] == "managed"
    sites = [site_power(sc.params[d], sc.cap_cores[d], sc.cap_gpus[d], sc.cap_mem_gb[d], managed)
             for d in range(sc.n_dc)]
    fac = facility_pieces(sc.params, sites, sc.temp_c[:, sl], sc.wetbulb_c[:, sl])
    floor = idle_floor_kw(sc, sl, managed, fac)
    kg = np.zeros((2, len(TERMS)))
    above = 0
    least = 0.0
    gpu_h = np.zeros((2, sc.n_dc))
    cols = ("busy_cores", "busy_gpus", "busy_mem_gb", "servers_on", "servers_waking", "it_cpu_kw", "it_gpu_kw",
            "it_mem_kw", "it_fan_kw", "it_kw", "crac_fan_kw", "total_kw")
    for d, s in enumerate(sites):
        f = st.filter(st["dc"] == d).sort("step")
        k = f["step"].to_numpy() - s0
        g = {c: f[c].to_numpy() for c in cols}
        bc, bg, bm = g["busy_cores"], g["busy_gpus"], g["busy_mem_gb"]
        a = g["servers_on"] + g["servers_waking"]
        ac, ag = fewest_servers(s, bc, bg, bm, managed)
        # the run's servers: its GPU servers the fewest that hold the busy GPUs, the rest CPU-only
        a_c = np.maximum(a - ag, s.spare_c) if managed else ac
        h, i, c, p = bound_at(s, fac.slope[d][k], fac.icpt[d][k], bc, bg, bm, a_c, ag)
        p = np.maximum(p, floor[d][k])
        above += int((p > g["total_kw"] * (1 + 1e-9)).sum())
        eng = (g["it_cpu_kw"] + g["it_gpu_kw"] + g["it_mem_kw"], g["it_fan_kw"], g["crac_fan_kw"],
               g["total_kw"] - g["it_kw"] - g["crac_fan_kw"], g["total_kw"])
        low = (h, i - h, c, p - i - c, p)
        w = sc.carbon_g_per_kwh[d, s0 + k] / 1000.0 * STEP_H  # kg per kW over one step
        kg[0] += [float((x * w).sum()) for x in low]
        kg[1] += [float((x * w).sum()) for x in eng]
        p_least = bound_at(s, fac.slope[d][k], fac.icpt[d][k], bc, bg, bm, ac, ag)[3]
        least += float((np.maximum(p_least, floor[d][k]) * w).sum())
        gpu_h[1, d] = float(bg.sum()) * STEP_H
        if lower.profile is not None:
            gpu_h[0, d] = float(lower.profile.busy[d, :, 1].sum()) * STEP_H
    up = float(res.totals["carbon_incl_transfer_kg"])
    xfer = float(st["transfer_carbon_kg"].sum())
    ci = sc.carbon_g_per_kwh[:, s0:s0 + lower.window_steps].mean(axis=1)
    return BracketSlack(bound_kg=kg[0], engine_kg=kg[1], steps_above=above, lower_kg=float(lower.value), upper_kg=up,
                        transfer_kg=xfer, schedule_kg=least + xfer - float(lower.value), servers_kg=kg[0][-1] - least,
                        power_kg=up - xfer - kg[0][-1], site_ci=ci, gpu_h=gpu_h)


def fewest_servers(s, bc, bg, bm, managed: bool) -> tuple[np.ndarray, np.ndarray]:
    """(CPU-only, GPU) servers: the fewest that hold the busy resources as the LP's rows allow (GPU servers
    for the GPUs, then cores and memory on either kind), at least the spare pool; 0 with ``always_on``."""
    bc = np.asarray(bc, dtype=np.float64)
    if not managed:
        return 0.0 * bc, 0.0 * bc
    ag = np.clip(bg / s.gps, s.spare_g, s.n_g) if s.n_g > 0 else 0.0 * bc
    ac = np.maximum.reduce([np.full_like(bc, s.spare_c), bc / s.cps - ag, bm / s.mps - ag])
    return ac, ag


__all__ = ["TERMS", "BracketSlack", "bracket_slack", "fewest_servers"]
