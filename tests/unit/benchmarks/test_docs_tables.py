"""The front-door documents: the README's sources table is the registry's, its commands are the ones that
work on a fresh clone, and no document links outside the repository."""

from __future__ import annotations

import re

import pytest

from benchmarks import docs_tables
from benchmarks._report import ROOT
from gridshift import sources

README = ROOT / "README.md"
DOCS = [README, ROOT / "BENCHMARKS.md", *sorted((ROOT / "docs").glob("*.md"))]
LINK = re.compile(r"\]\(([^)\s]+)\)")


def test_readme_sources_table_is_the_registry_s():
    assert docs_tables.section_in(README) == docs_tables.sources_table()


def test_the_table_carries_every_source_s_licence_attribution_and_token():
    table = docs_tables.sources_table()
    for s in sources.SOURCES:
        row = next(line for line in table.splitlines() if f"[`{s.name}`]" in line)
        assert s.licence in row and s.attribution in row, s.name
        assert (f"`{s.token_env}`" if s.token_env else "| none |") in row, s.name


def test_a_stale_table_is_detected(tmp_path):
    copy = tmp_path / "README.md"
    copy.write_text(README.read_text().replace("ODbL-1.0 |", "CC0 |", 1))
    assert docs_tables.section_in(copy) not in (None, docs_tables.sources_table())


def test_readme_is_a_front_door():
    text = README.read_text()
    assert len(text.splitlines()) <= 150
    assert "./run.sh test\n" in text and "./run.sh test\n" in (ROOT / ".ci" / "run").read_text()


def _shell_lines(text: str) -> list[str]:
    blocks = re.findall(r"```bash\n(.*?)```", text, flags=re.S)
    return [ln.strip() for b in blocks for ln in b.splitlines() if ln.strip() and not ln.startswith((" ", "#"))]


@pytest.mark.parametrize("doc", [README, ROOT / "docs" / "usage.md"], ids=lambda p: p.name)
def test_shell_commands_go_through_run_sh(doc):
    # uv is installed into .tools/ by run.sh, not on PATH: a fresh clone has only ./run.sh
    lines = _shell_lines(doc.read_text())
    assert lines
    for line in lines:
        assert line.startswith("./run.sh "), line


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.name)
def test_links_stay_inside_the_repository_and_resolve(doc):
    for target in LINK.findall(doc.read_text()):
        if re.match(r"[a-z]+:", target) or target.startswith("#"):
            continue
        path = (doc.parent / target.split("#")[0]).resolve()
        assert path.is_relative_to(ROOT), f"{doc.name} links outside the repository: {target}"
        assert path.exists(), f"{doc.name} links to a missing file: {target}"


def test_benchmarks_md_is_the_scripts_sections_only():
    from benchmarks._report import HEADER

    text = (ROOT / "BENCHMARKS.md").read_text()
    outside = re.sub(r"<!-- ([a-z_-]+):start -->\n.*?\n<!-- \1:end -->", "", text, flags=re.S)
    assert outside.strip() == HEADER.strip(), "BENCHMARKS.md holds text no benchmark script writes"
    # the bundle ids the benchmarks measure are content addresses any machine rebuilds: the README's main job, it at
    # the rack preset (gridshift.scale.RACK_MAIN_JOB_ID) and the other bundles the README names with their export
    # options; any other hex run is a commit
    from gridshift.scale import RACK_MAIN_JOB_ID

    readme = (ROOT / "README.md").read_text()
    readme_id = re.search(r"The main job writes bundle \*\*`([0-9a-f]{16})`\*\*", readme)
    named = set(re.findall(r"bundle `([0-9a-f]{16})`", readme))
    hashes = [h for h in re.findall(r"\b[0-9a-f]{7,40}\b", text) if re.search("[a-f]", h)]
    assert not [h for h in hashes if h not in {readme_id.group(1), RACK_MAIN_JOB_ID} | named], "a commit hash"
    assert not re.search(r"this (round|stop)|last stop|previous (round|stop)", text, flags=re.I), "a diary"


def test_the_data_dictionary_is_every_declared_column():
    """docs/data_dictionary.md is generated from the field declarations: every warehouse table, every bundle
    file and the run series appear with each column's type and unit, and the page is current."""
    from gridshift.bundle import format as bundle_format
    from warehouse.schemas import TABLES

    page = docs_tables.section_in(docs_tables.DICTIONARY_DOC, "dictionary")
    assert page == docs_tables.dictionary()
    specs = [t.spec for t in TABLES.values()] + list(bundle_format.TABLES.values())
    for spec in specs:
        block = page.split(f"### `{spec.name}` (")[1].split("\n### ")[0]
        for f in spec.fields:
            row = next(line for line in block.splitlines() if line.startswith(f"| `{f.name}` |"))
            assert f"| {f.dtype} | {f.unit or '-'} |" in row, (spec.name, f.name)
    assert "### `grid_carbon` (warehouse)" in page and "`carbon_g_per_kwh`" in page
