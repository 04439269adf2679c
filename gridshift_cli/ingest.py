"""``gridshift ingest`` and ``plot-workload``: grid signals, reference tables and workloads into the warehouse,
through the same Dagster assets as the UI."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape
from rich.table import Table

from gridshift import export_defaults as D
from gridshift import locations
from gridshift.errors import GridshiftError
from gridshift.home import Home
from gridshift_cli.common import (
    absolute,
    command_tags,
    console,
    err_console,
    failures,
    parse_years,
    progress_bar,
    quiet_dagster,
    resolve_mirror,
)
from gridshift_cli.options import HomeOpt, LiveOpt, MirrorOpt, PartialOpt, RegionsOpt, SeedOpt, YearOpt, YearsOpt
from gridshift_cli.report import HINTS

ImplausibleOpt = Annotated[bool, typer.Option(
    "--allow-implausible", help="accept, and record, a partition failing an overridable plausibility check (a "
    "zone's or market's mean below its floor; docs/sources.md, 'Plausibility')")]
ALL_SOURCES = ("carbon", "price", "weather", "network", "workload")
DEFAULT_SOURCES = ("carbon", "price", "weather", "network")


def ingest(
    ctx: typer.Context,
    year: YearsOpt,
    regions: RegionsOpt = "",
    sources: Annotated[
        str, typer.Option(help="comma-separated: carbon,price,weather,network (default) and/or workload")
    ] = ",".join(DEFAULT_SOURCES),
    mirror: MirrorOpt = None,
    home: HomeOpt = None,
    live: LiveOpt = False,
    allow_partial: PartialOpt = False,
    allow_implausible: ImplausibleOpt = False,
    workload: Annotated[str, typer.Option(help="with --sources workload: alibaba-2020|alibaba-2023|synthetic")
                        ] = D.WORKLOAD,
    trace_dir: Annotated[Path | None, typer.Option(help="folder with the PAI 2020 *.tar.gz tables")] = None,
    seed: SeedOpt = D.SEED,
    load_factor: Annotated[float | None, typer.Option(
        help="workload load factor (1 = the trace's load; the synthetic year's is its scale / the rack preset's); "
             "default: what a default bundle needs (the synthetic year at the source cluster's size, a trace at "
             "its own load)")] = None,
    bandwidth_model: Annotated[str, typer.Option(
        help="input size per task (docs/workload.md): 'ai' (per-workload sizes of published AI jobs, default), "
             "'reference' (SustainCluster's histogram) or 'constant'")] = "ai",
) -> None:
    """Ingest grid signals, reference tables and workloads into the warehouse, validated.

    Runs the same Dagster assets as the UI, on the home's instance. With --regions all, partitions the
    mirror does not hold are skipped and listed; with explicit regions a missing file is an error.
    Exits 1 if any partition failed its checks (each is reported with its cause).
    """
    from dagster_project import runner
    from warehouse.ingest import in_mirror, writable_home

    quiet_dagster()
    outcomes: list = []
    workload_outcomes: list = []
    with failures(ctx, home):
        srcs = [s.strip() for s in sources.split(",") if s.strip()]
        bad = [s for s in srcs if s not in ALL_SOURCES]
        if bad:
            raise typer.BadParameter(f"unknown source(s) {bad}; choose from {ALL_SOURCES}")
        grid_srcs = [s for s in srcs if s != "workload"]
        if grid_srcs and not regions:
            raise typer.BadParameter(f"--regions is required for sources {grid_srcs}")
        codes = locations.parse_codes(regions) if grid_srcs else []
        years = parse_years(year)
        if "workload" in srcs:
            from pipelines.workload.derive import BANDWIDTH_MODELS
            from warehouse.ingest_workload import WORKLOADS

            if workload not in WORKLOADS:
                raise typer.BadParameter(f"unknown workload {workload!r}; choose from {WORKLOADS}")
            if bandwidth_model not in BANDWIDTH_MODELS:
                raise typer.BadParameter(f"unknown bandwidth model {bandwidth_model!r}; choose from {BANDWIDTH_MODELS}")
        h = writable_home(Home.resolve(home))
        m = resolve_mirror(mirror, home)
        with runner.open_instance(h) as instance:  # one instance for every run of the command
            if "workload" in srcs:
                workload_outcomes = runner.materialize_workload(
                    workload=workload, years=years, home=h, mirror=m, trace_dir=absolute(trace_dir), seed=seed,
                    load_factor=load_factor, bandwidth_model=bandwidth_model, live=live, instance=instance,
                    tags=command_tags(ctx),
                )
                _print_workload(workload_outcomes)
            if grid_srcs:
                skip_absent = regions.strip().lower() == "all" and not live
                with progress_bar("ingest") as progress:
                    task = progress.add_task("", total=len(codes) * len(years) + (1 if "network" in grid_srcs else 0))
                    outcomes = runner.materialize_sources(
                        regions=codes, years=years, sources=grid_srcs, home=h, mirror=m, live=live,
                        allow_partial=allow_partial, allow_implausible=allow_implausible, instance=instance,
                        skip=(lambda k, r, y: not in_mirror(k, r, y, m)) if skip_absent else None,
                        on_progress=lambda d: progress.update(task, advance=1, description=d), tags=command_tags(ctx),
                    )
                _print_outcomes(outcomes, h)
    if runner.failed(outcomes + workload_outcomes):
        raise typer.Exit(1)


def _print_workload(outcomes) -> None:
    for o in outcomes:
        if not o.ok:
            err_console.print(f"[red]workload {o.region} {o.year} FAILED:[/] {escape(o.error)}", soft_wrap=True)
            continue
        md = o.metadata
        t = Table(title=f"workload {o.region} {o.year}")
        t.add_column("figure")
        t.add_column("value", justify="right")
        t.add_row("tasks in the year", f"{md['tasks']:,}")
        t.add_row("source rows / kept", f"{md['source_rows']:,} / {md['kept']:,}")
        for reason, n in sorted(md["dropped"].items()):
            t.add_row(f"dropped: {reason}", f"{n:,}")
        for reason, n in sorted(md["issues"].items()):
            t.add_row(f"note: {reason}", f"{n:,}")
        t.add_row("tasks per 15 min (mean / p95 / max)",
                  f"{md['tasks_per_15min_mean']:.1f} / {md['tasks_per_15min_p95']:.0f} / "
                  f"{md['tasks_per_15min_max']:.0f}")
        t.add_row("mean cores / GPUs / mem GB / input GB",
                  f"{md['mean_cpu_cores']:.2f} / {md['mean_gpus']:.3f} / {md['mean_mem_gb']:.2f} / "
                  f"{md['mean_bandwidth_gb']:.3f}")
        console.print(t)


def plot_workload_cmd(
    ctx: typer.Context,
    workload: Annotated[str, typer.Option(help="alibaba-2020|alibaba-2023|synthetic")],
    year: YearOpt,
    out: Annotated[Path, typer.Option(help="folder for the PNG figures")] = Path("."),
    home: HomeOpt = None,
) -> None:
    """Write PNGs of the weekday × hour heatmap and the duration/resource distributions."""
    from pipelines.workload.plots import plot_workload
    from warehouse.ingest_workload import read_workload_tasks

    with failures(ctx, home):
        h = Home.resolve(home)
        tasks = read_workload_tasks(h, workload, year)
        if tasks.height == 0:
            raise GridshiftError(f"no {workload} tasks for {year} in {h.warehouse_path}; run: gridshift "
                                 f"ingest --sources workload --workload {workload} --year {year}")
        for p in plot_workload(tasks, year, absolute(out), name=workload):
            console.print(str(p))


def _print_outcomes(outcomes, home: Home) -> None:
    table = Table(title=f"ingested into {home.warehouse_path}")
    for col in ("table", "region", "year", "rows", "coverage", "estimated", "status"):
        table.add_column(col, justify="right" if col in ("rows", "coverage", "estimated") else "left")
    for o in outcomes:
        cov = o.metadata.get("coverage")
        est = o.metadata.get("estimated_share")
        status = "skipped (not in mirror)" if o.skipped else ("ok" if o.ok else "[red]FAILED[/]")
        table.add_row(
            o.asset, o.region or "-", str(o.year or "-"), str(o.metadata.get("rows", "")),
            f"{cov:.2%}" if cov is not None else "", f"{est:.1%}" if est is not None else "", status,
        )
    console.print(table)
    for o in outcomes:
        if not o.ok:
            err_console.print(f"[red]{o.label} FAILED:[/] {escape(o.error or o.error_type or 'no cause recorded')}",
                              soft_wrap=True)
    if any(o.error_type == "StorageError" for o in outcomes if not o.ok):  # no rerun fixes it by itself
        err_console.print(f"  next: {escape(HINTS['StorageError'])}", soft_wrap=True)
