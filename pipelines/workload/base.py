"""The interface of a workload source: what it gives the derivation, from where it may read.

A :class:`WorkloadSource` (a registered ``gridshift.sources`` entry of kind ``workload``) loads its
trace for a target year into a :class:`TraceInput`: the raw trace table and its parsed
``trace_tasks`` rows (real traces), or the derivation by chunks directly (the generator), the
other raw files it read (lineage), and the derivation parameters for it. ``warehouse.ingest_workload``
does the rest the same way for every source.
"""

from __future__ import annotations

from abc import abstractmethod
from dataclasses import dataclass, field
from pathlib import Path

import polars as pl

from pipelines.core.raw import RawFile
from pipelines.core.source import Source
from pipelines.workload.chunked import ChunkedDerivation
from pipelines.workload.derive import DeriveParams, Histogram


@dataclass
class ParsedTrace:
    """A trace table parsed into ``trace_tasks`` rows, with its row faults counted."""

    tasks: pl.DataFrame
    n_rows: int
    dropped: dict[str, int] = field(default_factory=dict)  # rows not in ``tasks``
    issues: dict[str, int] = field(default_factory=dict)  # values set to null, joins that missed
    file: str = ""


@dataclass(frozen=True)
class Inputs:
    """Where a workload source may read: a trace folder, a mirror, the live download (``home``: the
    landings a live download may reuse), and per-source options."""

    mirror: Path | None = None
    trace_dir: Path | None = None
    live: bool = False
    home: object | None = None  # gridshift.home.Home
    pod_list: str | None = None  # alibaba-2023: the pod list's mirror path
    synthetic: dict = field(default_factory=dict)  # synthetic: generator parameters


@dataclass
class TraceInput:
    """What a workload source hands the derivation."""

    params: DeriveParams
    trace_raw: RawFile | None = None  # the trace table whose rows are stored in ``trace_tasks``
    parsed: ParsedTrace | None = None
    frame: pl.DataFrame | None = None  # the derivation's input when there is no parsed trace
    chunks: ChunkedDerivation | None = None  # or the derivation itself, by chunks (the generator)
    others: list[RawFile] = field(default_factory=list)  # other raw inputs, for lineage
    extra: dict = field(default_factory=dict)  # reported with the derivation


class WorkloadSource(Source):
    """A workload: a trace (or a generator) turned into the derivation's input for one year."""

    #: whether the source needs the reference histograms whatever the bandwidth model
    needs_histograms: bool = False

    def default_params(self) -> DeriveParams:
        """The documented defaults for this source (docs/workload.md)."""
        return DeriveParams()

    @abstractmethod
    def load(self, year: int, base: DeriveParams, *, seed: int, load_factor: float, inputs: Inputs,
             histograms: dict[str, Histogram] | None) -> TraceInput:
        """Fetch and parse (or generate) the trace; raises before anything is written."""
