"""Network energy as a power model: a fixed share (baseload) plus a marginal energy per GB (issue 35 item 3).

The run's transfer accounting (:mod:`sim_core.transfer`) charges ``GB x transfer_kwh_per_gb``, an average
(attributional) intensity. Mytton, Lundén & Malmodin, "Network energy use not directly proportional to data
volume: The power model approach for more reliable network energy consumption calculations", J. Industrial
Ecology 28(4), 966-980 (2024), doi:10.1111/jiec.13512, argue that network power is mostly a baseload that does
not follow the data volume, and model it as ``P = P_baseload + P_marginal(data rate)``: the baseload is shared
out by time (per line or user), only the marginal part by data. Over a run window of ``H`` hours that gives

    kWh = baseload_w_per_mbps x capacity_mbps x H / 1000  +  marginal_kwh_per_gb x GB moved.

* **fixed share**: the baseload of the paths that connect the sites, scaled by their capacity. The figure is
  Malmodin's fixed core/metro model, 1.5 W per line + **0.03 W per Mbps** of line capacity (Malmodin, Lövehagen,
  Bergmark & Lundén, "The power consumption of mobile and fixed network data services - the case of streaming
  video and downloading large files", Electronics Goes Green 2020+, §4.5; the model the 2024 paper builds on,
  reproduced in Mytton's notebook github.com/davidmytton/paper-network-energy, "Transmission - core", which
  applies the per-Mbps term to the line's capacity). The capacity of the path from site ``i`` to ``j`` is the
  bundle's ``throughput_mbps[i, j]`` (each direction once). The sites are connected whether or not a task moves,
  so this share is the same for every policy over the same window: it adds to every run's network energy and
  **cannot change the sign of a saving**, only dilute it (:func:`fixed_kwh`).
* **marginal per GB**: what one more GB adds. The power model puts it near zero inside the provisioned capacity
  (lower bound 0, the ``none`` preset); reading Malmodin's 0.03 W/Mbps as a power per Mbps *carried* instead
  gives 0.03 W x 8,000 Mb/GB / 3,600 s/h / 1,000 = 6.67e-5 kWh/GB (our arithmetic); the largest figure of the
  literature the run defaults rest on is Aslan et al.'s 2015 average, 0.06 kWh/GB (``aslan2018-2015``), which
  the power-model view reads as an upper bound: an average that charges the whole baseload per GB.

No registered policy reads ``transfer_kwh_per_gb`` (only the accounting, :func:`sim_core.transfer.transfer_one`,
and the RL rewards do), so a run's transfer emissions are exactly proportional to it: :func:`saving_at` and
:func:`break_even_kwh_per_gb` give a policy's saving at any marginal intensity from one pair of runs
(tests/unit/sim_core/test_network_power.py checks this against runs at other intensities).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .scenario import Scenario

#: Malmodin 2020 §4.5 fixed core/metro model, per Mbps of line capacity (see the module docstring)
MALMODIN_W_PER_MBPS = 0.03
#: 1 GB = 8,000 Mb; W x s -> kWh
_MB_PER_GB = 8000.0


def w_per_mbps_to_kwh_per_gb(w_per_mbps: float) -> float:
    """Energy per GB carried by a power per Mbps carried (W/Mbps = J/Mb): x 8,000 Mb/GB / 3.6e6 J/kWh."""
    return w_per_mbps * _MB_PER_GB / 3.6e6


@dataclass(frozen=True)
class NetworkPowerModel:
    """``baseload_w_per_mbps`` x the sites' path capacity (the fixed share, W) + ``marginal_kwh_per_gb`` x GB."""

    name: str
    baseload_w_per_mbps: float
    marginal_kwh_per_gb: float
    source: str

    def __post_init__(self) -> None:
        for f in ("baseload_w_per_mbps", "marginal_kwh_per_gb"):
            v = getattr(self, f)
            if not (isinstance(v, int | float) and math.isfinite(v) and v >= 0):
                raise ValueError(f"NetworkPowerModel {self.name!r}: {f} must be a finite number >= 0, got {v!r}")

    def run_options(self) -> dict:
        """The run options that charge the marginal part per GB (the fixed share is :func:`fixed_kwh`)."""
        return {"transfer_kwh_per_gb": self.marginal_kwh_per_gb}


