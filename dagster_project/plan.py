"""Which runs materialize a set of grid partitions: plain Python over the partition keys.

The years the sources can provide, and the cut of requested ``(asset, region, year)`` partitions into rectangles of
consecutive regions × consecutive years (one run each: ``dagster_project.runner.plan_runs``, whose
docstring says why).
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path

from gridshift import locations
from gridshift.sources import SIGNAL_TABLES
from warehouse.ingest import in_mirror

#: The first year any grid source publishes; with the current UTC year, the span a requested year must lie in.
FIRST_YEAR = 2015


def source_years() -> list[int]:
    """The years the sources can provide: ``FIRST_YEAR`` to the current UTC year."""
    return list(range(FIRST_YEAR, datetime.now(UTC).year + 1))


def mirror_years(mirror: Path | None) -> list[int]:
    """The years of :func:`source_years` for which ``mirror`` holds a file of any grid kind and region (checked
    without reading one): the years the UI offers before any live ingest."""
    codes = locations.all_codes()
    return [y for y in source_years() if any(in_mirror(k, c, y, mirror) for k in SIGNAL_TABLES for c in codes)]


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


def rectangles(requests: Sequence[tuple[str, str, int]], years_order: Sequence[int]
               ) -> list[tuple[tuple[str, ...], tuple[str, ...], tuple[int, ...]]]:
    """``(assets, regions, years)`` of each run :func:`dagster_project.runner.plan_runs` plans, in its order;
    years are consecutive in ``years_order`` (the instance's year keys, every requested year among them)."""
    years_by: dict[str, dict[str, set[int]]] = {}
    for asset, region, year in requests:
        years_by.setdefault(asset, {}).setdefault(region, set()).add(int(year))
    regions_order, years_order = locations.all_codes(), [int(y) for y in years_order]
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
    return sorted(rects, key=lambda b: (b[2][0], regions_order.index(b[1][0]), b[0]))  # earlier years first


__all__ = ["FIRST_YEAR", "mirror_years", "rectangles", "source_years"]
