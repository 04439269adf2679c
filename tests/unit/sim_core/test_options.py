"""Run options, the window and Python-policy actions are refused (RunOptionsError naming the option
and the value), never coerced; hostile option sets and action arrays give a clean refusal or a
finite, energy-conserving run (Hypothesis)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

import sim_core
from sim_core import RunOptionsError
from sim_core.options import check_actions, make_options
from sim_core.testing import tiny_bundle

N = 40
SETTINGS = settings(max_examples=60, deadline=None, database=None,
                    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


@pytest.fixture(scope="module")
def scenario(tmp_path_factory):
    rng = np.random.default_rng(5)
    return sim_core.load(tiny_bundle(
        tmp_path_factory.mktemp("opts"),
        tasks={"arrival_ts_utc": np.sort(rng.uniform(0, 80000, N)), "duration_s": rng.uniform(900, 9000, N),
               "cpu_cores": rng.choice([4.0, 16.0, 40.0], N), "gpus": np.zeros(N),
               "bandwidth_gb": rng.uniform(0, 5, N)},
        signals={"carbon_g_per_kwh": rng.uniform(50, 500, (3, 96))}))


def check_result(r, n_tasks: int) -> None:
    """A run's totals are finite, energy is conserved every step and every task is accounted for."""
    t = r.totals
    for k, v in t.items():
        if isinstance(v, float):
            assert math.isfinite(v), (k, v)
    s = r.steps
    np.testing.assert_allclose(s["cooling_load_kw"].to_numpy(),
                               (s["it_kw"] + s["crac_fan_kw"] + s["lighting_kw"]).to_numpy(),
                               rtol=1e-12)
    assert t["total_kwh"] == pytest.approx(s["total_kwh"].sum(), rel=1e-12)
    assert (s["it_kwh"] <= s["total_kwh"]).all()
    assert t["tasks_started"] + t["tasks_pending_at_end"] + t["tasks_queued_at_end"] + t["tasks_in_transit_at_end"] \
        + t["tasks_unschedulable"] == t["tasks"] == n_tasks


