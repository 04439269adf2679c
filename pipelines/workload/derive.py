"""Workload derivation: trace tasks → the ``workload_tasks`` of one target year.

Every step is a pure, vectorized polars/numpy function with its parameters in :class:`DeriveParams`
(documented defaults; see ``docs/workload.md``). The steps, in order:

1. :func:`filter_tasks` — keep finished tasks with a valid duration (≥ 15 min by default);
   every dropped row gets exactly one reason, and the reasons are counted.
2. :func:`normalize_resources` — cores / GPUs / GB per task (per-instance request × instances),
   GPU memory from the GPU type.
3. :func:`assign_bandwidth` — input data size (the traces have none): a documented, seeded model.
4. extension — whole trace weeks tiled onto the target year's weeks (:func:`usable_weeks`,
   :func:`week_assignment`), preserving the weekday and UTC time of day of every arrival; a load
   factor overlays further weeks. Done one target week at a time: ``pipelines.workload.chunked``.
5. ``chunked.finalize`` — UTC arrival timestamps, ``task_id`` in arrival order, the table's columns.

Steps 4-5 (and, for the synthetic generator, every step) run by chunks of time
(``pipelines.workload.chunked``), so memory does not grow with the load factor.
Randomness comes from ``np.random.SeedSequence``: per derivation (``spawn_rngs``) for draws over
the trace, per (seed, stream, chunk) for draws per chunk: same inputs + parameters + seed ⇒
identical table. Inputs are sorted before any draw, so thread scheduling cannot matter.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass, field, replace
from datetime import UTC, datetime

import numpy as np
import polars as pl

from gridshift import portable_math
from gridshift.errors import DataError
from gridshift.timestep import STEP_S
from pipelines.core.raw import RawFile
from pipelines.core.source import Source
from pipelines.core.tabular import read_csv_strings, to_float

WEEK_S = 7 * 86_400
SLOT_S = STEP_S  # arrivals are counted per simulation step
_US = 1_000_000
# 1970-01-05 (a Monday) in seconds since the Unix epoch: weeks are aligned on Monday 00:00 UTC.
MONDAY_EPOCH_S = 4 * 86_400

# The columns a source parser hands to the derivation (one row per trace task).
TRACE_FRAME_COLUMNS = [
    "source_line", "status", "inst_num", "arrival_s", "start_s", "end_s",
    "cpu_cores_per_inst", "gpus_per_inst", "mem_gb_per_inst", "gpu_type",
]

# Memory of one GPU of each type in the Alibaba traces (vendor specifications: P100 16 GB,
# T4 16 GB, V100 16 GB, V100 32 GB "V100M32", A10 24 GB, A100 80 GB). "MISC" and missing types
# fall back to ``default_gpu_mem_gb``.
GPU_MEM_GB_BY_TYPE: tuple[tuple[str, float], ...] = (
    ("A10", 24.0), ("A100", 80.0), ("P100", 16.0), ("T4", 16.0),
    ("V100", 16.0), ("V100M16", 16.0), ("V100M32", 32.0),
)

# Published AI training workloads: (name, training data in GB, model parameters in millions). The
# ``ai`` size model (:func:`assign_bandwidth`, docs/workload.md) draws a task's data among the rows it
# could have run. Sources, per row (GB = 1e9 bytes):
#   squad11-bert-base     SQuAD v1.1 train-v1.1.json 30,288,272 B + dev-v1.1.json 4,854,279 B (Rajpurkar et
#                         al., EMNLP 2016); BERT-base 110 M parameters (Devlin et al., NAACL 2019, §3)
#   cifar10-resnet18      CIFAR-10 python archive 170,498,071 B (Krizhevsky 2009, cs.toronto.edu/~kriz/cifar);
#                         ResNet-18 11.7 M parameters (He et al., CVPR 2016; torchvision 11,689,512)
#   wikibooks-bert-large  BookCorpus + English Wikipedia, 16 GB (Liu et al., "RoBERTa", 2019, §3.2: BERT's
#                         pre-training data); BERT-large 340 M parameters (Devlin et al., NAACL 2019, §3)
#   coco2017-maskrcnn     COCO 2017 train2017.zip 19,336,861,798 B + val2017.zip 815,585,330 B +
#                         annotations_trainval2017.zip 252,907,541 B (cocodataset.org; Lin et al., ECCV 2014;
#                         the MLPerf Training heavy-weight detection set); Mask R-CNN R50-FPN 44.4 M
#                         parameters (He et al., ICCV 2017; torchvision 44,401,393)
#   webtext-gpt2-xl       WebText, 40 GB of text (Radford et al., "Language Models are Unsupervised Multitask
#                         Learners", 2019, §2.1); GPT-2 XL 1,542 M parameters (ibid., Table 2)
#   imagenet1k-resnet50   ILSVRC2012 img_train.tar 147,897,477,120 B + img_val.tar 6,744,924,160 B (Russakovsky
#                         et al., IJCV 2015; the MLPerf Training image-classification set); ResNet-50 25.6 M
#                         parameters (He et al., CVPR 2016)
#   gpt3-175b             570 GB of filtered CommonCrawl (Brown et al., NeurIPS 2020, §2.2); 175 B parameters
#   c4-t5-11b             C4, "about 750 GB" (Raffel et al., JMLR 2020, §2.2; the MLPerf Training LLM set);
#                         T5-11B 11 B parameters (ibid., §3.7)
#   pile-gpt-neox-20b     The Pile, 825 GiB = 885.8 GB (Gao et al., arXiv:2101.00027, 2020, Table 1);
#                         GPT-NeoX-20B 20 B parameters (Black et al., BigScience workshop 2022)
AI_WORKLOADS: tuple[tuple[str, float, float], ...] = (
    ("squad11-bert-base", 0.035, 110.0),
    ("cifar10-resnet18", 0.170, 11.7),
    ("wikibooks-bert-large", 16.0, 340.0),
    ("coco2017-maskrcnn", 20.405, 44.4),
    ("webtext-gpt2-xl", 40.0, 1542.0),
    ("imagenet1k-resnet50", 154.642, 25.6),
    ("gpt3-175b", 570.0, 175_000.0),
    ("c4-t5-11b", 750.0, 11_000.0),
    ("pile-gpt-neox-20b", 885.8, 20_000.0),
)
# Bytes per parameter of the model states a training replica holds in GPU memory with mixed-precision
# Adam (fp16 weights and gradients, fp32 master weights, momentum and variance: 2 + 2 + 12 = 16 B;
# Rajbhandari et al., "ZeRO", SC 2020, §3.1), and of a checkpoint that can resume training (the fp32
# master weights, momentum and variance: 12 B, ibid.).
AI_STATE_BYTES_PER_PARAM = 16.0
AI_CHECKPOINT_BYTES_PER_PARAM = 12.0
# Training data a GPU reads per hour: ResNet-50 on ImageNet, 90 epochs of the 147.9 GB training set
# in one hour on 256 P100 GPUs (Goyal et al., "Accurate, Large Minibatch SGD: Training ImageNet in
# 1 Hour", 2017): 90 × 147.897 GB / 256 GPU-hours = 52.0 GB per GPU-hour.
AI_READ_GB_PER_GPU_HOUR = 90 * 147.897477120 / 256

REFERENCE_HISTOGRAMS_RELPATH = "reference/alibaba2020_filtered_histograms.csv"
REFERENCE_WEEKDAY_HOUR_RELPATH = "reference/alibaba2020_filtered_weekday_hour.csv"


BANDWIDTH_MODELS = ("ai", "reference", "constant")


@dataclass(frozen=True)
class DeriveParams:
    """Every parameter of the derivation, with its default. Recorded with each derived table."""

    # 1. filter
    statuses: tuple[str, ...] = ("Terminated",)
    min_duration_s: float = 900.0
    max_duration_s: float | None = None
    nan_gpu_as_zero: bool = True
    max_instance_cpu_cores: float = 96.0  # largest machine of the PAI 2020 cluster (machine spec)
    max_instance_gpus: float = 8.0
    max_instance_mem_gb: float = 512.0
    # 2. normalization
    resource_basis: str = "task_total"  # "task_total" (× inst_num) or "per_instance"
    gpu_mem_gb_by_type: tuple[tuple[str, float], ...] = GPU_MEM_GB_BY_TYPE
    default_gpu_mem_gb: float = 16.0
    # 3. bandwidth (GB moved when a task runs away from its origin: its data + its checkpoint)
    bandwidth_model: str = "ai"  # "ai" | "reference" | "constant"
    bandwidth_mem_corr: float = 0.5
    bandwidth_constant_gb: float = 0.12
    ai_workloads: tuple[tuple[str, float, float], ...] = AI_WORKLOADS
    ai_state_bytes_per_param: float = AI_STATE_BYTES_PER_PARAM
    ai_checkpoint_bytes_per_param: float = AI_CHECKPOINT_BYTES_PER_PARAM
    ai_read_gb_per_gpu_hour: float = AI_READ_GB_PER_GPU_HOUR
    # 4. extension to the target year
    trace_origin_utc: str = "1970-01-01T00:00:00+00:00"
    window_s: tuple[float, float] | None = None  # trace window; None = first..last arrival
    min_week_fraction: float = 0.5
    week_order: str = "shuffle"  # "shuffle" | "cycle"
    load_factor: float = 1.0
    layer_jitter_s: float = 900.0
    # randomness
    seed: int = 0
    # free-form provenance of the input (e.g. generator parameters); part of the hash
    extra: tuple[tuple[str, str], ...] = field(default=())

    def __post_init__(self) -> None:
        # ints given for float parameters are stored as floats, so the recorded JSON and hash
        # do not depend on how a caller spelled a number
        for name in ("min_duration_s", "max_duration_s", "max_instance_cpu_cores", "max_instance_gpus",
                     "max_instance_mem_gb", "default_gpu_mem_gb", "bandwidth_mem_corr", "bandwidth_constant_gb",
                     "ai_state_bytes_per_param", "ai_checkpoint_bytes_per_param", "ai_read_gb_per_gpu_hour",
                     "min_week_fraction", "load_factor", "layer_jitter_s"):
            v = getattr(self, name)
            if isinstance(v, int) and not isinstance(v, bool):
                object.__setattr__(self, name, float(v))
        if self.window_s is not None:
            object.__setattr__(self, "window_s", (float(self.window_s[0]), float(self.window_s[1])))
        object.__setattr__(self, "statuses", tuple(self.statuses))
        if self.resource_basis not in ("task_total", "per_instance"):
            raise ValueError(f"resource_basis must be task_total or per_instance, got {self.resource_basis!r}")
        if self.bandwidth_model not in BANDWIDTH_MODELS:
            raise ValueError(f"bandwidth_model must be one of {BANDWIDTH_MODELS}, got {self.bandwidth_model!r}")
        object.__setattr__(self, "ai_workloads",
                           tuple((str(n), float(d), float(m)) for n, d, m in self.ai_workloads))
        if self.bandwidth_model == "ai":
            if not self.ai_workloads:
                raise ValueError("bandwidth_model='ai' needs at least one entry in ai_workloads")
            if any(not (d >= 0 and m >= 0 and math.isfinite(d) and math.isfinite(m)) for _, d, m in self.ai_workloads):
                raise ValueError("ai_workloads: data GB and parameter millions must be finite and >= 0")
            for name in ("ai_state_bytes_per_param", "ai_checkpoint_bytes_per_param", "ai_read_gb_per_gpu_hour"):
                v = getattr(self, name)
                if not (math.isfinite(v) and v > 0):
                    raise ValueError(f"{name} must be finite and > 0, got {v}")
        if self.week_order not in ("shuffle", "cycle"):
            raise ValueError(f"week_order must be shuffle or cycle, got {self.week_order!r}")
        if not self.load_factor > 0:
            raise ValueError(f"load_factor must be > 0, got {self.load_factor}")
        if not -1.0 <= self.bandwidth_mem_corr <= 1.0:
            raise ValueError("bandwidth_mem_corr must be in [-1, 1]")

    def with_(self, **changes: object) -> DeriveParams:
        return replace(self, **changes)

    def to_json(self) -> str:
        """Canonical JSON (sorted keys, no spaces): what is recorded and hashed."""
        return json.dumps(asdict(self), sort_keys=True, separators=(",", ":"))

    @property
    def sha256(self) -> str:
        return hashlib.sha256(self.to_json().encode()).hexdigest()

    @property
    def origin_s(self) -> int:
        dt = datetime.fromisoformat(self.trace_origin_utc)
        if dt.tzinfo is None:
            raise ValueError("trace_origin_utc must carry an offset")
        return int(dt.astimezone(UTC).timestamp())


def spawn_rngs(seed: int, n: int) -> list[np.random.Generator]:
    return [np.random.default_rng(s) for s in np.random.SeedSequence(seed).spawn(n)]


# --------------------------------------------------------------------------- statistics helpers
def norm_cdf(x: np.ndarray) -> np.ndarray:
    """Standard normal CDF, vectorized (Abramowitz & Stegun 7.1.26 erf, |error| < 1.5e-7); the exponential
    is ``portable_math.exp``, so the bits are the same on every machine (a bundle's id depends on them)."""
    z = np.abs(x) / math.sqrt(2.0)
    t = 1.0 / (1.0 + 0.3275911 * z)
    poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))))
    erf = 1.0 - poly * portable_math.exp(-z * z)
    return 0.5 * (1.0 + np.sign(x) * erf)


