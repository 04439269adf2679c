"""Chunked stepping (sim_core.chunks, issue 34 item 4): a run that takes its window's tasks a few steps of arrivals
at a time, dropping the done tasks from the engine's arrays between chunks, gives the one-chunk run's results bit for
bit. The golden bundle (tests/unit/sim_core/test_golden_totals.py) queues, defers and sends tasks away, so a chunk of
seven steps (105 min) leaves tasks pending, in transit and queued across most boundaries; its recorded digests are
those of one-chunk runs."""

from __future__ import annotations

import json

import numpy as np
import pytest

import sim_core
from sim_core import chunks as K
from sim_core import engine as E
from sim_core.drain import WORK_KEYS
from sim_core.engine import layout as L
from sim_core.options import RunOptionsError
from sim_core.policies import registry
from sim_core.simulator import Prepared, combine_minima
from tests.unit.sim_core.test_golden_totals import (
    DIGESTS,
    DRAIN_DAYS,
    DRAINED,
    POWERS,
    _frame_digest,
    _totals_digest,
    golden_bundle,
)

CHUNK = 7  # steps of arrivals per chunk: ~100 tasks, 55 chunks over the golden bundle's four days


@pytest.fixture(scope="module")
def golden(tmp_path_factory):
    return sim_core.load(golden_bundle(tmp_path_factory.mktemp("golden_chunks")))


def test_every_field_is_declared_for_compaction():
    """A field added to Tasks or State without a declaration fails here, not silently in a chunked run."""
    assert set(L.TASK_KIND) == set(E.Tasks._fields)
    assert set(L.STATE_KIND) == set(E.State._fields)
    assert set(L.STATE_KIND.values()) <= {L.K_VALUE, L.K_LINK, L.K_INDEX, L.K_LIST, L.K_FLEX, L.K_RUN}
    # the per-task fields are exactly those with an initial value per task; the lists each have a count slot
    assert {f for f, k in L.STATE_KIND.items() if k in (L.K_VALUE, L.K_LINK)} == set(L.TASK_INIT)
    assert {f for f, k in L.STATE_KIND.items() if k == L.K_FLEX} == set(L.FLEX_INIT)
    assert {f for f, k in L.STATE_KIND.items() if k == L.K_LIST} <= set(L.LIST_COUNT)
    assert set(L.SC_TASK_INDEX) <= set(range(E.N_SC))
    # every field a result reads is an output of a chunked run
    assert set(K.TASK_OUT) | set(K.ENGINE_ONLY_TASK_FIELDS) == set(E.Tasks._fields)


@pytest.mark.parametrize("power", POWERS)
@pytest.mark.parametrize("policy", sim_core.POLICIES)
def test_every_policy_chunked_reproduces_the_one_chunk_digests(golden, policy, power):
    """Stopped at the window's end (the recorded digests' runs); a policy that controls flexible tasks (the stateful
    baselines) runs in one chunk whatever it is given."""
    r = sim_core.run(golden, policy, seed=5, power=power, drain=False, chunk_steps=CHUNK)
    got = {"totals": _totals_digest({k: v for k, v in r.totals.items() if k not in WORK_KEYS}),
           "steps": _frame_digest(r.steps), "tasks": _frame_digest(r.tasks)}
    assert got == json.loads(DIGESTS.read_text())[f"{policy}/{power}"]


@pytest.mark.parametrize("policy", sim_core.POLICIES)
def test_every_policy_chunked_and_drained_reproduces_the_one_chunk_digests(golden, policy):
    r = sim_core.run(golden, policy, seed=5, days=DRAIN_DAYS, chunk_steps=CHUNK)
    got = {"totals": _totals_digest(r.totals), "steps": _frame_digest(r.steps), "tasks": _frame_digest(r.tasks)}
    assert got == json.loads(DRAINED.read_text())[policy]


@pytest.mark.parametrize("chunk", [1, 96, 4 * 96 - 1])
def test_any_chunk_length_gives_the_same_tasks_and_totals(golden, chunk):
    """One step per chunk (a compaction at every step), a day, and all but the last step."""
    one = sim_core.run(golden, "lowest_carbon", seed=3, power="managed")
    many = sim_core.run(golden, "lowest_carbon", seed=3, power="managed", chunk_steps=chunk)
    assert many.tasks.equals(one.tasks) and many.transfers.equals(one.transfers) and many.steps.equals(one.steps)
    assert _totals_digest(many.totals) == _totals_digest(one.totals)


