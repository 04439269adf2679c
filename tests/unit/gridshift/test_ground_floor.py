"""The ground floor (``gridshift/``) holds shared declarations and I/O primitives only: nothing in it draws
(``gridshift_plots``) or belongs to the command line (``gridshift_cli``), so importing it never loads matplotlib,
typer or rich."""

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
UPSTAIRS = ("matplotlib", "typer", "rich", "click")


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    names = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    names |= {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module and n.level == 0}
    return {n.split(".")[0] for n in names}


def test_the_ground_floor_imports_no_plotting_and_no_command_line_library():
    offenders = {str(p.relative_to(ROOT)): sorted(_imports(p) & set(UPSTAIRS))
                 for p in (ROOT / "gridshift").rglob("*.py")}
    assert {k: v for k, v in offenders.items() if v} == {}


def test_figures_and_the_failure_report_live_upstairs():
    assert "matplotlib" in _imports(ROOT / "gridshift_plots" / "style.py")
    assert {"typer", "rich"} <= _imports(ROOT / "gridshift_cli" / "report.py")
