"""``gridshift run``, ``compare`` and ``optimum``: the cluster simulation on a bundle (``sim_core``), its
runs stored in and reused from the home's warehouse and results URL."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from gridshift.home import RESULTS_URL_ENV
from gridshift_cli.common import bundle_path, optional_home, start_arg
from gridshift_cli.options import BundleArg, DaysOpt, HomeOpt, SeedOpt, StartOpt
from gridshift_cli.progress import Phases

DEFAULT_POLICIES = ("local_only", "round_robin", "lowest_carbon", "lowest_price", "defer_to_greener")


def run(
    bundle: BundleArg,
    policy: Annotated[str, typer.Option(help="policy (the list below)")] = "lowest_carbon",
    seed: SeedOpt = 0,
    days: DaysOpt = None,
    start: StartOpt = None,
    out: Annotated[Path | None, typer.Option(help="write steps/tasks/transfers Parquet and run.json here")] = None,
    home: HomeOpt = None,
    chunk_steps: Annotated[str, typer.Option(
        "--chunk-steps", help="take the tasks this many steps of arrivals at a time (the same result, memory bounded "
                              "by the live tasks): a number, 'none' (all at once) or 'auto' (a week's chunks for a "
                              "bundle of 10 M tasks or more)")] = "auto",
    task_results: Annotated[bool, typer.Option(
        "--task-results/--no-task-results", help="keep the per-task results (~130 bytes per task on disk in a "
                                                 "chunked run); --no-task-results folds them into the totals as each "
                                                 "task leaves (a study too large for them; no --out tasks)")] = True,
    options: dict | None = None,
) -> None:
    """Run one policy on a bundle and print the totals (on a cold Numba cache, first a notice of the compile
    and its phases, on stderr). The run reads the bundle itself, so a large one can be taken in chunks."""
    import sim_core
    from sim_core.forecast import caption
    from sim_core.locality import caption as locality_caption
    from sim_core.policies import registry
    from sim_core.precompile import notice

    if out is not None and not task_results:
        raise typer.BadParameter("--out writes the per-task results, which --no-task-results does not keep",
                                 param_hint="--out")
    console = Console()
    path = bundle_path(bundle, optional_home(home))
    line = notice([policy]) if policy in registry.names() else None
    if line is not None:
        print(f"gridshift: {line}", file=sys.stderr, flush=True)
    phases = Phases(expect_slow=line is not None)
    t = time.perf_counter()
    try:
        res = sim_core.run(path, policy, seed=seed, days=days, start=start_arg(start), on_phase=phases.begin,
                           chunk_steps=_chunk_steps(chunk_steps), task_results=task_results, **(options or {}))
    except sim_core.BundleError as err:  # the bundle refused (integrity or content)
        raise typer.BadParameter(str(err), param_hint="BUNDLE") from err
    except sim_core.RunOptionsError as err:  # an unknown policy, a window outside the bundle...
        raise typer.BadParameter(str(err)) from err
    finally:
        phases.end()
    t_run = time.perf_counter() - t
    o = res.options
    table = Table(title=f"{policy} on {res.bundle_id} (seed {seed}, gridshift {res.gridshift_version})\n"
                        f"forecast: {caption(o)}\ndata locality: {locality_caption(o)}; transfer energy: "
                        f"{o['transfer_kwh_per_gb']} kWh/GB")
    table.add_column("metric")
    table.add_column("value", justify="right")
    for k, v in res.totals.items():
        table.add_row(k, f"{v:,.4f}" if isinstance(v, float) else f"{v:,}")
    console.print(table)
    console.print(f"run {t_run:.2f} s (loading the bundle included)")
    if out is not None:
        res.to_parquet(out)
        console.print(f"wrote {out}")


def _chunk_steps(raw: str) -> int | str | None:
    """--chunk-steps: 'auto', 'none' or a whole number of steps (``sim_core.run``'s ``chunk_steps``)."""
    low = raw.strip().lower()
    if low in ("auto", "none"):
        return None if low == "none" else "auto"
    if not low.isdigit() or int(low) < 1:
        raise typer.BadParameter(f"{raw!r} is not a whole number of steps >= 1, 'none' or 'auto'",
                                 param_hint="--chunk-steps")
    return int(low)


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
    (every headline metric is in the output files: summary.md, summary.parquet). Each header is two lines
    (split at its first space: "cost" over "saving %"), so that the values, not the labels, set the widths."""
    from rich import box

    from sim_core.bench.report import compact_rows, summary_caption

    header, rows = compact_rows(cmp)
    table = Table(caption=summary_caption(cmp), box=box.SIMPLE_HEAD, padding=(0, 1), caption_justify="left")
    table.add_column(header[0], no_wrap=True)
    for h in header[1:]:
        table.add_column(h.replace(" ", "\n", 1), justify="right", no_wrap=True)
    for r in rows:
        table.add_row(*r)
    return table


def _store(h, results: str | None):
    """Where runs are stored and reused: the home's warehouse (indexing ``results``), else ``results`` alone."""
    from gridshift.errors import StorageError
    from gridshift.objectstore import StoreURLError

    try:
        if h is not None:
            from warehouse.benchmark_store import WarehouseRunStore
            from warehouse.ingest import writable_home

            # a home that cannot take the index is refused up front, by name (not in the lock's flock)
            return WarehouseRunStore.for_home(writable_home(h), results_url=results)
        if results is not None:
            from gridshift.results import ResultStore

            return ResultStore(results)
    except StoreURLError as err:
        raise typer.BadParameter(str(err), param_hint="--results") from err
    except StorageError as err:  # a read-only or full home: named, nothing written
        Console(stderr=True).print(f"[red]error:[/red] {err}", markup=True, highlight=False)
        raise typer.Exit(2) from err
    return None


def _dask_client(scheduler: str, console: Console):
    from distributed import Client

    try:
        client = Client(scheduler, timeout="15s")
    except (OSError, TimeoutError, ValueError) as err:
        raise typer.BadParameter(f"cannot reach the Dask scheduler {scheduler}: {err}",
                                 param_hint="--scheduler") from err
    console.print(f"Dask scheduler {scheduler}: {len(client.scheduler_info()['workers'])} worker(s)")
    return client


def compare(
    bundle: BundleArg,
    policies: Annotated[str, typer.Option(help="comma-separated policies (the list below)")
                        ] = ",".join(DEFAULT_POLICIES),
    seeds: Annotated[str, typer.Option(help="comma-separated seeds")] = "0,1,2",
    days: DaysOpt = None,
    start: StartOpt = None,
    out: Annotated[Path | None, typer.Option(help="write runs.parquet, summary.parquet, compare.json, PNGs here")
                   ] = None,
    home: HomeOpt = None,
    no_store: Annotated[bool, typer.Option("--no-store", help="neither read nor write the warehouse")] = False,
    recompute: Annotated[bool, typer.Option("--recompute", help="simulate every run even if stored")] = False,
    no_figures: Annotated[bool, typer.Option("--no-figures", help="write no PNGs")] = False,
    optimum: Annotated[bool, typer.Option("--optimum", help="also solve the offline optimum (a lower bound, HiGHS) "
                                          "per seed and report each policy's gap to it")] = False,
    results: Annotated[str | None, typer.Option(
        envvar=RESULTS_URL_ENV, show_envvar=True,
        help="where each run's Parquet object goes: a folder or s3://bucket/prefix (default <home>/results; S3 "
             "credentials from AWS_* environment variables)")] = None,
    verify_reuse: Annotated[int, typer.Option(
        "--verify-reuse", min=0, help="simulate again N of the reused runs and refuse the sweep unless each equals its "
                                      "stored object bit for bit (docs/distributed.md, Trust)")] = 0,
    scheduler: Annotated[str | None, typer.Option(
        help="run the simulations on this Dask scheduler (tcp://host:8786); workers need the bundle at the same "
             "path and the --results URL (docs/distributed.md)")] = None,
    options: dict | None = None,
) -> None:
    """Run every policy x seed on one bundle, print the summary, write outputs, store the runs.

    Runs are stored in the home's warehouse (objects under --results) and reused by later calls."""
    from gridshift.errors import GridshiftError, StorageError, storage_error
    from sim_core import BundleError
    from sim_core.bench import service
    from sim_core.bench.report import assumptions_line, write_outputs
    from sim_core.bench.sweep import ReuseMismatchError
    from sim_core.bench.sweep import compare as run_compare

    pols = _parse_policies(policies)
    sds = _parse_seeds(seeds)
    h = optional_home(home, no_store)
    path = bundle_path(bundle, h)
    console = Console() if sys.stdout.isatty() else Console(width=120)  # logs and pipes: the table's width
    if scheduler is None:  # (a Dask worker compiles in its own process and cache)
        from sim_core.precompile import notice

        line = notice(pols)
        if line is not None:
            print(f"gridshift: {line}", file=sys.stderr, flush=True)
    store = _store(h, results)
    if scheduler is not None and store is None:
        raise typer.BadParameter("a distributed sweep needs --results (or a home) for the workers' Parquet objects",
                                 param_hint="--scheduler")

    def progress(key, reused: bool) -> None:
        console.print(f"  {key.policy:<20} seed {key.seed:<4} {'stored' if reused else 'simulated'}")
        console.file.flush()  # a line per run as it ends, also into a pipe or a log (block-buffered there)

    client = _dask_client(scheduler, console) if scheduler is not None else None
    try:
        # (the path, not a loaded scenario: each run reads its own tasks, so the sweep holds one run's at a time)
        cmp = run_compare(path, pols, sds, days=days, start=start_arg(start), store=store, recompute=recompute,
                          on_run=progress, optimum=optimum, executor=client, verify_reuse=verify_reuse,
                          **(options or {}),
                          results_url=store.results.url if hasattr(store, "results") else getattr(store, "url", None))
    except BundleError as err:  # the bundle refused (integrity or content): a bad BUNDLE argument
        raise typer.BadParameter(str(err), param_hint="BUNDLE") from err
    except (GridshiftError, ReuseMismatchError) as err:  # a missing, changed or refused result object...
        Console(stderr=True).print(f"[red]error:[/red] {err}", markup=True, highlight=False)
        raise typer.Exit(1) from err
    except ValueError as err:  # a window outside the bundle, a start off the step grid...
        raise typer.BadParameter(str(err)) from err
    except Exception as err:  # noqa: BLE001 - the disk filled while a run was stored (the object's write, or
        # DuckDB's index write, whose IOException is no OSError): named; the object's write is atomic, the index's one
        # transaction, so a rerun with space reuses what was published
        shown = storage_error(err, h.root if h is not None else None)
        if shown is None:
            raise
        Console(stderr=True).print(f"[red]error:[/red] {shown}", markup=True, highlight=False)
        raise typer.Exit(2) from err
    finally:
        if client is not None:
            client.close()
    console.print(summary_table(cmp))
    ranked = service.ranking_lines(service.matched_service(cmp.summary, cmp.policies))
    for line in [*ranked, *([service.METHOD] if ranked else [])]:
        console.print(line, highlight=False, markup=False)
    console.print(assumptions_line(cmp), highlight=False)
    where = f"{h.warehouse_path}, objects under {store.results.url}" if h is not None else (
        f"no warehouse, objects under {store.url}" if store is not None else "no warehouse")
    console.print(f"{len(cmp.computed)} run(s) simulated, {len(cmp.reused)} reused ({where})")
    if out is not None:
        try:
            write_outputs(cmp, out, figures=not no_figures)
        except OSError as err:  # a full disk, a read-only --out: named (the runs are stored; rerun to write)
            shown = storage_error(err) or StorageError(f"cannot write {out}: {err.strerror or err}")
            Console(stderr=True).print(f"[red]error:[/red] {shown}", markup=True, highlight=False)
            raise typer.Exit(2) from err
        console.print(f"wrote {out}")
