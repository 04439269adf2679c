"""The one ``gridshift`` command line: every command listed and documented, the older names (``scenario_builder``,
``python -m scenario_builder``, ``python -m sim_core``) run the same command, shared options read the same in
every command, ``ui`` takes its options in any order, and the package sits above every layer."""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from dagster_project.resources import GridshiftResource
from gridshift import run_options
from gridshift.home import Home
from gridshift_cli import make_app
from sim_core.optimum import optimum
from sim_core.policies import PolicySpec, register, unregister
from sim_core.testing import tiny_bundle
from tests.cli_text import plain

ROOT = Path(__file__).resolve().parents[3]
BIN = Path(sys.executable).parent
COMMANDS = ("ingest", "export", "verify", "inspect", "list", "run", "compare", "optimum", "leaderboard", "ui")
ENV = {**os.environ, "COLUMNS": "200", "NO_COLOR": "1", "TERM": "dumb"}


def _commands(app: typer.Typer) -> dict:
    return typer.main.get_command(app).commands


def test_gridshift_help_lists_every_command_and_each_commands_help_works():
    runner = CliRunner()
    res = runner.invoke(make_app(), ["--help"], env={"COLUMNS": "200"})
    assert res.exit_code == 0, res.output
    for name in COMMANDS:
        assert f"│ {name} " in res.output, name
        sub = runner.invoke(make_app(), [name, "--help"], env={"COLUMNS": "200"})
        assert sub.exit_code == 0, (name, sub.output)
        assert "Usage:" in sub.output and f" {name} [OPTIONS]" in sub.output, name


def test_a_shared_option_reads_the_same_in_every_command_that_takes_it():
    seen: dict[str, set[str]] = {}
    for cmd in _commands(make_app()).values():
        for p in cmd.params:
            for opt in getattr(p, "opts", []):
                if opt.startswith("--") and opt != "--help":
                    seen.setdefault(opt, set()).add(p.help)
    shared = {"--home", "--mirror", "--regions", "--seed", "--days", "--start", "--live", "--allow-partial",
              # the run options' flags (generated from gridshift.run_options)
              *(o.cli_flag.split("/")[0] for o in run_options.declared() if len(o.commands) > 1)}
    assert {"--power", "--forecast", "--allow-defer", "--sla-multiplier", "--locality", "--locality-retention-days",
            "--transfer-kwh-per-gb"} <= shared
    for opt in shared:
        assert len(seen[opt]) == 1, f"{opt} is declared more than once: {seen[opt]}"
    assert len(seen["--year"]) == 2  # a range (ingest, export) or one year (plot-workload): two declarations


def _help(argv: list[str]) -> str:
    res = subprocess.run(argv, capture_output=True, text=True, env=ENV, timeout=600, check=False)
    assert res.returncode == 0, res.stderr
    return "\n".join(line for line in res.stdout.splitlines() if "Usage:" not in line)


def test_the_older_names_run_the_same_command(tmp_path):
    gridshift = _help([str(BIN / "gridshift"), "--help"])
    assert all(f"│ {c} " in gridshift for c in COMMANDS)
    assert _help([str(BIN / "scenario_builder"), "--help"]) == gridshift
    assert _help([sys.executable, "-m", "scenario_builder", "--help"]) == gridshift
    assert _help([sys.executable, "-m", "sim_core", "--help"]) == gridshift
    # and a real command gives the same result under each name
    bundle = tiny_bundle(tmp_path / "b")
    outs = [subprocess.run([*argv, "verify", str(bundle)], capture_output=True, text=True, env=ENV, timeout=600,
                           check=False) for argv in ([str(BIN / "gridshift")], [sys.executable, "-m", "sim_core"])]
    assert [o.returncode for o in outs] == [0, 0], [o.stderr for o in outs]
    assert outs[0].stdout == outs[1].stdout and outs[0].stdout.startswith("ok ")


def test_a_registered_policy_appears_in_run_and_compare_help():
    spec = register(PolicySpec("cli_listed_policy", "cli_listed_policy_module", "rule", "listed by the CLI"))
    try:
        for command in ("run", "compare"):
            res = CliRunner().invoke(make_app(), [command, "--help"], env={"COLUMNS": "400"})
            assert res.exit_code == 0, res.output
            assert "cli_listed_policy" in plain(res.output), command
    finally:
        unregister(spec.name)
    res = CliRunner().invoke(make_app(), ["compare", "--help"], env={"COLUMNS": "400"})
    assert "cli_listed_policy" not in res.output


