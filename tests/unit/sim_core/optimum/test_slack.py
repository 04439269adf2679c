"""Where a bracket's width lies (``optimum.slack``): the parts add up to upper - lower exactly, the bound never
exceeds the engine at a run's state, the engine's terms are the run's own, the fewest servers by hand."""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

import sim_core
from sim_core.optimum import optimum
from sim_core.optimum.power import site_power
from sim_core.optimum.slack import TERMS, bracket_slack, fewest_servers


@pytest.fixture(scope="module")
def three_sites(three_site_bundle):
    return three_site_bundle("slack", n_tasks=240, seed=3, total_cores=256, total_gpus=16, total_mem_gb=2000)


@pytest.mark.parametrize("power", ["managed", "always_on"])
def test_the_parts_add_up_and_the_bound_stays_below_the_engine(three_sites, power):
    lower = optimum(three_sites, seed=0, days=1, profile=True, power=power)
    for pol in ("local_only", "lowest_carbon"):
        res = sim_core.run(three_sites, pol, seed=0, days=1, power=power)
        s = bracket_slack(three_sites, res, lower)
        tot = res.totals
        assert s.upper_kg == tot["carbon_incl_transfer_kg"]
        assert s.lower_kg == lower.value
        # conservation: the three parts are the whole width
        assert s.schedule_kg + s.servers_kg + s.power_kg == pytest.approx(s.upper_kg - s.lower_kg, rel=1e-9, abs=1e-9)
        # the engine's terms are the run's own: its facility carbon + its transfers is its total
        assert s.engine_kg[-1] + s.transfer_kg == pytest.approx(s.upper_kg, rel=1e-9)
        assert s.transfer_kg == pytest.approx(tot["transfer_carbon_kg"], rel=1e-9, abs=1e-12)
        assert sum(s.engine_kg[:-1]) == pytest.approx(s.engine_kg[-1], rel=1e-9)
        assert sum(s.bound_kg[:-1]) == pytest.approx(s.bound_kg[-1], rel=1e-9)
        assert len(s.bound_kg) == len(TERMS)
        # a valid bound: below the engine at every site and step, so its error is >= 0
        assert s.steps_above == 0
        assert s.power_kg >= 0.0 and s.bound_kg[-1] <= s.engine_kg[-1]
        if power == "always_on":  # every server on: none beyond the fewest
            assert s.servers_kg == 0.0
        else:
            assert s.servers_kg >= -1e-9
        busy = res.steps.group_by("dc").agg(pl.col("busy_gpus").sum()).sort("dc")["busy_gpus"].to_numpy()
        np.testing.assert_allclose(s.gpu_h[1], 0.25 * busy, rtol=1e-12)
        np.testing.assert_allclose(s.gpu_h[0], 0.25 * lower.profile.busy[:, :, 1].sum(axis=1), rtol=1e-12)
        np.testing.assert_allclose(s.gpu_share.sum(axis=1), [100.0, 100.0])


def test_fewest_servers_by_hand(three_sites):
    p = three_sites.params[0]
    s = site_power(p, three_sites.cap_cores[0], three_sites.cap_gpus[0], three_sites.cap_mem_gb[0], True)
    assert s.gps > 0 and s.cps > 0 and s.n_g >= 1
    bc = np.array([0.0, 3.0 * s.cps, 0.0])
    bg = np.array([0.0, s.gps, 0.0])
    bm = np.array([0.0, 0.0, 2.0 * s.mps])
    ac, ag = fewest_servers(s, bc, bg, bm, True)
    # nothing busy: the spare pool; 3 servers' cores with one GPU server's GPUs: that one + 2 CPU-only; memory of 2
    np.testing.assert_allclose(ag, [s.spare_g, max(1.0, s.spare_g), s.spare_g])
    np.testing.assert_allclose(ac, [s.spare_c, max(s.spare_c, 3.0 - max(1.0, s.spare_g)),
                                    max(s.spare_c, 2.0 - s.spare_g)])
    ac, ag = fewest_servers(s, bc, bg, bm, False)
    assert not ac.any() and not ag.any()
