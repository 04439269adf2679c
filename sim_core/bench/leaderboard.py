"""The leaderboard: every entry scored on every cell of a declared protocol (:mod:`.protocol`), beside the
offline optimum's bracket of the cell (``sim_core.optimum.bracket``), as one self-describing table
(docs/leaderboard.md).

    rows = leaderboard(protocol, bundles, entries)      # bundles: {(regions, utilisation): bundle dir}
    url = write_rows(rows, protocol, "results/")        # one Parquet object under a results URL

A cell is scored by :func:`score_cell`, a top-level function of plain arguments, so a Dask ``Client`` (or any
``submit(fn, *args)`` executor) scores cells on other processes or machines (``executor=``; docs/distributed.md):
the workers need the bundles, and external entries' files, at the same paths.

What a row holds (:data:`COLUMNS`, each with its unit): the protocol's sha256 and score year, the cell, the seed,
the score bundle's id, the code version (``sim_core.result.optimum_version``: the run version and the optimum's),
the entry (name, kind, source file and its sha256, an agent's training bundle), its drained run's carbon incl.
transfers, cost incl. egress, late tasks and their share, water (:data:`RUN_METRICS`, declared metrics); its saving
against the baseline; the cell's bracket, lower <= OPT <= upper (carbon incl. transfers of the window's work: the
LP's bound and the best schedule the engine ran with no task late), and the share of the baseline-to-optimum gap the
entry closes, ``(B - X) / (B - OPT)`` with OPT unknown inside the bracket: ``(B - X) / (B - lower)`` at least and
``(B - X) / (B - upper)`` at most (NaN when the upper end saves nothing over the baseline, or when no schedule
without a late task was found).
"""

from __future__ import annotations

import io
import json
import math
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

from gridshift import metrics, objectstore

from .entries import Entry, run_entry
from .protocol import Cell, Protocol

FORMAT = 1
METADATA_KEY = b"gridshift.leaderboard"
CARBON = "carbon_incl_transfer_kg"

#: the run metrics a row carries: declared metrics (``gridshift.metrics``), their type, unit and meaning from there
RUN_METRICS = ("carbon_incl_transfer_kg", "cost_incl_transfer_usd", "sla_violations", "sla_violation_rate",
               "water_l")


def _metric_column(name: str) -> tuple[pl.DataType, str]:
    m = metrics.get(name)
    return (pl.Int64 if m.aggregate == metrics.COUNT else pl.Float64), f"{m.doc} ({m.unit})"


def _metric_value(name: str, totals: Mapping) -> int | float:
    return int(totals[name]) if metrics.get(name).aggregate == metrics.COUNT else float(totals[name])


#: every column of a result row: name -> (polars type, meaning with its unit)
COLUMNS: dict[str, tuple[pl.DataType, str]] = {
    "protocol_sha256": (pl.String, "sha256 of the protocol's canonical JSON (in this object's footer)"),
    "protocol_name": (pl.String, "the protocol's name and revision"),
    "train_year": (pl.Int64, "year entries learn or tune on"),
    "score_year": (pl.Int64, "held-out year every entry is scored on"),
    "regions": (pl.String, "the cell's region set, comma-separated"),
    "utilisation": (pl.Float64, "mean utilisation the cell's sites are sized for (export --target-utilization)"),
    "iso_week": (pl.Int64, "ISO week of the window's Monday"),
    "window_start_utc": (pl.String, "first instant of the window, UTC (ISO 8601)"),
    "window_days": (pl.Float64, "days of arrivals in the window (the run then drains)"),
    "seed": (pl.Int64, "workload seed"),
    "bundle_id": (pl.String, "the score bundle's id"),
    "gridshift_version": (pl.String, "code version the row was computed with (the run version and the optimum's)"),
    "entry": (pl.String, "entry name"),
    "entry_kind": (pl.String, "policy, agent or external"),
    "entry_source": (pl.String, "'registry' or the entry file's absolute path"),
    "entry_sha256": (pl.String, "sha256 of the entry file ('' for a registered policy)"),
    "train_bundle_id": (pl.String, "an agent's training bundle id ('' otherwise)"),
    "tasks": (pl.Int64, "tasks that arrived in the window (all run: equal work)"),
    **{name: _metric_column(name) for name in RUN_METRICS},
    "carbon_saving_frac": (pl.Float64, "1 - carbon / the baseline's carbon (same cell and seed)"),
    "cost_saving_frac": (pl.Float64, "1 - cost / the baseline's cost (same cell and seed)"),
    "bracket_lower_kg": (pl.Float64, "the optimum's lower bound, kg CO2eq (LP relaxation)"),
    "bracket_upper_kg": (pl.Float64, "the best schedule found with no task late, kg CO2eq (NaN if none)"),
    "bracket_closed_min_frac": (pl.Float64, "(B - X) / (B - lower): least share of the gap to OPT closed"),
    "bracket_closed_max_frac": (pl.Float64, "(B - X) / (B - upper): most share of the gap to OPT closed"),
}


