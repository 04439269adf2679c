"""Time the full-mirror ingest into a fresh home, and the floor it is measured against.

Command: ./run.sh python benchmarks/bench_ingest.py [--mirror ../shared/data] [--reps 5] [--no-write] [--profile]
                                                      [--before DIR]
         ./run.sh python benchmarks/bench_ingest.py --versus DIR [--reps 4]   (A/B against another tree)
         ./run.sh python benchmarks/bench_ingest.py --phases [--reps 2]       (CPU by phase)

Four figures, each repeated ``--reps`` times (min and median; the machine may be shared, so the load
average is printed before and after):

1. **CLI** — ``scenario_builder ingest --regions all --year 2022,2023`` in a fresh process into a fresh
   home: start-up, the Dagster runs (one per key range of partitions, ``dagster_project.runner.plan_runs``),
   per-partition events, the checks, raw landings, the warehouse write. The goal is on this figure.
   Its ``fdatasync`` and ``fsync`` calls (one more CLI run, under ``strace -f -c``; Debian's ``strace``) are
   counted too: Dagster's SQLite storage syncs several times per stored event, and on a disk shared with other
   work each sync can take milliseconds, so the count, not the CPU, decides the wall time there. ``--before
   DIR`` also counts them for the CLI of another tree (e.g. a ``git archive`` of the commit before a change).
2. **Dagster's record alone** — ``benchmarks/dagster_record_floor.py`` in a fresh process: the same instance,
   runs, tags and per-partition events as (1), from assets that compute nothing. With (3) it is the least any
   ingest recording per-partition materializations can take on this storage: the goal is judged against it.
3. **pipeline, no Dagster** — the same domain functions the assets call (``warehouse.ingest.prepare_grid``
   + ``write_grid`` per signal, the reference tables), in-process, into a fresh home: what the
   orchestration costs on top is (1) − (3) less the start-up.
4. **floor** — read + validate + write of the same files with nothing else: each file's bytes read and
   decoded columnar (polars ``read_csv``; the weather JSON by ``json.loads`` into a frame), the canonical
   frames validated by the same Pandera models, and written — raw bytes landed (synced) and the rows
   inserted into a fresh DuckDB file with the same primary-key DDL, in one transaction. The parsers'
   normalisation (time zones, zone ids, currency) is left out: it is work the floor does not define.
   The canonical frames it validates and writes are made once beforehand, untimed.

``--profile`` also runs the CLI once under cProfile and prints the top cumulative entries.

``--versus DIR`` (e.g. a ``git archive`` of an earlier commit, its bytecode compiled) runs only the CLI,
alternating this tree and ``DIR`` (same interpreter, a fresh home each, the order flipped every round), and
prints min and median wall and CPU of each: on a shared machine, the comparison taken at the same moment.
``--phases`` runs the CLI's steps in this process with ``time.process_time`` around each (imports, opening
the fresh instance, the reference run, the grid runs and, inside them, the grid assets' prepare and write)
and prints them; it writes nothing to BENCHMARKS.md. The CLI's CPU in the other modes is that of the CLI
process and any children it started.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from urllib.parse import urlparse
from urllib.request import url2pathname

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks._report import machine, update_section  # noqa: E402

COMMAND = "./run.sh python benchmarks/bench_ingest.py"
YEARS = (2022, 2023)
KINDS = ("carbon", "price", "weather")
GOAL_S = 8.0  # issue 15, item 1: the whole mirror from a fresh home in <= 8 s on 2 cores
GOAL_FLOOR_RATIO = 4.0  # issue 25, item 3: the CLI within 4x the read + validate + write floor
#: The goal restated against what Dagster's own record costs (issue 32's finding: the record alone, with nothing
#: computed, makes as many fdatasync calls as the whole CLI): the CLI within this factor of the record alone plus
#: the pipeline without Dagster, i.e. gridshift's orchestration adds at most half again to the two floors.
GOAL_RECORD_RATIO = 1.5


def _load() -> str:
    return "load average " + " / ".join(f"{x:.2f}" for x in os.getloadavg()) + " (1/5/15 min)"


def _cpu(who: int) -> float:
    r = resource.getrusage(who)
    return r.ru_utime + r.ru_stime


def _cli(mirror: Path, home: str, profile: str | None = None, tree: Path | None = None) -> tuple[float, float]:
    """(wall s, CPU s user+sys) of one CLI run in a fresh process (the CLI of ``tree``, default this one)."""
    # `-m scenario_builder`, the command's older name, so that an older tree (--tree) runs the same way
    cmd = [sys.executable, *(["-m", "cProfile", "-o", profile] if profile else []), "-m", "scenario_builder",
           "ingest", "--regions", "all", "--year", ",".join(map(str, YEARS)), "--mirror", str(mirror), "--home", home]
    c0, t0 = _cpu(resource.RUSAGE_CHILDREN), time.perf_counter()
    proc = subprocess.run(cmd, capture_output=True, text=True, cwd=tree or REPO)
    wall = time.perf_counter() - t0
    if proc.returncode != 0:
        print(proc.stdout, proc.stderr)
        raise SystemExit(proc.returncode)
    return wall, _cpu(resource.RUSAGE_CHILDREN) - c0


def _record(mirror: Path, home: str) -> tuple[float, float]:
    """(wall s, CPU s) of Dagster's record of the ingest alone, in a fresh process (``dagster_record_floor``)."""
    c0, t0 = _cpu(resource.RUSAGE_CHILDREN), time.perf_counter()
    subprocess.run(_record_cmd(mirror, home), capture_output=True, text=True, cwd=REPO, check=True)
    return time.perf_counter() - t0, _cpu(resource.RUSAGE_CHILDREN) - c0


