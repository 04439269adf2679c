"""benchmarks/_main_bundle.py: the options every analysis script chooses its bundle by, declared once."""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from benchmarks import _main_bundle as M


def _parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser()
    M.add_bundle_args(ap, "a synthetic bundle")
    return ap


def test_a_named_bundle_is_measured_as_it_is_and_named_by_its_folder(monkeypatch):
    monkeypatch.setattr(M, "main_bundle", lambda home, mirror: pytest.fail("the main job's export was asked for"))
    args = _parser().parse_args(["--bundle", "/somewhere/bundles/e9a16ca7c387ad3b"])
    assert M.chosen_bundle(args) == (Path("/somewhere/bundles/e9a16ca7c387ad3b"), "bundle e9a16ca7c387ad3b")


def test_without_a_bundle_the_main_jobs_export_in_the_home_is_measured(monkeypatch, tmp_path):
    asked = []
    monkeypatch.setattr(M, "main_bundle", lambda home, mirror: asked.append((home, mirror)) or tmp_path / "abc")
    args = _parser().parse_args(["--home", str(tmp_path), "--mirror", "/m"])
    path, what = M.chosen_bundle(args)
    assert asked == [(tmp_path, Path("/m"))] and path == tmp_path / "abc"
    assert what == f"bundle abc (the main job's, `{M.export_command()}`)"


def test_a_bundle_and_the_synthetic_one_are_refused_together(capsys):
    with pytest.raises(SystemExit):
        _parser().parse_args(["--bundle", "x", "--synthetic"])
    assert "not allowed with argument --bundle" in capsys.readouterr().err
