"""Per-step PUE/WUE columns and per-site annual summaries of a run (docs/model.md §4, issue item 3.4)."""

import json
import math

import numpy as np
import polars as pl
import pytest

import sim_core
from gridshift.dc_params import CHILLER_2015, DatacenterParams
from sim_core.result import effectiveness
from sim_core.testing import tiny_bundle


def test_effectiveness_is_never_nan():
    assert effectiveness(5.0, 2.0, 1.0) == 2.5
    assert effectiveness(0.0, 0.0, 1.0) == 1.0  # nothing drew power: the neutral PUE
    assert effectiveness(0.0, 0.0, 0.0) == 0.0  # nothing drew water
    assert effectiveness(3.0, 0.0, 1.0) == math.inf  # overhead with no IT energy
    got = effectiveness(np.array([1.0, 0.0, 2.0]), np.array([0.5, 0.0, 0.0]), 1.0)
    np.testing.assert_array_equal(got, [2.0, 1.0, math.inf])
    assert not np.isnan(got).any()


@pytest.fixture
def cold_and_hot(tmp_path):
    """3 sites, one day: AA cold (economizer only), BB mild, CC tropical; AA and BB have a wet tower, CC a
    dry cooler."""
    n = 96
    temp = np.vstack([np.full(n, -12.0), np.linspace(1.0, 9.0, n), np.full(n, 31.0)])
    wb = np.vstack([np.full(n, -14.0), np.linspace(-2.0, 6.0, n), np.full(n, 27.0)])
    return tiny_bundle(tmp_path, signals={"temp_c": temp, "wetbulb_c": wb},
                       physics=[DatacenterParams(**CHILLER_2015, condenser="water"),
                                DatacenterParams(**CHILLER_2015, condenser="water"),
                                DatacenterParams(**CHILLER_2015, condenser="dry")])


def test_step_pue_wue_columns_weight_to_the_site_totals(cold_and_hot, tmp_path):
    r = sim_core.run(cold_and_hot, "round_robin", seed=0)
    s = r.steps
    assert s["pue"].is_nan().sum() == 0 and s["wue_l_per_kwh"].is_nan().sum() == 0
    assert s["pue"].is_finite().all() and s["wue_l_per_kwh"].is_finite().all()
    np.testing.assert_allclose(s["pue"].to_numpy(), (s["total_kwh"] / s["it_kwh"]).to_numpy(), rtol=1e-12)
    np.testing.assert_allclose(s["wue_l_per_kwh"].to_numpy(), (s["water_l"] / s["it_kwh"]).to_numpy(), rtol=1e-12)
    # IT-energy-weighted per-step ratios give the per-site annual figures (sums first, then the ratio)
    agg = s.group_by("location", maintain_order=True).agg(
        (pl.col("pue") * pl.col("it_kwh")).sum() / pl.col("it_kwh").sum(),
        (pl.col("wue_l_per_kwh") * pl.col("it_kwh")).sum() / pl.col("it_kwh").sum(),
        pl.col("total_kwh").sum(), pl.col("it_kwh").sum(), pl.col("water_l").sum(),
        (((pl.col("econ_frac") >= 1) | (pl.col("air_econ_frac") >= 1)).sum() * 0.25).alias("fc_h"))
    sites = r.sites
    assert sites["location"].to_list() == ["AA", "BB", "CC"] == agg["location"].cast(pl.String).to_list()
    np.testing.assert_allclose(sites["pue"].to_numpy(), agg["pue"].to_numpy(), rtol=1e-12)
    np.testing.assert_allclose(sites["wue_l_per_kwh"].to_numpy(), agg["wue_l_per_kwh"].to_numpy(), rtol=1e-12)
    np.testing.assert_allclose(sites["pue"].to_numpy(), (agg["total_kwh"] / agg["it_kwh"]).to_numpy(), rtol=1e-12)
    np.testing.assert_allclose(sites["free_cooling_h"].to_numpy(), agg["fc_h"].to_numpy())
    assert sites["it_kwh"].sum() == pytest.approx(r.totals["it_kwh"], rel=1e-12)
    assert sites["total_kwh"].sum() == pytest.approx(r.totals["total_kwh"], rel=1e-12)
    # the climates show: AA free-cooled all day (chiller off), CC never; CC's dry cooler uses no water
    aa, bb, cc = sites.rows(named=True)
    assert aa["free_cooling_h"] == 24.0 and cc["free_cooling_h"] == 0.0 and cc["partial_free_cooling_h"] == 0.0
    assert (s.filter(pl.col("location") == "AA")["chiller_kw"] == 0.0).all()
    assert bb["partial_free_cooling_h"] > 0
    assert aa["pue"] < bb["pue"] < cc["pue"]
    assert cc["water_l"] == 0.0 and cc["wue_l_per_kwh"] == 0.0 and aa["wue_l_per_kwh"] > 1.0
    # written with the run
    meta = json.loads((r.to_parquet(tmp_path / "out") / "run.json").read_text())
    assert [row["location"] for row in meta["sites"]] == ["AA", "BB", "CC"]
    assert meta["sites"][0]["pue"] == aa["pue"]


