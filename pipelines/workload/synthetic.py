"""A seeded synthetic workload in the PAI 2020 trace format, calibrated to the reference shape.

Calibration targets (``reference/alibaba2020_filtered_*.csv`` in the mirror: the shape of the
reference benchmark's filtered Alibaba PAI 2020 workload, tasks ≥ 15 min):

* arrivals: mean tasks per 15 minutes by weekday × UTC hour (the published 7 × 24 table) scaled
  to ``tasks_per_15min``; counts per 15 minutes are overdispersed (a gamma-mixed Poisson number
  of jobs, each of one or more tasks arriving together), not Poisson;
* durations, CPU, GPU and memory: the published histograms (uniform within each bin), joined by a
  Gaussian copula whose correlations were measured on the real 2023 pod list (below), so bigger
  requests come together as in a real trace;
* data moved (``bandwidth_gb``) is not generated here: the trace format has none, and the
  derivation adds it for every source with the same documented model
  (``pipelines.workload.derive.assign_bandwidth``; by default the ``ai`` model, which reads the
  generated GPUs, durations and GPU memory).

The generator also writes the rows a real trace has and the filter must remove (failed,
unfinished and short tasks), so a synthetic workload goes through exactly the same derivation as
the real trace. The level is the kept-task level; the load factor multiplies it (no task is
copied: a 10× year is 10× as many independently drawn tasks).

The year is generated one UTC day at a time, each day from generators seeded by (seed, day)
(:func:`generate_day`), and derived the same way (:class:`SyntheticChunks`), so a 100× year needs
the memory of one 100× day, and a day's tasks do not depend on which other days are generated.
"""

from __future__ import annotations

import hashlib
import io
import json
import math
import tarfile
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from pathlib import Path

import numpy as np
import polars as pl

from gridshift.atomic import atomic_write_bytes
from gridshift.timestep import STEPS_PER_DAY
from pipelines.workload import kernels
from pipelines.workload.alibaba2020 import JOB_COLUMNS, TASK_COLUMNS
from pipelines.workload.base import Inputs, TraceInput, WorkloadSource
from pipelines.workload.chunked import (
    DAY_S,
    EXTENDED_COLUMNS,
    STREAM_BANDWIDTH,
    STREAM_GENERATE,
    Chunk,
    ChunkedDerivation,
    ChunkHook,
    ChunkStats,
    chunk_rng,
)
from pipelines.workload.derive import (
    MONDAY_EPOCH_S,
    REFERENCE,
    SLOT_S,
    WEEK_S,
    DeriveParams,
    ExtensionInfo,
    Histogram,
    assign_bandwidth,
    year_window_s,
)

SOURCE = "synthetic"

# Gaussian-copula correlation (Pearson correlation of normal scores, r = 2 sin(π ρs / 6) from
# Spearman ρs) between (duration, cpu, gpu, mem), measured on the real 2023 pod list
# (openb_pod_list_default.csv: Succeeded or Running pods, run ≥ 15 min, 2,653 pods). A test
# recomputes it from the file. Memory follows CPU (0.69) and GPU (0.20); longer tasks ask a little
# less of everything.
COPULA_VARIABLES = ("duration", "cpu", "gpu", "mem")
COPULA_CORR = np.array([
    [1.000, -0.204, -0.085, -0.315],
    [-0.204, 1.000, 0.208, 0.691],
    [-0.085, 0.208, 1.000, 0.204],
    [-0.315, 0.691, 0.204, 1.000],
])
# GPU model of a GPU task, weighted by the machines of each model in the PAI 2020 machine spec
# (pai_machine_spec: P100 798, T4 497, MISC 280, V100M32 135, V100 104).
GPU_TYPE_WEIGHTS = (("P100", 798), ("T4", 497), ("MISC", 280), ("V100M32", 135), ("V100", 104))
STATUSES = ("Terminated", "Failed", "Waiting", "Running")


