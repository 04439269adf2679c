"""A benchmark sweep on a Dask cluster, launched from Dagster (``benchmark_sweep_dask``); wiring only.

One op connects a ``distributed.Client`` to the configured scheduler (``scheduler: tcp://host:8786``;
empty: a throw-away local cluster of ``n_workers`` processes) and runs ``sim_core.bench.compare`` with
it: every run that is not indexed yet becomes one Dask task on a worker
(``sim_core.bench.remote.run_and_publish``: load the bundle, simulate, publish the Parquet object
under the results URL) and only a small receipt travels back. The op is the single warehouse writer:
it indexes the receipts in one transaction and records each run as a ``benchmark_run`` partition
materialization, so the UI shows them and ``benchmark_summary`` (or ``gridshift compare``)
reads them without simulating.

Why not Dagster's Dask executor (``dagster-dask``): its executor submits the steps of the execution plan
level by level as planned at the start, so the steps of a dynamic fan-out (one step per run) are never
submitted (checked with dagster-dask 0.29.27: such a run "succeeds" having simulated nothing), and every
worker must open the Dagster instance itself (shared SQLite folder or Postgres). Here the workers need
only the bundle and the results URL (docs/distributed.md).
"""

import dagster as dg

from dagster_project.assets.sweep import SummaryConfig, store_for
from dagster_project.partitions import SWEEP_SEEDS, sweep_key
from dagster_project.resources import GridshiftResource


class DaskSweepConfig(SummaryConfig):
    """The sweep (``policies`` × ``seeds`` on one bundle with fixed options, results under
    ``$GRIDSHIFT_RESULTS_URL``) and the Dask scheduler to run it on."""

    scheduler: str = ""  # tcp://host:8786 of a running `dask scheduler`; empty: a local cluster
    n_workers: int = 2  # workers of the local cluster (when no scheduler is given)
    recompute: bool = False


@dg.op(description="Run the sweep's missing runs on a Dask cluster, index them in the warehouse, record them as "
                   "benchmark_run partitions.")
def run_sweep_on_dask(context: dg.OpExecutionContext, config: DaskSweepConfig, gridshift: GridshiftResource) -> int:
    from distributed import Client

    import sim_core
    from sim_core.bench.remote import local_cluster
    from sim_core.bench.sweep import compare

    home = gridshift.home_obj()
    scenario = sim_core.load(config.bundle_dir(home))
    store = store_for(home)
    cluster = None if config.scheduler else local_cluster(config.n_workers)
    try:
        with Client(config.scheduler or cluster) as client:
            n = len(client.scheduler_info()["workers"])
            context.log.info(f"Dask scheduler {client.scheduler.address}: {n} worker(s)")
            cmp = compare(scenario, config.policies, config.seeds, store=store, recompute=config.recompute,
                          executor=client, results_url=store.results.url, **config.run_kwargs())
    except ValueError as err:
        raise dg.Failure(str(err)) from err
    finally:
        if cluster is not None:
            cluster.close()
    refs = store.refs(cmp.computed)
    runs = store.runs(cmp.bundle_id, options_sha256=cmp.options_sha256, gridshift_version=cmp.gridshift_version)
    workers = {(r["policy"], r["seed"]): r["worker"] for r in runs.iter_rows(named=True)}
    for k in cmp.computed:
        row = cmp.runs.filter((cmp.runs["policy"] == k.policy) & (cmp.runs["seed"] == k.seed)).row(0, named=True)
        meta = {"bundle_id": k.bundle_id, "policy": k.policy, "seed": k.seed, "gridshift_version": k.gridshift_version,
                "options_sha256": k.options_sha256, "result_url": dg.MetadataValue.path(refs[tuple(k)].url),
                "result_sha256": refs[tuple(k)].sha256, "worker": workers.get((k.policy, k.seed), ""),
                **{m: float(row[m]) for m in ("cost_usd", "carbon_kg", "total_kwh", "sla_violation_rate")}}
        partition = str(sweep_key(k.policy, k.seed)) if str(k.seed) in SWEEP_SEEDS else None
        context.log_event(dg.AssetMaterialization(asset_key="benchmark_run", partition=partition, metadata=meta))
    context.log.info(f"{len(cmp.computed)} run(s) simulated on Dask, {len(cmp.reused)} reused; objects under "
                     f"{store.results.url}, index in {store.db_path}")
    return len(cmp.computed)


@dg.job(description="A benchmark sweep on a Dask cluster: one Dask task per run; results as Parquet objects under "
        "the results URL, indexed in the warehouse (docs/distributed.md).")
def benchmark_sweep_dask():
    run_sweep_on_dask()


JOBS = [benchmark_sweep_dask]
