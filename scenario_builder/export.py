"""What a bundle needs from the warehouse (``plan``), and building it from there (``build``).

What counts as present: a (signal, region, year) partition is valid in the warehouse when at least
``MIN_COVERAGE`` of the year's hourly intervals have rows (the ingest's coverage rule), and an ingest
writes a partition completely or not at all. Valid partitions are never fetched again.

Neighbouring years: interpolation at the year's edges needs the first point of the next year and
the last interval of the previous one, and Open-Meteo's local-year files miss a few UTC hours at one
edge. The plan therefore also asks for year-1 and year+1 (all three signals) when the mirror has
them; otherwise the edge is filled by holding the nearest value (flagged, within the gap limit).
Because these neighbours are always taken when available, the bundle depends only on the mirror's
content, not on what happened to be ingested before.

Orchestration (materializing what the plan lists, then the ``scenario_bundle`` asset) is
``dagster_project.runner.export_bundle``; this module only reads the warehouse.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

import duckdb

from gridshift.errors import GridshiftError
from gridshift.home import Home
from gridshift.quality import MIN_COVERAGE
from gridshift.sources import SIGNAL_TABLES
from scenario_builder import bundle as bundle_mod
from scenario_builder.bundle import BuildParams, BuiltBundle, workload_load_factor
from warehouse.db import query, read_connection
from warehouse.ingest import in_mirror


@dataclass
class IngestPlan:
    """Partitions to materialize: required ones fail the export, optional ones are skipped if absent."""

    required: list[tuple[str, int, list[str]]] = field(default_factory=list)  # (region, year, signal kinds)
    optional: list[tuple[str, int, list[str]]] = field(default_factory=list)
    reference: bool = False
    workload: bool = False

    @property
    def steps(self) -> int:
        return len(self.required) + len(self.optional) + int(self.reference) + int(self.workload)

    def describe(self, params: BuildParams) -> list[str]:
        """One line per missing input, in the words of the assets that provide it."""
        lines = [f"{SIGNAL_TABLES[k]} {r} {y}" for r, y, kinds in self.required + self.optional for k in kinds]
        if self.reference:
            lines.append(f"locations, egress_price, network_path ({params.provider})")
        if self.workload:
            lf = f", load factor {params.load_factor:g}" if params.load_factor != 1.0 else ""
            lines.append(f"workload_tasks {params.workload} {params.year} (seed {params.seed}{lf})")
        return lines


def _valid_partitions(home: Home, regions: list[str], years: list[int]) -> set[tuple[str, str, int]]:
    """(signal, region, year) with at least MIN_COVERAGE of the year's hours present."""
    out: set[tuple[str, str, int]] = set()
    with read_connection(home.warehouse_path) as con:
        for kind, table in SIGNAL_TABLES.items():
            df = query(
                con,
                f'SELECT location, CAST(year(ts_utc) AS BIGINT) AS y, count(*) AS n FROM "{table}" '
                "WHERE location IN (SELECT unnest($r)) AND year(ts_utc) IN (SELECT unnest($y)) GROUP BY 1, 2",
                {"r": regions, "y": years},
            )
            for loc, y, n in df.iter_rows():
                hours = (datetime(y + 1, 1, 1, tzinfo=UTC) - datetime(y, 1, 1, tzinfo=UTC)).total_seconds() / 3600
                if n >= MIN_COVERAGE * hours:
                    out.add((kind, loc, int(y)))
    return out


def _reference_present(home: Home, provider: str, regions: list[str]) -> bool:
    """Locations, the provider's egress prices, and a path for every ordered pair of distinct regions
    (a ``network_path`` of an earlier layout, keyed by macro-region, counts as absent)."""
    with read_connection(home.warehouse_path) as con:
        e = con.execute("SELECT count(*) FROM egress_price WHERE provider = ?", [provider]).fetchall()[0][0]
        try:
            n = con.execute("SELECT count(*) FROM network_path WHERE provider = $1 AND src_location IN "
                            "(SELECT unnest($2)) AND dst_location IN (SELECT unnest($2)) "
                            "AND src_location <> dst_location", [provider, regions]).fetchall()[0][0]
        except duckdb.BinderException:  # the macro-pair layout of earlier versions
            n = -1
        loc = con.execute("SELECT count(*) FROM locations").fetchall()[0][0]
    k = len(set(regions))
    return bool(e and loc) and n == k * (k - 1)


def _workload_present(home: Home, workload: str, year: int, seed: int, load_factor: float = 1.0) -> bool:
    """Whether ``workload_tasks`` holds (workload, year) derived with ``seed`` (and, for the synthetic workload, at
    ``load_factor``, the bundle's scale)."""
    if workload == "none":
        return True
    with read_connection(home.warehouse_path) as con:
        n = con.execute("SELECT count(*) FROM workload_tasks WHERE workload = ? AND year = ?",
                        [workload, year]).fetchall()[0][0]
        row = con.execute("SELECT params_json FROM workload_runs WHERE workload = ? AND year = ?",
                          [workload, year]).fetchall()
    if not n:
        return False
    if row:  # stored with another seed (or scale): derive again with the requested one
        try:
            derive = json.loads(row[0][0])
            stored = derive.get("seed")
        except (ValueError, AttributeError):
            derive, stored = None, None
        if stored is not None and stored != seed:
            return False
        lf = workload_load_factor(derive)
        if workload == "synthetic" and lf is not None and lf != load_factor:
            return False
    return True


def plan(params: BuildParams, home: Home, mirror: Path | None = None) -> IngestPlan:
    """What must be ingested before ``params`` can be built from ``home``'s warehouse."""
    regions = list(params.regions)
    years = [params.year - 1, params.year, params.year + 1]
    valid = _valid_partitions(home, regions, years)
    p = IngestPlan()
    for r in regions:
        for y in years:
            missing = [k for k in SIGNAL_TABLES if (k, r, y) not in valid]
            if y != params.year:  # neighbours: only what the mirror can supply
                missing = [k for k in missing if in_mirror(k, r, y, mirror)]
            if missing:
                (p.required if y == params.year else p.optional).append((r, y, missing))
    p.reference = not _reference_present(home, params.provider, params.regions)
    p.workload = not _workload_present(home, params.workload, params.year, params.seed, params.load_factor)
    return p


class MissingInputs(GridshiftError):
    """The warehouse lacks inputs of the bundle; the message lists them."""


def build(params: BuildParams, home: Home, out: Path | None = None, *, mirror: Path | None = None) -> BuiltBundle:
    """Assemble the bundle from the warehouse and write it; refuse, listing them, if inputs are missing
    (``scenario_builder export`` materializes them first)."""
    home.ensure()
    missing = plan(params, home, mirror)
    if missing.steps:
        raise MissingInputs("the warehouse lacks inputs of this bundle: " + "; ".join(missing.describe(params))
                            + ". Materialize them first (scenario_builder export does, or backfill those "
                            "partitions in the UI)")
    return bundle_mod.build(params, home, out)
