"""The options that more than one command takes, each declared once (typer ``Annotated`` aliases).

A command gives an alias its default in its own signature (``home: HomeOpt = None``), so an option
reads and is documented the same in every command that takes it.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from gridshift.quality import MIN_COVERAGE

# (the values of sim_core.forecast, repeated here so that `--help` imports no kernel module;
# tests/unit/sim_core/test_information.py checks them)
FORECAST_DEFAULT = "calibrated"
HORIZON_DEFAULT = 24
ISSUE_EVERY_DEFAULT = 60
# (sim_core.options' defaults and transfer presets, repeated for the same reason;
# tests/unit/gridshift_cli/test_run_options.py checks them)
RETENTION_DEFAULT = 30.0
TRANSFER_DEFAULT = "aslan2018-2023"
TRANSFER_PRESETS = ("aslan2018-2023", "aslan2018-2015", "none")

DebugOpt = Annotated[bool, typer.Option("--debug", help="on failure, show the full traceback")]
HomeOpt = Annotated[Path | None, typer.Option(
    "--home", help="gridshift home (default $GRIDSHIFT_HOME, else ./.gridshift): its warehouse, bundles/, "
    "results and Dagster instance")]
MirrorOpt = Annotated[Path | None, typer.Option(
    "--mirror", help="local mirror of upstream files (default $GRIDSHIFT_MIRROR, else the home's configured mirror)")]
RegionsOpt = Annotated[str, typer.Option(
    "--regions", help="comma-separated location codes (datacenter order; ingest also takes 'all')")]
YearsOpt = Annotated[str, typer.Option("--year", help="year(s): 2023, 2022,2023 or 2022-2023")]
YearOpt = Annotated[int, typer.Option("--year", help="calendar year (UTC)")]
SeedOpt = Annotated[int, typer.Option(
    "--seed", help="seed: of the workload's draw (ingest, export: also the task flexibility) or of a run")]
LiveOpt = Annotated[bool, typer.Option("--live", help="fetch from the publishers what the mirror (and, for "
                                       "workloads, --trace-dir) lacks (tokens from env/.env; see docs/sources.md)")]
PartialOpt = Annotated[bool, typer.Option("--allow-partial", help="accept, and record, a partition covering less "
                                          f"than {MIN_COVERAGE:.0%} of its year (refused by default)")]
BundleArg = Annotated[str, typer.Argument(help="bundle directory, or a bundle id under <home>/bundles")]
DaysOpt = Annotated[float | None, typer.Option("--days", help="simulate only this many days")]
StartOpt = Annotated[str | None, typer.Option("--start", help="start (ISO UTC time or step index)")]
NoDeferOpt = Annotated[bool, typer.Option("--no-defer", help="disallow deferral")]
SlaOpt = Annotated[float, typer.Option("--sla-multiplier", help="deadline = arrival + m x duration")]
PowerOpt = Annotated[str, typer.Option(
    "--power", help="server power: managed (idle servers switched off) or always_on (every server on: the "
    "reference cluster's model)")]
FORECAST_HELP = ("what policies are told of the future: calibrated (actual + published day-ahead error), "
                 "persistence, seasonal_naive, seasonal_naive_weekly, or oracle (perfect foresight)")
ForecastOpt = Annotated[str, typer.Option("--forecast", help=FORECAST_HELP)]
HorizonOpt = Annotated[int, typer.Option("--forecast-horizon-h", help="forecast horizon in hours (24..336)")]
IssueEveryOpt = Annotated[int, typer.Option(
    "--forecast-issue-every-min", help="minutes between forecast issues (15..1440, a multiple of 15): policies "
    "see the latest issued forecast between issues")]
LocalityOpt = Annotated[bool, typer.Option(
    "--locality/--no-locality", help="data locality: a task's shared dataset moves only to a site holding no "
    "replica of it (--no-locality: every move ships the dataset, the model before data locality)")]
RetentionOpt = Annotated[float, typer.Option(
    "--locality-retention-days", help="days a site keeps a dataset replica after its last use (0: only tasks "
    "decided at the same instant share it)")]
TransferKwhOpt = Annotated[str, typer.Option(
    "--transfer-kwh-per-gb", help="network energy per GB moved to another region: a number of kWh/GB, or a preset: "
    f"{', '.join(TRANSFER_PRESETS)} (docs/model.md §4b)")]


def data_options(locality: bool, locality_retention_days: float, transfer_kwh_per_gb: str) -> dict:
    """The run options of the data-movement flags, as ``sim_core.run`` takes them: a number given to
    --transfer-kwh-per-gb as a number, anything else as a preset name. Nothing is checked here: the run
    options' own checks (``sim_core.options.OPTION_RANGES``) refuse a bad value, naming it and its range."""
    try:
        kwh: float | str = float(transfer_kwh_per_gb)
    except ValueError:
        kwh = transfer_kwh_per_gb
    return {"locality": locality, "locality_retention_days": locality_retention_days, "transfer_kwh_per_gb": kwh}