# ---------------------------------------------------------------------------- what the adversary found
@pytest.mark.parametrize(("opts", "names"), [
    ({"defer_window_steps": 0}, ("defer_window_steps", "0")),
    ({"defer_window_steps": 2**32 + 1}, ("defer_window_steps", str(2**32 + 1))),
    ({"defer_window_steps": 96.0}, ("defer_window_steps", "96.0")),
    ({"defer_quantile": 5.0}, ("defer_quantile", "5.0")),
    ({"defer_quantile": -3.0}, ("defer_quantile", "-3.0")),
    ({"defer_quantile": math.nan}, ("defer_quantile", "nan")),
    ({"sla_multiplier": math.nan}, ("sla_multiplier", "nan")),
    ({"sla_multiplier": -1.0}, ("sla_multiplier", "-1.0")),
    ({"sla_multiplier": 0}, ("sla_multiplier", "0")),
    ({"sla_multiplier": math.inf}, ("sla_multiplier", "inf")),
    ({"sla_multiplier": True}, ("sla_multiplier", "True")),
    ({"sla_multiplier": "1.5"}, ("sla_multiplier", "'1.5'")),
    ({"sla_multiplier": np.r_[np.ones(N - 1), np.nan]}, (f"sla_multiplier[{N - 1}]", "nan")),
    ({"sla_multiplier": np.ones(N - 1)}, ("sla_multiplier", f"{N - 1} per-task values", f"{N} tasks")),
    ({"sla_multiplier": np.ones((N, 1))}, ("sla_multiplier", "shape")),
    ({"days": math.nan}, ("days", "nan")),
    ({"days": 0}, ("days", "0")),
    ({"days": -1.0}, ("days", "-1.0")),
    ({"days": math.inf}, ("days", "inf")),
    ({"days": 1e300}, ("days=1e+300", "does not fit")),
    ({"days": 1e-4}, ("days=0.0001", "less than one")),
    ({"days": True}, ("days", "True")),
    ({"steps": 0}, ("steps", "0")),
    ({"steps": 1.5}, ("steps", "1.5")),
    ({"steps": 2**70}, ("steps", str(2**70))),
    ({"steps": 97}, ("steps=97", "does not fit")),
    ({"days": 1, "steps": 96}, ("days or steps",)),
    ({"start": 1.5}, ("start", "1.5")),
    ({"start": -1}, ("start", "-1")),
    ({"start": 10**30}, ("start", str(10**30))),
    ({"start": True}, ("start", "True")),
    ({"start": "yesterday"}, ("start", "'yesterday'")),
    ({"start": "2023-01-01T00:07:00+00:00"}, ("start", "step grid")),
    ({"start": "2024-01-01T00:00:00+00:00"}, ("start", "outside the bundle")),
    ({"business_start_h": 25}, ("business_start_h", "25")),
    ({"business_end_h": -1}, ("business_end_h", "-1")),
    ({"business_start_h": 8.5}, ("business_start_h", "8.5")),
    ({"activity_on": math.nan}, ("activity_on", "nan")),
    ({"activity_off": -0.3}, ("activity_off", "-0.3")),
    ({"activity_on": 0.0, "activity_off": 0.0}, ("activity_on=0.0", "activity_off=0.0")),
    ({"activity_on": 0.0, "business_start_h": 0, "business_end_h": 24, "activity_off": 0.0},
     ("activity is 0 at every local hour",)),
    ({"transfer_kwh_per_gb": math.nan}, ("transfer_kwh_per_gb", "nan")),
    ({"transfer_kwh_per_gb": -0.06}, ("transfer_kwh_per_gb", "-0.06")),
    ({"transfer_kwh_per_gb": "aslan2018"}, ("transfer_kwh_per_gb", "'aslan2018'", "aslan2018-2015", "none")),
    # (1e308 ran with exit 0 to infinite carbon: refused with its declared range, sim_core.options.OPTION_RANGES)
    ({"transfer_kwh_per_gb": 1e308}, ("transfer_kwh_per_gb", "1e+308", "its range [0, 100]")),
    ({"sla_multiplier": 1e300}, ("sla_multiplier", "1e+300", "its range (0, 1e+06]")),
    ({"activity_on": 1e300}, ("activity_on", "1e+300", "its range [0, 1e+06]")),
    ({"transfer_emissions": "dest"}, ("transfer_emissions", "'dest'")),
    ({"allow_defer": "no"}, ("allow_defer", "'no'")),
    ({"single_action": 1}, ("single_action", "1")),
    ({"carbon_basis": "direct"}, ("carbon_basis='direct'", "'lca'")),
    ({"carbon_basis": 3}, ("carbon_basis", "3")),
])
def test_bad_options_are_refused_by_name_and_value(scenario, opts, names):
    for pol in ("lowest_carbon", "defer_to_greener"):
        with pytest.raises(RunOptionsError) as err:
            sim_core.run(scenario, pol, **opts)
        for s in names:
            assert s in str(err.value), (str(err.value), s)
    with pytest.raises(RunOptionsError):
        sim_core.Simulator(scenario, **opts).reset()


def test_activity_zero_at_some_step_of_the_bundle_is_refused(tmp_path):
    # only AA (UTC-5) can be an origin; with activity only in local hours [8, 9) and 0 otherwise,
    # most steps have no possible origin at all
    sc = sim_core.load(tiny_bundle(tmp_path, population_weight=[1.0, 0.0, 0.0]))
    with pytest.raises(RunOptionsError, match=r"business hours \[8, 9\), activity_on=1.0, activity_off=0.0"):
        sim_core.run(sc, "local_only", business_start_h=8, business_end_h=9, activity_off=0.0)
    r = sim_core.run(sc, "local_only", business_start_h=8, business_end_h=9, activity_off=0.01)
    assert (r.tasks["origin"] == "AA").all()


@pytest.mark.parametrize(("seed", "text"), [(-1, "-1"), (1.5, "1.5"), (2**64, str(2**64)), (True, "True"),
                                            (None, "None")])
def test_bad_seeds_are_refused(scenario, seed, text):
    with pytest.raises(RunOptionsError, match="seed") as err:
        sim_core.run(scenario, "local_only", seed=seed, days=0.25)
    assert text in str(err.value)


