"""Resources: where the gridshift home and the local mirror are, and whether to fetch live.

Tokens are not resource fields: the live clients read them from the environment (or ``.env``) at the
moment of the request (``gridshift.sources.TOKEN_ENV_VARS``), so they never pass through run config,
the instance's event log or the UI.
"""

from __future__ import annotations

import os
from pathlib import Path

import dagster as dg

from gridshift.home import Home


class GridshiftResource(dg.ConfigurableResource):
    """The gridshift home (warehouse, raw landings, bundles), an optional local mirror folder, and the
    ingest switches the CLI exposes as ``--live``, ``--allow-partial`` and ``--allow-implausible``."""

    home: str = ""  # empty: GRIDSHIFT_HOME, else ./.gridshift
    mirror: str = ""  # empty: GRIDSHIFT_MIRROR, else the home's configured mirror (Home.configured_mirror), else none
    live: bool = False  # fetch from the publishers when the mirror lacks a file (docs/sources.md)
    allow_partial: bool = False  # accept (and record) a partition covering less than MIN_COVERAGE of its year
    allow_implausible: bool = False  # accept (and record) a partition failing an overridable plausibility check

    def home_obj(self) -> Home:
        return Home.resolve(self.home or None).ensure()

    def mirror_path(self) -> Path | None:
        raw = self.mirror or os.environ.get("GRIDSHIFT_MIRROR", "")
        if raw:
            return Path(raw).expanduser().absolute()
        return Home.resolve(self.home or None).configured_mirror()
