"""Train one recipe (sim_core/rl/recipes.py) on one bundle and score it on another, never seen in training,
against every rule policy at equal work (needs the ``rl`` extra; docs/rl.md, "Learning").

    GRIDSHIFT_EXTRAS=rl ./run.sh python examples/train_agent.py --recipe maskable_ppo \\
        --train .gridshift/bundles/<2022 id> --test .gridshift/bundles/<2023 id>

The bundles: ``./run.sh gridshift export --regions US-CAL-CISO,DE-LU,SG --year 2022-2023 --mirror
../shared/data --scale rack --gpu V100`` (the main job's regions at the rack preset, the 1.26 M-task year docs/rl.md
measures; the default ×1 year is 41 M decisions). The agent learns on
:class:`sim_core.rl.decision.TaskDecisionEnv` (one decision per task, masks, the dense carbon reward) over
``episode_days``-day windows of the training bundle drawn among its days. Every ``eval_every`` steps its greedy
policy runs the test bundle's first ``--curve-days`` days (a fixed window: the learning curve; nothing is
chosen by it: the agent kept is the last one). At the end the agent runs the test window (``--test-days``,
default the whole bundle) for each ``--eval-seeds`` seed, and so does every rule policy natively
(``sim_core.run``); every run drains (equal work). The score is the results pages' own: carbon including the
transfers (``carbon_incl_transfer_kg``) and the late tasks (``sla_violations``). The agent is saved as
``<out>/<recipe>-<train bundle id>-s<seed>.pt`` (sim_core.rl.agent: no pickle), the curve as
``<out>/<recipe>-<train bundle id>-s<seed>.png``; what is printed is what was measured, whatever it is.

A recipe with ``warm_start`` (``maskable_ppo_bc``) first clones a rule's decisions (sim_core/rl/imitation.py; the
curve's first point, at 0 steps, is the clone), then fine-tunes; the agent kept is the one of least carbon on the
recipe's validation windows of the *training* bundle among the clone and the fine-tuned network at every curve
point (a checkpoint every ``eval_every`` steps): the held-out year chooses nothing. The training time printed
(wall and CPU) includes the warm start and that validation, not the curve's evaluations.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import sim_core  # noqa: E402
from sim_core.policies import registry  # noqa: E402
from sim_core.rl.agent import agent_from_model, play, save_agent  # noqa: E402
from sim_core.rl.decision import TaskDecisionEnv  # noqa: E402
from sim_core.rl.recipes import COMMON, RECIPES  # noqa: E402

STEPS_PER_DAY = 96
METRIC = "carbon_incl_transfer_kg"


def rule_scores(sc, seeds, **window) -> dict[str, list[dict]]:
    """Every rule policy's totals, run natively (one decision per task), per seed."""
    return {name: [sim_core.run(sc, name, seed=s, **window).totals for s in seeds] for name in registry.of_kind("rule")}


def saving_pct(totals: dict, local: dict) -> float:
    return 100.0 * (1.0 - totals[METRIC] / local[METRIC])


