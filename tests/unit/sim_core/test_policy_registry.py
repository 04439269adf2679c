"""The policy registry (``sim_core.policies.registry``) and the kernels agree: every entry runs jitted from
its module, codes and names are unique, each module's frozen constants are the registry's parameter
defaults, and the command line, ``sim_core.POLICIES``, the Dagster sweep partitions and the docs table are
all the registry. Then a new policy is added the documented way -- one module and one registry entry -- and
appears in ``compare --help`` and runs jitted."""

from __future__ import annotations

import importlib
import os
import re
import subprocess
import sys
import textwrap
from pathlib import Path

import numpy as np
import pytest
from numba.core.registry import CPUDispatcher
from typer.testing import CliRunner

import sim_core
from gridshift_cli import make_app
from sim_core.options import make_options
from sim_core.policies import PolicySpec, register, registry, unregister
from sim_core.testing import tiny_bundle
from tests.cli_text import plain

ROOT = Path(__file__).resolve().parents[3]
DOCS = ROOT / "docs"

#: kernel module -> parameter -> the module-level constant its kernels freeze ("<module>.<NAME>")
CONSTANTS = {
    "sim_core.policies.gaia": {"short_s": "gaia.GAIA_SHORT_S", "wait_short_s": "gaia.GAIA_WAIT_SHORT_S",
                               "wait_long_s": "gaia.GAIA_WAIT_LONG_S", "grid_steps": "gaia.GAIA_GRID_STEPS"},
    "sim_core.policies.carbonscaler": {"slot_steps": "carbonscaler.SLOT_STEPS"},
    "sim_core.policies.wait_awhile": {"quantile": "wait_awhile.THRESHOLD_Q",
                                      "window_steps": "wait_awhile.THRESHOLD_WINDOW"},
    "sim_core.policies.vcc": {"slot_steps": "vcc.SLOT_STEPS", "history_days": "vcc.HISTORY_DAYS"},
    "sim_core.policies.carbonflex": {"slot_steps": "carbonflex.SLOT_STEPS", "window_days": "carbonflex.CF_WINDOW_DAYS",
                                     "history_days": "carbonflex.CF_HISTORY_DAYS", "k": "carbonflex.K_NN"},
}


def help_text(command: str) -> str:
    res = CliRunner().invoke(make_app(), [command, "--help"], env={"COLUMNS": "400"})
    assert res.exit_code == 0, res.output
    return plain(res.output)


def test_names_and_codes_are_unique_and_every_entry_has_a_module_and_a_description():
    specs = [registry.get(n) for n in registry.names()]
    assert len({s.code for s in specs}) == len(specs) == len(set(registry.names())) == 21
    assert registry.names() == sim_core.POLICIES
    for s in specs:
        assert s.kind in ("rule", "baseline") and s.description, s.name
        assert registry.by_code(s.code) is s
        assert s.stateful == (s.kind == "baseline")
        if s.stateful:
            assert s.citation, f"{s.name}: a published baseline names its source"


def test_every_entry_runs_jitted_from_its_module(tmp_path):
    sc = sim_core.load(tiny_bundle(tmp_path))
    for name in registry.names():
        spec = registry.get(name)
        kernel = spec.kernel()
        assert isinstance(kernel, CPUDispatcher), name
        r = sim_core.run(sc, name, seed=0, days=0.5)
        assert r.totals["tasks"] == 8, name
        assert kernel.signatures, f"{name}: sim_core.run did not go through {spec.module}.run"
        module = importlib.import_module(spec.module)
        if not spec.stateful:  # (Simulator.builtin_actions asks a rule one step at a time)
            assert isinstance(module.decide, CPUDispatcher), name