def test_the_arrays_hold_the_live_tasks_and_every_link_survives_a_compaction(golden):
    """Stepped by hand chunk by chunk: at the boundaries tasks are pending, in transit and queued (the links that
    compaction renumbers), the arrays hold far fewer tasks than the window, and each queue and transit bucket
    still links exactly its tasks."""
    spec = registry.get("defer_to_greener")  # (defers: tasks pending across boundaries)
    prep = Prepared(golden, 5, policy_code=spec.code, chunk_steps=CHUNK, power="managed")
    kern = spec.kernel()
    n_window = prep.hi - prep.lo
    seen = {E.ST_PENDING: 0, E.ST_TRANSIT: 0, E.ST_QUEUED: 0}
    largest = 0
    for b in range(CHUNK, prep.n_window, CHUNK):
        prep.step_to(b + 1, lambda j: kern(prep.tasks, prep.state, prep.ctx, prep.info, None, spec.code, j))
        S = prep.state
        largest = max(largest, S.status.shape[0])
        for st in seen:
            seen[st] += int((S.status == st).sum())
        _check_links(S)
    assert all(v > 0 for v in seen.values()), seen
    assert largest < n_window / 3, (largest, n_window)


def _check_links(S) -> None:
    """Every queue holds q_len tasks, all queued at that site; every transit bucket holds tasks in transit."""
    n = S.status.shape[0]
    for d in range(S.q_len.shape[0]):
        count = 0
        for k in range(2):
            i = int(S.q_head[d, k])
            while i >= 0:
                assert 0 <= i < n and S.status[i] == E.ST_QUEUED and S.dest[i] == d
                count += 1
                i = int(S.nxt[i])
        assert count == S.q_len[d]
    in_buckets = 0
    for j in np.flatnonzero(S.bucket_head >= 0):
        i = int(S.bucket_head[j])
        while i >= 0:
            assert S.status[i] == E.ST_TRANSIT
            in_buckets += 1
            i = int(S.nxt[i])
    assert in_buckets == int(S.transit_n.sum())


def test_a_run_with_controls_keeps_one_chunk(golden):
    prep = Prepared(golden, 5, days=1, policy_code=registry.get("carbonscaler").code, controls=True, chunk_steps=4)
    assert prep.chunk_steps == prep.n_window and prep.tasks.arrival.shape[0] == prep.hi - prep.lo


@pytest.mark.parametrize("policy", ["lowest_carbon", lambda obs: None])
@pytest.mark.parametrize("bad", [0, -3, 2.5, True, "7"])
def test_a_bad_chunk_length_is_refused_by_name(golden, bad, policy):
    """Also for a Python callable, which keeps one chunk (the value is not silently ignored)."""
    with pytest.raises(RunOptionsError, match="chunk_steps"):
        sim_core.run(golden, policy, days=1, chunk_steps=bad)


def test_auto_chunks_a_large_bundle_from_its_path_and_nothing_else(golden_path, tmp_path, monkeypatch):
    """``chunk_steps="auto"`` (the default): chunks (the per-task outputs' temporary folder is the sign) only for a
    bundle's path whose manifest counts at least AUTO_MIN_TASKS tasks; the totals are the one-chunk run's."""
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    n = sim_core.load(golden_path).n_tasks
    one = sim_core.run(golden_path, "lowest_carbon", days=1, chunk_steps=None).totals
    monkeypatch.setattr(K, "AUTO_STEPS", CHUNK)
    for limit, chunked in ((n + 1, False), (n, True)):
        monkeypatch.setattr(K, "AUTO_MIN_TASKS", limit)
        assert K.resolve_chunk_steps("auto", golden_path) == (CHUNK if chunked else None)
        res = sim_core.run(golden_path, "lowest_carbon", days=1)
        assert bool(list(tmp_path.glob("gridshift-run-*"))) == chunked and res.totals == one
        del res
    # a loaded scenario, a path that is no bundle (the load names it) and an explicit value are left as they are
    assert K.resolve_chunk_steps("auto", sim_core.load(golden_path)) is None
    assert K.resolve_chunk_steps("auto", tmp_path / "nothing") is None
    assert K.resolve_chunk_steps(np.int64(5), golden_path) == 5
    assert sim_core.run(golden_path, "lowest_carbon", days=1, chunk_steps=np.int64(CHUNK)).totals == one


