"""The main job's bundle, as the analysis scripts' default: ``gridshift export --regions US-CAL-CISO,DE-LU,SG
--year 2023`` with every other option at its default (``gridshift.export_defaults``: whatever scale and GPU the
main job uses), run in a fresh process against a home and a mirror (a bundle already in the home is reused, not
rebuilt)."""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
from pathlib import Path

#: the main job's regions and year, declared once for the benchmarks (bench_scale, bench_sim, profile_export)
REGIONS = "US-CAL-CISO,DE-LU,SG"
YEAR = 2023


def main_bundle(home: Path | None, mirror: Path | None = None) -> Path:
    """The path of the main job's default export in ``home`` (None: ``GRIDSHIFT_HOME`` or ./.gridshift, as the
    CLI resolves it), built first if the home lacks it."""
    from gridshift.home import Home

    root = Home.resolve(home)
    print(f"{export_command()} into {root.root} (reused if the home holds it; at the default size a first export takes "
          "about a minute and 9 GB) ...", file=sys.stderr, flush=True)
    cmd = [sys.executable, "-m", "gridshift_cli", "export", "--regions", REGIONS, "--year", str(YEAR),
           "--home", str(root.root)]
    if mirror is not None:
        cmd += ["--mirror", str(mirror)]
    r = subprocess.run(cmd, capture_output=True, text=True, check=False)
    m = re.search(r"^id ([0-9a-f]{16})\s*$", r.stdout, re.MULTILINE)
    if r.returncode != 0 or m is None:
        raise SystemExit(f"the main job's export failed ({' '.join(cmd)}):\n{r.stdout[-2000:]}\n{r.stderr[-2000:]}")
    path = root.bundles_dir / m.group(1)
    if not path.is_dir():
        raise SystemExit(f"the export reported bundle {m.group(1)}, but {path} is not a folder")
    return path


def export_command() -> str:
    """The export command, as the pages name it."""
    return f"gridshift export --regions {REGIONS} --year {YEAR}"


def add_bundle_args(ap: argparse.ArgumentParser, synthetic_help: str) -> None:
    """The options that choose the bundle an analysis script measures: ``--bundle``, or ``--synthetic`` (the
    script's own synthetic bundle, described by ``synthetic_help``), else the main job's default export in
    ``--home`` from ``--mirror`` (:func:`chosen_bundle`)."""
    src = ap.add_mutually_exclusive_group()
    src.add_argument("--bundle", type=Path, default=None,
                     help="the bundle to measure (default: the main job's default export in --home)")
    ap.add_argument("--home", type=Path, default=None,
                    help="the gridshift home holding (or receiving) the main job's default export")
    ap.add_argument("--mirror", type=Path, default=None, help="the data mirror the export reads")
    src.add_argument("--synthetic", action="store_true", help=synthetic_help)


def chosen_bundle(args: argparse.Namespace) -> tuple[Path, str]:
    """The bundle :func:`add_bundle_args` chose when it is not ``--synthetic``, and how a page names it."""
    if args.bundle is not None:
        return args.bundle, f"bundle {args.bundle.name}"
    path = main_bundle(args.home, args.mirror)
    return path, f"bundle {path.name} (the main job's, `{export_command()}`)"
