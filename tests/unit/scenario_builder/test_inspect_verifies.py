"""``scenario_builder inspect`` verifies a bundle before it summarises or plots it: a hash-valid bundle with
infinite task durations used to be summarised (a mean duration of inf h) as if the simulator could run it."""

from __future__ import annotations

import math

import pytest
from typer.testing import CliRunner

from gridshift.bundle import BundleError
from gridshift_cli import app
from scenario_builder.inspect import plot, summary
from tests.unit.gridshift.bundle_hostile import rewrite_parquet, set_value, valid_bundle

runner = CliRunner()


@pytest.fixture
def hostile(tmp_path):
    b = valid_bundle(tmp_path / "b")
    rewrite_parquet(b, "tasks.parquet", set_value("duration_s", 2, math.inf))  # re-signed: the hashes are valid
    return b


def test_summary_and_plot_refuse_a_bundle_that_fails_verify(hostile, tmp_path):
    for call in (lambda: summary(hostile), lambda: plot(hostile, tmp_path / "plots")):
        with pytest.raises(BundleError) as info:
            call()
        err = info.value
        assert err.file.endswith("tasks.parquet") and err.column == "duration_s" and err.rows == [2]
        assert err.values == [math.inf]
    assert not (tmp_path / "plots").exists()  # nothing written


def test_inspect_command_prints_the_refusal_and_exits_2(hostile, tmp_path, monkeypatch):
    monkeypatch.setenv("GRIDSHIFT_HOME", str(tmp_path / "home"))
    r = runner.invoke(app, ["inspect", str(hostile)])
    assert r.exit_code == 2  # (the CLIs' status for refused input)
    assert "tasks.parquet" in r.output and "duration_s" in r.output and "non-finite" in r.output
    assert "mean duration" not in r.output


def test_inspect_summarises_a_valid_bundle(tmp_path):
    s = summary(valid_bundle(tmp_path / "ok"))
    assert s["tasks"]["n_tasks"] == 8 and s["tasks"]["mean_duration_s"] == 2000.0
    assert s["locations"] == ["AA", "BB", "CC"] and s["n_steps"] == 96
