"""MASAC / MADQN (sim_core.rl.marl) on the paper's decision steps (sim_core.rl.masac_env): the shared system
reward and its conservation, the discrete-SAC and DQN targets as their equations say, losses that fall on a fixed
batch, save/load without pickle, and short training runs that finish and repeat exactly under a seed."""

from __future__ import annotations

import json
import math
import re

import numpy as np
import polars as pl
import pytest

torch = pytest.importorskip("torch", reason="the optional rl extra is not installed (GRIDSHIFT_EXTRAS=rl)")

from benchmarks.reproductions import masac_utility  # noqa: E402
from sim_core.rl import marl  # noqa: E402
from sim_core.rl.masac_env import PER_SITE, JobDecisionEnv  # noqa: E402

PUE = (1.3, 1.1, 1.2)
TINY = marl.MARLConfig(epochs=2, envs_per_epoch=2, updates_per_epoch=20, batch_size=32, hidden=(32, 32),
                       max_steps=150, warmup=32, seed=3)


class Recording:
    """A JobDecisionEnv that records each step's reward and acting mask (what every agent was given)."""

    def __init__(self, env):
        self.env, self.log = env, []
        self.agents, self.obs_dim, self.n_actions, self.feature_names = (env.agents, env.obs_dim, env.n_actions,
                                                                         env.feature_names)

    def reset(self, seed=None, options=None):
        s, m = self.env.reset(seed=seed, options=options)
        self._m = m
        return s, m

    @property
    def done(self):
        return self.env.done

    def step(self, a):
        out = self.env.step(a)
        self.log.append((out[2], self._m.copy()))
        self._m = out[1]
        return out


def test_rewards_sum_to_the_runs_utility(busy):
    """Conservation: the shared rewards of an episode add up to the utility of the run computed independently
    from its result tables (Eqs. 2-7, revenue for the jobs started within their allowed delay, per-site PUE)."""
    env = JobDecisionEnv(busy, masac_params={"pue": PUE}, steps=40)
    s, m = env.reset(seed=5)
    assert s.shape == (env.obs_dim,) and env.obs_dim == 4 + len(PER_SITE) * 3
    rng = np.random.default_rng(0)
    total, n, deferred = 0.0, 0, 0
    while not env.done:
        a = rng.integers(0, env.n_actions, env.n_agents)
        deferred += int(((a == 0) & m).sum())
        s, m, r, done, _ = env.step(a)
        total += r
        n += 1
    res = env.result()
    u = masac_utility(res, busy, slack_share=None, pue=PUE)  # every GPU-hour run earns
    # less the late jobs' revenue: a one-day bundle runs its own tasks (ids as in the bundle, not realised)
    late = res.tasks.filter(pl.col("wait_s") > pl.col("max_delay_s") + 1e-6).join(
        pl.DataFrame({"task_id": busy.task_id, "gpus": busy.gpus}), on="task_id", how="left")
    assert late["gpus"].null_count() == 0
    lost = 0.05 * float((late["gpus"] * late["duration_s"]).sum()) / 3600.0
    assert total == pytest.approx(u["utility"] - lost, rel=1e-9, abs=1e-6)
    assert lost > 0.5 and deferred > 0  # the late-revenue term was exercised
    assert n == env.decisions > res.tasks.height / 3  # a decision step decides one job per acting site


def test_every_acting_agent_stores_the_same_system_reward(busy):
    rec = Recording(JobDecisionEnv(busy, steps=30))
    team = marl.MARL("masac", rec.agents, rec.obs_dim, rec.n_actions, TINY)
    buffers = [marl.Replay(10_000, rec.obs_dim) for _ in rec.agents]
    marl._run_episodes(team, [rec], [1], buffers, explore=True, max_steps=None)
    for n, b in enumerate(buffers):
        want = [r for r, m in rec.log if m[n]]
        assert b.n == len(want) > 10
        np.testing.assert_array_equal(b.r[:b.n], np.asarray(want, np.float32))
    assert sum(m.sum() > 1 for _, m in rec.log) > 5  # steps where several agents acted at once


