"""``gridshift leaderboard``: every registered policy, the recipes' trained agents and any external entry scored on
a held-out year by the declared protocol (``sim_core.bench.protocol``), against the optimum's bracket of every
cell; rows to a results URL, progress on stderr, and with ``--write-page`` docs/leaderboard.md and its figure.

The score bundles (the score year's, one per region set and utilisation) are built here, through ``gridshift
export``'s path (what the home's warehouse lacks is ingested from the mirror first), and used for nothing but
scoring; the train year's are built only to check that an agent was trained on one of them.
"""

from __future__ import annotations

import sys
import time
from collections import Counter
from dataclasses import replace
from pathlib import Path
from typing import Annotated

import typer

from gridshift import objectstore
from gridshift.home import RESULTS_URL_ENV, Home
from gridshift_cli.common import absolute, command_tags, failures, quiet_dagster, resolve_mirror
from gridshift_cli.options import HomeOpt, LiveOpt, MirrorOpt


def _err(msg: str) -> None:
    print(f"gridshift leaderboard: {msg}", file=sys.stderr, flush=True)


def _entries(names: str | None, entry: list[Path], agents: Path | None, h: Home):
    """The entries: the registered policies (or ``--entries``), the saved agents (``--agents``, else
    <home>/agents when it exists), then each ``--entry`` file."""
    from sim_core.bench import entries as E

    try:
        chosen = [n.strip() for n in names.split(",") if n.strip()] if names else None
        out = E.registered(chosen)
        folder = agents if agents is not None else (h.root / "agents")
        if agents is not None and not agents.is_dir():
            raise E.EntryError(f"--agents {agents} is not a folder")
        if folder.is_dir() and any(folder.glob("*.pt")):
            out += E.agents_in(folder)
        out += [E.external(absolute(p)) for p in entry]
    except E.EntryError as err:
        raise typer.BadParameter(str(err), param_hint="--entries / --entry / --agents") from None
    dup = sorted(n for n, k in Counter(e.name for e in out).items() if k > 1)
    if dup:
        raise typer.BadParameter(f"entry given twice: {', '.join(dup)}", param_hint="--entries / --entry")
    return out


def missing_inputs(years: list[int], region_sets, h: Home, mirror: Path | None) -> list[str]:
    """The grid partitions of ``years`` that neither the home's warehouse holds nor the mirror has a file of."""
    from gridshift.sources import SIGNAL_TABLES
    from scenario_builder.bundle import BuildParams
    from scenario_builder.export import plan
    from warehouse.ingest import in_mirror

    out = []
    for y in years:
        for regions in region_sets:
            need = plan(BuildParams(regions=tuple(regions), year=y), h, mirror)
            out += [f"{SIGNAL_TABLES[k]} {r} {yy}" for r, yy, kinds in need.required for k in kinds
                    if not in_mirror(k, r, yy, mirror)]
    return sorted(set(out))


def _bundles(protocol, year: int, region_sets, h: Home, mirror, live: bool, ctx) -> dict[tuple, str]:
    """(regions, utilisation) -> the bundle directory of ``year``, built (or reused) by ``gridshift export``'s path."""
    from dagster_project import runner
    from gridshift import scale as scale_mod
    from scenario_builder.bundle import BuildParams

    params = [BuildParams(regions=tuple(r), year=year, target_utilization=u, scale=scale_mod.parse(protocol.scale),
                          gpu=protocol.gpu) for r in region_sets for u in protocol.utilisations]
    t = time.perf_counter()
    _err(f"building {len(params)} bundle(s) of {year} (reused when present)")
    built = runner.export_bundles(params, home=h, mirror=mirror, live=live, tags=command_tags(ctx),
                                  on_progress=lambda d: _err(f"  export: {d}"))
    _err(f"bundles of {year} ready in {time.perf_counter() - t:.0f} s: {', '.join(b.bundle_id for b in built)}")
    return {(tuple(p.regions), float(p.target_utilization)): str(b.path) for p, b in zip(params, built, strict=True)}


