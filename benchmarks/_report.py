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


def run_child_capped(code: str, *args, cap_gb: float) -> dict:
    """:func:`run_child_json` for a child that caps its own address space at ``cap_gb``: its figures, or
    ``{"refused": ..., "load_avg": ...}`` when it ran out of memory under the cap (any other failure stops the
    benchmark with the child's error)."""
    import json
    import os

    r = subprocess.run([sys.executable, "-c", code, *map(str, args)], cwd=ROOT, capture_output=True, text=True)
    if r.returncode == 0:
        return json.loads(r.stdout.strip().splitlines()[-1])
    if "Unable to allocate" in r.stderr or "memory" in r.stderr.lower():
        return {"refused": f"out of memory under a {cap_gb:g} GB address-space cap", "load_avg": os.getloadavg()[0]}
    raise SystemExit(f"the run failed:\n{r.stderr[-3000:]}")


def capped_run_line(y: dict, phase, *, goal: str | None = None, time_per_task: bool = False) -> str:
    """One line of :func:`run_child_capped`'s figures: wall time (and per task), peak RSS (and per task), the load
    (and the ``goal``), then each phase as ``phase(name, seconds)`` gives it; or why it was refused."""
    note = f"goal {goal}; " if goal else ""
    if "refused" in y:
        return f"{y['refused']} ({note}load {y['load_avg']:.1f})"
    t = f"{y['t_s']:.1f} s" + (f" ({1e6 * y['t_s'] / y['tasks']:.2f} µs/task)" if time_per_task else "")
    ph = ", ".join(phase(k, v) for k, v in y["phases"].items())
    return (f"{t}, {y['rss_mb']:,.0f} MB peak RSS, {y['rss_mb'] * 2**20 / y['tasks']:.0f} B per task "
            f"({note}load {y['load_avg']:.1f}); {ph}")


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
