"""Benchmark sweeps as Dagster assets: one run per (policy, seed) partition, then a summary (wiring only).
# No "from __future__ import annotations": Dagster inspects the annotations at runtime.

``benchmark_run`` (partitioned policy × seed) simulates one policy and seed on the configured bundle,
publishes the run as a Parquet object under the results URL (``$GRIDSHIFT_RESULTS_URL``: a folder or
``s3://bucket/prefix``, default ``<home>/results``) and indexes it in the warehouse
(``warehouse.benchmark_store``); a run already indexed under the same key (bundle id, policy, seed,
gridshift version, options hash) is reused, not simulated. ``benchmark_summary`` reads the indexed runs
of the same configuration from their objects, shows the summary table as Markdown metadata and writes
runs/summary Parquet and the figures (``sim_core.bench``).

Nothing is passed in memory between steps (no IO-manager outputs): every partition reads the bundle
from disk and writes the warehouse (flock-serialized), so a backfill runs the partitions in parallel
processes on one machine. ``dagster_project.distributed`` runs a whole sweep on a Dask cluster.
"""

import os
from pathlib import Path
from typing import Any, Optional

import dagster as dg
from pydantic import Field

from dagster_project.assets.bundle import scenario_bundle
from dagster_project.partitions import SWEEP_SEEDS, policy_seed, split_sweep
from dagster_project.resources import GridshiftResource
from gridshift import run_options as R
from gridshift.home import RESULTS_URL_ENV, Home, safe_join


def newest_bundle(home: Home) -> Path:
    """The bundle of ``home`` whose manifest was written last (a bundle is written whole, manifest included)."""
    manifests = sorted(home.bundles_dir.glob("*/manifest.json"), key=lambda p: (p.stat().st_mtime_ns, p.parent.name))
    if not manifests:
        raise dg.Failure(f"no bundle in {home.bundles_dir}: materialize scenario_bundle first, or give bundle_id "
                         "or bundle_path in the run config")
    return manifests[-1].parent


class SweepBase(dg.Config):
    """Which bundle and which window. Give ``bundle_id`` (a folder under <home>/bundles) or ``bundle_path`` (a
    bundle directory anywhere), or neither: the home's newest bundle. Use the same values for the runs and the
    summary."""

    bundle_id: str = ""
    bundle_path: str = ""
    days: Optional[float] = None  # noqa: UP045 - Dagster config needs Optional; default: the whole bundle
    start: Optional[str] = None  # noqa: UP045 - ISO UTC time or step index; default: the bundle start
    # No results URL here: Dagster stores a run's config before the run starts, so a URL with a credential in it
    # would be on disk before any check could refuse it. It comes from $GRIDSHIFT_RESULTS_URL (store_for), and a
    # ``results_url`` key is refused by Dagster's own config validation, before any run is created.

    def bundle_dir(self, home: Home) -> Path:
        """The configured bundle; with neither ``bundle_id`` nor ``bundle_path``, the home's newest bundle (so a
        backfill launched from the UI with no config runs on the bundle last built)."""
        if self.bundle_id and self.bundle_path:
            raise dg.Failure("give at most one of bundle_id (under <home>/bundles) and bundle_path")
        if not (self.bundle_id or self.bundle_path):
            return newest_bundle(home)
        path = safe_join(home.bundles_dir, self.bundle_id) if self.bundle_id else Path(self.bundle_path).expanduser()
        if not path.is_dir():
            raise dg.Failure(f"no bundle directory at {path}")
        return path

    def run_kwargs(self) -> dict:
        """The window and every run option of this config, as ``sim_core.bench.compare`` takes them."""
        start = self.start
        options = {name: R.from_text(R.get(name), getattr(self, name)) for name in type(self).model_fields
                   if name in R.defaults()}
        return {"days": self.days, "start": int(start) if start is not None and start.isdigit() else start, **options}


def config_field(o: R.RunOption) -> tuple[Any, Any]:
    """The (type, pydantic field) of run option ``o`` in a Dagster config: a float with presets is text (a
    number or a preset name), a nullable option Optional; its default and doc are the declaration's."""
    t: Any = {R.BOOL: bool, R.INT: int, R.FLOAT: float, R.CHOICE: str, R.TEXT: str, R.PARAMS: str}[o.kind]
    if o.kind == R.FLOAT and o.presets:
        t = str
    if o.nullable or o.kind == R.PARAMS:  # (a parameter set as its name=value text, None = off)
        t = Optional[t]  # noqa: UP045 - Dagster config needs Optional
    unit = f" ({o.unit})" if o.unit else ""
    return t, Field(default=o.default, description=f"{o.doc}{unit}: {o.describe_valid(api=False)}")


def sweep_config(base: type = SweepBase, name: str = "SweepConfig") -> type:
    """``base`` with one field per run option declared for the sweep (``RunOption.sweep``), its default and doc
    the declaration's: made when this module is imported (an option declared before then is configurable)."""
    fields = {o.name: config_field(o) for o in R.declared() if o.sweep}
    ns: dict[str, Any] = {"__module__": __name__, "__doc__": base.__doc__,
                          "__annotations__": {k: t for k, (t, _) in fields.items()}}
    ns.update({k: f for k, (_, f) in fields.items()})
    return type(name, (base,), ns)