_A = (-3.969683028665376e01, 2.209460984245205e02, -2.759285104469687e02, 1.383577518672690e02,
      -3.066479806614716e01, 2.506628277459239e00)
_B = (-5.447609879822406e01, 1.615858368580409e02, -1.556989798598866e02, 6.680131188771972e01,
      -1.328068155288572e01)
_C = (-7.784894002430293e-03, -3.223964580411365e-01, -2.400758277161838e00, -2.549732539343734e00,
      4.374664141464968e00, 2.938163982698783e00)
_D = (7.784695709041462e-03, 3.224671290700398e-01, 2.445134137142996e00, 3.754408661907416e00)


def norm_ppf(p: np.ndarray) -> np.ndarray:
    """Standard normal quantile, vectorized (Acklam's rational approximation, rel. error < 1.2e-9); the
    logarithm is ``portable_math.log`` (the same bits on every machine)."""
    p = np.clip(np.asarray(p, dtype=np.float64), 1e-15, 1 - 1e-15)
    out = np.empty_like(p)
    lo, hi = p < 0.02425, p > 1 - 0.02425
    mid = ~(lo | hi)
    q = p[mid] - 0.5
    r = q * q
    out[mid] = (((((_A[0] * r + _A[1]) * r + _A[2]) * r + _A[3]) * r + _A[4]) * r + _A[5]) * q / (
        ((((_B[0] * r + _B[1]) * r + _B[2]) * r + _B[3]) * r + _B[4]) * r + 1)
    for sel, sign in ((lo, 1.0), (hi, -1.0)):
        pp = p[sel] if sign > 0 else 1 - p[sel]
        q = np.sqrt(-2 * portable_math.log(pp))
        out[sel] = sign * (((((_C[0] * q + _C[1]) * q + _C[2]) * q + _C[3]) * q + _C[4]) * q + _C[5]) / (
            (((_D[0] * q + _D[1]) * q + _D[2]) * q + _D[3]) * q + 1)
    return out


