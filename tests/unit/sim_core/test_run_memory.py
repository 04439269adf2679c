"""What a run holds per task (issue 34 item 4): a run given a bundle path consumes the scenario it loads as it takes
its window (``Prepared(consume=True)``, ``simulator.window_tasks``), and a run that has stepped drops the arrays only
the engine reads before its results (``Prepared.end_stepping``). Neither may change a result: the runs from the
path reproduce the golden bundle's recorded digests bit for bit (the digests themselves are recorded from runs of a
loaded Scenario, tests/unit/sim_core/test_golden_totals.py), and a caller's Scenario is never consumed."""

from __future__ import annotations

import json

import numpy as np
import pytest

import sim_core
from sim_core.engine import Tasks
from sim_core.policies import registry
from sim_core.simulator import ENGINE_ONLY_STATE_FIELDS, ENGINE_ONLY_TASK_FIELDS, Prepared
from tests.unit.sim_core.test_golden_totals import DRAIN_DAYS, DRAINED, drained_digests, golden_bundle

#: the bundle's task columns (``Scenario``) a consuming run drops
TASK_COLUMNS = ("task_id", "arrival_s", "duration_s", "cpu_cores", "gpus", "mem_gb", "gpu_mem_gb", "bandwidth_gb",
                "max_delay_s", "interruptible", "checkpoint_s", "min_scale", "max_scale", "marginal_throughput")


@pytest.fixture(scope="module")
def golden_path(tmp_path_factory):
    return golden_bundle(tmp_path_factory.mktemp("golden_path"))


@pytest.mark.parametrize("policy", sim_core.POLICIES)
def test_a_run_from_the_bundle_path_reproduces_the_recorded_digests(golden_path, policy):
    """Every policy (the stateful baselines take their job history before the window consumes the columns)."""
    assert drained_digests(golden_path, policy) == json.loads(DRAINED.read_text())[policy]


def test_a_callers_scenario_is_never_consumed(golden_path):
    sc = sim_core.load(golden_path)
    before = {c: getattr(sc, c).copy() for c in TASK_COLUMNS}
    sim_core.run(sc, "carbonflex", seed=5, days=DRAIN_DAYS)
    sim_core.run(sc, "lowest_carbon", seed=5, days=DRAIN_DAYS)
    for c in TASK_COLUMNS:
        np.testing.assert_array_equal(getattr(sc, c), before[c], err_msg=c)


def _same_tasks(a, b, what: str) -> None:
    for name, x, y in zip(a._fields, a, b, strict=True):
        assert x.dtype == y.dtype and x.flags.c_contiguous == y.flags.c_contiguous, name  # (one compiled kernel)
        np.testing.assert_array_equal(x, y, err_msg=f"{what}.{name}")


def test_a_consuming_set_up_drops_every_task_column_and_builds_the_same_window(golden_path):
    """From day 3 on: CarbonFlex's job history (the two days before) is taken before the window consumes the
    columns."""
    spec = registry.get("carbonflex")
    kw = dict(start=2 * 96, days=1, policy_code=spec.code, controls=True)
    kept = Prepared(sim_core.load(golden_path), 5, **kw)
    sc = sim_core.load(golden_path)
    eaten = Prepared(sc, 5, consume=True, **kw)
    assert all(getattr(sc, c) is None for c in TASK_COLUMNS)
    assert eaten.tasks.arrival.shape[0] == kept.tasks.arrival.shape[0] > 500
    _same_tasks(kept.tasks, eaten.tasks, "tasks")
    np.testing.assert_array_equal(kept.task_id, eaten.task_id)
    past = [(n, a, b) for n, a, b in zip(kept.plan._fields, kept.plan, eaten.plan, strict=True)
            if isinstance(a, Tasks)]
    assert past and past[0][1].arrival.shape[0] > 1000  # (two days of jobs)
    for name, a, b in past:
        _same_tasks(a, b, f"plan.{name}")


def test_end_stepping_drops_only_what_no_result_reads(golden_path):
    """The fields dropped are gone; the results are those of the recorded digests (above and in
    test_golden_totals, whose runs all end their stepping)."""
    prep = Prepared(golden_path, 5, days=1, policy_code=registry.get("lowest_carbon").code)
    prep.end_stepping()
    assert all(getattr(prep.tasks, f) is None for f in ENGINE_ONLY_TASK_FIELDS)
    assert all(getattr(prep.state, f) is None for f in ENGINE_ONLY_STATE_FIELDS)
    assert prep.tasks.arrival is not None and prep.state.start is not None
