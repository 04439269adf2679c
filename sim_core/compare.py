"""Benchmark sweeps: every policy × seed on one scenario, a tidy metrics frame and a summary.

    from sim_core.compare import compare
    cmp = compare("bundles/<id>", ["local_only", "lowest_carbon"], seeds=[0, 1, 2], days=7)
    cmp.runs       # one row per (policy, seed): the run key and every metric in METRICS (Float64)
    cmp.summary    # one row per (policy, metric): mean, std, Student-t 95 % CI, savings vs local_only

The bundle is loaded once; every run uses the same window (``start``/``days``/``steps``) and the
same run options. Metric values are the run's ``RunResult.totals`` unchanged (and three utilisation
means computed from ``RunResult.steps``, see ``run_metrics``).

Statistics (documented in docs/benchmarks.md):

* ``mean`` is ``statistics.fmean`` (an exactly rounded sum divided by n: order-independent);
  ``std`` the sample standard deviation (n - 1); ``ci95`` the half-width
  ``t(0.975, n - 1) · std / sqrt(n)``. One seed: ``std`` and ``ci95`` are NaN (undefined, not 0);
  identical values over seeds: ``ci95`` is 0.
* ``savings_vs_local_only_pct`` is **paired per seed, then averaged**: for each seed s,
  ``100 · (local_only_s − policy_s) / local_only_s`` (same seed ⇒ same task origins, so the pair
  differs only by the policy), then mean and 95 % CI over the seeds as above. Positive = the policy
  uses less than ``local_only``. Only for the "lower is better" resource metrics in
  ``SAVINGS_METRICS``; null elsewhere, when local_only is not in the sweep, or the baseline is 0.

Reuse of stored runs: pass ``store=`` any object with ``lookup(keys) -> {key: metrics}``,
``series(key) -> frame | None`` and ``save(record)`` (``warehouse.benchmark_store.WarehouseRunStore``
is one). sim_core never imports the warehouse; the CLI and the Dagster assets connect the two.
A run is identified by :class:`RunKey`: bundle id (content hash), policy, seed, gridshift version
and the sha256 of the canonical JSON of the run options including the resolved window.
"""

from __future__ import annotations

import datetime as dt
import json
import math
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, NamedTuple, Protocol

import numpy as np
import polars as pl

from gridshift.atomic import atomic_write_bytes
from gridshift.hashing import canonical_json, sha256_bytes
from gridshift.parquet import parquet_bytes

from . import result as _result
from .engine import POLICY_CODES
from .scenario import Scenario
from .simulator import as_scenario, make_options, resolve_window
from .stats import mean_ci

BASELINE = "local_only"
DEFAULT_POLICIES = ("local_only", "round_robin", "lowest_carbon", "lowest_price", "defer_to_greener")
DEFAULT_SEEDS = (0, 1, 2)
KEY_COLUMNS = ("bundle_id", "policy", "seed", "gridshift_version", "options_sha256")


@dataclass(frozen=True)
class Metric:
    name: str  # column in runs.parquet, metric name in the warehouse; = the RunResult.totals key
    unit: str
    description: str
    source: str = "totals"  # "totals" or "steps"


