"""``gridshift.fastexit.exit_now``: the status of ``sys.exit``, the ``atexit`` handlers run and the streams
flushed before the process ends; a normal exit (waiting) while a non-daemon thread runs."""

from __future__ import annotations

import importlib.metadata
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from gridshift.fastexit import exit_code


def _run(body: str) -> subprocess.CompletedProcess:
    code = "import atexit, sys, threading, time\nfrom gridshift.fastexit import exit_now\n" + textwrap.dedent(body)
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize(("code", "status"), [(None, 0), (0, 0), (3, 3), ("bad input", 1)])
def test_exit_code_is_what_sys_exit_ends_with(code, status, capsys):
    assert exit_code(code) == status
    assert capsys.readouterr().err == ("bad input\n" if isinstance(code, str) else "")


def test_atexit_handlers_run_and_unterminated_output_is_flushed_before_the_status():
    got = _run("""
        atexit.register(lambda: print("atexit ran", file=sys.stderr))
        sys.stdout.write("no newline, buffered")
        exit_now(7)
        print("never")
    """)
    assert got.returncode == 7
    assert got.stdout == "no newline, buffered"
    assert got.stderr == "atexit ran\n"


def test_a_message_exits_1_and_a_running_non_daemon_thread_is_waited_for():
    got = _run("""
        threading.Thread(target=lambda: (time.sleep(0.5), print("thread done"))).start()
        exit_now("stopped")
    """)
    assert got.returncode == 1
    assert got.stdout == "thread done\n"  # the normal exit waited for it
    assert got.stderr == "stopped\n"


def test_the_installed_scenario_builder_command_ends_through_main():
    # the console script must enter through cli.main (fast exit, GC tuning), not typer's app directly
    eps = importlib.metadata.entry_points(group="console_scripts", name="scenario_builder")
    assert [ep.value for ep in eps] == ["scenario_builder.cli:main"]
    exe = shutil.which("scenario_builder", path=str(Path(sys.executable).parent))
    assert exe is not None
    got = subprocess.run([exe, "version"], capture_output=True, text=True, timeout=120)
    assert got.returncode == 0, got.stderr
    assert got.stdout.strip()
    bad = subprocess.run([exe, "no-such-command"], capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and "no-such-command" in bad.stderr
