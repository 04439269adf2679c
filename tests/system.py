"""System programs (not Python packages) a few tests need: found on PATH, else the test is skipped with the
command that installs the program; under CI (``CI=true``, which ``.ci/run`` sets) a missing program fails the
test instead, so CI cannot pass without running it."""

from __future__ import annotations

import os
import shutil

import pytest

#: how to install headless Chromium (Debian's ``chromium``): as root or through sudo (``run.sh`` says which)
CHROMIUM_INSTALL = "./run.sh install-chromium"


def in_ci() -> bool:
    """``CI`` set to a true value (GitHub Actions, GitLab and ``.ci/run`` set ``CI=true``)."""
    return os.environ.get("CI", "").strip().lower() in ("1", "true", "yes")


def require_program(names: tuple[str, ...], what: str, install: str) -> str:
    """The path of the first of ``names`` on PATH; if none is there, skip the test naming ``install``
    (outside CI) or fail it (under CI)."""
    for name in names:
        exe = shutil.which(name)
        if exe is not None:
            return exe
    reason = f"{what} not found (looked for {', '.join(names)} on PATH): install it with `{install}`"
    if in_ci():
        pytest.fail(f"{reason}; CI requires it", pytrace=False)
    pytest.skip(reason)