#: Every metric of a run, in output order. Names carry their unit; counts and fractions are
#: dimensionless (unit "count" / "fraction").
METRICS: tuple[Metric, ...] = (
    Metric("total_kwh", "kWh", "facility energy (IT + cooling + pumps), all DCs"),
    Metric("it_kwh", "kWh", "IT energy (CPU, GPU, memory, server fans), all DCs"),
    Metric("pue", "ratio", "total_kwh / it_kwh"),
    Metric("cost_usd", "USD", "electricity cost: Σ total_kwh × price"),
    Metric("carbon_kg", "kg CO2eq", "operational emissions: Σ total_kwh × carbon intensity"),
    Metric("water_l", "L", "cooling-tower water (evaporation, drift, blowdown)"),
    Metric("wue_l_per_kwh", "L/kWh", "water_l / it_kwh"),
    Metric("transfer_cost_usd", "USD", "egress cost of remote assignments"),
    Metric("transfer_kwh", "kWh", "network energy of remote assignments"),
    Metric("transfer_carbon_kg", "kg CO2eq", "emissions of that network energy"),
    Metric("cost_incl_transfer_usd", "USD", "cost_usd + transfer_cost_usd"),
    Metric("carbon_incl_transfer_kg", "kg CO2eq", "carbon_kg + transfer_carbon_kg"),
    Metric("sla_violation_rate", "fraction", "SLA violations / tasks started"),
    Metric("sla_violations", "count", "tasks started after their deadline"),
    Metric("mean_wait_s", "s", "mean arrival → start time of started tasks"),
    Metric("tasks", "count", "tasks arriving in the window"),
    Metric("tasks_started", "count", "tasks started in the window"),
    Metric("tasks_completed", "count", "tasks finished by the end of the window"),
    Metric("tasks_remote", "count", "tasks assigned to a DC other than their origin"),
    Metric("tasks_unschedulable", "count", "tasks that fit no DC"),
    Metric("tasks_forced", "count", "tasks assigned by force at the deferral limit"),
    Metric("unmet_cooling_kwh", "kWh", "cooling demand the plant could not meet"),
    Metric("mean_cpu_util_frac", "fraction", "busy cores / core capacity, capacity-weighted over DCs and steps",
           "steps"),
    Metric("mean_gpu_util_frac", "fraction", "busy GPUs / GPU capacity, capacity-weighted over DCs and steps",
           "steps"),
    Metric("mean_mem_util_frac", "fraction", "busy memory / memory capacity, capacity-weighted over DCs and steps",
           "steps"),
)
METRIC_NAMES: tuple[str, ...] = tuple(m.name for m in METRICS)
UNITS: dict[str, str] = {m.name: m.unit for m in METRICS}

#: Resource metrics where less is better: these get a savings-vs-local_only percentage.
SAVINGS_METRICS = ("total_kwh", "it_kwh", "cost_usd", "carbon_kg", "water_l", "transfer_cost_usd",
                   "cost_incl_transfer_usd", "carbon_incl_transfer_kg")

#: Per-step, per-DC columns kept for the time-series figure (and stored with a run).
SERIES_COLUMNS = ("location", "dc", "step", "ts_utc", "carbon_g_per_kwh", "price_usd_per_mwh", "total_kwh",
                  "assigned", "started", "busy_cores", "cpu_util", "gpu_util", "mem_util")


# ---------------------------------------------------------------------------------------------- keys
class RunKey(NamedTuple):
    bundle_id: str
    policy: str
    seed: int
    gridshift_version: str
    options_sha256: str


def gridshift_version() -> str:
    """The version a RunResult records (same function, so keys and results always agree)."""
    return _result.gridshift_version()


def _plain(v: Any) -> Any:
    if isinstance(v, np.generic):
        v = v.item()
    if isinstance(v, float) and not math.isfinite(v):
        raise ValueError(f"run option value {v!r} is not finite")
    if v is None or isinstance(v, bool | int | float | str):
        return v
    raise ValueError(f"run option value {v!r} ({type(v).__name__}) cannot be keyed; compare takes scalar options")


def run_options(scenario: Scenario, *, start=None, days=None, steps=None, **options) -> dict[str, Any]:
    """The canonical options of a run: every simulator option (defaults filled in) and the resolved
    window as ``start_step``/``steps``, exactly the ``RunResult.options`` a run records.

    ``days=1`` and ``steps=96`` therefore give the same options (and hash): they are the same run.
    Integers given for float options are stored as floats (``sla_multiplier=2`` ≡ ``2.0``).
    """
    for v in options.values():
        _plain(v)  # refuse per-task arrays etc. before public() turns them into a label
    opts = make_options(**options)
    s0, n = resolve_window(scenario, start, days, steps)
    defaults = {k: f.default for k, f in type(opts).__dataclass_fields__.items()}
    out: dict[str, Any] = {}
    for k, v in opts.public().items():
        v = _plain(v)
        if isinstance(defaults.get(k), float) and isinstance(v, int) and not isinstance(v, bool):
            v = float(v)
        out[k] = v
    out["start_step"] = int(s0)
    out["steps"] = int(n)
    return out


