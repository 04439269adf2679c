"""Rewrite the policies table of a docs page from the registry: ``python -m sim_core.policies docs/baselines.md``."""

import sys
from pathlib import Path

from .registry import with_docs_table

page = Path(sys.argv[1])
page.write_text(with_docs_table(page.read_text()))