def _frac(num: float, den: float) -> float:
    return num / den if den > 0 and math.isfinite(den) else float("nan")


def _row(protocol: Protocol, cell: Cell, seed: int, start: str, bundle_id: str, version: str, entry: Entry,
         tot: dict, base: dict, lower: float, upper: float) -> dict:
    x, b = float(tot[CARBON]), float(base[CARBON])
    tasks = int(tot["tasks"])
    return {
        "protocol_sha256": protocol.sha256, "protocol_name": f"{protocol.name}/{protocol.revision}",
        "train_year": protocol.train_year, "score_year": protocol.score_year, "regions": ",".join(cell.regions),
        "utilisation": cell.utilisation, "iso_week": cell.iso_week, "window_start_utc": start,
        "window_days": float(protocol.days), "seed": int(seed), "bundle_id": bundle_id, "gridshift_version": version,
        "entry": entry.name, "entry_kind": entry.kind, "entry_source": entry.source, "entry_sha256": entry.sha256,
        "train_bundle_id": entry.train_bundle_id, "tasks": tasks,
        **{name: _metric_value(name, tot) for name in RUN_METRICS},
        "carbon_saving_frac": _frac(b - x, b),
        "cost_saving_frac": _frac(float(base["cost_incl_transfer_usd"]) - float(tot["cost_incl_transfer_usd"]),
                                  float(base["cost_incl_transfer_usd"])),
        "bracket_lower_kg": lower, "bracket_upper_kg": upper,
        "bracket_closed_min_frac": _frac(b - x, b - lower), "bracket_closed_max_frac": _frac(b - x, b - upper),
    }


_SCENARIOS: dict[str, Any] = {}


def score_cell(bundle_dir: str, protocol: dict, cell: tuple, seed: int, entries: Sequence[Entry],
               on_entry: Callable[[str, float], None] | None = None) -> list[dict]:
    """Every applicable entry's row on one cell and seed (plain arguments: what a Dask worker is sent).
    The baseline runs whether or not it is an entry (the savings and the bracket's share are measured from it)."""
    import sim_core
    from sim_core.optimum import bracket

    from ..result import optimum_version

    p = Protocol.from_dict(protocol)
    c = Cell(tuple(cell[0]), float(cell[1]), int(cell[2]))
    sc = _SCENARIOS.get(bundle_dir)
    if sc is None:
        _SCENARIOS.clear()  # one bundle at a time per process (a year's bundle is large)
        sc = _SCENARIOS[bundle_dir] = sim_core.load(bundle_dir)
    if tuple(sc.locations) != c.regions:
        raise ValueError(f"bundle {bundle_dir} holds sites {list(sc.locations)}, the cell {c.label} names "
                         f"{list(c.regions)}")
    start = p.window_start(c.iso_week)
    tick = on_entry or (lambda _n, _s: None)
    t = time.perf_counter()
    br = bracket(sc, seed=seed, start=start, days=p.days)
    tick("optimum bracket", time.perf_counter() - t)
    lower = float(br.lower.value)
    upper = float(br.upper.value) if br.upper.sla_violations == 0 else float("nan")
    base_entry = Entry(p.baseline, "policy")
    totals: dict[str, dict] = {}
    for e in [base_entry, *[e for e in entries if e.name != p.baseline]]:
        if e is not base_entry and not e.applies_to(c.regions):
            continue
        t = time.perf_counter()
        totals[e.name] = run_entry(e, sc, seed=seed, start=start, days=p.days)
        tick(e.name, time.perf_counter() - t)
    version = optimum_version()
    base = totals[p.baseline]
    by_name = {e.name: e for e in entries}
    return [_row(p, c, seed, start, sc.bundle_id, version, by_name[n], tot, base, lower, upper)
            for n, tot in totals.items() if n in by_name]


def frame(rows: Sequence[Mapping]) -> pl.DataFrame:
    """The rows as a frame of :data:`COLUMNS`, in their order and types."""
    return pl.DataFrame(list(rows), schema={k: t for k, (t, _) in COLUMNS.items()})


