"""A distributed sweep whose last worker dies fails with a clear error instead of waiting forever, and the runs
that finished before are published and indexed (a rerun reuses them)."""

from __future__ import annotations

import hashlib
import threading
import time

import pytest

from sim_core.bench.sweep import WorkersLostError, compare
from tests.loopback import loopback_only
from warehouse.benchmark_store import WarehouseRunStore
from warehouse.db import read_table

pytestmark = pytest.mark.distributed

POLS = ["local_only", "lowest_carbon", "defer_to_greener", "round_robin"]
SEEDS = list(range(10))


class SignallingStore:
    """The warehouse store, telling the test when the sweep has indexed its first runs (composition, not a
    subclass: compare() sees the same store protocol)."""

    def __init__(self, store: WarehouseRunStore):
        self.store = store
        self.indexed = threading.Event()

    def lookup(self, keys):
        return self.store.lookup(keys)

    def series(self, key):
        return self.store.series(key)

    def save(self, record):
        return self.store.save(record)

    def index(self, records_refs):
        self.store.index(records_refs)
        self.indexed.set()


def test_sweep_fails_when_its_last_worker_dies_and_keeps_what_finished(bundle, tmp_path):
    from distributed import Client

    from sim_core.bench.remote import local_cluster

    store = WarehouseRunStore(tmp_path / "w.duckdb", str(tmp_path / "results"))
    signalling = SignallingStore(store)
    with local_cluster(1) as cluster, Client(cluster) as client, loopback_only():
        client.wait_for_workers(1)

        killed_at = []

        def kill_the_worker_once_runs_are_indexed():
            if signalling.indexed.wait(300):
                killed_at.append(time.monotonic())
                cluster.scale(0)  # the only worker goes away: Dask holds the pending runs for a worker forever

        killer = threading.Thread(target=kill_the_worker_once_runs_are_indexed, daemon=True)
        killer.start()
        with pytest.raises(WorkersLostError, match=r"every worker of the distributed sweep is gone \(none for 2 s\) "
                                                   r"with \d+ of 40 runs unfinished") as err:
            compare(bundle, POLS, SEEDS, days=1, store=signalling, executor=client, results_url=store.results.url,
                    worker_wait_s=2.0)
        noticed_at = time.monotonic()
        killer.join()
    # the loss is noticed soon after the kill (2 s without a worker, then the scheduler's round trips), however
    # long the runs before it took (a cold compile in the worker takes minutes on a loaded machine): this bounds
    # a hang, it is no performance check
    assert killed_at and noticed_at - killed_at[0] < 120
    # every run whose receipt came back is indexed, with its object (the worker may have died after publishing
    # a run and before reporting it: that run counts as unfinished, and a rerun reads it from its object)
    idx = read_table(store.db_path, "SELECT policy, seed, result_sha256 FROM benchmark_runs")
    assert 1 <= idx.height < len(POLS) * len(SEEDS)
    files = list((tmp_path / "results").rglob("*.parquet"))
    objects = {hashlib.sha256(p.read_bytes()).hexdigest() for p in files}
    assert set(idx["result_sha256"].to_list()) <= objects
    assert f"the {idx.height} finished run(s) are published and indexed" in str(err.value)
    # a rerun in this process reuses every published run (indexed or not) and simulates only the rest
    again = compare(bundle, POLS, SEEDS, days=1, store=store)
    assert len(again.reused) == len(files) >= idx.height
    assert len(again.computed) == len(POLS) * len(SEEDS) - len(files)