def test_auto_never_opens_a_tasks_file_that_is_not_a_regular_file(golden_path, tmp_path):
    """A hostile bundle whose tasks.parquet is a FIFO: "auto" does not open it (a read would block until a writer
    came) and the load refuses it by name. A thread holds the FIFO's write end open-pending: it returns only if a
    reader opened the FIFO."""
    import os
    import shutil
    import threading

    from sim_core import BundleError

    bad = tmp_path / "bundle"
    shutil.copytree(golden_path, bad)
    (bad / "tasks.parquet").unlink()
    os.mkfifo(bad / "tasks.parquet")
    opened = threading.Event()

    def writer():
        with open(bad / "tasks.parquet", "wb"):
            opened.set()

    t = threading.Thread(target=writer, daemon=True)
    t.start()
    try:
        assert K.resolve_chunk_steps("auto", bad) is None
        with pytest.raises(BundleError, match="tasks.parquet"):
            sim_core.run(bad, "lowest_carbon", days=1)
        assert not opened.is_set()
    finally:  # (open the read end without blocking, so that the writer ends)
        fd = os.open(bad / "tasks.parquet", os.O_RDONLY | os.O_NONBLOCK)
        t.join(5)
        os.close(fd)


def test_a_scenario_loaded_without_its_tasks_is_refused_by_name(golden_path):
    """``sim_core.load(path, tasks=False)`` (a sweep's scenario) cannot be run as if it had no tasks."""
    sc = sim_core.load(golden_path, tasks=False)
    with pytest.raises(RunOptionsError, match=r"holds no tasks.*tasks=False") as err:
        sim_core.run(sc, "lowest_carbon", days=1)
    assert sc.bundle_id in str(err.value)


@pytest.mark.parametrize("phase", ["stepping", "results"])
def test_a_chunked_run_that_fails_leaves_no_files(golden_path, tmp_path, monkeypatch, phase):
    """The per-task output files (chunks.Outputs) go with a run that raises, even while its traceback is held; a run
    that succeeds keeps them as long as its result (whose task frames read them) lives."""
    import gc
    import tempfile

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))

    def fail(name):
        if name == phase:
            raise RuntimeError("stop")

    with pytest.raises(RuntimeError, match="stop") as err:
        sim_core.run(golden_path, "lowest_carbon", days=1, chunk_steps=CHUNK, on_phase=fail)
    assert err.value is not None and not list(tmp_path.glob("gridshift-run-*"))
    res = sim_core.run(golden_path, "lowest_carbon", days=1, chunk_steps=CHUNK)
    assert len(list(tmp_path.glob("gridshift-run-*"))) == 1
    assert res.tasks.height > 0
    del res
    gc.collect()
    assert not list(tmp_path.glob("gridshift-run-*"))


@pytest.mark.parametrize("seed", range(6))
def test_queue_minima_combine_over_parts_exactly(seed):
    """The whole window's queue minima from its parts (a chunked run's set-up): NaN requests, classes empty in one
    part or in all, ties of 0.0 and -0.0 (the first kept), as ``engine.queue_minima`` over the whole."""
    rng = np.random.default_rng(seed)
    m = 60
    cores = rng.choice([0.0, -0.0, 1.0, 2.0, 4.0, np.nan], m, p=[0.2, 0.1, 0.3, 0.2, 0.15, 0.05])
    gpus = rng.choice([0.0, 1.0, 8.0, np.nan], m, p=[0.5, 0.3, 0.15, 0.05]) if seed % 3 else np.zeros(m)
    mem = rng.choice([0.0, -0.0, 3.0, 9.0, np.nan], m, p=[0.2, 0.2, 0.3, 0.25, 0.05])
    want = np.zeros(6)
    E.queue_minima(cores, gpus, mem, want)
    cuts = [0, *sorted(rng.choice(np.arange(1, m), 4, replace=False)), m]
    acc = None
    for lo, hi in zip(cuts[:-1], cuts[1:], strict=True):
        q = np.zeros(6)
        g = gpus[lo:hi]
        E.queue_minima(cores[lo:hi], g, mem[lo:hi], q)
        part = (q, (bool((g <= 0.0).any()), bool((~(g <= 0.0)).any())))
        acc = part if acc is None else combine_minima(acc, part)
    assert acc[0].tobytes() == want.tobytes()


@pytest.fixture(scope="module")
def golden_path(tmp_path_factory):
    return golden_bundle(tmp_path_factory.mktemp("golden_chunks_path"))


