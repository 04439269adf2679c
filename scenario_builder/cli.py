"""``scenario_builder``: the command-line shell over gridshift's assets (same functions as the UI)."""

from __future__ import annotations

import logging
import os
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from gridshift import __version__, locations
from gridshift import export_defaults as D
from gridshift.cli import HINTS, reporting
from gridshift.errors import GridshiftError
from gridshift.home import Home
from gridshift.quality import MIN_COVERAGE

app = typer.Typer(add_completion=False, no_args_is_help=True, help="Build and inspect gridshift scenarios.")
console = Console()
err_console = Console(stderr=True)

HomeOpt = Annotated[
    Path | None, typer.Option("--home", help="gridshift home (default $GRIDSHIFT_HOME or ./.gridshift)")
]
MirrorOpt = Annotated[
    Path | None, typer.Option("--mirror", help="local mirror of upstream files (default $GRIDSHIFT_MIRROR)")
]
LiveOpt = Annotated[bool, typer.Option("--live", help="fetch from the publishers what the mirror (and, for "
                                       "workloads, --trace-dir) lacks (tokens from env/.env; see docs/sources.md)")]
PartialOpt = Annotated[bool, typer.Option("--allow-partial", help="accept, and record, a partition covering less "
                                          f"than {MIN_COVERAGE:.0%} of its year (refused by default)")]
ImplausibleOpt = Annotated[bool, typer.Option(
    "--allow-implausible", help="accept, and record, a partition failing an overridable plausibility check (a "
    "zone's or market's mean below its floor; docs/sources.md, 'Plausibility')")]
ALL_SOURCES = ("carbon", "price", "weather", "network", "workload")
DEFAULT_SOURCES = ("carbon", "price", "weather", "network")


@app.callback()
def _main(ctx: typer.Context,
          debug: Annotated[bool, typer.Option("--debug", help="on failure, show the full traceback")] = False
          ) -> None:
    """Build and inspect gridshift scenarios."""
    ctx.obj = {"debug": debug}  # the commands' context: read by _reporting


def _abs(path: Path | None) -> Path | None:
    """Relative paths are the caller's: resolved from the directory the command was run in."""
    return path.expanduser().absolute() if path is not None else None


def _years(text: str) -> list[int]:
    years = []
    try:
        for part in text.split(","):
            part = part.strip()
            if "-" in part:
                lo, hi = part.split("-", 1)
                years += list(range(int(lo), int(hi) + 1))
            elif part:
                years.append(int(part))
    except ValueError:
        raise typer.BadParameter(f"invalid year(s) {text!r}") from None
    if not years or any(y < 1990 or y > 2100 for y in years):
        raise typer.BadParameter(f"invalid year(s) {text!r}")
    return years


def _mirror(mirror: Path | None) -> Path | None:
    if mirror is not None:
        return _abs(mirror)
    env = os.environ.get("GRIDSHIFT_MIRROR")
    return Path(env).expanduser().absolute() if env else None


def _quiet_dagster() -> None:
    for name in ("dagster", "dagster.builtin"):
        logging.getLogger(name).setLevel(logging.CRITICAL)


def _reporting(ctx: typer.Context, home: Path | None):
    """Failures print one short block; the full report goes to <home>/logs (or the terminal with --debug)."""
    h = Home.resolve(home)
    debug = bool((ctx.obj or {}).get("debug"))
    return reporting(err_console, h.logs_dir, "scenario_builder", debug=debug, home=h.root)


