"""Write one benchmark's section of BENCHMARKS.md between its markers, keeping the others.

A section is replaced whole on every run: it holds the current figures, their command and the machine, never
a history of earlier runs (git keeps that).
"""

from __future__ import annotations

import platform
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BENCHMARKS_MD = ROOT / "BENCHMARKS.md"
HEADER = ("# Benchmarks\n\n"
          "Every figure below is printed by a script in `benchmarks/`, which writes its own section of this file\n"
          "(between its markers, `benchmarks/_report.py`) with the command and the machine; a section holds only the\n"
          "current figures (earlier ones are in git's history).\n")


def machine() -> str:
    import os

    return f"{platform.machine()}, {os.cpu_count()} cores, Python {platform.python_version()}"


def update_section(name: str, body: str, path: Path = BENCHMARKS_MD) -> None:
    start, end = f"<!-- {name}:start -->", f"<!-- {name}:end -->"
    text = path.read_text() if path.exists() else HEADER
    block = f"{start}\n{body.rstrip()}\n{end}"
    if start in text and end in text:
        text = re.sub(re.escape(start) + r".*?" + re.escape(end), lambda _m: block, text, flags=re.S)
    else:
        text = text.rstrip() + "\n\n" + block + "\n"
    path.write_text(text)


def run_child(code: str, *args, env=None) -> str:
    """Run ``code`` in a fresh interpreter (its own imports, JIT cache and peak RSS) with ``args`` as argv;
    return the last line it printed (the figures, or a path)."""
    out = subprocess.run([sys.executable, "-c", code, *map(str, args)], check=True, capture_output=True, text=True,
                         cwd=ROOT, env=env)
    return out.stdout.strip().splitlines()[-1]


def run_child_json(code: str, *args, env=None) -> dict:
    """:func:`run_child` for a child that prints its figures as one JSON line."""
    import json

    return json.loads(run_child(code, *args, env=env))


def publish(name: str, body: str, write: bool) -> None:
    """Print a benchmark's section and, unless ``write`` is off (``--no-write``), store it in BENCHMARKS.md."""
    print(body)
    if write:
        update_section(name, body)
        print("updated BENCHMARKS.md")


def bundle_window_args(description: str):
    """The arguments of the analysis scripts that run policies on a window of one bundle: ``--bundle``
    (required), ``--days`` (7) and ``--seed`` (0)."""
    import argparse

    ap = argparse.ArgumentParser(description=description)
    ap.add_argument("--bundle", required=True)
    ap.add_argument("--days", type=float, default=7.0)
    ap.add_argument("--seed", type=int, default=0)
    return ap.parse_args()
