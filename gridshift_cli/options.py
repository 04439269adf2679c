"""The options that more than one command takes, each declared once (typer ``Annotated`` aliases).

A command gives an alias its default in its own signature (``home: HomeOpt = None``), so an option
reads and is documented the same in every command that takes it. The run options' flags (``--power``,
``--forecast``, ...) are generated from their declarations instead (``gridshift_cli.run_flags``).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from gridshift.quality import MIN_COVERAGE

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
