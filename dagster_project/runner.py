"""Run gridshift's assets in-process on the persistent Dagster instance under the gridshift home.

This is what the command-line tools call: the same assets the UI materializes, recorded in the
same instance (``<home>/dagster``), so every run the CLI made — and the lineage from the raw files
to the bundle — shows in ``./run.sh ui`` (``dg dev``) afterwards. A failed run is turned into a
:class:`RunFailed` carrying the root cause's own message (the ``DataError`` or
``SourceUnavailableError`` raised inside the asset), not Dagster's wrapper text.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import dagster as dg

from dagster_project.assets.bundle import BundleConfig
from dagster_project.assets.workload import workload_key
from dagster_project.definitions import ALL_ASSETS
from dagster_project.partitions import key
from dagster_project.resources import GridshiftResource
from gridshift.atomic import atomic_write_bytes
from gridshift.errors import GridshiftError
from gridshift.home import Home
from gridshift.sources import SIGNAL_TABLES
from scenario_builder.bundle import BuildParams
from scenario_builder.export import IngestPlan, plan

#: CLI source names -> the assets that materialize them
SOURCE_ASSETS: dict[str, list[str]] = {
    **{kind: [table] for kind, table in SIGNAL_TABLES.items()},
    "network": ["locations", "egress_price", "network_path"],
}
ASSETS_BY_NAME = {a.key.to_user_string(): a for a in ALL_ASSETS}
QUIET = {"loggers": {"console": {"config": {"log_level": "CRITICAL"}}}}


def instance_yaml(dagster_dir: Path) -> str:
    """The instance configuration of a home: no telemetry, and the kept-open event-log storage
    (``dagster_project.storage``) in Dagster's usual place under the instance directory."""
    return ("telemetry:\n  enabled: false\n"
            "event_log_storage:\n  module: dagster_project.storage\n  class: HomeEventLogStorage\n"
            f"  config:\n    base_dir: {dagster_dir / 'history' / 'runs'}\n")


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


_INSTANCES: dict[Path, dg.DagsterInstance] = {}


def instance(home: Home) -> dg.DagsterInstance:
    """The persistent instance of this home (``<home>/dagster``, the ``DAGSTER_HOME`` of ``./run.sh ui``),
    opened once per process (opening one sets up its SQLite storages: about a second)."""
    d = home.dagster_dir
    if d not in _INSTANCES:
        d.mkdir(parents=True, exist_ok=True)
        cfg, text = d / "dagster.yaml", instance_yaml(d)
        if not cfg.exists() or cfg.read_text() != text:  # ours: rewritten if the home moved
            atomic_write_bytes(cfg, text.encode())
        _INSTANCES[d] = dg.DagsterInstance.from_config(str(d))
    return _INSTANCES[d]


def resources(home: Home, mirror: Path | None, *, live: bool = False, allow_partial: bool = False) -> dict:
    return {"gridshift": GridshiftResource(home=str(home.root), mirror=str(mirror) if mirror else "", live=live,
                                           allow_partial=allow_partial)}


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