def normal_scores(x: np.ndarray) -> np.ndarray:
    """Normal scores of the ranks of ``x`` (ties averaged): the Gaussian-copula latent of x."""
    n = len(x)
    if n == 0:
        return np.empty(0)
    ranks = pl.Series(x).rank("average").to_numpy()
    return norm_ppf((ranks - 0.5) / n)


@dataclass(frozen=True)
class Histogram:
    """A published histogram (bin centres, counts) read as a piecewise-uniform distribution."""

    variable: str
    unit: str
    centers: np.ndarray
    counts: np.ndarray

    @property
    def edges(self) -> np.ndarray:
        c = self.centers
        mids = (c[:-1] + c[1:]) / 2
        first = max(c[0] - (c[1] - c[0]) / 2, 0.0)
        last = c[-1] + (c[-1] - c[-2]) / 2
        return np.concatenate([[first], mids, [last]])

    @property
    def mean(self) -> float:
        e = self.edges
        return float(np.sum(self.counts * (e[:-1] + e[1:]) / 2) / self.counts.sum())

    def ppf(self, u: np.ndarray) -> np.ndarray:
        """Inverse CDF: uniform within each bin (linear interpolation of the CDF at the edges)."""
        cdf = np.concatenate([[0.0], np.cumsum(self.counts, dtype=np.float64)])
        cdf /= cdf[-1]
        return np.interp(u, cdf, self.edges)


