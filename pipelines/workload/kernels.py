"""Compiled passes (Numba, ``cache=True``) of the synthetic derivation, each bit for bit the numpy or
polars form it replaces (tests/integration/pipelines/workload/test_workload_kernels.py):

* :func:`cdf_ppf` — a copula marginal of a generated day, ``Histogram.ppf(derive.norm_cdf(x))``;
* :func:`status_counts` / :func:`day_rows` — a generated day's statuses, durations, instances and
  per-instance requests after its random draws (the draws stay numpy's, in the same order);
* :func:`filter_normalize` — what ``synthetic.trace_frame`` → ``derive.filter_tasks`` →
  ``derive.normalize_resources`` do on a polars frame (the path every real trace takes), with the same
  rules in the same order.

"Bit for bit": the same IEEE operations (+, -, ×, ÷, comparisons, rint) in the same order as numpy and
polars evaluate them (polars multiplies by the reciprocal of a scalar divisor, so the kernel does too);
the one library function, the exponential, is left to numpy. One pass over the rows instead of a dozen
numpy temporaries or polars expressions per day or chunk, which is what the derivation's time was.
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from gridshift import portable_math
from pipelines.workload.derive import DeriveParams, Histogram, status_labels

#: drop reasons in rule order (``derive._reason_rules``); code 0 = kept, code k = REASONS[k - 1];
#: "status" is labelled by the row's status (``derive.status_labels``)
REASONS = ("status", "missing_time", "end_not_after_start", "duration_below_min", "duration_above_max",
           "bad_inst_num", "missing_cpu", "missing_mem", "missing_gpu", "negative_resource", "exceeds_machine",
           "no_compute_request")

#: ``trace_frame``'s ``plan_cpu / 100.0`` as polars evaluates it: × (1 / 100.0), which differs from
#: ÷ 100.0 in the last bit for about 13 % of values
_PER_100 = 1.0 / 100.0


@njit(cache=True, nogil=True)
def _filter_normalize(status, inst, start, end, plan_cpu, plan_mem, plan_gpu, gtype, status_ok, per_gpu,
                      min_dur, max_dur, has_max, nan_gpu_as_zero, task_total, max_cpu, max_gpu, max_mem,
                      first_line):
    n = status.shape[0]
    reason_n = np.zeros(13, dtype=np.int64)  # 1 + len(REASONS)
    status_n = np.zeros(status_ok.shape[0], dtype=np.int64)
    line = np.empty(n, dtype=np.int64)
    arr = np.empty(n, dtype=np.float64)
    dur_o = np.empty(n, dtype=np.float64)
    cpu_o = np.empty(n, dtype=np.float64)
    gpu_o = np.empty(n, dtype=np.float64)
    mem_o = np.empty(n, dtype=np.float64)
    gmem_o = np.empty(n, dtype=np.float64)
    m = 0
    nan_gpu = 0
    for i in range(n):
        s, st, en, k = status[i], start[i], end[i], inst[i]
        cpu = plan_cpu[i] * _PER_100  # polars divides by a scalar as a product with its reciprocal
        gpu = plan_gpu[i] * _PER_100
        mem = plan_mem[i]
        g = 0.0 if np.isnan(gpu) else gpu
        dur = en - st  # a NaN end is a null end: every rule on it fails, and "missing_time" holds first
        if not status_ok[s]:
            r = 1
        elif st <= 0 or np.isnan(en) or en <= 0:
            r = 2
        elif dur <= 0:
            r = 3
        elif dur < min_dur:
            r = 4
        elif has_max and dur > max_dur:
            r = 5
        elif k < 1:
            r = 6
        elif np.isnan(cpu):
            r = 7
        elif np.isnan(mem):
            r = 8
        elif not nan_gpu_as_zero and np.isnan(gpu):
            r = 9
        elif cpu < 0 or mem < 0 or g < 0:
            r = 10
        elif cpu > max_cpu or g > max_gpu or mem > max_mem:
            r = 11
        elif cpu == 0 and g == 0:
            r = 12
        else:
            r = 0
        reason_n[r] += 1
        if r == 1:
            status_n[s] += 1
        if r:
            continue
        if np.isnan(gpu):
            nan_gpu += 1
        mult = float(k) if task_total else 1.0
        gpus = g * mult
        line[m] = first_line + i
        arr[m] = st
        dur_o[m] = dur
        cpu_o[m] = cpu * mult
        gpu_o[m] = gpus
        mem_o[m] = mem * mult
        gmem_o[m] = gpus * per_gpu[gtype[i] + 1]
        m += 1
    return (line[:m], arr[:m], dur_o[:m], cpu_o[:m], gpu_o[:m], mem_o[:m], gmem_o[:m], reason_n, status_n,
            nan_gpu)


def filter_normalize(a: dict[str, np.ndarray], p: DeriveParams, statuses: tuple[str, ...],
                     gpu_types: tuple[str, ...], first_line: int = 1
                     ) -> tuple[dict[str, np.ndarray], dict[str, int], dict[str, int]]:
    """Generated rows (``generate_day``'s arrays; ``status`` / ``gpu_type`` as codes into ``statuses`` /
    ``gpu_types``, -1 = no GPU type; the first row is line ``first_line``) → (the kept tasks'
    ``source_line``, ``arrival_s``, ``duration_s``, ``cpu_cores``, ``gpus``, ``mem_gb``, ``gpu_mem_gb``;
    dropped count per reason; adjustments), as ``filter_tasks`` + ``normalize_resources`` give them."""
    status_ok = np.array([s in p.statuses for s in statuses], dtype=np.bool_)
    by_type = dict(p.gpu_mem_gb_by_type)
    per_gpu = np.array([p.default_gpu_mem_gb] + [by_type.get(t, p.default_gpu_mem_gb) for t in gpu_types])
    has_max = p.max_duration_s is not None
    out = _filter_normalize(
        a["status"], a["inst_num"].astype(np.int64, copy=False), a["start_time"], a["end_time"], a["plan_cpu"],
        a["plan_mem"], a["plan_gpu"], a["gpu_type"].astype(np.int64, copy=False), status_ok, per_gpu,
        float(p.min_duration_s), float(p.max_duration_s) if has_max else 0.0, has_max, p.nan_gpu_as_zero,
        p.resource_basis == "task_total", float(p.max_instance_cpu_cores), float(p.max_instance_gpus),
        float(p.max_instance_mem_gb), int(first_line))
    line, arr, dur, cpu, gpu, mem, gmem, reason_n, status_n, nan_gpu = out
    dropped: dict[str, int] = {}
    labels = status_labels(statuses)
    for code, name in enumerate(REASONS, start=1):
        if code == 1:
            for s, c in zip(statuses, status_n, strict=True):
                if c:
                    label = labels[s]
                    dropped[label] = dropped.get(label, 0) + int(c)
        elif reason_n[code]:
            dropped[name] = int(reason_n[code])
    adjustments = {"gpu_missing_set_zero": int(nan_gpu)} if p.nan_gpu_as_zero else {}
    cols = {"source_line": line, "arrival_s": arr, "duration_s": dur, "cpu_cores": cpu, "gpus": gpu, "mem_gb": mem,
            "gpu_mem_gb": gmem}
    return cols, dict(sorted(dropped.items())), adjustments


# --------------------------------------------------------------------------- copula marginals
_SQRT2 = math.sqrt(2.0)


_BUCKETS = 1 << 12  # lookup buckets over [0, 1] (a power of two: u × _BUCKETS and b / _BUCKETS are exact)


def ppf_table(h: Histogram) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(CDF at the bin edges, the edges): the points ``Histogram.ppf`` interpolates, computed as it
    does; and per bucket b of [0, 1], the last point with CDF <= b / ``_BUCKETS`` (where a search starts)."""
    cdf = np.concatenate([[0.0], np.cumsum(h.counts, dtype=np.float64)])
    cdf /= cdf[-1]
    first = np.searchsorted(cdf, np.arange(_BUCKETS + 1) / _BUCKETS, side="right") - 1
    return cdf, np.asarray(h.edges, dtype=np.float64), np.maximum(first, 0).astype(np.int64)


