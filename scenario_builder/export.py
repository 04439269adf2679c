"""``scenario_builder export``: ingest what is missing (the Dagster assets, in-process), then build.

What counts as present: a (signal, region, year) partition is valid in the warehouse when at least
95 % of the year's hourly intervals have rows (the ingest's blocking coverage check uses the same
threshold, and an ingest writes a partition completely or not at all). Valid partitions are never
fetched again.

Neighbouring years: interpolation at the year's edges needs the first point of the next year and
the last interval of the previous one, and Open-Meteo's local-year files miss a few UTC hours at one
edge. For every region the export therefore also ingests year-1 and year+1 (all three signals) when
the mirror has them; otherwise the edge is filled by holding the nearest value (flagged, within the
gap limit). Because these neighbours are always taken when available, the bundle depends only on
the mirror's content, not on what happened to be ingested before.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from gridshift.errors import GridshiftError
from gridshift.home import Home
from gridshift.quality import MIN_COVERAGE
from gridshift.sources import SIGNAL_TABLES
from scenario_builder.bundle import BuildParams, BuiltBundle, assemble, write
from warehouse.db import query, read_connection


@dataclass
class IngestPlan:
    """Partitions to materialize: required ones fail the export, optional ones are skipped if absent."""

    required: list[tuple[str, int, list[str]]] = field(default_factory=list)  # (region, year, sources)
    optional: list[tuple[str, int, list[str]]] = field(default_factory=list)
    reference: bool = False
    workload: bool = False

    @property
    def steps(self) -> int:
        return len(self.required) + len(self.optional) + int(self.reference) + int(self.workload)


def _valid_partitions(home: Home, regions: list[str], years: list[int]) -> set[tuple[str, str, int]]:
    """(signal, region, year) with >= 95 % of the year's hours present."""
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


def _reference_present(home: Home, provider: str) -> bool:
    with read_connection(home.warehouse_path) as con:
        e = con.execute("SELECT count(*) FROM egress_price WHERE provider = ?", [provider]).fetchall()[0][0]
        n = con.execute("SELECT count(*) FROM network_path WHERE provider = ?", [provider]).fetchall()[0][0]
    return bool(e and n)


def _workload_present(home: Home, workload: str, year: int, seed: int) -> bool:
    if workload == "none":
        return True
    with read_connection(home.warehouse_path) as con:
        exists = con.execute("SELECT count(*) FROM information_schema.tables WHERE table_name = 'workload_tasks'"
                             ).fetchall()[0][0]
        if not exists:
            return False
        n = con.execute("SELECT count(*) FROM workload_tasks WHERE workload = ? AND year = ?",
                        [workload, year]).fetchall()[0][0]
        if not n:
            return False
        runs = con.execute("SELECT count(*) FROM information_schema.tables WHERE table_name = 'workload_runs'"
                           ).fetchall()[0][0]
        row = con.execute("SELECT params_json FROM workload_runs WHERE workload = ? AND year = ?",
                          [workload, year]).fetchall() if runs else []
        row = row[0] if row else None
    if row is not None:  # stored with another seed: derive again with the requested one
        try:
            stored = json.loads(row[0]).get("seed")
        except (ValueError, AttributeError):
            stored = None
        if stored is not None and stored != seed:
            return False
    return True


def in_mirror(kind: str, region: str, year: int, mirror: Path | None) -> bool:
    """Whether the mirror holds the file of this partition (checked without reading it)."""
    from scenario_builder.materialize import available_in_mirror

    return available_in_mirror(kind, region, year, mirror)


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
    p.reference = not _reference_present(home, params.provider)
    p.workload = not _workload_present(home, params.workload, params.year, params.seed)
    return p


def ensure_inputs(params: BuildParams, home: Home, *, mirror: Path | None,
                  on_progress: Callable[[str], None] | None = None, the_plan: IngestPlan | None = None
                  ) -> list:
    """Materialize the missing partitions (Dagster assets, in-process). Raises if a required one fails."""
    from scenario_builder.materialize import materialize  # imports the Dagster definitions

    p = the_plan or plan(params, home, mirror)
    tick = on_progress or (lambda _d: None)
    outcomes = []
    if p.reference:
        outcomes += materialize(regions=[], years=[], sources=["network"], home=home, mirror=mirror)
        tick("reference tables")
    for optional, items in ((False, p.required), (True, p.optional)):
        for region, year, sources in items:
            outcomes += materialize(regions=[region], years=[year], sources=sources, home=home, mirror=mirror,
                                    skip_missing=optional)
            tick(f"{region} {year} {','.join(sources)}")
    failed = [o for o in outcomes if not o.ok and (o.year == params.year or o.year is None)]
    if failed:
        lines = "\n  ".join(f"{o.asset} {o.region or ''} {o.year or ''}: {o.error}" for o in failed)
        raise GridshiftError(f"ingest of required inputs failed:\n  {lines}")
    if p.workload:
        _ingest_workload(params, home, mirror)
        tick(f"workload {params.workload} {params.year}")
    return outcomes


def _ingest_workload(params: BuildParams, home: Home, mirror: Path | None) -> None:
    try:
        from warehouse.ingest_workload import ingest_workload
    except ImportError as exc:
        raise GridshiftError(
            f"workload {params.workload!r} {params.year} is not in the warehouse and the workload pipeline "
            f"(warehouse.ingest_workload) is not available ({exc}); use --workload none for a bundle without tasks"
        ) from None
    ingest_workload(params.workload, params.year, home=home, mirror=mirror, seed=params.seed)


def export(params: BuildParams, *, home: Home, mirror: Path | None = None, out: Path | None = None,
           on_progress: Callable[[str], None] | None = None, on_plan: Callable[[IngestPlan], None] | None = None,
           ) -> BuiltBundle:
    """Ingest what is missing, then assemble and write the bundle; returns its path, id and quality."""
    home.ensure()
    p = plan(params, home, mirror)
    if on_plan:
        on_plan(p)
    if p.steps:
        ensure_inputs(params, home, mirror=mirror, on_progress=on_progress, the_plan=p)
    return write(assemble(params, home), out if out is not None else home.bundles_dir)
