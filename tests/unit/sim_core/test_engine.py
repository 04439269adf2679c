"""Transit, queues, SLA, capacity, determinism and timing of the step loop."""

import json
from pathlib import Path

import numpy as np
import polars as pl
import pytest
from numba import njit

import sim_core
from sim_core import engine as E
from sim_core.testing import tiny_bundle, write_bundle

UTC = ["UTC", "UTC"]


def two_dc(tmp_path, tasks, **kw):
    args = dict(locations=["A", "B"], timezones=UTC, population_weight=[1.0, 0.0], n_steps=96,
                total_cores=16, total_gpus=2, total_mem_gb=64,
                signals={"carbon_g_per_kwh": np.array([[500.0] * 96, [100.0] * 96])},
                usd_per_gb=0.05, throughput_mbps=80.0, rtt_ms=100.0, tasks=tasks)
    args.update(kw)
    return write_bundle(tmp_path, **args)


def test_remote_assignment_delay_cost_energy_emissions(tmp_path):
    p = two_dc(tmp_path, {"arrival_ts_utc": [0.0], "duration_s": [1800.0], "bandwidth_gb": [1.0]})
    for basis, ci in (("origin", 500.0), ("mean", 300.0)):
        r = sim_core.run(p, "lowest_carbon", transfer_emissions=basis, transfer_kwh_per_gb="aslan2018-2015")
        t = r.tasks.row(0, named=True)
        assert t["origin"] == "A" and t["dest"] == "B"
        assert t["transit_delay_s"] == pytest.approx(1.0 * 8000 / 80 + 0.1, abs=1e-12)  # 100.1 s
        x = r.transfers.row(0, named=True)
        assert x["cost_usd"] == pytest.approx(0.05, abs=1e-15)
        assert x["energy_kwh"] == pytest.approx(0.06, abs=1e-15)
        assert x["carbon_kg"] == pytest.approx(0.06 * ci / 1000, abs=1e-15)
        assert r.totals["transfer_carbon_kg"] == pytest.approx(0.06 * ci / 1000, abs=1e-15)
        start = (t["start_ts_utc"] - t["arrival_ts_utc"]).total_seconds()
        assert start == pytest.approx(100.1, abs=1e-6)
    # same-DC assignment: no transfer at all
    r = sim_core.run(p, "local_only")
    assert r.transfers.height == 0 and r.tasks["transit_delay_s"][0] == 0.0


def test_large_transfer_joins_after_several_steps(tmp_path):
    p = two_dc(tmp_path, {"arrival_ts_utc": [0.0], "duration_s": [900.0], "bandwidth_gb": [100.0]})
    r = sim_core.run(p, "lowest_carbon")
    delay = 100.0 * 8000 / 80 + 0.1  # 10000.1 s = 11.1 steps
    t = r.tasks.row(0, named=True)
    assert (t["start_ts_utc"] - t["arrival_ts_utc"]).total_seconds() == pytest.approx(delay, abs=1e-6)
    b = r.steps.filter(pl.col("location") == "B").sort("step")
    assert b["in_transit"].to_list()[:13] == [1] * 11 + [0, 0]
    busy = b["busy_cores"].to_numpy()
    assert busy[:11].sum() == 0.0
    assert busy[11] == pytest.approx((900 * 12 - delay) / 900, abs=1e-12)
    assert busy[12] == pytest.approx((delay + 900 - 900 * 12) / 900, abs=1e-12)


def test_sla_exact_counts(tmp_path):
    # one DC, 4 cores, three 4-core 15-min tasks at t=0: they run one after the other
    p = write_bundle(tmp_path, locations=["A"], timezones=["UTC"], total_cores=4, total_gpus=0,
                     total_mem_gb=64, tasks={"arrival_ts_utc": [0.0, 0.0, 0.0], "duration_s": [900.0] * 3,
                                             "cpu_cores": [4.0] * 3})
    r = sim_core.run(p, "local_only")
    starts = [(s - a).total_seconds() for s, a in zip(r.tasks["start_ts_utc"], r.tasks["arrival_ts_utc"], strict=True)]
    assert starts == [0.0, 900.0, 1800.0]
    assert r.tasks["violated"].to_list() == [False, True, True]  # deadline = 1350 s
    assert r.totals["sla_violations"] == 2
    s = r.steps.sort("step")
    assert s["sla_violations"].to_list()[:3] == [0, 1, 1]
    assert s["queue_len"].to_list()[:3] == [2, 1, 0]
    r2 = sim_core.run(p, "local_only", sla_multiplier=2.5)
    assert r2.totals["sla_violations"] == 1  # deadline 2250: only the third (finish 2700)
    assert sim_core.run(p, "local_only", sla_multiplier=3.0).totals["sla_violations"] == 0  # 2700 on time


