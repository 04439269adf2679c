"""No silent minutes: a run that will compile says so first (``sim_core.precompile``, ``gridshift run``), a warm
one says nothing, and ``sim_core.run`` reports its phases. (The session fixture ``warm_jit`` has compiled every
policy into the cache these tests' processes use.)"""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest

import sim_core
from sim_core import precompile
from sim_core.engine import cache
from sim_core.policies import registry
from sim_core.testing import tiny_bundle


def gridshift_run(bundle, policy: str, env: dict) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "gridshift_cli", "run", str(bundle), "--policy", policy],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)


def assert_notice(line: str, names: list[str], parts: list[str]) -> None:
    """``line`` is the notice of ``names`` compiling ``parts``, its estimate at least the idle machine's (the
    process scaled it by its load then)."""
    m = re.fullmatch(r"gridshift: (compiling .* \(first run only, about )(\d+)( s\))\n", line)
    assert m, line
    seconds = int(m.group(2))
    assert seconds >= int(precompile.estimate_s(parts))
    assert line == f"gridshift: {precompile.notice_for(names, parts, seconds / precompile.estimate_s(parts))}\n"


def test_a_cold_cache_prints_the_notice_before_the_compile(tmp_path):
    """A fresh process on an empty NUMBA_CACHE_DIR: its first line on stderr is the notice with the estimate of
    both parts (the shared kernels, the rules' module), given while the policy's kernel is not yet in the
    cache, and the phases follow it. (The process is stopped there: the compile itself is
    benchmarks/bench_compile.py's.)"""
    bundle = tiny_bundle(tmp_path / "b")
    numba_cache = tmp_path / "numba-cache"
    proc = gridshift_run(bundle, "lowest_carbon", dict(os.environ, NUMBA_CACHE_DIR=str(numba_cache)))
    try:
        first = proc.stderr.readline()
        loop_index = list(numba_cache.glob("policies_*/rules.decide_loop-*.nbi"))
        second = proc.stderr.readline()
    finally:
        proc.kill()
        proc.communicate()
    assert_notice(first, ["lowest_carbon"], ["shared", "sim_core.policies.rules"])
    assert loop_index == []  # nothing of the policy compiled yet when the notice came
    assert second.startswith("  set-up ... ") and second.endswith(" s\n")  # (the run reads the bundle in it)


