"""gridshift's command line: one ``gridshift`` command over every layer (``ingest``, ``export``, ``verify``,
``inspect``, ``list``, ``run``, ``compare``, ``optimum``, ``ui``).

It sits above every package (import-linter's top layer): it may import any of them, none imports it. The
older names run the same command: the ``scenario_builder`` console script, ``python -m scenario_builder``
and ``python -m sim_core``.
"""

from __future__ import annotations

from gridshift_cli.app import make_app

app = make_app()


def main() -> None:  # pragma: no cover - console entry
    """The console script: the app made now, so it lists every policy registered so far."""
    make_app()()


__all__ = ["app", "main", "make_app"]
