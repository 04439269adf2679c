"""Benchmark sweeps: every policy × seed on one scenario, a tidy metrics frame and a summary.

    from sim_core.bench import compare
    cmp = compare("bundles/<id>", ["local_only", "lowest_carbon"], seeds=[0, 1, 2], days=7)
    cmp.runs       # one row per (policy, seed): the run key and every metric in METRICS (Float64)
    cmp.summary    # one row per (policy, metric): mean, std, Student-t 95 % CI, savings vs local_only

The bundle is loaded once; every run uses the same window (``start``/``days``/``steps``) and the
same run options. What is measured: :mod:`.metrics`; how it is summarized: :mod:`.stats`; the
files and tables: :mod:`.report`.

Reuse of stored runs: pass ``store=`` any object with ``lookup(keys) -> {key: metrics}``,
``series(key) -> frame | None`` and ``save(record)`` (``warehouse.benchmark_store.WarehouseRunStore``,
Parquet objects under a results URL indexed in the warehouse, is one; ``gridshift.results.ResultStore``,
the objects alone, another). sim_core never imports the warehouse; the CLI and the Dagster assets
connect the two.

Distributed sweeps: pass ``executor=`` anything with ``submit(fn, *args) -> future`` (a Dask
``distributed.Client``, a ``concurrent.futures`` pool) and ``results_url=``: each missing run is
simulated by :func:`sim_core.bench.remote.run_and_publish` on a worker, which publishes the run's
Parquet object under the URL and returns a receipt; the store indexes the receipts (``store.index``).
The objects are byte-identical to the in-process sweep's (docs/distributed.md).
A run is identified by :class:`RunKey`: bundle id (content hash), policy, seed, gridshift version
and the sha256 of the canonical JSON of the run options including the resolved window.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

import numpy as np
import polars as pl

from gridshift import metrics as M
from gridshift.fields import FIELDS
from gridshift.hashing import canonical_json, sha256_bytes
from gridshift.results import RUN_KEY, read_run

from .. import result as _result
from ..options import MAX_SEED, RunOptionsError, make_options, resolve_window
from ..policies import registry
from ..scenario import Scenario, load
from ..simulator import as_scenario
from .metrics import BASELINE, metric_names
from .run import RunKey, RunRecord, execute, worker_name  # noqa: F401 - re-exported (the sweep API)
from .stats import summarize

DEFAULT_POLICIES = ("local_only", "round_robin", "lowest_carbon", "lowest_price", "defer_to_greener")
DEFAULT_SEEDS = (0, 1, 2)


# ---------------------------------------------------------------------------------------------- keys
def run_options(scenario: Scenario, *, start=None, days=None, steps=None, **options) -> dict[str, Any]:
    """The canonical options of a run: every simulator option (defaults filled in) and the resolved
    window as ``start_step``/``steps``, exactly the ``RunResult.options`` a run records.

    ``days=1`` and ``steps=96`` therefore give the same options (and hash): they are the same run.
    The options are validated and normalized by :class:`sim_core.options.Options` (``sla_multiplier=2``
    is stored as ``2.0``); a per-task ``sla_multiplier`` array cannot be keyed and is refused.
    """
    opts = make_options(**options)
    if isinstance(opts.sla_multiplier, np.ndarray):
        raise RunOptionsError("sla_multiplier: a per-task array cannot be keyed; compare takes scalar options")
    s0, n = resolve_window(scenario, start, days, steps)
    return {**opts.public(), "start_step": s0, "steps": n}


def options_sha256(options: dict[str, Any]) -> str:
    return sha256_bytes(canonical_json(options))


# ---------------------------------------------------------------------------------------------- the sweep
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
    #: the gap of every policy to the offline optimum (``bench.gap.gap_frame``), when asked for
    gap: pl.DataFrame | None = None
    #: seed -> the optimum's ``OptimumResult`` (``sim_core.optimum``), when asked for
    bounds: dict = field(default_factory=dict)

    def params(self) -> dict[str, Any]:
        """The sweep's parameters (written as compare.json): everything that determines the outputs."""
        return {"bundle_id": self.bundle_id, "policies": self.policies, "seeds": self.seeds,
                "gridshift_version": self.gridshift_version, "options": self.options,
                "options_sha256": self.options_sha256, "baseline": BASELINE,
                "metrics": [{"name": m.name, "unit": m.unit, "description": m.doc} for m in M.declared()],
                **({"optimum": {str(s): _bound_params(b) for s, b in sorted(self.bounds.items())},
                    "gap": self.gap.to_dicts()} if self.gap is not None else {})}