def options_sha256(options: dict[str, Any]) -> str:
    return sha256_bytes(canonical_json(options))


# ---------------------------------------------------------------------------------------------- metrics
def run_metrics(result: _result.RunResult, scenario: Scenario) -> dict[str, float]:
    """Every metric of ``METRICS`` for one run, as floats.

    Totals are copied from ``result.totals`` (``float()`` of the same value, exact). The
    utilisation means are capacity-weighted over DCs and steps:
    ``mean_cpu_util_frac = Σ_dc,step busy_cores / (steps × Σ_dc cap_cores)`` — the share of the
    cluster's core-steps in use (same for GPUs and memory); NaN if the cluster has no such capacity.
    """
    t = result.totals
    out: dict[str, float] = {}
    n_steps = int(t["steps"])
    caps = {"cpu": scenario.cap_cores, "gpu": scenario.cap_gpus, "mem": scenario.cap_mem_gb}
    busy = {"cpu": "busy_cores", "gpu": "busy_gpus", "mem": "busy_mem_gb"}
    for m in METRICS:
        if m.source == "totals":
            out[m.name] = float(t[m.name])
        else:
            r = m.name.split("_")[1]
            cap = math.fsum(float(c) for c in np.asarray(caps[r], dtype=np.float64)) * n_steps
            used = math.fsum(result.steps[busy[r]].to_list())
            out[m.name] = used / cap if cap > 0 else float("nan")
    return out


def run_series(result: _result.RunResult) -> pl.DataFrame:
    """The per-step, per-DC columns the time-series figure needs (``SERIES_COLUMNS``)."""
    s = result.steps
    return s.select(
        pl.col("location").cast(pl.String),
        pl.col("dc").cast(pl.Int64),
        pl.col("step").cast(pl.Int64),
        pl.col("ts_utc").cast(pl.Datetime("us", "UTC")),
        "carbon_g_per_kwh", "price_usd_per_mwh", "total_kwh",
        pl.col("assigned").cast(pl.Int64), pl.col("started").cast(pl.Int64),
        "busy_cores", "cpu_util", "gpu_util", "mem_util",
    )


SUMMARY_SCHEMA = {
    "policy": pl.String, "metric": pl.String, "unit": pl.String, "n_seeds": pl.Int64,
    "mean": pl.Float64, "std": pl.Float64, "ci95": pl.Float64, "ci95_low": pl.Float64, "ci95_high": pl.Float64,
    "savings_vs_local_only_pct": pl.Float64, "savings_ci95_pct": pl.Float64,
}