def _run(names: Sequence[str], home: Home, res: dict, *, partition_key=None, run_config: dict | None = None
         ) -> dg.ExecuteInProcessResult:
    return dg.materialize(
        [ASSETS_BY_NAME[n] for n in names], partition_key=partition_key, resources=res, raise_on_error=False,
        run_config={**QUIET, **(run_config or {})}, instance=instance(home),
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


def materialize_sources(
    *, regions: Sequence[str], years: Sequence[int], sources: Sequence[str], home: Home, mirror: Path | None,
    live: bool = False, allow_partial: bool = False, skip: Callable[[str, str, int], bool] | None = None,
    on_progress: Callable[[str], None] | None = None,
) -> list[Outcome]:
    """Materialize the selected sources: reference tables once, grid signals per region × year (one run
    per partition). ``skip(kind, region, year)`` marks partitions not to attempt (listed as skipped)."""
    res = resources(home, mirror, live=live, allow_partial=allow_partial)
    outcomes: list[Outcome] = []
    reference = [n for s in sources if s not in SIGNAL_TABLES for n in SOURCE_ASSETS[s]]
    if reference:
        outcomes += _outcomes(_run(reference, home, res), reference, None, None)
        if on_progress:
            on_progress("reference tables")
    for region in regions:
        for year in years:
            names = []
            for kind in (s for s in sources if s in SIGNAL_TABLES):
                if skip is not None and skip(kind, region, year):
                    outcomes.append(Outcome(SIGNAL_TABLES[kind], region, year, True, skipped=True))
                else:
                    names.append(SIGNAL_TABLES[kind])
            if names:
                outcomes += _outcomes(_run(names, home, res, partition_key=key(region, year)), names, region, year)
            if on_progress:
                on_progress(f"{region} {year}")
    return outcomes


def materialize_workload(
    *, workload: str, years: Sequence[int], home: Home, mirror: Path | None, trace_dir: Path | None = None,
    seed: int = 0, load_factor: float = 1.0, bandwidth_model: str = "ai", live: bool = False,
) -> list[Outcome]:
    """Materialize ``workload_tasks`` for each year (one run per partition)."""
    config = {"seed": seed, "load_factor": load_factor, "bandwidth_model": bandwidth_model,
              "trace_dir": str(trace_dir) if trace_dir else ""}
    res = resources(home, mirror, live=live)
    outcomes = []
    for year in years:
        result = _run(["workload_tasks"], home, res, partition_key=workload_key(workload, year),
                      run_config={"ops": {"workload_tasks": {"config": config}}})
        outcomes += _outcomes(result, ["workload_tasks"], workload, year)
    return outcomes


def materialize_bundle(config: BundleConfig, home: Home, mirror: Path | None) -> dict[str, Any]:
    """Materialize ``scenario_bundle`` with ``config``; returns its metadata (bundle id, path, ...)."""
    result = _run(["scenario_bundle"], home, resources(home, mirror),
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


def export_bundle(
    params: BuildParams, *, home: Home, mirror: Path | None = None, out: Path | None = None, live: bool = False,
    allow_partial: bool = False, on_plan: Callable[[IngestPlan], None] | None = None,
    on_progress: Callable[[str], None] | None = None,
) -> Exported:
    """``scenario_builder export``: materialize what the warehouse lacks (``scenario_builder.export.plan``),
    then the ``scenario_bundle`` asset — every run on the home's instance, so the UI shows the lineage.
    A required input that fails raises :class:`RunFailed` with its root cause; an optional neighbouring
    year that fails is skipped (the edge is then held, flagged, within the gap limit)."""
    home.ensure()
    p = plan(params, home, mirror)
    if on_plan:
        on_plan(p)
    tick = on_progress or (lambda _d: None)
    outcomes: list[Outcome] = []
    for optional, items in ((False, p.required), (True, p.optional)):  # the year itself first: fail fast
        for region, year, kinds in items:
            got = materialize_sources(regions=[region], years=[year], sources=kinds, home=home, mirror=mirror,
                                      live=live and not optional, allow_partial=allow_partial)
            outcomes += got if not optional else [o for o in got if o.ok]
            tick(f"{region} {year} {','.join(kinds)}")
            bad = failed(outcomes)
            if bad:
                more = f" and {len(bad) - 1} more ({', '.join(o.label for o in bad[1:4])})" if len(bad) > 1 else ""
                raise RunFailed(f"ingesting {bad[0].label}{more} failed", bad[0], bad)
    if p.reference:
        outcomes += materialize_sources(regions=[], years=[], sources=["network"], home=home, mirror=mirror)
        tick("reference tables")
        bad = failed(outcomes)
        if bad:
            raise RunFailed(f"ingesting {bad[0].label} failed", bad[0], bad)
    if p.workload:
        got = materialize_workload(workload=params.workload, years=[params.year], home=home, mirror=mirror,
                                   seed=params.seed, live=live)
        outcomes += got
        if failed(got):
            raise RunFailed(f"deriving {got[0].label} failed", got[0], got)
        tick(f"workload {params.workload} {params.year}")
    meta = materialize_bundle(BundleConfig.from_params(params, out), home, mirror)
    return Exported(str(meta["bundle_id"]), Path(str(meta["path"])), bool(meta["reused"]), outcomes)


__all__ = ["Exported", "Outcome", "RunFailed", "export_bundle", "failed", "instance", "materialize_bundle",
           "materialize_sources", "materialize_workload", "resources", "root_causes"]
