"""The year partitions are the years the sources can provide: the configured mirror's years when the UI starts,
plus every year a command-line run asked for (a live year outside the mirror included), never a fixed span."""

from __future__ import annotations

import dagster as dg
import pytest

from dagster_project import partitions, plan, runner, ui
from dagster_project.definitions import build_defs
from dagster_project.partitions import add_years, key, years
from gridshift import locations
from gridshift.errors import excerpt
from gridshift.home import Home
from warehouse.ingest_workload import WORKLOADS


def _keys(defs: dg.Definitions, asset: str, instance: dg.DagsterInstance) -> list[str]:
    pdef = defs.resolve_assets_def(asset).partitions_def
    return [str(k) for k in pdef.get_partition_keys(dynamic_partitions_store=instance)]


def test_the_ui_offers_the_configured_mirrors_years_times_regions(tmp_path, shared_data, monkeypatch):
    """The mirror holds 2022 and 2023: the grid assets' partitions are those years × every region (46), the
    workload's those years × every workload; not the 2015..now span (276) most of which no file backs."""
    monkeypatch.delenv("GRIDSHIFT_MIRROR", raising=False)
    home = Home(tmp_path / "home").ensure()
    home.configure(mirror=str(shared_data))  # what `gridshift ui --mirror DIR` records
    assert plan.mirror_years(shared_data) == [2022, 2023]
    assert ui.offer_mirror_years(home) == [2022, 2023]
    assert ui.offer_mirror_years(home) == [2022, 2023]  # idempotent: a second start adds nothing
    defs = build_defs()
    with runner.open_instance(home) as instance:
        grid_keys = _keys(defs, "grid_carbon", instance)
        assert sorted(grid_keys) == sorted(str(key(r, y)) for r in locations.all_codes() for y in (2022, 2023))
        assert len(grid_keys) == 2 * len(locations.all_codes())
        assert sorted(_keys(defs, "workload_tasks", instance)) == sorted(
            f"{w}|{y}" for w in WORKLOADS for y in (2022, 2023))


def test_no_mirror_offers_no_year_until_a_run_asks_for_one(tmp_path, monkeypatch):
    monkeypatch.delenv("GRIDSHIFT_MIRROR", raising=False)
    home = Home(tmp_path / "home").ensure()
    assert plan.mirror_years(None) == [] and plan.mirror_years(tmp_path / "empty") == []
    assert ui.offer_mirror_years(home) == []


def test_years_are_added_once_in_ascending_order_and_a_year_no_source_has_is_refused():
    with dg.instance_for_test() as instance:
        assert add_years(instance, [2023, 2022, 2023]) == [2022, 2023]
        assert add_years(instance, [2019, 2023]) == [2022, 2023, 2019]  # appended: the instance keeps its order
        last = plan.source_years()[-1]
        with pytest.raises(ValueError, match=rf"{last + 1}: no source provides that year \(they provide 2015\.\."):
            add_years(instance, [2022, last + 1])
        with pytest.raises(ValueError, match="2014: no source provides"):
            add_years(instance, [2014])
        assert instance.get_dynamic_partitions(years.name) == ["2022", "2023", "2019"]


def test_key_ranges_follow_the_instances_year_order():
    """A key range expands along the instance's key order, not numerically: with 2019 added after 2022 and
    2023, the keys 2022, 2023, 2019 are neighbours (one run whose range expands to exactly them), while 2019 and
    2022 are not (two runs, the earlier year first)."""
    with dg.instance_for_test() as instance:
        add_years(instance, [2022, 2023])
        order = add_years(instance, [2019])
        assert order == [2022, 2023, 2019]
        (one,) = runner.plan_runs([("grid_carbon", "DE-LU", y) for y in (2019, 2022, 2023)], order)
        assert one.years == (2022, 2023, 2019) and one.tags() is not None
        runner._check_range(one, instance)  # expands to exactly its three keys
        two = runner.plan_runs([("grid_carbon", "DE-LU", y) for y in (2019, 2022)], order)
        assert [b.years for b in two] == [(2019,), (2022,)] and all(b.tags() is None for b in two)
        # numeric order would have wrongly planned 2022..2023..2019 as a range the instance expands differently
        wrong = runner.Block(("grid_carbon",), ("DE-LU",), (2019, 2022, 2023))
        with pytest.raises(runner.GridshiftError, match="expands to 0 partitions, not the 3 planned"):
            runner._check_range(wrong, instance)


