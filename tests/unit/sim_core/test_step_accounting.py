"""physics.step_energy, the step API's accounting: per datacenter energy (kWh = kW x 0.25 h), cost
(kWh x USD/MWh / 1000), carbon (kWh x g/kWh / 1000), busy and idle resources, and their sums, against the
physics of the same operating points (``physics.compute``) and hand-computed prices and intensities."""

from __future__ import annotations

import numpy as np
import pytest

from gridshift.dc_params import CHILLER_2015, DatacenterParams
from sim_core import physics as ph

CAPS = np.array([[6400.0, 64.0, 51200.0], [3200.0, 0.0, 25600.0], [1600.0, 16.0, 12800.0]])
#: busy (cores, GPUs, GB) per DC in the step: all GPUs busy at DC 2; a float residue below zero at DC 1
BUSY = np.array([[3000.0, 40.0, 20000.0], [-1e-9, 0.0, 1000.0], [800.0, 16.0, 0.0]])
TEMP, WETBULB = np.array([25.0, 5.0, 40.0]), np.array([18.0, 2.0, 24.0])
#: DC 2's chiller is sized at 30 % of its design load: at 40 degC part of the cooling load is unmet
#: (sleeping servers draw 15 W: the default design's servers draw nothing asleep)
_BASE = {**CHILLER_2015, "server_sleep_w": 15.0}
DESIGNS = [_BASE, _BASE, {**_BASE, "chiller_capacity_factor": 0.3}]
CARBON, PRICE = np.array([400.0, 30.0, 700.0]), np.array([80.0, -5.0, 120.0])


@pytest.fixture(scope="module", autouse=True)
def warm_jit():
    """This module needs no policy run (overrides the package's session warm-up)."""


#: managed power: per DC (CPU-only on, GPU on, CPU-only waking, GPU waking) servers, time-weighted over the step
SERVERS = np.array([[30.0, 6.0, 2.0, 1.0], [20.0, 0.0, 1.5, 0.0], [10.0, 2.0, 0.0, 0.0]])


def run_step(j: int = 1, k: int = 2, managed: bool = False):
    """step_energy at run step j (busy in part[:, :, j]) with the signals at bundle step k; other steps hold
    other values, so reading the wrong one shows."""
    n_dc = CAPS.shape[0]
    params = np.stack([ph.param_vector(DatacenterParams(**d)) for d in DESIGNS])
    part = np.full((3, n_dc, 3), 999.0)
    part[:, :, j] = BUSY.T
    srv = np.zeros((4, n_dc, 4))
    if managed:
        srv[:, :, j] = SERVERS.T
    sig = lambda v: np.column_stack([v + 1.0, v + 2.0, v, v + 3.0])  # noqa: E731
    out = np.full((ph.N_STEP_DC, n_dc), np.nan)
    tot = np.full(ph.N_STEP_DC, 7.0)  # stale sums from an earlier step
    ph.step_energy(params, CAPS[:, 0].copy(), CAPS[:, 1].copy(), CAPS[:, 2].copy(), part, srv, managed, j,
                   sig(TEMP), sig(WETBULB), sig(CARBON), sig(PRICE), k, np.empty(ph.N_OUT), out, tot)
    ref = ph.compute(params, CAPS[:, 0], CAPS[:, 1], CAPS[:, 2], np.maximum(BUSY[:, :1], 0.0),
                     BUSY[:, 1:2], BUSY[:, 2:3], TEMP[:, None], WETBULB[:, None],
                     servers=[SERVERS[:, i:i + 1] for i in range(4)] if managed else None)
    return {name: out[r] for r, name in enumerate(ph.STEP_DC_NAMES)}, tot, {n: v[:, 0] for n, v in ref.items()}


def test_energy_cost_and_carbon_per_datacenter():
    got, _tot, ref = run_step()
    total_kwh = ref["total_kw"] * 0.25
    assert np.all(total_kwh > 0) and np.all(ref["it_kw"] < ref["total_kw"])
    np.testing.assert_allclose(got["it_kwh"], ref["it_kw"] * 0.25, rtol=1e-12)
    np.testing.assert_allclose(got["total_kwh"], total_kwh, rtol=1e-12)
    np.testing.assert_allclose(got["cost_usd"], total_kwh * PRICE / 1000.0, rtol=1e-12)  # a negative price pays
    np.testing.assert_allclose(got["carbon_kg"], total_kwh * CARBON / 1000.0, rtol=1e-12)
    assert got["cost_usd"][1] < 0 < got["cost_usd"][0]
    np.testing.assert_allclose(got["water_l"], ref["water_l"], rtol=1e-12)
    np.testing.assert_allclose(got["unmet_cooling_kwh"], ref["unmet_cooling_kw"] * 0.25, rtol=1e-12)
    assert got["unmet_cooling_kwh"][2] > 0.0 and got["unmet_cooling_kwh"][0] == 0.0
    for name in ("it_idle", "it_sleep", "it_wake"):
        np.testing.assert_allclose(got[f"{name}_kwh"], ref[f"{name}_kw"] * 0.25, rtol=1e-12)
    for name in ("servers_on", "servers_waking", "servers_asleep"):
        np.testing.assert_allclose(got[name], ref[name], rtol=1e-12)


def test_sleeping_and_waking_servers_under_managed_power():
    got, tot, ref = run_step(managed=True)
    for name in ("it_idle", "it_sleep", "it_wake"):
        np.testing.assert_allclose(got[f"{name}_kwh"], ref[f"{name}_kw"] * 0.25, rtol=1e-12)
    assert np.all(got["it_idle_kwh"] > 0.0) and np.all(got["it_sleep_kwh"] > 0.0)
    assert got["it_wake_kwh"][0] > 0.0 and got["it_wake_kwh"][2] == 0.0
    for name in ("servers_on", "servers_waking", "servers_asleep"):
        np.testing.assert_allclose(got[name], ref[name], rtol=1e-12)
    np.testing.assert_allclose(got["servers_on"], SERVERS[:, 0] + SERVERS[:, 1])
    np.testing.assert_allclose(got["total_kwh"], ref["total_kw"] * 0.25, rtol=1e-12)


def test_busy_and_idle_resources():
    got, _tot, _ref = run_step()
    np.testing.assert_array_equal(got["busy_cores"], [3000.0, 0.0, 800.0])  # a residue below zero is none
    np.testing.assert_array_equal(got["busy_gpus"], [40.0, 0.0, 16.0])
    np.testing.assert_array_equal(got["busy_mem_gb"], [20000.0, 1000.0, 0.0])
    np.testing.assert_array_equal(got["idle_gpus"], [24.0, 0.0, 0.0])


def test_sums_over_datacenters_replace_the_previous_step():
    got, tot, _ref = run_step()
    for r, name in enumerate(ph.STEP_DC_NAMES):
        assert tot[r] == pytest.approx(float(np.sum(got[name])), rel=1e-12, abs=1e-12), name


def test_reads_its_own_step_and_signal_column():
    a, _, _ = run_step(j=1, k=2)
    b, _, _ = run_step(j=2, k=2)
    np.testing.assert_allclose(a["total_kwh"], b["total_kwh"], rtol=1e-12)