def _bound_params(b) -> dict[str, Any]:
    """What compare.json records of an optimum: its figures, not its timings (the file is reproducible)."""
    return {k: v for k, v in b.to_dict().items() if k not in ("solve_s", "build_s", "options")}


def _once_each(what: str, items: list) -> list:
    dup = sorted({x for x in items if items.count(x) > 1})
    if dup:
        raise RunOptionsError(f"{what} given twice: {', '.join(map(str, dup))}")
    return items


def check_policies(policies: Iterable[str]) -> list[str]:
    """The sweep's built-in policy names, each once (:class:`RunOptionsError` otherwise)."""
    out = [str(p).strip() for p in policies]
    if not out:
        raise RunOptionsError("no policy given")
    unknown = [p for p in out if p not in registry.names()]
    if unknown:
        raise RunOptionsError("; ".join(registry.unknown(p) for p in unknown))
    return _once_each("policy", out)


def check_seeds(seeds: Iterable[int]) -> list[int]:
    """The sweep's seeds, each an integer in 0..2**63 - 1 and given once (:class:`RunOptionsError`)."""
    out = []
    for s in seeds:
        if isinstance(s, bool | np.bool_) or not isinstance(s, int | np.integer) or not 0 <= s <= MAX_SEED:
            raise RunOptionsError(f"seed {s!r} is not a non-negative integer (0..2**63 - 1)")
        out.append(int(s))
    if not out:
        raise RunOptionsError("no seed given")
    return _once_each("seed", out)


