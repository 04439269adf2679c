"""Resources: where the gridshift home and the local mirror are, live fetching, and tokens as EnvVars."""

from __future__ import annotations

import os
from pathlib import Path

import dagster as dg

from gridshift.home import Home
from gridshift.sources import TOKEN_ENV_VARS


class GridshiftResource(dg.ConfigurableResource):
    """The gridshift home (warehouse, raw landings, bundles) and an optional local mirror folder."""

    home: str = ""  # empty: GRIDSHIFT_HOME, else ./.gridshift
    mirror: str = ""  # empty: GRIDSHIFT_MIRROR, else no mirror
    live: bool = False  # fetch from the publishers when the mirror lacks a file (docs/sources.md)
    # ingest a grid file covering less than gridshift.quality.MIN_COVERAGE of its year (recorded as partial)
    allow_partial: bool = False
    # Tokens: one field per gridshift.sources.TOKEN_ENV_VARS entry, named in lower case (``TOKEN_ENV``);
    # bind only with dg.EnvVar (see ``env_token_fields``), never as plain run config. The live
    # clients read the same environment variables (or .env) through pipelines.core.http.get_token.
    entsoe_api_key: str | None = None
    electricitymaps_token: str | None = None
    pjm_api_key: str | None = None

    def home_obj(self) -> Home:
        return Home.resolve(self.home or None).ensure()

    def mirror_path(self) -> Path | None:
        raw = self.mirror or os.environ.get("GRIDSHIFT_MIRROR", "")
        return Path(raw).expanduser().absolute() if raw else None


TOKEN_ENV = {var.lower(): var for var in TOKEN_ENV_VARS}
assert set(TOKEN_ENV) <= set(GridshiftResource.model_fields), "a token variable without its resource field"


def env_token_fields() -> dict[str, dg.EnvVar]:
    """``dg.EnvVar`` bindings for the tokens that are set (an unset EnvVar would fail resource init)."""
    return {field: dg.EnvVar(var) for field, var in TOKEN_ENV.items() if os.environ.get(var)}
