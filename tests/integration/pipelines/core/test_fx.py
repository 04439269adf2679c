"""The FX table that live price sources convert with: every rate they need exists and says where it is from."""

from __future__ import annotations

import re

import polars as pl
import pytest

from gridshift import locations
from pipelines.core import fx
from pipelines.sources import iso as iso_prices


def _converted_markets() -> dict[str, str]:
    """Location → currency for every live price source that converts to USD (ENTSO-E zones, ISOs)."""
    out = {}
    for code in locations.all_codes():
        loc = locations.get(code)
        if loc.entsoe_area or loc.iso_market in iso_prices.SPECS:
            out[code] = loc.price_currency
    return out


def test_every_rate_a_live_price_needs_exists(shared_data):
    markets = _converted_markets()
    assert {c for c in markets.values() if c != "USD"} == {"EUR", "CAD"}
    for code, cur in markets.items():
        iso = locations.get(code).iso_market
        if iso in iso_prices.SPECS:
            assert iso_prices.SPECS[iso].currency == cur  # the adapter's currency is the registry's
        years = sorted(int(p.stem.rsplit("_", 1)[1])
                       for p in (shared_data / "prices" / "standardized" / code).glob("*.csv"))
        assert years, code
        for y in years:
            assert fx.usd_per_unit(cur, y) > 0  # raises MissingRateError naming the file otherwise
    # no hole between the first and last year of each currency (a year in between would fail at ingest)
    t = fx.table().filter(pl.col("currency") != "USD")
    for cur, ys in t.group_by("currency").agg(pl.col("year").sort()).iter_rows():
        assert ys == list(range(ys[0], ys[-1] + 1)), cur


def test_missing_year_is_an_error_naming_the_file():
    with pytest.raises(fx.MissingRateError, match=r"no USD exchange rate for EUR in 2012 .*fx_usd_per_unit\.csv"):
        fx.usd_per_unit("EUR", 2012)


def test_rates_record_source_date_and_that_they_are_unverified_annual_averages():
    t = fx.table().filter(pl.col("currency") != "USD")
    assert t.height == 10
    assert set(t["source_url"]) == {"https://data.ecb.europa.eu/data/datasets/EXR/EXR.A.USD.EUR.SP00.A",
                                    "https://www.bankofcanada.ca/rates/exchange/annual-average-exchange-rates/"}
    assert t["as_of"].str.to_date("%Y-%m-%d").null_count() == 0
    assert set(t["verified"]) == {"no"}
    assert t["note"].str.contains("annual average").all() and t["note"].str.contains("verify").all()
    assert t["basis"].str.contains("annual average").all()


def test_no_invented_precision_and_cad_matches_its_published_rate():
    raw = fx._bytes().decode()
    for line in raw.splitlines()[1:]:
        value = line.split(",")[2]
        assert re.fullmatch(r"\d+\.\d{1,4}", value), line  # at most the 4 decimals the publishers print
    cad = fx.table().filter(pl.col("currency") == "CAD")
    for basis, usd in cad.select("basis", "usd_per_unit").iter_rows():
        usd_cad = float(re.search(r"rate (\d+\.\d+)", basis).group(1))  # Bank of Canada's USD/CAD average
        assert usd == round(1 / usd_cad, 4)
