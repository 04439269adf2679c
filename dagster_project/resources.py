"""Resources: where the gridshift home and the local mirror are. Tokens come later, as EnvVars."""

from __future__ import annotations

import os
from pathlib import Path

import dagster as dg

from gridshift.home import Home


class GridshiftResource(dg.ConfigurableResource):
    """The gridshift home (warehouse, raw landings, bundles) and an optional local mirror folder."""

    home: str = ""  # empty: GRIDSHIFT_HOME, else ./.gridshift
    mirror: str = ""  # empty: GRIDSHIFT_MIRROR, else no mirror

    def home_obj(self) -> Home:
        return Home.resolve(self.home or None).ensure()

    def mirror_path(self) -> Path | None:
        raw = self.mirror or os.environ.get("GRIDSHIFT_MIRROR", "")
        return Path(raw).expanduser().absolute() if raw else None
