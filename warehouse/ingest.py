"""Ingest: fetch → parse → check the partition → validate → land raw → write.

These are the functions the Dagster assets call (and, through them, the CLI). Each one either
writes a whole partition together with the raw file's lineage row, or writes nothing: every check
runs before the warehouse is opened, and the write is one transaction. Sources are chosen by
``pipelines.sources.registry`` (mirror first, then live); nothing here knows a source by name.

A grid file is refused (``DataError`` naming the file, column, rows and values) unless it belongs
to its partition — its own timestamps in the partition's UTC year, its own zone ids the location's
(the source's parser checks these) — is plausible as a whole (``pipelines.core.plausibility``: a
zone's mean carbon intensity, a market's mean price, humidity in percent, life-cycle ≥ direct) and
covers at least ``gridshift.quality.MIN_COVERAGE`` of the year's intervals. ``allow_partial=True``
ingests a file below the minimum anyway, ``allow_implausible=True`` one that fails an overridable
plausibility check; every ingest records its coverage in ``partition_quality`` (``partial`` and
``plausibility_overridden`` say which were let through, and past what).
Re-ingesting identical data writes nothing (``warehouse.load.write``).

Many grid partitions at once (a backfill, ``scenario_builder ingest --regions all``): :func:`prepare_grid`
checks each partition exactly as :func:`ingest_grid` does and sets the refused ones aside by name, then
:func:`write_grid` writes every accepted partition in one transaction — each partition whole, a refused
one not at all.
"""
from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterator, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import timedelta
from pathlib import Path

import polars as pl

from gridshift import locations
from gridshift.errors import DataError, StorageError, storage_cause, storage_error
from gridshift.home import Home
from gridshift.quality import MAX_GAP, MIN_COVERAGE
from gridshift.sources import SIGNAL_TABLES
from pipelines.core import http, plausibility
from pipelines.core.raw import RawFile, land_many
from pipelines.core.source import GridSource, year_bounds
from pipelines.sources import azure_latency, egress, network, persico, registry
from warehouse.load import validate, validate_many, write
from warehouse.schemas import TABLES

#: The grid sources of each signal kind, in the order they are asked (names).
SIGNAL_SOURCES: dict[str, tuple[str, ...]] = {k: tuple(s.name for s in registry.grid(k)) for k in SIGNAL_TABLES}


@dataclass
class IngestReport:
    """What one partition ingest did: rows written, coverage of the UTC year, estimated share."""

    table: str
    location: str | None
    year: int | None
    rows: int
    raw_sha256: str
    raw_uri: str
    expected: int | None = None
    present: int | None = None
    estimated_share: float | None = None
    source: str | None = None
    allowed_partial: bool = False  # coverage below MIN_COVERAGE, ingested on request
    overridden: list[str] = field(default_factory=list)  # plausibility checks failed, ingested on request
    extra: dict = field(default_factory=dict)

    @property
    def coverage(self) -> float | None:
        if not self.expected:
            return None
        return self.present / self.expected


@contextlib.contextmanager
def storage_errors(home: Home) -> Iterator[None]:
    """A write inside the block that fails for want of storage — the disk full, a file over the process's
    file-size limit, a read-only home (:func:`gridshift.errors.storage_cause`) — raises a
    :class:`gridshift.errors.StorageError` naming the home, the cause and the library's own message;
    other errors pass unchanged. The writers undo their own part first (atomic files, one transaction),
    so the message can say that nothing was written."""
    try:
        yield
    except Exception as exc:
        err = storage_error(exc, home.root, note="; nothing was written (the warehouse is as it was)")
        if err is None:
            raise
        raise err from exc


def writable_home(home: Home) -> Home:
    """``home``, created if needed, once it has taken a file: a read-only or unwritable home is refused up
    front, by name (:class:`gridshift.errors.StorageError`), not deep inside a storage library that
    cannot open its file."""
    try:
        home.ensure()
        with tempfile.TemporaryFile(dir=home.root):
            pass
    except OSError as exc:
        cause = storage_cause(exc) or (exc.strerror or type(exc).__name__).lower()
        raise StorageError(f"cannot write to the gridshift home {home.root}: {cause}; nothing was written") from exc
    return home