def _record_cmd(mirror: Path, home: str) -> list[str]:
    return [sys.executable, str(REPO / "benchmarks" / "dagster_record_floor.py"), "--mirror", str(mirror), "--home",
            home]


def _syncs(mirror: Path, tree: Path | None = None, *, record_only: bool = False) -> dict[str, int] | None:
    """``fdatasync`` and ``fsync`` calls of one CLI run (of ``tree``, default this one; or, ``record_only``, of
    Dagster's record alone) into a fresh home, counted by ``strace -f -c``; None where strace is not installed."""
    strace = shutil.which("strace")
    if strace is None:
        return None
    with tempfile.TemporaryDirectory() as d:
        out = Path(d) / "strace.txt"
        home = str(Path(d) / "home")
        run = _record_cmd(mirror, home) if record_only else [
            sys.executable, "-m", "scenario_builder", "ingest", "--regions", "all", "--year",
            ",".join(map(str, YEARS)), "--mirror", str(mirror), "--home", home]
        cmd = [strace, "-f", "-c", "-w", "-e", "trace=fdatasync,fsync", "-o", str(out), *run]
        proc = subprocess.run(cmd, capture_output=True, text=True, cwd=tree or REPO)
        if proc.returncode != 0:
            print(proc.stdout, proc.stderr)
            raise SystemExit(proc.returncode)
        counts = {"fdatasync": 0, "fsync": 0, "seconds": 0.0}
        for line in out.read_text().splitlines():  # "% time  seconds  usecs/call  calls  [errors]  syscall"
            parts = line.split()
            if parts and parts[-1] in counts:
                counts[parts[-1]] = int(parts[3])
                counts["seconds"] += float(parts[1])
        return counts


def _syncs_text(counts: dict[str, int] | None) -> str:
    if counts is None:
        return "not counted: strace is not installed (`apt-get install strace`)"
    return (f"{counts['fdatasync']:,} fdatasync + {counts['fsync']:,} fsync, {counts['seconds']:.2f} s waiting in them "
            "(wall time, `strace -c -w`)")


def _partitions(mirror: Path) -> list[tuple[str, str, int]]:
    from gridshift import locations
    from warehouse.ingest import in_mirror

    return [(k, r, y) for k in KINDS for r in locations.all_codes() for y in YEARS if in_mirror(k, r, y, mirror)]