def test_forced_assignment_past_deadline(tmp_path):
    p = two_dc(tmp_path, {"arrival_ts_utc": [60.0], "duration_s": [1800.0]})
    r = sim_core.run(p, lambda obs: np.zeros(obs["n_pending"], dtype=int))  # always defer
    t = r.tasks.row(0, named=True)
    # deadline = 60 + 2700 = 2760 s; first step start at/after it: step 4 (3600 s)
    assert t["forced"] and t["dest"] == "A" and t["violated"]
    assert (t["start_ts_utc"] - r.steps["ts_utc"].min()).total_seconds() == 3600.0
    assert r.totals["tasks_forced"] == 1
    s = r.steps.filter(pl.col("location") == "A").sort("step")
    assert s["deferred"].to_list()[:5] == [1, 1, 1, 1, 0]


def test_capacity_never_exceeded_and_unschedulable_reported(tmp_path):
    rng = np.random.default_rng(0)
    n = 3000
    tasks = {"arrival_ts_utc": np.sort(rng.uniform(0, 86400, n)), "duration_s": rng.uniform(900, 7200, n),
             "cpu_cores": rng.choice([1.0, 2.0, 4.0, 8.0], n), "gpus": rng.choice([0.0, 0.5, 1.0], n),
             "mem_gb": rng.uniform(1, 32, n), "bandwidth_gb": rng.uniform(0, 2, n)}
    tasks["cpu_cores"][5] = 1000.0  # fits nowhere
    p = write_bundle(tmp_path, locations=["A", "B", "C"], timezones=["UTC", "Europe/Paris", "Asia/Tokyo"],
                     total_cores=[64, 32, 48], total_gpus=[4, 2, 0], total_mem_gb=[512, 256, 256], n_steps=192,
                     tasks=tasks)
    sc = sim_core.load(p)
    caps = {"A": (64, 4, 512), "B": (32, 2, 256), "C": (48, 0, 256)}
    for pol in sim_core.POLICIES:
        r = sim_core.run(sc, pol, seed=1)
        assert r.totals["tasks_unschedulable"] == 1
        assert r.tasks.filter(pl.col("task_id") == 5)["status"][0] == "unschedulable"
        for loc, (c, g, m) in caps.items():
            s = r.steps.filter(pl.col("location") == loc)
            assert s["busy_cores"].max() <= c + 1e-9 and s["busy_gpus"].max() <= g + 1e-9
            assert s["busy_mem_gb"].max() <= m + 1e-9
            # instantaneous: sweep start/finish events
            t = r.tasks.filter((pl.col("dest") == loc) & pl.col("start_ts_utc").is_not_null())
            ev_t = np.r_[t["start_ts_utc"].dt.epoch("us").to_numpy(), t["finish_ts_utc"].dt.epoch("us").to_numpy()]
            tid = t["task_id"].to_numpy()
            for col, cap in (("cpu_cores", c), ("gpus", g), ("mem_gb", m)):
                v = tasks[col][tid]
                ev_v = np.r_[v, -v]
                order = np.lexsort((ev_v, ev_t))  # at equal times, releases first
                assert np.cumsum(ev_v[order]).max() <= cap + 1e-9, (pol, loc, col)
        assert r.steps["cpu_util"].max() <= 1.0 + 1e-12


