"""Partition plausibility (pipelines.core.plausibility) at each threshold's exact value: the floor itself is
plausible, just below it is refused by name (file, column, rows, values) or, where overridable, recorded."""

from __future__ import annotations

import polars as pl
import pytest

from gridshift import quality
from gridshift.errors import DataError
from pipelines.core.plausibility import OVERRIDABLE, check


def carbon(lca: list[float], direct: list[float]) -> pl.DataFrame:
    return pl.DataFrame({"carbon_lca_g_per_kwh": lca, "carbon_direct_g_per_kwh": direct})


def test_price_mean_at_the_floor_passes_below_is_refused_or_recorded():
    floor = quality.MIN_MEAN_PRICE_USD_PER_MWH
    assert check("price", pl.DataFrame({"price_usd_per_mwh": [floor - 0.5, floor + 0.5]}), file="p.csv") == []
    low = pl.DataFrame({"price_usd_per_mwh": [None, 0.2, 0.4]})
    msg = r"mean day-ahead price \(USD/MWh\) is 0.3, below the plausible floor of 1"
    with pytest.raises(DataError, match=msg) as e:
        check("price", low, file="p.csv", row_base=5)
    assert (e.value.file, e.value.column) == ("p.csv", "price_usd_per_mwh")
    assert e.value.rows == [6, 7] and e.value.values == [0.2, 0.4]  # nulls skipped, file rows = index + row_base
    assert check("price", low, file="p.csv", allow_implausible=True) == ["mean_price"]
    assert check("price", pl.DataFrame({"price_usd_per_mwh": [None]}, schema={"price_usd_per_mwh": pl.Float64}),
                 file="p.csv") == []  # no values, no mean: nothing to judge


def test_sample_quotes_the_first_ten_rows():
    with pytest.raises(DataError) as e:
        check("price", pl.DataFrame({"price_usd_per_mwh": [0.1] * 12}), file="p.csv")
    assert e.value.rows == list(range(2, 12))  # default row_base 2: a header line, 1-based


def test_lca_equal_to_direct_passes_below_is_refused():
    assert check("carbon", carbon([300.0, 20.0], [300.0, 10.0]), file="c.csv") == []
    with pytest.raises(DataError, match=r"1 row\(s\) with a life-cycle intensity below the direct one") as e:
        check("carbon", carbon([300.0, 9.0, None], [300.0, 10.0, 5.0]), file="c.csv", row_base=2)
    assert e.value.column == "carbon_lca_g_per_kwh" and e.value.rows == [3]
    assert e.value.values == ["9.0 < direct 10.0"]
    # the swap is never overridable
    with pytest.raises(DataError):
        check("carbon", carbon([9.0], [10.0]), file="c.csv", allow_implausible=True)


def test_carbon_floors_at_their_values():
    lca, direct = quality.MIN_MEAN_CARBON_LCA_G_PER_KWH, quality.MIN_MEAN_CARBON_DIRECT_G_PER_KWH
    assert check("carbon", carbon([lca, lca], [direct, direct]), file="c.csv") == []
    with pytest.raises(DataError, match="life-cycle carbon intensity"):
        check("carbon", carbon([lca - 0.01], [direct]), file="c.csv")
    with pytest.raises(DataError, match="direct carbon intensity") as e:
        check("carbon", carbon([lca], [direct - 0.01]), file="c.csv")
    assert e.value.column == "carbon_direct_g_per_kwh"
    assert check("carbon", carbon([0.5], [0.1]), file="c.csv", allow_implausible=True) == [
        "mean_carbon_lca", "mean_carbon_direct"]
    assert set(OVERRIDABLE) == {"mean_carbon_lca", "mean_carbon_direct", "mean_price"}


def test_humidity_peak_and_mean_temperature_at_their_limits():
    ok = pl.DataFrame({"rh_pct": [1.0, quality.MIN_MAX_RH_PCT], "temp_c": [quality.MAX_MEAN_TEMP_C] * 2})
    assert check("weather", ok, file="w.csv") == []
    with pytest.raises(DataError, match="relative humidity never exceeds 4.9 %") as e:
        check("weather", ok.with_columns(rh_pct=pl.Series([0.5, 4.9])), file="w.csv", allow_implausible=True)
    assert e.value.column == "rh_pct" and e.value.rows == [2, 3]
    with pytest.raises(DataError, match=r"mean temperature is 40.1 °C") as e:
        check("weather", ok.with_columns(temp_c=pl.Series([40.0, 40.2])), file="w.csv", row_base=10)
    assert e.value.column == "temp_c" and e.value.rows == [10, 11] and e.value.values == [40.0, 40.2]
    empty = pl.DataFrame({"rh_pct": [None], "temp_c": [None]}, schema={"rh_pct": pl.Float64, "temp_c": pl.Float64})
    assert check("weather", empty, file="w.csv") == []


def test_unknown_kind_is_refused():
    with pytest.raises(ValueError, match="no plausibility checks for signal kind 'fx'"):
        check("fx", pl.DataFrame(), file="x.csv")
