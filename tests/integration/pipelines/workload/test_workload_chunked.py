"""The chunked derivation: the stream (chunk by chunk into Parquet) equals the in-memory path exactly,
whatever the chunking, across week and year boundaries; chunks are deterministic per (seed, index)."""

from __future__ import annotations

import os
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import polars as pl
import pyarrow.parquet as pq
import pytest

from gridshift.parquet import ROW_GROUP_ROWS, parquet_bytes
from pipelines.core.raw import read_mirror
from pipelines.workload import alibaba2020
from pipelines.workload import chunked as ck
from pipelines.workload import derive as wd
from pipelines.workload import synthetic as sw
from tests.integration.pipelines.workload.workload_fixture import WEEK, B

DAY_US = 86_400 * 1_000_000


@pytest.fixture(scope="module")
def shape(shared_data: Path) -> tuple[np.ndarray, dict[str, wd.Histogram]]:
    hists = wd.parse_histograms(read_mirror(shared_data, wd.REFERENCE_HISTOGRAMS_RELPATH, "ref"))
    prof = wd.parse_weekday_hour(read_mirror(shared_data, wd.REFERENCE_WEEKDAY_HOUR_RELPATH, "ref"))
    return prof, hists


def synthetic(shape, *, year: int = 2023, load_factor: float = 10.0, level: float = 0.05, seed: int = 0,
              chunk_rows: int = sw.CHUNK_ROWS, hooks=(), bandwidth_model: str = "ai") -> sw.SyntheticChunks:
    """A 10× load of a small base level (0.05 kept tasks per 15 min): a year of ≈ 17.5 k tasks."""
    prof, hists = shape
    sp = sw.SyntheticParams(year=year, load_factor=load_factor, seed=seed, tasks_per_15min=level)
    params = sw.derive_params(sp, wd.DeriveParams(seed=seed, bandwidth_model=bandwidth_model))
    return sw.SyntheticChunks(sp, prof, hists, params=params, chunk_rows=chunk_rows, hooks=hooks)


def streamed(chunks: ck.ChunkedDerivation, path: Path) -> tuple[ck.StreamedDerivation, pl.DataFrame]:
    out = ck.write_tasks_parquet(chunks, path)
    return out, pl.read_parquet(path)


def test_10x_synthetic_stream_equals_in_memory_exactly(shape, tmp_path: Path) -> None:
    mem = ck.derive_in_memory(synthetic(shape, chunk_rows=10**9))  # the whole year as one chunk
    assert mem.tasks.height > 15_000
    for rows in (1, 3_000):  # one day per chunk; a few days per chunk
        chunks = synthetic(shape, chunk_rows=rows)
        out, back = streamed(chunks, tmp_path / f"tasks-{rows}.parquet")
        assert back.equals(mem.tasks)
        assert out.n_tasks == mem.tasks.height
        assert out.derivation.dropped == mem.dropped and out.derivation.n_source_rows == mem.n_source_rows
        assert out.derivation.n_kept == mem.n_kept == mem.tasks.height
    # the file is byte for byte what the in-memory table gives with the fixed Parquet settings
    assert (tmp_path / "tasks-1.parquet").read_bytes() == parquet_bytes(mem.tasks)
    assert mem.tasks["task_id"].to_list() == list(range(mem.tasks.height))
    assert mem.tasks["arrival_ts_utc"].is_sorted()


def test_row_groups_are_fixed_size_and_files_are_published_atomically(shape, tmp_path: Path) -> None:
    mem = ck.derive_in_memory(synthetic(shape, level=0.6, load_factor=1.0))  # ≈ 21 k tasks
    small = ck._RowGroupWriter  # noqa: SLF001 (row-group size made small to cross many boundaries)
    path = tmp_path / "t.parquet"
    from gridshift.atomic import atomic_file

    with atomic_file(path) as tmp:
        w = small(tmp, row_group_rows=4_000)
        for part in ck.iter_tasks(synthetic(shape, level=0.6, load_factor=1.0, chunk_rows=500), "synthetic", 2023):
            w.write(part)
        w.close(part.to_arrow().schema)
    f = pq.ParquetFile(path)
    sizes = [f.metadata.row_group(i).num_rows for i in range(f.num_row_groups)]
    assert sizes[:-1] == [4_000] * (len(sizes) - 1) and 0 < sizes[-1] <= 4_000
    assert pl.concat(list(ck.read_tasks_parquet(path))).equals(mem.tasks)
    assert ROW_GROUP_ROWS == 1 << 17

    # a failure mid-stream leaves neither the file nor a temporary one
    def boom(part: pl.DataFrame) -> None:
        if part["task_id"][0] > 0:
            raise RuntimeError("stop")

    target = tmp_path / "failed" / "tasks.parquet"
    with pytest.raises(RuntimeError, match="stop"):
        ck.write_tasks_parquet(synthetic(shape, chunk_rows=2_000), target, on_part=boom)
    assert list(target.parent.iterdir()) == []


