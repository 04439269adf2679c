"""A bundle's declared sizes are refused by name before anything is allocated for them (gridshift.bundle.size)."""

from __future__ import annotations

import tracemalloc

import pytest

import sim_core
from gridshift.bundle import BundleError, verify_bundle
from gridshift.bundle.size import check_bundle_sizes
from gridshift.limits import BUNDLE, BundleLimits, Limit
from tests.unit.gridshift.bundle_hostile import rewrite_manifest, rewrite_parquet, valid_bundle


@pytest.fixture
def bundle(tmp_path):
    return valid_bundle(tmp_path / "b")


def test_a_hundred_thousand_datacenters_are_refused_from_the_manifest(bundle):
    """The issue's case: 100,000 datacenters made verify try to allocate 74.5 GiB (the network matrices)."""
    many = [f"DC{i}" for i in range(100_000)]
    rewrite_manifest(bundle, lambda m: m.__setitem__("locations", many))
    tracemalloc.start()
    try:
        res = verify_bundle(bundle)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert not res.ok and len(res.problems) == 1
    err = res.problems[0]
    assert err.file.endswith("manifest.json") and err.column == "locations"
    assert f"1..{BUNDLE.datacenters.limit}" in str(err)
    assert peak < 200 << 20, f"refusing took {peak / 2**20:.0f} MiB"
    with pytest.raises(BundleError, match="locations"):
        sim_core.load(bundle)


def test_tasks_above_the_limit_are_refused_from_the_footer(bundle):
    small = BundleLimits(tasks=Limit(7, "rows", "test limit"))
    with pytest.raises(BundleError) as info:
        check_bundle_sizes(bundle, 3, 96, limits=small)
    err = info.value
    assert err.file.endswith("tasks.parquet")
    assert "the number of tasks is 8 rows, above the limit of 7 rows" in str(err)
    check_bundle_sizes(bundle, 3, 96, limits=BundleLimits(tasks=Limit(8, "rows", "test limit")))  # at the limit: ok


def test_network_rows_and_datacenters_above_their_limits(bundle):
    with pytest.raises(BundleError, match="the number of rows is 9 rows, above the limit of 8") as info:
        check_bundle_sizes(bundle, 3, 96, limits=BundleLimits(network_rows=Limit(8, "rows", "test")))
    assert info.value.file.endswith("network.parquet")
    with pytest.raises(BundleError, match="the number of datacenters is 3") as info:
        check_bundle_sizes(bundle, 3, 96, limits=BundleLimits(datacenters=Limit(2, "datacenters", "test")))
    assert info.value.file.endswith("manifest.json") and info.value.column == "locations"


def test_signals_row_count_is_checked_from_the_footer_before_reading(bundle):
    rewrite_parquet(bundle, "signals.parquet", lambda df: df.head(100))
    res = verify_bundle(bundle)
    assert not res.ok
    err = res.problems[0]
    assert err.file.endswith("signals.parquet")
    assert "100 rows, expected 3 locations x 96 steps (the Parquet footer)" in str(err)


def test_a_real_sized_bundle_is_within_every_limit(bundle):
    assert verify_bundle(bundle).ok
    check_bundle_sizes(bundle, 3, 96)


def test_a_bundle_above_the_datacenter_limit_is_never_written(tmp_path):
    from gridshift.bundle.format import DATA_FILES
    from gridshift.bundle.writer import finalize_manifest

    files = {name: b"" for name in DATA_FILES}
    with pytest.raises(BundleError, match="the number of datacenters is 257 datacenters, above the limit of 256"):
        finalize_manifest(files, {"locations": [f"DC{i}" for i in range(257)]})
    assert finalize_manifest(files, {"locations": [f"DC{i}" for i in range(256)]})["bundle_id"]


def test_a_bundle_above_the_task_limit_is_never_written():
    from gridshift.bundle.format import DATA_FILES
    from gridshift.bundle.writer import finalize_manifest

    files = {name: b"" for name in DATA_FILES}
    with pytest.raises(BundleError, match="the number of tasks is 500,000,001 rows, above the limit of 500,000,000"):
        finalize_manifest(files, {"locations": ["DE-LU"], "n_tasks": BUNDLE.tasks.limit + 1})
    assert finalize_manifest(files, {"locations": ["DE-LU"], "n_tasks": BUNDLE.tasks.limit})["bundle_id"]


def test_a_load_that_holds_every_task_column_takes_at_most_tasks_whole(bundle, monkeypatch):
    """A bundle larger than a whole load can hold (×10 of the source cluster: 412 M tasks) is refused by the whole
    load from its footer, naming the way that takes it (a run from its path, in chunks); verify and that run read
    it (gridshift.bundle.content)."""
    from gridshift.bundle import content

    monkeypatch.setattr(content, "BUNDLE", BundleLimits(tasks_whole=Limit(7, "rows", "test: run it in chunks")))
    with pytest.raises(BundleError, match="the number of tasks to hold whole is 8 rows, above the limit of 7 rows "
                                          r"\(test: run it in chunks\)") as info:
        sim_core.load(bundle)
    assert info.value.file.endswith("tasks.parquet")
    assert sim_core.load(bundle, lazy_tasks=True).n_tasks == 8
    assert verify_bundle(bundle).ok