def leaderboard(protocol: Protocol, bundles: Mapping[tuple, str], entries: Sequence[Entry], *, executor=None,
                on_cell: Callable[[int, int, Cell, int, float], None] | None = None,
                on_entry: Callable[[str, float], None] | None = None) -> pl.DataFrame:
    """Score ``entries`` on every cell and seed of ``protocol``. ``bundles``: ``(regions tuple, utilisation) ->``
    the score bundle's directory (score year's). ``on_cell(done, total, cell, seed, seconds)`` after each cell;
    ``on_entry(name, seconds)`` after each run (in process only). ``executor``: ``submit(fn, *args)`` (Dask)."""
    jobs = []
    for c in protocol.cells():
        key = (tuple(c.regions), float(c.utilisation))
        if key not in bundles:
            raise ValueError(f"no score bundle for {', '.join(c.regions)} at utilisation {c.utilisation:g}")
        jobs += [(str(bundles[key]), c, s) for s in protocol.seeds]
    pd = protocol.to_dict()
    rows: list[dict] = []
    if executor is None:
        for i, (b, c, s) in enumerate(jobs):
            t = time.perf_counter()
            rows += score_cell(b, pd, tuple(c), s, list(entries), on_entry)
            if on_cell:
                on_cell(i + 1, len(jobs), c, s, time.perf_counter() - t)
    else:
        t0 = time.perf_counter()
        futures = [executor.submit(score_cell, b, pd, tuple(c), s, list(entries)) for b, c, s in jobs]
        for i, ((_, c, s), f) in enumerate(zip(jobs, futures, strict=True)):
            rows += f.result()
            if on_cell:
                on_cell(i + 1, len(jobs), c, s, time.perf_counter() - t0)
    return frame(rows)


def object_relpath(protocol: Protocol, version: str) -> str:
    """The object's path under a results URL (Hive keys named apart from the columns, as run objects')."""
    return f"leaderboard/protocol={protocol.sha256[:16]}/version={version}/leaderboard.parquet"


def encode(rows: pl.DataFrame, protocol: Protocol) -> bytes:
    """The Parquet bytes: the rows, and in the footer the protocol, its sha256 and every column's meaning."""
    table = rows.to_arrow()
    meta = {"format": FORMAT, "protocol": protocol.to_dict(), "protocol_sha256": protocol.sha256,
            "columns": {k: d for k, (_, d) in COLUMNS.items()}}
    table = table.replace_schema_metadata({METADATA_KEY: json.dumps(meta, sort_keys=True)})
    sink = io.BytesIO()
    pq.write_table(table, sink, compression="zstd", compression_level=3, store_schema=True)
    return sink.getvalue()


def write_rows(rows: pl.DataFrame, protocol: Protocol, results_url: str) -> str:
    """Publish the rows (atomically) under ``results_url``; return the object's URL."""
    versions = rows["gridshift_version"].unique().to_list()
    if len(versions) != 1:
        raise ValueError(f"the rows come from {len(versions)} code versions {versions}: score them again with one")
    url = objectstore.parse(results_url).join(object_relpath(protocol, versions[0]))
    objectstore.write_bytes(url, encode(rows, protocol))
    return url


def read_rows(url: str) -> tuple[pl.DataFrame, Protocol]:
    """A leaderboard object back: its rows and its protocol (checked against the rows' hash)."""
    from gridshift.errors import DataError
    from gridshift.limits import RESULT_OBJECT_BYTES

    data = objectstore.read_bytes(url, limit=RESULT_OBJECT_BYTES)
    try:
        table = pq.read_table(pa.BufferReader(data))
    except pa.ArrowException as err:
        raise DataError(f"not a Parquet object ({err})", file=url) from None
    raw = (table.schema.metadata or {}).get(METADATA_KEY)
    if raw is None:
        raise DataError(f"no {METADATA_KEY.decode()!r} footer entry (not a gridshift leaderboard)", file=url)
    try:
        meta = json.loads(raw)
        protocol = Protocol.from_dict(meta["protocol"])
    except (ValueError, KeyError, TypeError) as err:  # JSON, a missing field, a value the protocol refuses
        raise DataError(f"the {METADATA_KEY.decode()!r} footer holds no valid protocol ({type(err).__name__}: "
                        f"{err})", file=url) from None
    rows = pl.from_arrow(table)
    assert isinstance(rows, pl.DataFrame)
    if "protocol_sha256" not in rows.columns:
        raise DataError("no protocol_sha256 column (not a gridshift leaderboard)", file=url, column="protocol_sha256")
    bad = rows.filter(pl.col("protocol_sha256") != protocol.sha256)
    if protocol.sha256 != meta.get("protocol_sha256") or bad.height:
        raise DataError("rows and footer name different protocols", file=url, column="protocol_sha256")
    return rows, protocol


__all__ = ["COLUMNS", "FORMAT", "frame", "leaderboard", "object_relpath", "read_rows", "score_cell", "write_rows"]
