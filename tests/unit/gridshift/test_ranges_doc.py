"""docs/bundle_format.md lists every declared parameter range exactly as declared (one declaration each:
gridshift.dc_params.PARAM_RANGES, sim_core.options.OPTION_RANGES, sim_core.rl.reward.TERM_RANGES and
MASAC_RANGES, gridshift.battery_params.BATTERY_RANGES, the task bounds of gridshift.bounds the bundle checks,
and the manifest's parameters, gridshift.bundle.manifest_params). Regenerate a block with
``gridshift.bounds.markdown_table`` when a declaration changes."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from gridshift import bounds
from gridshift.battery_params import BATTERY_RANGES
from gridshift.bundle.format import TASK_FLEX, TASK_RESOURCES
from gridshift.bundle.manifest_params import ranges as manifest_ranges
from gridshift.dc_params import PARAM_RANGES
from sim_core.options import OPTION_RANGES
from sim_core.rl.reward import MASAC_RANGES, TERM_RANGES

DOC = Path(__file__).resolve().parents[3] / "docs" / "bundle_format.md"
TASK_COLUMNS = (*TASK_RESOURCES, *(c for c in TASK_FLEX if c in bounds.BOUNDS))
BLOCKS = {
    "physics": PARAM_RANGES,
    "tasks": {c: bounds.get(c) for c in TASK_COLUMNS},
    "manifest": manifest_ranges(),
    "options": OPTION_RANGES,
    "battery": BATTERY_RANGES,
    "reward": {**TERM_RANGES, **MASAC_RANGES},
}


@pytest.mark.parametrize("block", sorted(BLOCKS))
def test_doc_lists_the_declared_ranges(block):
    text = DOC.read_text(encoding="utf-8")
    m = re.search(rf"<!-- ranges:{block} -->\n(.*?)\n<!-- /ranges:{block} -->", text, re.S)
    assert m, f"docs/bundle_format.md has no <!-- ranges:{block} --> block"
    assert m.group(1) == bounds.markdown_table(BLOCKS[block]), "regenerate with gridshift.bounds.markdown_table"
