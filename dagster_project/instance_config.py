"""The ``dagster.yaml`` of a gridshift home's Dagster instance: Dagster's own SQLite storage under the home (the
default), or Dagster's PostgreSQL storage (``dagster-postgres``, the ``postgres`` extra) when the home's
configuration names a server (``gridshift.json``: ``"dagster_postgres": "postgresql://USER@HOST:PORT/DB"``).

The password never reaches a file: the URL in the configuration must not hold one, and the yaml names only the
user, host, port and database; libpq takes the password from ``PGPASSWORD`` or ``~/.pgpass`` (docs/distributed.md).
"""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path
from urllib.parse import unquote, urlsplit

from gridshift.errors import GridshiftError

#: The key of the home's configuration that puts its Dagster instance on PostgreSQL.
POSTGRES_KEY = "dagster_postgres"
INSTALL_HINT = "install the postgres extra: GRIDSHIFT_EXTRAS=postgres ./run.sh ... (or pip install gridshift[postgres])"


def postgres_db(url: str, where: str) -> dict[str, str | int]:
    """The ``postgres_db`` block of Dagster's PostgreSQL storage for ``url`` (``postgresql://USER@HOST[:PORT]/DB``);
    ``where`` names the setting in errors. A URL holding a password, or lacking a user, host or database, is
    refused."""
    try:
        parts = urlsplit(url)
        port = parts.port or 5432
    except ValueError as err:
        raise GridshiftError(f"{where}: {url!r} is not a PostgreSQL URL ({err})") from err
    if parts.scheme not in ("postgresql", "postgres"):
        raise GridshiftError(f"{where}: {url!r} is not a postgresql:// URL")
    if parts.password is not None:
        raise GridshiftError(f"{where}: the URL holds a password; remove it (it would be written to dagster.yaml) "
                             "and set PGPASSWORD or ~/.pgpass instead")
    db = parts.path.lstrip("/")
    if not (parts.username and parts.hostname and db) or "/" in db or parts.query or parts.fragment:
        raise GridshiftError(f"{where}: expected postgresql://USER@HOST[:PORT]/DATABASE, got {url!r}")
    # the driver named: SQLAlchemy 2.1 reads a bare postgresql:// as psycopg 3, while dagster-postgres installs psycopg2
    return {"username": unquote(parts.username), "hostname": parts.hostname, "port": port, "db_name": unquote(db),
            "scheme": "postgresql+psycopg2"}


def instance_yaml(dagster_dir: Path, postgres: dict[str, str | int] | None = None) -> str:
    """The instance configuration: Dagster's storage (SQLite under ``dagster_dir``: ``history/runs.db``,
    ``history/runs/*.db``, ``schedules``; or the PostgreSQL database of ``postgres``, :func:`postgres_db`), its
    default compute-log manager (``storage/`` under ``dagster_dir``), no telemetry."""
    if postgres is None:
        storage = f"storage:\n  sqlite:\n    base_dir: {json.dumps(str(dagster_dir))}\n"
    else:
        fields = "".join(f"      {k}: {json.dumps(v)}\n" for k, v in postgres.items())
        storage = f"storage:\n  postgres:\n    postgres_db:\n{fields}"
    return "telemetry:\n  enabled: false\n" + storage


def require_postgres_storage() -> None:
    """Refuse, with the install command, a PostgreSQL instance where ``dagster-postgres`` is not installed."""
    if importlib.util.find_spec("dagster_postgres") is None:
        raise GridshiftError(f"this home's Dagster instance is on PostgreSQL ({POSTGRES_KEY} in gridshift.json) but "
                             f"dagster-postgres is not installed: {INSTALL_HINT}")
