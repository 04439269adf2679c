"""The Dagster UI (``dg dev``) on the gridshift home's instance: what ``gridshift ui`` (``./run.sh ui``) runs.

Prepares ``<home>/dagster`` (the instance every CLI run is recorded in), records a given mirror in the home's
configuration (``gridshift.json``: the UI's runs read it from there, so a backfill needs no environment
variable), adds the mirror's years to the instance's year partitions (those a CLI run requested are there
already: ``dagster_project.partitions``), points ``DAGSTER_HOME`` at it and replaces this process with
``dg dev`` (extra arguments pass through, e.g. ``-p 3001``), so Ctrl-C / SIGTERM reach Dagster directly and it
shuts down cleanly.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

from dagster_project.partitions import add_years
from dagster_project.plan import mirror_years
from dagster_project.resources import GridshiftResource
from dagster_project.runner import open_instance, prepare_instance
from gridshift.home import Home
from warehouse.ingest import writable_home

REPO = Path(__file__).resolve().parents[1]


def launch(home: Path | None, dg_args: list[str], mirror: Path | None = None) -> None:
    """Replace this process with ``dg dev *dg_args`` on ``home``'s instance (``None``: ``$GRIDSHIFT_HOME``,
    else ``./.gridshift``); ``mirror``, if given, becomes the home's configured mirror, which the UI's runs read
    (``$GRIDSHIFT_MIRROR`` still overrides it)."""
    h = writable_home(Home.resolve(home))  # the instance writes there: a read-only home is refused by name first
    prepare_instance(h)  # creates or updates <home>/dagster/dagster.yaml
    os.environ["DAGSTER_HOME"] = str(h.dagster_dir)
    os.environ["GRIDSHIFT_HOME"] = str(h.root)
    if mirror is not None:
        h.configure(mirror=str(mirror))
    years = offer_mirror_years(h)
    dg = shutil.which("dg") or os.path.join(os.path.dirname(sys.executable), "dg")
    print(f"gridshift home {h.root}; Dagster instance {h.dagster_dir}; years {', '.join(map(str, years)) or 'none'}",
          file=sys.stderr, flush=True)
    os.chdir(REPO)  # dg finds the project (pyproject.toml) from the working directory
    os.execv(dg, [dg, "dev", *dg_args])


def offer_mirror_years(home: Home) -> list[int]:
    """Add the years the mirror the UI's runs read (``$GRIDSHIFT_MIRROR``, else the home's configured one) holds
    to ``home``'s instance; returns the instance's years, in its key order."""
    mirror = GridshiftResource(home=str(home.root)).mirror_path()
    with open_instance(home) as inst:
        return add_years(inst, mirror_years(mirror))
