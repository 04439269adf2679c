"""engine.queues._resume_segment: a resumed task's new run segment and its SLA decided again, at the deadline's
exact second (on time) and just past it (late), with the step's net count of violations (hand-computed)."""

from __future__ import annotations

import numpy as np
import pytest

from sim_core.engine.queues import _resume_segment


@pytest.fixture(scope="module", autouse=True)
def warm_jit():
    """This module needs no policy run (overrides the package's session warm-up)."""


def resume(deadline: float, was_violated: int, *, s: float = 1_000.0):
    """Task 1 of 2 at DC 1, step 2: checkpoint 30 s, 600 s of work left at scale 1, resumed at scale 2 with a
    marginal throughput of 0.5 (speed-up 1.5): the segment is 30 + 600 / 1.5 = 430 s."""
    ckpt, mthr, dl = np.array([0.0, 30.0]), np.array([1.0, 0.5]), np.array([0.0, deadline])
    rem, scale = np.array([0.0, 600.0]), np.array([1.0, 2.0])
    segs, nseg, run_s = np.array([0.0, 100.0]), np.array([0, 2], np.int32), np.array([0.0, 700.0])
    m_viol = np.zeros((2, 4), np.int64)
    violated = np.array([0, was_violated], np.int8)
    f = _resume_segment(1, 1, 2, s, ckpt, mthr, dl, rem, scale, segs, nseg, run_s, m_viol, violated)
    return f, segs, nseg, run_s, m_viol, violated


def test_segment_finish_and_bookkeeping():
    f, segs, nseg, run_s, _m, _v = resume(5_000.0, 0)
    assert f == 1_430.0
    assert segs.tolist() == [0.0, 1_000.0] and nseg.tolist() == [0, 3] and run_s.tolist() == [0.0, 1_130.0]


def test_finishing_at_the_deadlines_exact_second_is_on_time():
    f, *_, m_viol, violated = resume(1_430.0, 0)
    assert f == 1_430.0 and violated.tolist() == [0, 0] and not m_viol.any()


def test_a_millisecond_late_is_a_violation_counted_in_its_step():
    *_, m_viol, violated = resume(1_429.999, 0)
    assert violated.tolist() == [0, 1] and m_viol[1, 2] == 1 and m_viol.sum() == 1


def test_a_violation_withdrawn_when_the_new_segment_is_on_time():
    *_, m_viol, violated = resume(1_430.0, 1)
    assert violated.tolist() == [0, 0] and m_viol[1, 2] == -1 and m_viol.sum() == -1
    *_, m_viol, violated = resume(1_000.0, 1)  # still late: no net change
    assert violated.tolist() == [0, 1] and not m_viol.any()