def test_rule_policies_spread_a_batch_they_cannot_fit_in_one_dc(tmp_path):
    # 10 tasks of 8 cores in one step; the greenest DC (B) holds only 2 of them
    p = two_dc(tmp_path, {"arrival_ts_utc": np.zeros(10), "duration_s": np.full(10, 3600.0),
                          "cpu_cores": np.full(10, 8.0), "bandwidth_gb": np.zeros(10)},
               total_cores=[80, 16])
    r = sim_core.run(p, "lowest_carbon")
    counts = dict(r.tasks.group_by("dest").len().iter_rows())
    assert counts == {"B": 2, "A": 8}
    assert r.tasks["wait_s"].max() == pytest.approx(0.1)  # only the RTT of the transfer, no queueing


def test_determinism_and_same_origins_across_policies(tmp_path):
    rng = np.random.default_rng(5)
    n = 2000
    p = tiny_bundle(tmp_path, tasks={"arrival_ts_utc": np.sort(rng.uniform(0, 80000, n)),
                                     "duration_s": rng.uniform(900, 5000, n), "cpu_cores": rng.choice([1.0, 4.0], n),
                                     "gpus": rng.choice([0.0, 1.0], n)})
    sc = sim_core.load(p)
    a = sim_core.run(sc, "random", seed=11)
    b = sim_core.run(p, "random", seed=11)
    assert a.steps.equals(b.steps) and a.tasks.equals(b.tasks) and a.transfers.equals(b.transfers)
    assert a.totals == b.totals
    c = sim_core.run(sc, "random", seed=12)
    assert not a.tasks["origin"].equals(c.tasks["origin"])
    origins = [sim_core.run(sc, pol, seed=11).tasks["origin"] for pol in sim_core.POLICIES]
    assert all(o.equals(origins[0]) for o in origins)
    assert a.seed == 11 and a.bundle_id == sc.bundle_id and a.gridshift_version


def test_partial_step_accounting(tmp_path):
    # a 1-core task running 20 min from t=0: step 0 full, step 1 exactly 5/15
    p = write_bundle(tmp_path, locations=["A"], timezones=["UTC"], total_cores=64, total_gpus=0, total_mem_gb=100,
                     tasks={"arrival_ts_utc": [0.0], "duration_s": [1200.0], "cpu_cores": [1.0], "mem_gb": [0.0]})
    r = sim_core.run(p, "local_only")
    s = r.steps.sort("step")
    assert s["busy_cores"][0] == 1.0 and s["busy_cores"][1] == pytest.approx(1 / 3, abs=1e-15)
    assert s["busy_cores"][2] == 0.0
    idle = s["it_cpu_kw"][2]
    assert s["it_cpu_kw"][1] - idle == pytest.approx((s["it_cpu_kw"][0] - idle) / 3, abs=1e-12)
    assert s["running"].to_list()[:3] == [1, 1, 0]


def test_signals_at_their_own_step_and_energy_accounting(tmp_path):
    ramp = np.arange(96, dtype=float) * 10 + 100
    p = write_bundle(tmp_path, locations=["A"], timezones=["Australia/Sydney"],
                     signals={"carbon_g_per_kwh": ramp, "price_usd_per_mwh": ramp / 2, "temp_c": ramp / 50,
                              "wetbulb_c": ramp / 50 - 2},  # a wet-bulb never exceeds the dry-bulb
                     tasks={"arrival_ts_utc": [0.0], "duration_s": [3600.0]})
    r = sim_core.run(p, "local_only")
    s = r.steps.sort("step")
    np.testing.assert_array_equal(s["carbon_g_per_kwh"].to_numpy(), ramp)
    np.testing.assert_allclose(s["total_kwh"].to_numpy(), s["total_kw"].to_numpy() * 0.25, rtol=1e-15)
    np.testing.assert_allclose(s["carbon_kg"].to_numpy(), s["total_kwh"].to_numpy() * ramp / 1000, rtol=1e-15)
    np.testing.assert_allclose(s["cost_usd"].to_numpy(), s["total_kwh"].to_numpy() * ramp / 2 / 1000, rtol=1e-15)
    assert r.totals["total_kwh"] == pytest.approx(s["total_kwh"].sum(), rel=1e-12)
    assert (s["it_kwh"] <= s["total_kwh"]).all()
    assert s["local_hour"][0] == 11  # Sydney, summer time (UTC+11) on 1 January