#: the sweep's config: the bundle, the window and every sweep option (the run options' declarations)
SweepConfig = sweep_config()


class SummaryConfig(SweepConfig):  # type: ignore[misc,valid-type]
    """The sweep to summarize (stored runs among ``policies`` × ``seeds``) and where to write the files
    (default: <home>/benchmarks/<bundle_id>/<options_sha256[:16]>)."""

    policies: list[str] = ["local_only", "round_robin", "lowest_carbon", "lowest_price", "defer_to_greener"]
    seeds: list[int] = [int(s) for s in SWEEP_SEEDS]
    out_dir: Optional[str] = None  # noqa: UP045


def store_for(home: Home):
    """The run store of a home: objects under ``$GRIDSHIFT_RESULTS_URL`` (read at run time; default
    ``<home>/results``), index in its warehouse. A URL carrying a credential is refused without quoting it."""
    from gridshift.objectstore import StoreURLError
    from warehouse.benchmark_store import WarehouseRunStore

    try:
        return WarehouseRunStore.for_home(home, results_url=os.environ.get(RESULTS_URL_ENV) or None)
    except StoreURLError as err:
        raise dg.Failure(f"{RESULTS_URL_ENV}: {err}") from err


@dg.asset(
    group_name="benchmarks", partitions_def=policy_seed, kinds={"numba", "duckdb"}, deps=[scenario_bundle],
    description="One simulation run (policy × seed partition) on the configured bundle: a Parquet object under "
    "the results URL, indexed in the warehouse (benchmark_runs / benchmark_metrics); reused when already stored.",
)
def benchmark_run(context: dg.AssetExecutionContext, config: SweepConfig,
                  gridshift: GridshiftResource) -> dg.MaterializeResult:
    import sim_core
    from sim_core.bench import compare

    policy, seed = split_sweep(context)
    home = gridshift.home_obj()
    scenario = sim_core.load(config.bundle_dir(home))
    cmp = compare(scenario, [policy], [seed], store=store_for(home), **config.run_kwargs())
    row = cmp.runs.row(0, named=True)
    reused = bool(cmp.reused)
    context.log.info(f"{policy} seed {seed} on {cmp.bundle_id}: {'reused' if reused else 'simulated'}")
    return dg.MaterializeResult(metadata={
        "bundle_id": cmp.bundle_id, "policy": policy, "seed": seed, "reused": reused,
        "gridshift_version": cmp.gridshift_version, "options_sha256": cmp.options_sha256,
        "steps": cmp.options["steps"], "start_step": cmp.options["start_step"],
        **{m: float(row[m]) for m in ("cost_usd", "carbon_kg", "total_kwh", "water_l", "sla_violation_rate",
                                      "transfer_cost_usd", "mean_cpu_util_frac")},
    })


@dg.asset(
    group_name="benchmarks", deps=[benchmark_run], kinds={"parquet", "duckdb"},
    description="Summary of the stored benchmark runs of one bundle and option set: mean ± 95 % CI over "
    "seeds, savings vs local_only, runs/summary Parquet and figures (docs/benchmarks.md).",
)
def benchmark_summary(context: dg.AssetExecutionContext, config: SummaryConfig,
                      gridshift: GridshiftResource) -> dg.MaterializeResult:
    import sim_core
    from sim_core.bench import compare, summary_markdown, write_outputs

    home = gridshift.home_obj()
    scenario = sim_core.load(config.bundle_dir(home))
    try:
        cmp = compare(scenario, config.policies, config.seeds, store=store_for(home),
                      missing="skip", **config.run_kwargs())
    except ValueError as err:
        raise dg.Failure(str(err)) from err
    if cmp.runs.height == 0:
        raise dg.Failure(f"no stored benchmark runs for bundle {scenario.bundle_id} with options "
                         f"{cmp.options_sha256[:16]} (gridshift {cmp.gridshift_version}): materialize "
                         "benchmark_run partitions with the same config first")
    out = Path(config.out_dir).expanduser() if config.out_dir else safe_join(
        home.root, "benchmarks", cmp.bundle_id, cmp.options_sha256[:16])
    written = write_outputs(cmp, out)
    context.log.info(f"summarized {cmp.runs.height} stored runs into {out}")
    return dg.MaterializeResult(metadata={
        "summary": dg.MetadataValue.md(summary_markdown(cmp)),
        "bundle_id": cmp.bundle_id, "options_sha256": cmp.options_sha256,
        "gridshift_version": cmp.gridshift_version, "runs": cmp.runs.height,
        "policies": dg.MetadataValue.json(cmp.policies), "seeds": dg.MetadataValue.json(cmp.seeds),
        "out_dir": dg.MetadataValue.path(str(out)),
        "files": dg.MetadataValue.json(sorted(p.name for p in written)),
    })


ASSETS = [benchmark_run, benchmark_summary]

#: A backfill of this job over policy × seed partitions runs one process per partition.
benchmark_sweep = dg.define_asset_job("benchmark_sweep", selection=[benchmark_run])
