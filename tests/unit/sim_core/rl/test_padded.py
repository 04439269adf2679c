"""The padded multi-action mode (``max_tasks``): fixed-length actions with a mask, Gymnasium's and
stable-baselines3's checkers, and the same trajectories as the list multi-action mode."""

from __future__ import annotations

import warnings

import gymnasium
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env

from sim_core.gym import TASK_SCHEDULING_ID, TaskSchedulingEnv


def test_gymnasium_checker_passes_in_padded_multi_action_mode(busy):
    env = gymnasium.make(TASK_SCHEDULING_ID, bundle=busy, single_action=False, max_tasks=16, days=0.25,
                         render_mode="ansi")
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # any checker warning fails the test
        check_env(env.unwrapped)


@pytest.mark.parametrize("kw", [{"single_action": True}, {"single_action": False, "max_tasks": 16},
                                {"single_action": False, "max_tasks": 4, "allow_defer": False}])
def test_sb3_checker_passes_in_both_action_modes(busy, kw):
    pytest.importorskip("stable_baselines3", reason="the optional rl extra is not installed")
    from stable_baselines3.common.env_checker import check_env as sb3_check_env

    env = TaskSchedulingEnv(busy, days=0.25, **kw)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        sb3_check_env(env, warn=True)


@pytest.mark.parametrize("max_tasks", [2, 64])
def test_padded_mode_is_the_list_mode_with_the_overflow_deferred(busy, max_tasks):
    """Padded and list modes, same seed, the padded action's slots given to the first max_tasks pending tasks and
    0 (defer) to the rest: identical rewards, feature rows and results; the mask marks the slots in use."""
    pad = TaskSchedulingEnv(busy, single_action=False, max_tasks=max_tasks, seed=4)
    lst = TaskSchedulingEnv(busy, single_action=False, seed=4)
    po, _ = pad.reset(seed=4)
    lo, _ = lst.reset(seed=4)
    rng = np.random.default_rng(0)
    overflowed = 0
    done = False
    while not done:
        pn = lst.n_pending
        used = min(pn, max_tasks)
        assert po["mask"].tolist() == [1] * used + [0] * (max_tasks - used)
        rows = po["tasks"].reshape(max_tasks, len(pad.task_feature_names))
        if used:
            np.testing.assert_array_equal(rows[:used], np.stack(lo[:used]))
        assert not rows[used:].any()
        masks = pad.action_masks().reshape(max_tasks, pad.n_actions)
        assert masks[:used].all() and not masks[used:, 1:].any()
        a = rng.integers(0, pad.n_actions, max_tasks)
        la = np.zeros(pn, np.int64)
        la[:used] = a[:used]
        overflowed += pn - used
        po, pr, done, _, _ = pad.step(a)
        lo, lr, ldone, _, _ = lst.step(la)
        assert pr == lr and done == ldone
    assert pad.result().totals == lst.result().totals
    if max_tasks == 2:
        assert overflowed > 100  # the case exercises the overflow


def test_padded_mode_rejects_bad_input(busy):
    env = TaskSchedulingEnv(busy, single_action=False, max_tasks=3, days=0.25)
    env.reset(seed=0)
    with pytest.raises(ValueError, match="takes 3 ints"):
        env.step(np.zeros(2, np.int64))
    with pytest.raises(TypeError, match="must be integers"):
        env.step(np.zeros(3))
    for bad in (0, 65_537, 10**12, 2**63 - 1):  # past the limit: a MemoryError (or worse) before
        with pytest.raises(ValueError, match=r"max_tasks must be None or an integer in 1\.\.65,536 .*got"):
            TaskSchedulingEnv(busy, single_action=False, max_tasks=bad)
    with pytest.raises(ValueError, match="pass single_action=False"):
        TaskSchedulingEnv(busy, single_action=True, max_tasks=4)
    with pytest.raises(ValueError, match="for the padded multi-action mode"):
        TaskSchedulingEnv(busy, single_action=False).action_masks()