def leaderboard(
    ctx: typer.Context,
    score_year: Annotated[int, typer.Option(help="the held-out year every entry is scored on")] = 2023,
    train_year: Annotated[int, typer.Option(help="the year agents were trained on")] = 2022,
    entries: Annotated[str | None, typer.Option(
        help="comma-separated registered policies (default: every one)")] = None,
    entry: Annotated[list[Path] | None, typer.Option(
        help="an external entry: a Python policy module (.py defining policy(obs)) or a saved agent (.pt); "
             "repeatable")] = None,
    agents: Annotated[Path | None, typer.Option(
        help="folder of the recipes' saved agents (<recipe>-<train bundle id>-s<seed>.pt; default <home>/agents)")
    ] = None,
    results: Annotated[str | None, typer.Option(
        envvar=RESULTS_URL_ENV, show_envvar=True,
        help="where the rows' Parquet object goes: a folder or s3://bucket/prefix (default <home>/results)")] = None,
    scheduler: Annotated[str | None, typer.Option(
        help="score the cells on this Dask scheduler (tcp://host:8786); workers need the bundles and entry files "
             "at the same paths (docs/distributed.md)")] = None,
    write_page: Annotated[Path | None, typer.Option(
        "--write-page", help="write this page (docs/leaderboard.md) and its figure (img/leaderboard.png beside it)")
    ] = None,
    mirror: MirrorOpt = None,
    home: HomeOpt = None,
    live: LiveOpt = False,
) -> None:
    """Score every entry on the held-out year by the declared protocol, against the optimum's bracket.

    The protocol (years, region sets x utilisations x seasonal windows, seeds, metrics) is
    sim_core.bench.protocol.DEFAULT; its sha256 is in every row with the bundle ids and the code version."""
    from sim_core.bench import leaderboard as L
    from sim_core.bench.protocol import DEFAULT
    from warehouse.ingest import writable_home

    t_all = time.perf_counter()
    try:
        protocol = replace(DEFAULT, score_year=score_year, train_year=train_year)
    except ValueError as err:
        raise typer.BadParameter(str(err), param_hint="--score-year / --train-year") from None
    h = Home.resolve(home)
    url_base = results or str(h.root / "results")
    try:  # a bad results URL is refused now, not after the hour of scoring
        objectstore.parse(url_base)
    except objectstore.StoreURLError as err:
        raise typer.BadParameter(str(err), param_hint="--results") from None
    ents = _entries(entries, list(entry or []), absolute(agents), h)
    quiet_dagster()
    with failures(ctx, home):
        h = writable_home(h)
        mirror_dir = resolve_mirror(mirror, home)
        agent_sets = sorted({e.regions for e in ents if e.kind == "agent"})
        if not live:
            for what, year, sets in (("score", protocol.score_year, protocol.region_sets),
                                     ("train", protocol.train_year, agent_sets)):
                lacking = missing_inputs([year], sets, h, mirror_dir)
                if lacking:
                    _err(f"the {what} year {year} is not in the mirror {mirror_dir} nor in the home's warehouse "
                         f"{h.warehouse_path}: {len(lacking)} partition(s) missing, first {', '.join(lacking[:4])}; "
                         "give --mirror DIR holding that year, or --live")
                    raise typer.Exit(2)
        bundles = _bundles(protocol, protocol.score_year, protocol.region_sets, h, mirror_dir, live, ctx)
        if agent_sets:
            train = _bundles(protocol, protocol.train_year, agent_sets, h, mirror_dir, live, ctx)
            ids = {Path(p).name for p in train.values()}
            for e in ents:
                if e.kind == "agent" and e.train_bundle_id not in ids:
                    raise typer.BadParameter(
                        f"agent {e.name} ({e.source}) was trained on bundle {e.train_bundle_id}, not on one of the "
                        f"protocol's {protocol.train_year} bundles of its sites ({', '.join(sorted(ids))}): its "
                        f"score on {protocol.score_year} would not be held out", param_hint="--agents / --entry")
    n_cells = len(protocol.cells()) * len(protocol.seeds)
    _err(f"protocol {protocol.name}/{protocol.revision} {protocol.sha256[:16]}: {len(ents)} entries x {n_cells} "
         f"cells, each cell's optimum bracketed; scored on {protocol.score_year}")
    client = None
    if scheduler is not None:
        from rich.console import Console

        from gridshift_cli.simulate import _dask_client

        client = _dask_client(scheduler, Console(stderr=True))

    def on_entry(name: str, secs: float) -> None:
        _err(f"    {name:<28} {secs:7.1f} s")

    ends: list[float] = []

    def on_cell(done: int, total: int, cell, seed: int, secs: float) -> None:
        ends.append(time.perf_counter())
        elapsed = ends[-1] - t_run
        # the first cell compiles every entry's kernels (once per code version): the estimate leaves it out
        warm = ends[1:]
        per = (warm[-1] - ends[0]) / len(warm) if warm else elapsed
        _err(f"[{done}/{total}] {cell.label} seed {seed}: {secs:.0f} s; {elapsed / 60:.1f} min so far, about "
             f"{per * (total - done) / 60:.1f} min left (measured on the cells done"
             f"{' after the first, which compiled the kernels' if warm else ', compiling included'})")

    t_run = time.perf_counter()
    try:
        rows = L.leaderboard(protocol, bundles, ents, executor=client, on_cell=on_cell,
                             on_entry=None if client is not None else on_entry)
    finally:
        if client is not None:
            client.close()
    with failures(ctx, home):
        url = L.write_rows(rows, protocol, url_base)
    wall = time.perf_counter() - t_all
    from sim_core.bench.leaderboard_page import ranking

    for r in ranking(rows).iter_rows(named=True):
        print(f"{r['entry']:<32} carbon saving {r['carbon_saving_pct']:7.2f} %  late {r['late_pct']:6.3f} %  "
              f"closes {r['closed_min_pct']:6.1f} – {r['closed_max_pct']:6.1f} % of the gap to the optimum")
    print(f"rows: {url}")
    print(f"wall time {wall:.0f} s ({wall / 60:.1f} min)")
    if write_page is not None:
        from sim_core.bench.leaderboard_page import write_page as write

        command = "./run.sh gridshift leaderboard --mirror ../shared/data --write-page docs/leaderboard.md"
        if score_year != DEFAULT.score_year:
            command += f" --score-year {score_year}"
        with failures(ctx, home):
            write(rows, protocol, absolute(write_page), command, wall)
        print(f"wrote {write_page} and {Path(write_page).parent / 'img/leaderboard.png'}")


__all__ = ["leaderboard", "missing_inputs"]