def summarize(runs: pl.DataFrame, baseline: str = BASELINE) -> pl.DataFrame:
    """One row per (policy, metric) in the runs' policy order and METRICS order (see module doc)."""
    policies = list(dict.fromkeys(runs["policy"].to_list()))
    metrics = [c for c in METRIC_NAMES if c in runs.columns]
    base = runs.filter(pl.col("policy") == baseline)
    base_by_seed = {m: dict(zip(base["seed"].to_list(), base[m].to_list(), strict=True)) for m in metrics}
    rows = []
    for pol in policies:
        sub = runs.filter(pl.col("policy") == pol).sort("seed")
        seeds = sub["seed"].to_list()
        for m in metrics:
            st = mean_ci(sub[m].to_list())
            sav, sav_ci = None, None
            if m in SAVINGS_METRICS and base.height:
                pairs = [(base_by_seed[m][s], x) for s, x in zip(seeds, sub[m].to_list(), strict=True)
                         if s in base_by_seed[m]]
                if pairs and all(b != 0 and math.isfinite(b) for b, _ in pairs):
                    ss = mean_ci([100.0 * (b - x) / b for b, x in pairs])
                    sav, sav_ci = ss.mean, ss.ci95
            rows.append({
                "policy": pol, "metric": m, "unit": UNITS[m], "n_seeds": st.n, "mean": st.mean, "std": st.std,
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


# ---------------------------------------------------------------------------------------------- the sweep
@dataclass
class RunRecord:
    """One finished run as stored: key, canonical options, metrics, series and timing."""

    key: RunKey
    options_json: str
    metrics: dict[str, float]
    series: pl.DataFrame
    started_utc: dt.datetime
    finished_utc: dt.datetime
    wall_time_s: float
    n_steps: int
    n_dc: int


class RunStore(Protocol):
    def lookup(self, keys: Sequence[tuple]) -> dict[tuple, dict[str, float]]: ...

    def series(self, key: tuple) -> pl.DataFrame | None: ...

    def save(self, record: RunRecord) -> None: ...


@dataclass
class Comparison:
    bundle_id: str
    policies: list[str]
    seeds: list[int]
    options: dict[str, Any]
    options_sha256: str
    gridshift_version: str
    runs: pl.DataFrame
    summary: pl.DataFrame
    series: dict[str, pl.DataFrame]  # policy -> series of its run with the first seed
    computed: list[RunKey] = field(default_factory=list)
    reused: list[RunKey] = field(default_factory=list)
    scenario: Scenario | None = None

    def params(self) -> dict[str, Any]:
        """The sweep's parameters (written as compare.json): everything that determines the outputs."""
        return {"bundle_id": self.bundle_id, "policies": self.policies, "seeds": self.seeds,
                "gridshift_version": self.gridshift_version, "options": self.options,
                "options_sha256": self.options_sha256, "baseline": BASELINE,
                "metrics": [{"name": m.name, "unit": m.unit, "description": m.description} for m in METRICS]}


def check_policies(policies: Iterable[str]) -> list[str]:
    out = [str(p).strip() for p in policies]
    if not out:
        raise ValueError("no policy given")
    unknown = [p for p in out if p not in POLICY_CODES]
    if unknown:
        raise ValueError(f"unknown policy {', '.join(map(repr, unknown))}; "
                         f"built-ins: {', '.join(sorted(POLICY_CODES))}")
    dup = sorted({p for p in out if out.count(p) > 1})
    if dup:
        raise ValueError(f"policy given twice: {', '.join(dup)}")
    return out


def check_seeds(seeds: Iterable[int]) -> list[int]:
    out = []
    for s in seeds:
        if isinstance(s, bool) or not isinstance(s, int | np.integer) or s < 0:
            raise ValueError(f"seed {s!r} is not a non-negative integer")
        out.append(int(s))
    if not out:
        raise ValueError("no seed given")
    dup = sorted({s for s in out if out.count(s) > 1})
    if dup:
        raise ValueError(f"seed given twice: {', '.join(map(str, dup))}")
    return out


def runs_frame(rows: Sequence[tuple[RunKey, dict[str, float]]]) -> pl.DataFrame:
    """The tidy runs frame: key columns, then every metric as Float64, in the given row order."""
    schema: dict[str, pl.DataType] = {"bundle_id": pl.String, "policy": pl.String, "seed": pl.Int64,
                                      "gridshift_version": pl.String, "options_sha256": pl.String}
    schema.update({m: pl.Float64 for m in METRIC_NAMES})
    data = [{**k._asdict(), **{m: float(v[m]) for m in METRIC_NAMES}} for k, v in rows]
    return pl.DataFrame(data, schema=schema)


def execute(scenario: Scenario, key: RunKey, options: dict[str, Any], run_fn: Callable | None = None) -> tuple[
        RunRecord, _result.RunResult]:
    """Run one (policy, seed) with the canonical options and return its record (and the result)."""
    import sim_core

    run = run_fn or sim_core.run
    sim_opts = {k: v for k, v in options.items() if k not in ("start_step", "steps")}
    started = dt.datetime.now(dt.UTC)
    t0 = time.perf_counter()
    res = run(scenario, key.policy, seed=key.seed, start=options["start_step"], steps=options["steps"], **sim_opts)
    wall = time.perf_counter() - t0
    finished = dt.datetime.now(dt.UTC)
    if res.gridshift_version != key.gridshift_version or res.bundle_id != key.bundle_id:
        raise RuntimeError(f"run recorded {res.bundle_id}/{res.gridshift_version}, expected "
                           f"{key.bundle_id}/{key.gridshift_version}")
    rec = RunRecord(key=key, options_json=canonical_json(options).decode(), metrics=run_metrics(res, scenario),
                    series=run_series(res), started_utc=started, finished_utc=finished, wall_time_s=wall,
                    n_steps=int(res.totals["steps"]), n_dc=int(res.totals["n_dc"]))
    return rec, res


def compare(
    bundle_or_scenario,
    policies: Sequence[str] = DEFAULT_POLICIES,
    seeds: Sequence[int] = DEFAULT_SEEDS,
    *,
    start=None,
    days=None,
    steps=None,
    store: RunStore | None = None,
    recompute: bool = False,
    missing: str = "run",
    on_run: Callable[[RunKey, bool], None] | None = None,
    **options,
) -> Comparison:
    """Run every policy × seed on one scenario (loaded once) and summarize.

    ``store``: runs already stored under the same :class:`RunKey` are reused (not simulated), new
    ones are saved as they finish. ``recompute=True`` simulates every run anyway (and re-saves it).
    ``missing="skip"`` simulates nothing: it summarizes only the stored runs among policies × seeds
    (what the Dagster summary asset does). ``on_run(key, reused)`` is called once per run, in sweep
    order. ``options`` are simulator options (``allow_defer``, ``sla_multiplier``, ...), the same
    for every run.
    """
    import sim_core

    if missing not in ("run", "skip"):
        raise ValueError("missing must be 'run' or 'skip'")
    if missing == "skip" and (store is None or recompute):
        raise ValueError("missing='skip' needs a store and recompute=False")
    pols = check_policies(policies)
    sds = check_seeds(seeds)
    sc = as_scenario(bundle_or_scenario)
    opts = run_options(sc, start=start, days=days, steps=steps, **options)
    osha = options_sha256(opts)
    version = gridshift_version()
    keys = [RunKey(sc.bundle_id, p, s, version, osha) for p in pols for s in sds]
    stored: dict = {}
    if store is not None and not recompute:
        found = store.lookup(keys)
        stored = {k: v for k, v in found.items() if all(m in v for m in METRIC_NAMES)}
    if missing == "skip":
        keys = [k for k in keys if k in stored]
    rows, computed, reused = [], [], []
    fresh_series: dict[RunKey, pl.DataFrame] = {}
    for k in keys:
        if k in stored:
            metrics = stored[k]
            reused.append(k)
        else:
            rec, _ = execute(sc, k, opts, run_fn=sim_core.run)
            metrics = rec.metrics
            if store is not None:
                store.save(rec)
            computed.append(k)
            fresh_series[k] = rec.series
        rows.append((k, metrics))
        if on_run is not None:
            on_run(k, k in stored)
    pols = [p for p in pols if any(k.policy == p for k in keys)]
    sds = [s for s in sds if any(k.seed == s for k in keys)]
    series: dict[str, pl.DataFrame] = {}
    for k in keys:
        if sds and k.seed == sds[0]:
            s = fresh_series.get(k)
            if s is None and store is not None:
                s = store.series(k)
            if s is not None:
                series[k.policy] = s
    runs = runs_frame(rows)
    return Comparison(bundle_id=sc.bundle_id, policies=pols, seeds=sds, options=opts, options_sha256=osha,
                      gridshift_version=version, runs=runs, summary=summarize(runs), series=series,
                      computed=computed, reused=reused, scenario=sc)


# ---------------------------------------------------------------------------------------------- outputs
def write_outputs(cmp: Comparison, out_dir, *, figures: bool = True) -> list:
    """Write runs.parquet, summary.parquet, compare.json and (``figures``) the PNGs into ``out_dir``,
    each atomically. Nothing in them depends on time, host or path: two sweeps give the same bytes."""
    from pathlib import Path

    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    written = []
    for name, data in (("runs.parquet", parquet_bytes(cmp.runs)), ("summary.parquet", parquet_bytes(cmp.summary)),
                       ("compare.json", (json.dumps(cmp.params(), indent=1, sort_keys=True) + "\n").encode())):
        atomic_write_bytes(out / name, data)
        written.append(out / name)
    if figures:
        from . import figures as F

        written += F.write_all(cmp, out)
    return written


#: Metrics shown in the Markdown summary (and the CLI table): name, label, decimals, scale.
HEADLINE = (("cost_incl_transfer_usd", "cost USD", 2, 1.0), ("carbon_incl_transfer_kg", "carbon kg", 2, 1.0),
            ("total_kwh", "energy kWh", 1, 1.0), ("water_l", "water L", 0, 1.0),
            ("sla_violation_rate", "SLA viol. %", 2, 100.0), ("transfer_cost_usd", "transfer USD", 2, 1.0),
            ("mean_cpu_util_frac", "CPU util %", 3, 100.0))
SAVINGS_SHOWN = (("cost_incl_transfer_usd", "cost saving %"), ("carbon_incl_transfer_kg", "carbon saving %"))


def fmt_ci(mean: float | None, ci: float | None, digits: int, scale: float = 1.0) -> str:
    """``mean ± ci`` (``mean`` alone when the CI is undefined; ``n/a`` for a missing/NaN mean)."""
    if mean is None or mean != mean:
        return "n/a"
    s = f"{mean * scale:,.{digits}f}"
    return s if ci is None or ci != ci else f"{s} ± {ci * scale:,.{digits}f}"


def summary_rows(cmp: Comparison) -> tuple[list[str], list[list[str]]]:
    """Header and cells of the headline summary: one row per policy, mean ± 95 % CI over seeds."""
    has_base = BASELINE in cmp.policies
    header = ["policy", *[h[1] for h in HEADLINE], *([s[1] for s in SAVINGS_SHOWN] if has_base else [])]
    rows = []
    for pol in cmp.policies:
        by = {r["metric"]: r for r in cmp.summary.filter(pl.col("policy") == pol).iter_rows(named=True)}
        cells = [pol] + [fmt_ci(by[m]["mean"], by[m]["ci95"], d, k) for m, _, d, k in HEADLINE]
        if has_base:
            cells += [fmt_ci(by[m]["savings_vs_local_only_pct"], by[m]["savings_ci95_pct"], 2)
                      for m, _ in SAVINGS_SHOWN]
        rows.append(cells)
    return header, rows


def summary_caption(cmp: Comparison) -> str:
    base = (f"savings: per seed vs {BASELINE} (same seed), then mean ± 95 % CI" if BASELINE in cmp.policies
            else f"no savings: {BASELINE} is not in the sweep")
    return (f"{len(cmp.policies)} policies × {len(cmp.seeds)} seeds on bundle {cmp.bundle_id}, "
            f"{cmp.options['steps']} steps from step {cmp.options['start_step']}, gridshift {cmp.gridshift_version}; "
            f"mean ± 95 % CI (Student t) over seeds; cost and carbon include transfers; {base}")


def summary_markdown(cmp: Comparison) -> str:
    header, rows = summary_rows(cmp)
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(r) + " |" for r in rows]
    return "\n".join(lines) + "\n\n" + summary_caption(cmp) + "\n"
