"""One benchmark run: its key, its record, and :func:`execute` (simulate one policy and seed).

Shared by the in-process sweep (:mod:`.sweep`) and the distributed one (:mod:`.remote`).
"""

from __future__ import annotations

import datetime as dt
import os
import socket
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from gridshift.hashing import canonical_json
from gridshift.results import RunKey

from .. import result as _result
from ..scenario import Scenario
from .metrics import run_metrics, run_series


@dataclass
class RunRecord:
    """One finished run as stored: key, canonical options, metrics, series and timing."""

    key: RunKey
    options_json: str
    metrics: dict[str, float]
    series: pl.DataFrame
    started_utc: dt.datetime
    finished_utc: dt.datetime
    wall_time_s: float
    n_steps: int
    n_dc: int
    worker: str = ""  # host:pid of the process that simulated it (provenance; not part of the result)


def worker_name() -> str:
    """This process as ``host:pid`` (recorded with each run, never in its result object)."""
    return f"{socket.gethostname()}:{os.getpid()}"


def execute(scenario: Scenario, key: RunKey, options: dict[str, Any], run_fn: Callable | None = None,
            source: Path | None = None) -> tuple[RunRecord, _result.RunResult]:
    """Run one (policy, seed) with the canonical options and return its record (and the result). ``source``: the
    scenario's bundle directory, to run from (the run then loads and consumes its own copy of the tasks, so a sweep
    need not hold them: ``sim_core.run``'s memory at scale); ``scenario`` still gives the metrics' site data."""
    import sim_core

    run = run_fn or sim_core.run
    sim_opts = {k: v for k, v in options.items() if k not in ("start_step", "steps")}
    started = dt.datetime.now(dt.UTC)
    t0 = time.perf_counter()
    res = run(scenario if source is None else source, key.policy, seed=key.seed, start=options["start_step"],
              steps=options["steps"], **sim_opts)
    wall = time.perf_counter() - t0
    finished = dt.datetime.now(dt.UTC)
    if res.gridshift_version != key.gridshift_version or res.bundle_id != key.bundle_id:
        raise RuntimeError(f"run recorded {res.bundle_id}/{res.gridshift_version}, expected "
                           f"{key.bundle_id}/{key.gridshift_version}")
    rec = RunRecord(key=key, options_json=canonical_json(options).decode(), metrics=run_metrics(res, scenario),
                    series=run_series(res), started_utc=started, finished_utc=finished, wall_time_s=wall,
                    n_steps=int(res.totals["steps"]), n_dc=int(res.totals["n_dc"]), worker=worker_name())
    return rec, res
