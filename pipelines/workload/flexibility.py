"""Task flexibility: every workload task's allowed delay, suspend-resume, checkpoint overhead and
elastic scaling curve (bundle format 2 columns; docs/workload.md "Flexibility").

The published traces record none of this, so it is modelled from the carbon-aware scheduling
literature, with every default cited below, as a pure columnar function of a task's own columns
(duration, resources) and of ``(seed, task_id)``: :func:`assign_flexibility`. The draws are a
counter-based hash of ``(seed, task_id)`` (SplitMix64), not a sequential stream, so a task gets the same
flexibility whichever other tasks are in the frame (a week, a year, any order): building the workload
week by week gives the same columns as building it at once.

Defaults (``FlexParams``):

* **Queue classes** (allowed delay before a task must start): GAIA's two queues, Hanafy et al., "Going
  Green for Less Green: Optimizing the Cost of Reducing Cloud Carbon Emissions", ASPLOS 2024 — jobs
  shorter than 2 h may wait up to 6 h, longer jobs up to 24 h (the evaluation setting of the paper's
  artifact, github.com/umassos/GAIA: ``src/task.py`` ``TwoQueues.Short = 7200/TIME_FACTOR`` (2 h
  in its time-compressed units) and ``src/figure6-7.sh`` ``-w 6x24`` (hours)). Wait Awhile
  (Wiesner et al., Middleware 2021) and CarbonFlex
  (Hanafy et al., arXiv:2505.18357, 2025) use the same idea of per-class allowed waiting times.
* **Interruptible**: every task (``interruptible_share`` = 1.0), as in GAIA's suspend-resume
  (Wait Awhile) policy, which may split any job of the trace (artifact
  ``src/scheduling/suspend_scheduling_policy.py``); a share < 1 draws which tasks are.
* **Checkpoint overhead** (work per resume or rescale): saving and restoring the task's state at the
  throughput of a cloud block volume. State of a GPU task: the checkpoint of the largest model whose
  mixed-precision Adam states fit its GPU memory, 12 of the 16 bytes per parameter (fp32 weights +
  Adam moments; Rajbhandari et al., "ZeRO", SC 2020, §3.1; the same figures as the workload's ``ai``
  data model, ``derive.AI_CHECKPOINT_BYTES_PER_PARAM`` / ``AI_STATE_BYTES_PER_PARAM``); of a CPU-only
  task, its memory (a process image, as checkpoint-restart tools dump it). Throughput: 1,000 MiB/s,
  the highest an AWS EBS gp3 volume can be provisioned for (AWS EBS User Guide, "General Purpose SSD
  volumes": gp3 baseline 125 MiB/s, up to 1,000 MiB/s). ``checkpoint_s = 2 x state / throughput``
  (written at the pause, read at the resume). A task whose overhead would exceed its own duration, or
  the bundle bound (``gridshift.bounds``, 1 day), is neither interruptible nor elastic: stopping it
  could never pay.
* **Elastic scaling** (CarbonScaler, Hanafy et al., SIGMETRICS 2024): a task may run at 1 to K times
  its request, K = the largest allocation of the measured profile (7 servers), with the marginal
  throughput of one of CarbonScaler's published marginal capacity curves (N-body MPI, 100k and 10k
  bodies: throughput at 1..7 servers, artifact github.com/umassos/CarbonScaler ``src/profiles/``),
  drawn with equal chance, as the least-squares line through speed-up 1 at the request (the engine's
  curve is linear, docs/simulation.md "Flexible tasks"). It may not shrink below its request
  (``min_scale`` = 1: in CarbonScaler an allocation below one server is a suspension, which
  ``interruptible`` covers). Only tasks that can scale out are elastic: CPU-only tasks and tasks
  with whole GPUs; a fractional GPU share (a slice of one device) is not. No published trace records
  which jobs are elastic, or with which curve: the equal chance among the measured curves is an
  assumption, like the ``ai`` data model's.
* ``profile="none"``: no flexibility (the format's defaults: no delay, not interruptible, not
  elastic), for runs that must match a format-1 benchmark.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import asdict, dataclass

import numpy as np
import polars as pl

from gridshift.bounds import BOUNDS
from gridshift.bundle.format import TASK_FLEX_DEFAULTS
from gridshift.errors import GridshiftError
from pipelines.workload.derive import AI_CHECKPOINT_BYTES_PER_PARAM, AI_STATE_BYTES_PER_PARAM

PROFILES = ("default", "none")

#: CarbonScaler's published marginal capacity curves: throughput (work units / s) at 1, 2, ... servers
#: (github.com/umassos/CarbonScaler, src/profiles/nbody100k.csv and nbody10k.csv, column ``throughput``;
#: Hanafy et al., SIGMETRICS 2024)
CARBONSCALER_PROFILES: tuple[tuple[str, tuple[float, ...]], ...] = (
    ("nbody100k", (1757.8908686976195, 3496.3996474651103, 5104.3944617012185, 6661.952186308102,
                   8073.214680924454, 9447.749384138653, 10747.782862749653)),
    ("nbody10k", (16130.263301548106, 26084.902766614217, 34977.82018587672, 41228.85476314777,
                  47430.986825779524, 52196.29225924978, 56212.42180881337)),
)

_MIB = 1024.0 * 1024.0


def fit_marginal_throughput(throughput: tuple[float, ...] | np.ndarray) -> float:
    """The constant marginal throughput m of a measured curve: the least-squares fit of
    speed-up(x) = throughput(x) / throughput(1) = 1 + m (x - 1) over x = 1, 2, ... servers."""
    t = np.asarray(throughput, dtype=np.float64)
    if t.size < 2 or not np.all(np.isfinite(t)) or t[0] <= 0:
        raise GridshiftError(f"a scaling profile needs >= 2 finite throughputs, the first > 0; got {t.tolist()}")
    x = np.arange(1, t.size + 1, dtype=np.float64) - 1.0
    m = float((x * (t / t[0] - 1.0)).sum() / (x * x).sum())
    return min(max(m, 0.0), 1.0)


@dataclass(frozen=True)
class FlexParams:
    """Every parameter of the flexibility model (module docstring: the sources)."""

    profile: str = "default"
    #: GAIA's queue boundary (s) and the allowed delays of its short and long queues (s)
    short_max_duration_s: float = 7200.0
    short_max_delay_s: float = 6 * 3600.0
    long_max_delay_s: float = 24 * 3600.0
    #: share of tasks that may be paused (GAIA's suspend-resume applies to every job)
    interruptible_share: float = 1.0
    #: share of the tasks that can scale out (CPU-only or whole GPUs) that are elastic
    elastic_share: float = 1.0
    #: checkpoint bytes per byte of GPU memory: 12 of the 16 B per parameter of Adam model states (ZeRO §3.1)
    checkpoint_gb_per_gpu_mem_gb: float = AI_CHECKPOINT_BYTES_PER_PARAM / AI_STATE_BYTES_PER_PARAM
    #: checkpoint storage throughput: 1,000 MiB/s (AWS EBS gp3 maximum), in GB/s
    storage_gb_per_s: float = 1000.0 * _MIB / 1e9
    #: CarbonScaler's measured curves (name, throughput at 1..K servers)
    scaling_profiles: tuple[tuple[str, tuple[float, ...]], ...] = CARBONSCALER_PROFILES

    def __post_init__(self) -> None:
        if self.profile not in PROFILES:
            raise GridshiftError(f"flexibility must be one of {PROFILES}, got {self.profile!r}")
        for name in ("interruptible_share", "elastic_share"):
            v = getattr(self, name)
            if not 0.0 <= v <= 1.0:
                raise GridshiftError(f"{name} must be in [0, 1], got {v}")
        for name in ("short_max_duration_s", "short_max_delay_s", "long_max_delay_s"):
            v = getattr(self, name)
            if not 0.0 <= v <= BOUNDS["max_delay_s"].high:
                raise GridshiftError(f"{name} must be in [0, {BOUNDS['max_delay_s'].high:g}] s, got {v}")
        if not self.checkpoint_gb_per_gpu_mem_gb >= 0.0:
            raise GridshiftError(f"checkpoint_gb_per_gpu_mem_gb must be >= 0, got {self.checkpoint_gb_per_gpu_mem_gb}")
        if not self.storage_gb_per_s > 0.0:
            raise GridshiftError(f"storage_gb_per_s must be > 0, got {self.storage_gb_per_s}")
        if not self.scaling_profiles:
            raise GridshiftError("scaling_profiles is empty")
        for _, t in self.scaling_profiles:
            fit_marginal_throughput(t)
            if len(t) > BOUNDS["max_scale"].high:
                raise GridshiftError(f"a scaling profile of {len(t)} servers exceeds max_scale's bound")

    def curves(self) -> tuple[np.ndarray, np.ndarray]:
        """(marginal throughput, largest scale) of each scaling profile."""
        return (np.array([fit_marginal_throughput(t) for _, t in self.scaling_profiles]),
                np.array([float(len(t)) for _, t in self.scaling_profiles]))

    def manifest(self) -> dict:
        """The parameters as recorded in a bundle manifest (canonical, with their sha256)."""
        d = asdict(self)
        d["scaling_profiles"] = {name: list(t) for name, t in self.scaling_profiles}
        m, k = self.curves()
        d["fitted_marginal_throughput"] = {name: round(float(v), 12) for (name, _), v in
                                           zip(self.scaling_profiles, m, strict=True)}
        d["max_scale"] = {name: float(v) for (name, _), v in zip(self.scaling_profiles, k, strict=True)}
        blob = json.dumps(d, sort_keys=True, separators=(",", ":")).encode()
        return {**d, "params_sha256": hashlib.sha256(blob).hexdigest()}


# ------------------------------------------------------------------------------------------ draws
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)


def _splitmix64(z: np.ndarray) -> np.ndarray:
    """SplitMix64's output function (Steele, Lea & Flood, OOPSLA 2014), element-wise on uint64
    (wrap-around arithmetic)."""
    z = (z ^ (z >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    z = (z ^ (z >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return z ^ (z >> np.uint64(31))


def task_uniforms(seed: int, task_id: np.ndarray, stream: int) -> np.ndarray:
    """Uniforms in [0, 1), one per task, a function of (seed, task_id, stream) only."""
    with np.errstate(over="ignore"):
        key = _splitmix64(np.uint64(seed & 0xFFFFFFFFFFFFFFFF) * _GOLDEN + np.uint64(stream))
        z = _splitmix64(task_id.astype(np.int64).view(np.uint64) * _GOLDEN ^ key)
    return (z >> np.uint64(11)).astype(np.float64) * (1.0 / 9007199254740992.0)


_S_INTR, _S_ELASTIC, _S_CURVE = 1, 2, 3


# ------------------------------------------------------------------------------------------ assign
def assign_flexibility(tasks: pl.DataFrame, params: FlexParams, seed: int) -> pl.DataFrame:
    """``tasks`` (with ``task_id``, ``duration_s``, ``cpu_cores``, ``gpus``, ``mem_gb``, ``gpu_mem_gb``)
    with the format-2 flexibility columns added (replaced if present): ``max_delay_s``,
    ``interruptible``, ``checkpoint_s``, ``min_scale``, ``max_scale``, ``marginal_throughput``."""
    flex_cols = list(TASK_FLEX_DEFAULTS)
    base = tasks.drop([c for c in flex_cols if c in tasks.columns])
    n = base.height
    if params.profile == "none" or n == 0:
        return base.with_columns(
            *[pl.lit(v, dtype=pl.Boolean if isinstance(v, bool) else pl.Float64).alias(c)
              for c, v in TASK_FLEX_DEFAULTS.items()])
    tid = base["task_id"].cast(pl.Int64).to_numpy()
    dur = base["duration_s"].cast(pl.Float64).to_numpy()
    gpus = base["gpus"].cast(pl.Float64).to_numpy()
    # queue class (GAIA): short jobs wait up to 6 h, long ones up to 24 h
    delay = np.where(dur < params.short_max_duration_s, params.short_max_delay_s, params.long_max_delay_s)
    # checkpoint: save + restore the task's state at the storage throughput
    gpu_mem = base["gpu_mem_gb"].cast(pl.Float64).to_numpy()
    mem = base["mem_gb"].cast(pl.Float64).to_numpy()
    state_gb = np.where(gpus > 0.0, params.checkpoint_gb_per_gpu_mem_gb * gpu_mem, mem)
    ckpt = 2.0 * state_gb / params.storage_gb_per_s
    can_stop = (ckpt <= dur) & (ckpt <= BOUNDS["checkpoint_s"].high)
    intr = can_stop & (task_uniforms(seed, tid, _S_INTR) < params.interruptible_share)
    scalable = (gpus == 0.0) | (gpus >= 1.0)
    elastic = can_stop & scalable & (task_uniforms(seed, tid, _S_ELASTIC) < params.elastic_share)
    m_curve, k_curve = params.curves()
    which = np.minimum((task_uniforms(seed, tid, _S_CURVE) * m_curve.size).astype(np.int64), m_curve.size - 1)
    return base.with_columns(
        pl.Series("max_delay_s", delay, dtype=pl.Float64),
        pl.Series("interruptible", intr, dtype=pl.Boolean),
        pl.Series("checkpoint_s", np.where(intr | elastic, ckpt, 0.0), dtype=pl.Float64),
        pl.Series("min_scale", np.ones(n), dtype=pl.Float64),
        pl.Series("max_scale", np.where(elastic, k_curve[which], 1.0), dtype=pl.Float64),
        pl.Series("marginal_throughput", np.where(elastic, m_curve[which], 0.0), dtype=pl.Float64),
    )


class Summary:
    """Counts of what :func:`assign_flexibility` gave (for the bundle manifest), accumulated batch by batch
    (:meth:`add`) so that a workload too large to hold is summarised as it streams by: the same record as one
    batch of all (the median of the checkpoint overheads from each distinct value's count)."""

    def __init__(self) -> None:
        self.n_tasks = self.n_interruptible = self.n_elastic = 0
        self._delay: dict[float, int] = {}
        self._ckpt = pl.DataFrame(schema={"checkpoint_s": pl.Float64, "count": pl.Int64})

    def add(self, tasks: pl.DataFrame) -> None:
        self.n_tasks += tasks.height
        self.n_interruptible += int(tasks["interruptible"].sum())
        self.n_elastic += int((tasks["max_scale"] > 1.0).sum())
        for k, v in tasks.group_by("max_delay_s").len().iter_rows():
            self._delay[k] = self._delay.get(k, 0) + int(v)
        counts = (tasks.lazy().filter(pl.col("checkpoint_s") > 0).group_by("checkpoint_s")
                  .agg(pl.len().cast(pl.Int64).alias("count")).collect())
        self._ckpt = pl.concat([self._ckpt, counts]).group_by("checkpoint_s").agg(pl.col("count").sum())

    def _checkpoint_median(self) -> float:
        """The median as polars takes it of the values themselves (the mean of the two middle ones)."""
        c = self._ckpt.sort("checkpoint_s")
        n = int(c["count"].sum())
        if not n:
            return 0.0
        ends = c["count"].cum_sum().to_numpy()
        v = c["checkpoint_s"].to_numpy()
        lo, hi = v[np.searchsorted(ends, (n - 1) // 2, side="right")], v[np.searchsorted(ends, n // 2, side="right")]
        return float(pl.Series([lo, hi]).median())

    def record(self) -> dict:
        if not self.n_tasks:
            return {"n_tasks": 0}
        return {
            "n_tasks": self.n_tasks,
            "n_interruptible": self.n_interruptible,
            "n_elastic": self.n_elastic,
            "n_by_max_delay_s": {f"{k:g}": v for k, v in sorted(self._delay.items())},
            "checkpoint_s_median": self._checkpoint_median(),
        }


def summary(tasks: pl.DataFrame) -> dict:
    """Counts of what :func:`assign_flexibility` gave (for the bundle manifest): :class:`Summary` of one batch."""
    s = Summary()
    s.add(tasks)
    return s.record()