@contextlib.contextmanager
def landing(home: Home) -> Iterator[list[Path]]:
    """A write of raw files and warehouse rows into ``home`` (created if needed): yields the list the caller
    adds each raw file it lands to; on any failure inside, those files are removed again, so nothing is
    half-written, and a failure for want of storage is a :class:`gridshift.errors.StorageError`
    (:func:`storage_errors`)."""
    created: list[Path] = []
    with storage_errors(home):
        home.ensure()
        try:
            yield created
        except BaseException:
            for path in created:
                with contextlib.suppress(FileNotFoundError):
                    path.chmod(0o644)
                    path.unlink()
            raise


def _commit(home: Home, raw: RawFile | list[RawFile], frames: dict[str, pl.DataFrame], *,
            rebuild_stale: tuple[str, ...] = ()) -> None:
    """Land the raw bytes, then write rows + lineage in one transaction (tables in ``rebuild_stale``
    rebuilt in it when their stored layout is an earlier one); undo the landings on failure (a failure
    for want of storage raises :class:`gridshift.errors.StorageError`: :func:`storage_errors`)."""
    raws = raw if isinstance(raw, list) else [raw]
    with landing(home) as created:
        rows, paths = land_many(home.root, raws)
        created += paths
        lineage = rows.unique("sha256", keep="first", maintain_order=True)
        write(home.warehouse_path, {"raw_files": validate("raw_files", lineage), **frames}, rebuild_stale=rebuild_stale)


def in_mirror(kind: str, location: str, year: int, mirror: Path | None) -> bool:
    """Whether a mirror holds a file of this grid partition (checked without reading it)."""
    return registry.in_mirror(kind, location, year, mirror)


@dataclass
class PreparedGrid:
    """One grid partition read, parsed, validated and measured, not yet written."""

    kind: str
    location: str
    year: int
    raw: RawFile
    frame: pl.DataFrame  # validated against the table's model
    report: IngestReport
    quality: pl.DataFrame  # its partition_quality row, validated


@dataclass
class GridBatch:
    """The partitions of one signal kind that are ready to write, and those refused (with the error each
    raised: a ``DataError`` naming file, column, rows and values, or a ``SourceUnavailableError``)."""

    kind: str
    ready: list[PreparedGrid] = field(default_factory=list)
    refused: dict[tuple[str, int], Exception] = field(default_factory=dict)


#: Threads that parse a batch's files (polars releases the GIL; more than two cores gain little here).
PARSE_THREADS = max(1, min(2, os.cpu_count() or 1))


def prepare_grid(
    kind: str, partitions: Sequence[tuple[str, int]], *, home: Home, mirror: Path | None,
    max_gap: timedelta = MAX_GAP, live: bool = False, allow_partial: bool = False,
    threads: int = PARSE_THREADS, allow_implausible: bool = False,
) -> GridBatch:
    """Fetch, parse and check ``(location, year)`` partitions of one signal kind; write nothing.

    Each partition passes exactly the checks :func:`ingest_grid` applies (its source's parser, the
    table's Pandera model, the coverage minimum), and a partition that fails one is refused with the
    same error; the others are unaffected. The files are read in order (a live source is asked one
    partition at a time) and parsed by ``threads`` threads; the Pandera model runs once over the union
    of the parsed partitions and again per partition only when that fails
    (:func:`warehouse.load.validate_many`), so every error still names its own file.

    A live file that is refused here is removed from the HTTP cache (``pipelines.core.http.forget``), so a
    rerun after the publisher fixed it downloads it again instead of replaying the refused answer.
    """
    batch = GridBatch(kind)
    parts = list(dict.fromkeys((loc, int(y)) for loc, y in partitions))
    fetched: list[tuple[str, int, RawFile]] = []
    for loc, year in parts:
        try:
            fetched.append((loc, year, registry.fetch(kind, locations.get(loc), year, mirror=mirror, live=live,
                                                      home=home)))
        except Exception as err:  # noqa: BLE001 - refused by name; the other partitions go on
            batch.refused[(loc, year)] = err
    ready, refused = _prepare_fetched(kind, fetched, max_gap=max_gap, allow_partial=allow_partial, threads=threads,
                                      allow_implausible=allow_implausible)
    # a refused answer never stays in the HTTP cache: the next run asks the server again
    http.forget(home, [k for loc, year, raw in fetched if (loc, year) in refused for k in raw.cache_keys])
    batch.ready += ready
    batch.refused.update(refused)
    order = {p: n for n, p in enumerate(parts)}
    batch.ready.sort(key=lambda p: order[(p.location, p.year)])
    batch.refused = dict(sorted(batch.refused.items(), key=lambda kv: order[kv[0]]))
    return batch


