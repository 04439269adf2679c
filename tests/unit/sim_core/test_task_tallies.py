"""The run's per-task accounting (sim_core.result._task_tallies) on hand-made tasks at its boundaries: a task
that finishes at the window's exact last second is completed, one a microsecond later is not; a wait of zero
counts; a violated SLA counts once per task, whatever its other state."""

from __future__ import annotations

import numpy as np
import pytest

from sim_core import engine as E
from sim_core.result import TALLIES, _task_tallies

T_END = 3_600.0
NAN = np.nan


@pytest.fixture(scope="module", autouse=True)
def warm_jit():
    """This module needs no policy run (overrides the package's session warm-up)."""


def tallies(rows):
    """rows: (status, dest, origin, start, arrival, finish, violated) per task."""
    cols = list(zip(*rows, strict=True))
    status = np.array(cols[0], np.int8)
    dest, origin = np.array(cols[1], np.int32), np.array(cols[2], np.int32)
    start, arrival, finish = (np.array(c, np.float64) for c in cols[3:6])
    cnt, wait = _task_tallies(status, dest, origin, start, arrival, finish, np.array(cols[6], np.int8), T_END)
    return dict(zip(TALLIES, cnt.tolist(), strict=True)), wait


def test_completion_at_the_windows_last_second():
    got, wait = tallies([
        (E.ST_STARTED, 0, 0, 100.0, 100.0, T_END, 0),          # ends exactly at the window's end: completed
        (E.ST_STARTED, 0, 0, 200.0, 50.0, T_END + 1e-6, 0),    # a microsecond later: not
        (E.ST_STARTED, 1, 0, 300.0, 0.0, 1_000.0, 1),          # completed late, remote, SLA violated
    ])
    assert got["tasks_started"] == 3 and got["tasks_completed"] == 2
    assert got["tasks_remote"] == 1 and got["sla_violations"] == 1 and got["n_waits"] == 3
    assert got["tasks_in_transit_at_end"] == got["tasks_queued_at_end"] == got["tasks_pending_at_end"] == 0
    np.testing.assert_array_equal(wait, [0.0, 150.0, 300.0])


def test_states_at_the_end_each_counted_once():
    got, wait = tallies([
        (E.ST_UNSCHEDULABLE, -1, 0, NAN, 0.0, NAN, 0),
        (E.ST_PENDING, -1, 1, NAN, 10.0, NAN, 0),
        (E.ST_QUEUED, 1, 1, NAN, 20.0, NAN, 0),           # queued, never started
        (E.ST_QUEUED, 0, 1, 30.0, 20.0, NAN, 1),          # started, paused, now queued to resume
        (E.ST_PAUSED, 1, 1, 40.0, 25.0, NAN, 2),          # any non-zero flag is a violation
        (E.ST_TRANSIT, 0, 1, NAN, 30.0, NAN, 0),
        (E.ST_STARTED, 1, 1, 50.0, NAN, 60.0, 0),         # a wait that is not a number is not averaged
    ])
    assert got == {"tasks_started": 3, "tasks_completed": 1, "tasks_unschedulable": 1, "tasks_pending_at_end": 1,
                   "tasks_queued_at_end": 1, "tasks_paused_at_end": 1, "tasks_resuming_at_end": 1,
                   "tasks_in_transit_at_end": 1, "tasks_remote": 2, "sla_violations": 2, "n_waits": 2}
    np.testing.assert_array_equal(wait, [0.0, 0.0, 0.0, 10.0, 15.0, 0.0, 0.0])
