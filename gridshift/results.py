"""The benchmark result format: one Parquet object per run, under a results URL, keyed by the run key.

A run key is ``(bundle_id, policy, seed, gridshift_version, options_sha256)`` (``sim_core.bench.sweep.RunKey``).
Its object is ``<url>/runs/<bundle_id>/<gridshift_version>/<options_sha256>/<policy>/seed-<seed>.parquet``:
the per-step, per-DC series as the table, and in the Parquet footer (key ``gridshift.run``) the JSON of the
key, the canonical run options, every metric, ``n_steps`` and ``n_dc``. Nothing that varies between
two executions of the same run (wall-clock times, the worker's name) is in the object, so the same
run gives byte-identical objects on any machine and any engine; those go to the warehouse index
(``warehouse.benchmark_store``), which records each object's URL and sha256.

:class:`ResultStore` is also a ``sim_core.bench.compare`` store on its own (``lookup``, ``series``,
``save``): a sweep with results on S3 and no warehouse at all works. No pickle anywhere: an object
from an untrusted store is parsed as Parquet + JSON only, and its sha256 is checked against the index.
"""

from __future__ import annotations

import io
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

from gridshift import objectstore
from gridshift.errors import DataError
from gridshift.hashing import sha256_bytes

RESULTS_FORMAT = 1
METADATA_KEY = b"gridshift.run"
RUN_KEY = ("bundle_id", "policy", "seed", "gridshift_version", "options_sha256")
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


def _key(key: Sequence) -> tuple:
    k = tuple(key)
    if len(k) != len(RUN_KEY):
        raise ValueError(f"a run key has {len(RUN_KEY)} parts {RUN_KEY}, got {k!r}")
    return (str(k[0]), str(k[1]), int(k[2]), str(k[3]), str(k[4]))


def run_relpath(key: Sequence) -> str:
    """The object's path under the results URL (every part checked: no ``/``, ``..`` or spaces)."""
    bundle_id, policy, seed, version, osha = _key(key)
    for name, part in zip(RUN_KEY, (bundle_id, policy, str(seed), version, osha), strict=True):
        if not _SAFE.match(part):
            raise ValueError(f"run key part {name}={part!r} cannot name an object")
    return f"runs/{bundle_id}/{version}/{osha}/{policy}/seed-{seed}.parquet"


def encode_run(record) -> bytes:
    """The Parquet bytes of a run record (``key``, ``options_json``, ``metrics``, ``series``, ``n_steps``,
    ``n_dc``): deterministic, the same bytes for the same run."""
    meta = {
        "format": RESULTS_FORMAT,
        "key": dict(zip(RUN_KEY, _key(record.key), strict=True)),
        "options": json.loads(record.options_json),
        "metrics": {str(m): float(v) for m, v in record.metrics.items()},  # NaN kept (JSON NaN token)
        "n_steps": int(record.n_steps),
        "n_dc": int(record.n_dc),
    }
    table = record.series.to_arrow()
    table = table.replace_schema_metadata({METADATA_KEY: json.dumps(meta, sort_keys=True, separators=(",", ":"))})
    sink = io.BytesIO()
    pq.write_table(table, sink, compression="zstd", compression_level=3, store_schema=True)
    return sink.getvalue()


def decode_run(data: bytes, url: str, *, sha256: str | None = None) -> StoredRun:
    """Parse a run object; ``sha256`` (from the index) must match when given. Errors name the URL."""
    digest = sha256_bytes(data)
    if sha256 is not None and digest != sha256:
        raise DataError("result object does not match the sha256 recorded in the index (changed or corrupt)",
                        file=url, column="result_sha256", rows=[0], values=[digest])
    try:
        table = pq.read_table(pa.BufferReader(data))
    except (pa.ArrowException, OSError) as err:
        raise DataError(f"result object is not a readable Parquet file: {err}", file=url) from err
    raw = (table.schema.metadata or {}).get(METADATA_KEY)
    if raw is None:
        raise DataError(f"result object has no {METADATA_KEY.decode()!r} footer entry (not a gridshift run)", file=url)
    try:
        meta = json.loads(raw)
        if meta.get("format") != RESULTS_FORMAT:
            raise DataError(f"result format {meta.get('format')!r} is not {RESULTS_FORMAT}", file=url)
        key = _key([meta["key"][c] for c in RUN_KEY])
        options_json = json.dumps(meta["options"], sort_keys=True, separators=(",", ":"), ensure_ascii=False)
        metrics = {str(m): float(v) for m, v in meta["metrics"].items()}
        n_steps, n_dc = int(meta["n_steps"]), int(meta["n_dc"])
    except (ValueError, KeyError, TypeError) as err:
        raise DataError(f"result object footer is malformed: {err}", file=url) from err
    series = pl.from_arrow(table.replace_schema_metadata(None))
    assert isinstance(series, pl.DataFrame)
    return StoredRun(key, options_json, metrics, series, n_steps, n_dc, RunRef(url, digest, len(data)))


def read_run(url: str, *, sha256: str | None = None) -> StoredRun:
    """Read the run object at ``url`` (``ObjectNotFoundError`` if missing; ``DataError`` if its hash differs)."""
    return decode_run(objectstore.read_bytes(url), url, sha256=sha256)


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
        data = encode_run(record)
        url = self.url_for(record.key)
        objectstore.write_bytes(url, data)
        return RunRef(url, sha256_bytes(data), len(data))

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


__all__ = ["METADATA_KEY", "RESULTS_FORMAT", "ResultStore", "RunRef", "StoredRun", "decode_run", "encode_run",
           "read_run", "run_relpath"]