def _pipeline(mirror: Path, home_dir: str) -> tuple[float, float]:
    """The domain functions the assets call, in-process, no Dagster (fresh home)."""
    from gridshift.home import Home
    from warehouse.ingest import ingest_egress, ingest_locations, ingest_network, prepare_grid, write_grid

    parts = _partitions(mirror)
    home = Home(Path(home_dir)).ensure()
    c0, t0 = _cpu(resource.RUSAGE_SELF), time.perf_counter()
    ingest_locations(home=home)
    ingest_egress(home=home, mirror=mirror)
    ingest_network(home=home, mirror=mirror)
    for kind in KINDS:
        batch = prepare_grid(kind, [(r, y) for k, r, y in parts if k == kind], home=home, mirror=mirror)
        assert not batch.refused, batch.refused
        write_grid(home, batch.ready)
    return time.perf_counter() - t0, _cpu(resource.RUSAGE_SELF) - c0


def _floor_inputs(mirror: Path):
    """(raw files, canonical frames per table) of every grid partition, made once, untimed."""
    import polars as pl

    from gridshift import locations
    from pipelines.sources import registry

    raws, frames = [], {}
    for kind, region, year in _partitions(mirror):
        raw = registry.fetch(kind, locations.get(region), year, mirror=mirror)
        src = registry.for_raw(raw)
        raws.append((raw, Path(url2pathname(urlparse(raw.uri).path))))
        frames.setdefault(src.table, []).append(src.parse(raw, locations.get(region), year))
    return raws, {t: pl.concat(fs).unique(["location", "ts_utc"], keep="last", maintain_order=True)
                  for t, fs in frames.items()}


def _decode(data: bytes, name: str):
    import polars as pl

    if name.endswith(".json"):
        doc = json.loads(data)
        return pl.DataFrame(doc.get("hourly", doc))
    return pl.read_csv(data, infer_schema_length=10_000)


def _floor(raws, frames, home_dir: str) -> dict[str, float]:
    """Read + validate + write, timed by part (see the module docstring)."""
    import duckdb

    from gridshift.atomic import atomic_write_many
    from warehouse.ddl import create_table_sql
    from warehouse.schemas import TABLES

    c0, t0 = _cpu(resource.RUSAGE_SELF), time.perf_counter()
    decoded = 0
    contents = []
    for _raw, path in raws:
        data = path.read_bytes()
        contents.append(data)
        decoded += _decode(data, path.name).height
    t1 = time.perf_counter()
    for name, df in frames.items():
        TABLES[name].model.validate(df, lazy=True)
    t2 = time.perf_counter()
    landed = [(Path(home_dir) / "raw" / raw.sha256, data) for (raw, _p), data in zip(raws, contents, strict=True)]
    atomic_write_many(landed, mode=0o444)
    con = duckdb.connect(str(Path(home_dir) / "floor.duckdb"))
    con.execute("SET TimeZone = 'UTC'")
    con.execute("BEGIN TRANSACTION")
    for name, df in frames.items():
        con.execute(create_table_sql(TABLES[name]))
        con.register("_staged", df.to_arrow())
        con.execute(f'INSERT INTO "{name}" BY NAME SELECT * FROM _staged')
        con.unregister("_staged")
    con.execute("COMMIT")
    con.close()
    t3 = time.perf_counter()
    return {"read": t1 - t0, "validate": t2 - t1, "write": t3 - t2, "total": t3 - t0,
            "cpu": _cpu(resource.RUSAGE_SELF) - c0, "decoded_rows": decoded}


def _timed_reps(what: str, fn, mirror: Path, reps: int) -> tuple[list[float], list[float]]:
    """(wall s, CPU s) of ``reps`` calls of ``fn(mirror, fresh home)``, each printed as it ends."""
    walls, cpus = [], []
    for i in range(reps):
        with tempfile.TemporaryDirectory() as home:
            wall, cpu = fn(mirror, home)
        walls.append(wall)
        cpus.append(cpu)
        print(f"{what} rep {i + 1}: {wall:.2f} s, CPU {cpu:.2f} s ({_load()})", flush=True)
    return walls, cpus