def runs_frame(rows: Sequence[tuple[RunKey, dict[str, float]]]) -> pl.DataFrame:
    """The tidy runs frame: key columns, then every metric as Float64, in the given row order."""
    schema: dict[str, pl.DataType] = {c: FIELDS[c].polars_dtype for c in RUN_KEY}
    names = metric_names()
    schema.update({m: pl.Float64 for m in names})
    data = [{**k._asdict(), **{m: float(v[m]) for m in names}} for k, v in rows]
    return pl.DataFrame(data, schema=schema)


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
    optimum: bool = False,
    executor: Any = None,
    results_url: str | None = None,
    worker_wait_s: float = 60.0,
    verify_reuse: int = 0,
    **options,
) -> Comparison:
    """Run every policy × seed on one scenario (loaded once) and summarize.

    ``store``: runs already stored under the same :class:`RunKey` are reused (not simulated), new
    ones are saved as they finish. ``recompute=True`` simulates every run anyway (and re-saves it).
    ``missing="skip"`` simulates nothing: it summarizes only the stored runs among policies × seeds
    (what the Dagster summary asset does). ``on_run(key, reused)`` is called once per run, in sweep
    order. ``options`` are simulator options (``allow_defer``, ``sla_multiplier``, ...), the same
    for every run. ``optimum=True`` also solves the offline optimum of each seed (``sim_core.optimum``)
    and reports every policy's gap to it (:attr:`Comparison.gap`).

    ``executor`` + ``results_url``: simulate the missing runs on a distributed engine (module docstring);
    the scenario must have been loaded from a bundle directory every worker can read at the same path. Runs are
    indexed in ``store`` as they finish; when the engine has had no worker for ``worker_wait_s`` seconds with runs
    unfinished, the sweep fails with :class:`WorkersLostError` (Dask would wait for a worker forever).

    ``verify_reuse=N`` simulates again N of the reused runs (a sample drawn with the options hash as seed) and
    refuses the sweep (:class:`ReuseMismatchError`) unless each equals its stored metrics and series bit for bit
    (docs/distributed.md, "Trust").
    """
    import sim_core

    if missing not in ("run", "skip"):
        raise ValueError("missing must be 'run' or 'skip'")
    if missing == "skip" and (store is None or recompute):
        raise ValueError("missing='skip' needs a store and recompute=False")
    pols = check_policies(policies)
    sds = check_seeds(seeds)
    # given a bundle directory, each run loads (and consumes) its own tasks from it and the sweep reads the bundle
    # without them, so a sweep's peak is one run's (at ×1 of the source cluster, 41 M tasks, loading them whole
    # took ~12 GB); the offline optimum reads the tasks, so it loads them
    source = Path(bundle_or_scenario) if isinstance(bundle_or_scenario, str | Path) and not optimum else None
    sc = as_scenario(bundle_or_scenario) if source is None else load(source, tasks=False)
    opts = run_options(sc, start=start, days=days, steps=steps, **options)
    osha = options_sha256(opts)
    version = _result.gridshift_version()  # what the RunResult records: keys and results agree
    keys = [RunKey(sc.bundle_id, p, s, version, osha) for p in pols for s in sds]
    stored: dict = {}
    if store is not None and not recompute:
        found = store.lookup(keys)
        stored = {k: v for k, v in found.items() if all(m in v for m in metric_names())}
    if missing == "skip":
        keys = [k for k in keys if k in stored]
    if verify_reuse:
        _verify_reuse(sc, [k for k in keys if k in stored], stored, store, opts, verify_reuse, osha, source)
    rows, computed, reused = [], [], []
    fresh_series: dict[RunKey, pl.DataFrame] = {}
    remote: dict[RunKey, Any] = {}
    if executor is not None:
        remote = _run_remote(executor, sc, [k for k in keys if k not in stored], opts, results_url, store,
                             worker_wait_s)
    for k in keys:
        if k in stored:
            metrics = stored[k]
            reused.append(k)
        elif k in remote:
            metrics = remote[k].metrics
            computed.append(k)
        else:
            # (the run's result is dropped here, not held while the next run computes: at 200 sites a
            # year's result is ~4 GB; benchmarks/bench_sites.py)
            rec = execute(sc, k, opts, run_fn=sim_core.run, source=source)[0]
            metrics = rec.metrics
            if store is not None:
                store.save(rec)
            computed.append(k)
            if k.seed == sds[0]:  # only the first seed's series are summarized below
                fresh_series[k] = rec.series
            del rec
        rows.append((k, metrics))
        if on_run is not None:
            on_run(k, k in stored)
    pols = [p for p in pols if any(k.policy == p for k in keys)]
    sds = [s for s in sds if any(k.seed == s for k in keys)]
    series: dict[str, pl.DataFrame] = {}
    for k in keys:
        if sds and k.seed == sds[0]:
            s = fresh_series.get(k)
            if s is None and k in remote:
                s = read_run(remote[k].ref.url, sha256=remote[k].ref.sha256).series
            if s is None and store is not None:
                s = store.series(k)
            if s is not None:
                series[k.policy] = s
    runs = runs_frame(rows)
    gap, bounds = None, {}
    if optimum and runs.height:
        from .gap import gap_frame, optima

        bounds = optima(sc, sds, opts)
        gap = gap_frame(runs, bounds, str(opts.get("forecast")))
    return Comparison(bundle_id=sc.bundle_id, policies=pols, seeds=sds, options=opts, options_sha256=osha,
                      gridshift_version=version, runs=runs, summary=summarize(runs), series=series,
                      computed=computed, reused=reused, scenario=sc, gap=gap, bounds=bounds)



class ReuseMismatchError(RuntimeError):
    """A reused run simulated again differs from its stored object (``compare(verify_reuse=N)``)."""


def _verify_reuse(sc: Scenario, reused: list[RunKey], stored: dict, store, opts: dict[str, Any], n: int,
                  osha: str, source: Path | None = None) -> None:
    """Simulate ``n`` of the ``reused`` runs again (a sample seeded by the options hash: the same sweep checks the
    same runs) and compare metrics (float bits, NaN included) and series with the stored ones."""
    import random

    import sim_core

    if n < 0:
        raise RunOptionsError(f"verify_reuse must be >= 0, got {n}")
    for k in random.Random(osha).sample(reused, min(n, len(reused))):
        rec = execute(sc, k, opts, run_fn=sim_core.run, source=source)[0]
        want = stored[k]
        where = getattr(store, "url_for", None) or getattr(getattr(store, "results", None), "url_for", None)
        url = where(k) if where is not None else "the store"
        bad = [m for m in metric_names() if np.float64(rec.metrics[m]).tobytes() != np.float64(want[m]).tobytes()]
        if bad:
            raise ReuseMismatchError(f"reused run {k.policy} seed {k.seed} at {url} differs from a new simulation: "
                                     f"{bad[0]} is {want[bad[0]]!r} stored, {rec.metrics[bad[0]]!r} simulated")
        series = store.series(k)
        if series is None or not series.equals(rec.series):
            raise ReuseMismatchError(f"reused run {k.policy} seed {k.seed} at {url}: its series differs from a "
                                     "new simulation")


