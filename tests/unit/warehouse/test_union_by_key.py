"""``warehouse.ingest.union_by_key``: what ``concat(parts).unique(pk, keep="last", maintain_order=True)`` gives."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np
import polars as pl
import pytest

from warehouse.ingest import union_by_key

PK = ["location", "ts_utc"]
T0 = datetime(2022, 1, 1, tzinfo=UTC)


def _part(location: str, start_h: int, hours: int, tag: float) -> pl.DataFrame:
    ts = pl.datetime_range(T0 + timedelta(hours=start_h), T0 + timedelta(hours=start_h + hours - 1), "1h",
                           time_zone="UTC", eager=True)
    return pl.DataFrame({"location": [location] * hours, "ts_utc": ts, "v": np.arange(hours) + tag})


def _reference(parts):
    return pl.concat(parts, how="vertical").unique(PK, keep="last", maintain_order=True)


def test_disjoint_parts_are_concatenated_as_they_are():
    parts = [_part("A", 0, 48, 0.0), _part("A", 48, 48, 100.0), _part("B", 0, 48, 200.0)]
    got = union_by_key(parts, PK)
    assert got.equals(_reference(parts)) and got.equals(pl.concat(parts))


def test_overlapping_years_keep_the_later_partitions_row_in_place():
    """A location's two years overlapping by 5 hours at the edge, a third part overlapping both, and
    another location whose time range meets theirs but whose keys never coincide."""
    parts = [_part("A", 0, 30, 0.0), _part("B", 10, 40, 500.0), _part("A", 25, 30, 100.0), _part("A", 20, 40, 200.0)]
    got = union_by_key(parts, PK)
    ref = _reference(parts)
    assert got.equals(ref)
    assert got.height == 60 + 40  # A covers hours 0..59 once, B 10..49
    kept = got.filter((pl.col("location") == "A") & (pl.col("ts_utc") == T0 + timedelta(hours=27)))["v"].to_list()
    assert kept == [207.0]  # the last part holding the key wins


@pytest.mark.parametrize("seed", range(5))
def test_random_overlaps_equal_the_unique_of_the_concatenation(seed):
    rng = np.random.default_rng(seed)
    parts = [_part(str(rng.choice(["A", "B", "C"])), int(rng.integers(0, 200)), int(rng.integers(1, 80)), 1000.0 * k)
             for k in range(12)]
    assert union_by_key(parts, PK).equals(_reference(parts))


def test_an_empty_part_and_a_single_part():
    one = _part("A", 0, 5, 0.0)
    assert union_by_key([one], PK) is one
    assert union_by_key([one.head(0), one, one.head(0)], PK).equals(_reference([one.head(0), one, one.head(0)]))
