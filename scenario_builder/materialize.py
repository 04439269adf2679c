"""Materialize gridshift's Dagster assets in-process: what the CLI runs, identical to the UI's work."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import dagster as dg

from dagster_project import checks
from dagster_project.definitions import ALL_ASSETS
from dagster_project.partitions import key
from dagster_project.resources import GridshiftResource, env_token_fields
from gridshift.home import Home
from warehouse.ingest import in_mirror

SOURCE_ASSETS: dict[str, list[str]] = {
    "carbon": ["grid_carbon"],
    "price": ["grid_price"],
    "weather": ["weather"],
    "network": ["locations", "egress_price", "network_path"],
}
PARTITIONED_SOURCES = ("carbon", "price", "weather")
ASSETS_BY_NAME = {a.key.to_user_string(): a for a in ALL_ASSETS}


@dataclass
class Outcome:
    """One materialized asset (partition): its metadata on success, or the error text on failure."""

    asset: str
    region: str | None
    year: int | None
    ok: bool
    metadata: dict
    error: str = ""
    skipped: bool = False


QUIET = {"loggers": {"console": {"config": {"log_level": "ERROR"}}}}


def _resources(home: Home, mirror: Path | None, live: bool = False) -> dict:
    return {"gridshift": GridshiftResource(home=str(home.root), mirror=str(mirror) if mirror else "", live=live,
                                           **env_token_fields())}


def _collect(result: dg.ExecuteInProcessResult, names: Sequence[str], region, year) -> list[Outcome]:
    failed_checks = {
        ev.asset_key.to_user_string(): ev.metadata.get("error")
        for ev in result.get_asset_check_evaluations()
        if not ev.passed and ev.check_name == checks.SCHEMA_CHECK
    }
    step_errors = [
        ev.step_failure_data.error.message.strip()
        for ev in result.all_events
        if ev.is_step_failure and ev.step_failure_data and ev.step_failure_data.error
    ]
    out = []
    for name in names:
        mats = result.asset_materializations_for_node(name)
        if mats:
            meta = {k: v.value for k, v in mats[-1].metadata.items()}
            out.append(Outcome(name, region, year, True, meta))
        else:
            err = failed_checks.get(name)
            text = err.value if err is not None else (step_errors[0] if step_errors else "failed")
            out.append(Outcome(name, region, year, False, {}, error=str(text).strip("`\n")))
    return out


def available_in_mirror(source: str, region: str, year: int, mirror: Path | None) -> bool:
    """Whether a mirror holds the file for this partition (used to skip absent data with --regions all)."""
    return in_mirror(source, region, year, mirror)


def materialize(
    *,
    regions: Sequence[str],
    years: Sequence[int],
    sources: Sequence[str],
    home: Home,
    mirror: Path | None,
    skip_missing: bool = False,
    live: bool = False,
    on_progress: Callable[[str], None] | None = None,
) -> list[Outcome]:
    """Materialize the selected sources for every region × year, one in-process run per partition."""
    outcomes: list[Outcome] = []
    instance = dg.DagsterInstance.ephemeral()  # one for all runs of this call (each run would make its own)
    resources = _resources(home, mirror, live)
    unpartitioned = [n for s in sources if s not in PARTITIONED_SOURCES for n in SOURCE_ASSETS[s]]
    if unpartitioned:
        res = dg.materialize(
            [ASSETS_BY_NAME[n] for n in unpartitioned], resources=resources, raise_on_error=False, run_config=QUIET,
            instance=instance,
        )
        outcomes += _collect(res, unpartitioned, None, None)
        if on_progress:
            on_progress("reference tables")
    for region in regions:
        for year in years:
            names = []
            for s in sources:
                if s not in PARTITIONED_SOURCES:
                    continue
                if skip_missing and not available_in_mirror(s, region, year, mirror):
                    outcomes.append(Outcome(SOURCE_ASSETS[s][0], region, year, True, {}, skipped=True))
                    continue
                names += SOURCE_ASSETS[s]
            if names:
                res = dg.materialize(
                    [ASSETS_BY_NAME[n] for n in names], partition_key=key(region, year),
                    resources=resources, raise_on_error=False, run_config=QUIET, instance=instance,
                )
                outcomes += _collect(res, names, region, year)
            if on_progress:
                on_progress(f"{region} {year}")
    return outcomes


def materialize_workload(
    *, workload: str, years: Sequence[int], home: Home, mirror: Path | None, trace_dir: Path | None,
    seed: int, load_factor: float, live: bool = False,
) -> list[Outcome]:
    """Materialize the ``workload_tasks`` asset for each year (one in-process run per partition)."""
    from dagster_project.assets.workload import workload_key, workload_tasks

    config = {"seed": seed, "load_factor": load_factor, "trace_dir": str(trace_dir) if trace_dir else ""}
    outcomes = []
    for year in years:
        res = dg.materialize(
            [workload_tasks], partition_key=workload_key(workload, year), resources=_resources(home, mirror, live),
            raise_on_error=False, run_config={**QUIET, "ops": {"workload_tasks": {"config": config}}},
        )
        outcomes += _collect(res, ["workload_tasks"], workload, year)
    return outcomes
