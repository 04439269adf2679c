"""The training recipes (sim_core/rl/recipes.py through examples/train_agent.py) run end to end for a few hundred
steps each, and a saved agent loads with one call, without pickle, to the very network that was trained (needs
the rl extra: GRIDSHIFT_EXTRAS=rl ./run.sh ...)."""

from __future__ import annotations

import numpy as np
import pytest

from sim_core.policies import registry
from sim_core.rl.recipes import RECIPES
from tests.conftest import load_example

pytest.importorskip("stable_baselines3", reason="the optional rl extra is not installed (GRIDSHIFT_EXTRAS=rl)")
pytest.importorskip("sb3_contrib", reason="the optional rl extra is not installed (GRIDSHIFT_EXTRAS=rl)")


@pytest.fixture(scope="module")
def ex():
    return load_example("train_agent")


@pytest.fixture(scope="module")
def bundles(tmp_path_factory):
    """Two small 3-site bundles, 3 days each, of different workload seeds (a training and a held-out one)."""
    from sim_core.testing import reference_bundle

    root = tmp_path_factory.mktemp("recipes")
    return [reference_bundle(root / name, n_tasks=2400, n_steps=96 * 3, n_dc=3, seed=seed, name=name,
                             capacity_scale=0.02) for name, seed in (("train", 1), ("test", 2))]


@pytest.mark.parametrize("recipe", sorted(RECIPES))
def test_recipe_runs_end_to_end(ex, bundles, recipe, tmp_path, capsys, monkeypatch):
    """A recipe runs end to end, and writes nothing outside its --out folder: the system's temporary directory
    (here a fresh one) is left as it was (stable-baselines3's default logger would leave an ``SB3-<date>`` folder
    there on every run)."""
    import getpass
    import tempfile

    from sim_core.rl.agent import load_agent

    tmp = tmp_path / "tmpdir"
    tmp.mkdir()
    monkeypatch.setenv("TMPDIR", str(tmp))
    monkeypatch.setattr(tempfile, "tempdir", str(tmp))  # (gettempdir() caches its first answer)
    out = ex.main(["--recipe", recipe, "--train", str(bundles[0]), "--test", str(bundles[1]), "--timesteps", "300",
                   "--eval-every", "150", "--episode-days", "1", "--curve-days", "1", "--test-days", "1",
                   "--warm-decisions", "600", "--out", str(tmp_path)])
    text = capsys.readouterr().out
    assert set(out["rows"]) == {"agent", *registry.of_kind("rule")}
    assert out["rows"]["local_only"]["saving_pct"] == 0.0
    assert all(np.isfinite(r["carbon_kg"]) and r["carbon_kg"] > 0 for r in out["rows"].values())
    steps = [c["steps"] for c in out["curve"]]
    assert steps == sorted(steps) and steps[-1] >= 300 and all(np.isfinite(c["saving_pct"]) for c in out["curve"])
    agent = load_agent(out["agent_path"])
    assert agent.recipe == recipe and agent.seed == 0 and (agent.timesteps >= 300 or out["kept"] == "clone")
    assert agent.hyperparameters["recipe"]["kwargs"]["gamma"] == RECIPES[recipe]["kwargs"]["gamma"]
    assert out["agent_path"].endswith(f"{recipe}-{agent.bundle_id}-s0.pt")
    assert (tmp_path / f"{recipe}-{agent.bundle_id}-s0.png").stat().st_size > 10_000
    assert "agent beats local_only with no more late tasks:" in text and "held-out" in text
    # (torch's own compile cache, one fixed folder per user that every later torch process reuses, is the only
    # thing allowed there: it is created by the first optimizer step of any torch program)
    assert [p.name for p in tmp.iterdir() if p.name != f"torchinductor_{getpass.getuser()}"] == []
    if "warm_start" in RECIPES[recipe]:  # (cloned first: the curve starts at the clone, kept only if beaten)
        assert steps[0] == 0 and out["warm_start"]["decisions"] == 600
        assert out["warm_start"]["agreement"] > 0.5 and out["kept"] in {"fine-tuned", "clone"}
        # (kept: the clone or a checkpoint, the least carbon on the validation windows among them all)
        assert set(out["validation"]) == set(steps) and out["kept_steps"] == agent.timesteps
        assert out["validation"][agent.timesteps] == min(out["validation"].values())
        assert (agent.timesteps == 0) == (out["kept"] == "clone")
        assert f"kept the {out['kept']}" in text
    else:
        assert out["warm_start"] is None and out["kept"] == "trained"


