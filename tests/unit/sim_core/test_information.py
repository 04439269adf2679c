"""What a policy may know: no interface hands a policy a future actual unless the run is ``oracle``.

Every interface is tried: the jitted policy view (``engine.policy_view``, exactly what
``run_custom`` passes a jitted policy), the Python observation (``Simulator.observation``) and the
Gymnasium observation. Bundles hold random, continuous signals, so a value of a view equal to a
future actual is a leak (and the ``oracle`` runs show that the checks do find one).
"""

from __future__ import annotations

import datetime as dt
import math

import numpy as np
import pytest
from numba import njit

import sim_core
from gridshift import forecast_data as FD
from sim_core import engine as E
from sim_core import forecast as F
from sim_core.gym import TaskSchedulingEnv
from sim_core.options import RunOptionsError
from sim_core.policies import registry, rules
from sim_core.simulator import Prepared
from sim_core.testing import LOC3, TZ3, tiny_bundle, write_bundle

MODELS = list(F.MODELS)
HONEST = [m for m in MODELS if m != "oracle"]


def random_signals(rng, n_dc, n_steps, head=None, head_steps=0):
    """Random continuous signals; the first ``head_steps`` steps copied from ``head`` (same seed prefix)."""
    temp = rng.uniform(5.0, 30.0, (n_dc, n_steps))
    sig = {"carbon_g_per_kwh": rng.uniform(50.0, 600.0, (n_dc, n_steps)),
           "price_usd_per_mwh": rng.uniform(-40.0, 250.0, (n_dc, n_steps)),
           "temp_c": temp, "wetbulb_c": temp - rng.uniform(0.5, 5.0, (n_dc, n_steps))}
    if head is not None:
        for c in sig:
            sig[c][:, :head_steps] = head[c][:, :head_steps]
    return sig


def tasks(rng, n, horizon_s):
    return {"arrival_ts_utc": np.sort(rng.uniform(0, horizon_s, n)), "duration_s": rng.uniform(900, 7200, n),
            "cpu_cores": rng.choice([2.0, 4.0, 8.0], n), "bandwidth_gb": rng.uniform(0.0, 2.0, n)}


@pytest.fixture(scope="module")
def noisy(tmp_path_factory):
    """3 DCs outside the registry (no publication rule), 3 days of random signals, 300 tasks."""
    rng = np.random.default_rng(11)
    n_steps = 3 * 96
    p = tiny_bundle(tmp_path_factory.mktemp("noisy"), n_steps=n_steps, signals=random_signals(rng, 3, n_steps),
                    tasks=tasks(rng, 300, n_steps * 900.0))
    return sim_core.load(p)


def future_actuals(prep: Prepared, j: int) -> np.ndarray:
    """Every actual signal value not known at run step j: steps after now, less published prices."""
    info = prep.info
    k = prep.s0 + j
    vals = []
    for s in range(E.N_SIG):
        for d in range(info.act.shape[1]):
            t0 = k + 1
            if s < E.N_FC:
                t0 = max(t0, int(info.known[s, d, j + info.iopt[E.IO_KPAD]]) + 1)
            vals.append(info.act[s, d, t0:])
    return np.concatenate(vals)


def leaked(values, future: np.ndarray) -> int:
    """How many float values in ``values`` (arrays, dicts, tuples, scalars) equal a future actual."""
    n = 0
    if isinstance(values, dict):
        return sum(leaked(v, future) for v in values.values())
    if isinstance(values, tuple | list):
        return sum(leaked(v, future) for v in values)
    a = np.asarray(values)
    if a.dtype.kind == "f" and a.size:
        n += int(np.isin(a[np.isfinite(a)], future).sum())
    return n


def drive(sim, n_steps=None):
    """Step a Simulator to the end with every task run at its origin; yields before each step."""
    obs = sim.reset()
    while not sim.done:
        yield obs
        obs, _ = sim.step(obs["origin"] + 1)


