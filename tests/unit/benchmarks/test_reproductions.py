"""The reproduction presets' machinery (benchmarks/repro_presets.py) on hand-made inputs: zone statistics by
hand, the zone rules and their refusals, the CarbonFlex queues, the accounting bases and one preset run."""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import polars as pl
import pytest

import sim_core
from benchmarks import repro_presets as RP
from benchmarks import reproductions as R
from sim_core.testing import tiny_bundle


def _zone(mirror, zone, values):
    d = mirror / "electricitymaps" / zone
    d.mkdir(parents=True)
    ts = pl.datetime_range(pl.datetime(2022, 1, 1), pl.datetime(2022, 1, 2, 23), "1h", eager=True)
    pl.DataFrame({"Datetime (UTC)": ts.dt.strftime("%Y-%m-%d %H:%M:%S"), RP.CI_COLUMN: values}).write_csv(
        d / f"{zone}_2022_hourly.csv")


def test_zone_stats_by_hand(tmp_path):
    _zone(tmp_path, "AU-FLAT", [100.0] * 48)
    _zone(tmp_path, "AU-SWING", ([100.0] * 12 + [300.0] * 12) * 2)  # each day: mean 200, sample std 100 sqrt(24/23)
    _zone(tmp_path, "XX", [50.0] * 24 + [150.0] * 24)  # flat days at different levels: daily CoV 0
    s = RP.zone_stats(tmp_path, 2022)
    assert s["zone"].to_list()[0] == "AU-SWING"
    row = s.filter(pl.col("zone") == "AU-SWING").row(0, named=True)
    assert row["mean_g_per_kwh"] == 200.0
    assert row["daily_cov"] == pytest.approx(0.5 * math.sqrt(24 / 23), rel=1e-12)
    assert s.filter(pl.col("zone") == "XX")["daily_cov"][0] == 0.0
    assert RP.pick_zone("XX", "exact", s) == ("XX", "in the mirror")
    assert RP.pick_zone("AUS-SA", "highest-cov", s)[0] == "AU-SWING"
    assert RP.pick_zone("AUS-WA", "same-market-lowest-cov:AU-", s)[0] == "AU-FLAT"
    assert RP.pick_zone("AUS-WA", "same-market-lowest-cov:AU-", s, {"AU-FLAT"})[0] == "AU-SWING"
    assert RP.pick_zone("PL", "named:XX", s)[0] == "XX"
    # a high CoV among zones whose mean is not small: AU-SWING (mean 200); with a floor above every mean, none
    z, why = RP.pick_zone("AUS-SA", "highest-cov-min-mean:150", s)
    assert z == "AU-SWING" and "mean of at least 150 g/kWh" in why
    with pytest.raises(ValueError, match="at least 120 g/kWh"):  # the other zones' means are 100
        RP.pick_zone("AUS-SA", "highest-cov-min-mean:120", s, {"AU-SWING"})
    with pytest.raises(ValueError, match="at least 250 g/kWh"):
        RP.pick_zone("AUS-SA", "highest-cov-min-mean:250", s)
    with pytest.raises(ValueError, match="named stand-in YY"):
        RP.pick_zone("PL", "named:YY", s)
    with pytest.raises(ValueError, match="unknown zone rule"):
        RP.pick_zone("PL", "nearest", s)
    with pytest.raises(FileNotFoundError, match="2021"):
        RP.zone_stats(tmp_path, 2021)


def test_queues_and_a_preset_run(tmp_path):
    n = 6
    path = tiny_bundle(tmp_path, tasks={"arrival_ts_utc": np.linspace(0, 3600 * 6, n),
                                        "duration_s": np.array([1.0, 2.0, 3.0, 12.0, 13.0, 0.5]) * 3600,
                                        "cpu_cores": np.full(n, 4.0), "gpus": np.full(n, 0.5)})
    sc = sim_core.load(path)
    q = RP.with_queues(sc, RP.CARBONFLEX.queues)
    assert (q.max_delay_s / 3600).tolist() == [6.0, 6.0, 24.0, 24.0, 48.0, 6.0]  # l <= 2 h, <= 12 h, longer
    assert sc.max_delay_s is not q.max_delay_s and RP.with_queues(sc, None) is sc
    p = dataclasses.replace(RP.CARBONFLEX, start=None, days=1.0, run={"forecast": "oracle"})
    rows = R.run_policies(q, [R.BASE], p, 0)
    facility = R.run_policies(q, [R.BASE], p, 0, accounting="facility")
    job, fac = rows[R.BASE]["carbon_kg"], facility[R.BASE]["carbon_kg"]
    assert 0.0 < job < fac  # busy IT energy is a part of the facility's
    assert R.savings(rows)[R.BASE] == 0.0


def test_hour_plus_keeps_the_jobs_of_an_hour_or_more(tmp_path):
    n = 6
    dur = np.array([1.0, 2.0, 3.0, 12.0, 13.0, 0.5]) * 3600
    sc = sim_core.load(tiny_bundle(tmp_path, tasks={"arrival_ts_utc": np.linspace(0, 3600 * 6, n),
                                                    "duration_s": dur, "cpu_cores": np.arange(n) + 1.0,
                                                    "gpus": np.full(n, 0.5)}))
    h = RP.hour_plus(sc, 1.0)
    assert h.n_tasks == 5 and (h.duration_s == dur[:5]).all() and h.cpu_cores.tolist() == [1.0, 2.0, 3.0, 4.0, 5.0]
    assert (h.arrival_s == sc.arrival_s[:5]).all() and sc.n_tasks == n and RP.hour_plus(sc, 0.0) is sc
    res = sim_core.run(h, "local_only", seed=0)
    assert res.tasks.height == 5 and (res.tasks["duration_s"] >= 3600).all()


