"""Command line: ``python -m sim_core run BUNDLE --policy lowest_carbon --seed 0 [--days 7] [--out DIR]``."""

from __future__ import annotations

import time
from pathlib import Path

import typer
from rich.console import Console
from rich.table import Table

app = typer.Typer(add_completion=False, help="Run the gridshift cluster simulation on a bundle.")


@app.callback()
def _main() -> None:
    """sim_core command line."""


@app.command()
def run(
    bundle: Path = typer.Argument(..., exists=True, file_okay=False, help="bundle directory"),  # noqa: B008
    policy: str = typer.Option("lowest_carbon", help="built-in policy name"),  # noqa: B008
    seed: int = typer.Option(0, help="run seed"),  # noqa: B008
    days: float | None = typer.Option(None, help="simulate only this many days"),  # noqa: B008
    start: str | None = typer.Option(None, help="start (ISO UTC time or step index)"),  # noqa: B008
    out: Path | None = typer.Option(None, help="write steps/tasks/transfers Parquet and run.json here"),  # noqa: B008
    no_defer: bool = typer.Option(False, "--no-defer", help="disallow deferral"),  # noqa: B008
    sla_multiplier: float = typer.Option(1.5, help="deadline = arrival + m x duration"),  # noqa: B008
) -> None:
    """Run one policy on a bundle and print the totals."""
    import sim_core

    console = Console()
    t = time.perf_counter()
    scenario = sim_core.load(bundle)
    t_load = time.perf_counter() - t
    st: int | str | None = int(start) if start is not None and start.isdigit() else start
    t = time.perf_counter()
    res = sim_core.run(scenario, policy, seed=seed, days=days, start=st,
                       allow_defer=not no_defer, sla_multiplier=sla_multiplier)
    t_run = time.perf_counter() - t
    table = Table(title=f"{policy} on {res.bundle_id} (seed {seed}, gridshift {res.gridshift_version})")
    table.add_column("metric")
    table.add_column("value", justify="right")
    for k, v in res.totals.items():
        table.add_row(k, f"{v:,.4f}" if isinstance(v, float) else f"{v:,}")
    console.print(table)
    console.print(f"load {t_load:.2f} s, run {t_run:.2f} s")
    if out is not None:
        res.to_parquet(out)
        console.print(f"wrote {out}")


def main() -> None:
    app()