def test_each_module_freezes_the_registry_defaults():
    """Every parameter is either a run option (its default the option's) or a constant of its kernel module
    (frozen at compile time: the module's value is the registry's, of the same type)."""
    n_const = 0
    for name in registry.names():
        spec = registry.get(name)
        for p in spec.params:
            if p.option is not None:
                assert getattr(make_options(), p.option) == p.default, (name, p.name)
                continue
            module, const = CONSTANTS[spec.module][p.name].split(".")
            value = getattr(importlib.import_module(f"sim_core.policies.{module}"), const)
            assert value == p.default and type(value) is type(p.default), (name, p.name)
            n_const += 1
    assert n_const == 4 * 4 + 1 + 2 + 2 * 4 + 2  # (GAIA's four variants share four, CarbonFlex's two four)
    rules = importlib.import_module("sim_core.policies.rules")
    assert registry.code("defer_to_greener") == rules.DEFER_TO_GREENER
    assert rules.LOCAL_ONLY == registry.code_of("local_only") == 489716376  # (sha256 of the name, first 31 bits)


#: a module's reads of the registry: ``registry.code("name")`` / ``registry.param("name", ...)``
READS = re.compile(r"registry\.(?:code|param)\(\s*\"([a-z0-9_]+)\"")


def test_each_module_reads_only_its_own_policies_from_the_registry():
    """The cache guard's premise (``registry.frozen``): a module's kernels freeze only the codes and parameters of
    the policies it runs, so an edit of another policy's entry cannot leave them stale."""
    read = 0
    for path in sorted((ROOT / "sim_core" / "policies").rglob("*.py")):
        module = ".".join(path.relative_to(ROOT).with_suffix("").parts).removesuffix(".__init__")
        for name in READS.findall(path.read_text()):
            spec = registry.get(name)
            assert module == spec.module or module.startswith(spec.module + "."), (module, name)
            assert f"{name}={spec.code}:".encode() in registry.frozen(module)
            read += 1
    assert read == 34  # (every read found: rules 9, gaia 8, wait_awhile 6, vcc 3, carbonscaler 2, carbonflex 6)


def test_codes_come_from_the_names_alone():
    """The registry assigns each code from the policy's name: unique, the same in every process, and unchanged
    when a policy is added (or removed) anywhere in the table; results and run keys store names, not codes."""
    before = {n: registry.code(n) for n in registry.names()}
    assert all(0 <= c < 2**31 and c == registry.code_of(n) for n, c in before.items())
    frozen = {m: registry.frozen(m) for m in {registry.get(n).module for n in before}}
    spec = register(PolicySpec("a_new_rule", "a_new_rule_module", "rule", "a new rule, no list edited"))
    try:
        assert registry.code("a_new_rule") == registry.code_of("a_new_rule") not in before.values()
        assert registry.by_code(spec.code) is spec and registry.names()[-1] == "a_new_rule"
        assert {n: registry.code(n) for n in before} == before
        assert {m: registry.frozen(m) for m in frozen} == frozen  # (no module's kernels recompile)
        assert registry.frozen("a_new_rule_module") == f"a_new_rule={spec.code}:;\n".encode()
    finally:
        unregister("a_new_rule")
    assert {n: registry.code(n) for n in registry.names()} == before
    # a fresh interpreter assigns the same codes (sha256, not Python's salted hash)
    out = subprocess.run([sys.executable, "-c", "from sim_core.policies import registry as r; "
                          "print({n: r.code(n) for n in r.names()})"], capture_output=True, text=True, check=True,
                         env={**os.environ, "PYTHONHASHSEED": "12345"}, cwd=ROOT).stdout
    assert out.strip() == str(before)


def test_a_code_that_collides_is_refused(monkeypatch):
    monkeypatch.setattr(registry, "code_of", lambda name: 7)
    with pytest.raises(ValueError, match=r"policy 'a_clash': its code 7 is already that of 'local_only' \(rename"):
        register(PolicySpec("a_clash", "x", "rule", "d"))
    assert "a_clash" not in registry.names()


def test_the_command_line_the_partitions_and_the_docs_table_are_the_registry():
    from dagster_project.partitions import _policies

    for command in ("run", "compare"):
        text = help_text(command)
        assert all(n in text for n in registry.names()), command
    assert _policies() == list(registry.names())
    page = (DOCS / "baselines.md").read_text()
    assert registry.with_docs_table(page) == page, "python -m sim_core.policies docs/baselines.md"
    assert "| `carbonflex` | baseline | `slot_steps` = 4 steps" in page