# ---------------------------------------------------------------------------- the three interfaces
@pytest.mark.parametrize("every_min", [15, 60, 1440])
@pytest.mark.parametrize("model", MODELS)
def test_jitted_view_holds_no_future_actual(noisy, model, every_min):
    sim = sim_core.Simulator(noisy, seed=1, forecast=model, forecast_issue_every_min=every_min)
    found = 0
    steps = 0
    for _ in drive(sim):
        p = sim.prep
        j = sim.step_index
        view = E.policy_view(p.tasks, p.state, p.ctx, p.info, j)
        fut = future_actuals(p, j)
        found += leaked(tuple(view), fut)
        # the history buffer itself: nothing after now, whatever index a policy tries
        assert np.isnan(view.history[:, :, view.now + 1:]).all()
        assert np.array_equal(view.history[:, :, :view.now + 1], p.info.act[:, :, :view.now + 1])
        assert view.oracle == (model == "oracle")
        steps += 1
    assert steps == noisy.n_steps
    if model == "oracle":
        assert found > 1000  # the forecast is the actual future: the check does see it
    else:
        assert found == 0


@pytest.mark.parametrize("model", MODELS)
def test_python_observation_holds_no_future_actual(noisy, model):
    sim = sim_core.Simulator(noisy, seed=1, forecast=model)
    found = 0
    for obs in drive(sim):
        fut = future_actuals(sim.prep, sim.step_index)
        found += leaked(obs, fut)
        h = obs["history"]["carbon_g_per_kwh"]
        assert h.shape == (3, obs["step"] + 1) and not h.flags.writeable
        assert obs["forecast"]["model"] == model and obs["forecast"]["oracle"] == (model == "oracle")
    if model == "oracle":
        assert found > 1000
    else:
        assert found == 0


def env_observations(sc, model, n):
    # (drain=False: the episode ends at step n; a drained one would go on past it, where the bundles differ)
    env = TaskSchedulingEnv(sc, single_action=True, seed=3, steps=n, forecast=model, drain=False)
    obs, _ = env.reset()
    out = [obs]
    done = False
    while not done:
        obs, _, done, _, _ = env.step(1)
        out.append(obs)
    return np.array(out)


@pytest.mark.parametrize("model", MODELS)
def test_gym_observation_depends_only_on_the_past(tmp_path, model):
    """Two bundles equal up to step J and different after: every observation up to step J is the same
    unless the model looks at the future (oracle, and calibrated, whose forecast is the actual plus an
    error: see the next test)."""
    rng = np.random.default_rng(5)
    n_steps, jj = 2 * 96, 120
    a = random_signals(rng, 3, n_steps)
    b = random_signals(rng, 3, n_steps, head=a, head_steps=jj + 1)
    t = tasks(np.random.default_rng(6), 200, n_steps * 900.0)
    sa = sim_core.load(tiny_bundle(tmp_path / "a", n_steps=n_steps, signals=a, tasks=t))
    sb = sim_core.load(tiny_bundle(tmp_path / "b", n_steps=n_steps, signals=b, tasks=t))
    oa, ob = env_observations(sa, model, jj + 1), env_observations(sb, model, jj + 1)
    same = np.array([np.array_equal(x, y) for x, y in zip(oa, ob, strict=True)])
    if model in ("oracle", "calibrated"):
        assert not same[:jj].all()  # the future leaks into the features: the check can fail
    else:
        assert same.all()


def test_gym_forecast_features_are_the_issued_forecast(noisy):
    """The environment's only view of the future is the forecast buffer (bucket means of it)."""
    env = TaskSchedulingEnv(noisy, single_action=True, seed=2, steps=40, forecast="calibrated")
    obs, _ = env.reset()
    names = env.feature_names
    for _ in range(30):
        obs, *_ = env.step(1)
    fc = env.sim.forecast()
    f = dict(zip(names, obs.tolist(), strict=True))
    for d, loc in enumerate(noisy.locations):
        want = np.nanmean(fc["carbon_g_per_kwh"][d, 4:16]) / 1000.0
        assert f[f"carbon_fc_4h_{loc}"] == pytest.approx(min(max(want, 0.0), 1.0), rel=1e-6)
        # (the leads past the latest issue's horizon are unknown, NaN: the buckets average the known ones)
        want = np.nanmean(fc["price_usd_per_mwh"][d, 48:96]) / 1000.0
        assert f[f"price_fc_24h_{loc}"] == pytest.approx(min(max(want, -1.0), 1.0), rel=1e-6, abs=1e-7)


