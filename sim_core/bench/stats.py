"""Statistics of a sweep over seeds (documented in docs/benchmarks.md).

* ``mean`` is ``statistics.fmean`` (an exactly rounded sum divided by n: order-independent);
  ``std`` the sample standard deviation (n - 1); ``ci95`` the half-width
  ``t(0.975, n - 1) · std / sqrt(n)``. One seed: ``std`` and ``ci95`` are NaN (undefined, not 0);
  identical values over seeds: ``ci95`` is 0.
* ``savings_vs_local_only_pct`` (:func:`summarize`) is **paired per seed, then averaged**: for
  each seed s, ``100 · (local_only_s − policy_s) / local_only_s`` (same seed ⇒ same task origins,
  so the pair differs only by the policy), then mean and 95 % CI over the seeds as above.
  Positive = the policy uses less than ``local_only``. Only for the "lower is better" resource
  metrics declared with ``savings=True`` (``gridshift.metrics``); null elsewhere, when local_only is not in the
  sweep, or the baseline is 0.
* :func:`pareto_front` of the policy means (cost vs carbon, both minimized).

Pure Python (SciPy is not a dependency): the t quantile comes from the regularized incomplete beta
function (continued fraction, modified Lentz) by bisection."""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

import polars as pl

from gridshift import metrics as M

from .metrics import BASELINE


def _betacf(a: float, b: float, x: float) -> float:
    """Continued fraction of the regularized incomplete beta (modified Lentz)."""
    tiny = 1e-300
    qab, qap, qam = a + b, a + 1.0, a - 1.0
    c, d = 1.0, 1.0 - qab * x / qap
    d = 1.0 / (d if abs(d) > tiny else tiny)
    h = d
    for m in range(1, 1000):
        m2 = 2 * m
        aa = m * (b - m) * x / ((qam + m2) * (a + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        h *= d * c
        aa = -(a + m) * (qab + m) * x / ((a + m2) * (qap + m2))
        d = 1.0 + aa * d
        d = 1.0 / (d if abs(d) > tiny else tiny)
        c = 1.0 + aa / c
        c = c if abs(c) > tiny else tiny
        de = d * c
        h *= de
        if abs(de - 1.0) < 1e-16:
            break
    return h


def _betai(a: float, b: float, x: float) -> float:
    if x <= 0.0:
        return 0.0
    if x >= 1.0:
        return 1.0
    lbt = math.lgamma(a + b) - math.lgamma(a) - math.lgamma(b) + a * math.log(x) + b * math.log1p(-x)
    if x < (a + 1.0) / (a + b + 2.0):
        return math.exp(lbt) * _betacf(a, b, x) / a
    return 1.0 - math.exp(lbt) * _betacf(b, a, 1.0 - x) / b


def t_sf(t: float, df: float) -> float:
    """P(T > t) for Student's t with ``df`` degrees of freedom (t ≥ 0)."""
    return 0.5 * _betai(df / 2.0, 0.5, df / (df + t * t))


def t_ppf(p: float, df: float) -> float:
    """Quantile of Student's t (``p`` in (0.5, 1)), by bisection on the survival function
    (no SciPy in the environment). t_ppf(0.975, 1) = 12.7062..., (0.975, 4) = 2.7764..."""
    if not 0.5 < p < 1.0 or df <= 0:
        raise ValueError("t_ppf needs 0.5 < p < 1 and df > 0")
    if df == 1:
        return math.tan(math.pi * (p - 0.5))
    lo, hi, q = 0.0, 1.0, 1.0 - p
    while t_sf(hi, df) > q:
        hi *= 2.0
    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if t_sf(mid, df) > q:
            lo = mid
        else:
            hi = mid
        if hi - lo <= 1e-15 * hi:
            break
    return 0.5 * (lo + hi)


@dataclass(frozen=True)
class Stat:
    n: int
    mean: float
    std: float
    ci95: float


def mean_ci(values: Sequence[float], level: float = 0.95) -> Stat:
    """Mean, sample std and Student-t CI half-width. n = 0: all NaN; n = 1: std, CI NaN.
    A NaN value makes mean/std/CI NaN (it is not dropped silently)."""
    v = [float(x) for x in values]
    n = len(v)
    nan = float("nan")
    if n == 0:
        return Stat(0, nan, nan, nan)
    if any(math.isnan(x) for x in v):
        return Stat(n, nan, nan, nan)
    mean = statistics.fmean(v)
    if n == 1:
        return Stat(1, mean, nan, nan)
    std = statistics.stdev(v)
    ci = 0.0 if std == 0.0 else t_ppf(0.5 + level / 2.0, n - 1) * std / math.sqrt(n)
    return Stat(n, mean, std, ci)


SUMMARY_SCHEMA = {
    "policy": pl.String, "metric": pl.String, "unit": pl.String, "n_seeds": pl.Int64,
    "mean": pl.Float64, "std": pl.Float64, "ci95": pl.Float64, "ci95_low": pl.Float64, "ci95_high": pl.Float64,
    "savings_vs_local_only_pct": pl.Float64, "savings_ci95_pct": pl.Float64,
}


def summarize(runs: pl.DataFrame, baseline: str = BASELINE) -> pl.DataFrame:
    """One row per (policy, metric) in the runs' policy order and METRICS order (see module doc)."""
    policies = list(dict.fromkeys(runs["policy"].to_list()))
    declared = M.declared()
    metrics = [m.name for m in declared if m.name in runs.columns]
    savings = {m.name for m in declared if m.savings}
    units = M.units()
    base = runs.filter(pl.col("policy") == baseline)
    base_by_seed = {m: dict(zip(base["seed"].to_list(), base[m].to_list(), strict=True)) for m in metrics}
    rows = []
    for pol in policies:
        sub = runs.filter(pl.col("policy") == pol).sort("seed")
        seeds = sub["seed"].to_list()
        for m in metrics:
            st = mean_ci(sub[m].to_list())
            sav, sav_ci = None, None
            if m in savings and base.height:
                pairs = [(base_by_seed[m][s], x) for s, x in zip(seeds, sub[m].to_list(), strict=True)
                         if s in base_by_seed[m]]
                if pairs and all(b != 0 and math.isfinite(b) for b, _ in pairs):
                    ss = mean_ci([100.0 * (b - x) / b for b, x in pairs])
                    sav, sav_ci = ss.mean, ss.ci95
            rows.append({
                "policy": pol, "metric": m, "unit": units[m], "n_seeds": st.n, "mean": st.mean, "std": st.std,
                "ci95": st.ci95, "ci95_low": st.mean - st.ci95, "ci95_high": st.mean + st.ci95,
                "savings_vs_local_only_pct": sav, "savings_ci95_pct": sav_ci,
            })
    return pl.DataFrame(rows, schema=SUMMARY_SCHEMA)


def pareto_front(x: Sequence[float], y: Sequence[float]) -> list[bool]:
    """Mask of the non-dominated points when both x and y are minimized (ties are kept)."""
    pts = list(zip(x, y, strict=True))
    out = []
    for i, (xi, yi) in enumerate(pts):
        dominated = any(xj <= xi and yj <= yi and (xj < xi or yj < yi) for j, (xj, yj) in enumerate(pts) if j != i)
        out.append(not dominated and math.isfinite(xi) and math.isfinite(yi))
    return out
