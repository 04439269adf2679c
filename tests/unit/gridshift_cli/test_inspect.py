"""``gridshift inspect`` prints a readable summary: tables with a unit on every quantity (no Python dict), a
bundle named by its id under the home as well as by its directory."""

from __future__ import annotations

import shutil

from typer.testing import CliRunner

from gridshift_cli import app
from gridshift_cli.bundles import SIGNAL_COLUMNS, TASK_ROWS
from scenario_builder.inspect import summary
from tests.unit.gridshift.bundle_hostile import valid_bundle

runner = CliRunner()
ENV = {"COLUMNS": "200", "NO_COLOR": "1"}


def _cells(output: str) -> list[list[str]]:
    """The cells of every table row printed (box-drawing separators)."""
    return [[c.strip() for c in line.strip().strip("│┃").split("│" if "│" in line else "┃")]
            for line in output.splitlines() if line.strip().startswith(("│", "┃"))]


def test_inspect_prints_tables_with_units_not_a_dict(tmp_path):
    b = valid_bundle(tmp_path / "b")
    s = summary(b)
    r = runner.invoke(app, ["inspect", str(b)], env=ENV)
    assert r.exit_code == 0, r.output
    assert "{" not in r.output and "}" not in r.output and "=" not in r.output  # no dict, no k=v run-on line
    cells = _cells(r.output)
    header = next(row for row in cells if row[0] == "region" and len(row) == 1 + len(SIGNAL_COLUMNS))
    assert header[1:] == [h for h, _k, _f in SIGNAL_COLUMNS]
    assert all("(" in h and h.endswith(")") for h in header[1:])  # every signal header names its unit
    for loc, stats in zip(s["locations"], s["signal_stats"], strict=True):
        row = next(row for row in cells if row[0] == loc and len(row) == len(header))
        assert [float(x) for x in row[1:]] == [round(stats[k], 1) for _h, k, _f in SIGNAL_COLUMNS]
    by_name = {row[0]: row[1] for row in cells if len(row) == 2}
    assert by_name["tasks"] == f"{s['tasks']['n_tasks']:,}" == "8"
    assert by_name["mean duration"] == f"{2000.0 / 3600:.2f} h"  # the bundle's mean duration_s, in hours
    for label, _k, _scale, fmt in TASK_ROWS:
        assert by_name[label].endswith(fmt.rsplit(" ", 1)[1]), label
    assert by_name["locations"] == ", ".join(s["locations"])
    assert by_name["year (UTC)"] == f"{s['year']}: {s['n_steps']} steps of 15 min"
    for k, v in s["parameters"].items():
        assert by_name[k] == str(v), k


def test_inspect_takes_a_bundle_id_under_the_home(tmp_path):
    b = valid_bundle(tmp_path / "b")
    home = tmp_path / "home"
    shutil.copytree(b, home / "bundles" / b.name)
    r = runner.invoke(app, ["inspect", b.name, "--home", str(home)], env=ENV)
    assert r.exit_code == 0, r.output
    assert str(home / "bundles" / b.name) in r.output
    r = runner.invoke(app, ["inspect", "../b", "--home", str(home)], env=ENV)
    assert r.exit_code == 2 and "BUNDLE" in r.output  # an id never leaves the home's bundles folder


def test_inspect_writes_its_failure_log_under_the_home_given_not_the_working_directory(tmp_path, monkeypatch):
    b = valid_bundle(tmp_path / "b")
    (b / "manifest.json").write_text("{not json")
    cwd, home = tmp_path / "cwd", tmp_path / "home"
    cwd.mkdir()
    monkeypatch.chdir(cwd)
    monkeypatch.delenv("GRIDSHIFT_HOME", raising=False)
    r = runner.invoke(app, ["inspect", str(b), "--home", str(home)], env=ENV)
    assert r.exit_code == 2, r.output
    assert list(cwd.rglob("*")) == []  # nothing written where the command was run
    (log,) = (home / "logs").glob("gridshift-*.log")
    assert log.name in "".join(r.output.split())  # the report names it
