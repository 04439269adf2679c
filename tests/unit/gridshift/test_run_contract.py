"""A run object's metrics against the run contract (``gridshift.run_contract``) and its labels against each
other: each rule refused by name (the URL, the metric, its value), checked on every object read."""

from __future__ import annotations

import io
import math
import re

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from gridshift.errors import DataError
from gridshift.results import decode_run, encode_run
from gridshift.run_contract import METRIC_BOUNDS, NAN_ALLOWED, check_metrics
from sim_core.bench.metrics import METRIC_NAMES
from tests.unit.gridshift.test_results_store import Record

#: a run's metrics as the simulator reports them (identities kept: pue = 1.25, 40 kg = 0.4 kg/kWh, ...)
GOOD = {"total_kwh": 100.0, "it_kwh": 80.0, "pue": 1.25, "it_idle_kwh": 20.0, "it_sleep_kwh": 0.0,
        "it_wake_kwh": 0.0, "idle_share_of_it": 0.25, "cost_usd": 12.0, "carbon_kg": 40.0, "water_l": 160.0,
        "wue_l_per_kwh": 2.0, "transfer_cost_usd": 0.5, "transfer_kwh": 1.0, "transfer_carbon_kg": 0.3,
        "cost_incl_transfer_usd": 12.5, "carbon_incl_transfer_kg": 40.3, "work_gpu_hours": 8.0,
        "work_core_hours": 64.0, "work_left_gpu_hours": 0.0, "drain_steps": 3.0, "charged_carbon_kg": 0.0,
        "carbon_kg_per_gpu_hour": 5.0, "carbon_kg_per_core_hour": 0.625, "kwh_per_gpu_hour": 12.5,
        "cost_usd_per_gpu_hour": 1.5, "sla_violation_rate": 0.25, "sla_violations": 2.0, "mean_wait_s": 30.0,
        "tasks": 10.0, "tasks_started": 8.0, "tasks_completed": 8.0, "tasks_remote": 3.0, "tasks_unschedulable": 0.0,
        "tasks_forced": 0.0, "unmet_cooling_kwh": 0.0, "mean_cpu_util_frac": 0.4, "mean_gpu_util_frac": math.nan,
        "mean_mem_util_frac": 0.1}


def test_the_contract_covers_every_metric_of_the_simulator():
    assert set(METRIC_BOUNDS) == set(METRIC_NAMES) == set(GOOD)
    assert set(METRIC_BOUNDS) >= NAN_ALLOWED


def test_a_consistent_run_passes():
    check_metrics(GOOD, file="u")


@pytest.mark.parametrize(("name", "value", "match"), [
    ("carbon_kg", -1_000_000.0, "outside [0, 1e+14]"),
    ("total_kwh", math.nan, "is NaN"),
    ("transfer_kwh", math.inf, "outside"),
    ("mean_cpu_util_frac", 1.5, "outside [0, 1]"),
    ("tasks", 10.5, "not a whole number"),
    ("pue", 0.5, "outside [1, inf]"),
    ("carbon_incl_transfer_kg", 41.0, "breaks its identity with carbon_kg, charged_carbon_kg, transfer_carbon_kg"),
    ("pue", 1.3, "breaks its identity with total_kwh, it_kwh"),
    ("sla_violation_rate", 0.5, "breaks its identity"),
    ("carbon_kg", 600.0, "above 500.0: at most 5 kg/kWh"),
    ("it_kwh", 120.0, "the facility energy includes the IT energy"),
    ("tasks_started", 11.0, "a task starts only after it arrives"),
    ("bogus_kwh", 1.0, "not a metric of the run contract"),
])
def test_each_rule_is_refused_by_name(name, value, match):
    with pytest.raises(DataError, match=re.escape(match)) as err:
        check_metrics({**GOOD, name: value}, file="s3://team/results/x.parquet")
    assert err.value.column == name and err.value.file == "s3://team/results/x.parquet"


def _reencoded(mutate) -> bytes:
    table = mutate(pq.read_table(io.BytesIO(encode_run(Record()))))
    sink = io.BytesIO()
    pq.write_table(table, sink)
    return sink.getvalue()


def _set(table: pa.Table, name: str, value, typ) -> pa.Table:
    return table.set_column(table.column_names.index(name), name, pa.array([value], typ))


@pytest.mark.parametrize(("mutate", "column", "match"), [
    (lambda t: _set(t, "options_sha256", "b" * 64, pa.string()), "options_sha256", "not the sha256 of its options"),
    (lambda t: _set(t, "forecast", "perfect", pa.string()), "forecast", "not the forecast of its options_json"),
    (lambda t: _set(t, "n_steps", 5, pa.int64()), "series", "not n_steps x n_dc = 5 x 1"),
    (lambda t: _set(t, "n_dc", 0, pa.int64()), "n_dc", "not a positive count"),
    (lambda t: _set(t, "carbon_kg", -1e6, pa.float64()), "carbon_kg", "outside [0, 1e+14]"),
])
def test_an_object_whose_labels_disagree_is_refused(mutate, column, match):
    with pytest.raises(DataError, match=re.escape(match)) as err:
        decode_run(_reencoded(mutate), "s3://team/x.parquet")
    assert err.value.column == column and err.value.file == "s3://team/x.parquet"


def test_a_huge_object_is_refused_from_its_size(tmp_path):
    from gridshift.results import read_object

    big = tmp_path / "big.parquet"
    with open(big, "wb") as fh:
        fh.truncate((1 << 30) + 1)  # sparse
    with pytest.raises(DataError, match="the object is 1,073,741,825 bytes, above the limit") as err:
        read_object(str(big))
    assert err.value.file == str(big)