def _progress(label: str) -> Progress:
    return Progress(TextColumn(f"[bold]{label}[/]"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                    TextColumn("{task.description}"), console=err_console, transient=True)


@app.command()
def ingest(
    ctx: typer.Context,
    year: Annotated[str, typer.Option(help="year(s): 2023, 2022,2023 or 2022-2023")],
    regions: Annotated[str, typer.Option(help="comma-separated location codes, or 'all'")] = "",
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
    seed: Annotated[int, typer.Option(help="workload seed")] = D.SEED,
    load_factor: Annotated[float, typer.Option(help="workload load factor (1 = the trace's load)")] = 1.0,
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

    _quiet_dagster()
    outcomes: list = []
    workload_outcomes: list = []
    with _reporting(ctx, home):
        srcs = [s.strip() for s in sources.split(",") if s.strip()]
        bad = [s for s in srcs if s not in ALL_SOURCES]
        if bad:
            raise typer.BadParameter(f"unknown source(s) {bad}; choose from {ALL_SOURCES}")
        grid_srcs = [s for s in srcs if s != "workload"]
        if grid_srcs and not regions:
            raise typer.BadParameter(f"--regions is required for sources {grid_srcs}")
        codes = locations.parse_codes(regions) if grid_srcs else []
        years = _years(year)
        if "workload" in srcs:
            from pipelines.workload.derive import BANDWIDTH_MODELS
            from warehouse.ingest_workload import WORKLOADS

            if workload not in WORKLOADS:
                raise typer.BadParameter(f"unknown workload {workload!r}; choose from {WORKLOADS}")
            if bandwidth_model not in BANDWIDTH_MODELS:
                raise typer.BadParameter(f"unknown bandwidth model {bandwidth_model!r}; choose from {BANDWIDTH_MODELS}")
        h = writable_home(Home.resolve(home))
        m = _mirror(mirror)
        with runner.open_instance(h) as instance:  # one instance for every run of the command
            if "workload" in srcs:
                workload_outcomes = runner.materialize_workload(
                    workload=workload, years=years, home=h, mirror=m, trace_dir=_abs(trace_dir), seed=seed,
                    load_factor=load_factor, bandwidth_model=bandwidth_model, live=live, instance=instance,
                )
                _print_workload(workload_outcomes)
            if grid_srcs:
                skip_absent = regions.strip().lower() == "all" and not live
                with _progress("ingest") as progress:
                    task = progress.add_task("", total=len(codes) * len(years) + (1 if "network" in grid_srcs else 0))
                    outcomes = runner.materialize_sources(
                        regions=codes, years=years, sources=grid_srcs, home=h, mirror=m, live=live,
                        allow_partial=allow_partial, allow_implausible=allow_implausible, instance=instance,
                        skip=(lambda k, r, y: not in_mirror(k, r, y, m)) if skip_absent else None,
                        on_progress=lambda d: progress.update(task, advance=1, description=d),
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


@app.command("plot-workload")
def plot_workload_cmd(
    ctx: typer.Context,
    workload: Annotated[str, typer.Option(help="alibaba-2020|alibaba-2023|synthetic")],
    year: Annotated[int, typer.Option(help="year the workload was derived for")],
    out: Annotated[Path, typer.Option(help="folder for the PNG figures")] = Path("."),
    home: HomeOpt = None,
) -> None:
    """Write PNGs of the weekday × hour heatmap and the duration/resource distributions."""
    from pipelines.workload.plots import plot_workload
    from warehouse.ingest_workload import read_workload_tasks

    with _reporting(ctx, home):
        h = Home.resolve(home)
        tasks = read_workload_tasks(h, workload, year)
        if tasks.height == 0:
            raise GridshiftError(f"no {workload} tasks for {year} in {h.warehouse_path}; run: scenario_builder "
                                 f"ingest --sources workload --workload {workload} --year {year}")
        for p in plot_workload(tasks, year, _abs(out), name=workload):
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


# ----------------------------------------------------------------------------------------- bundles
def _fmt_pct(x) -> str:
    return "" if x is None else f"{x:.2%}"


def _quality_table(rows: list[dict], title: str) -> Table:
    table = Table(title=title)
    for col in ("region", "signal", "coverage", "estimated", "filled", "gaps", "max gap h"):
        table.add_column(col, justify="left" if col in ("region", "signal") else "right")
    for r in rows:
        table.add_row(
            r["location"], r["signal"], _fmt_pct(r["coverage"]), _fmt_pct(r["estimated_share"]),
            str(r["filled_count"]), str(r["gap_count"]), f"{r['max_gap_hours']:g}",
        )
    return table


def _quality_rows(manifest: dict) -> list[dict]:
    return [{"location": loc, "signal": sig, **q}
            for loc in manifest.get("locations", []) for sig, q in (manifest.get("quality") or {}).get(loc, {}).items()]


@app.command()
def export(
    ctx: typer.Context,
    regions: Annotated[str, typer.Option(help="comma-separated location codes (datacenter order)")],
    year: Annotated[int, typer.Option(help="calendar year (UTC)")],
    workload: Annotated[str, typer.Option(help="synthetic | alibaba-2020 | alibaba-2023 | none")] = D.WORKLOAD,
    datacenters: Annotated[str, typer.Option(
        help="capacities: 'sized' from the workload for --target-utilization (default), 'reference' "
             "(SustainCluster's cluster), an override file (JSON or CSV) applied to the reference values, "
             "or a sites file (a 'site' column: several datacenters per location, cloud regions; "
             "docs/bundles.md)")
    ] = D.DATACENTERS,
    target_utilization: Annotated[float, typer.Option(
        help="with --datacenters sized: the mean share of each site's capacity its local demand uses")
    ] = D.TARGET_UTILIZATION,
    physics: Annotated[str, typer.Option(
        help="facility model of every site: 'default' (hybrid dry cooler with adiabatic pre-cooling above "
             "18.3 degC, water-side economizer; docs/simulation.md), or 'gridshift-0.1' (the facility before "
             "the climate-sensitive revision, wet cooling tower; with --datacenters reference and "
             "power=always_on it reproduces that version's numbers)")] = D.PHYSICS,
    provider: Annotated[str, typer.Option(help="cloud provider for egress prices and paths: aws|gcp|azure")
                        ] = D.PROVIDER,
    carbon: Annotated[str, typer.Option(help="carbon intensity basis: direct | lca")] = D.CARBON_BASIS,
    seed: Annotated[int, typer.Option(help="workload seed (also draws the task flexibility)")] = D.SEED,
    flexibility: Annotated[str, typer.Option(
        help="task flexibility (allowed delay, suspend-resume, elastic scaling; docs/workload.md): 'default' "
             "(the cited model) or 'none'")] = D.FLEXIBILITY,
    max_gap_hours: Annotated[float, typer.Option(help="longest gap filled (flagged) before the build fails")
                             ] = D.MAX_GAP_HOURS,
    max_edge_fill_hours: Annotated[
        float, typer.Option(help="longest year-edge span with no neighbouring-year data held (flagged)")
    ] = D.MAX_EDGE_FILL_HOURS,
    out: Annotated[Path | None, typer.Option(help="output folder (default <home>/bundles)")] = None,
    mirror: MirrorOpt = None,
    home: HomeOpt = None,
    live: LiveOpt = False,
    allow_partial: PartialOpt = False,
) -> None:
    """Build a versioned, content-addressed 15-minute bundle (ingesting missing inputs first).

    Every step runs as a Dagster asset on the home's instance: ./run.sh ui shows the runs and the
    lineage from the raw files to the bundle.
    """
    from dagster_project import runner
    from gridshift.bundle import check_integrity
    from scenario_builder.bundle import BuildParams
    from warehouse.ingest import writable_home

    _quiet_dagster()
    with _reporting(ctx, home):
        params = BuildParams(
            regions=tuple(locations.parse_codes(regions)), year=year, workload=workload, provider=provider,
            carbon_basis=carbon, seed=seed, max_gap_hours=max_gap_hours, max_edge_fill_hours=max_edge_fill_hours,
            datacenters=datacenters if datacenters in ("sized", "reference") else str(_abs(Path(datacenters))),
            target_utilization=target_utilization, physics=physics, flexibility=flexibility,
        )
        h = writable_home(Home.resolve(home))
        with _progress("ingest") as progress:
            task = progress.add_task("", total=None, visible=False)
            done = runner.export_bundle(
                params, home=h, mirror=_mirror(mirror), out=_abs(out), live=live, allow_partial=allow_partial,
                on_plan=lambda p: progress.update(task, total=p.steps, visible=p.steps > 0),
                on_progress=lambda d: progress.update(task, advance=1, description=d),
            )
        manifest = check_integrity(done.path)
    console.print(_quality_table(_quality_rows(manifest), "data quality"))
    console.print(f"bundle {'(already present) ' if done.reused else ''}[bold]{done.path}[/]")
    console.print(f"id {done.bundle_id}")


@app.command()
def verify(bundle: Annotated[Path, typer.Argument(help="bundle directory")]) -> None:
    """Check a bundle as sim_core.load does: only the format's files, no links, every sha256 and the id,
    then every value against the contract; exit 1 naming each problem (file, column, rows, values)."""
    from gridshift.bundle import verify_bundle

    res = verify_bundle(bundle)
    if not res.ok:
        for p in res.problems:
            err_console.print(f"[red]FAILED[/] {p}", soft_wrap=True)
        raise typer.Exit(1)
    console.print(f"ok {res.bundle_id}: files intact and every value within the bundle contract")


@app.command("inspect")
def inspect_cmd(
    ctx: typer.Context,
    bundle: Annotated[Path, typer.Argument(help="bundle directory")],
    plot: Annotated[bool, typer.Option("--plot", help="write PNGs of the signals per region and the workload")] = False,
    plot_dir: Annotated[Path | None, typer.Option(help="where to write the PNGs (default ./<bundle_id>-plots)")] = None,
) -> None:
    """Summarize a bundle (and optionally plot it)."""
    from scenario_builder.inspect import plot as do_plot
    from scenario_builder.inspect import read_manifest, summary

    with _reporting(ctx, None):
        s = summary(_abs(bundle))
    p = s["parameters"] or {}
    console.print(f"[bold]bundle {s['bundle_id']}[/] ({s['bytes'] / 1e6:.1f} MB, gridshift {s['gridshift_version']})")
    console.print(f"year {s['year']}, {s['n_steps']} steps; locations {', '.join(s['locations'])}")
    console.print("parameters: " + ", ".join(f"{k}={v}" for k, v in sorted(p.items())))
    t = s["tasks"]
    console.print(f"tasks: {t['n_tasks']:,}" + (
        f" (mean duration {t['mean_duration_s'] / 3600:.2f} h, {t['mean_cpu_cores']:.2f} cores, "
        f"{t['mean_gpus']:.2f} GPUs, {t['mean_mem_gb']:.1f} GB, input {t['mean_bandwidth_gb']:.2f} GB)"
        if t["n_tasks"] else ""))
    st = Table(title="signals")
    for col in ("region", "carbon mean", "price mean", "price min", "price max", "temp mean", "wet-bulb max"):
        st.add_column(col, justify="left" if col == "region" else "right")
    for r in s["signal_stats"]:
        st.add_row(r["location"], f"{r['carbon_mean']:.1f}", f"{r['price_mean']:.1f}", f"{r['price_min']:.1f}",
                   f"{r['price_max']:.1f}", f"{r['temp_mean']:.1f}", f"{r['wetbulb_max']:.1f}")
    console.print(st)
    console.print(_quality_table(_quality_rows(read_manifest(bundle)), "data quality"))
    if plot:
        target = plot_dir or Path.cwd() / f"{s['bundle_id']}-plots"
        for path in do_plot(bundle, target):
            console.print(f"wrote {path}")


@app.command("list")
def list_cmd(home: HomeOpt = None) -> None:
    """List the bundles in the gridshift home."""
    from scenario_builder.inspect import list_bundles

    h = Home.resolve(home)
    rows = list_bundles(h.bundles_dir)
    table = Table(title=f"bundles in {h.bundles_dir}")
    for col in ("id", "year", "locations", "workload", "tasks", "MB"):
        table.add_column(col, justify="right" if col in ("tasks", "MB") else "left")
    for r in rows:
        if "error" in r:
            table.add_row(r["bundle_id"], "", "[red]unreadable manifest[/]", "", "", "")
            continue
        table.add_row(r["bundle_id"], str(r["year"]), ",".join(r["locations"]), str(r["workload"]),
                      f"{r['n_tasks']:,}" if r["n_tasks"] is not None else "", f"{r['bytes'] / 1e6:.1f}")
    console.print(table)


@app.command()
def version() -> None:
    """Print the gridshift version."""
    console.print(__version__)


def main() -> None:  # pragma: no cover - console entry
    app()
