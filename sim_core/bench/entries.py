"""The leaderboard's entries: what is scored, and how each kind runs one window (docs/leaderboard.md).

* ``policy``: a registered policy (``sim_core.policies.registry``), run by name (``sim_core.run``);
* ``agent``: a trained agent saved by ``sim_core.rl.agent.save_agent`` (a ``.pt`` file: tensors, strings and
  numbers, loaded with ``torch.load(weights_only=True)``: no pickle), played greedily on
  ``sim_core.rl.decision.TaskDecisionEnv``; it is scored only on the cells of the region set it was trained on
  (its observation layout names its sites) and only if it was trained on the protocol's train year;
* ``external``: a Python policy module given by its path: a file that defines ``policy``, a Python callable
  ``policy(obs) -> actions`` (docs/simulation.md "Python policy") or a Numba-jitted ``policy(view, actions)``,
  and optionally ``NAME``. The file is executed as a module because the user named it (never found by search,
  never unpickled); its sha256 is recorded with every row it produced.

Every run drains (equal work): a policy's and an external module's through ``sim_core.run``'s default, an
agent's episode through the environment's.
"""

from __future__ import annotations

import importlib.util
import re
from dataclasses import dataclass
from pathlib import Path

from gridshift.hashing import sha256_file

from ..policies import registry

KINDS = ("policy", "agent", "external")
#: a saved agent's file name, as examples/train_agent.py writes it: <recipe>-<training bundle id>-s<seed>.pt
AGENT_FILE = re.compile(r"^(?P<recipe>[a-z0-9_]+)-(?P<bundle>[0-9a-f]{16})-s(?P<seed>[0-9]+)\.pt$")
_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+:-]{0,63}$")


class EntryError(ValueError):
    """An entry that cannot be scored: unknown, missing, unreadable, or not held out; the message names it."""


@dataclass(frozen=True)
class Entry:
    """One entry: its name in the results, its kind (:data:`KINDS`), where it comes from (``registry`` or a file's
    absolute path) and that file's sha256; an agent's sites and training bundle id."""

    name: str
    kind: str
    source: str = "registry"
    sha256: str = ""
    regions: tuple[str, ...] | None = None  # an agent's sites (None: any region set)
    train_bundle_id: str = ""

    def applies_to(self, regions: tuple[str, ...]) -> bool:
        return self.regions is None or tuple(self.regions) == tuple(regions)


def registered(names: list[str] | None = None) -> list[Entry]:
    """Every registered policy (or ``names``, each checked against the registry) as an entry."""
    chosen = list(registry.names()) if names is None else names
    bad = [n for n in chosen if n not in registry.names()]
    if bad:
        raise EntryError("; ".join(registry.unknown(n) for n in bad))
    return [Entry(n, "policy") for n in chosen]


def _agent_regions(feature_names) -> tuple[str, ...]:
    return tuple(f[len("origin_"):] for f in feature_names if f.startswith("origin_"))


def agent_entry(path: Path, name: str | None = None) -> Entry:
    """A saved agent file as an entry (needs torch, the ``rl`` extra); its sites and training bundle read from it."""
    from ..rl.agent import load_agent

    path = _existing(path)
    try:
        agent = load_agent(path)
    except ModuleNotFoundError as err:
        raise EntryError(f"agent {path}: loading a saved agent needs torch (GRIDSHIFT_EXTRAS=rl): {err}") from None
    except ValueError as err:  # (load_agent names the file and what is wrong with it)
        raise EntryError(f"agent {err}") from None
    regions = _agent_regions(agent.feature_names)
    if len(regions) < 2:
        raise EntryError(f"agent {path}: its observation layout names no sites ({list(agent.feature_names)[:4]}...)")
    return Entry(_checked_name(name or f"agent:{path.stem}", path), "agent", str(path), sha256_file(path), regions,
                 agent.bundle_id)


