"""The optimum's facility tail is the engine's cooling plant: one model (``physics.facility_from_cooling``),
so the optimum's chiller + fans + pumps and unmet cooling equal ``dc_step``'s exactly, for every condenser
type, at engine states that reach every regime of the plant (free cooling, partial economizer, chiller
cycling below its minimum PLR, a hybrid's pads on and off, a chiller short of capacity)."""

from __future__ import annotations

import numpy as np
import pytest

from gridshift.dc_params import CHILLER_2015, CONDENSER_TYPES, DatacenterParams
from sim_core import physics as ph
from sim_core.optimum.power import facility_tail, tail_floor

CAPS = (800.0, 64.0, 6400.0)  # cores, GPUs, GB


def _engine_states(p: np.ndarray, n: int = 6000, seed: int = 3):
    """dc_step (physics.compute) at random loads and weather from -20 to 55 degC, one datacenter: n states
    with every server on (loads down to its idle power, up to the full load: a chiller short of capacity on
    hot days) and n with power states (servers on to hold the load, some waking: loads down to a few % of
    design, the chiller cycling below its minimum part-load ratio). Returns (outputs, dry-bulb, wet-bulb)."""
    rng = np.random.default_rng(seed)
    outs, ts, wbs = [], [], []
    for managed in (False, True):
        u = rng.uniform(0.0, 1.0, (3, 1, n)) ** rng.uniform(0.3, 3.0, (1, 1, n))
        t = rng.uniform(-20.0, 55.0, (1, n))
        wb = t - rng.uniform(-0.5, 15.0, (1, n))  # a wet-bulb a hair above the dry-bulb happens in weather data
        servers = None
        if managed:
            n_srv = CAPS[0] / p[ph.P_CORES_PER_SERVER]
            on = np.minimum(np.ceil(u[0] * n_srv) + rng.integers(0, 3, (1, n)), n_srv)
            servers = (on * 0.75, on * 0.25, rng.uniform(0, 1, (1, n)), np.zeros((1, n)))
        o = ph.compute(p[None, :], *(np.array([c]) for c in CAPS), u[0] * CAPS[0], u[1] * CAPS[1],
                       u[2] * CAPS[2], t, wb, servers=servers)
        outs.append(o)
        ts.append(t[0])
        wbs.append(wb[0])
    return {k: np.concatenate([o[k][0] for o in outs]) for k in outs[0]}, np.concatenate(ts), np.concatenate(wbs)


@pytest.mark.parametrize("economizer", ["integrated", "none"])
@pytest.mark.parametrize("condenser", CONDENSER_TYPES)
def test_facility_tail_is_dc_steps_cooling_plant(condenser, economizer):
    # (allocated GPUs at full utilisation: with per-device GPU power the states then reach the design load, and
    # with the hot days the chiller's capacity limit)
    # (the plant alone: the chiller-2015 design, no air-side economizer in front of it, whose load the plant
    # would otherwise not see in full; the optimum's bound with outside air: test_optimum.py)
    p = ph.param_vector(DatacenterParams(**{**CHILLER_2015, "condenser": condenser, "economizer": economizer,
                                            "gpu_alloc_util": 1.0}))
    o, t, wb = _engine_states(p)
    design = tuple(float(x) for x in ph.design_point(p, *CAPS)[1:])
    plant, unmet = facility_tail(p, o["cooling_load_kw"], t, wb, design)
    # the same function on the same inputs: equal to the last bit, summed in dc_step's order
    assert np.array_equal(plant, o["chiller_kw"] + o["tower_fan_kw"] + o["chw_pump_kw"] + o["cw_pump_kw"])
    assert np.array_equal(unmet, o["unmet_cooling_kw"])
    # every output of the plant function lands in its dc_step slot (PLANT_OUT order)
    for i in range(0, t.size, 97):
        vals = ph.facility_from_cooling(p, o["cooling_load_kw"][i], t[i], wb[i], design[2], design[3])
        assert len(vals) == len(ph.PLANT_OUT)
        assert [o[name][i] for name in ph.PLANT_OUT] == list(vals)
    # and the engine's total is the IT + CRAC fans + that plant (its own sum) + lighting and the power chain's
    # losses, added in that order
    behind = (o["it_kw"] + o["crac_fan_kw"] + o["chiller_kw"] + o["tower_fan_kw"] + o["chw_pump_kw"] + o["cw_pump_kw"]
              + o["lighting_kw"] + o["ups_loss_kw"])
    assert np.array_equal(o["total_kw"], behind + o["transformer_loss_kw"])
    # the states reach every regime of the plant (else the equality would prove little)
    plr = o["chiller_plr"]
    assert (unmet > 0).sum() > 10 and (unmet == 0).sum() > 5000
    assert ((plr > 0) & (plr < p[ph.P_MIN_PLR])).sum() > 50 and (plr >= p[ph.P_MIN_PLR]).sum() > 5000
    econ = o["econ_frac"]
    if economizer == "integrated" and condenser != "air":
        assert (econ == 1.0).sum() > 100 and ((econ > 0) & (econ < 1)).sum() > 100 and (econ == 0).sum() > 100
    else:
        assert (econ == 0).all()
    pads = o["adiabatic_on"]
    if condenser == "hybrid":
        assert (pads == 1.0).sum() > 100 and (pads == 0.0).sum() > 100
    else:
        assert (pads == 0.0).all()
    if condenser == "air":
        assert (o["tower_fan_kw"] == 0).all() and (o["cw_pump_kw"] == 0).all()
    else:
        assert (o["tower_fan_kw"] > 0).all() and (o["cw_pump_kw"] > 0).all()


@pytest.mark.parametrize("condenser", CONDENSER_TYPES)
def test_tail_floor_is_the_plant_at_no_load_and_below_it_everywhere(condenser):
    p = ph.param_vector(DatacenterParams(condenser=condenser))
    design = tuple(float(x) for x in ph.design_point(p, *CAPS)[1:])
    cool = np.linspace(0.0, 1.3 * design[2], 200)[None, :]
    t = np.linspace(-20.0, 50.0, 71)[:, None]
    plant, _ = facility_tail(p, cool, t, t - 3.0, design)
    floor = tail_floor(p, design)
    assert floor > 0
    assert plant[:, 0] == pytest.approx(floor, rel=1e-13)  # pumps and fans at their minimum, chiller off
    assert (plant >= floor * (1 - 1e-13)).all()
    assert plant.max() > 2 * floor


def test_facility_tail_broadcasts_and_refuses_a_site_without_design_load():
    p = ph.param_vector(DatacenterParams())
    design = tuple(float(x) for x in ph.design_point(p, *CAPS)[1:])
    cool = np.linspace(0.0, design[2], 7)
    t = np.array([-5.0, 10.0, 25.0, 40.0])
    wb = t - 4.0
    grid, grid_unmet = facility_tail(p, cool[None, :], t[:, None], wb[:, None], design)
    assert grid.shape == grid_unmet.shape == (4, 7)
    for i in range(4):  # each element is the scalar evaluation
        for j in range(7):
            one, one_unmet = facility_tail(p, cool[j], t[i], wb[i], design)
            assert one.shape == () and one == grid[i, j] and one_unmet == grid_unmet[i, j]
    # the plant's power rises with the load at fixed weather, and a hot day costs more than a cold one
    assert (np.diff(grid, axis=1) > 0).all() and (grid[-1, 1:] > grid[0, 1:]).all()
    with pytest.raises(ValueError, match="design cooling load"):
        facility_tail(p, cool, 10.0, 6.0, (0.0, 0.0, 0.0, 0.0))