@pytest.mark.parametrize("policy", sim_core.POLICIES)
def test_a_chunked_run_from_the_path_reads_its_tasks_on_demand_and_reproduces_the_digests(golden_path, policy,
                                                                                        monkeypatch):
    """From the bundle's path the chunked run's scenario holds arrivals and ids only (the other task columns read
    by row group, gridshift.bundle.content.TaskColumn); the stateful baselines load theirs whole (one chunk)."""
    from gridshift.bundle.content import TaskColumn

    seen = []
    real = Prepared.__init__

    def spy(self, *a, **kw):
        real(self, *a, **kw)
        seen.append(type(self.scenario.duration_s) if self.scenario.duration_s is not None else None)

    monkeypatch.setattr(Prepared, "__init__", spy)
    r = sim_core.run(golden_path, policy, seed=5, days=DRAIN_DAYS, chunk_steps=CHUNK)
    got = {"totals": _totals_digest(r.totals), "steps": _frame_digest(r.steps), "tasks": _frame_digest(r.tasks)}
    assert got == json.loads(DRAINED.read_text())[policy]
    assert seen == [TaskColumn if not registry.get(policy).stateful else None]


def _regrouped(golden_path, tmp_path, edit=None):
    """The golden bundle's tasks file rewritten in row groups of 400 rows (``edit``: a change to its frame first),
    with the header of its manifest."""
    import polars as pl

    from gridshift.bundle.content import read_header

    root = tmp_path / "b"
    root.mkdir()
    df = pl.read_parquet(golden_path / "tasks.parquet")
    if edit is not None:
        df = edit(df)
    df.write_parquet(root / "tasks.parquet", row_group_size=400)
    manifest = json.loads((golden_path / "manifest.json").read_text())
    return root, read_header(manifest, "manifest.json")


def test_task_rows_read_by_row_group_equal_the_whole_columns(golden_path, tmp_path):
    """Rows in any order, across row groups, repeated (a realised year draws a week more than once)."""
    from gridshift.bundle.content import open_tasks, read_tasks

    root, header = _regrouped(golden_path, tmp_path)
    whole = read_tasks(root, header)
    lazy, n_int, n_el = open_tasks(root, header)
    assert n_int == int(whole["interruptible"].sum()) > 0 and n_el == int((whole["max_scale"] > 1.0).sum()) > 0
    rows = np.random.default_rng(1).integers(0, whole["task_id"].shape[0], 5000)
    for name, col in whole.items():
        got = lazy[name][rows]
        assert got.dtype == col.dtype and got.flags.c_contiguous and got.flags.writeable, name
        np.testing.assert_array_equal(got, col[rows], err_msg=name)


def test_a_bad_value_in_a_later_row_group_is_refused_when_the_file_is_opened(golden_path, tmp_path):
    """Every row group is checked before a run takes any (the row named is the file's, not the group's)."""
    import polars as pl

    from gridshift.bundle import BundleError
    from gridshift.bundle.content import open_tasks

    def bad(df):
        return df.with_columns(pl.when(pl.int_range(pl.len()) == 2345).then(-5.0).otherwise(pl.col("duration_s"))
                               .alias("duration_s"))

    root, header = _regrouped(golden_path, tmp_path, bad)
    with pytest.raises(BundleError, match="duration_s") as err:
        open_tasks(root, header)
    assert "2345" in str(err.value)


def test_a_corrupt_row_group_is_refused_naming_it(golden_path, tmp_path):
    """A row group whose pages cannot be decoded is a BundleError naming the file, the group and its columns (not
    pyarrow's error alone), when the file is opened and when a run reads it again."""
    import pyarrow.parquet as pq

    from gridshift.bundle import BundleError
    from gridshift.bundle.content import open_tasks

    root, header = _regrouped(golden_path, tmp_path)
    path = root / "tasks.parquet"
    lazy, _, _ = open_tasks(root, header)  # (opened while intact: a later read meets the corruption)
    cc = pq.ParquetFile(path).metadata.row_group(3).column(2)
    raw = bytearray(path.read_bytes())
    raw[cc.data_page_offset:cc.data_page_offset + cc.total_compressed_size] = b"\xff" * cc.total_compressed_size
    path.write_bytes(bytes(raw))
    with pytest.raises(BundleError, match="row group 3") as err:
        open_tasks(root, header)
    assert err.value.file == str(path) and cc.path_in_schema in err.value.column
    with pytest.raises(BundleError, match="row group 3"):
        lazy[cc.path_in_schema][np.arange(3 * 400, 3 * 400 + 5)]


@pytest.fixture(scope="module")
def weeks_path(tmp_path_factory):
    """Three weeks, so that a run's year is resampled week by week (sim_core.realisation ``weeks``: the golden
    bundle's four days are used as they are)."""
    from sim_core.testing import reference_bundle

    return reference_bundle(tmp_path_factory.mktemp("weeks"), n_tasks=4000, n_steps=3 * 7 * 96, seed=4,
                            capacity_scale=0.01, name="weeks")


