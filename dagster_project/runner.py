"""Run gridshift's assets in-process on the persistent Dagster instance under the gridshift home.

This is what the command-line tools call: the same assets the UI materializes, recorded in the
same instance (``<home>/dagster``), so every run the CLI made — and the lineage from the raw files
to the bundle — shows in ``./run.sh ui`` (``dg dev``) afterwards. A failed run is turned into a
:class:`RunFailed` carrying the root cause's own message (the ``DataError`` or
``SourceUnavailableError`` raised inside the asset), not Dagster's wrapper text.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import dagster as dg

from dagster_project import plan
from dagster_project.assets import grid, reference
from dagster_project.instance_config import POSTGRES_KEY, instance_yaml, postgres_db, require_postgres_storage
from dagster_project.jobs import ARGUMENTS_TAG, COMMAND_TAG, JOB_OF_GROUP
from dagster_project.partitions import add_years, key, region_year
from dagster_project.resources import GridshiftResource
from gridshift.atomic import atomic_write_bytes
from gridshift.errors import GridshiftError
from gridshift.home import Home
from gridshift.sources import SIGNAL_TABLES

if TYPE_CHECKING:  # the bundle and workload assets are imported when used: the grid ingest needs neither
    from dagster_project.assets.bundle import BundleConfig
    from scenario_builder.bundle import BuildParams

#: CLI source names -> the assets that materialize them
SOURCE_ASSETS: dict[str, list[str]] = {
    **{kind: [table] for kind, table in SIGNAL_TABLES.items()},
    "network": ["locations", "egress_price", "network_path"],
}
QUIET = {"loggers": {"console": {"config": {"log_level": "CRITICAL"}}}}
#: The run tags that make a run target a key range: what Dagster's own ``dagster asset materialize
#: --partition-range START...END`` and a single-run backfill set (``materialize`` has no range argument in 1.13).
PARTITION_RANGE_START, PARTITION_RANGE_END = "dagster/asset_partition_range_start", "dagster/asset_partition_range_end"


def _assets_by_name() -> dict[str, dg.AssetsDefinition]:
    from dagster_project.definitions import ALL_ASSETS

    return {a.key.to_user_string(): a for a in ALL_ASSETS}


def _asset(name: str) -> dg.AssetsDefinition:
    """The asset named ``name``; the grid and reference assets without importing the others."""
    for a in (*grid.ASSETS, *reference.ASSETS):
        if a.key.to_user_string() == name:
            return a
    return _assets_by_name()[name]


def prepare_instance(home: Home) -> Path:
    """Create ``<home>/dagster`` with its ``dagster.yaml`` (:func:`dagster_project.instance_config.instance_yaml`:
    SQLite under the home, or the PostgreSQL server its configuration names; rewritten if the home moved or that
    setting changed); returns the directory (the ``DAGSTER_HOME`` of ``./run.sh ui``)."""
    d = home.dagster_dir
    url = home.config().get(POSTGRES_KEY, "")
    postgres = postgres_db(url, f"{home.config_path}: {POSTGRES_KEY}") if url else None
    if postgres is not None:
        require_postgres_storage()
    d.mkdir(parents=True, exist_ok=True)
    cfg, text = d / "dagster.yaml", instance_yaml(d, postgres)
    if not cfg.exists() or cfg.read_text() != text:
        atomic_write_bytes(cfg, text.encode())
    return d


@contextmanager
def open_instance(home: Home) -> Iterator[dg.DagsterInstance]:
    """The persistent instance of this home, open for the block (opening one sets up its SQLite storages: pass
    it to every run of a command rather than opening it per run)."""
    with dg.DagsterInstance.from_config(str(prepare_instance(home))) as inst:
        yield inst


@contextmanager
def _using(home: Home, instance: dg.DagsterInstance | None) -> Iterator[dg.DagsterInstance]:
    """``instance`` when the caller holds one open, else the home's, open for the block."""
    if instance is not None:
        yield instance
    else:
        with open_instance(home) as inst:
            yield inst