#: The power-model presets: both read Malmodin's fixed-network coefficient (module docstring).
NETWORK_POWER_MODELS: dict[str, NetworkPowerModel] = {m.name: m for m in (
    NetworkPowerModel("malmodin2020-baseload", MALMODIN_W_PER_MBPS, 0.0,
                      "Malmodin et al. 2020 §4.5 (0.03 W/Mbps of capacity), Mytton et al. 2024: baseload only"),
    NetworkPowerModel("malmodin2020-marginal", MALMODIN_W_PER_MBPS, w_per_mbps_to_kwh_per_gb(MALMODIN_W_PER_MBPS),
                      "Malmodin et al. 2020 §4.5, the 0.03 W/Mbps also read as power per Mbps carried"),
)}

#: The literature's plausible range of the marginal network energy per GB moved (kWh/GB): 0 (the power model's
#: baseload-only reading) to 0.06 (Aslan et al. 2018's 2015 average, the largest figure the defaults rest on).
MARGINAL_KWH_PER_GB_RANGE = (0.0, 0.06)


def path_capacity_mbps(sc: Scenario) -> float:
    """Sum of the bundle's path throughput over the ordered pairs of distinct sites (Mbps)."""
    thr = np.asarray(sc.throughput_mbps, dtype=np.float64)
    off = ~np.eye(thr.shape[0], dtype=bool)
    cap = thr[off]
    if not np.all(np.isfinite(cap)):
        raise ValueError(f"bundle {sc.bundle_id}: a path between two distinct sites has no finite throughput_mbps")
    return float(cap.sum())


def fixed_kwh(sc: Scenario, model: NetworkPowerModel, start_step: int, steps: int) -> tuple[float, float]:
    """(kWh, kg CO2) of the fixed share over the window steps ``start_step .. start_step + steps - 1``: each
    ordered pair's baseload at the mean of its two ends' carbon intensity at every step."""
    n = sc.n_dc
    if steps <= 0 or start_step < 0 or start_step + steps > sc.n_steps:
        raise ValueError(f"window {start_step}+{steps} steps is outside bundle {sc.bundle_id} ({sc.n_steps} steps)")
    ci = sc.carbon_g_per_kwh[:, start_step:start_step + steps]
    h = sc.step_s / 3600.0
    kwh = kg = 0.0
    for i in range(n):
        for j in range(n):
            if i == j:
                continue
            kw = model.baseload_w_per_mbps * float(sc.throughput_mbps[i, j]) / 1000.0
            kwh += kw * h * steps
            kg += kw * h * float((0.5 * (ci[i] + ci[j])).sum()) / 1000.0
    return kwh, kg


def carbon_per_kwh_per_gb(totals: dict, kwh_per_gb: float) -> float:
    """kg CO2 of a run's transfers per kWh/GB of network intensity (exact: its transfer emissions are
    ``kwh_per_gb x sum(GB x CI) / 1000``); 0 for a run without transfers."""
    kg = float(totals["transfer_carbon_kg"])
    if kwh_per_gb <= 0:
        if kg != 0.0:
            raise ValueError(f"a run at {kwh_per_gb} kWh/GB reports {kg} kg of transfer emissions")
        raise ValueError("the run was at 0 kWh/GB: its transfer emissions give no slope; run at a positive figure")
    return kg / kwh_per_gb


def saving_at(base: dict, pol: dict, kwh_per_gb_run: float, kwh_per_gb: float, fixed_kg: float = 0.0) -> float:
    """A policy's carbon saving incl. transfers against ``base`` in %, had both runs (made at ``kwh_per_gb_run``)
    been charged ``kwh_per_gb`` per GB, plus a fixed share of ``fixed_kg`` each (the same window)."""
    def total(t):
        work = float(t["carbon_incl_transfer_kg"]) - float(t["transfer_carbon_kg"])
        return work + kwh_per_gb * carbon_per_kwh_per_gb(t, kwh_per_gb_run) + fixed_kg
    b = total(base)
    return 100.0 * (b - total(pol)) / b


def break_even_kwh_per_gb(base: dict, pol: dict, kwh_per_gb_run: float) -> float:
    """The marginal network intensity (kWh/GB) at which the policy's saving against ``base`` is zero; ``inf``
    when transfers never cancel it (the policy moves no more than the base, or it saves nothing to begin with:
    then ``nan``). The fixed share adds equally to both and does not move it."""
    work = {k: float(t["carbon_incl_transfer_kg"]) - float(t["transfer_carbon_kg"]) for k, t in (("b", base),
                                                                                              ("p", pol))}
    slope = carbon_per_kwh_per_gb(pol, kwh_per_gb_run) - carbon_per_kwh_per_gb(base, kwh_per_gb_run)
    gain = work["b"] - work["p"]
    if gain <= 0:
        return float("nan")
    return float("inf") if slope <= 0 else gain / slope
