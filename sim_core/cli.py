"""Command line.

``python -m sim_core run BUNDLE --policy lowest_carbon --seed 0 [--days 7] [--power always_on] [--forecast oracle]
[--out DIR]``
``python -m sim_core compare BUNDLE --policies local_only,lowest_carbon --seeds 0,1,2 [--days 7] [--out DIR]
[--results s3://bucket/prefix] [--scheduler tcp://host:8786]``
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import typer
from rich.console import Console
from rich.table import Table

# (the values of sim_core.forecast, repeated here so that `--help` imports no kernel module)
FORECAST_DEFAULT = "calibrated"
HORIZON_DEFAULT = 24
FORECAST_HELP = ("what policies are told of the future: calibrated (actual + published day-ahead error), "
                 "persistence, seasonal_naive, seasonal_naive_weekly, or oracle (perfect foresight)")
HORIZON_HELP = "forecast horizon in hours (24..336)"
ISSUE_EVERY_DEFAULT = 60
ISSUE_EVERY_HELP = ("minutes between forecast issues (15..1440, a multiple of 15): policies see the latest issued "
                    "forecast between issues")


def policy_list() -> str:
    """Every policy's name, from the registry (pure Python: no kernel is imported)."""
    from sim_core.policies import registry

    return ("Policies: " + ", ".join(registry.names()) + ". The published baselines: docs/baselines.md; adding "
            "a policy: docs/adding_a_policy.md.")


def make_app() -> typer.Typer:
    """The command line, its policy lists read from ``sim_core.policies.registry`` when it is made (a policy
    registered before this call is listed in ``run --help`` and ``compare --help``)."""
    app = typer.Typer(add_completion=False, help="Run the gridshift cluster simulation on a bundle.")
    app.callback()(_main)
    app.command(epilog=policy_list())(run)
    app.command(epilog=policy_list())(compare)
    return app


def _main() -> None:
    """sim_core command line."""


def run(
    bundle: str = typer.Argument(..., help="bundle directory, or a bundle id under <home>/bundles"),  # noqa: B008
    policy: str = typer.Option("lowest_carbon", help="policy (the list below)"),  # noqa: B008
    seed: int = typer.Option(0, help="run seed"),  # noqa: B008
    days: float | None = typer.Option(None, help="simulate only this many days"),  # noqa: B008
    start: str | None = typer.Option(None, help="start (ISO UTC time or step index)"),  # noqa: B008
    out: Path | None = typer.Option(None, help="write steps/tasks/transfers Parquet and run.json here"),  # noqa: B008
    no_defer: bool = typer.Option(False, "--no-defer", help="disallow deferral"),  # noqa: B008
    sla_multiplier: float = typer.Option(1.5, help="deadline = arrival + m x duration"),  # noqa: B008
    power: str = typer.Option("managed", help="server power: managed (idle servers switched off) or always_on "  # noqa: B008
                              "(every server on: the reference cluster's model)"),
    forecast: str = typer.Option(FORECAST_DEFAULT, help=FORECAST_HELP),  # noqa: B008
    forecast_horizon_h: int = typer.Option(HORIZON_DEFAULT, help=HORIZON_HELP),  # noqa: B008
    forecast_issue_every_min: int = typer.Option(ISSUE_EVERY_DEFAULT, help=ISSUE_EVERY_HELP),  # noqa: B008
    home: Path | None = typer.Option(None, help="gridshift home whose bundles/ a bundle id names (default "  # noqa: B008
                                     "$GRIDSHIFT_HOME, else ./.gridshift if it exists)"),
) -> None:
    """Run one policy on a bundle and print the totals."""
    import sim_core

    console = Console()
    path = _bundle_path(bundle, _resolve_home(home, False))
    t = time.perf_counter()
    try:
        scenario = sim_core.load(path)
    except sim_core.BundleError as err:
        raise typer.BadParameter(str(err), param_hint="BUNDLE") from err
    t_load = time.perf_counter() - t
    st: int | str | None = int(start) if start is not None and start.isdigit() else start
    t = time.perf_counter()
    try:
        res = sim_core.run(scenario, policy, seed=seed, days=days, start=st,
                           allow_defer=not no_defer, sla_multiplier=sla_multiplier, power=power,
                           forecast=forecast, forecast_horizon_h=forecast_horizon_h,
                           forecast_issue_every_min=forecast_issue_every_min)
    except sim_core.RunOptionsError as err:  # an unknown policy, a window outside the bundle...
        raise typer.BadParameter(str(err)) from err
    t_run = time.perf_counter() - t
    from sim_core.forecast import caption

    table = Table(title=f"{policy} on {res.bundle_id} (seed {seed}, gridshift {res.gridshift_version})\n"
                        f"forecast: {caption(res.options)}")
    table.add_column("metric")
    table.add_column("value", justify="right")
    for k, v in res.totals.items():
        table.add_row(k, f"{v:,.4f}" if isinstance(v, float) else f"{v:,}")
    console.print(table)
    console.print(f"load {t_load:.2f} s, run {t_run:.2f} s")
    if out is not None:
        res.to_parquet(out)
        console.print(f"wrote {out}")


