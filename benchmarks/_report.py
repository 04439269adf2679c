"""Write one benchmark's section of BENCHMARKS.md between its markers, keeping the others."""

from __future__ import annotations

import platform
import re
from pathlib import Path

BENCHMARKS_MD = Path(__file__).resolve().parents[1] / "BENCHMARKS.md"
HEADER = "# Benchmarks\n\nEvery figure below is printed by a script in `benchmarks/`; the command is given with it.\n"


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
