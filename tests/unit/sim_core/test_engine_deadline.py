"""engine.begin_step at its boundaries, on hand-made tasks: a task arrives in the step whose interval
``[t, t + 900 s)`` holds its arrival; one undecided at the exact second of its deadline is forced to its origin
(or, where it cannot fit, to the fallback), one with a second left is not; releases free capacity."""

from __future__ import annotations

import numpy as np
import pytest

from sim_core.engine.layout import (
    N_OPTS,
    OPT_LOCALITY,
    SC_FORCED,
    SC_NEXT_ARRIVAL,
    SC_PEND_N,
    ST_NOT_ARRIVED,
    ST_PENDING,
    ST_QUEUED,
    ST_UNSCHEDULABLE,
    Ctx,
    Tasks,
    new_state,
)
from sim_core.engine.step import begin_step

T0 = 1_000_000.0
CAP = np.array([[64.0, 8.0, 512.0], [16.0, 0.0, 128.0]])


@pytest.fixture(scope="module", autouse=True)
def warm_jit():
    """This module needs no policy run (overrides the package's session warm-up)."""


def engine(arrival, deadline, origin, cores=None, gpus=None, n_steps=4):
    n = len(arrival)
    f = lambda v, x: np.asarray(v if v is not None else [x] * n, np.float64)  # noqa: E731
    z = np.zeros(n)
    T = Tasks(arrival=f(arrival, 0), duration=np.full(n, 600.0), cores=f(cores, 1.0), gpus=f(gpus, 0.0),
              mem=np.full(n, 1.0), bw=z.copy(), deadline=f(deadline, 0), origin=np.asarray(origin, np.int32),
              u_rand=z.copy(), max_delay=z.copy(), interruptible=np.zeros(n, np.bool_), ckpt=z.copy(),
              smin=np.ones(n), smax=np.ones(n), mthr=np.ones(n), flexible=np.zeros(n, np.bool_),
              ds=np.full(n, -1, np.int32), ds_gb=z.copy())
    n_dc = CAP.shape[0]
    C = Ctx(cap=CAP, carbon=np.zeros((n_dc, n_steps)), price=np.zeros((n_dc, n_steps)),
            delay_s_per_gb=np.zeros((n_dc, n_dc)), rtt_s=np.zeros((n_dc, n_dc)), t0=T0, n_steps=n_steps,
            opts=np.zeros(N_OPTS), qmin=np.zeros((n_dc, 3)), srv_cfg=np.zeros((n_dc, 1)))
    S = new_state(n, n_dc, n_steps)
    S.free[:] = CAP
    return T, S, C


def test_arrivals_join_the_step_that_holds_them():
    # step 1 is [T0 + 900, T0 + 1800): its last microsecond is in, its end is the next step's
    T, S, C = engine([T0 + 900.0, T0 + 1799.999999, T0 + 1800.0], [T0 + 9000.0] * 3, [0, 0, 0])
    assert begin_step(T, S, C, 0) == 0
    assert begin_step(T, S, C, 1) == 2
    assert list(S.status) == [ST_PENDING, ST_PENDING, ST_NOT_ARRIVED]
    assert list(S.pend[:2]) == [0, 1] and S.sc[SC_NEXT_ARRIVAL] == 2 and S.sc[SC_PEND_N] == 2
    assert begin_step(T, S, C, 2) == 3 and S.sc[SC_NEXT_ARRIVAL] == 3 and S.pend[2] == 2


def test_a_request_that_fits_nowhere_is_unschedulable():
    T, S, C = engine([T0, T0 + 10.0, T0 + 20.0], [T0 + 9000.0] * 3, [0, 1, 1], cores=[65.0, 64.0, 1.0],
                     gpus=[0.0, 8.0, 9.0])
    assert begin_step(T, S, C, 0) == 1
    assert list(S.status) == [ST_UNSCHEDULABLE, ST_PENDING, ST_UNSCHEDULABLE]
    assert S.pend[0] == 1 and S.sc[SC_NEXT_ARRIVAL] == 3


def test_forced_at_the_exact_second_of_the_deadline_not_a_second_before():
    t1 = T0 + 900.0  # step 1 starts
    T, S, C = engine([T0 + 5.0, T0 + 6.0, T0 + 7.0], [t1, t1 + 1.0, t1 - 1.0], [1, 0, 0], cores=[2.0, 3.0, 4.0])
    assert begin_step(T, S, C, 0) == 3 and S.sc[SC_FORCED] == 0  # no deadline yet at T0
    assert begin_step(T, S, C, 1) == 1  # tasks 0 and 2 forced, task 1 still pending
    assert S.sc[SC_FORCED] == 2 and S.pend[0] == 1
    assert list(S.forced) == [1, 0, 1] and list(S.dest) == [1, -1, 0]
    assert S.decision[0] == t1 and S.decision[2] == t1 and np.isnan(S.decision[1])
    assert list(S.status) == [ST_QUEUED, ST_PENDING, ST_QUEUED]  # local: queued in the same step
    assert list(S.q_len) == [1, 1]
    np.testing.assert_array_equal(S.commit, [[4.0, 0.0, 1.0], [2.0, 0.0, 1.0]])
    np.testing.assert_array_equal(S.qdem, [[4.0, 0.0, 1.0], [2.0, 0.0, 1.0]])
    assert begin_step(T, S, C, 2) == 0 and S.sc[SC_FORCED] == 3 and S.dest[1] == 0
    assert S.decision[1] == T0 + 1800.0


def test_forced_decision_time_is_never_before_arrival_and_falls_back_when_origin_cannot_fit():
    # arrives in step 1 with its deadline already passed; its origin (DC 1) has no GPU: the fallback is DC 0
    T, S, C = engine([T0 + 950.0], [T0 + 900.0], [1], cores=[4.0], gpus=[2.0])
    assert begin_step(T, S, C, 1) == 0
    assert S.dest[0] == 0 and S.forced[0] == 1 and S.decision[0] == T0 + 950.0
    assert S.sc[SC_FORCED] == 1 and S.q_len[0] == 1


def test_releases_free_capacity_and_uncommit_at_their_step():
    T, S, C = engine([T0 + 9000.0], [T0 + 99999.0], [0])
    S.commit[:] = [[10.0, 2.0, 100.0], [5.0, 0.0, 50.0]]
    S.free[:] = CAP - S.commit
    S.rel[:, :, 1] = [[3.0, 1.0], [1.0, 0.0], [30.0, 10.0]]  # (resource, dc)
    S.rel[:, :, 2] = 100.0  # a later step's releases stay put
    begin_step(T, S, C, 1)
    np.testing.assert_array_equal(S.commit, [[7.0, 1.0, 70.0], [4.0, 0.0, 40.0]])
    np.testing.assert_array_equal(S.free, [[57.0, 7.0, 442.0], [12.0, 0.0, 88.0]])


def test_a_forced_task_leaves_its_dataset_replica_at_its_origin_under_locality():
    T, S, C = engine([T0 + 5.0], [T0 + 900.0], [1])
    T.ds[0] = 0
    C.opts[OPT_LOCALITY] = 1.0
    begin_step(T, S, C, 1)
    assert S.rep[1, 0] == T0 + 900.0 and S.rep[0, 0] == -np.inf and S.gb[0] == 0.0
    T, S, C = engine([T0 + 5.0], [T0 + 900.0], [1])
    T.ds[0] = 0
    begin_step(T, S, C, 1)  # locality off: no replica is recorded
    assert S.rep[1, 0] == -np.inf