def parse_histograms(raw: RawFile) -> dict[str, Histogram]:
    """Parse ``reference/alibaba2020_filtered_histograms.csv`` (variable, unit, bin_center, count)."""
    df = read_csv_strings(raw.content, raw.uri, ["variable", "unit", "bin_center", "count"])
    df = df.with_columns(
        bin_center=to_float(df, "bin_center", raw.uri, required=True),
        count=to_float(df, "count", raw.uri, required=True),
    )
    out = {}
    for var in df["variable"].unique(maintain_order=True).to_list():
        d = df.filter(pl.col("variable") == var)
        out[var] = Histogram(var, d["unit"][0], d["bin_center"].to_numpy(), d["count"].to_numpy())
    for need in ("duration", "cpu", "gpu", "mem", "bandwidth"):
        if need not in out:
            raise DataError(f"reference histograms lack variable {need!r}", file=raw.uri, column="variable")
    return out


WEEKDAYS = ("Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun")


def parse_weekday_hour(raw: RawFile) -> np.ndarray:
    """Parse the weekday × UTC-hour profile into a (7, 24) array, Monday first."""
    df = read_csv_strings(raw.content, raw.uri, ["weekday", "hour_utc", "mean_tasks_per_15min"])
    val = to_float(df, "mean_tasks_per_15min", raw.uri, required=True).to_numpy()
    hour = to_float(df, "hour_utc", raw.uri, required=True).to_numpy().astype(np.int64)
    wd = df["weekday"].to_list()
    bad = [i for i, w in enumerate(wd) if w not in WEEKDAYS]
    if bad or df.height != 168:
        raise DataError("profile must have 168 rows with weekdays Mon..Sun", file=raw.uri, column="weekday",
                        rows=[i + 2 for i in bad], values=[wd[i] for i in bad])
    prof = np.full((7, 24), np.nan)
    prof[[WEEKDAYS.index(w) for w in wd], hour] = val
    if np.isnan(prof).any():
        raise DataError("profile does not cover every weekday × hour", file=raw.uri, column="hour_utc")
    return prof