class RunFailed(GridshiftError):
    """An asset materialization failed; ``cause`` is the root cause's own message and ``cause_type`` the
    name of its exception type (what the CLI picks its hint by)."""

    def __init__(self, what: str, failure: Outcome, outcomes: Sequence[Outcome] = ()) -> None:
        self.what, self.cause, self.cause_type = what, failure.error, failure.error_type
        self.outcomes = list(outcomes) or [failure]
        super().__init__(f"{what}: {failure.error}")

    def report(self) -> str:
        """Every failed materialization with its run id (for the CLI's full report)."""
        lines = [f"{self.what}", ""]
        for o in self.outcomes:
            if not o.ok:
                lines += [f"{o.label}: {o.error_type or 'error'} in Dagster run {o.run_id}", f"  {o.error}", ""]
        return "\n".join(lines) + "\n"


@dataclass
class Outcome:
    """One materialized asset (partition): its metadata on success, or the root cause on failure."""

    asset: str
    region: str | None
    year: int | None
    ok: bool
    metadata: dict = field(default_factory=dict)
    error: str = ""
    error_type: str = ""
    skipped: bool = False
    run_id: str = ""

    @property
    def label(self) -> str:
        return " ".join(str(x) for x in (self.asset, self.region, self.year) if x is not None)


def resources(home: Home, mirror: Path | None, *, live: bool = False, allow_partial: bool = False,
              allow_implausible: bool = False) -> dict:
    return {"gridshift": GridshiftResource(home=str(home.root), mirror=str(mirror) if mirror else "", live=live,
                                           allow_partial=allow_partial, allow_implausible=allow_implausible)}


def _message(err) -> tuple[str, str]:
    """(type name, message) of the deepest cause of a Dagster error record."""
    while err.cause is not None:
        err = err.cause
    msg = err.message.strip()
    first, _, rest = msg.partition(": ")  # "module.TypeName: message" (format_exception_only)
    if err.cls_name and first.endswith(err.cls_name):
        msg = rest
    return err.cls_name or "", msg.strip()


def root_causes(result: dg.ExecuteInProcessResult) -> dict[str, tuple[str, str]]:
    """Step key (the asset's name) -> (type name, message) of the exception it raised."""
    out = {}
    for ev in result.all_events:
        if ev.is_step_failure and ev.step_failure_data and ev.step_failure_data.error:
            out.setdefault(ev.step_key, _message(ev.step_failure_data.error))
    return out


def _run(names: Sequence[str], instance: dg.DagsterInstance, res: dict, *, partition_key=None,
         tags: Mapping[str, str] | None = None, run_config: dict | None = None) -> dg.ExecuteInProcessResult:
    """One run of the named job of ``names``' group (:data:`JOB_OF_GROUP`), restricted to ``names``, with ``res``
    bound: the run is listed under that job, with its tags, in the UI (not as an anonymous asset job)."""
    assets = [_asset(n) for n in names]
    job_name = JOB_OF_GROUP[assets[0].group_names_by_key[assets[0].key]]
    job = dg.define_asset_job(job_name, selection=[a.key for a in assets])
    defs = dg.Definitions(assets=assets, jobs=[job], resources=res)
    return defs.resolve_job_def(job_name).execute_in_process(
        run_config={**QUIET, **(run_config or {})}, instance=instance, partition_key=partition_key,
        tags=dict(tags or {}), raise_on_error=False,
    )


def _outcomes(result: dg.ExecuteInProcessResult, names: Sequence[str], region, year) -> list[Outcome]:
    out = []
    causes = {} if result.success else root_causes(result)
    for name in names:
        mats = result.asset_materializations_for_node(name)
        if mats:
            meta = {k: v.value for k, v in mats[-1].metadata.items()}
            out.append(Outcome(name, region, year, True, meta, run_id=result.run_id))
        else:
            cause_type, cause = causes.get(name, ("", "not materialized: an upstream step failed"))
            out.append(Outcome(name, region, year, False, error=cause, error_type=cause_type, run_id=result.run_id))
    return out


# ------------------------------------------------------------------------- grid partitions, batched
@dataclass(frozen=True)
class Block:
    """One run: ``assets`` over every partition of ``regions`` × ``years`` (each consecutive in the
    partitions' declared order, so the run's key range is exactly this rectangle)."""

    assets: tuple[str, ...]
    regions: tuple[str, ...]
    years: tuple[int, ...]

    @property
    def keys(self) -> list[dg.MultiPartitionKey]:
        return [key(r, y) for r in self.regions for y in self.years]

    def key_range(self) -> dg.PartitionKeyRange | None:
        """The run's key range; None for one partition (a plain partition run, as the UI launches it)."""
        if len(self.regions) == 1 and len(self.years) == 1:
            return None
        return dg.PartitionKeyRange(str(key(self.regions[0], self.years[0])),
                                    str(key(self.regions[-1], self.years[-1])))

    def tags(self) -> dict[str, str] | None:
        """The run tags of :meth:`key_range` (:data:`PARTITION_RANGE_START`, :data:`PARTITION_RANGE_END`)."""
        r = self.key_range()
        return None if r is None else {PARTITION_RANGE_START: r.start, PARTITION_RANGE_END: r.end}


