"""MASAC reproduced (docs/reproductions.md, its MASAC section): the ``masac-5dc`` preset with Table I applied
(``repro_presets.masac_scenario``), MADQN (S3) and MASAC (S4) trained on CPU (``sim_core.rl.marl``), and S0-S4
evaluated on 10 unseen 2-day episodes beside the paper's Fig. 4 and text.

    nice ./run.sh python benchmarks/masac_repro.py --home /tmp/masac-home --mirror ../shared/data --epochs 10 \
        --budget-min 35 --write

Trained agents are kept in ``<home>/masac/<algorithm>-e<epochs>-b<budget>-s<seed>.{npz,json}`` and reused once
complete; ``--train-only ALGO`` trains one and stops (two processes train both at once). The CPU budget: no epoch
starts after ``--budget-min`` minutes of wall time (the epochs run are on the page).
Training windows: one 2-day window in each of Jan-Oct 2022, starting on a (seeded) day 1-12; validation: 2022-11-07;
test: one window in each of Jan-Oct starting on a (seeded) day 16-26, so no test day is a training day, each with
an origin seed no training episode used.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from benchmarks import repro_presets as RP  # noqa: E402
from benchmarks import reproductions as R  # noqa: E402

ROOT = Path(__file__).resolve().parents[1]
DAYS = 2.0
TEST_SEED0 = 10_000  # origin seeds of the test episodes (training uses seed * 100003 + epoch * 10 + i < 10,000)
#: the paper's figures (§IV-B, Fig. 4-6): MASAC's validation reward vs local computing, MADQN's step reward half of
#: MASAC's, convergence epochs, MASAC's GPU-hours above the other scenarios'
PAPER = {"s4_vs_s0_pct": 28.6, "s4_gpu_h_above_others_pct": 15.6, "masac_converged_epoch": 10,
         "madqn_converged_epoch": 40}


def windows(seed: int = 0) -> tuple[list[dict], dict, list[dict]]:
    """(training windows, validation window, test windows) as ``start``/``days`` dicts (module docstring)."""
    rng = np.random.default_rng(seed)
    train = [{"start": f"2022-{m:02d}-{int(rng.integers(1, 13)):02d}", "days": DAYS} for m in range(1, 11)]
    test = [{"start": f"2022-{m:02d}-{int(rng.integers(16, 27)):02d}", "days": DAYS} for m in range(1, 11)]
    return train, {"start": "2022-11-07", "days": DAYS}, test


def bundle(home: Path, mirror: Path, seed: int):
    """The preset's bundle (exported into ``home`` once) and its zones."""
    import sim_core

    stats = RP.zone_stats(mirror, RP.MASAC.year)
    zones = [m for _, m, _ in RP.pick_zones(RP.MASAC, stats)]
    return sim_core.load(R.export(home, mirror, zones, RP.MASAC.year, RP.MASAC.export, seed)), zones


def masac_params() -> dict:
    return {"pue": RP.MASAC_TABLE1["pue"]}


def env_factory(sc, seed: int):
    from sim_core.rl.masac_env import JobDecisionEnv

    def make(window: dict):
        return JobDecisionEnv(sc, masac_params=masac_params(), seed=seed, **window, **RP.MASAC.run)

    return make


def agent_path(home: Path, algorithm: str, epochs: int, budget_min: float, seed: int) -> Path:
    return home / "masac" / f"{algorithm}-e{epochs}-b{budget_min:g}-s{seed}"


def trained(home: Path, sc, algorithm: str, epochs: int, budget_min: float, seed: int):
    """The trained team of ``algorithm`` (loaded when saved complete, else trained, saved after every epoch and
    marked complete at the end: an interrupted run trains again)."""
    from sim_core.rl.marl import MARLConfig, load_agents, save_agents, train

    path = agent_path(home, algorithm, epochs, budget_min, seed)
    if path.with_suffix(".json").exists() and path.with_suffix(".npz").exists():
        team = load_agents(path)
        if team.meta.get("complete"):
            return team
    path.parent.mkdir(parents=True, exist_ok=True)
    tr, val, _ = windows(seed)
    cfg = MARLConfig(epochs=epochs, seed=seed)
    t0 = time.perf_counter()

    def checkpoint(team, rows):
        team.meta["train_seconds"] = time.perf_counter() - t0
        save_agents(team, path)

    team, _ = train(algorithm, env_factory(sc, seed), tr, cfg, val,
                    log=lambda m: print(m, file=sys.stderr, flush=True),
                    meta={"bundle_id": sc.bundle_id, "preset": RP.MASAC.name, "masac_params": masac_params(),
                          "budget_min": budget_min},
                    budget_s=60.0 * budget_min, on_epoch=checkpoint)
    team.meta["train_seconds"] = time.perf_counter() - t0
    team.meta["complete"] = True
    save_agents(team, path)
    return team


def section_of(bundle_sc, zones: list[str], seed: int, home: Path, mirror: Path, epochs: int = 10,
               budget_min: float = 35.0) -> str:
    """The MASAC section for the preset's bundle ``bundle_sc`` (Table I applied here)."""
    from benchmarks.masac_section import section

    command = (f"nice ./run.sh python benchmarks/masac_repro.py --home <home> --mirror ../shared/data --epochs "
               f"{epochs} --budget-min {budget_min:g}" + (f" --seed {seed}" if seed else "") + " --write")
    return section(home, mirror, RP.masac_scenario(bundle_sc, seed), zones, seed, epochs, budget_min, command)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--home", type=Path, required=True)
    ap.add_argument("--mirror", type=Path, default=Path(os.environ.get("GRIDSHIFT_MIRROR", ROOT.parent / "shared"
                                                                       / "data")))
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--epochs", type=int, default=10, help="training epochs at most (the paper: 100)")
    ap.add_argument("--budget-min", type=float, default=35.0, help="no epoch starts after this many minutes")
    ap.add_argument("--train-only", choices=("masac", "madqn"), help="train this algorithm and stop")
    ap.add_argument("--write", action="store_true", help="write docs/reproductions.md's MASAC section")
    a = ap.parse_args(argv)
    home, mirror = a.home.resolve(), a.mirror.resolve()
    bundle_sc, zones = bundle(home, mirror, a.seed)
    if a.train_only:
        trained(home, RP.masac_scenario(bundle_sc, a.seed), a.train_only, a.epochs, a.budget_min, a.seed)
        return
    text = section_of(bundle_sc, zones, a.seed, home, mirror, a.epochs, a.budget_min)
    print(text)
    if a.write:
        R.write(text, only=True)


if __name__ == "__main__":
    main()