class ReferenceShape(Source):
    """The published shape of SustainCluster's filtered PAI 2020 workload, from a mirror: the
    weekday × hour profile and the histograms (the synthetic generator's targets; the bandwidth model)."""

    name = "reference-alibaba2020-filtered"

    def histograms(self, mirror) -> tuple[RawFile, dict[str, Histogram]]:
        raw = self.read_mirror(mirror, REFERENCE_HISTOGRAMS_RELPATH)
        return raw, parse_histograms(raw)

    def weekday_hour(self, mirror) -> tuple[RawFile, np.ndarray]:
        raw = self.read_mirror(mirror, REFERENCE_WEEKDAY_HOUR_RELPATH)
        return raw, parse_weekday_hour(raw)


REFERENCE = ReferenceShape()


# --------------------------------------------------------------------------- 1. filter
def _status_label(status: pl.Expr) -> pl.Expr:
    return pl.lit("status_") + status.str.to_lowercase().str.replace_all(r"[^a-z0-9]+", "_")


def status_labels(statuses: Sequence[str] | pl.Series) -> dict[str, str]:
    """The drop reason of each status value not kept (``status_<value, lower case, runs of other
    characters as _>``), worked out once per value."""
    s = pl.Series("status", statuses, dtype=pl.String)
    return dict(zip(s.to_list(), s.to_frame().select(_status_label(pl.col("status"))).to_series().to_list(),
                    strict=True))


def _reason_rules(p: DeriveParams, status_labels: dict[str, str] | None = None) -> list[tuple[pl.Expr, pl.Expr]]:
    """(condition, reason) in order: a row is dropped for the first condition that holds.
    ``status_labels``: the label of each status value, worked out once per value (else per row)."""
    dur = pl.col("end_s") - pl.col("start_s")
    gpu = pl.col("gpus_per_inst")
    cpu, mem = pl.col("cpu_cores_per_inst"), pl.col("mem_gb_per_inst")
    rules = [
        (pl.col("status").is_null(), pl.lit("status_missing")),
        (~pl.col("status").is_in(list(p.statuses)),
         _status_label(pl.col("status")) if status_labels is None
         else pl.col("status").replace_strict(status_labels, return_dtype=pl.String)),
        (pl.col("arrival_s").is_null() | (pl.col("arrival_s") <= 0) | pl.col("start_s").is_null()
         | (pl.col("start_s") <= 0) | pl.col("end_s").is_null() | (pl.col("end_s") <= 0), pl.lit("missing_time")),
        (dur <= 0, pl.lit("end_not_after_start")),
        (dur < p.min_duration_s, pl.lit("duration_below_min")),
    ]
    if p.max_duration_s is not None:
        rules.append((dur > p.max_duration_s, pl.lit("duration_above_max")))
    rules += [
        (pl.col("inst_num").is_null() | (pl.col("inst_num") < 1), pl.lit("bad_inst_num")),
        (cpu.is_null() | cpu.is_nan(), pl.lit("missing_cpu")),
        (mem.is_null() | mem.is_nan(), pl.lit("missing_mem")),
    ]
    if not p.nan_gpu_as_zero:
        rules.append((gpu.is_null() | gpu.is_nan(), pl.lit("missing_gpu")))
    g = gpu.fill_nan(None).fill_null(0.0)
    rules += [
        ((cpu < 0) | (mem < 0) | (g < 0), pl.lit("negative_resource")),
        ((cpu > p.max_instance_cpu_cores) | (g > p.max_instance_gpus) | (mem > p.max_instance_mem_gb),
         pl.lit("exceeds_machine")),
        ((cpu == 0) & (g == 0), pl.lit("no_compute_request")),
    ]
    return rules


def _reason_expr(p: DeriveParams, status_labels: dict[str, str] | None = None) -> pl.Expr:
    rules = _reason_rules(p, status_labels)
    expr = pl.when(rules[0][0]).then(rules[0][1])
    for cond, label in rules[1:]:
        expr = expr.when(cond).then(label)
    return expr.otherwise(pl.lit(None, dtype=pl.String))