def plan_runs(requests: Sequence[tuple[str, str, int]], years_order: Sequence[int]) -> list[Block]:
    """Runs that materialize exactly the requested ``(asset, region, year)`` partitions, few of them
    (the rectangles of :func:`dagster_project.plan.rectangles`; ``years_order``: the instance's year keys,
    :func:`dagster_project.partitions.add_years`).

    A run targets one key range, and a range over ``region_year`` is the rectangle of consecutive
    regions × consecutive years between its ends (``dagster_project.partitions``). Per asset, regions
    wanting the same years are cut into runs of consecutive regions, the years into runs of consecutive
    years; each rectangle is one run, and assets with the same rectangle share it (one step each). No
    partition outside the request is planned — a run plans every key of its range, and marks those it
    did not materialize as failed when it fails. Any regions × years request over consecutive regions
    and years is one run; the whole mirror (``--regions all --year 2022,2023``: carbon and weather absent
    for FR…CH, price for GB) is 4. Runs are ordered by first year, so a location's earlier year is
    written before its later one.
    """
    return [Block(assets, regions, years) for assets, regions, years in plan.rectangles(requests, years_order)]


def _partition_failures(result: dg.ExecuteInProcessResult) -> dict[tuple[str, str], tuple[str, str]]:
    """(asset, partition key) -> (type name, message) of every partition a grid step refused (the
    ``failures`` its Failure carries)."""
    out = {}
    for ev in result.all_events:
        data = ev.step_failure_data if ev.is_step_failure else None
        meta = data.user_failure_data.metadata if data and data.user_failure_data else {}
        if "failures" in meta:
            for pk, f in meta["failures"].value.items():
                out[(ev.step_key, pk)] = (f["type"], f["message"])
    return out


def _block_outcomes(result: dg.ExecuteInProcessResult, block: Block) -> dict[tuple[str, str, int], Outcome]:
    """The outcome of every partition of ``block``: materialized (its metadata) or refused (its cause)."""
    out: dict[tuple[str, str, int], Outcome] = {}
    refused = {} if result.success else _partition_failures(result)
    causes = {} if result.success else root_causes(result)
    for name in block.assets:
        mats = {str(m.partition): m for m in result.asset_materializations_for_node(name)}
        for pk in block.keys:
            region, year = pk.keys_by_dimension["region"], int(pk.keys_by_dimension["year"])
            m = mats.get(str(pk))
            if m is not None:
                meta = {k: v.value for k, v in m.metadata.items()}
                out[(name, region, year)] = Outcome(name, region, year, True, meta, run_id=result.run_id)
                continue
            cause_type, cause = refused.get((name, str(pk))) or causes.get(
                name, ("", "not materialized: an upstream step failed"))
            out[(name, region, year)] = Outcome(name, region, year, False, error=cause, error_type=cause_type,
                                                run_id=result.run_id)
    return out


def _check_range(block: Block, instance: dg.DagsterInstance) -> None:
    """Refuse to launch a run whose key range would not expand to exactly the block's partitions (the
    range semantics ``plan_runs`` relies on; a Dagster upgrade that changed them fails here, loudly).
    ``instance`` holds the year keys (the dynamic dimension's store)."""
    r = block.key_range()
    if r is None:
        return
    got = region_year.get_partition_keys_in_range(r, dynamic_partitions_store=instance)
    if [str(k) for k in got] != [str(k) for k in block.keys]:
        raise GridshiftError(f"the key range {r.start}..{r.end} expands to "
                             f"{len(got)} partitions, not the {len(block.keys)} planned: Dagster's range semantics "
                             "changed; plan_runs must follow")


def _unknown_years(years: Sequence[int]) -> list[int]:
    """The years of ``years`` no source can provide (:func:`dagster_project.plan.source_years`)."""
    known = plan.source_years()
    return [y for y in years if int(y) not in known]