def _bundle_path(bundle: str, h) -> Path:
    """A bundle directory, or a bundle id under the home's bundles folder (never outside it)."""
    from gridshift.home import UnsafePathError, safe_join

    path = Path(bundle)
    if not path.is_dir() and h is not None:
        try:
            path = safe_join(h.bundles_dir, bundle)
        except UnsafePathError as err:
            raise typer.BadParameter(str(err), param_hint="BUNDLE") from err
    if not path.is_dir():
        raise typer.BadParameter(f"no bundle directory {bundle!r}" + (f" (nor under {h.bundles_dir})" if h else ""),
                                 param_hint="BUNDLE")
    return path


def _split_list(raw: str) -> list[str]:
    return [p.strip() for p in raw.split(",") if p.strip()]


def _parse_policies(raw: str) -> list[str]:
    from sim_core.bench.sweep import check_policies

    try:
        return check_policies(_split_list(raw))
    except ValueError as err:
        raise typer.BadParameter(str(err), param_hint="--policies") from err


def _parse_seeds(raw: str) -> list[int]:
    from sim_core.bench.sweep import check_seeds

    seeds = []
    for p in _split_list(raw):
        try:
            seeds.append(int(p))
        except ValueError:
            raise typer.BadParameter(f"seed {p!r} is not an integer", param_hint="--seeds") from None
    try:
        return check_seeds(seeds)
    except ValueError as err:
        raise typer.BadParameter(str(err), param_hint="--seeds") from err


def summary_table(cmp) -> Table:
    """The summary as a rich table that fits 120 columns: one row per policy, mean ± 95 % CI over seeds
    (every headline metric is in the output files: summary.md, summary.parquet)."""
    from rich import box

    from sim_core.bench.report import compact_rows, summary_caption

    header, rows = compact_rows(cmp)
    table = Table(caption=summary_caption(cmp), box=box.SIMPLE_HEAD, padding=(0, 1), caption_justify="left")
    table.add_column(header[0], no_wrap=True)
    for h in header[1:]:
        table.add_column(h, justify="right", no_wrap=True)
    for r in rows:
        table.add_row(*r)
    return table


def _resolve_home(home: Path | None, no_store: bool):
    """--home, else $GRIDSHIFT_HOME, else ./.gridshift if it exists; None: no warehouse."""
    import os

    from gridshift.home import Home

    if no_store:
        return None
    if home is not None:
        return Home.resolve(home)
    if os.environ.get("GRIDSHIFT_HOME"):
        return Home.resolve()
    default = Home.resolve(".gridshift")
    return default if default.root.is_dir() else None