def cdf_ppf(x: np.ndarray, table: tuple[np.ndarray, np.ndarray, np.ndarray]) -> np.ndarray:
    """``Histogram.ppf(derive.norm_cdf(x))`` in one compiled pass, bit for bit: the exponential is
    ``portable_math.exp`` (the one elementary function; its bits are every machine's), the rest the same IEEE
    operations in the same order, and the interpolation is ``np.interp``'s formula and edge cases
    at the same interval (the last CDF point <= u, found from its bucket's start)."""
    z = np.abs(x) / _SQRT2
    return _cdf_ppf(x, portable_math.exp(-z * z), table[0], table[1], table[2])


@njit(cache=True, nogil=True)
def _cdf_ppf(x, e, xp, fp, first):
    n, m = x.shape[0], xp.shape[0]
    nb = first.shape[0] - 1
    out = np.empty(n, dtype=np.float64)
    for i in range(n):
        xi = x[i]
        z = abs(xi) / _SQRT2
        t = 1.0 / (1.0 + 0.3275911 * z)
        poly = t * (0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429))))
        erf = 1.0 - poly * e[i]
        u = 0.5 * (1.0 + np.sign(xi) * erf)
        # np.interp(u, xp, fp) with xp[0] = 0 and xp[-1] = 1: j = the last point <= u
        if np.isnan(u):
            out[i] = u
            continue
        if u < xp[0]:
            out[i] = fp[0]
            continue
        if u > xp[m - 1]:
            out[i] = fp[m - 1]
            continue
        j = first[min(int(u * nb), nb)]
        while j + 1 < m and xp[j + 1] <= u:
            j += 1
        if j == m - 1 or xp[j] == u:
            out[i] = fp[j]
            continue
        slope = (fp[j + 1] - fp[j]) / (xp[j + 1] - xp[j])
        r = slope * (u - xp[j]) + fp[j]
        if np.isnan(r):
            r = slope * (u - xp[j + 1]) + fp[j + 1]
            if np.isnan(r) and fp[j] == fp[j + 1]:
                r = fp[j]
        out[i] = r
    return out


