"""Write the tables the documents show of a declaration: the README's data sources (``gridshift.sources``),
docs/simulation.md's run options (``gridshift.run_options``), docs/benchmarks.md's metrics
(``gridshift.metrics``) and docs/data_dictionary.md, every column of the warehouse's tables, a bundle's files and
a run's series (``gridshift.fields``, as ``warehouse.schemas`` and ``gridshift.bundle`` list them).

    ./run.sh python -m benchmarks.docs_tables          # rewrite the generated sections
    ./run.sh python -m benchmarks.docs_tables --check  # exit 1 if one is stale

What the tables say is declared only in the registries; the documents show these generated copies, and
``tests/unit/benchmarks/test_docs_tables.py`` fails when one differs.
"""

from __future__ import annotations

import argparse
import re
import sys
from pathlib import Path

from benchmarks._report import ROOT, update_section
from gridshift import metrics, run_options, sources
from gridshift.bundle import format as bundle_format
from gridshift.fields import Field, TableSpec
from gridshift.results import SERIES
from warehouse.schemas import FRAMES, TABLES

README = ROOT / "README.md"
SECTION = "sources"
SIMULATION_MD = ROOT / "docs" / "simulation.md"
BENCHMARKS_DOC = ROOT / "docs" / "benchmarks.md"
DICTIONARY_DOC = ROOT / "docs" / "data_dictionary.md"


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


def _value(v) -> str:
    return "`None`" if v is None else f'`"{v}"`' if isinstance(v, str) else f"`{v}`"


def options_table() -> str:
    """One row per declared run option: its type, default, valid values, unit, meaning, the flags and sweep that
    take it, and where its default comes from."""
    lines = ["| option | type | default | valid | unit | meaning | CLI flag (commands), sweep | source |",
             "|---|---|---|---|---|---|---|---|"]
    for o in run_options.declared():
        flag = f"`{o.cli_flag}` ({', '.join(o.commands)})" if o.commands else "Python API only"
        flag += ", sweep" if o.sweep else ""
        lines.append(f"| `{o.name}` | {o.kind} | {_value(o.default)} | {_cell(o.describe_valid())} | {o.unit or '-'} "
                     f"| {_cell(o.doc)} | {flag} | {_cell(o.citation)} |")
    return "\n".join(lines)


def metrics_table() -> str:
    """One row per declared metric: its unit, how it aggregates over sites and steps, which way is better, whether
    compare reports a saving, and what it is."""
    lines = ["| metric | unit | aggregates | better | saving | meaning |", "|---|---|---|---|---|---|"]
    for m in metrics.declared():
        agg = m.aggregate + (f" ({' / '.join(f'`{t}`' for t in m.of)})" if m.aggregate == metrics.RATIO and m.of
                             else f" ({' + '.join(f'`{t}`' for t in m.of)})" if m.of else "")
        lines.append(f"| `{m.name}` | {_cell(m.unit)} | {agg} | {m.better or '-'} | {'yes' if m.savings else '-'} "
                     f"| {_cell(m.doc)}{'; NaN when undefined' if m.nan else ''} |")
    return "\n".join(lines)


def _valid(f: Field) -> str:
    parts = [f"{f.bound.describe()} ({f.bound.reason})"] if f.bound is not None else []
    parts += [f"one of {', '.join(f'`{v}`' for v in f.isin)}"] if f.isin else []
    parts += [f"matches `{f.pattern}`"] if f.pattern else []
    return "; ".join(parts) or "-"


def _spec_table(where: str, spec: TableSpec) -> list[str]:
    key = ", ".join(f"`{k}`" for k in spec.primary_key) or "none"
    lines = [f"### `{spec.name}` ({where})", "", f"{_cell(spec.description.rstrip('.'))}. Primary key: {key}.", "",
             "| column | type | unit | valid values | null | meaning |", "|---|---|---|---|---|---|"]
    for f in spec.fields:
        more = "; ".join(f"{k}: {v}" for k, v in f.metadata.items())
        lines.append(f"| `{f.name}` | {f.dtype} | {f.unit or '-'} | {_cell(_valid(f))} | "
                     f"{'yes' if f.nullable else 'no'} | {_cell(f.description + (f' ({more})' if more else ''))} |")
    return lines + [""]


def dictionary() -> str:
    """Every column of every declared table: the warehouse's (``warehouse.schemas.TABLES`` and the frames
    validated before they leave it), a bundle's Parquet files (``gridshift.bundle``) and a run's per-step series
    (``gridshift.results.SERIES``), each from its field declaration in ``gridshift.fields``."""
    out = ["## Warehouse tables (DuckDB, `warehouse.schemas`)", ""]
    for t in TABLES.values():
        out += _spec_table("warehouse", t.spec)
    out += ["## Frames validated outside the warehouse", ""]
    for t in FRAMES.values():
        out += _spec_table("validated frame", t.spec)
    out += ["## A bundle's Parquet files (`gridshift.bundle`)", ""]
    for spec in bundle_format.TABLES.values():
        out += _spec_table("bundle file", spec)
    out += ["## A run's per-step series (`gridshift.results.SERIES`)", ""]
    out += _spec_table("run series", SERIES)
    return "\n".join(out).rstrip()


#: (document, section name, its generated table)
GENERATED = ((README, SECTION, sources_table), (SIMULATION_MD, "options", options_table),
             (BENCHMARKS_DOC, "metrics", metrics_table), (DICTIONARY_DOC, "dictionary", dictionary))


def section_in(path: Path = README, name: str = SECTION) -> str | None:
    """The text between the ``name`` markers of ``path`` (None if the markers are missing)."""
    m = re.search(rf"<!-- {name}:start -->\n(.*?)\n<!-- {name}:end -->", path.read_text(), flags=re.S)
    return m.group(1) if m else None


def stale() -> list[str]:
    """The documents whose generated section differs from its declarations (``path#section``)."""
    return [f"{path.relative_to(ROOT)}#{name}" for path, name, make in GENERATED if section_in(path, name) != make()]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", action="store_true", help="only compare; exit 1 if a document differs")
    args = ap.parse_args(argv)
    if args.check:
        bad = stale()
        print(f"stale: {', '.join(bad)}: run ./run.sh python -m benchmarks.docs_tables" if bad else
              "every generated table is current")
        return 1 if bad else 0
    for path, name, make in GENERATED:
        update_section(name, make(), path)
        print(f"updated {path.relative_to(ROOT)} ({name})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