def agents_in(folder: Path) -> list[Entry]:
    """Every saved agent of a learning recipe (``sim_core.rl.recipes.RECIPES``) in ``folder``, by file name."""
    from ..rl.recipes import RECIPES

    out = []
    for p in sorted(Path(folder).glob("*.pt")):
        m = AGENT_FILE.match(p.name)
        if m and m["recipe"] in RECIPES:
            out.append(agent_entry(p, f"agent:{m['recipe']}-s{m['seed']}"))
    return out


def _existing(path: Path) -> Path:
    p = Path(path).expanduser().absolute()
    if not p.is_file():
        raise EntryError(f"entry file {path} does not exist (or is not a file)")
    return p


def _checked_name(name: str, path: Path) -> str:
    if not _NAME.match(name):
        raise EntryError(f"entry {path}: its NAME {name!r} must be 1-64 letters, digits or ._+:- (no spaces)")
    if name in registry.names():
        raise EntryError(f"entry {path}: its NAME {name!r} is a registered policy's; name it apart")
    return name


def load_module_policy(path: Path):
    """The ``policy`` (and ``NAME``) of the Python module file at ``path``, executed as a module."""
    p = _existing(path)
    spec = importlib.util.spec_from_file_location(f"gridshift_entry_{sha256_file(p)[:16]}", p)
    if spec is None or spec.loader is None:
        raise EntryError(f"entry {path}: not a Python module file")
    mod = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(mod)
    except (Exception, SystemExit) as err:  # noqa: BLE001 - the user's module failed (or exited) on import: name it
        raise EntryError(f"entry {path}: importing it failed ({type(err).__name__}: {err})") from None
    fn = getattr(mod, "policy", None)
    if not callable(fn):
        raise EntryError(f"entry {path}: the module defines no callable 'policy' (policy(obs) -> actions, "
                         "docs/adding_a_policy.md)")
    return fn, getattr(mod, "NAME", None)


def external(path: Path) -> Entry:
    """The entry of one file: a ``.py`` policy module or a ``.pt`` saved agent (:func:`agent_entry`)."""
    p = Path(path)
    if p.suffix == ".pt":
        return agent_entry(p)
    if p.suffix != ".py":
        raise EntryError(f"entry {path}: expected a Python policy module (.py) or a saved agent (.pt)")
    p = _existing(p)
    _, name = load_module_policy(p)
    return Entry(_checked_name(str(name) if name is not None else f"file:{p.stem}", p), "external", str(p),
                 sha256_file(p))


def run_entry(entry: Entry, scenario, *, seed: int, start, days: float) -> dict:
    """The drained run's totals of ``entry`` on one window of ``scenario``."""
    import sim_core

    if entry.kind == "policy":
        return sim_core.run(scenario, entry.name, seed=seed, start=start, days=days).totals
    if entry.sha256 and sha256_file(Path(entry.source)) != entry.sha256:
        raise EntryError(f"entry {entry.name}: {entry.source} changed since it was entered (sha256 differs)")
    if entry.kind == "external":
        fn, _ = load_module_policy(Path(entry.source))
        return sim_core.run(scenario, fn, seed=seed, start=start, days=days).totals
    if entry.kind == "agent":
        from ..rl.agent import load_agent, play
        from ..rl.decision import TaskDecisionEnv

        env = TaskDecisionEnv(scenario, start=start, days=days)
        agent = load_agent(entry.source)
        if tuple(agent.feature_names) != tuple(env.feature_names) or agent.layers[-1][0].shape[0] != env.n_actions:
            raise EntryError(f"entry {entry.name}: {entry.source} observes {len(agent.feature_names)} features and "
                             f"answers {agent.layers[-1][0].shape[0]} actions, the environment of its sites "
                             f"{len(env.feature_names)} and {env.n_actions} (another observation layout)")
        return play(agent, env, seed)
    raise EntryError(f"entry {entry.name}: unknown kind {entry.kind!r} (one of {KINDS})")


__all__ = ["AGENT_FILE", "KINDS", "Entry", "EntryError", "agent_entry", "agents_in", "external", "load_module_policy",
           "registered", "run_entry"]
