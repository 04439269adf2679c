"""The policy registry (``sim_core.policies.registry``) and the kernels agree: every entry runs jitted from
its module, codes and names are unique, each module's frozen constants are the registry's parameter
defaults, and the command line, ``sim_core.POLICIES``, the Dagster sweep partitions and the docs table are
all the registry. Then a new policy is added the documented way -- one module and one registry entry -- and
appears in ``compare --help`` and runs jitted."""

from __future__ import annotations

import importlib
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

DOCS = Path(__file__).resolve().parents[3] / "docs"

#: kernel module -> parameter -> the module-level constant its kernels freeze ("<module>.<NAME>")
CONSTANTS = {
    "sim_core.policies.gaia": {"short_s": "gaia.GAIA_SHORT_S", "wait_short_s": "gaia.GAIA_WAIT_SHORT_S",
                               "wait_long_s": "gaia.GAIA_WAIT_LONG_S", "grid_steps": "gaia.GAIA_GRID_STEPS"},
    "sim_core.policies.carbonscaler": {"slot_steps": "carbonscaler.SLOT_STEPS"},
    "sim_core.policies.wait_awhile": {"quantile": "wait_awhile.THRESHOLD_Q",
                                      "window_steps": "wait_awhile.THRESHOLD_WINDOW"},
    "sim_core.policies.vcc": {"slot_steps": "vcc.SLOT_STEPS", "history_days": "plan.HISTORY_DAYS"},
    "sim_core.policies.carbonflex": {"slot_steps": "carbonflex.SLOT_STEPS", "window_days": "carbonflex.CF_WINDOW_DAYS",
                                     "history_days": "carbonflex.CF_HISTORY_DAYS", "k": "carbonflex.K_NN"},
}


def help_text(command: str) -> str:
    res = CliRunner().invoke(make_app(), [command, "--help"], env={"COLUMNS": "400"})
    assert res.exit_code == 0, res.output
    return " ".join(res.output.replace("│", " ").split())


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
    assert registry.code("defer_to_greener") == rules.DEFER_TO_GREENER and rules.LOCAL_ONLY == 0


def test_the_command_line_the_partitions_and_the_docs_table_are_the_registry():
    from dagster_project.partitions import _policies

    for command in ("run", "compare"):
        text = help_text(command)
        assert all(n in text for n in registry.names()), command
    assert _policies() == list(registry.names())
    page = (DOCS / "baselines.md").read_text()
    assert registry.with_docs_table(page) == page, "python -m sim_core.policies docs/baselines.md"
    assert "| `carbonflex` | 16 | baseline | `slot_steps` = 4 steps" in page


def test_register_refuses_a_taken_name_or_code_and_builtins_stay():
    with pytest.raises(ValueError, match="already registered"):
        register(PolicySpec("vcc", 99, "x", "rule", "d"))
    with pytest.raises(ValueError, match="code 15 is already 'vcc'"):
        register(PolicySpec("new_name", 15, "x", "rule", "d"))
    with pytest.raises(ValueError, match="neither 'rule' nor 'baseline'"):
        register(PolicySpec("new_name", 99, "x", "oracle", "d"))
    with pytest.raises(ValueError, match="built-in"):
        unregister("local_only")
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
    spec = register(PolicySpec("local_or_greenest", 117, "local_or_greenest_policy", "rule",
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