def test_splice_replaces_only_the_regenerated_sections():
    old = "# Head\n\nintro\n\n## Zones\n\nold zones\n\n## CarbonFlex (x)\n\nold cf\n\n## MASAC\n\nmasac\n"
    new = "# Head\n\nnew intro\n\n## Zones\n\nnew zones\n\n## CarbonFlex (x)\n\nnew cf\n"
    out = R.splice(old, new)
    assert out == "# Head\n\nintro\n\n## Zones\n\nnew zones\n\n## CarbonFlex (x)\n\nnew cf\n\n## MASAC\n\nmasac\n"


def test_write_splices_one_run_into_the_page_and_replaces_it_whole_otherwise(tmp_path, monkeypatch):
    doc = tmp_path / "reproductions.md"
    doc.write_text("# Head\n\nintro\n\n## Zones\n\nold zones\n\n## MASAC\n\nold masac\n")
    monkeypatch.setattr(R, "DOC", doc)
    R.write("# H\n\n## MASAC\n\nnew masac\n", only=True)
    assert doc.read_text() == "# Head\n\nintro\n\n## Zones\n\nold zones\n\n## MASAC\n\nnew masac\n"
    R.write("# H\n\n## MASAC\n\nnew masac\n", only=False)
    assert doc.read_text() == "# H\n\n## MASAC\n\nnew masac\n"
    assert [p.name for p in tmp_path.iterdir()] == ["reproductions.md"]  # no temporary file left


def test_masac_run_utility_conserves_gpu_hours(tmp_path):
    """The run-level MASAC utility: revenue over every job's GPU-hours (slack unbounded) equals the revenue over
    the GPU-hours the steps ran (a drained run does all the work); a slack of 0 drops the jobs that waited."""
    n = 12
    sc = sim_core.load(tiny_bundle(tmp_path, tasks={"arrival_ts_utc": np.full(n, 600.0),
                                                   "duration_s": np.full(n, 3600.0), "cpu_cores": np.full(n, 4.0),
                                                   "gpus": np.full(n, 1.0)}))
    p = dataclasses.replace(RP.MASAC, start=None, days=1.0)
    res = R.run_policies(sc, [R.BASE], p, 0, accounting="facility")[R.BASE]["res"]
    every = R.masac_utility(res, sc, slack_share=None)
    jobs = R.masac_utility(res, sc, slack_share=1e9)
    gpu_h = float(res.steps["busy_gpus"].sum()) * 0.25
    assert gpu_h == pytest.approx(12.0, rel=1e-9)  # 12 one-GPU one-hour jobs
    assert every["revenue"] == pytest.approx(0.05 * gpu_h, rel=1e-9) == jobs["revenue"]
    waited = res.tasks.filter(pl.col("wait_s") > 0).height
    assert waited > 0  # 12 GPUs asked of 4 per site: some wait
    assert R.masac_utility(res, sc, slack_share=0.0)["revenue"] == pytest.approx(0.05 * (n - waited), rel=1e-9)
    assert every["migration_cost"] == every["retrieval_cost"] == 0.0  # local_only moves nothing


def test_masac_scenario_applies_table_one(tmp_path):
    """Table I on a 5-site bundle: GPUs, origins in proportion to delta, 1,500 jobs per 2 days, allowed delay 40 %
    (at least a slot), not interruptible, and the stated load rule: SG's mean offered GPU load = its 120 GPUs."""
    from sim_core.testing import write_bundle

    rng = np.random.default_rng(0)
    n, days = 8000, 4
    loc = ["AU-NSW", "AU-VIC", "CA-ON", "DE-LU", "SG"]
    sc = sim_core.load(write_bundle(
        tmp_path, locations=loc, timezones=["Australia/Sydney", "Australia/Melbourne", "America/Toronto",
                                            "Europe/Berlin", "Asia/Singapore"],
        total_gpus=[29, 38, 44, 46, 51], n_steps=96 * days,
        tasks={"arrival_ts_utc": np.sort(rng.uniform(0, days * 86400.0, n)),
               "duration_s": rng.uniform(600, 20000, n), "cpu_cores": np.full(n, 2.0),
               "gpus": rng.choice([0.25, 0.5, 1.0], n), "interruptible": np.ones(n, bool)}))
    out = RP.masac_scenario(sc, seed=1)
    t = RP.MASAC_TABLE1
    np.testing.assert_array_equal(out.cap_gpus, t["gpus"])
    np.testing.assert_allclose(out.population_weight, np.array(t["delta"]) / sum(t["delta"]))
    assert abs(out.n_tasks - 1500 * days / 2) < 4 * math.sqrt(1500 * days / 2)  # thinned, seeded
    assert set(out.task_id.tolist()) <= set(sc.task_id.tolist())
    np.testing.assert_allclose(out.max_delay_s, np.maximum(0.4 * out.duration_s, 900.0))
    assert not out.interruptible.any() and (out.min_scale == 1).all() and (out.max_scale == 1).all()
    assert out.extra["masac_hot_site"] == "SG"
    gpu_h = float((out.gpus * out.duration_s).sum()) / 3600.0 / out.n_tasks
    sg_jobs_per_h = 1500 / 48.0 * 0.03 / sum(t["delta"])
    assert sg_jobs_per_h * gpu_h == pytest.approx(120.0, rel=1e-9)
    np.testing.assert_allclose(out.gpus / np.asarray(sc.gpus)[np.isin(sc.task_id, out.task_id)],
                               out.extra["masac_gpu_scale"])
    with pytest.raises(ValueError, match="the MASAC preset has 5 sites, the bundle 3"):
        RP.masac_scenario(sim_core.load(tiny_bundle(tmp_path / "three")))