def test_unknown_policy_name_is_refused_everywhere(scenario):
    with pytest.raises(RunOptionsError, match="'nope'"):
        sim_core.run(scenario, "nope")
    with pytest.raises(RunOptionsError, match="'nope'"):
        sim_core.Simulator(scenario, policy="nope")
    sim = sim_core.Simulator(scenario)
    sim.reset()
    with pytest.raises(RunOptionsError, match="'nope'"):
        sim.builtin_actions("nope")


def test_valid_options_are_normalized_not_changed(scenario):
    o = make_options(sla_multiplier=np.int64(2), business_start_h=np.int32(7), defer_quantile=np.float32(0.5),
                     allow_defer=np.bool_(False))
    assert o.sla_multiplier == 2.0 and type(o.sla_multiplier) is float
    assert o.business_start_h == 7 and type(o.business_start_h) is int
    assert o.defer_quantile == 0.5 and o.allow_defer is False
    # an integer for a float option is the same run as the float
    a = sim_core.run(scenario, "lowest_carbon", sla_multiplier=2, seed=1)
    b = sim_core.run(scenario, "lowest_carbon", sla_multiplier=2.0, seed=1)
    assert a.totals == b.totals and a.options == b.options
    # a window longer than the bundle's remaining steps is clipped, as before
    r = sim_core.run(scenario, "defer_to_greener", defer_window_steps=10**6, start=90)
    check_result(r, r.totals["tasks"])
    # a NumPy integer is an integer
    t = sim_core.run(scenario, "local_only", start=np.int64(4), days=0.5).totals
    assert t["steps"] - t["drain_steps"] == 48  # (the window; the run drains past it, sim_core.drain)


# ---------------------------------------------------------------------------- Python-policy actions
def _first_step_with(scenario, n_pending: int):
    sim = sim_core.Simulator(scenario, seed=0)
    obs = sim.reset()
    while obs["n_pending"] < n_pending:
        obs, _ = sim.step(0)  # defer everything: the pending list grows
    return sim, obs


@pytest.mark.parametrize(("bad", "text"), [
    (math.nan, "nan"), (2**32 + 1, str(2**32 + 1)), (-1, "-1"), (1.5, "1.5"), (4, "4"), (True, "True"),
    ("1", "'1'"), (2**70, str(2**70)), (np.inf, "inf"),
])
def test_bad_action_names_the_pending_task_and_value(scenario, bad, text):
    sim, obs = _first_step_with(scenario, 2)
    acts = [1] * obs["n_pending"]
    acts[1] = bad
    state = sim.prep.state.status.copy()
    with pytest.raises(RunOptionsError) as err:
        sim.step(acts)
    msg = str(err.value)
    assert text in msg and "pending task 1" in msg and f"task_id {obs['pending_task_id'][1]}" in msg, msg
    assert "0..3" in msg
    np.testing.assert_array_equal(sim.prep.state.status, state)  # nothing was applied
    obs2, _ = sim.step([1] * obs["n_pending"])  # the step can be taken again with valid actions


@pytest.mark.parametrize("bad", [math.nan, 2**32 + 1, -1, 1.5, True, np.float64("nan"), None])
def test_bad_scalar_action_of_a_python_policy(scenario, bad):
    def policy(obs):
        return bad if obs["n_pending"] else 0

    if bad is None:  # None = defer everything: a valid answer
        r = sim_core.run(scenario, policy)
        assert r.totals["tasks_forced"] > 0
        return
    with pytest.raises(RunOptionsError, match="must be an integer in 0..3"):
        sim_core.run(scenario, policy)


def test_nan_is_no_longer_defer_and_huge_is_no_longer_one(scenario):
    sim, obs = _first_step_with(scenario, 1)
    n = obs["n_pending"]
    for bad in (np.full(n, np.nan), np.full(n, 2**32 + 1, dtype=np.int64), np.full(n, 2**63 - 1, dtype=np.uint64),
                np.full(n, 1, dtype=bool), np.array(["1"] * n)):
        with pytest.raises(RunOptionsError):
            sim.step(bad)
        with pytest.raises(RunOptionsError):
            sim.step_fast(bad)
    with pytest.raises(RunOptionsError, match=f"expected {n} actions"):
        sim.step([1] * (n + 1))
    with pytest.raises(RunOptionsError, match="1-D"):
        sim.step(np.ones((n, 1), np.int64))