def test_hybrid_sites_report_adiabatic_hours_and_water_only_when_the_pads_are_on(tmp_path):
    """Default heat rejection (hybrid; chiller-2015, no outside air in front of it): a cold site never wets its
    pads (0 L), a site crossing the
    18.33 degC switch-over evaporates only in the steps above it, and the per-step WUE, the step
    ``adiabatic_on`` flags and the per-site ``adiabatic_h`` / WUE agree."""
    n = 96
    temp = np.vstack([np.full(n, 5.0), np.linspace(10.0, 30.0, n), np.full(n, 33.0)])
    wb = np.vstack([np.full(n, 2.0), np.linspace(7.0, 19.0, n), np.full(n, 21.0)])
    b = tiny_bundle(tmp_path, signals={"temp_c": temp, "wetbulb_c": wb}, physics=[DatacenterParams(**CHILLER_2015)] * 3)
    r = sim_core.run(b, "round_robin", seed=0)
    s, sites = r.steps, r.sites
    on = s["adiabatic_on"].to_numpy() > 0.5
    np.testing.assert_array_equal(on, s["temp_c"].to_numpy() > 18.33)
    water = s["water_l"].to_numpy()
    assert (water[~on] == 0.0).all() and (water[on] > 0.0).all()
    np.testing.assert_allclose(s["wue_l_per_kwh"].to_numpy(), water / s["it_kwh"].to_numpy(), rtol=1e-12)
    aa, bb, cc = sites.rows(named=True)
    expect_h = [float((temp[i] > 18.33).sum()) * 0.25 for i in range(3)]
    assert [aa["adiabatic_h"], bb["adiabatic_h"], cc["adiabatic_h"]] == expect_h == [0.0, expect_h[1], 24.0]
    assert 0.0 < expect_h[1] < 24.0
    assert aa["water_l"] == 0.0 and aa["wue_l_per_kwh"] == 0.0 and 0.0 < bb["wue_l_per_kwh"] < cc["wue_l_per_kwh"]
    for row in (bb, cc):
        assert row["wue_l_per_kwh"] == pytest.approx(row["water_l"] / row["it_kwh"], rel=1e-12)


def test_sites_count_outside_air_hours_with_the_chiller_off(tmp_path):
    """The default design: at -12 degC (dry: humidified) outside air carries the whole day with the chiller off;
    at 31 degC / 27 degC wet-bulb (dew point above the envelope) it is refused and the plant runs."""
    n = 96
    temp = np.vstack([np.full(n, -12.0), np.full(n, 31.0)])
    wb = np.vstack([np.full(n, -14.0), np.full(n, 27.0)])
    bundle = tiny_bundle(tmp_path, signals={"temp_c": temp, "wetbulb_c": wb}, physics=[DatacenterParams()] * 2,
                         locations=["AA", "BB"], timezones=["UTC", "UTC"], population_weight=[0.5, 0.5])
    r = sim_core.run(sim_core.load(bundle), "round_robin", seed=0)
    aa, bb = r.sites.rows(named=True)
    assert aa["free_cooling_h"] == aa["outside_air_h"] == 24.0 and aa["partial_free_cooling_h"] == 0.0
    assert bb["outside_air_h"] == 0.0 and bb["free_cooling_h"] == 0.0
    s = r.steps
    assert (s.filter(pl.col("location") == "AA")["chiller_kw"] == 0.0).all()
    assert (s.filter(pl.col("location") == "AA")["air_econ_water_l"] > 0.0).all()  # humidified
    assert aa["pue"] < bb["pue"]