def cholesky_rows(corr: np.ndarray) -> tuple[tuple[float, ...], ...]:
    """The lower Cholesky factor of ``corr`` as rows, by the textbook recurrence in float arithmetic
    (``math.fsum`` and ``math.sqrt``: correctly rounded, so the same bits on every machine; LAPACK's
    result depends on the BLAS kernel the CPU selects)."""
    n = corr.shape[0]
    low = [[0.0] * n for _ in range(n)]
    for i in range(n):
        for j in range(i + 1):
            s = math.fsum([float(corr[i, j]), *(-low[i][k] * low[j][k] for k in range(j))])
            if i == j:
                if not s > 0.0:
                    raise ValueError(f"correlation matrix is not positive definite (pivot {i}: {s})")
                low[i][j] = math.sqrt(s)
            else:
                low[i][j] = s / low[j][j]
    return tuple(tuple(r) for r in low)


_CHOL = cholesky_rows(COPULA_CORR)
MAX_GPUS_PER_INSTANCE = 8.0
SLOTS_PER_YEAR = 365 * STEPS_PER_DAY  # 35,040: the 15-min slots of a 365-day year


@dataclass(frozen=True)
class SyntheticParams:
    """Generator parameters (recorded with the derived workload)."""

    year: int
    load_factor: float = 1.0
    seed: int = 0
    tasks_per_15min: float | None = None  # kept tasks per 15 min at load factor 1; None = calibrated
    burst_shape: float = 2.0  # gamma shape of the per-15-min job-rate multiplier (smaller = burstier)
    mean_tasks_per_job: float = 1.3  # tasks of a job arrive in the same second
    failed_fraction: float = 0.05
    unfinished_fraction: float = 0.01  # Waiting/Running at the end of the trace: no end time
    short_fraction: float = 0.20  # finished in under 15 minutes

    def __post_init__(self) -> None:
        if not self.load_factor > 0:
            raise ValueError("load_factor must be > 0")
        if self.failed_fraction + self.unfinished_fraction + self.short_fraction >= 1:
            raise ValueError("failed + unfinished + short fractions must be < 1")
        if self.mean_tasks_per_job < 1 or self.burst_shape <= 0:
            raise ValueError("mean_tasks_per_job must be ≥ 1 and burst_shape > 0")

    def to_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True, separators=(",", ":"))

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.to_json().encode()).hexdigest()


def calibrated_tasks_per_15min(profile: np.ndarray, histograms: dict[str, Histogram]) -> float:
    """The published figures disagree by 7.5 %: the weekday × hour table averages 34.5 tasks per
    15 min (1.21 M a year) while the histograms count 1,300,144 tasks (37.1 per 15 min). The
    default level is their geometric mean (35.8; 1.25 M tasks a year), within 4 % of both."""
    per_year = float(histograms["duration"].counts.sum())
    return math.sqrt(float(profile.mean()) * per_year / SLOTS_PER_YEAR)


@dataclass(frozen=True)
class SyntheticTrace:
    """Generated task table (PAI 2020 columns and units; ``job_name``/``task_name`` kept as integer
    ids ``job_id``/``task_idx`` until written) and the window it covers, in seconds from ``origin_utc``."""

    tasks: pl.DataFrame
    origin_utc: str
    window_s: tuple[float, float]
    params: SyntheticParams

    def derive_params(self, base: DeriveParams | None = None) -> DeriveParams:
        return derive_params(self.params, base)


def derive_params(sp: SyntheticParams, base: DeriveParams | None = None) -> DeriveParams:
    """Derivation parameters of a generated year: its origin and window, weeks in order (the
    generated weeks are the target year's weeks), load factor already applied."""
    origin, d_lo, d_hi = year_days(sp.year)
    base = base or DeriveParams()
    return base.with_(trace_origin_utc=datetime.fromtimestamp(origin, UTC).isoformat(),
                      window_s=(float(d_lo * DAY_S - origin), float(d_hi * DAY_S - origin)), week_order="cycle",
                      load_factor=1.0, extra=(("synthetic", sp.to_json()),))


def _level(params: SyntheticParams, profile: np.ndarray, histograms: dict[str, Histogram]) -> float:
    return params.tasks_per_15min or calibrated_tasks_per_15min(profile, histograms)