def training_starts(train_sc, episode_days: float) -> list[int]:
    """The steps an episode of the training bundle may start at: each day's first, room left for the drain."""
    n_days = int(train_sc.n_steps // STEPS_PER_DAY)
    last = max(int(n_days - episode_days - 1), 1)
    return [d * STEPS_PER_DAY for d in range(last)]


def warm_start(model, recipe: str, train_sc, seed: int, episode_days: float, decisions: int | None = None) -> dict:
    """Clone the recipe's rule into ``model``'s policy (sim_core.rl.imitation): demonstrations on the training
    bundle's episodes (an environment of its own, seeded apart from the training ones), then the fit.
    ``decisions``: how many (default: the recipe's)."""
    from sim_core.rl.imitation import clone, demonstrate

    ws = RECIPES[recipe]["warm_start"]
    t, c = time.perf_counter(), time.process_time()
    env = TaskDecisionEnv(train_sc, days=episode_days, episode_starts=training_starts(train_sc, episode_days),
                          seed=seed * 1000 + 999)
    demos = demonstrate(env, ws["rule"], decisions or ws["decisions"], gamma=RECIPES[recipe]["kwargs"]["gamma"],
                        seed=seed * 1000 + 999)
    fit = clone(model.policy, demos, epochs=ws["epochs"], batch_size=ws["batch_size"],
                learning_rate=ws["learning_rate"], seed=seed, masked=type(model).__name__ == "MaskablePPO")
    return {**fit, "rule": ws["rule"], "decisions": len(demos), "wall_s": time.perf_counter() - t,
            "cpu_s": time.process_time() - c}


def validation_starts(train_sc, validation: dict) -> tuple[float, list[int]]:
    """The validation windows of the training bundle: (days, distinct start steps). ``days`` long (at most the
    bundle's days less one, for the drain), starting at the shares ``at`` of the span they can start in."""
    n_days = int(train_sc.n_steps // STEPS_PER_DAY)
    days = min(float(validation["days"]), max(n_days - 1, 1))
    last = max(int(n_days - days - 1), 0)  # (room for the drain, as in training)
    return days, sorted({int(at * last) * STEPS_PER_DAY for at in validation["at"]})


def validation_score(agent, train_sc, validation: dict) -> float:
    """Carbon incl. transfers + LATE_PENALTY_KG per late task, summed over the validation windows of the training
    bundle (:func:`validation_starts`), workload seed 0: what chooses the agent a warm-started recipe keeps."""
    from sim_core.rl.decision import LATE_PENALTY_KG

    total = 0.0
    days, starts = validation_starts(train_sc, validation)
    for start in starts:
        env = TaskDecisionEnv(train_sc, days=days, start=start)
        tot = play(agent, env, 0)
        total += tot[METRIC] + LATE_PENALTY_KG * tot["sla_violations"]
    return total


def make_model(recipe: str, train_sc, seed: int, n_envs: int, episode_days: float):
    """The recipe's SB3 model on ``n_envs`` training environments (one start per day of the training bundle)."""
    import torch
    from stable_baselines3.common.vec_env import DummyVecEnv, VecMonitor

    from sim_core.rl.sb3 import silent_logger

    spec = RECIPES[recipe]
    torch.set_num_threads(COMMON["torch_threads"])
    starts = training_starts(train_sc, episode_days)
    fns = [lambda i=i: TaskDecisionEnv(train_sc, days=episode_days, episode_starts=starts, seed=seed * 1000 + i)
           for i in range(n_envs)]
    venv = VecMonitor(DummyVecEnv(fns))
    mod, cls = spec["algo"].rsplit(".", 1)
    algo = getattr(importlib.import_module(mod), cls)
    model = algo(spec["policy"], venv, seed=seed, device="cpu", verbose=0, **spec["kwargs"])
    model.set_logger(silent_logger())  # (SB3's default logger leaves a folder in the system's temp directory)
    return model


def main(argv=None) -> dict:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--recipe", required=True, choices=sorted(RECIPES))
    ap.add_argument("--train", type=Path, required=True, help="training bundle directory (the 2022 one)")
    ap.add_argument("--test", type=Path, required=True, help="held-out bundle directory (the 2023 one)")
    ap.add_argument("--timesteps", type=int, help="training decisions (default: the recipe's budget)")
    ap.add_argument("--eval-every", type=int, help="steps between two curve points (default: the recipe's)")
    ap.add_argument("--episode-days", type=float, default=COMMON["episode_days"])
    ap.add_argument("--seed", type=int, default=COMMON["seed"])
    ap.add_argument("--warm-decisions", type=int, help="demonstrated decisions of a warm start (the recipe's)")
    ap.add_argument("--curve-days", type=float, default=7.0, help="the curve's fixed window of the test bundle")
    ap.add_argument("--test-days", type=float, help="held-out window (default: the whole test bundle)")
    ap.add_argument("--eval-seeds", default="0", help="comma-separated seeds of the held-out runs (0)")
    ap.add_argument("--out", type=Path, default=Path("agents"))
    args = ap.parse_args(argv)
    from stable_baselines3.common.callbacks import BaseCallback

    spec = RECIPES[args.recipe]
    budget = spec["timesteps"] if args.timesteps is None else args.timesteps  # (0: a warm start's clone alone)
    every = args.eval_every or spec["eval_every"]
    if budget < 0 or every < 1:
        ap.error(f"--timesteps must be >= 0 and --eval-every >= 1, got {budget} and {every}")
    seeds = [int(s) for s in args.eval_seeds.split(",")]
    t0 = time.perf_counter()
    train_sc, test_sc = sim_core.load(args.train), sim_core.load(args.test)
    print(f"recipe {args.recipe}: {spec['algo']} {json.dumps(spec['kwargs'], sort_keys=True)}; {COMMON}")
    print(f"train bundle {train_sc.bundle_id} ({train_sc.start_utc:%Y-%m-%d}, {train_sc.n_tasks:,} tasks), test "
          f"bundle {test_sc.bundle_id} ({test_sc.start_utc:%Y-%m-%d}, {test_sc.n_tasks:,} tasks)")
    curve_env = TaskDecisionEnv(test_sc, days=args.curve_days, start=0)
    curve_rules = {k: v[0] for k, v in rule_scores(test_sc, [0], days=args.curve_days, start=0).items()}
    prov = dict(bundle_id=train_sc.bundle_id, recipe=args.recipe, seed=args.seed,
                hyperparameters={"recipe": spec, "common": COMMON}, feature_names=curve_env.feature_names)
    t_start, c_start = time.perf_counter(), time.process_time()
    model = make_model(args.recipe, train_sc, args.seed, COMMON["n_envs"], args.episode_days)
    curve: list[dict] = []
    t_train = [0.0]
    warm = None
    if "warm_start" in spec:
        warm = warm_start(model, args.recipe, train_sc, args.seed, args.episode_days, args.warm_decisions)
        print(f"warm start: {warm['decisions']:,} decisions of {warm['rule']} cloned in {warm['wall_s']:.0f} s wall "
              f"({warm['cpu_s']:.0f} s CPU); agreement with the rule on them {100 * warm['agreement']:.2f} %, "
              f"policy loss {warm['policy_loss']:.4f}, value loss {warm['value_loss']:.4f}", flush=True)
        clone_agent = agent_from_model(model, **prov)

    ev = {"wall": 0.0, "cpu": 0.0}  # (time spent on curve points: left out of the training time)

    snapshots: list = []  # (the fine-tuned network at every curve point: a warm start's candidates)

    def point(m):
        t, c = time.perf_counter(), time.process_time()
        snapshots.append(agent_from_model(m, **prov))
        tot = play(snapshots[-1], curve_env, 0)
        ep = [e["r"] for e in m.ep_info_buffer or []]
        curve.append({"steps": int(m.num_timesteps), "saving_pct": saving_pct(tot, curve_rules["local_only"]),
                      "late": int(tot["sla_violations"]), "train_return": float(np.mean(ep)) if ep else float("nan")})
        print(f"  {curve[-1]['steps']:>9,} steps: held-out curve window saving {curve[-1]['saving_pct']:6.2f} %, "
              f"late {curve[-1]['late']}, training episode return {curve[-1]['train_return']:.1f} "
              f"({t_train[0]:.0f} s training so far)", flush=True)
        ev["wall"] += time.perf_counter() - t
        ev["cpu"] += time.process_time() - c

    class Curve(BaseCallback):
        def __init__(self):
            super().__init__()
            self.next = every

        def _on_step(self) -> bool:
            if self.num_timesteps >= self.next:
                self.next += every
                t_train[0] = time.perf_counter() - t_start - ev["wall"]
                point(self.model)
            return True

    cb = Curve()
    if warm is not None:
        point(model)  # (the clone: step 0)
    model.learn(total_timesteps=budget, callback=cb)
    t_train[0] = time.perf_counter() - t_start - ev["wall"]
    if not curve or curve[-1]["steps"] != model.num_timesteps:
        point(model)
    agent = agent_from_model(model, **prov)
    kept, validation = "trained", None
    if warm is not None:  # (the clone and every checkpoint, on the training bundle's validation windows)
        t = time.perf_counter()
        cands = [clone_agent, *(a for a in snapshots if a.timesteps > 0)]
        validation = {a.timesteps: validation_score(a, train_sc, COMMON["validation"]) for a in cands}
        agent = min(cands, key=lambda a: (validation[a.timesteps], a.timesteps))
        kept = "clone" if agent.timesteps == 0 else "fine-tuned"
        v_days, v_starts = validation_starts(train_sc, COMMON["validation"])
        print(f"validation on the training bundle ({len(v_starts)} windows of {v_days:g} days), kg incl. late penalty: "
              + ", ".join(f"{k:,} steps {v:,.1f}" for k, v in validation.items())
              + f" -> kept the {kept} ({agent.timesteps:,} steps; {time.perf_counter() - t:.0f} s)", flush=True)
    t_train[0] = time.perf_counter() - t_start - ev["wall"]
    c_train = time.process_time() - c_start - ev["cpu"]
    name = f"{args.recipe}-{train_sc.bundle_id}-s{args.seed}"
    path = save_agent(agent, args.out / f"{name}.pt")
    rate = model.num_timesteps / t_train[0]
    print(f"trained {model.num_timesteps:,} decisions in {t_train[0]:.0f} s wall, {c_train:.0f} s CPU ({rate:,.0f} "
          f"steps/s; warm start and validation included, curve evaluations excluded); saved {path}")

    window = {} if args.test_days is None else {"days": args.test_days, "start": 0}
    test_env = TaskDecisionEnv(test_sc, **window)
    t = time.perf_counter()
    scores = rule_scores(test_sc, seeds, **window)
    scores["agent"] = [play(agent, test_env, s) for s in seeds]
    t_test = time.perf_counter() - t
    local = scores["local_only"]
    rows = {k: {"carbon_kg": float(np.mean([x[METRIC] for x in v])),
                "saving_pct": float(np.mean([saving_pct(x, lo) for x, lo in zip(v, local, strict=True)])),
                "late": float(np.mean([x["sla_violations"] for x in v]))} for k, v in scores.items()}
    rules = {k: v for k, v in rows.items() if k != "agent"}
    best = max(rules, key=lambda k: rules[k]["saving_pct"])
    print(f"\nheld-out {test_sc.bundle_id} ({'whole bundle' if not window else f'{args.test_days:g} days'}), seeds "
          f"{seeds}, equal work ({t_test:.0f} s); carbon incl. transfers, saving vs local_only, late tasks:")
    for k in ["agent", *sorted(rules, key=lambda k: -rules[k]["saving_pct"])]:
        r = rows[k]
        print(f"  {k:22s} {r['carbon_kg']:12,.1f} kg  {r['saving_pct']:7.2f} %  late {r['late']:.0f}")
    a = rows["agent"]
    beats = a["saving_pct"] > 0.0 and a["late"] <= rows["local_only"]["late"]
    reaches = a["saving_pct"] >= rules[best]["saving_pct"]
    print(f"agent beats local_only with no more late tasks: {'yes' if beats else 'NO'}; reaches the best rule "
          f"policy ({best}, {rules[best]['saving_pct']:.2f} %): {'yes' if reaches else 'NO'}; total "
          f"{time.perf_counter() - t0:.0f} s")
    fig = plot(curve, curve_rules, args.out / f"{name}.png", args.recipe, test_sc.bundle_id, args.curve_days)
    return {"rows": rows, "best_rule": best, "curve": curve, "train_s": t_train[0], "train_cpu_s": c_train,
            "steps_per_s": rate,
            "warm_start": warm, "kept": kept, "kept_steps": agent.timesteps, "validation": validation,
            "agent_path": str(path), "figure": str(fig), "beats_local": beats, "reaches_best": reaches}


def plot(curve, rules, path: Path, recipe: str, bundle_id: str, days: float) -> Path:
    """Held-out saving vs training steps, the rule policies as horizontal lines; the training return beside."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (ax, ax2) = plt.subplots(1, 2, figsize=(11, 4))
    x = [c["steps"] for c in curve]
    ax.plot(x, [c["saving_pct"] for c in curve], "o-", color="black", label=recipe)
    local = rules["local_only"]
    for k, (name, tot) in enumerate(sorted(rules.items(), key=lambda kv: kv[1][METRIC])):
        ax.axhline(saving_pct(tot, local), ls="--", lw=1, color=f"C{k % 10}", label=name)
    ax.set_xlabel("training steps (decisions)")
    ax.set_ylabel("carbon incl. transfers saved vs local_only (%)")
    ax.set_title(f"held out: first {days:g} days of {bundle_id}", fontsize=9)
    ax.legend(fontsize=7, loc="lower right")
    ax2.plot(x, [c["train_return"] for c in curve], "o-", color="black")
    ax2.set_xlabel("training steps (decisions)")
    ax2.set_ylabel("training episode return (mean of the last 100)")
    ax2.set_title("training bundle (dense carbon reward)", fontsize=9)
    fig.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return path


if __name__ == "__main__":
    main()