def test_register_refuses_a_taken_name_and_builtins_stay():
    with pytest.raises(ValueError, match="policy 'vcc' is already declared"):
        register(PolicySpec("vcc", "x", "rule", "d"))
    with pytest.raises(ValueError, match="neither 'rule' nor 'baseline'"):
        register(PolicySpec("new_name", "x", "oracle", "d"))
    with pytest.raises(TypeError, match="register takes a PolicySpec, got dict"):
        register({"name": "new_name"})
    with pytest.raises(ValueError, match="policy 'local_only' is built in"):
        unregister("local_only")
    with pytest.raises(KeyError, match="no registered policy 'new_name'"):
        unregister("new_name")
    with pytest.raises(sim_core.RunOptionsError, match="unknown policy 'no_such_policy'; the policies: "):
        sim_core.run("/nonexistent", "no_such_policy")


@pytest.mark.parametrize(("name", "msg"), [
    ("lowest_carbn", "unknown policy 'lowest_carbn': did you mean 'lowest_carbon'?"),
    ("Local_Only", "unknown policy 'Local_Only': did you mean 'local_only'?"),
    ("carbonscalar", "unknown policy 'carbonscalar': did you mean 'carbonscaler'?"),
])
def test_a_misspelt_policy_gets_did_you_mean_everywhere_a_name_is_parsed(name, msg):
    from sim_core.bench.sweep import check_policies
    from sim_core.policies import registry

    assert registry.unknown(name) == msg
    with pytest.raises(KeyError) as info:
        registry.get(name)
    assert info.value.args[0] == msg
    with pytest.raises(sim_core.RunOptionsError) as info:
        sim_core.run("/nonexistent", name)
    assert str(info.value) == msg
    with pytest.raises(sim_core.RunOptionsError) as info:
        check_policies(["local_only", name])
    assert str(info.value) == msg


def test_a_name_close_to_nothing_gets_the_whole_list():
    from sim_core.policies import registry

    msg = registry.unknown("zzz")
    assert msg == f"unknown policy 'zzz'; the policies: {', '.join(sorted(registry.names()))}"
    assert "did you mean" not in msg and len(registry.names()) >= 17
    assert registry.unknown(["a"]).startswith("unknown policy ['a']; the policies: carbonflex, ")


# ---------------------------------------------------------------------------- a new policy, the documented way
#: the example of docs/adding_a_policy.md, with absolute imports (it lives outside the package)
MODULE = '''
import numpy as np
from numba import njit

from sim_core.engine.capacity import fallback_dc, fits
from sim_core.engine.layout import IO_S0, SC_PEND_N, SIG_CARBON
from sim_core.engine.loop import policy_loop
from sim_core.policies import registry

LOCAL_OR_GREENEST = registry.code("local_or_greenest")
'''


def _doc_example() -> str:
    """The kernels of docs/adding_a_policy.md's example (the test runs what the docs show)."""
    doc = (DOCS / "adding_a_policy.md").read_text()
    code = doc.split("```python\n", 1)[1].split("```", 1)[0]
    return code[code.index("@njit(cache=True, nogil=True)\ndef decide("):]


@pytest.fixture
def new_policy(tmp_path, monkeypatch):
    (tmp_path / "local_or_greenest_policy.py").write_text(textwrap.dedent(MODULE) + "\n\n" + _doc_example())
    monkeypatch.syspath_prepend(str(tmp_path))
    spec = register(PolicySpec("local_or_greenest", "local_or_greenest_policy", "rule",
                               "the origin when it has room, else the greenest datacenter with room"))
    yield spec
    unregister(spec.name)
    sys.modules.pop("local_or_greenest_policy", None)


