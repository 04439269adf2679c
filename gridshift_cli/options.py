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
BundleDirArg = Annotated[Path, typer.Argument(help="bundle directory")]
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
