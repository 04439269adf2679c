"""What Dagster's record of the full-mirror ingest costs by itself: the floor under ``gridshift ingest``'s
orchestration, whatever the pipeline does.

Command: ./run.sh python benchmarks/dagster_record_floor.py --mirror ../shared/data --home DIR
         (``benchmarks/bench_ingest.py`` runs it in a fresh process and reports it; it prints one JSON line)

It does exactly what the CLI does with Dagster and nothing of the pipeline: imports Dagster, opens a fresh
instance of the home (``dagster_project.runner.open_instance``: the same ``dagster.yaml``), adds the year keys,
and launches the same runs (``runner.plan_runs`` over the partitions the mirror holds, plus the reference run)
through the same jobs and tags, with assets of the same names, partitions, backfill policy and checks, each of
which records what the real one records (one materialization per partition with its dimension tags and
metadata of the same keys, the two check evaluations per step) and computes nothing. The time of this process
is therefore the least any ingest recording per-partition materializations in this Dagster storage can take.
"""

# No "from __future__ import annotations": Dagster inspects the context annotation at runtime.

import argparse
import json
import resource
import sys
import time
import warnings
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

T0 = time.perf_counter()
import dagster as dg  # noqa: E402  (timed: the CLI imports it too)

from benchmarks.bench_ingest import KINDS, YEARS, _partitions  # noqa: E402
from dagster_project import checks, runner  # noqa: E402
from dagster_project.jobs import JOB_OF_GROUP  # noqa: E402
from dagster_project.partitions import add_years, dimension_tags, region_year, run_keys  # noqa: E402
from gridshift.home import Home  # noqa: E402
from gridshift.sources import SIGNAL_TABLES  # noqa: E402

REFERENCE = ("locations", "egress_price", "network_path")


def _record_only(table: str) -> dg.AssetsDefinition:
    """An asset named and partitioned as the real grid asset ``table`` that records, per partition, a
    materialization with the real metadata keys, and the two check evaluations per step."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", dg.BetaWarning)
        decorator = dg.asset(name=table, group_name="grid", partitions_def=region_year,
                             check_specs=checks.check_specs(table), backfill_policy=dg.BackfillPolicy.single_run(),
                             output_required=False)

    @decorator
    def _asset(context: dg.AssetExecutionContext):
        keys = run_keys(context)
        for pk in keys:
            yield dg.AssetMaterialization(
                asset_key=table, partition=pk, tags=dimension_tags(pk),
                metadata={"rows": 17520, "raw_sha256": "0" * 64, "raw_uri": "file:///mirror/file.csv",
                          "coverage": 1.0, "estimated_share": 0.0})
        parts = {str(pk): {"rows": 17520} for pk in keys}
        yield dg.AssetCheckResult(
            asset_key=table, check_name=checks.SCHEMA_CHECK, passed=True,
            metadata={"partitions_checked": len(keys), "partitions": dg.MetadataValue.json(parts)})
        yield dg.AssetCheckResult(asset_key=table, check_name=checks.COVERAGE_CHECK, passed=True,
                                  metadata={"partitions": dg.MetadataValue.json(parts)})

    return _asset


def _reference(name: str) -> dg.AssetsDefinition:
    @dg.asset(name=name, group_name="reference")
    def _asset() -> dg.MaterializeResult:
        return dg.MaterializeResult(metadata={"rows": 1})

    return _asset


def _run(assets: list[dg.AssetsDefinition], group: str, instance: dg.DagsterInstance, *, partition_key=None,
         tags: dict | None = None) -> None:
    job = dg.define_asset_job(JOB_OF_GROUP[group], selection=[a.key for a in assets])
    result = dg.Definitions(assets=assets, jobs=[job]).resolve_job_def(JOB_OF_GROUP[group]).execute_in_process(
        run_config=runner.QUIET, instance=instance, partition_key=partition_key, tags=tags or {}, raise_on_error=True)
    assert result.success


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--mirror", type=Path, default=REPO.parent / "shared" / "data")
    ap.add_argument("--home", type=Path, required=True, help="a fresh gridshift home (created)")
    args = ap.parse_args()
    parts = [(SIGNAL_TABLES[k], r, y) for k, r, y in _partitions(args.mirror)]
    home = Home(args.home).ensure()
    grid = {SIGNAL_TABLES[k]: _record_only(SIGNAL_TABLES[k]) for k in KINDS}
    with runner.open_instance(home) as instance:
        order = add_years(instance, YEARS)
        _run([_reference(n) for n in REFERENCE], "reference", instance)
        blocks = runner.plan_runs(parts, order)
        for block in blocks:
            _run([grid[a] for a in block.assets], "grid", instance,
                 partition_key=block.keys[0] if block.tags() is None else None, tags=block.tags())
    r = resource.getrusage(resource.RUSAGE_SELF)
    print(json.dumps({"wall_s": time.perf_counter() - T0, "cpu_s": r.ru_utime + r.ru_stime, "runs": len(blocks) + 1,
                      "partitions": len(parts)}))


if __name__ == "__main__":
    main()