def _prepare_fetched(
    kind: str, fetched: Sequence[tuple[str, int, RawFile]], *, max_gap: timedelta, allow_partial: bool, threads: int,
    allow_implausible: bool = False,
) -> tuple[list[PreparedGrid], dict[tuple[str, int], Exception]]:
    """Parse, validate and measure fetched partitions: (the accepted ones, the refused ones with their error)."""
    ready: list[PreparedGrid] = []
    refused: dict[tuple[str, int], Exception] = {}
    if not fetched:
        return ready, refused

    def parse(item: tuple[str, int, RawFile]) -> pl.DataFrame | Exception:
        loc, year, raw = item
        try:
            return registry.for_raw(raw).parse(raw, locations.get(loc), year, max_gap=max_gap)
        except Exception as err:  # noqa: BLE001 - refused by name; the other partitions go on
            return err

    if threads > 1 and len(fetched) > 1:
        with ThreadPoolExecutor(threads, thread_name_prefix="gridshift-parse") as pool:
            parsed = list(pool.map(parse, fetched))
    else:
        parsed = [parse(item) for item in fetched]
    ok = []
    for (loc, year, raw), df in zip(fetched, parsed, strict=True):
        if isinstance(df, Exception):
            refused[(loc, year)] = df
        else:
            ok.append((loc, year, raw, df))
    by_table: dict[str, list[int]] = {}
    for i, (_loc, _year, raw, _df) in enumerate(ok):
        by_table.setdefault(registry.for_raw(raw).table, []).append(i)
    checked: dict[int, pl.DataFrame | DataError] = {}
    for table, idx in by_table.items():
        items = [(ok[i][3], ok[i][2].uri, registry.for_raw(ok[i][2]).row_base) for i in idx]
        checked.update(zip(idx, validate_many(table, items), strict=True))
    covered = []
    for i, (loc, year, raw, _df) in enumerate(ok):
        df = checked[i]
        if isinstance(df, DataError):
            refused[(loc, year)] = df
            continue
        try:
            overridden = plausibility.check(kind, df, file=raw.uri, row_base=registry.for_raw(raw).row_base,
                                            allow_implausible=allow_implausible, lon_deg=locations.get(loc).lon)
            report = _covered(kind, loc, year, df, raw, allow_partial=allow_partial)
            report.overridden = overridden
            covered.append((loc, year, raw, df, report))
        except DataError as err:
            refused[(loc, year)] = err
    quality = validate_many("partition_quality", [(quality_row(kind, c[4]), None, 0) for c in covered])
    for (loc, year, raw, df, report), q in zip(covered, quality, strict=True):
        if isinstance(q, DataError):
            refused[(loc, year)] = q
        else:
            ready.append(PreparedGrid(kind, loc, year, raw, df, report, q))
    return ready, refused


def _covered(kind: str, location: str, year: int, df: pl.DataFrame, raw: RawFile, *, allow_partial: bool
             ) -> IngestReport:
    """The partition's report; a DataError when it covers less than ``MIN_COVERAGE`` of the UTC year
    (unless ``allow_partial``: then it is marked as allowed)."""
    src = registry.for_raw(raw)
    report = partition_report(kind, location, year, df, raw, src)
    if report.coverage < MIN_COVERAGE:
        if not allow_partial:
            lo, hi = year_bounds(year)
            inside = df.filter((pl.col("ts_utc") >= lo) & (pl.col("ts_utc") < hi))["ts_utc"]
            span = f"{inside.min()} .. {inside.max()}" if inside.len() else "none"
            raise DataError(
                f"{src.table} {location} {year}: the file covers {report.coverage:.2%} of the UTC year "
                f"({report.present} of {report.expected} intervals; rows in the year: {span}), below the "
                f"minimum of {MIN_COVERAGE:.0%}; nothing was written. To ingest it anyway, pass "
                "allow_partial=True (--allow-partial): the partition is then recorded as partial in partition_quality",
                file=raw.uri, column=src.time_column,
            )
        report.allowed_partial = True
    return report