def _run_remote(executor, sc: Scenario, keys: list[RunKey], opts: dict[str, Any], results_url: str | None,
                store, worker_wait_s: float) -> dict[RunKey, Any]:
    """Submit every run to ``executor`` and gather them (:func:`_gather`: indexed in ``store`` as they finish)."""
    from .remote import run_and_publish  # noqa: I001 - lazy: only distributed sweeps need it

    if not keys:
        return {}
    if not results_url:
        raise RunOptionsError("a distributed sweep needs results_url= (where the workers publish the runs)")
    if sc.path is None:
        raise RunOptionsError("a distributed sweep needs a scenario loaded from a bundle directory (workers load it)")
    bundle = str(sc.path)
    futures = {k: executor.submit(run_and_publish, bundle, tuple(k), opts, results_url) for k in keys}
    return _gather(executor, futures, store, worker_wait_s)


class WorkersLostError(RuntimeError):
    """A distributed sweep lost every worker with runs unfinished (its finished runs are published and indexed)."""


def _live_workers(executor) -> int | None:
    """How many workers the engine has now (a Dask ``Client``'s public ``scheduler_info``), or None when the
    executor cannot tell (a ``concurrent.futures`` pool reports a broken pool through its futures instead)."""
    info = getattr(executor, "scheduler_info", None)
    if not callable(info):
        return None
    workers = info().get("workers")
    return len(workers) if isinstance(workers, dict) else None


def _gather(executor, futures: dict[RunKey, Any], store, wait_s: float, poll_s: float = 0.1) -> dict[RunKey, Any]:
    """The receipts of ``futures`` as they finish; each batch of finished runs is indexed in ``store`` at once
    (if it indexes), so a sweep that fails later keeps them. A failed run's error is raised once every other run
    has finished (or been lost). When the engine has had no worker for ``wait_s`` seconds with runs pending
    (Dask then waits for one forever), the pending runs are cancelled and :class:`WorkersLostError` is raised."""
    indexes = store is not None and hasattr(store, "index")
    pending, done = dict(futures), {}
    first_error: BaseException | None = None
    lost_since: float | None = None
    while pending:
        fresh, failed = [], False
        for k in [k for k, f in pending.items() if f.done()]:
            try:
                # (a run done on a worker that dies before its receipt is fetched is computed again: fetching
                # it then waits for a worker, so a bounded wait, and the run stays pending)
                receipt = pending[k].result(timeout=min(wait_s, 5.0))
            except TimeoutError:
                continue
            except Exception as exc:  # noqa: BLE001 - raised below, once the finished runs are indexed
                del pending[k]
                first_error, failed = first_error or exc, True
                continue
            del pending[k]
            done[k] = receipt
            fresh.append(receipt)
        if fresh and indexes:
            store.index([(r, r.ref) for r in fresh])
        if not pending or fresh or failed:
            lost_since = None
            continue
        if _live_workers(executor) == 0:
            lost_since = time.monotonic() if lost_since is None else lost_since
            if time.monotonic() - lost_since >= wait_s:
                for f in pending.values():
                    f.cancel()
                k = next(iter(pending))
                raise WorkersLostError(
                    f"every worker of the distributed sweep is gone (none for {wait_s:g} s) with {len(pending)} of "
                    f"{len(futures)} runs unfinished (first: {k.policy} seed {k.seed}); the {len(done)} finished "
                    "run(s) are published" + (" and indexed" if indexes else "") + ": start workers and run the "
                    "sweep again (finished runs are reused)")
        else:
            lost_since = None
        time.sleep(poll_s)
    if first_error is not None:
        raise first_error
    return {k: done[k] for k in futures}

