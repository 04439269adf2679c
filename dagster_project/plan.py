"""Which runs materialize a set of grid partitions, without importing Dagster.

The partition years, and the cut of requested ``(asset, region, year)`` partitions into rectangles of
consecutive regions × consecutive years (one run each: ``dagster_project.runner.plan_runs``, whose
docstring says why). Dagster-free so that the CLI can know, before Dagster is even imported, in which
order the runs will ask for the partitions (``warehouse.ingest.prefetch_grid`` prepares them in it).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

from gridshift import locations
from gridshift.sources import SIGNAL_TABLES

FIRST_YEAR = 2015
YEARS = [str(y) for y in range(FIRST_YEAR, datetime.now(UTC).year + 1)]


def _consecutive(items: Sequence, order: Sequence) -> list[list]:
    """``items`` (distinct, all in ``order``) split into runs consecutive in ``order``."""
    pos = {x: i for i, x in enumerate(order)}
    runs: list[list] = []
    for x in sorted(items, key=pos.__getitem__):
        if runs and pos[x] == pos[runs[-1][-1]] + 1:
            runs[-1].append(x)
        else:
            runs.append([x])
    return runs


def rectangles(requests: Sequence[tuple[str, str, int]]
               ) -> list[tuple[tuple[str, ...], tuple[str, ...], tuple[int, ...]]]:
    """``(assets, regions, years)`` of each run :func:`dagster_project.runner.plan_runs` plans, in its order."""
    years_by: dict[str, dict[str, set[int]]] = {}
    for asset, region, year in requests:
        years_by.setdefault(asset, {}).setdefault(region, set()).add(int(year))
    regions_order, years_order = locations.all_codes(), [int(y) for y in YEARS]
    assets_by_rect: dict[tuple[tuple[str, ...], tuple[int, ...]], list[str]] = {}
    for asset, by_region in years_by.items():
        regions_by_years: dict[tuple[int, ...], list[str]] = {}
        for region, ys in by_region.items():
            regions_by_years.setdefault(tuple(sorted(ys)), []).append(region)
        for ys, regions in regions_by_years.items():
            for rrun in _consecutive(regions, regions_order):
                for yrun in _consecutive(ys, years_order):
                    assets_by_rect.setdefault((tuple(rrun), tuple(yrun)), []).append(asset)
    rects = [(tuple(sorted(assets)), regions, years) for (regions, years), assets in assets_by_rect.items()]
    return sorted(rects, key=lambda b: (years_order.index(b[2][0]), regions_order.index(b[1][0]), b[0]))


def ask_order(requests: Sequence[tuple[str, str, int]]) -> list[tuple[str, str, int]]:
    """``requests`` in the order the planned runs' steps ask for them: run by run, asset by asset (a run's
    steps go in asset-name order), each asset's partitions region by region, year by year."""
    return [(asset, r, y) for assets, regions, years in rectangles(requests) for asset in assets
            for r in regions for y in years]


def mirror_ask_order(kinds: Sequence[str], regions: Sequence[str], years: Sequence[int], mirror: Path
                     ) -> list[tuple[str, str, int]]:
    """The ``(signal kind, region, year)`` grid partitions ``mirror`` holds, in the order the runs that ingest
    them ask for them (:func:`ask_order` over their assets): what ``warehouse.ingest.prefetch_grid`` is given."""
    from warehouse.ingest import in_mirror

    kind_of = {SIGNAL_TABLES[k]: k for k in kinds}
    cells = [(SIGNAL_TABLES[k], r, int(y)) for k in kinds for r in regions for y in years
             if in_mirror(k, r, int(y), mirror)]
    return [(kind_of[t], r, y) for t, r, y in ask_order(cells)]


__all__ = ["FIRST_YEAR", "YEARS", "ask_order", "mirror_ask_order", "rectangles"]
