"""The benchmark result format: one self-describing Parquet object per run, under a results URL.

A run key is :class:`RunKey`, ``(bundle_id, policy, seed, gridshift_version, options_sha256)``, declared here
once (the sweep, the warehouse index and the object paths take it from here), as are the columns of a run's
per-step series (:data:`SERIES`) and, in :mod:`gridshift.metrics`, its metrics.
Its object is ``<url>/bundle=<id>/version=<v>/options=<sha>/<policy>.seed-<s>.parquet`` (a Hive-partitioned
layout), one row: the key columns, ``forecast`` (the forecast model of the run options),
``options_json``, ``n_steps``, ``n_dc``, every metric as a Float64 column (in the order of the record), and
``series``: the per-step, per-DC series as a list of structs. Reading the URL as a Parquet dataset
(``polars.scan_parquet(url, hive_partitioning=True)``, ``dask.dataframe.read_parquet``) therefore gives one
labelled row per run; the path repeats the key so that a reader may prune on it. The Hive keys are named apart
from the columns (``bundle``, ``version``, ``options``), and policy and seed are in the file name, because
pyarrow (and so Dask) infers a partition's type from its values (``seed=7`` as int32, a hex id of digits as an
integer) and refuses a file column of the same name with another type, and Dask refuses a layout where only
some partition keys are also file columns.

Nothing that varies between two executions of the same run (wall-clock times, the worker's name) is in the
object, so the same run gives byte-identical objects on any machine and any engine; those go to the warehouse
index (``warehouse.benchmark_store``), which records each object's URL and sha256 and can be rebuilt from the
objects alone.

:class:`ResultStore` is also a ``sim_core.bench.compare`` store on its own (``lookup``, ``series``,
``save``): a sweep with results on S3 and no warehouse at all works. No pickle anywhere: an object
from an untrusted store is parsed as Parquet only, and its sha256 is checked against the index.

Trust (docs/distributed.md, "Trust"): an object is read only up to :data:`gridshift.limits.RESULT_OBJECT_BYTES`,
and every object read is checked before it is used, whoever wrote it: its labels against each other (the
options hash is the sha256 of its ``options_json``, the series has ``n_steps`` x ``n_dc`` rows) and its
metrics against the run contract (:mod:`gridshift.run_contract`). A refusal is a ``DataError`` naming the URL.
"""

from __future__ import annotations

import io
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple, get_type_hints

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

from gridshift import objectstore
from gridshift.errors import DataError
from gridshift.fields import FIELDS, table
from gridshift.hashing import sha256_bytes
from gridshift.limits import RESULT_OBJECT_BYTES
from gridshift.run_contract import check_metrics

RESULTS_FORMAT = 2
METADATA_KEY = b"gridshift.run"


class RunKey(NamedTuple):
    """What identifies a run: the same key gives the same results, so a stored run is never simulated again.
    ``options_sha256`` hashes the canonical JSON of every run option, the resolved window included."""

    bundle_id: str
    policy: str
    seed: int
    gridshift_version: str
    options_sha256: str


RUN_KEY: tuple[str, ...] = RunKey._fields
_KEY_TYPES = tuple(get_type_hints(RunKey).values())
#: the per-step, per-DC series stored with each run (the time-series figure needs no re-run), its columns
#: fields of the registry (``gridshift.fields``): ``sim_core.bench.metrics.run_series`` selects them, the
#: warehouse validates them (``warehouse.schemas.benchmark``)
SERIES = table(
    "benchmark_series",
    "Per-step, per-DC series of a run, validated before its result object is written (not a warehouse table: "
    "the series lives in the run's Parquet object, ``gridshift.results``). Its signals are the bundle's, within "
    "the same bounds.",
    ["location", "dc", "step", FIELDS["ts_utc"].but(description="start of the step, UTC"), "carbon_g_per_kwh",
     "price_usd_per_mwh", "total_kwh", "assigned", "started", "busy_cores", "cpu_util", "gpu_util", "mem_util"],
    ["location", "step"])
#: the Hive keys of an object's path, coarsest first, and the key part each names
PARTITIONS = {"bundle": "bundle_id", "version": "gridshift_version", "options": "options_sha256"}
_OBJECT = re.compile(r"^(.+)\.seed-(0|[1-9][0-9]*)\.parquet$")
#: the columns of an object besides its metrics and ``series``
LABELS = (*RUN_KEY, "forecast", "options_json", "n_steps", "n_dc")
_LABEL_TYPES = {c: pa.string() if c == "forecast" else FIELDS[c].arrow_type for c in LABELS}
_SAFE = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+-]*$")


@dataclass(frozen=True)
class RunRef:
    """Where a run's object was published and what it hashes to."""

    url: str
    sha256: str
    size_bytes: int


@dataclass
class StoredRun:
    """A run read back from its object."""

    key: tuple
    options_json: str
    metrics: dict[str, float]
    series: pl.DataFrame
    n_steps: int
    n_dc: int
    ref: RunRef


