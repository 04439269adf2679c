"""``gridshift_cli.progress.Phases``: a phase expected to be slow is shown as it begins and with its seconds
at its end; any other only once it has run its quiet seconds; a quick warm run prints nothing."""

from __future__ import annotations

import io
import re
import time

from gridshift_cli.progress import Phases


def test_expected_slow_phases_are_shown_as_they_begin():
    out = io.StringIO()
    p = Phases(out, expect_slow=True)
    p.begin("set-up")
    assert out.getvalue() == "  set-up ..."  # before the phase's work
    p.begin("stepping")
    p.end()
    p.end()  # (a second end adds nothing)
    assert re.fullmatch(r"  set-up \.\.\. \d+\.\d s\n  stepping \.\.\. \d+\.\d s\n", out.getvalue())


def test_quick_phases_print_nothing():
    out = io.StringIO()
    p = Phases(out)
    for name in ("set-up", "stepping", "results"):
        p.begin(name)
    p.end()
    assert out.getvalue() == ""


def test_a_phase_that_outlasts_its_quiet_seconds_is_shown_then_ended():
    out = io.StringIO()
    p = Phases(out, quiet_s=0.0)
    p.begin("stepping")
    deadline = time.monotonic() + 60
    while out.getvalue() == "" and time.monotonic() < deadline:  # (the timer's thread writes it)
        time.sleep(0.01)
    assert out.getvalue() == "  stepping ..."
    p.end()
    assert re.fullmatch(r"  stepping \.\.\. \d+\.\d s\n", out.getvalue())
