"""The dataset catalogue presets (run option ``catalogue``, sim_core.locality; docs/simulation.md "Data locality"):
``trace_groups`` gives every tenant its own copy of each dataset, homed at the tenant's site; the draw of tenants is
reproducible; one tenant per site with one origin is ``public`` exactly; every job group ships its own dataset once;
without locality both presets move the same GB; bad values are refused, naming the option."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

import sim_core
from gridshift.run_options import PAI_2020_USERS
from sim_core.locality import (
    NO_DATASET,
    caption,
    n_datasets,
    replication_share,
    task_datasets,
    task_tenants,
    tenants_per_site,
    window_datasets,
)
from sim_core.options import RunOptionsError
from tests.unit.sim_core.test_locality import IMAGENET, SQUAD, P, _bundle, _run, moved_gb

N = 40
K = len(P.ai_workloads)


@pytest.fixture(scope="module")
def mixed(tmp_path_factory):
    """40 tasks an hour apart, all from site AA, all sent to BB: ImageNet (even), SQuAD (odd; every 10th task a
    reference-sized input, no dataset)."""
    bw = np.where(np.arange(N) % 2 == 0, moved_gb(IMAGENET)[0], moved_gb(SQUAD)[0])
    bw[1::10] = 0.4321
    return _bundle(tmp_path_factory.mktemp("cat"), bw, np.arange(N) * 3600.0 + 60.0), bw


def test_tenants_are_the_documented_draw(mixed):
    """One uniform draw per bundle task from (workload seed, stream 35): the same on every load of the bundle, and
    another under another workload seed."""
    sc, _ = mixed
    t = task_tenants(sc, 650)
    np.testing.assert_array_equal(
        t, np.random.default_rng(np.random.SeedSequence([0, 35])).integers(0, 650, size=N, dtype=np.int64))
    np.testing.assert_array_equal(task_tenants(sim_core.load(sc.path), 650), t)
    assert not t.flags.writeable
    other = dataclasses.replace(sc, manifest={**sc.manifest, "parameters": {**sc.manifest["parameters"], "seed": 1}})
    assert not np.array_equal(task_tenants(other, 650), t)
    assert tenants_per_site(2, PAI_2020_USERS) == 650 and tenants_per_site(3, PAI_2020_USERS) == 434
    assert tenants_per_site(3, 1) == 1  # at least one per site


def test_dataset_ids_are_origin_tenant_and_entry(mixed):
    sc, _ = mixed
    rows = np.arange(N)
    origin = np.zeros(N, np.int64)
    ds, gb = window_datasets(sc, rows, origin, "trace_groups", PAI_2020_USERS)
    entry, entry_gb = task_datasets(sc)
    t = task_tenants(sc, 650)
    np.testing.assert_array_equal(ds, np.where(entry >= 0, t * K + entry, NO_DATASET))
    np.testing.assert_array_equal(gb, entry_gb)  # the tasks' own sizes
    assert ds.dtype == np.int32 and ds.max() < n_datasets(sc, "trace_groups") == 2 * 650 * K
    # the same task from the other site belongs to a tenant homed there: another dataset
    ds1, _ = window_datasets(sc, rows, np.ones(N, np.int64), "trace_groups", PAI_2020_USERS)
    has = entry >= 0
    assert (ds1[has] == ds[has] + 650 * K).all()
    pub, pub_gb = window_datasets(sc, rows, origin)
    np.testing.assert_array_equal(pub, entry)
    np.testing.assert_array_equal(pub_gb, entry_gb)
    assert n_datasets(sc) == K


def test_one_tenant_per_site_is_public(mixed):
    """Two sites, two tenants: one per site; with every task from AA the groups are the public entries."""
    sc, _ = mixed
    pub = _run(sc)
    one = _run(sc, catalogue="trace_groups", catalogue_tenants=2)
    assert one.totals == pub.totals
    assert one.transfers.equals(pub.transfers)


@pytest.mark.parametrize("tenants", [20, PAI_2020_USERS])
def test_each_job_group_ships_its_own_dataset(mixed, tenants):
    """The first move of each (tenant, entry) ships its dataset, later ones (within the 30-day retention) only the
    checkpoint; a task without a dataset ships its own input. 20 tenants (10 at AA): groups repeat; 1,300: the 36
    tasks with a dataset fall in 36 groups, so every move ships its dataset, as without locality."""
    sc, bw = mixed
    r = _run(sc, catalogue="trace_groups", catalogue_tenants=tenants)
    x = r.transfers.sort("decision_ts_utc")
    tid = x["task_id"].to_numpy()
    ds, ds_gb = window_datasets(sc, tid, np.zeros(N, np.int64), "trace_groups", tenants)
    seen: set[int] = set()
    expect = []
    for i, k, g in zip(tid, ds.tolist(), ds_gb, strict=True):
        expect.append(bw[i] - g if k in seen else bw[i])
        if k >= 0:
            seen.add(k)
    np.testing.assert_array_equal(x["bandwidth_gb"].to_numpy(), np.array(expect))
    n_groups = len({k for k in ds.tolist() if k >= 0})
    if tenants == 20:
        assert 10 <= n_groups < 20 and (x["bandwidth_gb"].to_numpy() < bw[tid]).sum() == 36 - n_groups
    else:
        assert n_groups == 36
        np.testing.assert_array_equal(x["bandwidth_gb"].to_numpy(), bw[tid])
    assert r.totals["transfer_kwh"] > _run(sc).totals["transfer_kwh"]


def test_without_locality_both_catalogues_move_the_same(mixed):
    sc, _ = mixed
    a = _run(sc, locality=False)
    b = _run(sc, locality=False, catalogue="trace_groups")
    assert a.totals == b.totals and a.transfers.equals(b.transfers)


def test_replication_share():
    rep = np.array([[0.0, -np.inf, 5.0], [-np.inf, -np.inf, 7.0]])
    assert replication_share(rep, np.array([0, 2, NO_DATASET, 2])) == 0.75
    assert replication_share(rep, np.array([1])) == 0.0
    assert np.isnan(replication_share(rep, np.array([NO_DATASET])))


def test_caption_names_the_catalogue():
    base = {"locality": True, "locality_retention_days": 30.0, "catalogue": "public", "catalogue_tenants": 1300}
    assert caption(base) == "on, replicas kept 30.0 days after last use"
    assert caption({**base, "catalogue": "trace_groups"}) == ("on, replicas kept 30.0 days after last use; datasets "
                                                              "per tenant (1300 tenants, catalogue trace_groups)")


@pytest.mark.parametrize("kw", [{"catalogue": "private"}, {"catalogue": None}, {"catalogue_tenants": 0},
                                {"catalogue_tenants": 1.5}, {"catalogue_tenants": True},
                                {"catalogue_tenants": 10**7}])
def test_bad_catalogue_options_are_refused(mixed, kw):
    sc, _ = mixed
    with pytest.raises(RunOptionsError, match=next(iter(kw))):
        sim_core.run(sc, "local_only", seed=0, days=1, **kw)


def test_an_unknown_preset_is_refused_by_the_module(mixed):
    sc, _ = mixed
    with pytest.raises(ValueError, match="catalogue must be one of"):
        window_datasets(sc, np.arange(N), np.zeros(N, np.int64), "private")
    with pytest.raises(ValueError, match="catalogue must be one of"):
        n_datasets(sc, "private")