def filter_tasks(trace: pl.DataFrame, p: DeriveParams) -> tuple[pl.DataFrame, dict[str, int], dict[str, int]]:
    """Keep finished tasks with a valid duration and sane requests.

    Returns (kept rows, dropped count per reason, adjustment count per kind). Each dropped row is
    counted under the first reason that applies, so kept + Σ dropped = input rows. (Which rows go
    is one boolean pass; the reasons are worked out for the dropped rows only.)
    """
    # a null condition does not hold (as in a when/then chain)
    bad = trace.select(pl.any_horizontal([c.fill_null(False) for c, _ in _reason_rules(p)])).to_series()
    kept = trace.filter(~bad)
    dropped_rows = trace.filter(bad)
    statuses = dropped_rows["status"].drop_nulls().unique()
    labels = status_labels(statuses)
    reason = dropped_rows.select(_reason_expr(p, labels).alias("reason")).to_series()
    del dropped_rows
    del bad
    if reason.null_count():
        raise AssertionError("filter: a dropped row without a reason")  # the two passes disagree
    counts = reason.value_counts(sort=False).sort("reason")
    dropped = {r: int(n) for r, n in counts.iter_rows()}
    del reason
    adjustments = {}
    if p.nan_gpu_as_zero:
        n_nan = int(kept.select((pl.col("gpus_per_inst").is_null() | pl.col("gpus_per_inst").is_nan()).sum()).item())
        adjustments["gpu_missing_set_zero"] = n_nan
    return kept, dropped, adjustments


# --------------------------------------------------------------------------- 2. normalize
def normalize_resources(kept: pl.DataFrame, p: DeriveParams) -> pl.DataFrame:
    """Per-task duration and requests in seconds, cores, GPUs and GB."""
    mult = pl.col("inst_num").cast(pl.Float64) if p.resource_basis == "task_total" else pl.lit(1.0)
    gpu_types = dict(p.gpu_mem_gb_by_type)
    per_gpu = pl.col("gpu_type").replace_strict(gpu_types, default=p.default_gpu_mem_gb, return_dtype=pl.Float64)
    gpus = pl.col("gpus_per_inst").fill_nan(None).fill_null(0.0) * mult
    return kept.select(
        "source_line",
        "arrival_s",
        duration_s=(pl.col("end_s") - pl.col("start_s")).cast(pl.Float64),
        cpu_cores=pl.col("cpu_cores_per_inst") * mult,
        gpus=gpus,
        mem_gb=pl.col("mem_gb_per_inst") * mult,
        gpu_mem_gb=gpus * per_gpu,
    )


# --------------------------------------------------------------------------- 3. bandwidth
def assign_bandwidth(
    tasks: pl.DataFrame, p: DeriveParams, reference: Histogram | None, rng: np.random.Generator | None,
    *, groups: Sequence[tuple[np.random.Generator, int]] | None = None,
) -> pl.DataFrame:
    """Add ``bandwidth_gb``: the GB moved when the task runs away from its origin (its training data
    plus the checkpoint shipped back). Sizes are drawn once per source task (docs/workload.md).

    ``ai`` (default): a task runs one of the published workloads ``ai_workloads`` it could have run —
    its model states (``ai_state_bytes_per_param`` × parameters) fit in the GPU memory it asked for,
    and its GPU-hours read the training data at least once at ``ai_read_gb_per_gpu_hour`` — chosen
    with equal probability among those; it moves that data plus a checkpoint of
    ``ai_checkpoint_bytes_per_param`` × parameters. A task that could run none of them (CPU-only
    tasks, tiny GPU shares) moves a size from the ``reference`` model.
    ``reference``: a Gaussian copula — the latent is ρ·(normal score of the task's memory rank) +
    √(1-ρ²)·noise, mapped through the reference histogram of input sizes, so the marginal is the
    published one and bigger-memory tasks tend to carry more data (ρ = ``bandwidth_mem_corr``).
    ``constant``: every task moves ``bandwidth_constant_gb``.

    ``groups`` (instead of ``rng``): the rows in ``source_line`` order are consecutive groups (the
    days of a chunked derivation), each with its own generator and its own memory ranks, so a
    group's sizes do not depend on the groups derived with it.
    """
    tasks = tasks.sort("source_line")
    n = tasks.height
    if groups is None:
        groups = [(rng, n)]
    sizes = np.array([m for _, m in groups], dtype=np.int64)
    if int(sizes.sum()) != n:
        raise ValueError(f"groups cover {int(sizes.sum())} rows, the tasks are {n}")
    if p.bandwidth_model == "constant":
        bw = np.full(n, p.bandwidth_constant_gb)
    elif p.bandwidth_model == "reference":
        noise = _concat([g.standard_normal(m) for g, m in groups])
        bw = _reference_sizes(tasks["mem_gb"].to_numpy(), p, reference, noise, sizes)
    else:
        noise, u = [], []
        for g, m in groups:
            noise.append(g.standard_normal(m))  # drawn first, as the reference model draws it
            u.append(g.random(m))
        noise, u = _concat(noise), _concat(u)
        choice = ai_workload_choice(tasks, p, u)
        data = np.array([d for _, d, _ in p.ai_workloads])
        ckpt = np.array([m for _, _, m in p.ai_workloads]) * 1e6 * p.ai_checkpoint_bytes_per_param / 1e9
        bw = np.empty(n)
        ran = choice >= 0
        bw[ran] = data[choice[ran]] + ckpt[choice[ran]]
        rest = ~ran
        if rest.any():
            gid = np.repeat(np.arange(len(sizes)), sizes)
            rest_sizes = np.bincount(gid[rest], minlength=len(sizes))
            bw[rest] = _reference_sizes(tasks["mem_gb"].to_numpy()[rest], p, reference, noise[rest], rest_sizes)
    return tasks.with_columns(bandwidth_gb=pl.Series(bw, dtype=pl.Float64))


