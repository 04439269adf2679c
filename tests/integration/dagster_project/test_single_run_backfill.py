"""A multi-partition materialization is ONE Dagster run (``BackfillPolicy.single_run()``) and leaves the
warehouse byte for byte as one run per partition does, with the same per-partition materializations; its two
checks are evaluated once for the run, naming every partition they judged.

Real mirror files, 2 regions × 2 years (CL-SIC, DE-LU: consecutive in the registry, so one key range)
× 3 signals = 12 partitions. "Byte-identical" is checked on every table's content, ordered by primary
key and serialized to Arrow IPC; ``raw_files.fetched_at`` (the wall-clock time of the first landing)
is the one column left out, since two homes land the files at different times.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import dagster as dg
import polars as pl
import pytest

from dagster_project import checks, runner
from dagster_project.assets import grid
from dagster_project.partitions import add_years, key
from dagster_project.resources import GridshiftResource
from gridshift.home import Home
from tests.integration.helpers import mirror_with, replace_line, tree_digest, year_instance
from warehouse.content import ipc_bytes, table_content
from warehouse.db import read_table
from warehouse.schemas import TABLES

QUIET = {"loggers": {"console": {"config": {"log_level": "CRITICAL"}}}}
REGIONS, YEARS = ("CL-SIC", "DE-LU"), (2022, 2023)
KINDS = ("carbon", "price", "weather")
GRID_TABLES = ("grid_carbon", "grid_price", "weather")
BAD_FILE = "electricitymaps/DE-LU/DE-LU_2023_hourly.csv"


def _per_partition(home: Path, mirror: Path, kinds=KINDS) -> None:
    """One run per partition, region by region and year by year (what the CLI did before)."""
    assets = [a for a in grid.ASSETS if a.key.to_user_string() in {f"grid_{k}" if k != "weather" else k
                                                                   for k in kinds}]
    instance, res = year_instance(*YEARS), {"gridshift": GridshiftResource(home=str(home), mirror=str(mirror))}
    for region in REGIONS:
        for year in YEARS:
            dg.materialize(assets, partition_key=key(region, year), raise_on_error=False, run_config=QUIET,
                           instance=instance, resources=res)


def _single_run(home: Path, mirror: Path, kinds=KINDS) -> dict:
    return runner.materialize_grid([(k, r, y) for r in REGIONS for y in YEARS for k in kinds],
                                   home=Home(home), mirror=mirror)


def _content(home: Path) -> dict[str, bytes]:
    """Every non-empty table, ordered by its primary key, as Arrow IPC bytes (``warehouse.content``)."""
    db = Home(home).warehouse_path
    frames = {name: table_content(db, name) for name in TABLES}
    return {name: ipc_bytes(df) for name, df in frames.items() if df.height}


def _frame(content: dict[str, bytes], table: str) -> pl.DataFrame:
    return pl.read_ipc(content[table])


@pytest.fixture(scope="module")
def reference(tmp_path_factory, shared_data) -> dict[str, bytes]:
    home = tmp_path_factory.mktemp("per_partition")
    _per_partition(home, shared_data)
    return _content(home)


def test_single_run_equals_per_partition_runs_byte_for_byte(tmp_path, shared_data, reference):
    home = tmp_path / "home"
    runs: list[runner.Block] = []
    out = runner.materialize_grid([(k, r, y) for r in REGIONS for y in YEARS for k in KINDS], home=Home(home),
                                  mirror=shared_data, on_run=runs.append)
    assert len(runs) == 1 and set(runs[0].assets) == set(GRID_TABLES)  # one run, one step per asset
    assert all(o.ok for o in out.values()) and len(out) == 12
    got = _content(home)
    assert set(got) == {*GRID_TABLES, "partition_quality", "raw_files"} == set(reference)
    for table in reference:
        assert _frame(got, table).equals(_frame(reference, table)), table
        assert hashlib.sha256(got[table]).digest() == hashlib.sha256(reference[table]).digest(), table
    # real numbers: 12 raw files, 12 partition rows, each signal 4 UTC years of hourly rows (2 regions × 2 years)
    assert _frame(got, "raw_files").height == 12 and _frame(got, "partition_quality").height == 12
    q = _frame(got, "partition_quality")
    assert q.filter(pl.col("signal") == "carbon")["present"].to_list() == [8760] * 4
    carbon = _frame(got, "grid_carbon")
    assert carbon.group_by("location").len().sort("location").rows() == [("CL-SIC", 17520), ("DE-LU", 17520)]


def test_single_run_records_each_partition_as_its_own_run_would(tmp_path, shared_data):
    """Per partition: one materialization (its own metadata); both checks once for the run, each naming every
    partition with its own figures."""
    home = Home(tmp_path / "home")
    with runner.open_instance(home) as instance:
        block = runner.plan_runs([("grid_carbon", r, y) for r in REGIONS for y in YEARS], add_years(instance, YEARS))
        assert len(block) == 1 and block[0].tags() is not None  # a key range: what a UI single-run backfill sends
        res = dg.materialize([grid.grid_carbon], tags=block[0].tags(), run_config=QUIET, instance=instance,
                             resources=runner.resources(home, shared_data))
        assert res.success
        mats = {str(m.partition): m for m in res.asset_materializations_for_node("grid_carbon")}
        assert set(mats) == {str(key(r, y)) for r in REGIONS for y in YEARS}
        assert all(m.metadata["rows"].value >= 8760 and m.metadata["coverage"].value == 1.0 for m in mats.values())
        assert len({m.metadata["raw_sha256"].value for m in mats.values()}) == 4
        # each materialization names its dimensions, as Dagster's own per-partition outputs do
        assert all(m.tags == {"dagster/partition/region": pk.split("|")[0], "dagster/partition/year": pk.split("|")[1]}
                   for pk, m in mats.items())
        evals = {e.check_name: e for e in res.get_asset_check_evaluations()}
        assert set(evals) == {checks.SCHEMA_CHECK, checks.COVERAGE_CHECK}
        assert len(res.get_asset_check_evaluations()) == 2  # one evaluation per check for the run
        assert all(e.passed and e.blocking and e.partition is None for e in evals.values())
        schema, coverage = evals[checks.SCHEMA_CHECK].metadata, evals[checks.COVERAGE_CHECK].metadata
        assert schema["partitions_checked"].value == 4 and set(schema["partitions"].value) == set(mats)
        assert schema["rows"].value == sum(m.metadata["rows"].value for m in mats.values())
        assert {pk: p["rows"] for pk, p in schema["partitions"].value.items()} == {
            pk: m.metadata["rows"].value for pk, m in mats.items()}
        assert coverage["coverage"].value == 1.0 and {pk: (p["present"], p["expected"]) for pk, p in
                                                      coverage["partitions"].value.items()} == {
            pk: (8760, 8760) for pk in mats}
        # each evaluation is recorded in the run that materialized its partition (how Dagster relates them)
        records = instance.fetch_materializations(dg.AssetKey("grid_carbon"), limit=10).records
        assert {r.partition_key for r in records} == set(mats) and {r.run_id for r in records} == {res.run_id}
        # the instance shows every partition materialized (the UI's partition status), multi-partition keys
        status = instance.get_materialized_partitions(dg.AssetKey("grid_carbon"))
        assert status == set(mats)


def test_reingest_as_one_run_changes_nothing(tmp_path, shared_data):
    """Idempotent: the same batch again writes no byte of the warehouse and keeps raw_files.fetched_at."""
    home = tmp_path / "home"
    _single_run(home, shared_data)
    db = Home(home).warehouse_path
    before = (hashlib.sha256(db.read_bytes()).hexdigest(), tree_digest(home),
              read_table(db, "SELECT sha256, fetched_at FROM raw_files ORDER BY sha256"))
    again = _single_run(home, shared_data)
    assert all(o.ok for o in again.values())
    after = (hashlib.sha256(db.read_bytes()).hexdigest(), tree_digest(home),
             read_table(db, "SELECT sha256, fetched_at FROM raw_files ORDER BY sha256"))
    assert before[0] == after[0] and before[1] == after[1] and before[2].equals(after[2])


@pytest.fixture(scope="module")
def bad_mirror(tmp_path_factory, shared_data) -> Path:
    return mirror_with(shared_data, tmp_path_factory.mktemp("bad"), BAD_FILE,
                       replace_line(30, lambda ln: ln.replace(",DE,", ",FR,")))


def test_one_bad_partition_is_named_and_the_good_ones_land_as_per_partition_runs(tmp_path, bad_mirror):
    """Decision: a refused partition writes nothing; the others are written whole (one transaction), as a
    backfill of one run per partition leaves them. The warehouse equals that of per-partition runs."""
    ref_home, home = tmp_path / "ref", tmp_path / "home"
    _per_partition(ref_home, bad_mirror, kinds=("carbon",))
    out = _single_run(home, bad_mirror, kinds=("carbon",))
    bad = out[("carbon", "DE-LU", 2023)]
    assert not bad.ok and bad.error_type == "DataError"
    assert "DE-LU_2023_hourly.csv" in bad.error and "Zone Id" in bad.error
    assert [o.label for o in out.values() if o.ok] == ["grid_carbon CL-SIC 2022", "grid_carbon CL-SIC 2023",
                                                       "grid_carbon DE-LU 2022"]
    assert _content(home) == _content(ref_home)
    db = Home(home).warehouse_path
    assert read_table(db, "SELECT location, year FROM partition_quality ORDER BY ALL").rows() == [
        ("CL-SIC", 2022), ("CL-SIC", 2023), ("DE-LU", 2022)]
    assert read_table(db, "SELECT count(*) n FROM grid_carbon WHERE ts_utc >= '2023-01-01 01:00:00+00' "
                          "AND location = 'DE-LU'")["n"][0] == 0
    raw = {p.name for p in (Path(home) / "raw").rglob("*") if p.is_file()}
    assert len(raw) == 3  # the refused file is not landed
    # the run names the refused partition; its failed check belongs to that partition alone
    res = dg.materialize([grid.grid_carbon], tags=runner.plan_runs(
        [("grid_carbon", r, y) for r in REGIONS for y in YEARS], YEARS)[0].tags(), run_config=QUIET,
        raise_on_error=False, resources=runner.resources(Home(tmp_path / "h2"), bad_mirror),
        instance=year_instance(*YEARS))
    assert not res.success
    failure = next(e for e in res.all_events if e.is_step_failure)
    assert "grid_carbon DE-LU 2023" in failure.step_failure_data.user_failure_data.description
    failed = [e for e in res.get_asset_check_evaluations() if not e.passed]
    assert [e.check_name for e in failed] == [checks.SCHEMA_CHECK]
    meta = failed[0].metadata
    assert list(meta["refused"].value) == [str(key("DE-LU", 2023))] and "Zone Id" in meta["refused"].value[
        str(key("DE-LU", 2023))]
    assert meta["column"].value == "Zone Id" and meta["file"].value.endswith("DE-LU_2023_hourly.csv")
    assert meta["partitions_checked"].value == 4 and set(meta["partitions"].value) == {
        str(key(r, y)) for r in REGIONS for y in YEARS} - {str(key("DE-LU", 2023))}
    (cov,) = [e for e in res.get_asset_check_evaluations() if e.check_name == checks.COVERAGE_CHECK]
    assert cov.passed and len(cov.metadata["partitions"].value) == 3  # the three written partitions
    assert {str(m.partition) for m in res.asset_materializations_for_node("grid_carbon")} == {
        str(key(r, y)) for r in REGIONS for y in YEARS} - {str(key("DE-LU", 2023))}


def test_a_failed_database_write_writes_nothing_for_any_partition(tmp_path, shared_data, monkeypatch):
    """The accepted partitions share one transaction: when the database fails, none is written, no raw file
    stays landed, and every partition of the batch is reported failed with the cause."""
    import warehouse.ingest as ingest

    def _full(*_a, **_k):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(ingest, "write", _full)
    home = tmp_path / "home"
    out = _single_run(home, shared_data, kinds=("carbon",))
    assert len(out) == 4 and not any(o.ok for o in out.values())
    assert all("No space left on device" in o.error for o in out.values())
    assert not any(p.is_file() for p in (home / "raw").rglob("*"))
    assert not Home(home).warehouse_path.exists() or read_table(
        Home(home).warehouse_path, "SELECT count(*) n FROM grid_carbon")["n"][0] == 0


def test_cli_names_the_bad_partition_and_exits_1(tmp_path, bad_mirror):
    from typer.testing import CliRunner

    from gridshift_cli import app

    res = CliRunner().invoke(app, ["ingest", "--regions", ",".join(REGIONS), "--year", "2022,2023", "--sources",
                                   "carbon", "--mirror", str(bad_mirror), "--home", str(tmp_path)])
    assert res.exit_code == 1
    failed = [ln for ln in res.output.splitlines() if "FAILED:" in ln]
    assert len(failed) == 1 and failed[0].startswith("grid_carbon DE-LU 2023 FAILED:"), res.output
    assert "DE-LU_2023_hourly.csv" in res.output and "Zone Id" in res.output and "Traceback" not in res.output
    assert read_table(Home(tmp_path).warehouse_path, "SELECT count(*) n FROM partition_quality")["n"][0] == 3
