"""What every command shares: the consoles, path and year parsing, the failure report, the progress bar."""

from __future__ import annotations

import json
import logging
import os
from pathlib import Path

import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from gridshift.errors import excerpt
from gridshift.home import Home
from gridshift_cli.report import reporting

console = Console()
err_console = Console(stderr=True)


def absolute(path: Path | None) -> Path | None:
    """Relative paths are the caller's: resolved from the directory the command was run in."""
    return path.expanduser().absolute() if path is not None else None


def parse_years(text: str) -> list[int]:
    """``2023``, ``2022,2023`` or ``2022-2023`` as a list of years (1990..2100)."""
    years = []
    try:
        for part in text.split(","):
            part = part.strip()
            if "-" in part:
                lo, hi = int(part.split("-", 1)[0]), int(part.split("-", 1)[1])
                if not 1990 <= lo <= hi <= 2100:  # checked before expanding: "2022-99999999" allocates nothing
                    raise typer.BadParameter(f"invalid year(s) {excerpt(text)!r}")
                years += list(range(lo, hi + 1))
            elif part:
                years.append(int(part))
    except ValueError:
        raise typer.BadParameter(f"invalid year(s) {excerpt(text)!r}") from None
    if not years or any(y < 1990 or y > 2100 for y in years):
        raise typer.BadParameter(f"invalid year(s) {excerpt(text)!r}")
    return years


def resolve_mirror(mirror: Path | None, home: Path | None = None) -> Path | None:
    """--mirror, else $GRIDSHIFT_MIRROR, else the home's configured mirror (``gridshift ui --mirror`` sets it),
    else none."""
    if mirror is not None:
        return absolute(mirror)
    env = os.environ.get("GRIDSHIFT_MIRROR")
    return Path(env).expanduser().absolute() if env else Home.resolve(home).configured_mirror()


def command_tags(ctx: typer.Context) -> dict[str, str]:
    """The run tags naming this command-line call (``dagster_project.jobs``): the
    command and its arguments as parsed (JSON; secrets never are arguments: tokens come from the environment)."""
    from dagster_project.jobs import ARGUMENTS_TAG, COMMAND_TAG

    args = {k: str(v) if isinstance(v, Path) else v for k, v in ctx.params.items() if v is not None}
    return {COMMAND_TAG: f"gridshift {ctx.info_name}", ARGUMENTS_TAG: json.dumps(args, sort_keys=True)}


def quiet_dagster() -> None:
    for name in ("dagster", "dagster.builtin"):
        logging.getLogger(name).setLevel(logging.CRITICAL)


def failures(ctx: typer.Context, home: Path | None):
    """Failures print one short block; the full report goes to <home>/logs (or the terminal with --debug)."""
    h = Home.resolve(home)
    debug = bool((ctx.obj or {}).get("debug"))
    return reporting(err_console, h.logs_dir, "gridshift", debug=debug, home=h.root)


def progress_bar(label: str) -> Progress:
    return Progress(TextColumn(f"[bold]{label}[/]"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                    TextColumn("{task.description}"), console=err_console, transient=True)


def optional_home(home: Path | None, no_store: bool = False) -> Home | None:
    """For the simulation commands, which need no warehouse: --home, else $GRIDSHIFT_HOME, else ./.gridshift
    if it exists; None: no home (a bundle is then a directory, and no run is stored)."""
    if no_store:
        return None
    if home is not None:
        return Home.resolve(home)
    if os.environ.get("GRIDSHIFT_HOME"):
        return Home.resolve()
    default = Home.resolve(".gridshift")
    return default if default.root.is_dir() else None


def bundle_path(bundle: str, h: Home | None) -> Path:
    """A bundle directory, or a bundle id under the home's bundles folder (never outside it); a bad BUNDLE
    argument (exit 2) naming what was looked for and the home's bundle ids otherwise."""
    from gridshift.home import BundleNotFoundError, UnsafePathError, resolve_bundle

    try:
        return resolve_bundle(bundle, h)
    except (BundleNotFoundError, UnsafePathError) as err:
        raise typer.BadParameter(str(err), param_hint="BUNDLE") from err


def load_bundle(path: Path):
    """``sim_core.load``, its refusal shown as a bad BUNDLE argument."""
    import sim_core

    try:
        return sim_core.load(path)
    except sim_core.BundleError as err:
        raise typer.BadParameter(str(err), param_hint="BUNDLE") from err


def start_arg(start: str | None) -> int | str | None:
    """--start as a step index (digits) or an ISO time."""
    return int(start) if start is not None and start.isdigit() else start