def materialize_grid(
    requests: Sequence[tuple[str, str, int]], *, home: Home, mirror: Path | None, live: bool = False,
    allow_partial: bool = False, on_run: Callable[[Block], None] | None = None, allow_implausible: bool = False,
    instance: dg.DagsterInstance | None = None, tags: Mapping[str, str] | None = None,
) -> dict[tuple[str, str, int], Outcome]:
    """Materialize the requested ``(kind, region, year)`` grid partitions in as few runs as
    :func:`plan_runs` allows (each run one step per asset, all its partitions checked, written and
    recorded per partition: ``dagster_project.assets.grid``), each run tagged with ``tags`` (the command that asked
    for it: :data:`COMMAND_TAG`, :data:`ARGUMENTS_TAG`). Returns the outcome of each request."""
    res = resources(home, mirror, live=live, allow_partial=allow_partial, allow_implausible=allow_implausible)
    out: dict[tuple[str, str, int], Outcome] = {}
    todo = []
    for kind, region, year in requests:
        table = SIGNAL_TABLES[kind]
        if _unknown_years([year]):
            span = plan.source_years()
            out[(table, region, year)] = Outcome(
                table, region, year, False, error_type="ValueError",
                error=f"{year} is not a partition of {table}: its sources provide {span[0]}..{span[-1]}")
        else:
            todo.append((table, region, int(year)))
    with _using(home, instance) as inst:
        years_order = add_years(inst, [y for _t, _r, y in todo])
        for block in plan_runs(todo, years_order):
            _check_range(block, inst)
            result = _run(block.assets, inst, res, partition_key=block.keys[0] if block.tags() is None else None,
                          tags={**(tags or {}), **(block.tags() or {})})
            out.update(_block_outcomes(result, block))
            if on_run:
                on_run(block)
    return {(kind, region, year): out[(SIGNAL_TABLES[kind], region, year)] for kind, region, year in requests}


def _cell_ticker(cells: Sequence[tuple[str, str, int]], tick: Callable[[str], None] | None,
                 label: Callable[[str, int], str]) -> Callable[[Block], None]:
    """An ``on_run`` callback for :func:`materialize_grid` that calls ``tick(label(region, year))`` once for
    each (region, year) of ``cells`` (``(kind, region, year)``) as soon as the last run covering it ends,
    so a progress bar moves while a batch runs, in the order the runs finish."""
    left: dict[tuple[str, int], set[str]] = {}
    for kind, region, year in cells:
        left.setdefault((region, int(year)), set()).add(SIGNAL_TABLES[kind])

    def on_run(block: Block) -> None:
        for region in block.regions:
            for year in block.years:
                todo = left.get((region, year))
                if todo:
                    todo.difference_update(block.assets)
                    if not todo and tick:
                        tick(label(region, year))

    return on_run


def materialize_sources(
    *, regions: Sequence[str], years: Sequence[int], sources: Sequence[str], home: Home, mirror: Path | None,
    live: bool = False, allow_partial: bool = False, skip: Callable[[str, str, int], bool] | None = None,
    on_progress: Callable[[str], None] | None = None, allow_implausible: bool = False,
    instance: dg.DagsterInstance | None = None, tags: Mapping[str, str] | None = None,
) -> list[Outcome]:
    """Materialize the selected sources: reference tables once (one run), grid signals for every
    region × year in as few runs as :func:`plan_runs` allows (one for any consecutive rectangle).
    ``skip(kind, region, year)`` marks partitions not to attempt (listed as skipped, never planned).
    Outcomes come in the order region, year, source. ``instance``: the open instance to record the runs in
    (default: the home's, opened for the call)."""
    with _using(home, instance) as inst:
        return _sources(regions, years, sources, home, mirror, inst, live=live, allow_partial=allow_partial,
                        skip=skip, on_progress=on_progress, allow_implausible=allow_implausible, tags=tags)


