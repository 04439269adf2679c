"""``gridshift ui``: the Dagster UI on the home's instance (``dagster_project.ui``)."""

from __future__ import annotations

import typer

from gridshift_cli.common import absolute, failures
from gridshift_cli.options import HomeOpt, MirrorOpt

#: ``dg dev``'s own options (``-p 3001``, ``--host ...``) pass through, before or after gridshift's
CONTEXT = {"allow_extra_args": True, "ignore_unknown_options": True}


def ui(ctx: typer.Context, home: HomeOpt = None, mirror: MirrorOpt = None) -> None:
    """Open the Dagster UI (dg dev) on the home's instance, where every command's runs are recorded.

    --mirror is recorded in the home's configuration (gridshift.json): the UI's runs, and later commands given
    no mirror, read it from there. Other arguments go to dg dev (e.g. -p 3001), before or after --home and
    --mirror."""
    from dagster_project.ui import launch

    with failures(ctx, home):  # a read-only or full home: the short error block, not a traceback
        launch(absolute(home), list(ctx.args), mirror=absolute(mirror))