def test_full_year_runs_to_the_end(tmp_path):
    n = 3000
    rng = np.random.default_rng(2)
    arr = np.sort(rng.uniform(0, 35040 * 900 - 1, n))
    arr[-1] = 35040 * 900 - 1.0  # arrives in the very last second of the year
    p = tiny_bundle(tmp_path, n_steps=35040, tasks={"arrival_ts_utc": arr, "duration_s": np.full(n, 20000.0)})
    r = sim_core.run(p, "defer_to_greener", seed=0, workload="origins")  # the bundle's own tasks
    assert r.steps.height == 3 * 35040 and r.totals["steps"] == 35040
    assert r.totals["tasks_started"] + r.totals["tasks_pending_at_end"] + r.totals["tasks_queued_at_end"] \
        + r.totals["tasks_in_transit_at_end"] == n
    # a resampled year (the default): every task of the realisation accounted for, the last second included
    w = sim_core.run(p, "defer_to_greener", seed=0)
    assert w.totals["tasks_started"] + w.totals["tasks_pending_at_end"] + w.totals["tasks_queued_at_end"] \
        + w.totals["tasks_in_transit_at_end"] == w.tasks.height != n
    assert w.tasks["task_id"].n_unique() == w.tasks.height


def test_window_start_days(tmp_path):
    p = tiny_bundle(tmp_path)
    r = sim_core.run(p, "local_only", start="2023-01-01T03:00:00+00:00", days=0.25)
    assert r.steps["step"].min() == 12 and r.totals["steps"] == 24
    assert r.totals["tasks"] == 4  # arrivals at 3.43, 4.29, 5.14 and 6.0 h (8 tasks over 0..6 h)


def test_step_api_matches_builtin_run(tmp_path):
    rng = np.random.default_rng(9)
    n = 500
    p = tiny_bundle(tmp_path, tasks={"arrival_ts_utc": np.sort(rng.uniform(0, 80000, n)),
                                     "duration_s": rng.uniform(900, 9000, n), "cpu_cores": rng.choice([4.0, 16.0], n),
                                     "bandwidth_gb": rng.uniform(0, 5, n)},
                    signals={"carbon_g_per_kwh": rng.uniform(50, 500, (3, 96))})
    sc = sim_core.load(p)
    ref = sim_core.run(sc, "lowest_carbon", seed=4)
    assert callable(ref.task_frames)  # run(): per-task frames built on first access ...
    sim = sim_core.Simulator(sc, seed=4)
    obs = sim.reset()
    n_steps = 0
    while not sim.done:
        obs, info = sim.step(sim.builtin_actions("lowest_carbon"))
        n_steps += 1
        assert info["total_kw"].shape == (3,)
    assert n_steps == 96
    got = sim.result()
    assert not callable(got.task_frames)  # ... Simulator.result(): at once (the simulator may step on)
    assert got.tasks.equals(ref.tasks) and got.transfers.equals(ref.transfers) and got.totals == ref.totals
    assert got.steps.equals(ref.steps)
    assert not callable(ref.task_frames)


def test_jitted_and_python_policies(tmp_path):
    @njit
    def to_origin(view, actions):
        for q in range(view.pending.shape[0]):
            actions[q] = view.origin[view.pending[q]] + 1

    def py_origin(obs):
        return obs["origin"] + 1

    p = tiny_bundle(tmp_path)
    ref = sim_core.run(p, "local_only", seed=2)
    for pol in (to_origin, py_origin):
        r = sim_core.run(p, pol, seed=2)
        assert r.tasks.equals(ref.tasks) and r.totals == ref.totals