def test_chunks_are_deterministic_per_seed_and_day(shape, tmp_path: Path) -> None:
    a, _ = streamed(synthetic(shape, seed=4), tmp_path / "a.parquet")
    b, _ = streamed(synthetic(shape, seed=4, chunk_rows=1), tmp_path / "b.parquet")
    c, _ = streamed(synthetic(shape, seed=5), tmp_path / "c.parquet")
    assert a.path.read_bytes() == b.path.read_bytes()
    assert a.path.read_bytes() != c.path.read_bytes()
    # a day is drawn from (seed, day) alone: generated within its year or on its own, it is the same
    prof, hists = shape
    sp = sw.SyntheticParams(year=2023, load_factor=10.0, seed=4, tasks_per_15min=0.05)
    origin, d_lo, _ = sw.year_days(2023)
    year = sw.generate(sp, prof, hists).tasks
    day = d_lo + 100
    alone = sw.generate_day(sp, day, origin, prof, hists, 0.05)
    t0 = (day * 86_400 - origin)
    in_year = year.filter((pl.col("start_time") >= t0) & (pl.col("start_time") < t0 + 86_400))
    assert in_year.height == len(alone["start_time"]) > 0
    assert np.array_equal(in_year["start_time"].to_numpy(), alone["start_time"])
    assert np.array_equal(in_year["plan_cpu"].to_numpy(), alone["plan_cpu"])
    assert np.array_equal(in_year["job_id"].to_numpy() - in_year["job_id"][0], alone["job_id"])