def test_a_jitted_policy_cannot_read_the_future_through_the_history(noisy):
    """A policy that indexes past ``now`` (and past the window) finds NaN, never a value."""

    @njit
    def peek(view, actions):
        seen = False
        for s in range(view.history.shape[0]):
            for d in range(view.history.shape[1]):
                for t in range(view.now + 1, view.history.shape[2]):
                    if view.history[s, d, t] == view.history[s, d, t]:
                        seen = True
        for q in range(view.pending.shape[0]):
            actions[q] = 2 if seen else 1  # DC 1 would betray a finite future value

    for model in ("persistence", "oracle"):
        r = sim_core.run(noisy, peek, seed=0, forecast=model)
        assert r.totals["tasks_started"] > 0
        assert (r.tasks.filter(r.tasks["dest"].is_not_null())["dest"] == noisy.locations[0]).all()


# ---------------------------------------------------------------------------- built-in policies
def test_oracle_threshold_is_the_perfect_foresight_rolling_quantile(noisy):
    """defer_to_greener's threshold from an oracle forecast is the old perfect-foresight rolling quantile of
    the actual series (so oracle runs reproduce the earlier engine), window clipped at the bundle end."""
    for window, start in ((96, 0), (20, 150), (97, 250)):
        prep = Prepared(noisy, 0, start=start, forecast="oracle", defer_window_steps=window,
                        forecast_issue_every_min=15)
        info = prep.info
        ref = E.rolling_quantile(noisy.carbon_g_per_kwh[:, start:], min(window, 97), 0.3)
        thr = np.empty(noisy.n_dc)
        for j in range(prep.n):
            E.publish(info.act, info.hist, j, prep.s0)
            E.issue_forecast(info.act, info.fc, info.fci, info.known, info.inc, info.par, info.iopt, info.stamp,
                             info.pub, 0, j, window - 1)
            E.greener_threshold(info.hist, info.fc, start + j, int(info.iopt[E.IO_WINDOW]), 0.3, thr)
            np.testing.assert_array_equal(thr, ref[:, j])


def test_defer_to_greener_uses_the_forecast(noisy):
    """Only defer_to_greener looks ahead: the other built-ins decide the same under every model, it does not."""
    runs = {m: {p: sim_core.run(noisy, p, seed=4, forecast=m).totals for p in ("lowest_carbon", "defer_to_greener")}
            for m in MODELS}
    for m in HONEST:
        assert runs[m]["lowest_carbon"] == runs["oracle"]["lowest_carbon"]
    assert len({runs[m]["defer_to_greener"]["carbon_kg"] for m in MODELS}) > 1


# ---------------------------------------------------------------------------- the forecast models
def ramp_bundle(tmp_path, n_steps=4 * 96):
    k = np.arange(n_steps, dtype=float)
    sig = {"carbon_g_per_kwh": np.stack([100.0 + k, 1000.0 + 2 * k, 50.0 + k % 96]),
           "price_usd_per_mwh": np.stack([10.0 + k, 20.0 + k, 30.0 + k])}
    return sim_core.load(tiny_bundle(tmp_path, n_steps=n_steps, signals=sig))


def issued(sc, model, j, start=0, **kw):
    prep = Prepared(sc, 0, start=start, forecast=model, **kw)
    info = prep.info
    for jj in range(j + 1):
        E.publish(info.act, info.hist, jj, prep.s0)
    E.issue_all(info.act, info.fc, info.fci, info.known, info.inc, info.par, info.iopt, info.stamp, info.pub, j)
    return info.fc.copy(), info


