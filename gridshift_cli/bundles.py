"""``gridshift export``, ``verify``, ``inspect`` and ``list``: scenario bundles, built through the Dagster
assets and read back."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from gridshift import export_defaults as D
from gridshift import locations
from gridshift import scale as scale_mod
from gridshift.home import Home
from gridshift_cli.common import (
    absolute,
    bundle_path,
    command_tags,
    console,
    err_console,
    failures,
    optional_home,
    parse_years,
    progress_bar,
    quiet_dagster,
    resolve_mirror,
)
from gridshift_cli.options import (
    BundleArg,
    HomeOpt,
    LiveOpt,
    MirrorOpt,
    PartialOpt,
    RegionsOpt,
    SeedOpt,
    YearsOpt,
)


def _fmt_pct(x) -> str:
    return "" if x is None else f"{x:.2%}"


def _quality_table(rows: list[dict], title: str) -> Table:
    table = Table(title=title)
    for col in ("region", "signal", "coverage", "estimated", "filled", "gaps", "max gap (h)"):
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


def export(
    ctx: typer.Context,
    regions: RegionsOpt,
    year: YearsOpt,
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
    seed: SeedOpt = D.SEED,
    flexibility: Annotated[str, typer.Option(
        help="task flexibility (allowed delay, suspend-resume, elastic scaling; docs/workload.md): 'default' "
             "(the cited model) or 'none'")] = D.FLEXIBILITY,
    scale: Annotated[str | None, typer.Option(
        help="size of the synthetic workload and its sized sites, × the Alibaba PAI 2020 cluster (6,742 GPUs): "
             "a number in [0.01, 10], 'source' (= 1, the default) or 'rack' (the size before issue 34, ×0.0306; "
             "gridshift/scale.py); a trace workload keeps its own size", show_default=False)] = None,
    gpu: Annotated[str, typer.Option(
        help="GPU generation of every site: H100 (the default), A100 or V100 (the model before issue 34; 8-GPU DGX "
             "servers with their host power for A100/H100; gridshift/dc_params.py GPU_GENERATIONS)")] = D.GPU,
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
    """Build a versioned, content-addressed 15-minute bundle per year (ingesting missing inputs first).

    Every step runs as a Dagster asset on the home's instance: ./run.sh ui shows the runs and the
    lineage from the raw files to the bundle. --year takes a range (2022-2023): one bundle per year.
    """
    from dagster_project import runner
    from gridshift.bundle import check_integrity
    from scenario_builder.bundle import BuildParams
    from warehouse.ingest import writable_home

    quiet_dagster()
    with failures(ctx, home):
        years = parse_years(year)
        base = dict(
            regions=tuple(locations.parse_codes(regions)), workload=workload, provider=provider,
            carbon_basis=carbon, seed=seed, max_gap_hours=max_gap_hours, max_edge_fill_hours=max_edge_fill_hours,
            datacenters=datacenters if datacenters in ("sized", "reference") else str(absolute(Path(datacenters))),
            target_utilization=target_utilization, physics=physics, flexibility=flexibility,
            scale=None if scale is None else scale_mod.parse(scale), gpu=gpu,
        )
        h = writable_home(Home.resolve(home))
        with progress_bar("export") as progress:
            task = progress.add_task("", total=None, visible=False)
            built = runner.export_bundles(
                [BuildParams(year=y, **base) for y in years], home=h, mirror=resolve_mirror(mirror, home),
                out=absolute(out), live=live, allow_partial=allow_partial,
                on_plan=lambda steps: progress.update(task, total=steps, visible=True),
                on_progress=lambda d: progress.update(task, advance=1, description=d), tags=command_tags(ctx),
            )
        for done in built:
            manifest = check_integrity(done.path)
            console.print(_quality_table(_quality_rows(manifest), f"data quality {manifest['year']}"))
            console.print(f"bundle {'(already present) ' if done.reused else ''}[bold]{done.path}[/]")
            console.print(f"id {done.bundle_id}")


def verify(bundle: BundleArg, home: HomeOpt = None) -> None:
    """Check a bundle (a directory, or a bundle id under <home>/bundles) as sim_core.load does: only the
    format's files, no links, every sha256 and the id, then every value against the contract; exit 1 naming
    each problem (file, column, rows, values)."""
    from gridshift.bundle import verify_bundle

    res = verify_bundle(bundle_path(bundle, optional_home(absolute(home))))
    if not res.ok:
        for p in res.problems:
            err_console.print(f"[red]FAILED[/] {p}", soft_wrap=True)
        raise typer.Exit(1)
    console.print(f"ok {res.bundle_id}: files intact and every value within the bundle contract")


#: the signals table of ``inspect``: header (with its unit), summary key, format
SIGNAL_COLUMNS = (
    ("carbon mean (gCO2eq/kWh)", "carbon_mean", "{:.1f}"),
    ("price mean (USD/MWh)", "price_mean", "{:.1f}"),
    ("price min (USD/MWh)", "price_min", "{:.1f}"),
    ("price max (USD/MWh)", "price_max", "{:.1f}"),
    ("temp mean (°C)", "temp_mean", "{:.1f}"),
    ("wet-bulb max (°C)", "wetbulb_max", "{:.1f}"),
)
#: the task rows of ``inspect``: label, summary key, scale from the column's unit, format with the unit
TASK_ROWS = (
    ("mean duration", "mean_duration_s", 1 / 3600, "{:.2f} h"),
    ("mean CPU", "mean_cpu_cores", 1.0, "{:.2f} cores"),
    ("mean GPUs", "mean_gpus", 1.0, "{:.2f} GPUs"),
    ("mean memory", "mean_mem_gb", 1.0, "{:.1f} GB"),
    ("mean input data", "mean_bandwidth_gb", 1.0, "{:.2f} GB"),
)


def _value(v) -> str:
    """A manifest parameter as text: lists comma-separated, mappings as ``key: value`` lines."""
    if isinstance(v, dict):
        return "\n".join(f"{k}: {_value(x)}" for k, x in v.items()) or "-"
    if isinstance(v, list | tuple):
        return ", ".join(_value(x) for x in v) or "-"
    return f"{v:g}" if isinstance(v, float) else str(v)


def summary_tables(s: dict) -> list:
    """``inspect``'s summary of a bundle (``scenario_builder.inspect.summary``): what it is, its parameters,
    its tasks and its signals per region, each quantity with its unit."""
    head = Table(title=f"bundle {s['bundle_id']}", show_header=False)
    head.add_column("", style="bold")
    head.add_column("")
    head.add_row("path", str(s["path"]))
    head.add_row("size", f"{s['bytes']:,} bytes ({s['bytes'] / 1e6:.1f} MB)")
    head.add_row("gridshift", str(s["gridshift_version"]))
    head.add_row("year (UTC)", f"{s['year']}: {s['n_steps']:,} steps of 15 min")
    head.add_row("locations", ", ".join(s["locations"]))
    params = Table(title="parameters")
    params.add_column("parameter")
    params.add_column("value")
    for k, v in sorted((s["parameters"] or {}).items()):
        params.add_row(k, _value(v))
    t = s["tasks"]
    tasks = Table(title="tasks")
    tasks.add_column("quantity")
    tasks.add_column("value", justify="right")
    tasks.add_row("tasks", f"{t['n_tasks']:,}")
    for label, k, scale, fmt in TASK_ROWS if t["n_tasks"] else ():
        tasks.add_row(label, fmt.format(t[k] * scale))
    sig = Table(title="signals (mean, min, max over the year)")
    sig.add_column("region")
    for header, _k, _f in SIGNAL_COLUMNS:
        sig.add_column(header, justify="right")
    for r in s["signal_stats"]:
        sig.add_row(r["location"], *("" if r[k] is None else f.format(r[k]) for _h, k, f in SIGNAL_COLUMNS))
    return [head, params, tasks, sig]


def inspect_cmd(
    ctx: typer.Context,
    bundle: BundleArg,
    plot: Annotated[bool, typer.Option("--plot", help="write PNGs of the signals per region and the workload")] = False,
    plot_dir: Annotated[Path | None, typer.Option(help="where to write the PNGs (default ./<bundle_id>-plots)")] = None,
    home: HomeOpt = None,
) -> None:
    """Summarize a bundle (a directory, or a bundle id under <home>/bundles), and optionally plot it."""
    from scenario_builder.inspect import plot as do_plot
    from scenario_builder.inspect import read_manifest, summary

    path = bundle_path(bundle, optional_home(absolute(home)))
    with failures(ctx, absolute(home)):  # the failure log goes under the home given, not the working directory
        s = summary(path.absolute())
    for table in summary_tables(s):
        console.print(table)
    console.print(_quality_table(_quality_rows(read_manifest(path)), "data quality"))
    if plot:
        target = plot_dir or Path.cwd() / f"{s['bundle_id']}-plots"
        for p in do_plot(path, target):
            console.print(f"wrote {p}")


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
