"""The Dagster UI (``dg dev``) on the gridshift home's instance: what ``gridshift ui`` (``./run.sh ui``) runs.

Prepares ``<home>/dagster`` (the instance every CLI run is recorded in), records a given mirror in the home's
configuration (``gridshift.json``: the UI's runs read it from there, so a backfill needs no environment
variable), points ``DAGSTER_HOME`` at it and replaces this process with ``dg dev`` (extra arguments pass
through, e.g. ``-p 3001``), so Ctrl-C / SIGTERM reach Dagster directly and it shuts down cleanly.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

from dagster_project.runner import prepare_instance
from gridshift.home import Home

REPO = Path(__file__).resolve().parents[1]


def launch(home: Path | None, dg_args: list[str], mirror: Path | None = None) -> None:
    """Replace this process with ``dg dev *dg_args`` on ``home``'s instance (``None``: ``$GRIDSHIFT_HOME``,
    else ``./.gridshift``); ``mirror``, if given, becomes the home's configured mirror, which the UI's runs read
    (``$GRIDSHIFT_MIRROR`` still overrides it)."""
    h = Home.resolve(home).ensure()
    prepare_instance(h)  # creates or updates <home>/dagster/dagster.yaml
    os.environ["DAGSTER_HOME"] = str(h.dagster_dir)
    os.environ["GRIDSHIFT_HOME"] = str(h.root)
    if mirror is not None:
        h.configure(mirror=str(mirror))
    dg = shutil.which("dg") or os.path.join(os.path.dirname(sys.executable), "dg")
    print(f"gridshift home {h.root}; Dagster instance {h.dagster_dir}", file=sys.stderr, flush=True)
    os.chdir(REPO)  # dg finds the project (pyproject.toml) from the working directory
    os.execv(dg, [dg, "dev", *dg_args])
