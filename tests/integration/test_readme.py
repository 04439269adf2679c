"""The README's main job, run as written: its command builds the bundle id the README cites."""

from __future__ import annotations

import re
import shlex

from typer.testing import CliRunner

from benchmarks._report import ROOT
from gridshift_cli import app


def _main_job() -> tuple[list[str], str]:
    text = (ROOT / "README.md").read_text()
    main_job = r"# the main job[^\n]*\n(\./run\.sh (?:gridshift|scenario_builder) export [^\n]+)\n"
    command = re.search(main_job, text).group(1)
    cited = re.search(r"The main job writes bundle \*\*`([0-9a-f]{16})`\*\*", text).group(1)
    return shlex.split(command)[2:], cited


def test_the_main_job_builds_the_bundle_the_readme_cites(tmp_path, shared_data):
    args, cited = _main_job()
    assert args[args.index("--mirror") + 1] == "../shared/data"
    args[args.index("--mirror") + 1] = str(shared_data)  # the same mirror, wherever this checkout keeps it
    r = CliRunner().invoke(app, [*args, "--home", str(tmp_path / "home")])
    assert r.exit_code == 0, r.output
    built = re.search(r"^id ([0-9a-f]{16})$", r.output, flags=re.M).group(1)
    assert built == cited, f"README.md cites bundle {cited}, the main job builds {built}: update README.md"
    readme = (ROOT / "README.md").read_text()
    assert set(re.findall(r"bundles/([0-9a-f]{16})", readme)) == {cited}