def test_a_new_policy_is_one_module_and_one_registry_entry(new_policy, tmp_path):
    assert "local_or_greenest" in help_text("compare")
    p = tiny_bundle(tmp_path / "b")
    r = sim_core.run(p, "local_or_greenest", seed=0)
    kernel = new_policy.kernel()
    assert isinstance(kernel, CPUDispatcher) and len(kernel.signatures) == 1  # it ran jitted
    # every task of the tiny bundle fits at its origin: exactly local_only's run
    assert r.totals == sim_core.run(p, "local_only", seed=0).totals
    assert r.tasks["dest"].to_list() == r.tasks["origin"].to_list()
    # eight tasks at once on 6 cores per site: the ones that find no room at their origin go to the greenest
    # site with room (BB), where local_only queues them at their origin
    busy = tiny_bundle(tmp_path / "busy", total_cores=6,
                       tasks={"arrival_ts_utc": np.zeros(8), "duration_s": np.full(8, 2000.0),
                              "cpu_cores": np.full(8, 4.0)},
                       signals={"carbon_g_per_kwh": np.array([[500.0] * 96, [100.0] * 96, [300.0] * 96])})
    rb = sim_core.run(busy, "local_or_greenest", seed=0)
    moved = rb.tasks.filter(rb.tasks["dest"] != rb.tasks["origin"])
    assert moved.height > 0 and "BB" in set(moved["dest"].cast(str).to_list())
    lo = sim_core.run(busy, "local_only", seed=0).tasks
    assert lo.filter(lo["dest"] != lo["origin"]).height == 0


# ---------------------------------------------------------------------------- a new stateful policy owns its state
STATEFUL = '''
from collections import namedtuple

import numpy as np
from numba import njit

from sim_core.engine.layout import SC_PEND_N
from sim_core.engine.loop import policy_loop

#: its own state: no field of another policy's, none of its added to theirs
CountingState = namedtuple("CountingState", ["steps", "seen"])


def new_state(n_tasks, n_dc, n_steps, horizon_steps, past):
    return CountingState(steps=np.zeros(1, np.int64), seen=np.zeros(max(n_tasks, 1), np.int64))


@njit(cache=True, nogil=True)
def decide(T, S, C, info, P, code, j, actions):
    P.steps[0] += 1
    for q in range(S.sc[SC_PEND_N]):
        i = S.pend[q]
        P.seen[i] += 1
        actions[q] = T.origin[i] + 1


run = policy_loop(decide)
'''


def test_a_new_stateful_policy_brings_its_own_state(tmp_path, monkeypatch):
    """A baseline declares its own state in its module (``new_state``); the run makes it and passes it to the
    module's jitted loop, which Numba compiles for that type: nothing shared is widened."""
    from sim_core.simulator import Prepared

    (tmp_path / "counting_policy.py").write_text(STATEFUL)
    monkeypatch.syspath_prepend(str(tmp_path))
    spec = register(PolicySpec("counting_baseline", "counting_policy", "baseline", "every task at its origin, "
                               "counting the steps and each task's decisions in its own state"))
    try:
        p = tiny_bundle(tmp_path / "b")
        prep = Prepared(sim_core.load(p), 0, policy_code=spec.code, controls=spec.stateful)
        assert type(prep.plan).__name__ == "CountingState" and prep.plan.steps[0] == 0
        spec.kernel()(prep.tasks, prep.state, prep.ctx, prep.info, prep.plan, spec.code, prep.n_window)
        assert prep.plan.steps[0] == prep.n_window == 96  # asked at every step (a baseline)
        assert prep.plan.seen.tolist() == [1] * 8  # each task decided once, at the step it arrived
        r = sim_core.run(p, "counting_baseline", seed=0)
        assert r.totals["tasks"] == 8 and r.tasks["dest"].to_list() == r.tasks["origin"].to_list()
    finally:
        unregister(spec.name)
        sys.modules.pop("counting_policy", None)
    # the built-in baselines' states: each its own type, none holding another's parts
    states = {registry.get(n).module: type(Prepared(sim_core.load(p), 0, policy_code=registry.code(n),
                                                    controls=True).plan).__name__ for n in registry.of_kind("baseline")}
    assert states == {"sim_core.policies.wait_awhile": "WaitAwhileState", "sim_core.policies.gaia": "GaiaState",
                      "sim_core.policies.carbonscaler": "CarbonScalerState", "sim_core.policies.vcc": "VccState",
                      "sim_core.policies.carbonflex": "CarbonFlexState"}