@pytest.mark.parametrize("policy", ["random", "defer_to_greener", "lowest_carbon"])
def test_a_resampled_year_in_chunks_from_the_path_equals_its_one_chunk_run(weeks_path, policy):
    """The week slots draw other weeks (ids carry the slot), the chunk boundaries fall inside slots, and the lazily
    read scenario serves rows of several row groups in one chunk; ``random`` reads each task's uniform."""
    one = sim_core.run(sim_core.load(weeks_path), policy, seed=2)
    assert one.tasks["task_id"].max() > 64 * 4000 // 2  # (realised ids: bundle id x 64 + slot)
    many = sim_core.run(weeks_path, policy, seed=2, chunk_steps=50)
    assert many.tasks.equals(one.tasks) and many.steps.equals(one.steps) and many.transfers.equals(one.transfers)
    assert _totals_digest(many.totals) == _totals_digest(one.totals)


#: the totals that are sums of per-task floats (transfers, waits, work): folded in the order the tasks leave
FOLDED_SUMS = ("transfer_cost_usd", "transfer_kwh", "transfer_carbon_kg", "mean_wait_s")


@pytest.mark.parametrize("policy", ["lowest_carbon", "local_only", "round_robin"])
@pytest.mark.parametrize("days", [None, DRAIN_DAYS])
def test_a_run_without_task_results_folds_them_to_the_same_totals_and_steps(golden_path, policy, days):
    """task_results=False (sim_core.chunks.Tallies): the results each task leaves are folded as it leaves, nothing
    is written per task; the counts and the physics are the per-task run's exactly, the sums of per-task floats to
    the last bits, and there are no per-task frames (refused by name). Drained and stopped windows both."""
    kw = {"seed": 5, "chunk_steps": CHUNK} | ({"days": days} if days else {"drain": False})
    full = sim_core.run(golden_path, policy, **kw)
    folded = sim_core.run(golden_path, policy, task_results=False, **kw)
    assert full.totals.keys() == folded.totals.keys()
    assert full.totals["tasks_remote"] > 0 and full.totals["tasks_started"] > 0  # (transfers and waits to fold)
    for k, v in full.totals.items():
        if isinstance(v, int):
            assert folded.totals[k] == v, k
        elif k in FOLDED_SUMS or k.startswith(("work_", "charge", "charged_", "carbon_incl", "cost_incl")) \
                or k.endswith(("_equal_work", "_per_core_hour", "_per_gpu_hour")):
            assert folded.totals[k] == pytest.approx(v, rel=1e-12, abs=1e-12), k
        else:  # (the physics: per-step arrays, not per-task sums)
            assert folded.totals[k] == v or (v != v and folded.totals[k] != folded.totals[k]), k
    flows = [c for c in full.steps.columns if c.startswith("transfer")]
    assert full.steps.drop(flows).equals(folded.steps.drop(flows))
    for c in flows:
        np.testing.assert_allclose(folded.steps[c].to_numpy(), full.steps[c].to_numpy(), rtol=1e-12, atol=1e-12)
    assert full.tasks.height == full.totals["tasks"]
    for frame in ("tasks", "transfers"):
        with pytest.raises(RunOptionsError, match=r"kept no per-task results \(sim_core.run\(..., task_results="):
            getattr(folded, frame)


def test_a_run_without_task_results_writes_nothing_per_task(golden_path, tmp_path, monkeypatch):
    monkeypatch.setattr("tempfile.tempdir", str(tmp_path))
    sim_core.run(golden_path, "lowest_carbon", days=1, chunk_steps=CHUNK, task_results=False, on_phase=lambda p: (
        None if p != "results" else _nothing_in(tmp_path)))
    assert not any(tmp_path.iterdir())


def _nothing_in(d) -> None:
    assert not any(d.iterdir()), list(d.iterdir())


def test_a_chunk_without_arrivals_is_taken_from_the_path(tmp_path):
    """A chunk of steps in which no task arrives (a sparse bundle's): the lazy task columns give no rows (it once
    failed splitting no rows by row group) and the run is the one-chunk run's."""
    from sim_core.testing import tiny_bundle

    bundle = tiny_bundle(tmp_path / "b")  # (8 tasks in a day: most chunks of 7 steps take none)
    one = sim_core.run(bundle, "lowest_carbon", seed=2, days=1, chunk_steps=None)
    many = sim_core.run(bundle, "lowest_carbon", seed=2, days=1, chunk_steps=7)
    assert one.totals == many.totals and one.tasks.equals(many.tasks)