def run_key(key: Sequence) -> RunKey:
    """``key`` as a :class:`RunKey`, each part of its declared type (``ValueError`` on the wrong number of parts)."""
    k = tuple(key)
    if len(k) != len(RUN_KEY):
        raise ValueError(f"a run key has {len(RUN_KEY)} parts {RUN_KEY}, got {k!r}")
    return RunKey(*(t(v) for t, v in zip(_KEY_TYPES, k, strict=True)))


_key = run_key


def run_relpath(key: Sequence) -> str:
    """The object's path under the results URL (every part checked: no ``/``, ``..`` or spaces)."""
    parts = dict(zip(RUN_KEY, _key(key), strict=True))
    for name in RUN_KEY:
        if not _SAFE.match(str(parts[name])):
            raise ValueError(f"run key part {name}={parts[name]!r} cannot name an object")
    return "/".join(f"{hive}={parts[name]}" for hive, name in PARTITIONS.items()) + \
        f"/{parts['policy']}.seed-{parts['seed']}.parquet"


def _series_column(series: pl.DataFrame) -> pa.Array:
    """The series as one list-of-structs cell (the run's per-step, per-DC rows)."""
    rows = series.to_arrow()
    structs = pa.StructArray.from_arrays([c.combine_chunks() for c in rows.columns], fields=list(rows.schema))
    return pa.ListArray.from_arrays(pa.array([0, rows.num_rows], pa.int32()), structs)


def encode_run(record) -> bytes:
    """The Parquet bytes of a run record (``key``, ``options_json``, ``metrics``, ``series``, ``n_steps``,
    ``n_dc``): one labelled row, deterministic (the same bytes for the same run)."""
    key = dict(zip(RUN_KEY, _key(record.key), strict=True))
    options = json.loads(record.options_json)
    forecast = options.get("forecast") if isinstance(options, dict) else None
    labels = {**key, "forecast": None if forecast is None else str(forecast), "options_json": record.options_json,
              "n_steps": int(record.n_steps), "n_dc": int(record.n_dc)}
    clash = sorted(set(record.metrics) & {*LABELS, "series"})
    if clash:
        raise ValueError(f"metric name(s) {clash} collide with the run object's label columns")
    names = [*LABELS, *map(str, record.metrics), "series"]
    arrays = [pa.array([labels[c]], _LABEL_TYPES[c]) for c in LABELS]
    arrays += [pa.array([float(v)], pa.float64()) for v in record.metrics.values()]  # NaN kept
    arrays.append(_series_column(record.series))
    table = pa.Table.from_arrays(arrays, names=names)
    table = table.replace_schema_metadata({METADATA_KEY: json.dumps({"format": RESULTS_FORMAT})})
    sink = io.BytesIO()
    pq.write_table(table, sink, compression="zstd", compression_level=3, store_schema=True)
    return sink.getvalue()


def _read_table(data: bytes, url: str) -> pa.Table:
    try:
        table = pq.read_table(pa.BufferReader(data))
    except (pa.ArrowException, OSError) as err:
        raise DataError(f"result object is not a readable Parquet file: {err}", file=url) from err
    raw = (table.schema.metadata or {}).get(METADATA_KEY)
    if raw is None:
        raise DataError(f"result object has no {METADATA_KEY.decode()!r} footer entry (not a gridshift run)", file=url)
    try:
        fmt = json.loads(raw).get("format")
    except (ValueError, AttributeError) as err:
        raise DataError(f"result object footer is malformed: {err}", file=url) from err
    if fmt != RESULTS_FORMAT:
        raise DataError(f"result format {fmt!r} is not {RESULTS_FORMAT} (written by another gridshift version)",
                        file=url)
    missing = [c for c in (*LABELS, "series") if c not in table.column_names]
    if missing or table.num_rows != 1:
        raise DataError(f"result object must hold one row with columns {missing or LABELS}; it has "
                        f"{table.num_rows} row(s)", file=url, column=(missing or [None])[0])
    return table


def _check_labels(row: dict, series: pl.DataFrame, url: str) -> None:
    """The labels of one object agree with each other (a run's key is its content's, not a claim)."""
    def bad(column: str, why: str) -> DataError:
        return DataError(f"result object's {column} {why}", file=url, column=column, rows=[0], values=[row[column]])

    if sha256_bytes(row["options_json"].encode()) != row["options_sha256"]:
        raise bad("options_sha256", "is not the sha256 of its options_json (the key does not name these options)")
    try:
        options = json.loads(row["options_json"])
    except ValueError:
        raise bad("options_json", "is not JSON") from None
    forecast = options.get("forecast") if isinstance(options, dict) else None
    if row["forecast"] != (None if forecast is None else str(forecast)):
        raise bad("forecast", f"is not the forecast of its options_json ({forecast!r})")
    for c in ("n_steps", "n_dc"):
        if not 1 <= row[c] <= RESULT_OBJECT_BYTES.limit:
            raise bad(c, "is not a positive count")
    if series.height != row["n_steps"] * row["n_dc"]:
        raise DataError(f"result object's series has {series.height} rows, not n_steps x n_dc = "
                        f"{row['n_steps']} x {row['n_dc']}", file=url, column="series")