def test_warm_start_alone_is_the_clone(ex, bundles, tmp_path):
    """--timesteps 0: the warm-started recipe's clone alone, scored and saved as such (docs/rl.md, "Warm start")."""
    from sim_core.rl.agent import load_agent

    recipe = next(r for r in sorted(RECIPES) if "warm_start" in RECIPES[r])
    out = ex.main(["--recipe", recipe, "--train", str(bundles[0]), "--test", str(bundles[1]), "--timesteps", "0",
                   "--episode-days", "1", "--curve-days", "1", "--test-days", "1", "--warm-decisions", "400",
                   "--out", str(tmp_path)])
    assert out["kept"] == "clone" and [c["steps"] for c in out["curve"]] == [0]
    assert load_agent(out["agent_path"]).timesteps == 0 and out["warm_start"]["decisions"] == 400
    with pytest.raises(SystemExit):
        ex.main(["--recipe", recipe, "--train", str(bundles[0]), "--test", str(bundles[1]), "--timesteps", "-1"])


@pytest.mark.parametrize("recipe", sorted(RECIPES))
def test_saved_agent_is_the_trained_network(ex, bundles, recipe, tmp_path):
    import torch

    import sim_core
    from sim_core.rl.agent import agent_from_model, load_agent, save_agent

    sc = sim_core.load(bundles[0])
    model = ex.make_model(recipe, sc, 0, 2, 1)
    model.learn(256)
    names = model.get_env().get_attr("feature_names")[0]
    path = save_agent(agent_from_model(model, bundle_id=sc.bundle_id, recipe=recipe, hyperparameters={"x": 1},
                                       seed=0, feature_names=names), tmp_path / "a.pt")
    agent = load_agent(path)
    obs = np.random.default_rng(0).uniform(-1, 1, (5, len(names))).astype(np.float32)
    with torch.no_grad():
        x = torch.as_tensor(obs)
        if recipe == "dqn":
            want = model.q_net(x).numpy()
        else:
            want = model.policy.action_net(model.policy.mlp_extractor.forward_actor(x)).numpy()
    np.testing.assert_allclose(np.stack([agent.scores(o) for o in obs]), want, rtol=1e-5, atol=1e-6)
    assert agent.feature_names == tuple(names) and agent.bundle_id == sc.bundle_id


class _Trap:
    """An object whose unpickling creates ``path``: what a hostile file would do with code of its own."""

    def __init__(self, path):
        self.path = path

    def __reduce__(self):
        return (type(self.path).touch, (self.path,))


def test_load_refuses_pickles_and_other_files(tmp_path):
    import torch

    from sim_core.rl.agent import load_agent

    evil, marker = tmp_path / "evil.pt", tmp_path / "ran"
    torch.save({"format": "gridshift-agent/1", "layers": [], "x": _Trap(marker)}, evil)  # loading it would run code
    with pytest.raises(ValueError, match="evil.pt: not a gridshift agent file"):
        load_agent(evil)
    assert not marker.exists()  # refused before anything in the file ran
    other = tmp_path / "other.pt"
    torch.save({"weights": torch.zeros(2)}, other)
    with pytest.raises(ValueError, match="other.pt: not a gridshift agent file.*expected 'gridshift-agent/1'"):
        load_agent(other)


def test_saved_bytes_depend_on_the_agent_alone(tmp_path):
    """The leaderboard records an agent file's sha256 with its rows; the same network saved to two files (torch
    names its archive after the file it writes) has the same bytes, a different one does not."""
    from gridshift.hashing import sha256_file
    from sim_core.rl.agent import Agent, load_agent, save_agent

    rng = np.random.default_rng(0)
    layers = ((rng.normal(size=(4, 3)).astype(np.float32), np.zeros(4, np.float32)),
              (rng.normal(size=(2, 4)).astype(np.float32), np.zeros(2, np.float32)))
    agent = Agent("MaskablePPO", "Tanh", layers, "0" * 16, "maskable_ppo", {"x": 1}, 0, 10, ("a", "b", "c"))
    a = save_agent(agent, tmp_path / "one" / "maskable_ppo-0000000000000000-s0.pt")
    b = save_agent(agent, tmp_path / "b.pt")
    assert a.read_bytes() == b.read_bytes()
    assert sorted(p.name for p in tmp_path.rglob("*")) == ["b.pt", "maskable_ppo-0000000000000000-s0.pt", "one"]
    again = load_agent(a)
    assert all(np.array_equal(x, y) for p, q in zip(again.layers, layers, strict=True)
               for x, y in zip(p, q, strict=True))
    other = Agent("MaskablePPO", "Tanh", ((layers[0][0] + 1, layers[0][1]), layers[1]), "0" * 16, "maskable_ppo",
                  {"x": 1}, 0, 10, ("a", "b", "c"))
    assert sha256_file(save_agent(other, tmp_path / "c.pt")) != sha256_file(a)
