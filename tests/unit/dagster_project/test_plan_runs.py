"""The runner's batching: runs cover exactly the requested partitions, as key ranges Dagster expands back."""

from __future__ import annotations

import itertools

import dagster as dg

from dagster_project import runner
from dagster_project.partitions import add_years, region_year
from gridshift import locations

CODES = locations.all_codes()
YEARS = list(range(2015, 2027))  # an instance's year keys in the order they were added


def _covered(blocks) -> list[tuple[str, str, int]]:
    return sorted((a, r, y) for b in blocks for a in b.assets for r in b.regions for y in b.years)


def test_a_rectangle_is_one_run_and_its_range_expands_to_exactly_its_keys():
    req = [(t, r, y) for t in ("grid_carbon", "weather") for r in CODES[2:6] for y in (2022, 2023)]
    (block,) = runner.plan_runs(req, YEARS)
    assert block.assets == ("grid_carbon", "weather") and block.regions == tuple(CODES[2:6])
    tags = block.tags()
    with dg.instance_for_test() as instance:
        add_years(instance, YEARS)
        keys = region_year.get_partition_keys_in_range(dg.PartitionKeyRange(
            tags[runner.PARTITION_RANGE_START], tags[runner.PARTITION_RANGE_END]), dynamic_partitions_store=instance)
    assert [str(k) for k in keys] == [str(k) for k in block.keys] and len(keys) == 8


def test_the_whole_mirror_is_four_runs_and_nothing_outside_the_request():
    """Carbon and weather lack FR..CH in the mirror, price lacks GB (what --regions all skips)."""
    gap = set(CODES[CODES.index("FR"):CODES.index("CH") + 1])
    req = [(t, r, y) for r in CODES for y in (2022, 2023) for t in ("grid_carbon", "grid_price", "weather")
           if not (t != "grid_price" and r in gap) and not (t == "grid_price" and r == "GB")]
    blocks = runner.plan_runs(req, YEARS)
    assert len(blocks) == 4 and _covered(blocks) == sorted(req)


def test_scattered_requests_are_covered_exactly_once():
    req = [("grid_carbon", CODES[0], 2023), ("grid_carbon", CODES[2], 2023), ("grid_price", CODES[2], 2022),
           ("grid_carbon", CODES[3], 2022), ("grid_carbon", CODES[3], 2023)]
    blocks = runner.plan_runs(req, YEARS)
    assert _covered(blocks) == sorted(req)
    assert all(b.tags() is None or len(b.keys) > 1 for b in blocks)


def test_progress_ticks_each_cell_once_when_its_last_run_ends():
    cells = [(k, r, y) for k, r, y in itertools.product(("carbon", "price"), CODES[:2], (2023,))]
    ticks: list[str] = []
    on_run = runner._cell_ticker(cells, ticks.append, lambda r, y: f"{r} {y}")
    on_run(runner.Block(("grid_carbon",), tuple(CODES[:2]), (2023,)))
    assert ticks == []
    on_run(runner.Block(("grid_price",), (CODES[1],), (2023,)))
    assert ticks == [f"{CODES[1]} 2023"]
    on_run(runner.Block(("grid_price",), (CODES[0],), (2023,)))
    assert ticks == [f"{CODES[1]} 2023", f"{CODES[0]} 2023"]