def test_decision_steps_split_a_slot_by_origin(busy):
    """Every site decides its own queued jobs, one per decision step; answering "run at origin" everywhere gives
    the run of TaskSchedulingEnv answering each task's origin."""
    from sim_core.gym import TaskSchedulingEnv

    env = JobDecisionEnv(busy, steps=30)
    env.reset(seed=2)
    while not env.done:
        env.step(np.arange(1, env.n_agents + 1))
    ref = TaskSchedulingEnv(busy, steps=30)
    obs, _ = ref.reset(seed=2)
    o = ref.feature_names  # (any feature layout: the origin one-hot is in the per-task rows)
    assert o
    done = False
    loc = ref.task_feature_names.index("origin_AA")
    while not done:
        acts = [int(np.argmax(r[loc:loc + 3])) + 1 for r in obs]
        obs, _, done, _, _ = ref.step(acts)
    assert env.result().totals == ref.result().totals


def test_errors_are_named(busy):
    env = JobDecisionEnv(busy, steps=10)
    env.reset(seed=0)
    with pytest.raises(ValueError, match="step takes 3 integer actions"):
        env.step(np.array([1, 1]))
    while not env.acting()[0]:
        env.step(np.ones(3, np.int64))
    with pytest.raises(ValueError, match="agent AA: action 9 out of range 0..3"):
        env.step(np.array([9, 1, 1]))
    with pytest.raises(ValueError, match="pue: 2 values for 3 sites"):
        JobDecisionEnv(busy, masac_params={"pue": (1.1, 1.2)}, steps=10)
    with pytest.raises(ValueError, match="pue"):
        JobDecisionEnv(busy, masac_params={"pue": (1.1, 0.5, 1.2)}, steps=10)
    with pytest.raises(TypeError, match="sets reward itself"):
        JobDecisionEnv(busy, reward={"energy_cost": 1})


def _batch(rng, n=8, obs=5, acts=4):
    s = torch.from_numpy(rng.normal(size=(n, obs)).astype(np.float32))
    s2 = torch.from_numpy(rng.normal(size=(n, obs)).astype(np.float32))
    a = torch.from_numpy(rng.integers(0, acts, n))
    r = torch.from_numpy(rng.normal(size=n).astype(np.float32))
    d = torch.from_numpy((rng.random(n) < 0.25).astype(np.float32))
    return s, a, r, s2, d


def _np(net, x):
    """The MLP by hand (numpy): ReLU hidden layers, linear output."""
    layers = [m for m in net if isinstance(m, torch.nn.Linear)]
    h = x.numpy().astype(np.float64)
    for i, lin in enumerate(layers):
        h = h @ lin.weight.detach().numpy().T.astype(np.float64) + lin.bias.detach().numpy()
        if i < len(layers) - 1:
            h = np.maximum(h, 0.0)
    return h


def test_sac_target_is_the_soft_bellman_backup():
    """y = r + gamma (1 - done) sum_a' pi(a'|s') [min(Qt1, Qt2)(s', a') - alpha log pi(a'|s')], by hand."""
    cfg = marl.MARLConfig(hidden=(16, 16), gamma=0.9, seed=1)
    torch.manual_seed(1)
    ag = marl.SACAgent(5, 4, cfg)
    with torch.no_grad():
        ag.log_alpha.fill_(math.log(0.3))
    s, a, r, s2, d = _batch(np.random.default_rng(0))
    logits = _np(ag.nets["actor"], s2)
    logp = logits - logits.max(1, keepdims=True)
    logp -= np.log(np.exp(logp).sum(1, keepdims=True))
    qmin = np.minimum(_np(ag.nets["q1_target"], s2), _np(ag.nets["q2_target"], s2))
    want = r.numpy() + 0.9 * (1 - d.numpy()) * (np.exp(logp) * (qmin - 0.3 * logp)).sum(1)
    np.testing.assert_allclose(ag.target(r, s2, d).numpy(), want, rtol=1e-5, atol=1e-5)
    assert ag.target_entropy == pytest.approx(0.98 * math.log(4))


