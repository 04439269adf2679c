"""Train stable-baselines3 PPO on the single-action environment over a training window, then score it on a
held-out window against a random agent, ``local_only`` and the best rule policy (needs the ``rl`` extra).

    GRIDSHIFT_EXTRAS=rl ./run.sh python examples/train_ppo.py [--bundle DIR] [--timesteps N] [--seed S]

Without ``--bundle`` a synthetic bundle is written to a temporary directory: the 5 reference datacenters,
14 days, 14,000 tasks/day (~4x the reference load, so that capacity matters), built with
``sim_core.testing.reference_bundle``. The first ``--train-days`` days are the training window: ``--envs``
environments of a :class:`sim_core.gym.TaskSchedulingVectorEnv` run 1-day episodes starting on its days (one
start per environment, every episode with new task origins). The rest of the bundle is the held-out window,
never seen in training, where every policy runs ``--eval-seeds`` seeds.

Every policy is scored by the environments' default reward (``sim_core.rl.reward.DEFAULT_REWARD``: every cost
the run totals report) summed over the held-out episode, i.e. computed from the run's totals (the two are
equal, tests/unit/sim_core/rl/test_totals.py). PPO and the random agent act through the environment (one
action for every pending task, single-action mode); the rule policies run natively (``sim_core.run``: one
decision per task), the same window, seeds and run options. The score printed is what was measured, whatever
it is.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import sim_core  # noqa: E402
from sim_core.gym import TaskSchedulingEnv, TaskSchedulingVectorEnv  # noqa: E402
from sim_core.policies import registry  # noqa: E402
from sim_core.rl.reward import DEFAULT_REWARD, STEP_TOTAL_COMPONENTS, Reward  # noqa: E402

STEPS_PER_DAY = 96
RANDOM = "random agent"  # (uniform single actions through the environment; the rule ``random`` runs natively)


def make_bundle(root: str | Path, days: int = 14, tasks_per_day: int = 14_000, seed: int = 0) -> Path:
    from sim_core.testing import reference_bundle

    return reference_bundle(root, n_tasks=tasks_per_day * days, n_steps=STEPS_PER_DAY * days, seed=seed,
                            name=f"ppo-example-{days}d")


def score(totals: dict) -> float:
    """The default reward summed over a run, from its totals (``Reward.coef`` x the run total of each term)."""
    return float(sum(t.coef * totals[STEP_TOTAL_COMPONENTS[t.name][0]] for t in Reward(DEFAULT_REWARD).terms))


def env_score(env: TaskSchedulingEnv, act, seed: int) -> float:
    """Run one held-out episode of ``env`` with ``act(obs) -> action``; its score from the run's totals."""
    obs, _ = env.reset(seed=seed)
    done = False
    while not done:
        obs, _, done, _, _ = env.step(act(obs))
    return score(env.result().totals)


def train(sc, train_days: int, envs: int, timesteps: int, seed: int):
    """PPO (SB3 defaults, MlpPolicy, CPU) on ``envs`` 1-day windows of the first ``train_days`` days."""
    from stable_baselines3 import PPO

    from sim_core.rl.sb3 import SB3VecEnv

    starts = [(i % train_days) * STEPS_PER_DAY for i in range(envs)]
    venv = TaskSchedulingVectorEnv(sc, envs, seed=seed, windows=[{"start": s, "days": 1} for s in starts])
    model = PPO("MlpPolicy", SB3VecEnv(venv), seed=seed, device="cpu", n_steps=256, batch_size=256, verbose=0)
    return model.learn(total_timesteps=timesteps)


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bundle", type=Path, help="bundle directory (default: a synthetic 14-day one)")
    ap.add_argument("--train-days", type=int, default=7, help="training window: the bundle's first days (7)")
    ap.add_argument("--timesteps", type=int, default=50_000, help="PPO environment steps (50,000)")
    ap.add_argument("--envs", type=int, default=8)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--eval-seeds", type=int, default=3)
    args = ap.parse_args(argv)
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory() as tmp:
        sc = sim_core.load(args.bundle or make_bundle(tmp, seed=args.seed))
        n_days = sc.n_steps // STEPS_PER_DAY
        if not 0 < args.train_days < n_days:
            raise SystemExit(f"--train-days must leave a held-out window: 1..{n_days - 1}, got {args.train_days}")
        held = {"start": args.train_days * STEPS_PER_DAY, "days": n_days - args.train_days}
        print(f"bundle {sc.bundle_id}: {sc.n_dc} DCs, {sc.n_tasks:,} tasks, {n_days} days; training window days "
              f"0-{args.train_days - 1}, held-out days {args.train_days}-{n_days - 1}; reward {DEFAULT_REWARD}")
        t = time.perf_counter()
        model = train(sc, args.train_days, args.envs, args.timesteps, args.seed)
        t_train = time.perf_counter() - t
        print(f"PPO: {model.num_timesteps:,} environment steps in {t_train:.1f} s")
        seeds = [10_000 + args.seed * 100 + k for k in range(args.eval_seeds)]
        env = TaskSchedulingEnv(sc, single_action=True, **held)
        rng = np.random.default_rng(args.seed)
        scores = {
            "PPO": [env_score(env, lambda o: int(model.predict(o, deterministic=True)[0]), s) for s in seeds],
            RANDOM: [env_score(env, lambda o: int(rng.integers(env.n_actions)), s) for s in seeds],
        }
        for name in registry.of_kind("rule"):
            scores[name] = [score(sim_core.run(sc, name, seed=s, **held).totals) for s in seeds]
    means = {k: float(np.mean(v)) for k, v in scores.items()}
    rules = {k: v for k, v in means.items() if k not in ("PPO", RANDOM)}
    best = max(rules, key=rules.get)
    print(f"\nheld-out score (default reward summed over the episode; higher is better), mean over seeds {seeds}:")
    for k in dict.fromkeys(("PPO", RANDOM, "local_only", best)):
        print(f"  {k:22s} {means[k]:12.2f}")
    print("every rule policy: " + ", ".join(f"{k} {v:.2f}" for k, v in sorted(rules.items(), key=lambda kv: -kv[1])))
    print(f"best rule policy: {best}; PPO {'beats' if means['PPO'] > means[best] else 'does NOT beat'} it, "
          f"{'beats' if means['PPO'] > means[RANDOM] else 'does NOT beat'} the random agent; total "
          f"{time.perf_counter() - t0:.1f} s")
    return {"means": means, "best_rule": best, "train_s": t_train, "timesteps": int(model.num_timesteps)}


if __name__ == "__main__":
    main()