#: Keys the UI's GraphQL API accepts (addDynamicPartition takes any string) and none of which is a year key.
HOSTILE_YEAR_KEYS = ["abc", " 2023", "02023", "../../../etc/x", "x" * 5000, "1999", "２０２３", "2023|DE-LU"]


def test_a_year_key_is_four_digits_of_a_source_year():
    assert partitions.year_of_key("2023") == 2023
    for bad in HOSTILE_YEAR_KEYS:
        with pytest.raises(partitions.BadYearKeyError, match="is not a year its sources provide") as err:
            partitions.year_of_key(bad)
        assert len(str(err.value)) < 300  # the 5,000-character key is quoted as a prefix
    assert partitions.bad_year_keys(["2022", *HOSTILE_YEAR_KEYS, "2023"]) == HOSTILE_YEAR_KEYS


def test_bad_year_keys_stored_by_the_ui_are_removed_by_name_and_runs_and_the_ui_go_on(tmp_path, shared_data,
                                                                                       monkeypatch, caplog):
    """Bad keys stored in the home's instance (as the UI's API stores them, between good ones) are reported by
    name and removed when the UI starts; an ingest of a year on either side of them then runs as one range."""
    monkeypatch.delenv("GRIDSHIFT_MIRROR", raising=False)
    home = Home(tmp_path / "home").ensure()
    home.configure(mirror=str(shared_data))
    with runner.open_instance(home) as instance:
        instance.add_dynamic_partitions(years.name, ["2022", *HOSTILE_YEAR_KEYS, "2023"])
    with caplog.at_level("WARNING", logger=partitions.__name__):
        assert ui.offer_mirror_years(home) == [2022, 2023]  # `gridshift ui` starts
    said = caplog.text
    assert all(repr(excerpt(k)) in said for k in HOSTILE_YEAR_KEYS)
    assert "x" * 100 not in said  # the long key by its prefix
    with runner.open_instance(home) as instance:
        assert instance.get_dynamic_partitions(years.name) == ["2022", "2023"]
        instance.add_dynamic_partitions(years.name, ["abc"])  # a key added again after the UI started
        out = runner.materialize_grid([("carbon", "DE-LU", 2022), ("carbon", "DE-LU", 2023)], home=home,
                                      mirror=shared_data, instance=instance)
        assert all(o.ok for o in out.values()), out
        assert instance.get_dynamic_partitions(years.name) == ["2022", "2023"]


def test_the_sensor_removes_bad_year_keys_the_ui_accepted():
    with dg.instance_for_test() as instance:
        instance.add_dynamic_partitions(years.name, ["2022", "abc", "02023"])
        result = partitions.remove_bad_year_keys_sensor(dg.build_sensor_context(instance=instance))
        (request,) = result.dynamic_partitions_requests
        assert isinstance(request, dg.DeleteDynamicPartitionsRequest)
        assert list(request.partition_keys) == ["abc", "02023"]
        instance.delete_dynamic_partition(years.name, "abc")
        instance.delete_dynamic_partition(years.name, "02023")
        assert isinstance(partitions.remove_bad_year_keys_sensor(dg.build_sensor_context(instance=instance)),
                          dg.SkipReason)


def test_a_run_launched_on_a_bad_year_key_is_refused_by_name():
    """A run the UI launches on a bad key (before the sensor removed it) fails naming the key, not int()'s error."""
    with dg.instance_for_test() as instance:
        instance.add_dynamic_partitions(years.name, ["abc"])
        pk = dg.MultiPartitionKey({"region": "DE-LU", "year": "abc"})
        defs = build_defs()
        result = defs.resolve_implicit_global_asset_job_def().execute_in_process(
            instance=instance, partition_key=str(pk), asset_selection=[dg.AssetKey("grid_carbon")],
            raise_on_error=False)
        assert not result.success
        text = " ".join(str(ev.event_specific_data) for ev in result.all_events if ev.is_step_failure)
        assert "year partition key 'abc' is not a year its sources provide" in text
