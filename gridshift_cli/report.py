"""How the command-line tools report a failure: one short block a person can act on.

What failed, the root cause's own message (file, column, rows and values where the error knows
them), the next step, and where the full report is: the traceback goes to a log file under the
home (``<home>/logs``), or to the terminal with ``--debug``. The ``gridshift`` command line
(``gridshift_cli``) uses it.
"""

from __future__ import annotations

import contextlib
import datetime as dt
import os
import traceback
from collections.abc import Iterator
from pathlib import Path

import typer
from rich.console import Console
from rich.markup import escape

from gridshift.errors import DataError, GridshiftError, SourceUnavailableError, storage_error
from gridshift.secret_text import scrub_secrets

MAX_CAUSE_LINES = 8

#: next steps by the name of the root cause's type (a run in Dagster only keeps the type's name)
HINTS: dict[str, str] = {
    "SourceUnavailableError": "pass --live to fetch it from the publisher (tokens: docs/sources.md), or --mirror DIR "
                              "pointing at a folder that holds the file",
    "BundleError": "this bundle cannot be used as it is: rebuild it (gridshift export) or check its origin",
    "GapError": "raise --max-gap-hours / --max-edge-fill-hours, or ingest the neighbouring year",
    "MissingInputs": "run gridshift export, which ingests them first",
    "UnknownLocationError": "gridshift ingest --help lists the options; locations are in "
                            "gridshift/data/locations.csv",
    "RunOptionsError": "gridshift run --help lists the options and their ranges",
    "DataError": "fix or replace the file named above; nothing was written",
    "MissingRateError": "add the year's rate to pipelines' FX table (docs/sources.md)",
    "StorageError": "free space on that disk, raise the file-size limit (ulimit -f) or make the folder writable "
                    "(or choose another home with --home / GRIDSHIFT_HOME), then rerun; nothing was half-written",
}


def hint_for(exc: BaseException) -> str | None:
    name = getattr(exc, "cause_type", None) or type(exc).__name__
    if name in HINTS:
        return HINTS[name]
    for cls in type(exc).__mro__:
        if cls.__name__ in HINTS:
            return HINTS[cls.__name__]
    if isinstance(exc, SourceUnavailableError):
        return HINTS["SourceUnavailableError"]
    if isinstance(exc, DataError):
        return HINTS["DataError"]
    return None


def write_log(logs_dir: Path, prog: str, exc: BaseException) -> Path | None:
    """The full report of ``exc`` (chained causes included) in a new file under ``logs_dir``."""
    stamp = dt.datetime.now(dt.UTC).strftime("%Y%m%dT%H%M%SZ")
    path = logs_dir / f"{prog}-{stamp}-{os.getpid()}.log"
    report = getattr(exc, "report", None)
    details = report() if callable(report) else ""
    try:
        logs_dir.mkdir(parents=True, exist_ok=True)
        # the chained causes are library errors that may quote a secret (an upstream's echo of the token)
        path.write_text(scrub_secrets(details + "".join(traceback.format_exception(exc))), encoding="utf-8")
    except OSError:
        return None
    return path


def failure_block(exc: BaseException, log: Path | None) -> list[str]:
    """The lines printed for a failure (at most ~14)."""
    expected = isinstance(exc, GridshiftError)
    what = getattr(exc, "what", None)
    cause = getattr(exc, "cause", None) if what else None
    text = str(cause if cause is not None else exc).strip() or type(exc).__name__
    lines = text.splitlines()
    if len(lines) > MAX_CAUSE_LINES:
        lines = [*lines[:MAX_CAUSE_LINES - 1], f"... ({len(lines) - MAX_CAUSE_LINES + 1} more lines in the report)"]
    head = what or (lines.pop(0) if expected else f"unexpected {type(exc).__name__}: {lines.pop(0)}")
    out = [f"error: {head}"]
    out += [f"  {ln}" for ln in lines]
    hint = hint_for(exc) if expected else "this is a bug in gridshift: please report it with the full report"
    if hint:
        out.append(f"  next: {hint}")
    if log is not None:
        out.append(f"  full report: {log} (or rerun with --debug)")
    return out


@contextlib.contextmanager
def reporting(console: Console, logs_dir: Path | None, prog: str, *, debug: bool = False,
              home: Path | None = None) -> Iterator[None]:
    """Turn any failure inside the block into the short report and an exit status (2: refused input,
    unavailable data or no storage to write to — a full disk, a file-size limit, a read-only ``home`` —;
    3: a bug); with ``debug`` the exception propagates with its full traceback."""
    try:
        yield
    except (typer.Exit, typer.Abort, KeyboardInterrupt):
        raise
    except typer.BadParameter:
        raise
    except Exception as exc:  # noqa: BLE001 - every failure gets the short report
        if debug:
            raise
        log = write_log(logs_dir, prog, exc) if logs_dir is not None else None
        shown = storage_error(exc, home) or exc
        for line in failure_block(shown, log):
            console.print(escape(line), soft_wrap=True, highlight=False)
        raise typer.Exit(2 if isinstance(shown, GridshiftError) else 3) from None
