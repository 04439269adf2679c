"""The benchmark sweep on a Dask cluster through Dagster's Dask executor (``dagster-dask``); wiring only.

``benchmark_sweep_dask`` plans the runs of one sweep (policies × seeds on one bundle, the same config as
``benchmark_summary``), fans them out as one step per run, and indexes the results:

    plan_benchmark_runs ──► simulate_benchmark_run (one step per missing run) ──► index_benchmark_runs

Each ``simulate_benchmark_run`` step runs on a Dask worker (``sim_core.bench.remote.run_and_publish``:
load the bundle, simulate, publish the Parquet object under the results URL) and hands back a small
receipt; ``index_benchmark_runs`` writes the receipts to the warehouse index in one transaction (the
only warehouse writer) and records each run as a ``benchmark_run`` partition materialization, so the UI
shows them and ``benchmark_summary`` (or ``python -m sim_core compare``) reads them without simulating.

Executor config (run config ``execution.config``): ``cluster: {existing: {address: tcp://host:8786}}``
for a running cluster, or ``cluster: {local: {n_workers: 2}}`` for a throw-away local one. Dagster's Dask
executor needs a persistent Dagster instance that every worker can open (the gridshift home on a shared
folder, or Postgres storage), the bundle at the same path on every worker, and the results URL
reachable from every worker (docs/distributed.md).
"""

from typing import Any

import dagster as dg
from dagster_dask import dask_executor

from dagster_project.assets.sweep import SummaryConfig, store_for
from dagster_project.partitions import SWEEP_SEEDS, sweep_key
from dagster_project.resources import GridshiftResource


class DaskSweepConfig(SummaryConfig):
    """The sweep (``policies`` × ``seeds`` on one bundle with fixed options) and whether to simulate runs
    already indexed again (``recompute``)."""

    recompute: bool = False


@dg.op(out=dg.DynamicOut(dict), description="The runs of the sweep that are not indexed yet, one output each.")
def plan_benchmark_runs(context: dg.OpExecutionContext, config: DaskSweepConfig, gridshift: GridshiftResource):
    import sim_core
    from sim_core import result as sim_result
    from sim_core.bench.sweep import RunKey, check_policies, check_seeds, options_sha256, run_options

    home = gridshift.home_obj()
    bundle_dir = config.bundle_dir(home)
    scenario = sim_core.load(bundle_dir)
    store = store_for(home, config.results_url)
    kw = config.run_kwargs()
    try:
        opts = run_options(scenario, **kw)
        pols, seeds = check_policies(config.policies), check_seeds(config.seeds)
    except ValueError as err:
        raise dg.Failure(str(err)) from err
    osha, version = options_sha256(opts), sim_result.gridshift_version()
    keys = [RunKey(scenario.bundle_id, p, s, version, osha) for p in pols for s in seeds]
    done = {} if config.recompute else store.refs(keys)
    todo = [k for k in keys if tuple(k) not in done]
    context.log.info(f"{len(todo)} run(s) to simulate, {len(keys) - len(todo)} already indexed, "
                     f"objects under {store.results.url}")
    for k in todo:
        yield dg.DynamicOutput({"bundle_dir": str(bundle_dir), "key": list(k), "options": opts,
                                "results_url": store.results.url}, mapping_key=f"{k.policy}_seed_{k.seed}")


@dg.op(description="Simulate one run on a worker and publish its Parquet object (sim_core.bench.remote).")
def simulate_benchmark_run(context: dg.OpExecutionContext, run: dict) -> Any:
    from sim_core.bench.remote import run_and_publish

    receipt = run_and_publish(run["bundle_dir"], tuple(run["key"]), run["options"], run["results_url"])
    context.log.info(f"{receipt.key[1]} seed {receipt.key[2]}: {receipt.wall_time_s:.2f} s on {receipt.worker}, "
                     f"{receipt.ref.url}")
    return receipt


@dg.op(description="Index the published runs in the warehouse (one transaction) and record them as benchmark_run "
                   "partitions.")
def index_benchmark_runs(context: dg.OpExecutionContext, receipts: list, gridshift: GridshiftResource) -> int:
    home = gridshift.home_obj()
    store = store_for(home)
    store.index([(r, r.ref) for r in receipts])
    for r in receipts:
        bundle_id, policy, seed, version, osha = r.key
        meta = {"bundle_id": bundle_id, "policy": policy, "seed": seed, "gridshift_version": version,
                "options_sha256": osha, "result_url": dg.MetadataValue.path(r.ref.url),
                "result_sha256": r.ref.sha256, "worker": r.worker, "wall_time_s": r.wall_time_s,
                **{m: r.metrics[m] for m in ("cost_usd", "carbon_kg", "total_kwh", "sla_violation_rate")}}
        partition = str(sweep_key(policy, seed)) if str(seed) in SWEEP_SEEDS else None
        context.log_event(dg.AssetMaterialization(asset_key="benchmark_run", partition=partition, metadata=meta))
    context.log.info(f"indexed {len(receipts)} run(s) in {store.db_path}")
    return len(receipts)


@dg.job(executor_def=dask_executor, description="A benchmark sweep with one step per run on a Dask cluster "
        "(Dagster's Dask executor); results as Parquet objects under the results URL, indexed in the warehouse.")
def benchmark_sweep_dask():
    index_benchmark_runs(plan_benchmark_runs().map(simulate_benchmark_run).collect())


JOBS = [benchmark_sweep_dask]
