"""Bit-for-bit golden results: every policy (each rule policy and each published baseline, with its
defaults) x both power modes on one fixed, busy, deterministic bundle. The sha256 of the totals, of the
per-step frame and of the per-task frame were recorded from the engine before it was split into
``sim_core/engine/`` and ``sim_core/policies/`` (issue 25); any change to what a kernel computes, however
small, changes a digest. Regenerate (only for a deliberate behaviour change, stated in the commit):
``./run.sh python -m tests.unit.sim_core.test_golden_totals``."""

from __future__ import annotations

import hashlib
import json
import math
from pathlib import Path

import numpy as np
import polars as pl
import pytest

import sim_core
from sim_core.drain import WORK_KEYS
from sim_core.testing import reference_bundle, synthetic_tasks

DIGESTS = Path(__file__).with_name("golden_totals.json")
N_STEPS = 4 * 96  # four days: CarbonFlex learns from two days of history at the start of days 3 and 4
N_TASKS = 3000
POWERS = ("managed", "always_on")


def golden_bundle(root: Path) -> Path:
    """The reference 5-site cluster at 0.5 % of its size (GPUs queue) with 3,000 synthetic tasks over four
    days, half of them flexible: allowed delays, interruptible GPU tasks and elastic ones."""
    t = synthetic_tasks(N_TASKS, N_STEPS, seed=11)
    rng = np.random.default_rng(11)
    g = t["gpus"].to_numpy()
    el = (g >= 1.0) & (rng.random(N_TASKS) < 0.6)
    intr = (g > 0.0) & (rng.random(N_TASKS) < 0.7)
    t = t.with_columns(
        pl.Series("max_delay_s", np.where(rng.random(N_TASKS) < 0.5, 8 * 3600.0, 0.0)),
        pl.Series("interruptible", intr), pl.Series("checkpoint_s", np.where(intr | el, 60.0, 0.0)),
        pl.Series("min_scale", np.where(el, 0.5, 1.0)), pl.Series("max_scale", np.where(el, 2.0, 1.0)),
        pl.Series("marginal_throughput", np.where(el, rng.uniform(0.5, 0.95, N_TASKS), 0.0)))
    return reference_bundle(root, n_tasks=N_TASKS, n_steps=N_STEPS, seed=11, tasks=t, capacity_scale=0.005,
                            name="golden")


def _frame_digest(df: pl.DataFrame) -> str:
    """sha256 over every column's name, dtype and values (numbers by their bytes, so -0.0, NaN payloads and
    the last bit all count)."""
    h = hashlib.sha256()
    for name in df.columns:
        s = df[name]
        h.update(f"{name}:{s.dtype}:{s.len()}\n".encode())
        if s.dtype.is_numeric() or s.dtype == pl.Boolean or s.dtype.is_temporal():
            phys = s.to_physical()
            h.update(phys.is_null().to_numpy().tobytes())
            h.update(np.ascontiguousarray(phys.fill_null(0).to_numpy()).tobytes())
        else:
            h.update("\x1f".join("\x00" if v is None else str(v) for v in s.cast(pl.String).to_list()).encode())
    return h.hexdigest()


def _totals_digest(totals: dict) -> str:
    def enc(v):
        if isinstance(v, float | np.floating):
            return float(v).hex() if math.isfinite(v) else repr(float(v))
        if isinstance(v, int | np.integer):
            return int(v)
        return repr(v)
    return hashlib.sha256(json.dumps({k: enc(v) for k, v in totals.items()}, sort_keys=True).encode()).hexdigest()


def digests(scenario, policy: str, power: str) -> dict[str, str]:
    """The digests of a run that stops at its window's end (``drain=False``, the behaviour they were recorded
    with), over the totals it had then (the equal-work keys, sim_core.drain.WORK_KEYS, came later)."""
    r = sim_core.run(scenario, policy, seed=5, power=power, drain=False)
    old = {k: v for k, v in r.totals.items() if k not in WORK_KEYS}
    return {"totals": _totals_digest(old), "steps": _frame_digest(r.steps), "tasks": _frame_digest(r.tasks)}


@pytest.fixture(scope="module")
def golden(tmp_path_factory):
    return sim_core.load(golden_bundle(tmp_path_factory.mktemp("golden")))


def test_the_golden_bundle_is_busy_and_has_flexible_work(golden):
    """The digests below mean something only if the runs queue, defer and control tasks."""
    r = sim_core.run(golden, "carbonscaler", seed=5, power="managed")
    assert r.totals["tasks"] == N_TASKS
    assert r.steps["queue_len"].max() > 10
    assert r.totals["pauses"] + r.totals["rescales"] > 0


@pytest.mark.parametrize("power", POWERS)
@pytest.mark.parametrize("policy", sim_core.POLICIES)
def test_every_policy_and_power_mode_reproduces_its_recorded_digests(golden, policy, power):
    want = json.loads(DIGESTS.read_text())[f"{policy}/{power}"]
    assert digests(golden, policy, power) == want


def test_every_policy_has_a_recorded_digest():
    recorded = set(json.loads(DIGESTS.read_text()))
    assert recorded == {f"{p}/{w}" for p in sim_core.POLICIES for w in POWERS}


DRAINED = Path(__file__).with_name("golden_drained.json")
DRAIN_DAYS = 3  # a three-day window that drains into the bundle's fourth day (sim_core.drain)


def drained_digests(scenario, policy: str) -> dict[str, str]:
    """The digests of a drained run (the default): every totals key, the steps frame with its drain steps."""
    r = sim_core.run(scenario, policy, seed=5, days=DRAIN_DAYS)
    return {"totals": _totals_digest(r.totals), "steps": _frame_digest(r.steps), "tasks": _frame_digest(r.tasks)}


@pytest.mark.parametrize("policy", sim_core.POLICIES)
def test_every_policy_reproduces_its_recorded_drained_digests(golden, policy):
    assert drained_digests(golden, policy) == json.loads(DRAINED.read_text())[policy]


def test_the_drained_runs_drain_to_the_bundles_end_and_charge_the_rest(golden):
    """The drained digests cover the drain and the charge: the loaded golden cluster drains to the bundle's
    end with work left, charged at the run's own rate."""
    assert set(json.loads(DRAINED.read_text())) == set(sim_core.POLICIES)
    t = sim_core.run(golden, "local_only", seed=5, days=DRAIN_DAYS).totals
    assert t["drain_steps"] == N_STEPS - DRAIN_DAYS * 96
    assert t["work_left_core_hours"] > 0 and t["charged_carbon_kg"] > 0


if __name__ == "__main__":  # record the digests (a deliberate behaviour change only)
    import tempfile

    with tempfile.TemporaryDirectory() as d:
        sc = sim_core.load(golden_bundle(Path(d)))
        out = {f"{p}/{w}": digests(sc, p, w) for p in sim_core.POLICIES for w in POWERS}
        drained = {p: drained_digests(sc, p) for p in sim_core.POLICIES}
    DIGESTS.write_text(json.dumps(out, indent=1, sort_keys=True) + "\n")
    DRAINED.write_text(json.dumps(drained, indent=1, sort_keys=True) + "\n")
    print(f"wrote {DIGESTS} ({len(out)} runs) and {DRAINED} ({len(drained)} runs)")
