"""A test's missing system program: skipped naming the install command outside CI, a failure under CI."""

from __future__ import annotations

import os
import stat

import pytest

from tests.system import CHROMIUM_INSTALL, in_ci, require_program

NAMES = ("gridshift-no-such-browser", "gridshift-no-such-browser-2")


@pytest.mark.parametrize("ci", ["", "false", "0"])
def test_missing_program_skips_with_the_install_command_outside_ci(monkeypatch, ci):
    monkeypatch.setenv("CI", ci)
    assert not in_ci()
    with pytest.raises(pytest.skip.Exception) as info:
        require_program(NAMES, "headless Chromium", CHROMIUM_INSTALL)
    msg = str(info.value)
    assert "headless Chromium not found" in msg and "`./run.sh install-chromium`" in msg and NAMES[1] in msg


@pytest.mark.parametrize("ci", ["true", "TRUE", "1"])
def test_missing_program_fails_under_ci(monkeypatch, ci):
    monkeypatch.setenv("CI", ci)
    with pytest.raises(pytest.fail.Exception, match=r"headless Chromium not found.*CI requires it"):
        require_program(NAMES, "headless Chromium", CHROMIUM_INSTALL)


def test_a_program_on_path_is_found_in_order(monkeypatch, tmp_path):
    exe = tmp_path / NAMES[1]
    exe.write_text("#!/bin/sh\n")
    exe.chmod(exe.stat().st_mode | stat.S_IXUSR)
    monkeypatch.setenv("PATH", f"{tmp_path}{os.pathsep}{os.environ.get('PATH', '')}")
    monkeypatch.setenv("CI", "true")
    assert require_program(NAMES, "headless Chromium", CHROMIUM_INSTALL) == str(exe)
