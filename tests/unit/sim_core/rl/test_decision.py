"""TaskDecisionEnv (sim_core/rl/decision.py): one decision per task, masks, the dense carbon reward."""

from __future__ import annotations

import numpy as np
import pytest

import sim_core
from sim_core.physics import P_CORES_PER_SERVER, P_CPU_MAX, P_GPU_MAX
from sim_core.rl.decision import LATE_PENALTY_KG, REWARD_NORM_KG, TaskDecisionEnv
from sim_core.testing import tiny_bundle

from .conftest import busy_bundle


@pytest.fixture(scope="module")
def roomy(tmp_path_factory):
    """The busy bundle's workload on sites ten times larger: every task fits at its origin on arrival."""
    return sim_core.load(busy_bundle(tmp_path_factory.mktemp("roomy"), total_cores=[480, 320, 640],
                                     total_gpus=[40, 20, 40], total_mem_gb=[5120, 2560, 5120]))


def _episode(env, pick, seed=0):
    obs, _ = env.reset(seed=seed)
    out, done = [], False
    while not done:
        m = env.action_masks()
        assert m.any() and m.shape == (env.n_actions,)
        assert np.array_equal(obs[env.feature_names.index("valid_defer"):][: env.n_actions], m.astype(np.float32))
        a = pick(env, obs, m)
        obs, r, done, trunc, info = env.step(a)
        assert not trunc and obs.shape == env.observation_space.shape
        out.append((info["action"], r, info["repaired"]))
    return out


def _origin(env, obs, m):
    return int(np.argmax(obs[4:4 + env.n_dc])) + 1


def test_home_on_arrival_earns_zero_and_equals_local_only(roomy):
    """Every task run at its origin in its arrival step is its own baseline: reward exactly 0, and the run is
    local_only's, total for total (the sites always have room: no repair, no wait)."""
    env = TaskDecisionEnv(roomy, seed=3)
    steps = _episode(env, _origin, seed=3)
    assert len(steps) == roomy.n_tasks  # one decision per task, none deferred
    assert all(r == 0.0 and not rep for _, r, rep in steps)
    got, want = env.result().totals, sim_core.run(roomy, "local_only", seed=3).totals
    for k in ("carbon_incl_transfer_kg", "carbon_kg", "transfer_carbon_kg", "sla_violations", "cost_incl_transfer_usd"):
        assert got[k] == pytest.approx(want[k], rel=1e-12), k