def test_integral_float_actions_equal_int_actions(scenario):
    ref = sim_core.run(scenario, lambda obs: obs["origin"] + 1, seed=3)
    got = sim_core.run(scenario, lambda obs: (obs["origin"] + 1).astype(np.float64), seed=3)
    assert got.totals == ref.totals
    assert sim_core.run(scenario, "local_only", seed=3).totals == ref.totals


def test_check_actions_unit():
    assert check_actions(None, 3, 2, False) == 0  # an int: one action for every pending task
    assert check_actions(np.int8(2), 3, 2, False) == 2 and check_actions(np.float64(1.0), 3, 2, False) == 1
    assert check_actions([2.0, 0, 1], 3, 2, False).tolist() == [2, 0, 1]
    assert check_actions([1, 2], 5, 2, True) == 1  # single-action: the first applies to all
    with pytest.raises(RunOptionsError, match=r"actions\[1\]"):
        check_actions(np.array([1, 2**40], dtype=object), 2, 2, True)
    assert check_actions([], 0, 2, False).tolist() == []


def test_transfer_energy_by_name():
    """The default network energy is Aslan et al.'s 2015 figure halved every two years to 2023 (0.06 / 2^4); each
    named figure is stored as its number, the 2015 one for comparisons with SustainCluster."""
    from sim_core.options import TRANSFER_KWH_PER_GB, TRANSFER_KWH_PER_GB_PRESETS, Options

    assert TRANSFER_KWH_PER_GB == 0.00375 == Options().transfer_kwh_per_gb
    assert Options(transfer_kwh_per_gb="aslan2018-2015").transfer_kwh_per_gb == 0.06
    assert Options(transfer_kwh_per_gb="none").transfer_kwh_per_gb == 0.0
    assert all(Options(transfer_kwh_per_gb=k).transfer_kwh_per_gb == v for k, v in TRANSFER_KWH_PER_GB_PRESETS.items())
    assert isinstance(Options(transfer_kwh_per_gb="aslan2018-2023").transfer_kwh_per_gb, float)


# ---------------------------------------------------------------------------- properties (Hypothesis)
_NOT_INT = st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.booleans(), st.text(max_size=2), st.none())
_NOT_REAL = st.one_of(st.booleans(), st.text(max_size=2), st.none(), st.just([1.0]))
_NONFINITE = st.sampled_from([math.nan, math.inf, -math.inf])

_NEGATIVE = st.floats(max_value=-1e-300)  # (not -0.0, which is a valid 0)
_HOURS = (st.integers(0, 24), st.one_of(st.integers(max_value=-1), st.integers(min_value=25), _NOT_INT))
_ACTIVITY = (st.floats(0.01, 1e6), st.one_of(_NEGATIVE, _NONFINITE, _NOT_REAL,
                                            st.floats(1e6, exclude_min=True, allow_infinity=False)))

#: option -> (valid values, hostile values)
OPTION_STRATEGIES = {
    "defer_window_steps": (st.integers(1, 500),
                           st.one_of(st.integers(max_value=0), st.integers(min_value=2**31), _NOT_INT)),
    "defer_quantile": (st.floats(0.0, 1.0),
                       st.one_of(st.floats(min_value=1.0, exclude_min=True), _NEGATIVE, _NONFINITE, _NOT_REAL)),
    "sla_multiplier": (st.one_of(st.floats(0.01, 1e6), st.integers(1, 10**6)),
                       st.one_of(st.floats(max_value=0.0), _NONFINITE, _NOT_REAL)),
    "transfer_kwh_per_gb": (st.floats(0.0, 100.0), st.one_of(_NEGATIVE, _NONFINITE, _NOT_REAL,
                                                             st.floats(100.0, exclude_min=True, allow_infinity=False))),
    "business_start_h": _HOURS,
    "business_end_h": _HOURS,
    "activity_on": _ACTIVITY,
    "activity_off": _ACTIVITY,
    "allow_defer": (st.booleans(), st.one_of(st.integers(), st.text(max_size=2), st.none())),
    "single_action": (st.booleans(), st.one_of(st.integers(), st.floats())),
    "drain": (st.booleans(), st.one_of(st.integers(), st.text(max_size=2), st.none())),
    "drain_max_days": (st.floats(0.0, 2.0), st.one_of(st.floats(max_value=-1e-9), st.floats(366.01, 1e300),
                                                        _NONFINITE, st.text(max_size=2))),
    "days": (st.one_of(st.floats(0.25, 1.0), st.none()),  # (None: the whole bundle)
             st.one_of(st.floats(max_value=0.0), _NONFINITE, st.floats(1.01, 1e300), st.booleans(),
                       st.text(max_size=2), st.just([1.0]))),
}


