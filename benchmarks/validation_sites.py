"""docs/validation.md's section on a bundle's own sites: PUE, WUE, free cooling and electrical losses of each
site at the load a year of simulation puts on it, beside the operators' published figures (issue 34).

The rest of the page runs one reference datacenter on fixed load profiles to isolate climate; this section
runs the bundle the results come from (``sim_core.run``, ``lowest_carbon``, seed 0, the whole year, power-
managed servers as every result), so its sites are validated at their own size, hardware and load. Nothing is
fitted: the figures are the run's (``RunResult.sites`` and the steps' loss columns) and the design IT power is
the model's own (``sim_core.physics.design_point``: every server at full load).
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import polars as pl

from gridshift import scale
from gridshift.dc_params import DatacenterParams
from sim_core import physics as ph

POLICY = "lowest_carbon"
#: the run's chunks (sim_core.chunks): a week of arrivals at a time, so a year of the default's 41 M tasks holds
#: about 1.2 GB rather than 8.5 (the results are the one-chunk run's bit for bit)
CHUNK_STEPS = 672


def bundle_sites(bundle: Path) -> list[dict]:
    """One row per site of ``bundle``: size, design and mean IT power, PUE, WUE, free-cooling hours and losses."""
    import sim_core

    res = sim_core.run(bundle, POLICY, seed=0, chunk_steps=CHUNK_STEPS)
    dcs = {d["location"]: d for d in json.loads((bundle / "datacenters.json").read_text())["datacenters"]}
    s = res.steps
    hours = float(s.filter(pl.col("dc") == 0).height) * 0.25
    rows = []
    for site in res.sites.iter_rows(named=True):
        loc = site["location"]
        d = dcs[loc]
        p = DatacenterParams.from_stored(d["physics"])
        design_it_kw = float(ph.design_point(ph.param_vector(p), d["total_cores"], d["total_gpus"],
                                             d["total_mem_gb"])[2])
        mine = s.filter(pl.col("location") == loc)
        losses_kwh = float((mine["ups_loss_kw"] + mine["transformer_loss_kw"] + mine["lighting_kw"]).sum()) * 0.25
        rows.append({
            "location": loc, "gpus": d["total_gpus"], "gpu_model": p.gpu_model, "cores": d["total_cores"],
            "design_it_mw": design_it_kw / 1000.0, "mean_it_mw": site["it_kwh"] / hours / 1000.0,
            "load": site["it_kwh"] / hours / design_it_kw, "gpu_util": float(mine["gpu_util"].mean()),
            "pue": site["pue"], "wue": site["wue_l_per_kwh"], "fc_h": site["free_cooling_h"],
            "pfc_h": site["partial_free_cooling_h"], "elec": losses_kwh / site["it_kwh"],
        })
    return rows


def render(rows: list[dict], bundle: Path, at_half_load: dict[str, float], cite) -> str:
    """The section; ``at_half_load``: location -> the page's PUE of the reference site at 50 % load (always on)
    in the same weather, ``cite``: the page's citation function."""
    L: list[str] = []
    a = L.append
    params = json.loads((bundle / "manifest.json").read_text())["parameters"]
    size = float(params.get("scale", scale.RACK_SCALE))
    a(f"## The bundle's own sites at their own load (`{bundle.name}`: scale ×{size:.4g}, {rows[0]['gpu_model']})\n")
    if size != 1.0:
        a(f"This bundle is ×{size:.4g} of the source cluster (`gridshift/scale.py`); the main job's default is ×1.\n")
    a("Every facility part of the model is sized per design IT power, so PUE and WUE follow the load fraction and "
      "the weather rather than the size; what does not scale is the spare pool (one idle server per kind), a larger "
      "share of a smaller site.\n")
    a(f"A whole year of the bundle under `{POLICY}` (seed 0, power-managed servers, as every result): each site at "
      "its own size, GPU generation and load. Design IT = every server at full load (the rating of its UPS, fans "
      "and pumps); load = mean IT power / design IT.\n")
    a("| site | GPUs | cores | design IT (MW) | mean IT (MW) | load | GPU util. | PUE | PUE at 50 % load, always on "
      "(table above) | WUE (L/kWh) | free cooling h (full / partial) | elec. losses (% of IT) |")
    a("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        half = at_half_load.get(r["location"])
        a(f"| {r['location']} | {r['gpus']:,.0f} {r['gpu_model']} | {r['cores']:,.0f} | {r['design_it_mw']:.3g} | "
          f"{r['mean_it_mw']:.3g} | {r['load']:.0%} | {r['gpu_util']:.0%} | {r['pue']:.3f} | "
          f"{'' if half is None else f'{half:.3f}'} | {r['wue']:.2f} | {r['fc_h']:,.0f} / {r['pfc_h']:,.0f} | "
          f"{r['elec']:.1%} |")
    a("")
    pues = [r["pue"] for r in rows]
    wues = [r["wue"] for r in rows]
    a(f"* **PUE** {min(pues):.3f}-{max(pues):.3f}: against the industry average 1.58 {cite('uptime23')}, hyperscale "
      f"fleets 1.08-1.10 {cite('google21', 'meta23')}, Microsoft's newest designs 1.12 {cite('msft22')} and Meta's "
      f"outside-air Prineville 1.15 {cite('prineville')}.")
    a(f"* **WUE** {min(wues):.2f}-{max(wues):.2f} L/kWh: against Meta's 0.26 {cite('meta21')}, Microsoft's 0.30 "
      f"{cite('msftwue')}, AWS's 0.25 (2021) and 0.12 (2025) {cite('aws21', 'aws25')} and the 1.8 L/kWh of an average "
      f"US data center {cite('lbnl16')}.")
    worst = max(rows, key=lambda r: r["pue"])
    half = at_half_load.get(worst["location"])
    a(f"* **Part load is a design choice, stated here, not tuned away.** {worst['location']}'s {worst['pue']:.3f} "
      f"lies above the 50 %-load figure of the same weather ({'' if half is None else f'{half:.3f}'}) because its "
      f"IT draws {worst['load']:.0%} of its design power: servers without work are switched off (power-managed, "
      "docs/model.md §4a) while the plant is rated for the installed capacity, and its fixed parts do not fall with "
      "the load: the CRAC / air-handler fans' 60 % airflow floor and the pumps' 70 % flow floor "
      "(`crac_min_airflow_ratio`, `pump_min_flow_ratio`, both OUR CHOICE with the reason in gridshift/dc_params.py), "
      "the UPS's no-load loss (1.33 % of its rating) and the transformer's core loss, and lighting (1 % of design "
      "IT). Operators' annual PUEs are of sites run near their design load; a site built for more than its "
      f"load shows this gap. In a humid climate that free-cools 0 h ({worst['location']}: "
      f"{worst['fc_h']:,.0f} h) nothing offsets it.")
    return "\n".join(L) + "\n"


def half_load_pues(rows: list[dict]) -> dict[str, float]:
    """location -> the page's constant-50 %-load PUE (``validation.run_sites`` rows)."""
    return {r["location"]: float(r["const"]["pue"]) for r in rows if np.isfinite(r["const"]["pue"])}
