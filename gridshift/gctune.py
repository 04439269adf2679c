"""Cyclic garbage collection tuned for a command-line process that imports a lot and then works briefly.

Python's collector runs a young-generation pass every 700 net allocations and a full pass every 100 of
those; a full pass walks every tracked object, and after importing Dagster, pandera, polars and SQLAlchemy
there are ~300 k of them. Measured on ``scenario_builder ingest`` of the whole mirror (``gc.callbacks``
timing every pass): 815 passes, 0.68 s, of which 5 full passes 0.46 s. With the imports done while the
collector is paused and everything they created then frozen (``gc.freeze``: moved to a generation no pass
walks — module-level objects, which live as long as the process anyway), and the young generation
collected every 20 000 net allocations: 10 passes, 0.07–0.10 s. Cycles made after the imports are still
collected, only in larger batches.

Both apply only to a process that opted in with :func:`for_a_command` (the console entry point does): a
command run in-process (tests through typer's ``CliRunner``) leaves the host process's collector as it is
— frozen objects are never freed, and at that process's normal exit native extensions report them leaked.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator

#: Net allocations between young-generation passes for a command (CPython's default is 700); the older
#: generations keep CPython's ratio of 10 passes each.
YOUNG_THRESHOLD = 20_000

_opted_in = [False]


def for_a_command() -> None:
    """Collect in larger batches (:data:`YOUNG_THRESHOLD`) for the rest of this process, and let
    :func:`imports_uncollected` pause and freeze (this process is a command's own)."""
    gc.set_threshold(YOUNG_THRESHOLD, 10, 10)
    _opted_in[0] = True


@contextlib.contextmanager
def imports_uncollected() -> Iterator[None]:
    """Pause the collector while the block imports; on exit freeze everything alive (``gc.freeze``) and
    resume it (as it was) — also when the block raises. Nothing unless :func:`for_a_command` was called."""
    if not _opted_in[0]:
        yield
        return
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        if was:
            gc.enable()


__all__ = ["YOUNG_THRESHOLD", "for_a_command", "imports_uncollected"]