def test_persistence_and_seasonal_naive_by_hand(tmp_path):
    sc = ramp_bundle(tmp_path)
    j = 200  # now = step 200
    fc, _ = issued(sc, "persistence", j)
    assert fc.shape == (2, 3, 96)
    assert (fc[0, 0] == 300.0).all() and (fc[1, 2] == 230.0).all()
    fc, _ = issued(sc, "seasonal_naive", j)
    # lead h -> step 200 + h - 96 (yesterday), which is known for every h <= 96
    np.testing.assert_array_equal(fc[0, 0], 100.0 + 200 + np.arange(1, 97) - 96)
    np.testing.assert_array_equal(fc[0, 2], 50.0 + (200 + np.arange(1, 97)) % 96)  # a daily cycle: exact
    fc, _ = issued(sc, "seasonal_naive_weekly", j)
    assert (fc[0, 0] == 300.0).all()  # a week back is before the bundle: the last known value
    fc, _ = issued(sc, "oracle", j)
    np.testing.assert_array_equal(fc[0, 1], 1000.0 + 2 * (200 + np.arange(1, 97)))
    # 48 h horizon: seasonal naive goes back two days for leads beyond one day
    fc, _ = issued(sc, "seasonal_naive", j, forecast_horizon_h=48)
    assert fc.shape == (2, 3, 192)
    assert fc[0, 0, 96] == 100.0 + 200 + 97 - 192 and fc[0, 0, 95] == 100.0 + 200 + 96 - 96
    # past the bundle's end: NaN (window starting near the end)
    fc, _ = issued(sc, "oracle", 0, start=4 * 96 - 10)
    assert np.isfinite(fc[:, :, :9]).all() and np.isnan(fc[:, :, 9:]).all()


def test_calibrated_error_matches_the_published_skill(tmp_path):
    """Over many issues the calibrated error has the published mean size over the published horizon and grows
    with the lead: carbon MAPE (DACF) and price MAE = rMAE x weekly-naive MAE (Lago et al.)."""
    n_steps = 60 * 96
    rng = np.random.default_rng(2)
    price = 60.0 + 25.0 * np.sin(2 * np.pi * np.arange(n_steps) / 96) + rng.normal(0, 8.0, n_steps)
    sc = sim_core.load(write_bundle(tmp_path, locations=["US-CAL-CISO", "DE-LU"],
                                    timezones=["America/Los_Angeles", "Europe/Berlin"], n_steps=n_steps,
                                    signals={"carbon_g_per_kwh": 200.0, "price_usd_per_mwh": price}))
    prep = Prepared(sc, 7, forecast="calibrated", forecast_issue_every_min=15)  # (a fresh issue at every j)
    info = prep.info
    errs_c = []
    errs_p = []
    for j in range(0, n_steps - 96, 7):
        E.issue_all(info.act, info.fc, info.fci, info.known, info.inc, info.par, info.iopt, info.stamp, info.pub, j)
        errs_c.append(info.fc[0] / 200.0 - 1.0)
        errs_p.append(info.fc[1, 0] - info.act[1, 0, j + 1:j + 97])
    ec = np.abs(np.array(errs_c))  # (issues, dc, lead)
    assert ec[:, 0].mean() == pytest.approx(FD.skill("carbon", "US-CAL-CISO").value, rel=0.05)
    assert ec[:, 1].mean() == pytest.approx(0.0908, rel=0.05)  # DACF Table 4, Germany
    lead = ec.mean(axis=(0, 1))
    assert lead[3] < lead[15] < lead[47] < lead[95]  # grows with the lead
    assert lead[95] / lead[3] == pytest.approx((96 / 4) ** FD.lead_exponent(), rel=0.1)
    # price: US-CAL-CISO has no benchmark market: the median rMAE; leads 12-36 h: beyond this 24 h
    # horizon, so the curve's extrapolation down to leads 0-24 h is checked instead
    ep = np.abs(np.array(errs_p))
    scale = F.naive_weekly_mae(price)
    sig = F.sigma_curve(0.452 * scale, 12, 36, 144, FD.lead_exponent())
    assert ep.mean(axis=0)[95] == pytest.approx(math.sqrt(2 / math.pi) * sig[95], rel=0.08)


