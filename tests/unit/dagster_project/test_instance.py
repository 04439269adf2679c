"""The home's Dagster instance: configured in dagster.yaml with Dagster's own storages, opened for a block and
passed explicitly; run key ranges and per-partition event tags built through the partitions definition."""

from __future__ import annotations

from pathlib import Path

import dagster as dg
import pytest

from dagster_project import runner
from dagster_project.partitions import add_years, dimension_tags, key, region_year
from gridshift import locations
from gridshift.home import Home

CODES = locations.all_codes()


def test_the_instance_is_dagsters_sqlite_storage_under_the_home_and_its_yaml_follows_the_home(tmp_path):
    home = Home(tmp_path / "a").ensure()
    d = runner.prepare_instance(home)
    assert d == home.dagster_dir
    text = (d / "dagster.yaml").read_text()
    assert text == runner.instance_yaml(d) and "module:" not in text  # Dagster's own classes only
    with runner.open_instance(home) as instance:
        assert instance.get_runs() == []
        assert type(instance.run_storage).__module__.startswith("dagster.")
        assert type(instance.event_log_storage).__module__.startswith("dagster.")
        assert type(instance.compute_log_manager).__module__.startswith("dagster.")
    # Dagster's usual places under the instance directory (what warehouse_digest and the UI read)
    assert (d / "history" / "runs.db").is_file() and (d / "history" / "runs").is_dir()
    moved = Home(tmp_path / "b").ensure()
    (moved.dagster_dir).mkdir(parents=True)
    (moved.dagster_dir / "dagster.yaml").write_text(text)  # copied from the old home: points at it
    runner.prepare_instance(moved)
    assert str(moved.dagster_dir) in (moved.dagster_dir / "dagster.yaml").read_text()
    assert str(d) not in (moved.dagster_dir / "dagster.yaml").read_text()


def test_an_instance_path_with_yaml_characters_is_quoted(tmp_path):
    home = Home(tmp_path / "a: b #c").ensure()
    with runner.open_instance(home) as instance:
        assert instance.get_runs() == []
    assert (home.dagster_dir / "history" / "runs.db").is_file()


def test_a_blocks_key_range_and_its_run_tags_expand_to_its_keys():
    block = runner.Block(("grid_carbon",), tuple(CODES[3:5]), (2022, 2023))
    r = block.key_range()
    assert r == dg.PartitionKeyRange(str(key(CODES[3], 2022)), str(key(CODES[4], 2023)))
    assert block.tags() == {runner.PARTITION_RANGE_START: r.start, runner.PARTITION_RANGE_END: r.end}
    with dg.instance_for_test() as instance:
        add_years(instance, [2022, 2023])
        got = region_year.get_partition_keys_in_range(r, dynamic_partitions_store=instance)
    assert [str(k) for k in got] == [str(k) for k in block.keys]
    one = runner.Block(("grid_carbon",), (CODES[0],), (2023,))
    assert one.key_range() is None and one.tags() is None


def test_a_range_that_would_expand_to_other_keys_is_refused():
    """Regions that are not neighbours in the registry cannot be one range: the runner refuses the run."""
    block = runner.Block(("grid_carbon",), (CODES[0], CODES[2]), (2023,))
    with dg.instance_for_test() as instance:
        add_years(instance, [2023])
        with pytest.raises(runner.GridshiftError, match="expands to 3 partitions, not the 2 planned"):
            runner._check_range(block, instance)


def test_dimension_tags_name_each_dimension_and_nothing_else():
    pk = key("DE-LU", 2023)
    assert dimension_tags(pk) == {"dagster/partition/region": "DE-LU", "dagster/partition/year": "2023"}
    event = dg.AssetMaterialization("grid_carbon", partition=str(pk), tags=dimension_tags(pk))
    assert isinstance(event.partition, dg.MultiPartitionKey)  # how Dagster reads the key back from storage
    assert event.partition.keys_by_dimension == {"region": "DE-LU", "year": "2023"}


def test_nothing_in_the_project_imports_dagsters_private_modules():
    root = Path(__file__).resolve().parents[3]
    packages = ("dagster_project", "gridshift", "gridshift_plots", "gridshift_cli", "warehouse", "scenario_builder",
                "pipelines", "sim_core", "benchmarks")
    offenders = [str(p.relative_to(root)) for sub in packages
                 for p in (root / sub).rglob("*.py") if "dagster._" in p.read_text(encoding="utf-8")]
    assert offenders == []


def test_a_home_configured_for_postgres_gets_dagsters_postgres_storage_without_a_password(tmp_path, monkeypatch):
    home = Home(tmp_path / "h").ensure()
    home.configure(dagster_postgres="postgresql://grid%20user@db.example:6543/gridshift")
    monkeypatch.setattr(runner, "require_postgres_storage", lambda: None)  # the yaml only: no server here
    text = (runner.prepare_instance(home) / "dagster.yaml").read_text()
    assert text == ("telemetry:\n  enabled: false\nstorage:\n  postgres:\n    postgres_db:\n"
                    '      username: "grid user"\n      hostname: "db.example"\n      port: 6543\n'
                    '      db_name: "gridshift"\n      scheme: "postgresql+psycopg2"\n')
    home.configure(dagster_postgres="")  # back to SQLite: the yaml follows the configuration
    assert "sqlite:" in (runner.prepare_instance(home) / "dagster.yaml").read_text()


@pytest.mark.parametrize(("url", "why"), [
    ("postgresql://u:secret@h/db", "holds a password"),
    ("mysql://u@h/db", "not a postgresql:// URL"),
    ("postgresql://h/db", "expected postgresql://USER@HOST"),
    ("postgresql://u@h/", "expected postgresql://USER@HOST"),
    ("postgresql://u@h:99999/db", "is not a PostgreSQL URL"),
])
def test_a_bad_postgres_url_is_refused_naming_the_setting_and_writing_nothing(tmp_path, url, why):
    home = Home(tmp_path / "h").ensure()
    home.configure(dagster_postgres=url)
    with pytest.raises(runner.GridshiftError, match=why) as err:
        runner.prepare_instance(home)
    assert "gridshift.json: dagster_postgres" in str(err.value) and "secret" not in str(err.value)
    assert not (home.dagster_dir / "dagster.yaml").exists()


def test_postgres_without_dagster_postgres_installed_names_the_install_command(tmp_path, monkeypatch):
    import importlib.util

    from dagster_project import instance_config

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == "dagster_postgres"
                        else real(name, *a))
    with pytest.raises(runner.GridshiftError, match="GRIDSHIFT_EXTRAS=postgres"):
        instance_config.require_postgres_storage()