@pytest.mark.parametrize("order", ["dg-first", "gridshift-first"])
def test_ui_takes_home_mirror_and_dg_options_in_any_order(tmp_path, order):
    """``gridshift ui`` replaces itself with ``dg dev``: a stand-in ``dg`` on the PATH records what it got."""
    fake = tmp_path / "bin" / "dg"
    fake.parent.mkdir()
    fake.write_text('#!/bin/sh\n'
                    'printf "%s\\n" "$*" "$DAGSTER_HOME" "$GRIDSHIFT_HOME" "$GRIDSHIFT_MIRROR" > "$DG_OUT"\n')
    fake.chmod(0o755)
    home, mirror, out = tmp_path / "home", tmp_path / "mirror", tmp_path / "dg.out"
    ours = ["--home", str(home), "--mirror", str(mirror)]
    theirs = ["-p", "3125", "--host", "127.0.0.1"]
    args = [*theirs, *ours] if order == "dg-first" else [*ours, *theirs]
    env = {**ENV, "PATH": f"{fake.parent}{os.pathsep}{ENV['PATH']}", "DG_OUT": str(out)}
    env.pop("GRIDSHIFT_HOME", None)
    env.pop("GRIDSHIFT_MIRROR", None)
    res = subprocess.run([sys.executable, "-m", "gridshift_cli", "ui", *args], capture_output=True, text=True,
                         env=env, timeout=600, check=False, cwd=tmp_path)
    assert res.returncode == 0, res.stderr
    got = out.read_text().splitlines()
    # the mirror is the home's configuration, read by the UI's runs (no environment variable passed on)
    assert got == ["dev -p 3125 --host 127.0.0.1", str(home / "dagster"), str(home), ""]
    assert (home / "dagster" / "dagster.yaml").is_file()
    assert Home.resolve(home).configured_mirror() == mirror
    assert GridshiftResource(home=str(home)).mirror_path() == mirror


def test_the_command_line_sits_above_every_layer_with_no_exemption():
    cfg = tomllib.loads((ROOT / "pyproject.toml").read_text())
    contracts = cfg["tool"]["importlinter"]["contracts"]
    assert all("ignore_imports" not in c for c in contracts)
    layers = next(c for c in contracts if c["type"] == "layers")["layers"]
    assert layers[0] == "gridshift_cli"
    assert set(cfg["project"]["scripts"].values()) == {"gridshift_cli:main"}
    assert "gridshift_cli" in cfg["tool"]["hatch"]["build"]["targets"]["wheel"]["packages"]
    # the lower packages' entry shims name the command line only at run time, never as an import
    for shim in ("sim_core/__main__.py", "scenario_builder/__main__.py"):
        text = (ROOT / shim).read_text()
        assert "import gridshift_cli" not in text and "from gridshift_cli" not in text


def test_optimum_prints_the_bound_of_sim_core_optimum_and_refuses_a_bad_objective(tmp_path):
    bundle = tiny_bundle(tmp_path / "b")
    for objective in ("carbon", "cost"):
        res = CliRunner().invoke(make_app(), ["optimum", str(bundle), "--seed", "1", "--days", "0.5",
                                              "--objective", objective], env={"COLUMNS": "200"})
        assert res.exit_code == 0, res.output
        printed = float(re.search(r"^bound ([0-9.]+) ", res.output, flags=re.M).group(1))
        want = optimum(bundle, seed=1, days=0.5, objective=objective)
        assert printed == pytest.approx(want.value, abs=5e-7) and want.value > 0
        assert want.steps == 48 and "0.5 days from 2023-01-01T00:00:00+00:00" in res.output
    bad = CliRunner().invoke(make_app(), ["optimum", str(bundle), "--objective", "nope"], env={"COLUMNS": "200"})
    assert bad.exit_code == 2 and "objective must be one of" in bad.output
    # --checkpoint: the solved horizon is kept; the next call reads it and prints the same bound
    args = ["optimum", str(bundle), "--seed", "1", "--days", "0.5", "--checkpoint", str(tmp_path / "ck")]
    first, second = (CliRunner().invoke(make_app(), args, env={"COLUMNS": "200"}) for _ in range(2))
    assert first.exit_code == 0 and second.exit_code == 0, (first.output, second.output)
    assert "read from" not in first.output and f"1 of 1 horizons read from {tmp_path / 'ck'}" in second.output
    bound = re.compile(r"^bound [0-9.]+ .*$", flags=re.M)
    assert bound.search(first.output).group(0).split(";")[0] == bound.search(second.output).group(0).split(";")[0]


def test_run_without_task_results_prints_the_folded_totals_and_refuses_out(tmp_path):
    """``gridshift run --no-task-results`` (a chunked run that folds its per-task results, sim_core.chunks.Tallies):
    the same task counts as the run that keeps them; ``--out`` (which writes them) is refused by name."""
    import sim_core

    bundle = tiny_bundle(tmp_path / "b")
    args = ["run", str(bundle), "--days", "1", "--chunk-steps", "7", "--seed", "2"]
    res = CliRunner().invoke(make_app(), [*args, "--no-task-results"], env={"COLUMNS": "200"})
    assert res.exit_code == 0, res.output
    want = sim_core.run(bundle, "lowest_carbon", seed=2, days=1, chunk_steps=7).totals
    for key in ("tasks", "tasks_started", "tasks_completed"):
        assert re.search(rf"^\W*{key}\W+{want[key]:,}\W*$", res.output, flags=re.M), (key, res.output)
    bad = CliRunner().invoke(make_app(), [*args, "--no-task-results", "--out", str(tmp_path / "o")],
                             env={"COLUMNS": "200"})
    assert bad.exit_code == 2 and "--no-task-results does not keep" in bad.output
    assert not (tmp_path / "o").exists()
