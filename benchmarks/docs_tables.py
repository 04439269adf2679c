"""Write the README's data-sources table from the source registry (``gridshift.sources``).

    ./run.sh python -m benchmarks.docs_tables          # rewrite README.md's sources section
    ./run.sh python -m benchmarks.docs_tables --check  # exit 1 if README.md's table is stale

Licences, attributions and token variables are declared only in the registry; the README shows this
generated copy, and ``tests/unit/benchmarks/test_docs_tables.py`` fails when the two differ.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from benchmarks._report import ROOT, update_section
from gridshift import sources

README = ROOT / "README.md"
SECTION = "sources"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def sources_table() -> str:
    """One row per registered source: what it feeds, how it is reached, its token, licence and attribution."""
    lines = ["| source | feeds | reached from | token (env var) | licence | attribution |",
             "|---|---|---|---|---|---|"]
    for s in sources.SOURCES:
        token = f"`{s.token_env}`" if s.token_env else "none"
        lines.append(f"| [`{s.name}`]({s.url}) | `{s.table}` | {', '.join(s.access)} | {token} "
                     f"| {_cell(s.licence)} | {_cell(s.attribution)} |")
    return "\n".join(lines)


def section_in(path: Path = README) -> str | None:
    """The text between the sources markers of ``path`` (None if the markers are missing)."""
    m = re.search(rf"<!-- {SECTION}:start -->\n(.*?)\n<!-- {SECTION}:end -->", path.read_text(), flags=re.S)
    return m.group(1) if m else None


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="only compare; exit 1 if README.md differs")
    args = ap.parse_args(argv)
    if args.check:
        ok = section_in() == sources_table()
        print("README.md sources table is current" if ok else "README.md sources table is stale: run "
              "./run.sh python -m benchmarks.docs_tables")
        return 0 if ok else 1
    update_section(SECTION, sources_table(), README)
    print(f"updated {README.name}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
