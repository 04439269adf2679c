"""``./run.sh ui``: the Dagster UI (``dg dev``) on the gridshift home's instance.

Prepares ``<home>/dagster`` (the instance every CLI run is recorded in), points ``DAGSTER_HOME`` at
it and replaces this process with ``dg dev`` (extra arguments pass through, e.g. ``-p 3001``), so
Ctrl-C / SIGTERM reach Dagster directly and it shuts down cleanly. The home is ``--home DIR``, else
``$GRIDSHIFT_HOME``, else ``./.gridshift``.
"""

from __future__ import annotations

import os
import shutil
import sys
from pathlib import Path

from dagster_project.runner import prepare_instance
from gridshift.home import Home

REPO = Path(__file__).resolve().parents[1]


def main(argv: list[str]) -> None:
    home = None
    if len(argv) >= 2 and argv[0] == "--home":
        home, argv = argv[1], argv[2:]
    h = Home.resolve(home).ensure()
    prepare_instance(h)  # creates or updates <home>/dagster/dagster.yaml
    os.environ["DAGSTER_HOME"] = str(h.dagster_dir)
    os.environ["GRIDSHIFT_HOME"] = str(h.root)
    dg = shutil.which("dg") or os.path.join(os.path.dirname(sys.executable), "dg")
    print(f"gridshift home {h.root}; Dagster instance {h.dagster_dir}", file=sys.stderr, flush=True)
    os.chdir(REPO)  # dg finds the project (pyproject.toml) from the working directory
    os.execv(dg, [dg, "dev", *argv])


if __name__ == "__main__":
    main(sys.argv[1:])