# --------------------------------------------------------------------------- a generated day's rows
@njit(cache=True, nogil=True)
def status_counts(r, f, f_uf, f_uf_sh):
    """(unfinished, short) rows of a day: ``f <= r < f_uf`` and ``f_uf <= r < f_uf_sh``."""
    n_unf, n_short = 0, 0
    for x in r:
        if x >= f and x < f_uf:
            n_unf += 1
        elif x >= f_uf and x < f_uf_sh:
            n_short += 1
    return n_unf, n_short


@njit(cache=True, nogil=True)
def day_rows(start, dur_min, cpu, gpu, mem, r, waiting_u, short_s, gtype, f, f_uf, f_uf_sh, max_gpus):
    """The per-row arithmetic of ``synthetic.generate_day`` after its draws, as its numpy form did it
    (``np.round`` = rint; ``np.round(x, 3)`` = rint(x × 1000) / 1000): instances, status (0 Terminated,
    1 Failed, 2 Waiting, 3 Running), end (NaN when unfinished), per-instance requests, GPU type (-1: none).
    ``waiting_u``: one uniform per unfinished row, in row order (< 0.5: Waiting); ``short_s``: one
    duration draw per short row, in row order."""
    n = start.shape[0]
    inst = np.empty(n, dtype=np.int64)
    status = np.zeros(n, dtype=np.int8)
    end = np.empty(n, dtype=np.float64)
    plan_cpu = np.empty(n, dtype=np.float64)
    plan_mem = np.empty(n, dtype=np.float64)
    plan_gpu = np.empty(n, dtype=np.float64)
    gpu_type = np.empty(n, dtype=np.int64)
    k_unf, k_short = 0, 0
    for i in range(n):
        d = np.rint(dur_min[i] * 60.0)
        k = np.int64(max(1.0, np.ceil(gpu[i] / max_gpus)))
        x = r[i]
        unfinished = False
        if x < f:
            status[i] = 1
        elif x < f_uf:
            unfinished = True
            status[i] = 2 if waiting_u[k_unf] < 0.5 else 3
            k_unf += 1
        elif x < f_uf_sh:
            d = min(np.rint(short_s[k_short]), 899.0)
            k_short += 1
        end[i] = np.nan if unfinished else start[i] + d
        kf = float(k)
        inst[i] = k
        pg = np.rint(gpu[i] / kf * 100.0)
        plan_gpu[i] = pg
        plan_cpu[i] = np.rint(cpu[i] / kf * 100.0)
        plan_mem[i] = np.rint(mem[i] / kf * 1000.0) / 1000.0
        gpu_type[i] = gtype[i] if pg > 0 else -1
    return inst, status, end, plan_cpu, plan_mem, plan_gpu, gpu_type


def warm_up() -> None:
    """Compile or load (Numba's on-disk cache) the kernels now, so a timed run does not pay for it."""
    e = np.empty(0)
    _filter_normalize(np.empty(0, np.int8), np.empty(0, np.int64), e, e, e, e, e, np.empty(0, np.int64),
                      np.ones(4, np.bool_), np.ones(6), 0.0, 0.0, False, True, True, 1.0, 1.0, 1.0, 1)
    _cdf_ppf(e, e, np.array([0.0, 1.0]), np.array([0.0, 1.0]), np.zeros(2, np.int64))
    status_counts(e, 0.1, 0.2, 0.3)
    day_rows(e, e, e, e, e, e, e, e, np.empty(0, np.int64), 0.1, 0.2, 0.3, 8.0)