def _concat(arrays: list[np.ndarray]) -> np.ndarray:
    return arrays[0] if len(arrays) == 1 else np.concatenate(arrays) if arrays else np.empty(0)


def _reference_sizes(mem_gb: np.ndarray, p: DeriveParams, reference: Histogram | None,
                     noise: np.ndarray, sizes: np.ndarray) -> np.ndarray:
    """Reference-model sizes; memory ranks within each consecutive group of ``sizes`` rows."""
    if reference is None:
        raise ValueError(f"bandwidth_model={p.bandwidth_model!r} needs the reference bandwidth histogram")
    rho = p.bandwidth_mem_corr
    if len(sizes) == 1:
        scores = normal_scores(mem_gb)
    else:
        bounds = np.concatenate([[0], np.cumsum(sizes)])
        scores = np.concatenate([normal_scores(mem_gb[a:b]) for a, b in zip(bounds[:-1], bounds[1:], strict=True)])
    latent = rho * scores + math.sqrt(1 - rho * rho) * noise
    return reference.ppf(norm_cdf(latent))


def ai_workload_feasible(tasks: pl.DataFrame, p: DeriveParams, k: int) -> np.ndarray:
    """Whether each task could have run ``p.ai_workloads[k]``: the model states fit in its GPU memory
    and its GPU-hours read the training data at least once."""
    return _ai_feasible(tasks, p)[k]


def _ai_feasible(tasks: pl.DataFrame, p: DeriveParams) -> list[np.ndarray]:
    """:func:`ai_workload_feasible` for every catalog entry (the task columns read once)."""
    gpu_hours = tasks["gpus"].to_numpy() * tasks["duration_s"].to_numpy() / 3600.0
    readable_gb = p.ai_read_gb_per_gpu_hour * gpu_hours
    gpu_mem = tasks["gpu_mem_gb"].to_numpy()
    return [(params_m * 1e6 * p.ai_state_bytes_per_param / 1e9 <= gpu_mem) & (data_gb <= readable_gb)
            for _, data_gb, params_m in p.ai_workloads]


def ai_workload_choice(tasks: pl.DataFrame, p: DeriveParams, u: np.ndarray) -> np.ndarray:
    """Index into ``p.ai_workloads`` of each task's workload, uniform among the feasible ones given
    one uniform ``u`` per task; -1 where none is feasible. One vectorized pass per catalog entry."""
    n = tasks.height
    feasible = _ai_feasible(tasks, p)
    count = np.zeros(n, dtype=np.int64)
    for f in feasible:
        count += f
    target = np.minimum(np.floor(u * count).astype(np.int64), np.maximum(count - 1, 0))
    choice = np.full(n, -1, dtype=np.int64)
    seen = np.zeros(n, dtype=np.int64)
    for k, f in enumerate(feasible):
        choice[f & (seen == target) & (choice < 0)] = k
        seen += f
    return choice


# --------------------------------------------------------------------------- 4. extension
def year_window_s(year: int) -> tuple[int, int]:
    lo = int(datetime(year, 1, 1, tzinfo=UTC).timestamp())
    hi = int(datetime(year + 1, 1, 1, tzinfo=UTC).timestamp())
    return lo, hi


def usable_weeks(arrival_epoch_s: np.ndarray, window: tuple[float, float], min_week_fraction: float) -> np.ndarray:
    """Monday-aligned weeks fully inside the trace window and not starved (ramp-up/-down):
    a week is usable if it holds ≥ ``min_week_fraction`` × the 90th percentile of weekly counts."""
    lo, hi = window
    w_first = math.ceil((lo - MONDAY_EPOCH_S) / WEEK_S)
    w_last = math.floor((hi - MONDAY_EPOCH_S) / WEEK_S) - 1  # last week that ends by ``hi``
    if w_last < w_first:
        return np.empty(0, dtype=np.int64)
    weeks = np.arange(w_first, w_last + 1, dtype=np.int64)
    wk = np.floor_divide(arrival_epoch_s - MONDAY_EPOCH_S, WEEK_S).astype(np.int64)
    inside = (wk >= w_first) & (wk <= w_last)
    counts = np.bincount(wk[inside] - w_first, minlength=len(weeks))
    # reference level: the 90th percentile of the weekly counts (robust to a few sparse weeks of
    # ramp-up, where a trace holds only survivors of earlier submissions, and to one surge week)
    thresh = min_week_fraction * float(np.quantile(counts, 0.9)) if len(counts) else 0.0
    return weeks[(counts >= thresh) & (counts > 0)]