def test_calibrated_forecasts_are_reproducible_and_policy_independent(noisy):
    def forecasts(seed, actions, start=0, model="calibrated"):
        sim = sim_core.Simulator(noisy, seed=seed, start=start, forecast=model)
        obs = sim.reset()
        out = {}
        while not sim.done:
            out[obs["step"]] = obs["forecast"]["carbon_g_per_kwh"].copy()
            obs, _ = sim.step(actions(obs))
        return out

    a = forecasts(3, lambda o: o["origin"] + 1)
    b = forecasts(3, lambda o: np.zeros(o["n_pending"], int))  # defer everything: another run entirely
    c = forecasts(3, lambda o: o["origin"] + 1, start=30)  # another window: same issue steps, same forecast
    d = forecasts(4, lambda o: o["origin"] + 1)
    for k in a:
        np.testing.assert_array_equal(a[k], b[k])
        if k in c:
            np.testing.assert_array_equal(a[k], c[k])
    assert not np.array_equal(a[100], d[100])
    # and the same again from a whole-run call: identical results
    r1 = sim_core.run(noisy, "defer_to_greener", seed=3)
    r2 = sim_core.run(noisy, "defer_to_greener", seed=3)
    assert r1.totals == r2.totals and r1.tasks.equals(r2.tasks)


def test_noise_stream_is_a_pure_function_of_its_key():
    base = E.stream_base(12345, 0, 2, 77)
    assert base == E.stream_base(12345, 0, 2, 77)
    others = {E.stream_base(12345, 1, 2, 77), E.stream_base(12345, 0, 1, 77), E.stream_base(12345, 0, 2, 78),
              E.stream_base(12346, 0, 2, 77)}
    assert base not in others and len(others) == 4
    assert F.forecast_key(0) != F.forecast_key(1) and 0 <= F.forecast_key(2**63 - 1) < 2**63


# ---------------------------------------------------------------------------- issue cadence
@pytest.mark.parametrize("every_min", [60, 180])
@pytest.mark.parametrize("model", MODELS)
def test_the_view_is_the_latest_issue_reindexed(noisy, model, every_min):
    """Between issues a policy sees the forecast issued at the latest issue step k_i = k - k mod cadence
    (bundle steps: the same issues whatever the window's start), re-indexed: lead h now is lead h + k - k_i
    of that issue -- the forecast a run issuing at every step issued at k_i -- and unknown (NaN) beyond the
    issue's horizon."""
    every = every_min // 15
    hmax = 96
    for start in (0, 7):
        for j in (0, 1, 5, 57, 150):
            k = start + j
            ki, age = k - k % every, k % every
            fc, info = issued(noisy, model, j, start=start, forecast_issue_every_min=every_min)
            ref, _ = issued(noisy, model, ki, forecast_issue_every_min=15)
            np.testing.assert_array_equal(fc[:, :, :hmax - age], ref[:, :, age:])
            assert np.isnan(fc[:, :, hmax - age:]).all()
            assert info.stamp[0, 0] == ki and info.stamp[1, 0] == ki
            if age and model in ("persistence", "calibrated", "oracle"):
                # a view between issues is not what a fresh issue would give: persistence holds an older
                # value, calibrated draws another error (oracle's is the actual either way)
                fresh, _ = issued(noisy, model, j, start=start, forecast_issue_every_min=15)
                same = np.array_equal(fc[:, :, :hmax - age], fresh[:, :, :hmax - age], equal_nan=True)
                assert same == (model == "oracle")