def write_grid(home: Home, ready: Sequence[PreparedGrid]) -> None:
    """Write prepared partitions — rows, raw-file lineage and ``partition_quality`` — in ONE transaction.

    Every partition here passed all its checks, so each is written whole or (when the database itself
    fails: disk full, a lock) the whole batch is rolled back and nothing is written: never part of a
    partition. The result equals writing the partitions one after another in the given order: a key two
    partitions share (neighbouring years overlapping at a year's edge) holds the later one's row, and a
    raw file keeps its first landing. Identical data already stored writes nothing
    (:func:`warehouse.load.write`).
    """
    if not ready:
        return
    tables: dict[str, list[pl.DataFrame]] = {}
    for p in ready:
        tables.setdefault(p.report.table, []).append(p.frame)
    frames = {name: union_by_key(parts, list(TABLES[name].primary_key)) for name, parts in tables.items()}
    quality = pl.concat([p.quality for p in ready], how="vertical")
    _commit(home, [p.raw for p in ready], {**frames, "partition_quality": quality})


def _key_bounds(df: pl.DataFrame, pk: Sequence[str]) -> tuple | None:
    """(min, max) of each key column of ``df``; None when it has no rows."""
    if not df.height:
        return None
    row = df.select([pl.col(c).min() for c in pk] + [pl.col(c).max().alias(f"_max_{c}") for c in pk]).row(0)
    return tuple(zip(row[:len(pk)], row[len(pk):], strict=True))


def _may_share_keys(a: tuple | None, b: tuple | None) -> bool:
    """Whether two parts' keys can coincide: their ranges meet in every key column."""
    if a is None or b is None:
        return False
    return all(lo1 <= hi2 and lo2 <= hi1 for (lo1, hi1), (lo2, hi2) in zip(a, b, strict=True))


def union_by_key(parts: Sequence[pl.DataFrame], pk: Sequence[str]) -> pl.DataFrame:
    """``concat(parts).unique(pk, keep="last", maintain_order=True)`` for parts each unique on ``pk``
    (validated partitions), without hashing every row of the union.

    A row is dropped exactly when a later part holds its key, and two parts can hold a common key only
    when their value ranges meet in every key column (each part's min and max), so a part is compared
    only with the later parts it meets (neighbouring years of one location overlapping at the year's
    edge); partitions of different locations, or of years that do not overlap — the whole mirror — are
    concatenated as they are.
    """
    if len(parts) == 1:
        return parts[0]
    pk = list(pk)
    bounds = [_key_bounds(df, pk) for df in parts]
    out = []
    for i, df in enumerate(parts):
        later = [parts[j].select(pk) for j in range(i + 1, len(parts)) if _may_share_keys(bounds[i], bounds[j])]
        if later:
            df = df.join(pl.concat(later, how="vertical").unique(), on=pk, how="anti",
                         maintain_order="left")
        out.append(df)
    return pl.concat(out, how="vertical")


def ingest_grid(
    kind: str, location: str, year: int, *, home: Home, mirror: Path | None,
    max_gap: timedelta = MAX_GAP, live: bool = False, allow_partial: bool = False,
    allow_implausible: bool = False,
) -> IngestReport:
    """Ingest one (signal, location, year) partition into its canonical table (mirror → live).

    Refuses (DataError, nothing written) a file that is not the partition's or covers less than
    ``MIN_COVERAGE`` of the UTC year, unless ``allow_partial``, or fails a plausibility check
    (:mod:`pipelines.core.plausibility`), unless the check is overridable and ``allow_implausible``
    (see the module docstring).
    """
    batch = prepare_grid(kind, [(location, year)], home=home, mirror=mirror, max_gap=max_gap, live=live,
                         allow_partial=allow_partial, threads=1, allow_implausible=allow_implausible)
    if batch.refused:
        raise batch.refused[(location, year)]
    write_grid(home, batch.ready)
    return batch.ready[0].report