def test_a_move_earns_the_carbon_it_saves(roomy):
    """Sending a task to another site earns (energy x (origin's - site's actual mean intensity over the run)
    - the moved GB's emissions) / norm, computed here from the bundle's own arrays."""
    env = TaskDecisionEnv(roomy, seed=0)
    obs, _ = env.reset(seed=0)
    T = env.sim.prep.tasks
    i = int(env.sim.prep.state.pend[0])
    o = int(T.origin[i])
    d = (o + 1) % env.n_dc
    k, t0 = env._k, env.sim.prep.ctx.t0
    _, r, _, _, info = env.step(d + 1)
    assert not info["repaired"]
    ci = roomy.carbon_g_per_kwh
    p = roomy.params

    def run_kg(site, ts):
        a, b = int((ts - t0) // 900), int(np.ceil((ts - t0 + T.duration[i]) / 900))
        e = (T.cores[i] * p[site, P_CPU_MAX] / p[site, P_CORES_PER_SERVER] + T.gpus[i] * p[site, P_GPU_MAX]) \
            * T.duration[i] / 3.6e6
        return e * ci[site, a:b].mean() / 1000.0

    delay = T.bw[i] * env.sim.prep.ctx.delay_s_per_gb[o, d] + env.sim.prep.ctx.rtt_s[o, d]
    moved = T.bw[i] * float(env.sim.prep.options.transfer_kwh_per_gb) * ci[o, k] / 1000.0  # (no replica yet)
    want = (run_kg(o, T.arrival[i]) - run_kg(d, T.arrival[i] + delay) - moved) / REWARD_NORM_KG
    assert r == pytest.approx(want, rel=1e-9)
    assert r != 0.0


def test_masks_keep_every_placement_in_room_and_on_time(roomy, busy):
    """Picking any valid site never makes a task late where a site has room (random valid choices on the roomy
    cluster: no late task, no repair, many moves); an invalid pick is repaired to the origin (or the first
    valid choice), and the repair is reported."""
    env = TaskDecisionEnv(roomy, seed=1)
    rng = np.random.default_rng(0)
    steps = _episode(env, lambda e, o, m: int(rng.choice(np.flatnonzero(m))), seed=1)
    assert not any(rep for *_, rep in steps)
    tot = env.result().totals
    assert env.late_tasks == tot["sla_violations"] == 0 and tot["transfer_carbon_kg"] > 0
    tight = TaskDecisionEnv(busy, seed=1)
    steps = _episode(tight, lambda e, o, m: 2, seed=1)  # (always site 1, valid or not)
    assert any(rep for *_, rep in steps) and any(a != 2 for a, _, rep in steps if rep)
    assert all(a == 2 for a, _, rep in steps if not rep)
    assert tight.late_tasks == tight.result().totals["sla_violations"]


def test_where_the_task_fits_nowhere_it_may_queue_at_any_site_on_time(busy):
    """The site masks, recomputed from the environment's own state at every decision of a tight cluster: where some
    site has room, the valid sites are those with room that the task reaches in time; where none has room, every
    site it reaches in time (it queues wherever it goes: the policy chooses where); with neither, the origin."""
    env = TaskDecisionEnv(busy, seed=0)
    env.reset(seed=0)
    T = env.sim.prep.tasks
    seen = {"room": 0, "nowhere": 0, "wider": 0}
    done = False
    while not done:
        m = env.action_masks()
        i = int(env._pend[env._q])
        room = np.array([T.cores[i] <= a[0] + 1e-9 and T.gpus[i] <= a[1] + 1e-9 and T.mem[i] <= a[2] + 1e-9
                         for a in env._avail])
        on_time = np.array([max(env._t, T.arrival[i]) + env._delay_s(i, d) + T.duration[i] <= T.deadline[i]
                            for d in range(env.n_dc)])
        want = on_time & room if room.any() else on_time.copy()
        if not want.any():
            want[int(T.origin[i])] = True
        assert np.array_equal(m[1:], want) and not m[0]
        seen["room" if room.any() else "nowhere"] += 1
        origin_only = np.arange(env.n_dc) == int(T.origin[i])  # the mask before: no room anywhere -> the origin
        seen["wider"] += not room.any() and not np.array_equal(want, origin_only)
        _, _, done, _, _ = env.step(env.rule_action("lowest_carbon"))
    assert seen["room"] > 0 and seen["nowhere"] > 0 and seen["wider"] > 0, seen


def test_deferral_masked_past_the_point_of_no_return(busy):
    env = TaskDecisionEnv(busy, seed=0, allow_defer=True)
    obs, _ = env.reset(seed=0)
    n_defer_masked = 0
    done = False
    while not done:
        m = env.action_masks()
        i = int(env._pend[env._q])
        T = env.sim.prep.tasks
        can_wait = env._t + 900 + T.duration[i] <= T.deadline[i]
        assert m[0] == can_wait
        n_defer_masked += not m[0]
        obs, _, done, _, _ = env.step(0 if m[0] else int(np.flatnonzero(m)[-1]))
    assert n_defer_masked > 0
    default = TaskDecisionEnv(busy)  # (deferral is off by default: docs/rl.md says why)
    default.reset(seed=0)
    assert not default.allow_defer and not default.action_masks()[0]


def test_same_seed_same_episode_and_late_penalty(busy):
    a, b = TaskDecisionEnv(busy, seed=4), TaskDecisionEnv(busy, seed=4)
    pick = lambda e, o, m: int(np.flatnonzero(m)[0])  # noqa: E731
    assert _episode(a, pick, seed=4) == _episode(b, pick, seed=4)
    assert LATE_PENALTY_KG == 100.0


def test_bad_arguments_raise(tmp_path):
    sc = sim_core.load(tiny_bundle(tmp_path))
    with pytest.raises(ValueError, match="late_penalty_kg"):
        TaskDecisionEnv(sc, late_penalty_kg=-1.0)
    with pytest.raises(ValueError, match="reward_norm_kg"):
        TaskDecisionEnv(sc, reward_norm_kg=0.0)
    with pytest.raises(ValueError, match="single_action"):
        TaskDecisionEnv(sc, single_action=True)
    with pytest.raises(ValueError, match="episode_starts"):
        TaskDecisionEnv(sc, episode_starts=[])
    env = TaskDecisionEnv(sc)
    with pytest.raises(RuntimeError, match="reset"):
        env.step(0)
    env.reset(seed=0)
    with pytest.raises(ValueError, match="out of range"):
        env.step(env.n_actions)