def test_compare_gives_one_notice_for_all_its_policies(tmp_path):
    bundle = tiny_bundle(tmp_path / "b")
    env = dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "numba-cache"))
    proc = subprocess.Popen([sys.executable, "-m", "gridshift_cli", "compare", str(bundle), "--policies",
                             "local_only,vcc,lowest_carbon", "--seeds", "0", "--no-store"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    try:
        first = proc.stderr.readline()
    finally:
        proc.kill()
        proc.communicate()
    assert_notice(first, ["local_only", "vcc", "lowest_carbon"],
                  ["shared", "sim_core.policies.rules", "sim_core.policies.vcc"])


def test_a_warm_cache_prints_no_notice_and_no_phases(tmp_path):
    bundle = tiny_bundle(tmp_path / "b")
    proc = gridshift_run(bundle, "lowest_carbon", dict(os.environ))
    out, err = proc.communicate(timeout=600)
    assert proc.returncode == 0, err
    assert "compiling" not in err and "  set-up" not in err and "  stepping" not in err
    assert f"lowest_carbon on {bundle.name}" in out and "cost_incl_transfer_usd" in out


def test_cold_parts_are_the_shared_kernels_and_the_policys_module(tmp_path, monkeypatch):
    assert precompile.cold_parts("lowest_carbon") == [] and precompile.notice(["lowest_carbon"]) is None
    monkeypatch.setattr(cache.config, "CACHE_DIR", str(tmp_path))  # an empty cache (every module is imported)
    assert precompile.cold_parts("lowest_carbon") == ["shared", "sim_core.policies.rules"]
    assert precompile.cold_parts("gaia_res_first") == ["shared", "sim_core.policies.gaia"]
    assert precompile.cold_parts("carbonflex") == ["shared", "sim_core.policies.carbonflex"]
    monkeypatch.setattr(precompile, "load_factor", lambda: 3.0)  # (three times an idle core's seconds)
    rules_s = 3.0 * (precompile.COMPILE_S["shared"] + precompile.COMPILE_S["sim_core.policies.rules"])
    assert precompile.notice(["defer_to_greener"]) == (
        f"compiling defer_to_greener (first run only, about {rules_s:.0f} s)")
    both = rules_s + 3.0 * precompile.COMPILE_S["sim_core.policies.vcc"]  # (the shared part and the rules' once)
    assert precompile.notice(["local_only", "vcc", "random"]) == (
        f"compiling local_only, vcc, random (first run only, about {both:.0f} s)")
    # more than three: two named, the rest counted (a log's 120 columns hold the line with the longest names)
    many = precompile.notice_for(["gaia_lowest_carbon_window", "wait_awhile_interrupting", "gaia_carbon_time",
                                  "carbonscaler"], ["shared"], 9.0)
    assert many.startswith("compiling gaia_lowest_carbon_window, wait_awhile_interrupting and 2 more (")
    every = sorted(registry.names(), key=len, reverse=True)
    assert len(precompile.notice_for(every, ["shared"], 99.0)) <= precompile.NOTICE_WIDTH
    # a policy module without a measured figure (a user's) gives a lower bound
    assert precompile.notice_for(["mine"], ["shared", "my_project.policy"]) == (
        f"compiling mine (first run only, over {precompile.COMPILE_S['shared']:.0f} s)")
    with pytest.raises(KeyError, match="no_such_policy"):
        precompile.cold_parts("no_such_policy")


def test_the_load_factor_is_the_load_per_core_and_never_below_one(monkeypatch):
    monkeypatch.setattr(os, "getloadavg", lambda: (9.0, 1.0, 1.0))
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    assert precompile.load_factor() == 4.5
    monkeypatch.setattr(os, "getloadavg", lambda: (0.5, 1.0, 1.0))
    assert precompile.load_factor() == 1.0


def test_every_policy_module_has_an_estimate():
    assert set(precompile.COMPILE_S) == {"shared", *(registry.get(n).module for n in registry.names())}
    assert all(s > 0 for s in precompile.COMPILE_S.values())


def test_warming_a_warm_cache_does_nothing(capsys):
    assert precompile.warm(["lowest_carbon", "gaia_carbon_time"], echo=pytest.fail) == []
    with pytest.raises(SystemExit, match="unknown policies \\['nope'\\]"):
        precompile.main(["lowest_carbon", "nope"])
    precompile.main([])
    assert capsys.readouterr().err == "already compiled: lowest_carbon\n"


def test_run_reports_its_phases_in_order(tmp_path):
    sc = sim_core.load(tiny_bundle(tmp_path / "b"))
    for policy in ("lowest_carbon", "wait_awhile", lambda obs: None):
        seen = []
        sim_core.run(sc, policy, on_phase=seen.append)
        assert seen == ["set-up", "stepping", "results"]


def test_a_cold_environment_says_it_compiles_before_it_does(tmp_path):
    """gymnasium.make on an empty cache (a first use compiled for 109 s in silence): its first stderr line is the
    notice, and once its kernels are compiled in this process's cache it says nothing."""
    bundle = tiny_bundle(tmp_path / "b")
    code = ("import sys; from sim_core.gym import TaskSchedulingEnv; "
            "e = TaskSchedulingEnv(sys.argv[1], single_action=True); e.reset(seed=0); e.step(0)")
    proc = subprocess.Popen([sys.executable, "-c", code, str(bundle)], stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, env=dict(os.environ, NUMBA_CACHE_DIR=str(tmp_path / "numba-cache")))
    try:
        first = proc.stderr.readline()
    finally:
        proc.kill()
        proc.communicate()
    assert re.fullmatch(r"gridshift: compiling the Gymnasium environment \(first run only, over \d+ s\)\n", first)

    from sim_core.gym import TaskSchedulingEnv
    from sim_core.rl.env import single_features

    env = TaskSchedulingEnv(bundle, single_action=True)
    env.reset(seed=0)
    env.step(0)
    assert precompile.kernels_notice("the Gymnasium environment", [single_features]) is None