def year_days(year: int) -> tuple[int, int, int]:
    """(origin: Monday 00:00 UTC on or before 1 January, first and last + 1 absolute UTC day number)."""
    ylo, yhi = year_window_s(year)
    w0 = MONDAY_EPOCH_S + math.floor((ylo - MONDAY_EPOCH_S) / WEEK_S) * WEEK_S
    return w0, ylo // DAY_S, yhi // DAY_S


def ppf_tables(histograms: dict[str, Histogram]) -> dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """The interpolation tables of the copula's marginals (``kernels.ppf_table``)."""
    return {var: kernels.ppf_table(histograms[var]) for var in COPULA_VARIABLES}


def generate_day(params: SyntheticParams, day: int, origin_s: int, profile: np.ndarray,
                 histograms: dict[str, Histogram], level: float,
                 tables: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]] | None = None) -> dict[str, np.ndarray]:
    """The tasks submitted on one UTC day (absolute day number ``day``) as arrays (job ids from 0,
    status and GPU type as codes into ``STATUSES`` / ``GPU_TYPE_WEIGHTS``, -1 = no GPU type), times in
    seconds from ``origin_s`` (a Monday 00:00 UTC). Every draw comes from generators seeded by
    (seed, ``STREAM_GENERATE``, day): the day is the same whichever days are generated with it.
    ``tables``: ``ppf_tables(histograms)``, when the caller has them."""
    rng_jobs, rng_time, rng_size, rng_copula, rng_status, rng_type = chunk_rng(params.seed, STREAM_GENERATE, day, 6)
    keep = 1.0 - params.failed_fraction - params.unfinished_fraction - params.short_fraction

    # arrivals: jobs per 15-min slot ~ gamma-mixed Poisson around the weekday × hour profile
    slot_start = day * DAY_S - origin_s + np.arange(DAY_S // SLOT_S, dtype=np.int64) * SLOT_S
    wd = (slot_start // 86_400) % 7  # origin is a Monday
    hr = (slot_start % 86_400) // 3600
    mean_tasks = level * profile[wd, hr] / profile.mean() * params.load_factor / keep
    mean_jobs = mean_tasks / params.mean_tasks_per_job
    k = params.burst_shape
    jobs_per_slot = rng_jobs.negative_binomial(k, k / (k + mean_jobs))
    n_jobs = int(jobs_per_slot.sum())
    job_start = np.repeat(slot_start, jobs_per_slot) + rng_time.integers(0, SLOT_S, n_jobs)
    job_start = np.maximum(job_start, 1)  # 0 means "never started" in the PAI trace
    tasks_per_job = rng_jobs.geometric(1.0 / params.mean_tasks_per_job, n_jobs)
    job_id = np.repeat(np.arange(n_jobs, dtype=np.int64), tasks_per_job)
    first = np.concatenate([[0], np.cumsum(tasks_per_job)[:-1]]) if n_jobs else np.zeros(0, dtype=np.int64)
    task_idx = (np.arange(len(job_id)) - np.repeat(first, tasks_per_job)).astype(np.uint16)
    start = np.repeat(job_start, tasks_per_job).astype(np.float64)
    n = len(start)

    # sizes: Gaussian copula over the published marginals (Histogram.ppf(norm_cdf(latent)), one
    # compiled pass per variable: kernels.cdf_ppf)
    if tables is None:
        tables = ppf_tables(histograms)
    normals = rng_copula.standard_normal((n, len(COPULA_VARIABLES)))
    # one variable at a time: temporaries of n values, not n × 4 (peak memory); the latent is
    # summed in a fixed order (a matrix product's order and rounding are the BLAS kernel's)
    dur_s, cpu, gpu, mem = (
        kernels.cdf_ppf(_latent(normals, _CHOL[j]), tables[var]) for j, var in enumerate(COPULA_VARIABLES)
    )
    del normals
    # the rows the filter must remove: failed, unfinished (Waiting / Running: no end) and short tasks
    f, uf, sh = params.failed_fraction, params.unfinished_fraction, params.short_fraction
    r = rng_status.random(n)
    n_unfinished, n_short = kernels.status_counts(r, f, f + uf, f + uf + sh)
    waiting_u = rng_status.random(n_unfinished)
    short_s = rng_size.uniform(10.0, 900.0, n_short)
    w = np.array([c for _, c in GPU_TYPE_WEIGHTS], dtype=np.float64)
    gtype = rng_type.choice(len(GPU_TYPE_WEIGHTS), size=n, p=w / w.sum())
    # durations, instances, status, end and per-instance requests in one compiled pass (kernels.day_rows)
    inst, status, end, plan_cpu, plan_mem, plan_gpu, gpu_type = kernels.day_rows(
        start, dur_s, cpu, gpu, mem, r, waiting_u, short_s, gtype, f, f + uf, f + uf + sh, MAX_GPUS_PER_INSTANCE)
    return {
        "job_id": job_id,
        "task_idx": task_idx,
        "inst_num": inst,
        "status": status,
        "start_time": start,
        "end_time": end,
        "plan_cpu": plan_cpu,
        "plan_mem": plan_mem,
        "plan_gpu": plan_gpu,
        "gpu_type": gpu_type,
    }


def _latent(normals: np.ndarray, row: tuple[float, ...]) -> np.ndarray:
    """``normals @ row``, left to right in separate IEEE operations: the same bits on every machine."""
    out = normals[:, 0] * row[0]
    for k in range(1, len(row)):
        if row[k] != 0.0:
            out = out + normals[:, k] * row[k]
    return out


def _concat_days(days: list[dict[str, np.ndarray]]) -> dict[str, np.ndarray]:
    """Days' arrays, concatenated; job ids continue from day to day."""
    out: dict[str, list[np.ndarray]] = {k: [] for k in days[0]}
    next_job = 0
    for d in days:
        for k, v in d.items():
            out[k].append(v + next_job if k == "job_id" else v)
        if len(d["job_id"]):
            next_job += int(d["job_id"][-1]) + 1
    return {k: np.concatenate(v) for k, v in out.items()}


def _table(a: dict[str, np.ndarray]) -> pl.DataFrame:
    """Arrays of :func:`generate_day` → the generated task table (Enum status and GPU type)."""
    return pl.DataFrame({
        **{k: v for k, v in a.items() if k not in ("status", "gpu_type")},
        "status": _codes(a["status"], list(STATUSES)),
        "gpu_type": _codes(np.maximum(a["gpu_type"], 0), [t for t, _ in GPU_TYPE_WEIGHTS]),
    }).with_columns(
        gpu_type=pl.when(pl.Series(a["gpu_type"]) >= 0).then(pl.col("gpu_type")),
        end_time=pl.col("end_time").fill_nan(None),
    ).select("job_id", "task_idx", "inst_num", "status", "start_time", "end_time", "plan_cpu", "plan_mem",
             "plan_gpu", "gpu_type")


def iter_days(params: SyntheticParams, profile: np.ndarray, histograms: dict[str, Histogram]
              ) -> Iterator[tuple[int, dict[str, np.ndarray]]]:
    """(absolute UTC day, its arrays) for every day of the target year, in order."""
    origin, d_lo, d_hi = year_days(params.year)
    level = _level(params, profile, histograms)
    tables = ppf_tables(histograms)
    for day in range(d_lo, d_hi):
        yield day, generate_day(params, day, origin, profile, histograms, level, tables)


def generate(params: SyntheticParams, profile: np.ndarray, histograms: dict[str, Histogram]) -> SyntheticTrace:
    """Draw the task table of the target year, day by day (:func:`generate_day`), in memory: the
    PAI tables a chunked derivation reads (``job_id`` numbers the year's jobs in submission order).
    Same parameters ⇒ identical table."""
    origin, d_lo, d_hi = year_days(params.year)
    tasks = _table(_concat_days([a for _, a in iter_days(params, profile, histograms)]))
    return SyntheticTrace(tasks, datetime.fromtimestamp(origin, UTC).isoformat(),
                          (float(d_lo * DAY_S - origin), float(d_hi * DAY_S - origin)), params)


def _codes(codes: np.ndarray, names: list[str]) -> pl.Series:
    """Integer codes → an Enum series (cheap: no per-row strings)."""
    return pl.Series(codes.astype(np.int64)).replace_strict(
        dict(enumerate(names)), return_dtype=pl.Enum(names))


def to_trace_frame(trace: SyntheticTrace) -> pl.DataFrame:
    """The derivation's input columns, with the same unit conversions as the PAI 2020 parser.
    ``source_line`` is the row's line in the written task table."""
    return trace_frame(trace.tasks)


def trace_frame(tasks: pl.DataFrame, first_line: int = 1) -> pl.DataFrame:
    """:func:`to_trace_frame` of generated rows whose first is line ``first_line`` of the task table."""
    return tasks.select(
        source_line=pl.int_range(first_line, first_line + pl.len(), dtype=pl.Int64),
        status=pl.col("status").cast(pl.String),
        inst_num=pl.col("inst_num"),
        arrival_s=pl.col("start_time"),
        start_s=pl.col("start_time"),
        end_s=pl.col("end_time"),
        cpu_cores_per_inst=pl.col("plan_cpu") / 100.0,
        gpus_per_inst=pl.col("plan_gpu") / 100.0,
        mem_gb_per_inst=pl.col("plan_mem"),
        gpu_type=pl.col("gpu_type").cast(pl.String),
    )


def pai_tables(trace: SyntheticTrace) -> dict[str, pl.DataFrame]:
    """The task and job tables with the trace's exact columns (``job_name`` as text)."""
    idx = pl.col("task_idx")
    t = trace.tasks.with_columns(
        job_name=pl.format("syn{}", pl.col("job_id")),
        task_name=pl.when(idx == 0).then(pl.lit("worker")).when(idx == 1).then(pl.lit("ps"))
        .otherwise(pl.format("worker{}", idx)),
    )
    jobs = (
        t.group_by("job_id", maintain_order=True)
        .agg(
            job_name=pl.col("job_name").first(),
            status=pl.when((pl.col("status") == "Terminated").all()).then(pl.lit("Terminated"))
            .when((pl.col("status") == "Failed").any()).then(pl.lit("Failed"))
            .otherwise(pl.lit("Running")),
            start_time=pl.col("start_time").min(),
            end_time=pl.col("end_time").max(),
        )
        .with_columns(inst_id=pl.col("job_id"), user=pl.format("user{}", pl.col("job_id") % 500))
    )
    return {
        "task": t.select(TASK_COLUMNS).with_columns(pl.col("status", "gpu_type").cast(pl.String)),
        "job": jobs.select(JOB_COLUMNS),
    }


def tar_gz_csv(df: pl.DataFrame, member: str) -> bytes:
    """A headerless CSV of ``df`` inside a tar.gz (the trace's distribution format)."""
    csv = df.write_csv(include_header=False).encode()
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:
        info = tarfile.TarInfo(member)
        info.size = len(csv)
        info.mtime = 0  # reproducible bytes
        tf.addfile(info, io.BytesIO(csv))
    return buf.getvalue()


def write_pai_tables(trace: SyntheticTrace, directory: Path) -> dict[str, Path]:
    """Write ``pai_task_table.tar.gz`` and ``pai_job_table.tar.gz`` as the trace ships them."""
    out = {}
    for table, df in pai_tables(trace).items():
        name = f"pai_{table}_table"
        path = Path(directory) / f"{name}.tar.gz"
        atomic_write_bytes(path, tar_gz_csv(df, f"{name}.csv"))
        out[table] = path
    return out


#: generated rows gathered into one chunk before it is derived (a processing choice: the table is
#: the same for any value; larger is faster per task, smaller holds less in memory)
CHUNK_ROWS = 1 << 19


class SyntheticChunks(ChunkedDerivation):
    """The generator and the derivation by UTC days: each day is generated (:func:`generate_day`),
    then filtered, normalized and sized (its own ``STREAM_BANDWIDTH`` generator; the ``reference``
    size model ranks memory within the day); the year's weeks are the generated weeks (no tiling: the
    load factor is already in the generation), so each task arrives when it was generated.

    Days are gathered into chunks of about ``chunk_rows`` generated rows (at least one day) and
    derived together; the result does not depend on ``chunk_rows``."""

    def __init__(self, sp: SyntheticParams, profile: np.ndarray, histograms: dict[str, Histogram], *,
                 params: DeriveParams, workload: str = SOURCE, hooks: Sequence[ChunkHook] = (),
                 chunk_rows: int = CHUNK_ROWS):
        super().__init__(workload=workload, year=sp.year, params=params, hooks=hooks)
        self.sp, self.profile, self.histograms, self.chunk_rows = sp, profile, histograms, chunk_rows
        _, d_lo, d_hi = year_days(sp.year)
        self.extension = ExtensionInfo(0, math.ceil((d_hi - d_lo) / 7), 1, 0, 0)

    def _chunks(self) -> Iterator[Chunk]:
        days: list[tuple[int, dict[str, np.ndarray]]] = []
        n = 0
        line = 1
        for day, a in iter_days(self.sp, self.profile, self.histograms):
            days.append((day, a))
            n += len(a["job_id"])
            if n >= self.chunk_rows:
                yield self._derive(days, line)
                line += n
                days, n = [], 0
        if days:
            yield self._derive(days, line)

    def _derive(self, days: list[tuple[int, dict[str, np.ndarray]]], first_line: int) -> Chunk:
        p, bw_ref = self.params, self.histograms.get("bandwidth")
        counts = np.array([len(a["job_id"]) for _, a in days], dtype=np.int64)
        # filter + normalize in one compiled pass: the rows and values of trace_frame → filter_tasks →
        # normalize_resources (the path of a real trace; tests/.../test_workload_kernels.py)
        cols, dropped, adjustments = kernels.filter_normalize(
            _concat_days([a for _, a in days]), p, STATUSES, tuple(t for t, _ in GPU_TYPE_WEIGHTS), first_line)
        n_kept = len(cols["source_line"])
        stats = ChunkStats(int(counts.sum()), n_kept, Counter(dropped), Counter(adjustments))
        # kept rows per day: days are consecutive runs of source lines
        bounds = first_line + np.concatenate([[0], np.cumsum(counts)])
        per_day = np.diff(np.searchsorted(cols["source_line"], bounds, side="left"))
        groups = [(chunk_rng(p.seed, STREAM_BANDWIDTH, d)[0], int(m)) for (d, _), m in zip(days, per_day, strict=True)]
        kept = pl.DataFrame(cols).set_sorted("source_line")
        tasks = assign_bandwidth(kept, p, bw_ref, None, groups=groups)
        tasks = tasks.with_columns(
            arrival_epoch_us=((pl.col("arrival_s") + p.origin_s) * 1_000_000).round().cast(pl.Int64),
            layer=pl.lit(0, dtype=pl.Int64),
        ).select(EXTENDED_COLUMNS)
        last = days[-1][0]
        return Chunk(tasks, (last + 1) * DAY_S * 1_000_000, stats,
                     tuple((d, int(m)) for (d, _), m in zip(days, per_day, strict=True)))


class Synthetic(WorkloadSource):
    """The seeded generator, calibrated to the reference shape (``reference-alibaba2020-filtered``)."""

    name = SOURCE
    needs_histograms = True

    def load(self, year: int, base: DeriveParams, *, seed: int, load_factor: float, inputs: Inputs,
             histograms: dict[str, Histogram] | None) -> TraceInput:
        prof_raw, profile = REFERENCE.weekday_hour(inputs.mirror)
        sp = SyntheticParams(year=year, load_factor=load_factor, seed=seed, **inputs.synthetic)
        chunks = SyntheticChunks(sp, profile, histograms, params=derive_params(sp, base.with_(seed=seed)))
        return TraceInput(chunks.params, chunks=chunks, others=[prof_raw],
                          extra={"synthetic_params": json.loads(sp.to_json())})


GENERATOR = Synthetic()