def test_year_edges_and_utc_days(shape) -> None:
    """2023 starts on a Sunday (its first week began in 2022) and ends on a Sunday; days are UTC days
    (the DST change of 26 March 2023 in Europe is just another 24-hour day)."""
    chunks = synthetic(shape, chunk_rows=1)
    days = list(chunks)
    assert len(days) == 365 and chunks.extension.outside_year == 0
    firsts = [d.units[0][0] for d in days]
    assert firsts[0] == datetime(2023, 1, 1, tzinfo=UTC).timestamp() // 86_400
    assert np.all(np.diff(firsts) == 1)
    for d in days:
        (day, n), = d.units
        arr = d.tasks["arrival_epoch_us"].to_numpy()
        assert n == d.tasks.height and d.floor_us == (day + 1) * DAY_US
        assert arr.min() >= day * DAY_US and arr.max() < (day + 1) * DAY_US
    prof, hists = shape
    dst = int(datetime(2023, 3, 26, tzinfo=UTC).timestamp()) // 86_400
    origin, _, _ = sw.year_days(2023)
    a = sw.generate_day(sw.SyntheticParams(year=2023, seed=0), dst, origin, prof, hists, 30.0)
    t = a["start_time"] + origin - dst * 86_400
    assert t.min() >= 0 and t.max() < 86_400  # exactly the 24 UTC hours of the day
    assert len(np.unique(t // 3600)) == 24


def _trace(tmp_path: Path) -> pl.DataFrame:
    from tests.integration.pipelines.workload.workload_fixture import write_trace

    d = write_trace(tmp_path / "trace")
    return alibaba2020.trace_frame(alibaba2020.parse_task_table(alibaba2020.fetch_table("task", trace_dir=d)).tasks)


@pytest.mark.parametrize("year", [2023, 2024])
def test_10x_trace_stream_equals_in_memory_across_week_and_year_boundaries(shape, tmp_path: Path,
                                                                            year: int) -> None:
    """A trace at 10× load: 10 layers, layers ≥ 1 jittered by ±15 min, so a task at Monday 00:00 of its
    source week (line 1) lands in the previous target week about half the time."""
    frame = _trace(tmp_path)
    origin = datetime.fromtimestamp(0, UTC).isoformat()
    p = wd.DeriveParams(seed=11, load_factor=10.0, trace_origin_utc=origin)

    def chunks() -> ck.TraceChunks:
        return ck.TraceChunks(frame, workload="alibaba-2020", year=year, params=p,
                              bandwidth_reference=shape[1]["bandwidth"])

    mem = ck.derive_in_memory(chunks())
    out, back = streamed(chunks(), tmp_path / "t.parquet")
    assert back.equals(mem.tasks) and mem.tasks.height > 600  # ≈ 10 × the 69 tasks of 1×
    t = mem.tasks.with_columns(us=pl.col("arrival_ts_utc").dt.epoch("us"))
    week_us = WEEK * 1_000_000
    monday_us = 345_600 * 1_000_000
    first_line = t.filter(pl.col("source_line") == 1)  # offset 0 in its source week (B is a Monday 00:00)
    assert (B - 345_600) % WEEK == 0
    crossed = first_line.filter((pl.col("us") - monday_us) % week_us > week_us // 2)
    assert crossed.height > 0 and (crossed["layer"] > 0).all()  # jittered back into the week before
    ylo, yhi = (int(datetime(y, 1, 1, tzinfo=UTC).timestamp()) * 1_000_000 for y in (year, year + 1))
    assert t["us"].min() >= ylo and t["us"].max() < yhi
    assert mem.extension.outside_year > 0 and mem.extension.layers == 10 and mem.extension.thinned == 0
    assert out.derivation.extension.outside_year == mem.extension.outside_year
    # same seed, same table; the chunk seeds are the absolute week numbers
    assert ck.derive_in_memory(chunks()).tasks.equals(mem.tasks)


def test_fractional_load_thins_the_last_layer_per_week(shape, tmp_path: Path) -> None:
    frame = _trace(tmp_path)
    p = wd.DeriveParams(seed=2, load_factor=2.5, trace_origin_utc=datetime.fromtimestamp(0, UTC).isoformat())
    ref = shape[1]["bandwidth"]
    mem = ck.derive_in_memory(ck.TraceChunks(frame, workload="x", year=2024, params=p, bandwidth_reference=ref))
    _, back = streamed(ck.TraceChunks(frame, workload="x", year=2024, params=p, bandwidth_reference=ref),
                       tmp_path / "t.parquet")
    assert back.equals(mem.tasks)
    assert mem.extension.thinned > 0 and mem.extension.layers == 3
    per_layer = mem.tasks.group_by("layer").len().sort("layer")["len"].to_list()
    assert per_layer[2] < per_layer[1]  # the half layer is thinned


def test_hooks_see_the_same_chunk_whatever_the_chunking(shape, tmp_path: Path) -> None:
    """A per-task attribute assigned after the derivation (e.g. flexibility) draws per unit (day)."""

    def slack(tasks: pl.DataFrame, ctx: ck.ChunkContext) -> pl.DataFrame:
        return tasks.with_columns(slack_s=pl.Series(ctx.draw(lambda g, n: g.exponential(3600.0, n))))

    mem = ck.derive_in_memory(synthetic(shape, chunk_rows=10**9, hooks=[slack]))
    _, back = streamed(synthetic(shape, chunk_rows=1, hooks=[slack]), tmp_path / "h.parquet")
    assert back.equals(mem.tasks) and back.columns[-1] == "slack_s"
    assert back["slack_s"].n_unique() == back.height

    def drop_one(tasks: pl.DataFrame, ctx: ck.ChunkContext) -> pl.DataFrame:
        return tasks.slice(1)

    with pytest.raises(ValueError, match="changed the number of tasks"):
        ck.derive_in_memory(synthetic(shape, hooks=[drop_one]))


@pytest.mark.parametrize("model", ["reference", "constant"])
def test_other_size_models_stream_identically(shape, tmp_path: Path, model: str) -> None:
    mem = ck.derive_in_memory(synthetic(shape, chunk_rows=10**9, bandwidth_model=model))
    _, back = streamed(synthetic(shape, chunk_rows=1, bandwidth_model=model), tmp_path / "m.parquet")
    assert back.equals(mem.tasks)


def test_streamed_summary_equals_the_table_summary(shape, tmp_path: Path) -> None:
    mem = ck.derive_in_memory(synthetic(shape))
    out, _ = streamed(synthetic(shape, chunk_rows=2_000), tmp_path / "s.parquet")
    want = wd.summarize(mem.tasks, 2023)
    assert out.summary.keys() == want.keys()
    for k, v in want.items():
        assert out.summary[k] == pytest.approx(v, rel=1e-12), k
    for k in ("n_tasks", "tasks_per_15min_max", "tasks_per_15min_p95", "median_duration_s"):
        assert out.summary[k] == want[k]


def test_empty_year_writes_an_empty_table(shape, tmp_path: Path) -> None:
    chunks = synthetic(shape, level=1e-9, load_factor=1e-6)
    out, back = streamed(chunks, tmp_path / "e.parquet")
    assert out.n_tasks == 0 and back.height == 0
    assert back.columns == wd.WORKLOAD_COLUMNS
    assert os.path.getsize(out.path) > 0


def _rows(home) -> tuple[pl.DataFrame, pl.DataFrame]:
    from warehouse.db import read_table

    tasks = read_table(home.warehouse_path, "SELECT * FROM workload_tasks ORDER BY workload, year, task_id")
    runs = read_table(home.warehouse_path, "SELECT * EXCLUDE (created_at) FROM workload_runs ORDER BY workload")
    return tasks, runs


@pytest.mark.parametrize("workload", ["synthetic", "alibaba-2020"])
def test_streamed_ingest_stores_exactly_the_in_memory_rows(shared_data: Path, tmp_path: Path, workload: str) -> None:
    """``ingest_workload`` streams (parts validated, staged as Parquet, read by DuckDB in one transaction);
    ``prepare_workload`` + ``commit_workload`` hold the table: the warehouse rows are the same."""
    from gridshift.home import Home
    from tests.integration.pipelines.workload.workload_fixture import write_trace
    from warehouse.ingest_workload import commit_workload, ingest_workload, prepare_workload

    kw = dict(mirror=shared_data, seed=1, load_factor=0.02) if workload == "synthetic" else dict(
        mirror=shared_data, seed=1, load_factor=2.5, trace_dir=write_trace(tmp_path / "trace"))
    streamed_home, memory_home = Home(tmp_path / "s"), Home(tmp_path / "m")
    rep = ingest_workload(workload, 2024, home=streamed_home, **kw)
    prep = prepare_workload(workload, 2024, **kw)
    commit_workload(memory_home, prep)
    (ts, rs), (tm, rm) = _rows(streamed_home), _rows(memory_home)
    assert ts.height == rep.n_tasks == prep.tasks.height > 0
    assert ts.equals(tm) and rs.equals(rm)
    assert rep.dropped == prep.report.dropped and rep.extra == prep.report.extra
    assert rep.summary == pytest.approx(prep.report.summary, rel=1e-12)
    assert not [p for p in streamed_home.root.iterdir() if p.name.startswith(".workload-staging-")]


def test_a_parquet_replacement_outside_its_partition_changes_nothing(shared_data: Path, tmp_path: Path) -> None:
    from gridshift.errors import DataError
    from gridshift.home import Home
    from warehouse.ingest_workload import ingest_workload
    from warehouse.replace import Replacement, replace_partitions

    home = Home(tmp_path / "h")
    ingest_workload("synthetic", 2023, home=home, mirror=shared_data, seed=1, load_factor=0.01)
    before = _rows(home)
    wrong = tmp_path / "wrong.parquet"
    before[0].with_columns(year=pl.lit(2022, dtype=pl.Int64)).write_parquet(wrong)
    with pytest.raises(DataError, match="outside the partition"):
        replace_partitions(home.warehouse_path, [Replacement("workload_tasks", {"workload": "synthetic",
                                                                                "year": 2023}, parquet=wrong)])
    after = _rows(home)
    assert after[0].equals(before[0]) and after[1].equals(before[1])