def test_prices_published_between_issues_are_known(tmp_path):
    """DE-LU, hourly issues: at 12:45 CET on 1 January (run step 47, latest issue step 44 = 12:00 CET) the
    prices of 2 January are published: they are actuals in the view, and beyond them the view is the
    12:00 issue's persistence forecast -- the last price known at 12:00 CET (the end of 1 January CET)."""
    sc = de_bundle(tmp_path)
    j = (11 * 60 + 45) // 15
    fc, info = issued(sc, "persistence", j, forecast_horizon_h=48, forecast_issue_every_min=60)
    published = (2 * 24 - 1) * 4 - 1
    known_at_issue = (23 * 60) // 15 - 1
    n_pub = published - j
    assert info.pub[1, 0] == n_pub
    np.testing.assert_array_equal(fc[1, 0, :n_pub], info.act[1, 0, j + 1:published + 1])
    age = j % 4
    assert (fc[1, 0, n_pub:192 - age] == info.act[1, 0, known_at_issue]).all()
    assert np.isnan(fc[1, 0, 192 - age:]).all()


def test_every_interface_sees_the_same_cadenced_forecast(noisy):
    """Hourly issues: the jitted view, the Python observation and defer_to_greener's window read the same
    forecast at every step (the Gymnasium features are bucket means of the Python one: the test above)."""
    opts = {"forecast": "calibrated", "forecast_issue_every_min": 60}
    sim = sim_core.Simulator(noisy, seed=5, **opts)
    seen = {}
    for obs in drive(sim):
        j = sim.step_index
        p = sim.prep
        fc = obs["forecast"]
        view = E.policy_view(p.tasks, p.state, p.ctx, p.info, j)
        np.testing.assert_array_equal(view.forecast, np.stack([fc["carbon_g_per_kwh"], fc["price_usd_per_mwh"]]))
        assert fc["issued_step"] == j - j % 4 and fc["issue_every_steps"] == 4
        seen[j] = view.forecast.copy()
    code = registry.code("defer_to_greener")
    prep = Prepared(noisy, 5, policy_code=code, **opts)
    info = prep.info
    w = int(info.iopt[E.IO_WINDOW]) - 1
    checked = 0
    for j in range(prep.n):
        rules.run(prep.tasks, prep.state, prep.ctx, info, None, code, j + 1)
        if info.stamp[0, 2] == j:  # it looked ahead at this step (tasks were pending)
            np.testing.assert_array_equal(info.fc[0, :, :w], seen[j][0, :, :w])
            checked += 1
    assert checked > 100


# ---------------------------------------------------------------------------- day-ahead publication
def de_bundle(tmp_path, model_locs=("DE-LU", "CH")):
    rng = np.random.default_rng(8)
    n_steps = 3 * 96
    return sim_core.load(write_bundle(tmp_path, locations=list(model_locs),
                                      timezones=["Europe/Berlin", "Europe/Zurich"], n_steps=n_steps,
                                      signals={"price_usd_per_mwh": rng.uniform(0, 300, (2, n_steps)),
                                               "carbon_g_per_kwh": rng.uniform(50, 500, (2, n_steps))}))


