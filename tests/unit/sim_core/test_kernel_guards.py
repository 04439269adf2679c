"""Kernels stay in bounds on hostile data: every index computed from task times or network values.

The scenarios are valid bundles mutated in memory after loading, so that these tests exercise the
kernels whatever the loader refuses. Before the guards, each case wrote outside its arrays (the
process aborted with ``double free or corruption``; ``NUMBA_BOUNDSCHECK=1`` raised IndexError).
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import sim_core
from sim_core import engine as E
from sim_core.testing import tiny_bundle

N = 8


@pytest.fixture()
def scenario(tmp_path):
    return sim_core.load(tiny_bundle(tmp_path, total_gpus=0,
                                     tasks={"arrival_ts_utc": np.linspace(0, 3600 * 6, N),
                                            "duration_s": np.full(N, 2000.0), "cpu_cores": np.full(N, 4.0),
                                            "gpus": np.zeros(N), "bandwidth_gb": np.full(N, 0.5)}))


def _check_physics(r) -> None:
    """Energy totals are finite and the white-space energy balance holds every step."""
    s = r.steps
    for k in ("it_kwh", "total_kwh", "cost_usd", "carbon_kg", "water_l"):
        assert math.isfinite(r.totals[k]), k
    np.testing.assert_allclose(s["cooling_load_kw"].to_numpy(),
                               (s["it_kw"] + s["crac_fan_kw"] + s["lighting_kw"]).to_numpy(),
                               rtol=1e-12)


@pytest.mark.parametrize("duration", [np.inf, 1e300, 1e20])
def test_tasks_that_never_finish(scenario, duration):
    scenario.duration_s[:5] = duration
    for pol in sim_core.POLICIES:
        r = sim_core.run(scenario, pol, seed=0)
        _check_physics(r)
        assert r.totals["tasks_started"] == N
        assert r.totals["tasks_completed"] == N - 5
        # the five hold their cores to the end of the window: the last step is busy with them
        last = r.steps.filter(r.steps["step"] == 95)
        assert last["busy_cores"].sum() == pytest.approx(5 * 4.0)
        t = r.tasks
        assert t["finish_ts_utc"].null_count() == 5  # (a finish beyond the datetime range is null)


def test_task_shorter_than_a_rounding_step(scenario):
    # at t = 6 h a duration of 1e-12 s is lost in rounding: finish == start exactly
    scenario.duration_s[:] = 1e-12
    r = sim_core.run(scenario, "local_only", seed=0)
    _check_physics(r)
    assert r.totals["tasks_started"] == N
    assert r.steps["busy_cores"].max() < 1e-9


@pytest.mark.parametrize("field,value", [("throughput_mbps", -5.0), ("throughput_mbps", 0.0),
                                         ("rtt_ms", np.inf), ("rtt_ms", -1e300)])
def test_network_values_that_give_no_or_negative_delay(scenario, field, value):
    m = getattr(scenario, field)
    off = ~np.eye(scenario.n_dc, dtype=bool)
    m[off] = value
    for pol in sim_core.POLICIES:
        r = sim_core.run(scenario, pol, seed=0)
        _check_physics(r)
        t = r.tasks
        remote = t.filter(t["remote"])
        n_remote = remote.height
        if field == "rtt_ms" and value < 0:
            # a negative delay: the task is ready at once (never before its decision's step)
            assert r.totals["tasks_in_transit_at_end"] == 0
        else:
            # an infinite delay: every remote task is still in transit when the run ends
            assert r.totals["tasks_in_transit_at_end"] == n_remote
            assert r.totals["tasks_started"] == N - n_remote
        assert r.totals["tasks"] == N


def test_negative_egress_price_and_huge_input(scenario):
    scenario.usd_per_gb[~np.eye(scenario.n_dc, dtype=bool)] = -5.0
    scenario.bandwidth_gb[:] = 1e300  # a delay far beyond the window
    r = sim_core.run(scenario, "round_robin", seed=0)
    _check_physics(r)
    assert r.totals["tasks_in_transit_at_end"] == r.totals["tasks_remote"] > 0
    assert r.totals["transfer_cost_usd"] < 0  # priced as given (refusing it is the loader's job)


def test_step_api_on_hostile_data(scenario):
    scenario.duration_s[:3] = np.inf
    scenario.throughput_mbps[~np.eye(scenario.n_dc, dtype=bool)] = -5.0
    ref = sim_core.run(scenario, "lowest_carbon", seed=1)
    sim = sim_core.Simulator(scenario, seed=1)
    sim.reset()
    kwh = 0.0
    while not sim.done:
        _, info = sim.step(sim.builtin_actions("lowest_carbon"))
        kwh += info["total_kwh"].sum()
    assert sim.result().totals == ref.totals
    assert ref.totals["tasks_in_transit_at_end"] == ref.totals["tasks_remote"] > 0
    assert kwh == pytest.approx(ref.totals["total_kwh"], rel=1e-12)


@pytest.mark.parametrize("window,q", [(0, 0.3), (-5, 0.3), (10**9, 0.3), (4, 5.0), (4, -3.0), (4, math.nan)])
def test_rolling_quantile_clamps_its_arguments(window, q):
    x = np.arange(20.0).reshape(2, 10)
    out = E.rolling_quantile(x, window, q)
    w = min(max(window, 1), 10)
    qq = 0.0 if not q >= 0 else min(q, 1.0)
    for d in range(2):
        for k in range(10):
            assert out[d, k] == np.quantile(x[d, k:k + w], qq)


_ANY = st.floats(allow_nan=True, allow_infinity=True)


@settings(max_examples=40, deadline=None, database=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(policy=st.sampled_from(sim_core.POLICIES), data=st.data())
def test_hostile_task_and_network_values_stay_in_bounds(scenario, policy, data):
    """Any float in a task's duration or input size, or in the network's throughput and RTT, and
    any non-negative (or NaN) core request: the run completes with finite, conserved energy, every
    task accounted for and no datacenter holding more than its capacity. (A negative request frees
    capacity that is not there: refusing it is the loader's job.)"""
    def arr(n, elements):
        return np.array(data.draw(st.lists(elements, min_size=n, max_size=n)), dtype=np.float64)

    off = ~np.eye(scenario.n_dc, dtype=bool)
    thr, rtt = scenario.throughput_mbps.copy(), scenario.rtt_ms.copy()
    thr[off] = arr(int(off.sum()), st.one_of(_ANY, st.floats(1.0, 1e4)))
    rtt[off] = arr(int(off.sum()), st.one_of(_ANY, st.floats(0.0, 500.0)))
    sc = dataclasses.replace(
        scenario,
        duration_s=arr(N, st.one_of(_ANY, st.floats(1.0, 1e5), st.just(np.inf))),
        cpu_cores=arr(N, st.one_of(st.floats(min_value=0.0), st.just(math.nan), st.sampled_from([1.0, 4.0, 64.0]))),
        bandwidth_gb=arr(N, st.one_of(_ANY, st.floats(0.0, 10.0))),
        throughput_mbps=thr, rtt_ms=rtt)
    r = sim_core.run(sc, policy, seed=0)
    _check_physics(r)
    t = r.totals
    assert t["tasks_started"] + t["tasks_pending_at_end"] + t["tasks_queued_at_end"] + t["tasks_in_transit_at_end"] \
        + t["tasks_unschedulable"] == t["tasks"] == N
    assert r.steps["busy_cores"].max() <= 64.0 + 1e-9  # never more than a DC holds
