"""A results URL carrying a credential never reaches the home's files through Dagster.

Dagster stores a run's config (and the failure quoting it) in the home's run database before the asset's code
runs, so no check of ours inside the run can keep a credential pasted into a config field off the disk. The
sweep therefore has no results-URL config field: a ``results_url`` in the run config (literal, with user-info or
a token in the query, or in ``{"env": ...}`` form) is refused by Dagster's own config validation, by name and
before any run is created; the URL is read at run time from ``$GRIDSHIFT_RESULTS_URL``, and one that carries a
credential there fails the run without being quoted. After each case every file under the home is scanned.
"""

from __future__ import annotations

from pathlib import Path

import dagster as dg
import pytest

from dagster_project import runner
from dagster_project.definitions import build_defs
from dagster_project.partitions import sweep_key
from dagster_project.resources import GridshiftResource
from gridshift.home import RESULTS_URL_ENV, Home

SECRET = "wJalrXUtnFEMI-K7MDENG-bPxRfiCYzSECRET"  # as long as an AWS secret key, unlike anything else written
HOSTILE_URLS = [
    f"s3://AKIAIOSFODNN7EXAMPLE:{SECRET}@bucket/gridshift",  # user-info
    f"s3://bucket/gridshift?X-Amz-Signature={SECRET}",  # a pre-signed URL's signature
    f"file://user:{SECRET}@localhost/tmp/results",
]
QUIET = {"loggers": {"console": {"config": {"log_level": "ERROR"}}}}
#: the sweep as a user launches it: the partitioned asset job, and the Dask job
JOBS = {"benchmark_sweep": "benchmark_run", "benchmark_sweep_dask": "run_sweep_on_dask"}


def files_holding(root: Path, text: str) -> list[str]:
    """Every file under ``root`` whose bytes hold ``text`` (the run databases, event logs, compute logs,
    the warehouse...)."""
    return [str(p) for p in root.rglob("*") if p.is_file() and not p.is_symlink() and text.encode() in p.read_bytes()]


@pytest.fixture
def home(tmp_path, bundle) -> Home:
    h = Home(tmp_path / "home").ensure()
    (h.bundles_dir / bundle.name).symlink_to(bundle)
    return h


def _launch(home: Home, job: str, cfg: dict, instance: dg.DagsterInstance) -> dg.ExecuteInProcessResult:
    defs = build_defs({"gridshift": GridshiftResource(home=str(home.root))})
    partition = str(sweep_key("local_only", 1)) if job == "benchmark_sweep" else None
    return defs.resolve_job_def(job).execute_in_process(
        run_config={**QUIET, "ops": {JOBS[job]: {"config": cfg}}}, instance=instance, partition_key=partition,
        raise_on_error=False)


@pytest.mark.parametrize("job", list(JOBS))
def test_a_results_url_in_run_config_is_refused_before_any_run_is_stored(home, bundle, job, monkeypatch):
    monkeypatch.setenv("HOSTILE_RESULTS", HOSTILE_URLS[0])
    with runner.open_instance(home) as instance:
        for given in [*HOSTILE_URLS, {"env": "HOSTILE_RESULTS"}]:
            with pytest.raises(dg.DagsterInvalidConfigError) as err:
                _launch(home, job, {"bundle_id": bundle.name, "days": 1.0, "results_url": given}, instance)
            assert f'unexpected config entry "results_url" at path root:ops:{JOBS[job]}:config' in str(err.value)
            assert SECRET not in str(err.value)
        assert instance.get_runs() == []  # refused before the run was created: no run config stored
    assert any(home.dagster_dir.rglob("*.db"))  # the instance's storages exist, and were scanned
    assert files_holding(home.root, SECRET) == []
    assert not home.results_dir.exists()


@pytest.mark.parametrize("url", HOSTILE_URLS)
def test_a_credential_in_the_environments_url_fails_the_run_unquoted(home, bundle, url, monkeypatch, run_counter):
    monkeypatch.setenv(RESULTS_URL_ENV, url)
    with runner.open_instance(home) as instance:
        res = _launch(home, "benchmark_sweep", {"bundle_id": bundle.name, "days": 1.0}, instance)
        assert not res.success
        (failure,) = [str(e.event_specific_data.error) for e in res.all_events if e.is_step_failure]
        assert f"{RESULTS_URL_ENV}: results URL" in failure
        assert ("no credentials in the URL" if "@" in url else "no query or fragment allowed") in failure
        assert SECRET not in failure and "***" in failure
        (run,) = instance.get_runs()
        assert "results_url" not in str(run.run_config) and SECRET not in str(run.run_config)
    assert run_counter.calls == []  # refused before simulating
    assert files_holding(home.root, SECRET) == []


def test_the_results_url_is_read_from_the_environment_at_run_time(home, bundle, tmp_path, monkeypatch):
    shared = tmp_path / "shared-results-c41e"  # a folder outside the home
    monkeypatch.setenv(RESULTS_URL_ENV, str(shared))
    with runner.open_instance(home) as instance:
        res = _launch(home, "benchmark_sweep", {"bundle_id": bundle.name, "days": 1.0}, instance)
        assert res.success
        (run,) = instance.get_runs()
        assert "shared-results" not in str(run.run_config)  # the run's config holds no URL
    (obj,) = shared.rglob("*.parquet")
    assert obj.name == "local_only.seed-1.parquet" and not home.results_dir.exists()
    # the Dagster run records (run database, event logs, compute logs) never saw the URL; the warehouse index
    # records where each object is (what it is for)
    assert files_holding(home.dagster_dir, "shared-results-c41e") == []
    assert files_holding(home.root, "shared-results-c41e") == [str(home.warehouse_path)]
