"""A command's phases on stderr, so that no step runs silently for long: :class:`Phases`.

A phase announced as slow (``expect_slow``: a cold compile ahead) is printed as it begins; any other is
printed only once it has run :data:`QUIET_S` seconds (a timer), and then with its seconds when it ends. A
warm run of a few seconds prints nothing.
"""

from __future__ import annotations

import sys
import threading
import time

#: a phase running longer than this is shown, whether or not it was expected to be slow
QUIET_S = 5.0


class Phases:
    """Call :meth:`begin` with each phase's name as it starts (``sim_core.run``'s ``on_phase``) and
    :meth:`end` after the last one. Lines go to ``stream`` (stderr), each flushed at once (pipes, logs)."""

    def __init__(self, stream=None, *, expect_slow: bool = False, quiet_s: float = QUIET_S):
        self.stream = sys.stderr if stream is None else stream
        self.expect_slow = expect_slow
        self.quiet_s = quiet_s
        self._lock = threading.Lock()
        self._name: str | None = None
        self._t0 = 0.0
        self._shown = False
        self._timer: threading.Timer | None = None

    def _write(self, text: str) -> None:
        self.stream.write(text)
        self.stream.flush()

    def _show(self, name: str) -> None:
        """Print the start of phase ``name`` (from the timer or at once), unless it has already ended."""
        with self._lock:
            if self._name == name and not self._shown:
                self._shown = True
                self._write(f"  {name} ...")

    def begin(self, name: str) -> None:
        """End the current phase, start ``name``."""
        self.end()
        with self._lock:
            self._name, self._t0, self._shown = name, time.perf_counter(), False
        if self.expect_slow:
            self._show(name)
        else:
            self._timer = threading.Timer(self.quiet_s, self._show, (name,))
            self._timer.daemon = True
            self._timer.start()

    def end(self) -> None:
        """End the current phase (its seconds printed if its start was)."""
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        with self._lock:
            if self._name is not None and self._shown:
                self._write(f" {time.perf_counter() - self._t0:.1f} s\n")
            self._name = None
