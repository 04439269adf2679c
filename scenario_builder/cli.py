"""``scenario_builder``: the command-line shell over gridshift's assets (same functions as the UI)."""

from __future__ import annotations

import logging
import os
import sys
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn
from rich.table import Table

from gridshift import __version__, locations
from gridshift.errors import GridshiftError
from gridshift.home import Home

app = typer.Typer(add_completion=False, no_args_is_help=True, help="Build and inspect gridshift scenarios.")
console = Console()
err_console = Console(stderr=True)

HomeOpt = Annotated[Path | None, typer.Option("--home", help="gridshift home (default $GRIDSHIFT_HOME or ./.gridshift)")]
MirrorOpt = Annotated[
    Path | None, typer.Option("--mirror", help="local mirror of upstream files (default $GRIDSHIFT_MIRROR)")
]
ALL_SOURCES = ("carbon", "price", "weather", "network")


def _years(text: str) -> list[int]:
    years = []
    for part in text.split(","):
        part = part.strip()
        if "-" in part:
            lo, hi = part.split("-", 1)
            years += list(range(int(lo), int(hi) + 1))
        elif part:
            years.append(int(part))
    if not years or any(y < 1990 or y > 2100 for y in years):
        raise typer.BadParameter(f"invalid year(s) {text!r}")
    return years


def _mirror(mirror: Path | None) -> Path | None:
    if mirror is not None:
        return mirror.expanduser().absolute()
    env = os.environ.get("GRIDSHIFT_MIRROR")
    return Path(env).expanduser().absolute() if env else None


def _quiet_dagster() -> None:
    os.environ.setdefault("DAGSTER_HOME", "")
    for name in ("dagster", "dagster.builtin"):
        logging.getLogger(name).setLevel(logging.ERROR)


@app.command()
def ingest(
    regions: Annotated[str, typer.Option(help="comma-separated location codes, or 'all'")],
    year: Annotated[str, typer.Option(help="year(s): 2023, 2022,2023 or 2022-2023")],
    sources: Annotated[str, typer.Option(help="comma-separated: carbon,price,weather,network")] = ",".join(
        ALL_SOURCES
    ),
    mirror: MirrorOpt = None,
    home: HomeOpt = None,
) -> None:
    """Ingest grid signals (and reference tables) into the warehouse, validated.

    With --regions all, partitions the mirror does not hold are skipped and listed; with explicit
    regions a missing file is an error.
    """
    from scenario_builder.materialize import materialize

    _quiet_dagster()
    try:
        codes = locations.parse_codes(regions)
        srcs = [s.strip() for s in sources.split(",") if s.strip()]
        bad = [s for s in srcs if s not in ALL_SOURCES]
        if bad:
            raise typer.BadParameter(f"unknown source(s) {bad}; choose from {ALL_SOURCES}")
        years = _years(year)
        h = Home.resolve(home).ensure()
        m = _mirror(mirror)
        total = len(codes) * len(years) + (1 if "network" in srcs else 0)
        with Progress(
            TextColumn("[bold]ingest[/]"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
            TextColumn("{task.description}"), console=err_console, transient=True,
        ) as progress:
            task = progress.add_task("", total=total)
            outcomes = materialize(
                regions=codes, years=years, sources=srcs, home=h, mirror=m,
                skip_missing=regions.strip().lower() == "all",
                on_progress=lambda d: progress.update(task, advance=1, description=d),
            )
    except GridshiftError as exc:
        err_console.print(f"[red]error:[/] {exc}")
        raise typer.Exit(2) from None
    _print_outcomes(outcomes, h)
    if any(not o.ok for o in outcomes):
        raise typer.Exit(1)


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
            err_console.print(f"[red]{o.asset} {o.region or ''} {o.year or ''}:[/] {o.error}")


@app.command()
def version() -> None:
    """Print the gridshift version."""
    console.print(__version__)


def main() -> None:  # pragma: no cover - console entry
    try:
        app()
    except GridshiftError as exc:
        err_console.print(f"[red]error:[/] {exc}")
        sys.exit(2)
