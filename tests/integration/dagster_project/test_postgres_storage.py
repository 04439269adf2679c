"""A home whose Dagster instance is on PostgreSQL (Dagster's ``dagster-postgres`` storage, docs/distributed.md):
a real server started by the test from Debian's ``postgresql`` package (``initdb`` + ``pg_ctl`` on a temporary
folder and a free loopback port, as a non-root user when the test runs as root), the home pointed at it by its
``gridshift.json``, and a small ingest through the CLI recorded there — runs, materializations and checks in the
server's tables, no SQLite storage under the home.

Skipped, with the install commands, where the server or the ``postgres`` extra is absent; failed instead when
``CI=true`` (``.ci/run`` installs both).
"""

from __future__ import annotations

import glob
import os
import pwd
import shutil
import subprocess
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from gridshift.home import Home
from tests.integration.dagster_project.ui import free_port

INSTALL = ("./run.sh install-postgresql (Debian's server: initdb and pg_ctl under /usr/lib/postgresql/*/bin) "
           "and GRIDSHIFT_EXTRAS=postgres ./run.sh ... (dagster-postgres)")


def _absent(what: str) -> None:
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"{what} (required in CI): {INSTALL}")
    pytest.skip(f"{what}: {INSTALL}")


def _server_bin() -> Path:
    bins = sorted(glob.glob("/usr/lib/postgresql/*/bin"), key=lambda p: int(Path(p).parent.name))
    found = [Path(b) for b in bins if (Path(b) / "initdb").is_file() and (Path(b) / "pg_ctl").is_file()]
    if not found:
        _absent("PostgreSQL's server is not installed")
    return found[-1]


@pytest.fixture(scope="module")
def postgres_url() -> Iterator[str]:
    """``postgresql://gridshift@127.0.0.1:PORT/postgres`` of a server of our own, stopped and removed afterwards."""
    try:
        import dagster_postgres  # noqa: F401 - and psycopg2, its dependency
    except ImportError:
        _absent("dagster-postgres is not installed")
    bindir = _server_bin()
    data = Path(tempfile.mkdtemp(prefix="gridshift-pg-"))
    as_user: list[str] = []
    if os.geteuid() == 0:  # the server refuses to run as root: as Debian's postgres user (or nobody)
        user = next((u for u in ("postgres", "nobody") if _has_user(u)), None)
        if user is None:
            _absent("no unprivileged user to run PostgreSQL as")
        entry = pwd.getpwnam(user)
        os.chown(data, entry.pw_uid, entry.pw_gid)
        as_user = ["setpriv", f"--reuid={entry.pw_uid}", f"--regid={entry.pw_gid}", "--clear-groups"]
    port = free_port()
    pgdata = data / "pgdata"

    def run(*cmd: str) -> None:
        subprocess.run([*as_user, *cmd], check=True, capture_output=True, text=True, cwd=data)

    try:
        run(str(bindir / "initdb"), "-D", str(pgdata), "-U", "gridshift", "--auth=trust", "-E", "UTF8", "--no-sync")
        run(str(bindir / "pg_ctl"), "-D", str(pgdata), "-w", "-t", "60", "-l", str(data / "server.log"), "-o",
            f"-p {port} -k {data} -c listen_addresses=127.0.0.1", "start")
        yield f"postgresql://gridshift@127.0.0.1:{port}/postgres"
    finally:
        if (pgdata / "postmaster.pid").exists():
            subprocess.run([*as_user, str(bindir / "pg_ctl"), "-D", str(pgdata), "-m", "fast", "-w", "stop"],
                           capture_output=True, cwd=data)
        shutil.rmtree(data, ignore_errors=True)


def _has_user(name: str) -> bool:
    try:
        pwd.getpwnam(name)
    except KeyError:
        return False
    return True


def test_an_ingest_on_a_postgres_instance_records_its_runs_there(tmp_path, shared_data, postgres_url):
    import dagster as dg
    import psycopg2
    from typer.testing import CliRunner

    from dagster_project import checks, runner
    from gridshift_cli import app
    from warehouse.db import read_table

    home = Home(tmp_path / "home").ensure()
    home.configure(dagster_postgres=postgres_url)
    res = CliRunner().invoke(app, ["ingest", "--regions", "DE-LU", "--year", "2023", "--sources", "carbon,price",
                                   "--mirror", str(shared_data), "--home", str(home.root)])
    assert res.exit_code == 0, res.output
    assert read_table(home.warehouse_path, "SELECT count(*) n FROM grid_carbon")["n"][0] == 8760
    # the instance is Dagster's PostgreSQL storage; nothing of the SQLite storage was made under the home
    assert "postgres:" in (home.dagster_dir / "dagster.yaml").read_text()
    assert not (home.dagster_dir / "history").exists()
    with runner.open_instance(home) as instance:
        assert type(instance.run_storage).__module__.startswith("dagster_postgres")
        assert type(instance.event_log_storage).__module__.startswith("dagster_postgres")
        runs = instance.get_runs()
        assert len(runs) == 1 and runs[0].status == dg.DagsterRunStatus.SUCCESS  # one range run, both signals
        assert runs[0].tags[runner.COMMAND_TAG] == "gridshift ingest"
        for asset in ("grid_carbon", "grid_price"):
            assert instance.get_materialized_partitions(dg.AssetKey(asset)) == {"DE-LU|2023"}
            mats = instance.fetch_materializations(dg.AssetKey(asset), limit=5).records
            assert [m.asset_materialization.metadata["rows"].value for m in mats] == [8760]
    # the server's own tables hold them (what the UI of any machine pointed at it reads)
    with psycopg2.connect(postgres_url) as conn, conn.cursor() as cur:
        cur.execute("SELECT count(*) FROM runs WHERE status = 'SUCCESS'")
        assert cur.fetchone()[0] == 1
        cur.execute("SELECT dagster_event_type, count(*) FROM event_logs WHERE dagster_event_type LIKE 'ASSET_%' "
                    "GROUP BY 1 ORDER BY 1")
        events = dict(cur.fetchall())
    assert events["ASSET_MATERIALIZATION"] == 2
    assert events["ASSET_CHECK_EVALUATION"] == 2 * len((checks.SCHEMA_CHECK, checks.COVERAGE_CHECK))