def test_day_ahead_prices_are_known_from_their_publication(tmp_path):
    """DE-LU (SDAC): at 12:30 CET on 1 January the prices of 2 January are still a forecast; at 12:45 they are
    published (the actual, even for persistence) -- through the end of 2 January CET. CH: no rule here."""
    sc = de_bundle(tmp_path)
    j_before = (11 * 60 + 30) // 15  # 11:30 UTC = 12:30 CET
    j_after = (11 * 60 + 45) // 15  # 12:45 CET
    end_of_jan2 = (2 * 24 - 1) * 4 - 1  # last step of 2 January CET (23:00 UTC on 2 January, minus one step)
    for j, published in ((j_before, (23 * 60) // 15 - 1), (j_after, end_of_jan2)):
        fc, info = issued(sc, "persistence", j, forecast_horizon_h=48, forecast_issue_every_min=15)
        assert int(info.known[1, 0, j]) == published
        n_pub = published - j
        assert info.pub[1, 0] == n_pub and info.pub[1, 1] == 0 and info.pub[0, 0] == 0
        np.testing.assert_array_equal(fc[1, 0, :n_pub], info.act[1, 0, j + 1:published + 1])
        assert (fc[1, 0, n_pub:] == info.act[1, 0, published]).all()  # then persistence of the last published
        assert (fc[1, 1] == info.act[1, 1, j]).all()  # CH: no rule -> only the current price is known
    assert FD.publication_rule("DE-LU").publication == dt.time(12, 45)
    assert FD.publication_rule("CH") is None and FD.publication_rule("AA") is None
    assert FD.publication_rule("ES").market == "SDAC" and FD.publication_rule("US-CAL-CISO") is None


def test_published_prices_follow_the_summer_time():
    """In summer 12:45 CEST is 10:45 UTC: at 10:30 UTC on 1 July the prices are known through the end of
    1 July CEST (22:00 UTC, 46 steps on), at 10:45 UTC through the end of 2 July."""
    start = dt.datetime(2023, 7, 1, 10, 30, tzinfo=dt.UTC)
    known = F.known_steps(["DE-LU", "US-CAL-CISO"], start, 900, 10_000, 0, 2)
    assert known[1, 0].tolist() == [45, 45 + 96]
    assert known[1, 1].tolist() == [0, 1] and known[0, 0].tolist() == [0, 1]  # no rule; carbon: the step itself


# ---------------------------------------------------------------------------- options, run key, outputs
@pytest.mark.parametrize(("opts", "text"), [
    ({"forecast": "perfect"}, "forecast must be one of"),
    ({"forecast": None}, "forecast must be one of"),
    ({"forecast_horizon_h": 23}, "forecast_horizon_h must be an integer in 24..336, got 23"),
    ({"forecast_horizon_h": 337}, "337"),
    ({"forecast_horizon_h": 24.0}, "24.0"),
    ({"forecast_issue_every_min": 20},
     r"forecast_issue_every_min must be a multiple of 15, got 20"),
    ({"forecast_issue_every_min": 0}, "forecast_issue_every_min must be an integer in 15..1440, got 0"),
    ({"forecast_issue_every_min": 1455}, "1455"),
    ({"forecast_issue_every_min": 60.0}, "60.0"),
])
def test_bad_forecast_options_are_refused(noisy, opts, text):
    with pytest.raises(RunOptionsError, match=text):
        sim_core.run(noisy, "local_only", **opts)


def test_forecast_model_is_in_the_run_key_and_the_outputs(noisy, tmp_path):
    from sim_core.bench import compare
    from sim_core.bench.report import summary_caption, summary_rows, write_outputs
    from sim_core.bench.sweep import options_sha256, run_options

    shas = {options_sha256(run_options(noisy, forecast=m)) for m in MODELS}
    assert len(shas) == len(MODELS)
    assert run_options(noisy)["forecast"] == "calibrated" and run_options(noisy)["forecast_horizon_h"] == 24
    assert options_sha256(run_options(noisy, forecast_horizon_h=48)) != options_sha256(run_options(noisy))
    assert run_options(noisy)["forecast_issue_every_min"] == 60
    assert options_sha256(run_options(noisy, forecast_issue_every_min=15)) != options_sha256(run_options(noisy))
    r = sim_core.run(noisy, "local_only", forecast="oracle")
    assert r.options["forecast"] == "oracle"
    cmp = compare(noisy, ["local_only", "defer_to_greener"], [0], forecast="oracle", days=1)
    assert "ORACLE (perfect foresight" in summary_caption(cmp)
    assert all(row[0].endswith("[oracle]") for row in summary_rows(cmp)[1])
    honest = compare(noisy, ["local_only"], [0], days=1)
    assert "calibrated" in summary_caption(honest) and not summary_rows(honest)[1][0][0].endswith("]")
    assert "issued every 60 min" in summary_caption(honest)
    write_outputs(cmp, tmp_path / "out", figures=False)
    assert '"forecast": "oracle"' in (tmp_path / "out" / "compare.json").read_text()


def test_cli_defaults_are_the_forecast_defaults():
    from gridshift import run_options as R
    from gridshift_cli.run_flags import flag_help

    assert R.get("forecast").default == F.DEFAULT_MODEL and R.get("forecast_horizon_h").default == F.DEFAULT_HORIZON_H
    assert R.get("forecast_issue_every_min").default == F.DEFAULT_ISSUE_EVERY_MIN
    assert R.get("forecast").choices == tuple(MODELS)
    for m in MODELS:
        assert m in flag_help(R.get("forecast"))


def test_defer_window_is_clipped_to_the_horizon(noisy):
    prep = Prepared(noisy, 0, defer_window_steps=500, forecast_horizon_h=48)
    assert prep.info.iopt[E.IO_WINDOW] == 193 and prep.info.fc.shape == (2, 3, 192)
    assert Prepared(noisy, 0).info.iopt[E.IO_WINDOW] == 96


# ---------------------------------------------------------------------------- the tables and the MOER data
def test_skill_tables():
    assert FD.skill("carbon", "DE-LU").value == 0.0908 and FD.skill("carbon", "ZA").location == "*"
    assert FD.skill("price", "FR").value == 0.527 and FD.skill("price", "SG").value == 0.452
    assert 0.3 < FD.lead_exponent() < 0.4
    for loc in LOC3:
        assert FD.skill("carbon", loc).location == "*"
    assert len(TZ3) == 3


def test_moer_error_alignment_on_a_synthetic_file(tmp_path):
    """f_k issued at row t is the forecast of row t + k - 1: a file whose f_k are exactly that has MAE 0."""
    n = 300
    rng = np.random.default_rng(0)
    m = rng.uniform(0.1, 0.7, n)
    t0 = dt.datetime(2021, 8, 1, tzinfo=dt.UTC)
    rows = ["time,moer," + ",".join(f"f{k}" for k in range(1, 37))]
    for i in range(n):
        f = [m[min(i + k - 1, n - 1)] + (0.01 * k if i + k - 1 < n else 0.0) for k in range(1, 37)]
        stamp = (t0 + dt.timedelta(minutes=5 * i)).isoformat()
        rows.append(f"{stamp},{float(m[i])!r}," + ",".join(repr(float(x)) for x in f))
    path = tmp_path / "m.csv"
    path.write_text("\n".join(rows) + "\n")
    e = F.moer_forecast_errors(path)
    np.testing.assert_allclose(e["mae"].to_numpy(), 0.01 * np.arange(1, 37), rtol=1e-9)
    assert e["lead_min"].to_list()[:3] == [5, 10, 15]
    assert F.fit_lead_exponent(e) == pytest.approx(1.0, abs=1e-9)  # MAE proportional to the lead


def test_simulator_reset_with_a_seed_and_window_is_a_fresh_simulator(noisy):
    """``Simulator.reset(seed, start=..., days=...)`` runs exactly what a new Simulator with those arguments
    runs (its compiled entry points are reused, nothing else); a failing reset changes nothing."""
    def episode(sim, **kw):
        obs = sim.reset(**kw)
        seen = []
        while not sim.done:
            seen.append((obs["step"], obs["forecast"]["carbon_g_per_kwh"].copy()))
            obs, _ = sim.step(obs["origin"] + 1)
        return seen, sim.result().totals

    reused = sim_core.Simulator(noisy, seed=1)
    episode(reused)
    for seed, window in ((5, dict(start=40, days=1)), (2, dict(steps=100))):
        a_seen, a_tot = episode(reused, seed=seed, **window)
        b_seen, b_tot = episode(sim_core.Simulator(noisy, seed=seed, **window))
        # (a window's steps and its drain: sim_core.drain)
        assert [s for s, _ in a_seen] == [s for s, _ in b_seen] and len(a_seen) >= window.get("steps", 96)
        for (_, x), (_, y) in zip(a_seen, b_seen, strict=True):
            np.testing.assert_array_equal(x, y)
        assert a_tot == b_tot
    before = reused.prep
    with pytest.raises(sim_core.RunOptionsError):
        reused.reset(seed=3, start=10_000)  # past the bundle's end
    assert reused.prep is before
    again_seen, _ = episode(reused)  # the previous seed and window are kept
    assert again_seen[0][0] == 0 and len(again_seen) == len(episode(sim_core.Simulator(noisy, seed=2, steps=100))[0])
    with pytest.raises(TypeError, match="start/days/steps"):
        reused.reset(forecast="oracle")