def _sources(regions: Sequence[str], years: Sequence[int], sources: Sequence[str], home: Home, mirror: Path | None,
             instance: dg.DagsterInstance, *, live: bool, allow_partial: bool, allow_implausible: bool,
             skip: Callable[[str, str, int], bool] | None, on_progress: Callable[[str], None] | None,
             tags: Mapping[str, str] | None) -> list[Outcome]:
    res = resources(home, mirror, live=live, allow_partial=allow_partial, allow_implausible=allow_implausible)
    outcomes: list[Outcome] = []
    reference = [n for s in sources if s not in SIGNAL_TABLES for n in SOURCE_ASSETS[s]]
    if reference:
        outcomes += _outcomes(_run(reference, instance, res, tags=tags), reference, None, None)
        if on_progress:
            on_progress("reference tables")
    kinds = [s for s in sources if s in SIGNAL_TABLES]
    cells = [(kind, region, year) for region in regions for year in years for kind in kinds]
    skipped = {c for c in cells if skip is not None and skip(*c)}
    todo = [c for c in cells if c not in skipped]
    if on_progress:  # cells with nothing to run (all skipped) count at once
        for region, year in dict.fromkeys((r, y) for _k, r, y in cells):
            if all(c in skipped for c in cells if c[1] == region and c[2] == year):
                on_progress(f"{region} {year} (skipped)")
    done = materialize_grid(todo, home=home, mirror=mirror, live=live, allow_partial=allow_partial,
                            allow_implausible=allow_implausible,
                            on_run=_cell_ticker(todo, on_progress, lambda r, y: f"{r} {y}"), instance=instance,
                            tags=tags)
    for region in regions:
        for year in years:  # per region and year: the skipped sources first, then the others (as listed before)
            cell = [(kind, region, year) for kind in kinds]
            outcomes += [Outcome(SIGNAL_TABLES[c[0]], region, year, True, skipped=True) for c in cell if c in skipped]
            outcomes += [done[c] for c in cell if c not in skipped]
    return outcomes


def materialize_workload(
    *, workload: str, years: Sequence[int], home: Home, mirror: Path | None, trace_dir: Path | None = None,
    seed: int = 0, load_factor: float | None = None, bandwidth_model: str = "ai", live: bool = False,
    instance: dg.DagsterInstance | None = None, tags: Mapping[str, str] | None = None,
) -> list[Outcome]:
    """Materialize ``workload_tasks`` for each year (one run per partition; ``instance`` as
    :func:`materialize_sources`); ``load_factor`` None: the asset's default (what a default bundle needs)."""
    from dagster_project.assets.workload import workload_key

    config = {"seed": seed, "load_factor": load_factor, "bandwidth_model": bandwidth_model,
              "trace_dir": str(trace_dir) if trace_dir else ""}
    res = resources(home, mirror, live=live)
    outcomes = []
    with _using(home, instance) as inst:
        add_years(inst, years)
        for year in years:
            result = _run(["workload_tasks"], inst, res, partition_key=workload_key(workload, year), tags=tags,
                          run_config={"ops": {"workload_tasks": {"config": config}}})
            outcomes += _outcomes(result, ["workload_tasks"], workload, year)
    return outcomes


def materialize_bundle(config: BundleConfig, home: Home, mirror: Path | None,
                       instance: dg.DagsterInstance | None = None, tags: Mapping[str, str] | None = None
                       ) -> dict[str, Any]:
    """Materialize ``scenario_bundle`` with ``config``; returns its metadata (bundle id, path, ...)."""
    with _using(home, instance) as inst:
        result = _run(["scenario_bundle"], inst, resources(home, mirror), tags=tags,
                      run_config={"ops": {"scenario_bundle": {"config": config.model_dump()}}})
    out = _outcomes(result, ["scenario_bundle"], None, None)[0]
    if not out.ok:
        raise RunFailed("building the bundle failed", out)
    return out.metadata


def failed(outcomes: Sequence[Outcome]) -> list[Outcome]:
    return [o for o in outcomes if not o.ok]


@dataclass
class Exported:
    bundle_id: str
    path: Path
    reused: bool
    outcomes: list[Outcome]


def export_bundle(params: BuildParams, **kwargs) -> Exported:
    """``gridshift export`` of one bundle: :func:`export_bundles` of ``[params]``."""
    return export_bundles([params], **kwargs)[0]