def test_dqn_target_is_the_bellman_max():
    cfg = marl.MARLConfig(hidden=(16,), gamma=0.8, seed=2)
    torch.manual_seed(2)
    ag = marl.DQNAgent(5, 4, cfg)
    s, a, r, s2, d = _batch(np.random.default_rng(1))
    want = r.numpy() + 0.8 * (1 - d.numpy()) * _np(ag.nets["q_target"], s2).max(1)
    np.testing.assert_allclose(ag.target(r, s2, d).numpy(), want, rtol=1e-5, atol=1e-5)


def test_sac_update_on_a_tiny_batch_lowers_the_critic_loss_and_moves_the_policy_to_the_best_action():
    cfg = marl.MARLConfig(hidden=(32, 32), critic_lr=5e-3, actor_lr=5e-3, gamma=0.5, seed=4)
    torch.manual_seed(4)
    ag = marl.SACAgent(5, 4, cfg)
    rng = np.random.default_rng(2)
    s, _, _, s2, _ = _batch(rng, n=16)
    a = torch.from_numpy(np.tile(np.arange(4), 4))
    r = (a == 2).float() * 2.0 - 1.0  # action 2 pays
    d = torch.ones(16)  # terminal: y = r, a fixed target
    batch = (s, a, r, s2, d)
    first = ag.update(batch)["loss_q"]
    for _ in range(300):
        last = ag.update(batch)["loss_q"]
    assert last < 0.05 * first
    p, _ = ag.probs(s)
    assert (p.argmax(-1) == 2).all()


def test_dqn_update_on_a_tiny_batch_lowers_the_loss():
    cfg = marl.MARLConfig(hidden=(32, 32), critic_lr=5e-3, seed=5)
    torch.manual_seed(5)
    ag = marl.DQNAgent(5, 4, cfg)
    s, a, r, s2, _ = _batch(np.random.default_rng(3), n=16)
    batch = (s, a, r, s2, torch.ones(16))
    first = ag.update(batch)["loss_q"]
    for _ in range(300):
        last = ag.update(batch)["loss_q"]
    assert last < 0.05 * first


@pytest.mark.parametrize("algorithm", marl.ALGORITHMS)
def test_short_training_finishes_and_repeats_under_a_seed(busy, algorithm, tmp_path):
    """A few hundred decision steps and updates per run; two runs with one seed give the same numbers and
    weights; saved and loaded (npz + json, no pickle) the team acts the same."""

    def make(window):
        return JobDecisionEnv(busy, masac_params={"pue": PUE}, **window)

    wins = [{"steps": 40}, {"steps": 48}]
    runs = [marl.train(algorithm, make, wins, TINY, {"steps": 40}, log=lambda m: None) for _ in range(2)]
    (t1, rows1), (t2, rows2) = runs
    assert len(rows1) == 2 and rows1[-1]["buffer"] > 200
    assert [{k: v for k, v in r.items() if k not in marl.MEASURED} for r in rows1] == \
        [{k: v for k, v in r.items() if k not in marl.MEASURED} for r in rows2]
    assert all(set(marl.MEASURED) <= set(r) for r in rows1)
    for a, b in zip(t1.agents, t2.agents, strict=True):
        ta, tb = a.tensors(), b.tensors()
        assert ta.keys() == tb.keys()
        for k in ta:
            np.testing.assert_array_equal(ta[k], tb[k])
    npz, js = marl.save_agents(t1, tmp_path / "team")
    back = marl.load_agents(npz)
    assert back.algorithm == algorithm and back.agent_names == ["AA", "BB", "CC"]
    assert back.meta["train_windows"] == wins
    for a, b in zip(t1.agents, back.agents, strict=True):
        for k, v in a.tensors().items():
            np.testing.assert_array_equal(v, b.tensors()[k])
    states = np.random.default_rng(0).normal(size=(20, t1.obs_dim)).astype(np.float32)
    acting = np.ones((20, 3), bool)
    np.testing.assert_array_equal(t1.act(states, acting), back.act(states, acting))
    res = marl.evaluate(back, make({"steps": 40}), [{"steps": 40}], [7])
    assert res[0].tasks.height > 0