def compare(
    bundle: str = typer.Argument(..., help="bundle directory, or a bundle id under <home>/bundles"),  # noqa: B008
    policies: str = typer.Option(",".join(("local_only", "round_robin", "lowest_carbon", "lowest_price",  # noqa: B008
                                          "defer_to_greener")),
                          help="comma-separated policies (the list below)"),
    seeds: str = typer.Option("0,1,2", help="comma-separated seeds"),  # noqa: B008
    days: float | None = typer.Option(None, help="simulate only this many days"),  # noqa: B008
    start: str | None = typer.Option(None, help="start (ISO UTC time or step index)"),  # noqa: B008
    out: Path | None = typer.Option(None, help="write runs.parquet, summary.parquet, compare.json, PNGs here"),  # noqa: B008
    home: Path | None = typer.Option(None, help="gridshift home (default $GRIDSHIFT_HOME, else ./.gridshift if it "  # noqa: B008
                                     "exists): runs are stored in and reused from its warehouse"),
    no_store: bool = typer.Option(False, "--no-store", help="neither read nor write the warehouse"),  # noqa: B008
    recompute: bool = typer.Option(False, "--recompute", help="simulate every run even if stored"),  # noqa: B008
    no_figures: bool = typer.Option(False, "--no-figures", help="write no PNGs"),  # noqa: B008
    no_defer: bool = typer.Option(False, "--no-defer", help="disallow deferral"),  # noqa: B008
    sla_multiplier: float = typer.Option(1.5, help="deadline = arrival + m x duration"),  # noqa: B008
    power: str = typer.Option("managed", help="server power: managed or always_on"),  # noqa: B008
    forecast: str = typer.Option(FORECAST_DEFAULT, help=FORECAST_HELP),  # noqa: B008
    forecast_horizon_h: int = typer.Option(HORIZON_DEFAULT, help=HORIZON_HELP),  # noqa: B008
    forecast_issue_every_min: int = typer.Option(ISSUE_EVERY_DEFAULT, help=ISSUE_EVERY_HELP),  # noqa: B008
    optimum: bool = typer.Option(False, "--optimum", help="also solve the offline optimum (a lower bound, "  # noqa: B008
                                 "HiGHS) per seed and report each policy's gap to it"),
    results: str | None = typer.Option(None, help="where each run's Parquet object goes: a folder or "  # noqa: B008
                                       "s3://bucket/prefix (default <home>/results; S3 credentials from AWS_* "
                                       "environment variables)"),
    scheduler: str | None = typer.Option(None, help="run the simulations on this Dask scheduler "  # noqa: B008
                                         "(tcp://host:8786); workers need the bundle at the same path and the "
                                         "--results URL (docs/distributed.md)"),
) -> None:
    """Run every policy x seed on one bundle, print the summary, write outputs, store the runs."""
    import sim_core
    from sim_core.bench.report import assumptions_line, write_outputs
    from sim_core.bench.sweep import compare as run_compare

    pols = _parse_policies(policies)
    sds = _parse_seeds(seeds)
    h = _resolve_home(home, no_store)
    path = _bundle_path(bundle, h)
    console = Console() if sys.stdout.isatty() else Console(width=120)  # logs and pipes: the table's width
    try:
        scenario = sim_core.load(path)
    except sim_core.BundleError as err:
        raise typer.BadParameter(str(err), param_hint="BUNDLE") from err
    st: int | str | None = int(start) if start is not None and start.isdigit() else start
    from gridshift.errors import GridshiftError
    from gridshift.objectstore import StoreURLError

    store = None
    try:
        if h is not None:
            from warehouse.benchmark_store import WarehouseRunStore  # lazy: sim_core works without the warehouse

            store = WarehouseRunStore.for_home(h, results_url=results)
        elif results is not None:
            from gridshift.results import ResultStore

            store = ResultStore(results)
    except StoreURLError as err:
        raise typer.BadParameter(str(err), param_hint="--results") from err
    if scheduler is not None and store is None:
        raise typer.BadParameter("a distributed sweep needs --results (or a home) for the workers' Parquet objects",
                                 param_hint="--scheduler")

    def progress(key, reused: bool) -> None:
        console.print(f"  {key.policy:<20} seed {key.seed:<4} {'stored' if reused else 'simulated'}")
        console.file.flush()  # a line per run as it ends, also into a pipe or a log (block-buffered there)

    client = None
    if scheduler is not None:
        from distributed import Client

        try:
            client = Client(scheduler, timeout="15s")
        except (OSError, TimeoutError, ValueError) as err:
            raise typer.BadParameter(f"cannot reach the Dask scheduler {scheduler}: {err}",
                                     param_hint="--scheduler") from err
        console.print(f"Dask scheduler {scheduler}: {len(client.scheduler_info()['workers'])} worker(s)")
    try:
        cmp = run_compare(scenario, pols, sds, days=days, start=st, store=store, recompute=recompute,
                          on_run=progress, allow_defer=not no_defer, sla_multiplier=sla_multiplier, power=power,
                          forecast=forecast, forecast_horizon_h=forecast_horizon_h,
                          forecast_issue_every_min=forecast_issue_every_min, optimum=optimum, executor=client,
                          results_url=store.results.url if hasattr(store, "results") else getattr(store, "url", None))
    except GridshiftError as err:  # a missing or changed result object, an unreachable store...
        Console(stderr=True).print(f"[red]error:[/red] {err}", markup=True, highlight=False)
        raise typer.Exit(1) from err
    except ValueError as err:  # a window outside the bundle, a start off the step grid...
        raise typer.BadParameter(str(err)) from err
    finally:
        if client is not None:
            client.close()
    console.print(summary_table(cmp))
    console.print(assumptions_line(cmp), highlight=False)
    where = f"{h.warehouse_path}, objects under {store.results.url}" if h is not None else (
        f"no warehouse, objects under {store.url}" if store is not None else "no warehouse")
    console.print(f"{len(cmp.computed)} run(s) simulated, {len(cmp.reused)} reused ({where})")
    if out is not None:
        write_outputs(cmp, out, figures=not no_figures)
        console.print(f"wrote {out}")


app = make_app()


def main() -> None:
    make_app()()