def export_bundles(
    params: Sequence[BuildParams], *, home: Home, mirror: Path | None = None, out: Path | None = None,
    live: bool = False, allow_partial: bool = False, on_plan: Callable[[int], None] | None = None,
    on_progress: Callable[[str], None] | None = None, tags: Mapping[str, str] | None = None,
) -> list[Exported]:
    """``gridshift export``: materialize what the warehouse lacks for every bundle of ``params``
    (``scenario_builder.export.plan``), then each ``scenario_bundle`` — every run on the home's instance, so
    the UI shows the lineage. The grid partitions of all the bundles (their years and neighbouring years)
    are ingested together, in the fewest runs :func:`plan_runs` allows (one per region for consecutive
    years). A required input that fails raises :class:`RunFailed` with its root cause; an optional
    neighbouring year that fails is skipped (the edge is then held, flagged, within the gap limit).
    ``on_plan`` gets the number of progress steps (``on_progress`` calls) to come; every run is tagged ``tags``."""
    from scenario_builder.export import plan

    with open_instance(home.ensure()) as inst:
        plans = [plan(p, home, mirror) for p in params]
        required = {(k, r, y) for pl in plans for r, y, kinds in pl.required for k in kinds}
        optional = {(k, r, y) for pl in plans for r, y, kinds in pl.optional for k in kinds} - required
        cells = sorted(required | optional, key=lambda c: (c[2], c[1], c[0]))
        workloads = [p for p, pl in zip(params, plans, strict=True) if pl.workload]
        reference = any(pl.reference for pl in plans)
        if on_plan:
            on_plan(len({(r, y) for _k, r, y in cells}) + int(reference) + len(workloads) + len(params))
        tick = on_progress or (lambda _d: None)
        outcomes = _ingest_inputs(cells, required, home, mirror, inst, live=live, allow_partial=allow_partial,
                                  tick=tick, tags=tags)
        if reference:
            outcomes += materialize_sources(regions=[], years=[], sources=["network"], home=home, mirror=mirror,
                                            instance=inst, tags=tags)
            tick("reference tables")
            bad = failed(outcomes)
            if bad:
                raise RunFailed(f"ingesting {bad[0].label} failed", bad[0], bad)
        for p in workloads:
            got = materialize_workload(workload=p.workload, years=[p.year], home=home, mirror=mirror, seed=p.seed,
                                       load_factor=p.load_factor, live=live, instance=inst, tags=tags)
            outcomes += got
            if failed(got):
                raise RunFailed(f"deriving {got[0].label} failed", got[0], got)
            tick(f"workload {p.workload} {p.year}")
        return [_build(p, home, mirror, out, inst, outcomes, tick, tags) for p in params]


def _ingest_inputs(cells: Sequence[tuple[str, str, int]], required: set, home: Home, mirror: Path | None,
                   instance: dg.DagsterInstance, *, live: bool, allow_partial: bool,
                   tick: Callable[[str], None], tags: Mapping[str, str] | None) -> list[Outcome]:
    """Materialize the grid ``cells`` (required and optional together, one batch); raise :class:`RunFailed` if
    a required one failed, drop the optional ones that failed."""
    if not cells:
        return []
    kinds_of: dict[tuple[str, int], list[str]] = {}
    for k, r, y in cells:
        kinds_of.setdefault((r, y), []).append(k)
    done = materialize_grid(cells, home=home, mirror=mirror, live=live, allow_partial=allow_partial,
                            instance=instance, tags=tags, on_run=_cell_ticker(
                                cells, tick, lambda r, y: f"{r} {y} {','.join(kinds_of[(r, y)])}"))
    bad = [o for c, o in done.items() if c in required and not o.ok]
    if bad:
        more = f" and {len(bad) - 1} more ({', '.join(o.label for o in bad[1:4])})" if len(bad) > 1 else ""
        raise RunFailed(f"ingesting {bad[0].label}{more} failed", bad[0], bad)
    return [o for c, o in done.items() if c in required or o.ok]


def _build(params: BuildParams, home: Home, mirror: Path | None, out: Path | None, instance: dg.DagsterInstance,
           outcomes: list[Outcome], tick: Callable[[str], None], tags: Mapping[str, str] | None) -> Exported:
    from dagster_project.assets.bundle import BundleConfig

    meta = materialize_bundle(BundleConfig.from_params(params, out), home, mirror, instance, tags)
    tick(f"bundle {params.year}")
    return Exported(str(meta["bundle_id"]), Path(str(meta["path"])), bool(meta["reused"]), outcomes)


__all__ = ["ARGUMENTS_TAG", "COMMAND_TAG", "Block", "Exported", "Outcome", "RunFailed", "export_bundle",
           "export_bundles", "failed", "instance_yaml", "materialize_bundle", "materialize_grid",
           "materialize_sources", "materialize_workload", "open_instance", "plan_runs", "prepare_instance",
           "resources", "root_causes"]