def test_options_single_action_and_no_defer(tmp_path):
    rng = np.random.default_rng(3)
    n = 400
    p = tiny_bundle(tmp_path, tasks={"arrival_ts_utc": np.sort(rng.uniform(0, 80000, n)),
                                     "duration_s": rng.uniform(900, 3000, n)},
                    signals={"carbon_g_per_kwh": rng.uniform(50, 500, (3, 96))})
    r = sim_core.run(p, "defer_to_greener", allow_defer=False)
    assert r.steps["deferred"].sum() == 0
    r = sim_core.run(p, "defer_to_greener")
    assert r.steps["deferred"].sum() > 0 and r.totals["tasks_forced"] == 0
    r = sim_core.run(p, "lowest_carbon", single_action=True)
    # every step's batch went to one DC
    per_step = r.tasks.with_columns(pl.col("decision_ts_utc").dt.truncate("15m").alias("k")) \
        .group_by("k").agg(pl.col("dest").n_unique())
    assert per_step["dest"].max() == 1
    with pytest.raises(TypeError):
        sim_core.run(p, "lowest_carbon", no_such_option=1)
    with pytest.raises(ValueError):
        sim_core.run(p, "nope")


def test_to_parquet(tmp_path):
    r = sim_core.run(tiny_bundle(tmp_path), "round_robin")
    d = r.to_parquet(tmp_path / "out")
    assert pl.read_parquet(d / "steps.parquet").equals(r.steps)
    for c in ("it_kwh", "total_kwh", "cpu_util", "gpu_util", "mem_util", "cost_usd", "carbon_kg", "water_l",
              "pue", "queue_len", "in_transit", "sla_violations", "unmet_cooling_kw", "chiller_kw"):
        assert c in r.steps.columns


def test_to_parquet_is_all_or_nothing(tmp_path, monkeypatch):
    """A write that fails part-way (here the transfers' file) leaves the folder's earlier files as they were and no
    temporary file behind; a complete write then replaces all four."""
    first = sim_core.run(tiny_bundle(tmp_path), "round_robin")
    d = first.to_parquet(tmp_path / "out")
    before = {p.name: p.read_bytes() for p in d.iterdir()}
    second = sim_core.run(tiny_bundle(tmp_path), "local_only")
    real = pl.DataFrame.write_parquet

    def failing(frame, path, *args, **kwargs):
        if "transfers" in Path(path).name:
            raise OSError("disk full")
        return real(frame, path, *args, **kwargs)

    monkeypatch.setattr(pl.DataFrame, "write_parquet", failing)
    with pytest.raises(OSError, match="disk full"):
        second.to_parquet(d)
    assert {p.name: p.read_bytes() for p in d.iterdir()} == before
    monkeypatch.setattr(pl.DataFrame, "write_parquet", real)
    second.to_parquet(d)
    assert sorted(p.name for p in d.iterdir()) == sorted(before)
    assert json.loads((d / "run.json").read_text())["policy"] == "local_only"
    assert pl.read_parquet(d / "steps.parquet").equals(second.steps)


def _queue_minima_numpy(cores, gpus, mem):
    """The definition: minima over boolean selections (numpy's ``min``), 0 for an empty class."""
    q = np.zeros(6)
    cpu = gpus <= 0.0
    for mask, cols in ((cpu, ((0, cores), (2, mem))), (~cpu, ((3, cores), (4, gpus), (5, mem)))):
        if mask.any():
            for i, x in cols:
                q[i] = x[mask].min()
    return q


@pytest.mark.parametrize("case", ["mixed", "cpu_only", "gpu_only", "empty", "nan_cores", "nan_gpus"])
def test_queue_minima_equals_the_numpy_definition(case):
    rng = np.random.default_rng(7)
    n = 0 if case == "empty" else 5000
    cores = rng.uniform(0.5, 64.0, n)
    mem = rng.uniform(1.0, 512.0, n)
    gpus = np.where(rng.random(n) < 0.3, rng.integers(1, 9, n).astype(float), 0.0)
    if case == "cpu_only":
        gpus[:] = 0.0
    elif case == "gpu_only":
        gpus[:] = 2.0
    elif case == "nan_cores":
        cores[17] = np.nan
    elif case == "nan_gpus":
        gpus[9] = np.nan
    out = np.full(6, -1.0)
    E.queue_minima(cores, gpus, mem, out)
    np.testing.assert_array_equal(out, _queue_minima_numpy(cores, gpus, mem))
    if case == "mixed":  # real minima, not zeros
        assert out[0] == cores[gpus <= 0].min() > 0 and out[4] == 1.0
