"""``gridshift optimum``: the offline optimum's lower bound of a run window (``sim_core.optimum``), the same
bound ``compare --optimum`` reports each policy's gap to (docs/optimum.md)."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table

from gridshift_cli.common import bundle_path, load_bundle, optional_home, start_arg
from gridshift_cli.options import BundleArg, DaysOpt, HomeOpt, SeedOpt, StartOpt

#: the figures printed, in order, with their units (the fields of ``sim_core.optimum.OptimumResult``)
FIGURES = (("carbon_kg", "carbon incl. transfers kg"), ("facility_carbon_kg", "facility carbon kg"),
           ("transfer_carbon_kg", "transfer carbon kg"), ("cost_usd", "cost incl. egress USD"),
           ("energy_kwh", "facility energy kWh"), ("transfer_kwh", "transfer energy kWh"),
           ("baseline_carbon_kg", "no-work baseline carbon kg"))
UNITS = {"carbon": "kg CO2", "cost": "USD", "weighted": "(kg CO2 + USD x weight)"}


def optimum(
    bundle: BundleArg,
    days: DaysOpt = None,
    seed: SeedOpt = 0,
    start: StartOpt = None,
    objective: Annotated[str, typer.Option(help="what is bounded: carbon, cost or weighted")] = "carbon",
    home: HomeOpt = None,
    checkpoint: Annotated[Path | None, typer.Option(
        help="keep each horizon's LP solution in this folder, keyed by the LP: a bound interrupted between its "
             "rolling horizons (a year: hours of LPs) resumes there, with the result of one uninterrupted run")] = None,
    options: dict | None = None,
) -> None:
    """Print the offline optimum's lower bound of a run window (HiGHS): no schedule does better.

    The window, tasks and deadlines are those a run with the same --days, --start and --seed simulates; the
    bound is a linear-programming relaxation over every schedule meeting the tasks' delay limits."""
    import sim_core
    from sim_core.locality import caption as locality_caption
    from sim_core.optimum import OptimumError
    from sim_core.optimum import optimum as solve

    scenario = load_bundle(bundle_path(bundle, optional_home(home)))
    try:
        b = solve(scenario, seed=seed, start=start_arg(start), days=days, objective=objective, checkpoint=checkpoint,
                  **(options or {}))
    except (OptimumError, sim_core.RunOptionsError) as err:
        raise typer.BadParameter(str(err)) from err
    console = Console()
    console.print(f"offline optimum on {scenario.bundle_id}: seed {seed}, {b.days:g} days from {b.start_utc}",
                  highlight=False)
    console.print(b.describe(), highlight=False)
    if b.resumed_horizons:
        console.print(f"{b.resumed_horizons} of {b.n_horizons} horizons read from {checkpoint}", highlight=False)
    console.print(f"data locality: {locality_caption(b.options)}; transfer energy: "
                  f"{b.options['transfer_kwh_per_gb']} kWh/GB", highlight=False)
    table = Table()
    table.add_column("at the bound's solution")
    table.add_column("value", justify="right")
    for name, label in FIGURES:
        table.add_row(label, f"{getattr(b, name):,.3f}")
    table.add_row("tasks / LP classes", f"{b.n_tasks:,} / {b.n_classes:,}")
    console.print(table)
    console.print(f"bound {b.value:.6f} {UNITS[b.objective]}; solve {b.solve_s:.1f} s, build {b.build_s:.1f} s",
                  highlight=False)
