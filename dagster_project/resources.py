"""Resources: where the gridshift home and the local mirror are, live fetching, and tokens as EnvVars."""

from __future__ import annotations

import os
from pathlib import Path

import dagster as dg

from gridshift.home import Home


class GridshiftResource(dg.ConfigurableResource):
    """The gridshift home (warehouse, raw landings, bundles) and an optional local mirror folder."""

    home: str = ""  # empty: GRIDSHIFT_HOME, else ./.gridshift
    mirror: str = ""  # empty: GRIDSHIFT_MIRROR, else no mirror
    live: bool = False  # fetch from the publishers when the mirror lacks a file (docs/sources.md)
    # Tokens: bind only with dg.EnvVar (see ``env_token_fields``), never as plain run config. The
    # live clients read the same environment variables (or .env) through pipelines.http.get_token.
    entsoe_api_key: str | None = None
    electricitymaps_token: str | None = None
    pjm_api_key: str | None = None

    def home_obj(self) -> Home:
        return Home.resolve(self.home or None).ensure()

    def mirror_path(self) -> Path | None:
        raw = self.mirror or os.environ.get("GRIDSHIFT_MIRROR", "")
        return Path(raw).expanduser().absolute() if raw else None


TOKEN_ENV = {
    "entsoe_api_key": "ENTSOE_API_KEY",
    "electricitymaps_token": "ELECTRICITYMAPS_TOKEN",
    "pjm_api_key": "PJM_API_KEY",
}


def env_token_fields() -> dict[str, dg.EnvVar]:
    """``dg.EnvVar`` bindings for the tokens that are set (an unset EnvVar would fail resource init)."""
    return {field: dg.EnvVar(var) for field, var in TOKEN_ENV.items() if os.environ.get(var)}