def decode_run(data: bytes, url: str, *, sha256: str | None = None) -> StoredRun:
    """Parse a run object; ``sha256`` (from the index) must match when given. Errors name the URL."""
    digest = sha256_bytes(data)
    if sha256 is not None and digest != sha256:
        raise DataError("result object does not match the sha256 recorded in the index (changed or corrupt)",
                        file=url, column="result_sha256", rows=[0], values=[digest])
    table = _read_table(data, url)
    row = {c: table.column(c)[0].as_py() for c in LABELS}
    bad = [c for c in LABELS if c != "forecast" and row[c] is None]
    if bad:
        raise DataError("result object has a null label", file=url, column=bad[0], rows=[0], values=[None])
    try:
        metrics = {c: float(table.column(c)[0].as_py()) for c in table.column_names
                   if c not in LABELS and c != "series"}
    except (TypeError, ValueError) as err:
        raise DataError(f"result object has a non-numeric metric: {err}", file=url) from err
    cell = table.column("series").combine_chunks()
    structs = cell.flatten() if isinstance(cell, pa.ListArray) else None
    if not isinstance(structs, pa.StructArray):
        raise DataError("result object's series is not a list of structs", file=url, column="series")
    series = pl.from_arrow(pa.Table.from_struct_array(structs))
    assert isinstance(series, pl.DataFrame)
    _check_labels(row, series, url)
    check_metrics(metrics, file=url)
    return StoredRun(_key([row[c] for c in RUN_KEY]), row["options_json"], metrics, series, int(row["n_steps"]),
                     int(row["n_dc"]), RunRef(url, digest, len(data)))


def read_object(url: str) -> bytes:
    """The bytes of the run object at ``url``, refused by name above :data:`~gridshift.limits.RESULT_OBJECT_BYTES`."""
    return objectstore.read_bytes(url, limit=RESULT_OBJECT_BYTES)


def read_run(url: str, *, sha256: str | None = None) -> StoredRun:
    """Read the run object at ``url`` (``ObjectNotFoundError`` if missing; ``DataError`` if its hash differs,
    it is too large, or it breaks the contract)."""
    return decode_run(read_object(url), url, sha256=sha256)


class ResultStore:
    """Run objects under one results URL (a local folder or ``s3://bucket/prefix``)."""

    def __init__(self, url: str):
        self.location = objectstore.parse(url)

    @property
    def url(self) -> str:
        return self.location.url

    def url_for(self, key: Sequence) -> str:
        return self.location.join(run_relpath(key))

    def put(self, record) -> RunRef:
        """Publish the record's object atomically; return its URL, sha256 and size."""
        return self.put_bytes(record.key, encode_run(record))

    def put_bytes(self, key: Sequence, data: bytes) -> RunRef:
        """Publish an encoded run object (e.g. one read from another results URL) under ``key``'s path."""
        url = self.url_for(key)
        objectstore.write_bytes(url, data)
        return RunRef(url, sha256_bytes(data), len(data))

    def keys(self) -> list[tuple]:
        """The run key of every object under the URL (from the Hive paths; for rebuilding an index)."""
        out = []
        for rel in objectstore.list_files(self.url):
            parts = rel.split("/")
            name = _OBJECT.match(parts[-1])
            named = dict(p.partition("=")[::2] for p in parts[:-1])
            if name is None or list(named) != list(PARTITIONS):
                continue
            named = {PARTITIONS[h]: v for h, v in named.items()} | {"policy": name.group(1), "seed": name.group(2)}
            try:
                key = _key([named[c] for c in RUN_KEY])
                if run_relpath(key) == rel:
                    out.append(key)
            except ValueError:  # a path no run key names (not gridshift's): not a run
                continue
        return sorted(out)

    def get(self, url: str, sha256: str | None = None) -> StoredRun:
        """Read one object (``ObjectNotFoundError`` if missing; ``DataError`` if its hash differs)."""
        return read_run(url, sha256=sha256)

    def find(self, key: Sequence) -> StoredRun | None:
        """The stored run of ``key``, or None when its object is absent."""
        url = self.url_for(key)
        try:
            run = self.get(url)
        except objectstore.ObjectNotFoundError:
            return None
        if run.key != _key(key):
            raise DataError(f"result object holds run {run.key}, not {_key(key)}", file=url)
        return run

    # ------------------------------------------------------------ the sim_core.bench.compare store protocol
    def lookup(self, keys: Sequence[tuple]) -> dict[tuple, dict[str, float]]:
        out = {}
        for k in keys:
            run = self.find(k)
            if run is not None:
                out[k] = run.metrics
        return out

    def series(self, key: tuple) -> pl.DataFrame | None:
        run = self.find(key)
        return None if run is None else run.series

    def save(self, record) -> RunRef:
        return self.put(record)


__all__ = ["LABELS", "METADATA_KEY", "PARTITIONS", "RESULTS_FORMAT", "RUN_KEY", "SERIES", "ResultStore", "RunKey",
           "RunRef", "StoredRun", "decode_run", "run_key", "encode_run", "read_object", "read_run", "run_relpath"]