def partition_report(kind: str, location: str, year: int, df: pl.DataFrame, raw: RawFile,
                     src: GridSource) -> IngestReport:
    """Rows, coverage of the UTC year (in the source's intervals, or the finest price interval) and
    estimated share of one parsed partition."""
    lo, hi = year_bounds(year)
    in_year = df.filter((pl.col("ts_utc") >= lo) & (pl.col("ts_utc") < hi))
    step = src.step
    if "resolution_min" in df.columns and df.height:
        step = timedelta(minutes=int(df["resolution_min"].min()))
    expected = int((hi - lo) / step)
    est = float(in_year["is_estimated"].mean()) if "is_estimated" in df.columns and in_year.height else None
    return IngestReport(
        table=src.table, location=location, year=year, rows=df.height, raw_sha256=raw.sha256,
        raw_uri=raw.uri, expected=expected, present=in_year.height, estimated_share=est, source=src.name,
    )


def quality_row(kind: str, report: IngestReport) -> pl.DataFrame:
    """The ``partition_quality`` row of one grid ingest."""
    return pl.DataFrame({
        "signal": [kind], "location": [report.location], "year": [report.year], "source": [report.source],
        "raw_sha256": [report.raw_sha256], "rows": [report.rows], "present": [report.present],
        "expected": [report.expected], "coverage_frac": [report.coverage],
        "estimated_frac": [report.estimated_share], "partial": [report.allowed_partial],
        "plausibility_overridden": [",".join(report.overridden) or None],
    }, schema_overrides={"estimated_frac": pl.Float64, "coverage_frac": pl.Float64,
                         "plausibility_overridden": pl.String})


def ingest_egress(*, home: Home, mirror: Path | None, source: str | None = None) -> list[IngestReport]:
    """Egress prices for every provider: from the repository's rule table (default), or from the mirror's
    matrices (``source="mirror"`` or ``GRIDSHIFT_EGRESS_SOURCE=mirror``); see :mod:`pipelines.sources.egress`.
    Every provider is validated before anything is written; all are then written in one transaction."""
    source = (source or os.environ.get("GRIDSHIFT_EGRESS_SOURCE", "") or "repo").strip().lower()
    src = egress.SOURCE
    reports, raws, frames = [], [], []
    for provider, raw in src.raws(source, mirror):  # each provider validated on its own (errors name its file)
        df = validate(src.table, src.parse(raw, provider), file=raw.uri)
        raws.append(raw)
        frames.append(df)
        reports.append(IngestReport(src.table, None, None, df.height, raw.sha256, raw.uri, source=src.name,
                                    extra={"provider": provider, "input": source}))
    # the providers' rows (keys disjoint: the provider is part of the key) in one transaction, not one each
    _commit(home, raws, {src.table: pl.concat(frames, how="vertical")})
    return reports


def ingest_network(*, home: Home, mirror: Path | None) -> IngestReport:
    """Throughput and RTT between every ordered pair of the registry's locations, per provider
    (``pipelines.sources.network``): Persico et al. 2016 between macro-regions (the mirror's
    ``reference/network_persico2016.csv``), the distance model fitted to Azure's published P50 RTTs
    (``gridshift/data/network/azure_rtt_p50.csv``) inside one. Both files are landed for lineage.
    A ``network_path`` table of an earlier layout (macro-region pairs) is replaced in the write's transaction."""
    p_raw = persico.SOURCE.read_mirror(mirror, persico.MIRROR_RELPATH)
    a_raw = azure_latency.raw()
    model = network.build(p_raw, a_raw)
    df = validate(persico.SOURCE.table, model.table, file=f"{p_raw.uri} + {a_raw.uri}")
    _commit(home, [p_raw, a_raw], {persico.SOURCE.table: df}, rebuild_stale=(persico.SOURCE.table,))
    return IngestReport(persico.SOURCE.table, None, None, df.height, p_raw.sha256, p_raw.uri, source=persico.NAME,
                        extra={**model.summary(), "raw_sha256s": [p_raw.sha256, a_raw.sha256]})


def ingest_locations(*, home: Home) -> int:
    """Load the registry into the ``locations`` table (it is repository data, not a download)."""
    df = validate("locations", locations.registry_frame(), file="gridshift/data/locations.csv")
    with storage_errors(home):
        home.ensure()
        write(home.warehouse_path, {"locations": df})
    return df.height