def _stats(xs: list[float]) -> str:
    return f"min {min(xs):.2f} s, median {statistics.median(xs):.2f} s (n={len(xs)})"


def _versus(mirror: Path, other: Path, reps: int) -> None:
    """Alternate the CLI of this tree and of ``other`` (see the module docstring)."""
    trees = {"this tree": REPO, str(other): other}
    got: dict[str, list[tuple[float, float]]] = {k: [] for k in trees}
    print(f"start: {_load()}", flush=True)
    for i in range(reps):
        for name, tree in (list(trees.items()) if i % 2 == 0 else list(trees.items())[::-1]):
            with tempfile.TemporaryDirectory() as home:
                got[name].append(_cli(mirror, home, tree=tree))
            print(f"{name}: {got[name][-1][0]:.2f} s, CPU {got[name][-1][1]:.2f} s ({_load()})", flush=True)
    for name, xs in got.items():
        print(f"{name}: wall {_stats([x[0] for x in xs])}; CPU {_stats([x[1] for x in xs])}")


def _phases(mirror: Path) -> dict[str, float]:
    """CPU seconds of the CLI's steps, run in this process (see the module docstring); call in a fresh process."""
    t = [time.process_time()]
    out: dict[str, float] = {}

    def mark(name: str) -> None:
        out[name] = time.process_time() - t[0]
        t[0] = time.process_time()

    import gridshift_cli  # noqa: F401 - the CLI's own imports
    from dagster_project import runner
    from dagster_project.assets import grid
    from gridshift.home import Home
    mark("start-up imports")
    inner = {"grid: prepare (fetch, parse, validate, coverage)": 0.0, "grid: write (land + DuckDB)": 0.0}

    def timed(name, f):
        def call(*a, **k):
            c = time.process_time()
            try:
                return f(*a, **k)
            finally:
                inner[name] += time.process_time() - c
        return call

    grid.prepare_grid = timed("grid: prepare (fetch, parse, validate, coverage)", grid.prepare_grid)
    grid.write_grid = timed("grid: write (land + DuckDB)", grid.write_grid)
    with tempfile.TemporaryDirectory() as d:
        home = Home(Path(d)).ensure()
        with runner.open_instance(home) as instance:
            mark("fresh instance")
            ref = runner.materialize_sources(regions=[], years=[], sources=["network"], home=home, mirror=mirror,
                                             instance=instance)
            mark("reference run")
            done = runner.materialize_grid(_partitions(mirror), home=home, mirror=mirror, instance=instance)
            mark("grid runs")
        assert all(o.ok for o in [*ref, *done.values()])
    children = resource.getrusage(resource.RUSAGE_CHILDREN)
    return {**out, **inner, "child processes' CPU (compute-log capture)": children.ru_utime + children.ru_stime}


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--mirror", default=str(REPO.parent / "shared" / "data"))
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--no-write", action="store_true", help="print only; leave BENCHMARKS.md alone")
    ap.add_argument("--profile", action="store_true", help="also profile one CLI run (cProfile) and print the top")
    ap.add_argument("--versus", type=Path, help="only alternate the CLI of this tree and of this one (A/B)")
    ap.add_argument("--phases", action="store_true", help="only the CPU of the CLI's steps, in fresh processes")
    ap.add_argument("--before", type=Path, help="also count the sync calls of the CLI of this tree (the state before)")
    args = ap.parse_args()
    mirror = Path(args.mirror).resolve()
    if args.versus:
        _versus(mirror, args.versus.resolve(), args.reps)
        return
    if args.phases:
        print(f"start: {_load()}", flush=True)
        for i in range(args.reps):
            code = (f"import sys; sys.path.insert(0, {str(REPO / 'benchmarks')!r}); import bench_ingest as b; "
                    f"import json; from pathlib import Path; print(json.dumps(b._phases(Path({str(mirror)!r}))))")
            proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=REPO, check=True)
            got = json.loads(proc.stdout.strip().splitlines()[-1])
            print(f"rep {i + 1} ({_load()}): " + ", ".join(f"{k} {v:.2f}" for k, v in got.items()), flush=True)
        return
    size_mb = sum(p.stat().st_size for sub in ("electricitymaps", "prices/standardized", "open-meteo", "egress")
                  for p in (mirror / sub).rglob("*") if p.is_file()) / 1e6
    load_before = _load()
    print(f"start: {load_before}", flush=True)

    cli, cli_cpu, rows = [], [], {}
    for i in range(args.reps):
        with tempfile.TemporaryDirectory() as home:
            wall, cpu = _cli(mirror, home)
            cli.append(wall)
            cli_cpu.append(cpu)
            if i == 0:
                import duckdb

                con = duckdb.connect(str(Path(home) / "warehouse.duckdb"), read_only=True)
                rows = {t: con.execute(f"SELECT count(*) FROM {t}").fetchone()[0]
                        for t in ("grid_carbon", "grid_price", "weather", "egress_price", "network_path",
                                  "raw_files")}
                con.close()
        print(f"CLI rep {i + 1}: {cli[-1]:.2f} s, CPU {cli_cpu[-1]:.2f} s ({_load()})", flush=True)
    peak_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    syncs = _syncs(mirror)
    print(f"CLI sync calls: {_syncs_text(syncs)}", flush=True)
    before = _syncs(mirror, args.before.resolve()) if args.before else None
    if args.before:  # an A/B for the terminal: BENCHMARKS.md holds the current figures only (history is git's)
        print(f"CLI sync calls of {args.before}: {_syncs_text(before)}", flush=True)

    rec, rec_cpu = _timed_reps("Dagster's record alone", _record, mirror, args.reps)
    rec_syncs = _syncs(mirror, record_only=True)
    print(f"record-alone sync calls: {_syncs_text(rec_syncs)}", flush=True)

    pipe, pipe_cpu = _timed_reps("pipeline", _pipeline, mirror, args.reps)

    raws, frames = _floor_inputs(mirror)
    floors = []
    for i in range(args.reps):
        with tempfile.TemporaryDirectory() as home:
            floors.append(_floor(raws, frames, home))
        print(f"floor rep {i + 1}: " + ", ".join(f"{k} {v:.2f}" for k, v in floors[-1].items() if k != "decoded_rows"),
              flush=True)
    load_after = _load()

    floor_total = [f["total"] for f in floors]
    floor_cpu = [f["cpu"] for f in floors]
    best = min(floors, key=lambda f: f["total"])
    total = sum(v for k, v in rows.items() if k != "raw_files")
    ratio_min = min(cli) / min(floor_total)
    ratio_med = statistics.median(cli) / statistics.median(floor_total)
    lines = [
        "## Full-mirror ingest (fresh home)",
        "",
        f"Command: `{COMMAND}` — machine: {machine()}; {args.reps} repetitions of each figure.",
        f"Load (shared machine): {load_before} at the start, {load_after} at the end.",
        "",
        "| figure | value |",
        "|---|---|",
        f"| input files read | {rows['raw_files']} ({size_mb:.0f} MB) |",
        f"| rows written | {total:,} ({', '.join(f'{k} {v:,}' for k, v in rows.items() if k != 'raw_files')}) |",
        "| **goal** | whole mirror from a fresh home in ≤ 8 s on 2 cores (issues 15, 32) |",
        f"| **measured: CLI** (fresh process: start-up, Dagster runs, checks, landings, write) | {_stats(cli)} |",
        f"| CLI, CPU time (user + sys; less sensitive to other load than wall time) | {_stats(cli_cpu)} |",
        f"| CLI, sync calls (one run, `strace -f -c`; each can take milliseconds on a busy disk) | "
        f"{_syncs_text(syncs)} |",
        f"| **Dagster's record alone** (fresh process: the same instance, runs and tags, assets recording the same "
        f"events and computing nothing; `benchmarks/dagster_record_floor.py`) | {_stats(rec)}; CPU {_stats(rec_cpu)}; "
        f"{_syncs_text(rec_syncs)} |",
        f"| pipeline without Dagster (same domain functions, in-process) | {_stats(pipe)}; CPU {_stats(pipe_cpu)} |",
        f"| **least a recorded ingest can take here**: record alone + pipeline (min + min) | wall "
        f"{min(rec) + min(pipe):.2f} s, CPU {min(rec_cpu) + min(pipe_cpu):.2f} s; the CLI's orchestration beyond "
        f"both: {min(cli) - min(rec) - min(pipe):+.2f} s wall, {min(cli_cpu) - min(rec_cpu) - min(pipe_cpu):+.2f} s "
        "CPU |",
        f"| **floor: read + validate + write** (no parsing, no Dagster) | {_stats(floor_total)}; CPU "
        f"{_stats(floor_cpu)} |",
        f"| floor, fastest repetition by part | read {best['read']:.2f} s, validate (Pandera) "
        f"{best['validate']:.2f} s, write (land + DuckDB) {best['write']:.2f} s |",
        f"| ratio CLI / floor | wall {ratio_min:.1f}× (min / min), {ratio_med:.1f}× (median / median); CPU "
        f"{min(cli_cpu) / min(floor_cpu):.1f}× (min / min) |",
        f"| goal met | {'yes' if min(cli) <= GOAL_S else 'no'} (min {min(cli):.2f} s vs {GOAL_S:.0f} s); within "
        f"{GOAL_FLOOR_RATIO:.0f}× the floor: {'yes' if ratio_min <= GOAL_FLOOR_RATIO else 'no'}; reachable at all with "
        f"Dagster's per-partition record on SQLite: {'yes' if min(rec) + min(pipe) <= GOAL_S else 'no'} |",
        f"| **restated goal**: CLI ≤ {GOAL_RECORD_RATIO:g} × (record alone + pipeline) | "
        f"{'met' if min(cli) <= GOAL_RECORD_RATIO * (min(rec) + min(pipe)) else 'not met'}: wall "
        f"{min(cli) / (min(rec) + min(pipe)):.2f}×, CPU {min(cli_cpu) / (min(rec_cpu) + min(pipe_cpu)):.2f}× (min / "
        "sum of mins) |",
        f"| throughput (CLI, min) | {total / min(cli):,.0f} rows/s |",
        f"| peak RSS (CLI) | {peak_mb:.0f} MB |",
        "",
        "Finding: Dagster's record alone (the same runs and per-partition events, nothing computed) makes as many "
        "`fdatasync` calls as the whole CLI; what the ingest itself syncs (raw landings, DuckDB) is the remainder. "
        "Those syncs and the record's CPU are the floor of any ingest that records each region × year partition in "
        "the home's SQLite instance, so the 8 s goal holds only where that floor plus the pipeline fits in 8 s; the "
        "restated goal bounds what gridshift adds on top of both floors instead. Past one machine, the instance's "
        "storage is PostgreSQL (docs/distributed.md).",
        "",
        "Sync calls: Dagster's SQLite storage (the home's instance) stores each event in the run's shard and, for "
        "asset events, in the cross-run index, a connection per write, each a few `fdatasync` calls (the WAL's "
        "commit and the checkpoint when the connection closes). On a disk shared with other work a sync can take "
        "milliseconds, so this count, not the CPU, sets the wall time at a high load. What is left is Dagster's "
        "per-partition record (a planned and a materialization event each, ~25 syncs per partition), ~150 per run "
        "(4 key-range runs and the reference run) and ~300 for a fresh instance; the checks are evaluated once per "
        "step (`dagster_project.checks`), not per partition.",
    ]
    body = "\n".join(lines)
    print(body)
    if args.profile:
        import pstats

        with tempfile.TemporaryDirectory() as home:
            prof = str(Path(home) / "ingest.prof")
            _cli(mirror, str(Path(home) / "h"), profile=prof)
            print("profile of one CLI run (cProfile, cumulative):")
            pstats.Stats(prof).sort_stats("cumulative").print_stats(40)
    if not args.no_write:
        update_section("ingest", body)


if __name__ == "__main__":
    main()