def week_assignment(n_src: int, n_target: int, n_layers: int, order: str, rng: np.random.Generator) -> np.ndarray:
    """(n_target, n_layers) indices into the source weeks.

    ``cycle``: target week k, layer l uses source week (k + l) mod n — the reference benchmark's
    block replication (a 7-week block repeated in order) is this with n = 7.
    ``shuffle``: the source weeks are dealt in seeded random permutations, one after the other, so
    each is used ⌊N/n⌋ or ⌈N/n⌉ times and the year has no fixed n-week period.
    """
    if order == "cycle":
        k = np.arange(n_target)[:, None]
        l_ = np.arange(n_layers)[None, :]
        return (k + l_) % n_src
    total = n_target * n_layers
    reps = math.ceil(total / n_src)
    seq = np.concatenate([rng.permutation(n_src) for _ in range(reps)])[:total]
    return seq.reshape(n_target, n_layers)


@dataclass
class ExtensionInfo:
    source_weeks: int
    target_weeks: int
    layers: int
    outside_year: int
    thinned: int


# --------------------------------------------------------------------------- 5. the table (chunked.finalize)
WORKLOAD_COLUMNS = [
    "workload", "year", "task_id", "arrival_ts_utc", "duration_s", "cpu_cores", "gpus", "mem_gb",
    "gpu_mem_gb", "bandwidth_gb", "source_line", "layer",
]
BUNDLE_COLUMNS = ["task_id", "arrival_ts_utc", "duration_s", "cpu_cores", "gpus", "mem_gb", "gpu_mem_gb",
                  "bandwidth_gb"]


# --------------------------------------------------------------------------- the whole derivation
@dataclass
class Derivation:
    tasks: pl.DataFrame
    n_source_rows: int
    n_kept: int
    dropped: dict[str, int]
    adjustments: dict[str, int]
    extension: ExtensionInfo
    params: DeriveParams


# --------------------------------------------------------------------------- summary
SUMMARY_COLUMNS = ("duration_s", "cpu_cores", "gpus", "mem_gb", "gpu_mem_gb", "bandwidth_gb")


def summarize(tasks: pl.DataFrame, year: int) -> dict[str, float]:
    """Tasks per 15 minutes over every slot of the year (zeros included) and mean requests."""
    ylo, yhi = year_window_s(year)
    n_slots = (yhi - ylo) // SLOT_S
    if tasks.height:
        slot = (tasks["arrival_ts_utc"].dt.epoch("s").to_numpy() - ylo) // SLOT_S
        per = np.bincount(slot, minlength=n_slots)
    else:
        per = np.zeros(n_slots, dtype=np.int64)
    out: dict[str, float] = {
        "n_tasks": float(tasks.height),
        "tasks_per_15min_mean": float(per.mean()),
        "tasks_per_15min_p95": float(np.percentile(per, 95)),
        "tasks_per_15min_max": float(per.max()),
        "tasks_per_15min_var_to_mean": float(per.var() / per.mean()) if per.mean() > 0 else float("nan"),
    }
    for col in SUMMARY_COLUMNS:
        out[f"mean_{col}"] = float(tasks[col].mean()) if tasks.height else float("nan")
    out["median_duration_s"] = float(tasks["duration_s"].median()) if tasks.height else float("nan")
    return out


def weekday_hour_profile(tasks: pl.DataFrame, year: int) -> np.ndarray:
    """Mean tasks per 15 minutes by (weekday Mon..Sun, UTC hour) over the whole year: (7, 24)."""
    ylo, yhi = year_window_s(year)
    n_slots = (yhi - ylo) // SLOT_S
    slot = (tasks["arrival_ts_utc"].dt.epoch("s").to_numpy() - ylo) // SLOT_S
    per = np.bincount(slot, minlength=n_slots).astype(np.float64)
    start = (ylo + np.arange(n_slots) * SLOT_S)
    wd = ((start - MONDAY_EPOCH_S) // 86_400) % 7
    hr = (start % 86_400) // 3600
    key = wd * 24 + hr
    tot = np.bincount(key, weights=per, minlength=168)
    cnt = np.bincount(key, minlength=168)
    return (tot / np.maximum(cnt, 1)).reshape(7, 24)


def counts_json(d: Mapping[str, int]) -> str:
    return json.dumps(dict(sorted(d.items())), separators=(",", ":"))