def test_load_refuses_other_files(tmp_path):
    team = marl.MARL("madqn", ["A", "B"], 6, 3, marl.MARLConfig(hidden=(8,)))
    npz, js = marl.save_agents(team, tmp_path / "t")
    meta = json.loads(js.read_text())
    js.write_text(json.dumps({**meta, "format": "other"}))
    with pytest.raises(ValueError, match="not a gridshift MARL file"):
        marl.load_agents(tmp_path / "t")
    js.write_text(json.dumps(meta))
    good = npz.read_bytes()
    np.savez(npz, x=np.array([np.array([1]), "s"], dtype=object))  # an object array needs pickle to load
    with pytest.raises(ValueError, match=f"{re.escape(str(npz))}: not a gridshift MARL weights file"):
        marl.load_agents(tmp_path / "t")
    npz.write_bytes(good[: len(good) // 2])  # truncated
    with pytest.raises(ValueError, match=f"{re.escape(str(npz))}: not a gridshift MARL weights file"):
        marl.load_agents(tmp_path / "t")
    npz.write_bytes(good)
    js.write_text(json.dumps({**meta, "obs_dim": 7}))  # the weights are of another shape than the json says
    with pytest.raises(ValueError, match=f"{re.escape(str(npz))}: agent 0 \\(A\\) does not match t.json"):
        marl.load_agents(tmp_path / "t")
    js.write_text("{not json")
    with pytest.raises(ValueError, match=f"{re.escape(str(js))}: not a gridshift MARL file"):
        marl.load_agents(tmp_path / "t")
    js.write_text(json.dumps({k: v for k, v in meta.items() if k != "config"}))
    with pytest.raises(ValueError, match=f"{re.escape(str(js))}: bad MARL metadata"):
        marl.load_agents(tmp_path / "t")
    for field, value, match in [("obs_dim", -1, "obs_dim must be a positive int, got -1"),
                                ("n_actions", "3", "n_actions must be a positive int, got '3'"),
                                ("agents", "AB", "agents must be a non-empty list of distinct names, got 'AB'"),
                                ("agents", ["A", "A"], "agents must be a non-empty list of distinct names"),
                                ("config", {**meta["config"], "warmup": "x"}, "MARLConfig.warmup must be a positive")]:
        js.write_text(json.dumps({**meta, field: value}))
        with pytest.raises(ValueError, match=f"{re.escape(str(js))}: bad MARL metadata .*{re.escape(match)}"):
            marl.load_agents(tmp_path / "t")
    js.write_text(json.dumps({**meta, "agents": ["A"]}))  # the weights hold a second agent the json does not name
    with pytest.raises(ValueError, match=f"{re.escape(str(npz))}: tensors of \\['agent1'\\], beyond the 1 agents"):
        marl.load_agents(tmp_path / "t")
    js.write_text(json.dumps(meta))
    assert marl.load_agents(tmp_path / "t").agent_names == ["A", "B"]
    with pytest.raises(ValueError, match="algorithm must be one of"):
        marl.MARL("ppo", ["A"], 3, 2, marl.MARLConfig())
    with pytest.raises(ValueError, match="MARLConfig.batch_size must be a positive int"):
        marl.MARLConfig(batch_size=0)
    with pytest.raises(ValueError, match="MARLConfig.eps_decay_epochs must be a positive int"):
        marl.MARLConfig(eps_decay_epochs=0)


def test_a_spent_cpu_budget_starts_no_epoch(busy):
    """``budget_cpu_s``: no epoch starts once the process has used that much CPU time (0: none at all; a budget
    larger than the run: every epoch), and the log says so."""

    def make(window):
        return JobDecisionEnv(busy, masac_params={"pue": PUE}, **window)

    said = []
    _, rows = marl.train("madqn", make, [{"steps": 40}], TINY, None, log=said.append, budget_cpu_s=0.0)
    assert rows == [] and said == ["madqn: CPU budget of 0 s spent after 0 epochs"]
    _, rows = marl.train("madqn", make, [{"steps": 40}], TINY, None, log=lambda m: None, budget_cpu_s=1e9)
    assert len(rows) == TINY.epochs