@SETTINGS
@given(data=st.data(), policy=st.sampled_from(sim_core.POLICIES), seed=st.integers(0, 2**63 - 1))
def test_hostile_option_sets_refuse_cleanly_or_run_conserving_energy(scenario, data, policy, seed):
    names = data.draw(st.lists(st.sampled_from(sorted(OPTION_STRATEGIES)), unique=True, min_size=1), label="options")
    bad = sorted(data.draw(st.lists(st.sampled_from(names), unique=True), label="hostile ones"))
    opts = {n: data.draw(OPTION_STRATEGIES[n][n in bad], label=n) for n in names}
    event("refused" if bad else "ran")
    if bad:
        with pytest.raises(RunOptionsError) as err:
            sim_core.run(scenario, policy, seed=seed, **opts)
        assert any(n in str(err.value) for n in bad), (str(err.value), bad)
    else:
        r = sim_core.run(scenario, policy, seed=seed, **opts)
        check_result(r, r.totals["tasks"])
        t = r.totals
        assert t["steps"] - t["drain_steps"] == round((opts.get("days") or 1.0) * 86400.0 / 900)
        assert t["drain_steps"] == 0 or (opts.get("drain", True) and t["drain_steps"] <= 96)


_HOSTILE_ACTION = st.one_of(
    st.integers(max_value=-1), st.integers(min_value=4), _NONFINITE, st.booleans(), st.text(min_size=1, max_size=2),
    st.floats(0.0, 3.0).filter(lambda x: not float(x).is_integer()))


@SETTINGS
@given(data=st.data(), single=st.booleans(), allow_defer=st.booleans())
def test_hostile_python_policy_actions_refuse_cleanly_or_run_conserving_energy(scenario, data, single, allow_defer):
    """A Python policy answering with arrays drawn per step (mostly valid, sometimes hostile)."""
    hostile_at = data.draw(st.one_of(st.none(), st.integers(0, 15)), label="hostile at the k-th decision")
    seen = {"hostile": False, "decisions": 0}

    def policy(obs):
        pn = obs["n_pending"]
        if pn > 0:
            seen["decisions"] += 1
        if pn > 0 and seen["decisions"] - 1 == hostile_at:
            seen["hostile"] = True
            acts = data.draw(st.lists(st.integers(0, 3), min_size=pn, max_size=pn), label="valid part")
            q = data.draw(st.integers(0, pn - 1), label="hostile index")
            acts[q] = data.draw(_HOSTILE_ACTION, label="hostile action")
            return acts
        if single:
            return data.draw(st.integers(0, 3), label="action")
        kind = data.draw(st.sampled_from(["int", "float", "numpy"]), label="kind")
        acts = data.draw(st.lists(st.integers(0, 3), min_size=pn, max_size=pn), label="actions")
        return {"int": acts, "float": [float(a) for a in acts], "numpy": np.asarray(acts, np.int16)}[kind]

    try:
        r = sim_core.run(scenario, policy, seed=1, single_action=single, allow_defer=allow_defer)
    except RunOptionsError as err:
        event("refused")
        assert seen["hostile"], str(err)
        assert "must be an integer in 0..3" in str(err)
        return
    event("ran")
    assert not seen["hostile"]
    check_result(r, N)
