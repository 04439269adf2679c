"""A bundle's content, read and checked against the contract before anything computes with it.

:func:`read_content` turns a bundle whose integrity was checked (``integrity.check_integrity``)
into plain NumPy arrays, refusing — with a :class:`BundleError` naming the file, column, first rows
and values — anything a simulation could not run on correctly: a missing or mistyped column,
nulls, non-finite numbers, values outside ``gridshift.bounds``, timestamps off the 15-minute grid
or outside the bundle's window, rows out of order, duplicated ids, network pairs missing or
repeated, datacenters that do not match the manifest's locations. A bundle that passes can be
simulated without any index leaving its array.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import numpy as np
import polars as pl

from gridshift.bundle.errors import BundleError
from gridshift.bundle.format import (
    DATACENTER_KEYS,
    DATACENTERS,
    DC_LABEL,
    MANIFEST,
    NETWORK,
    NETWORK_TABLE,
    NETWORK_VALUES,
    SIGNAL_VALUES,
    SIGNALS,
    SIGNALS_TABLE,
    TASK_FLAGS,
    TASK_FLEX,
    TASK_RESOURCES,
    TASKS,
    TASKS_TABLE,
    is_int,
    is_number,
    parse_json,
)
from gridshift.bundle.manifest_params import check_count_values, check_counts, check_manifest_params
from gridshift.bundle.size import check_bundle_sizes
from gridshift.dc_params import DatacenterParams, physics_column
from gridshift.fields import FIELDS
from gridshift.limits import BUNDLE
from gridshift.timestep import STEP_S

#: keys a datacenters.json entry may carry besides DATACENTER_KEYS: ``capacity_source`` (informational);
#: ``signal_location``, the registry location whose signals a site shares (several datacenters per
#: location, cloud regions: scenario_builder.sites); absent = the datacenter's own label
DATACENTER_INFO_KEYS = ("capacity_source", "signal_location")
MAX_LOCATIONS = BUNDLE.datacenters.limit  # why that many: gridshift.limits


@dataclass(frozen=True)
class Header:
    """The manifest fields every reader needs, typed and checked."""

    year: int
    step_s: int
    n_steps: int
    start_utc: dt.datetime
    locations: list[str]
    carbon_basis: str | None

    @property
    def n_dc(self) -> int:
        return len(self.locations)


@dataclass
class BundleContent:
    """A checked bundle as arrays. Datacenter index order = ``header.locations``."""

    root: Path
    manifest: dict[str, Any]
    header: Header
    datacenters: list[dict[str, Any]]  # with ``physics`` as DatacenterParams
    signals: dict[str, np.ndarray]  # SIGNAL_VALUES -> (n_dc, n_steps) float64, C-contiguous
    #: task_id (int64), arrival_s (s since start_utc), TASK_RESOURCES and TASK_FLEX (float64), TASK_FLAGS (bool)
    tasks: dict[str, np.ndarray]
    network: dict[str, np.ndarray]  # NETWORK_VALUES -> (n_dc, n_dc) float64, [src, dst]
    extra: dict[str, Any] = field(default_factory=dict)


# ------------------------------------------------------------------------------------------ helpers
def _first_bad(mask: np.ndarray, values: np.ndarray, limit: int = 5) -> tuple[list[int], list[Any]]:
    idx = np.flatnonzero(mask)[:limit]
    return idx.tolist(), [v.item() if hasattr(v, "item") else v for v in values[idx]]


def _check_values(a: np.ndarray, name: str, file: str, *, rows: np.ndarray | None = None) -> None:
    """Refuse non-finite values and values outside the bound of field ``name`` (``gridshift.fields``)."""
    b = FIELDS[name].bound
    bad = ~np.isfinite(a)
    if bad.any():
        r, v = _first_bad(bad, a)
        raise BundleError(f"{int(bad.sum())} missing or non-finite value(s)", file=file, column=name,
                          rows=(rows[r] if rows is not None else r), values=v)
    lo_bad = (a < b.low) if b.low_inclusive else (a <= b.low)
    bad = lo_bad | (a > b.high)
    if bad.any():
        r, v = _first_bad(bad, a)
        raise BundleError(f"{int(bad.sum())} value(s) outside {b.describe()} ({b.reason})", file=file, column=name,
                          rows=(rows[r] if rows is not None else r), values=v)


def _check_schema(path: Path, columns: list[str], dtypes: dict[str, pl.DataType],
                  schema: Mapping[str, pl.DataType] | None = None) -> None:
    """``columns`` are in the file with ``dtypes``; ``schema``: the file's schema if already read."""
    file = str(path)
    if schema is None:
        try:
            schema = pl.read_parquet_schema(path)
        except Exception as exc:  # noqa: BLE001 - any reader error is a bundle error
            raise BundleError(f"cannot read the Parquet schema ({exc})", file=file) from None
    for c in columns:
        if c not in schema:
            raise BundleError("missing column", file=file, column=c)
        if schema[c] != dtypes[c]:
            raise BundleError(f"column has dtype {schema[c]}, expected {dtypes[c]}", file=file, column=c)


def _read_parquet(path: Path, columns: list[str], dtypes: dict[str, pl.DataType]) -> pl.DataFrame:
    file = str(path)
    _check_schema(path, columns, dtypes)
    try:
        df = pl.read_parquet(path, columns=columns)
    except Exception as exc:  # noqa: BLE001
        raise BundleError(f"cannot read ({exc})", file=file) from None
    for c in columns:
        n = df[c].null_count()
        if n:
            rows = df.with_row_index("_i").filter(pl.col(c).is_null())["_i"].head(5).to_list()
            raise BundleError(f"{n} null value(s)", file=file, column=c, rows=rows, values=[None] * len(rows))
    return df


def _fresh(a: np.ndarray, dtype) -> np.ndarray:
    """A writable, C-contiguous copy (the Numba signatures and their cache entries then never depend on
    whether a reader handed out a zero-copy view)."""
    return np.array(a, dtype=dtype, order="C", copy=True)


# ------------------------------------------------------------------------------------------ manifest
def read_header(manifest: dict[str, Any], file: str) -> Header:
    def bad(key: str, why: str) -> BundleError:
        return BundleError(f"{key!r} {why}", file=file, column=key, rows=[0], values=[manifest.get(key)])

    check_manifest_params(manifest, file)

    year, step_s, n_steps = manifest.get("year"), manifest.get("step_s"), manifest.get("n_steps")
    if not is_int(year) or not 1900 <= year <= 2200:
        raise bad("year", "must be an integer year in 1900..2200")
    if step_s != STEP_S or not is_int(step_s):
        raise bad("step_s", f"must be {STEP_S}")
    start_text = manifest.get("start_utc")
    try:
        start = dt.datetime.fromisoformat(start_text) if isinstance(start_text, str) else None
    except ValueError:
        start = None
    if start is None or start.utcoffset() != dt.timedelta(0) or start != dt.datetime(year, 1, 1, tzinfo=dt.UTC):
        raise bad("start_utc", f"must be {year}-01-01T00:00:00+00:00 (the UTC start of the bundle's year)")
    start = start.astimezone(dt.UTC)
    year_steps = int((dt.datetime(year + 1, 1, 1, tzinfo=dt.UTC) - start).total_seconds()) // STEP_S
    if not is_int(n_steps) or not 1 <= n_steps <= year_steps:
        raise bad("n_steps", f"must be an integer in 1..{year_steps}")
    locs = manifest.get("locations")
    if not isinstance(locs, list) or not 1 <= len(locs) <= MAX_LOCATIONS:
        raise bad("locations", f"must be a list of 1..{MAX_LOCATIONS} location codes")
    for i, code in enumerate(locs):
        if not isinstance(code, str) or not DC_LABEL.match(code):
            raise BundleError(f"malformed datacenter label (pattern {DC_LABEL.pattern})", file=file,
                              column="locations", rows=[i], values=[code])
    if len(set(locs)) != len(locs):
        dup = sorted({c for c in locs if locs.count(c) > 1})
        raise BundleError("duplicated location codes", file=file, column="locations", values=dup)
    params = manifest.get("parameters")
    basis = params.get("carbon_basis") if isinstance(params, dict) else None
    if basis is not None and not isinstance(basis, str):
        raise bad("parameters", "carbon_basis must be a string")
    return Header(year=year, step_s=step_s, n_steps=n_steps, start_utc=start, locations=list(locs),
                  carbon_basis=basis)


# ------------------------------------------------------------------------------------------ files
def read_datacenters(root: Path, header: Header) -> list[dict[str, Any]]:
    path = root / DATACENTERS
    file = str(path)
    body = parse_json(path.read_bytes(), file)
    dcs = body.get("datacenters")
    if not isinstance(dcs, list) or len(dcs) != header.n_dc:
        raise BundleError(f"'datacenters' must list the {header.n_dc} manifest locations", file=file,
                          column="datacenters")
    out = []
    for i, d in enumerate(dcs):
        if not isinstance(d, dict):
            raise BundleError("entry is not an object", file=file, column="datacenters", rows=[i], values=[d])
        missing = [k for k in DATACENTER_KEYS if k not in d]
        unknown = sorted(set(d) - set(DATACENTER_KEYS) - set(DATACENTER_INFO_KEYS))
        if missing or unknown:
            raise BundleError(f"entry {i}: missing keys {missing}, unknown keys {unknown}", file=file,
                              column=(missing or unknown)[0], rows=[i])
        if d["location"] != header.locations[i]:
            raise BundleError(f"entry {i} is {d['location']!r}; datacenters must follow the manifest's locations "
                              "in order", file=file, column="location", rows=[i], values=[d["location"]])
        tz = d["timezone"]
        try:
            if not isinstance(tz, str) or not tz:
                raise ValueError(tz)
            ZoneInfo(tz)
        except (ZoneInfoNotFoundError, ValueError, TypeError):
            raise BundleError("not an IANA time zone", file=file, column="timezone", rows=[i], values=[tz]) from None
        sl = d.get("signal_location", d["location"])
        if not isinstance(sl, str) or not DC_LABEL.match(sl):
            raise BundleError(f"malformed signal location (pattern {DC_LABEL.pattern})", file=file,
                              column="signal_location", rows=[i], values=[sl])
        entry = dict(d)
        for key in ("population_weight", "total_cores", "total_gpus", "total_mem_gb"):
            v = d[key]
            b = FIELDS[key].bound
            if not is_number(v) or not b.admits(float(v)):
                raise BundleError(f"must be a finite number in {b.describe()}", file=file, column=key,
                                  rows=[i], values=[v])
            entry[key] = float(v)
        if not isinstance(d["physics"], dict):
            raise BundleError("must be an object", file=file, column="physics", rows=[i])
        try:
            entry["physics"] = DatacenterParams.from_stored(d["physics"])
        except (TypeError, ValueError) as exc:
            raise BundleError(f"bad physics parameters ({exc})", file=file, column=physics_column(exc),
                              rows=[i]) from None
        out.append(entry)
    if not sum(e["population_weight"] for e in out) > 0:
        raise BundleError("population weights sum to 0: no task could originate anywhere", file=file,
                          column="population_weight")
    return out


def read_signals(root: Path, header: Header) -> dict[str, np.ndarray]:
    path = root / SIGNALS
    file = str(path)
    dtypes = SIGNALS_TABLE.polars_schema()
    df = _read_parquet(path, list(dtypes), dtypes)
    n_dc, n = header.n_dc, header.n_steps
    if df.height != n_dc * n:
        raise BundleError(f"{df.height} rows, expected {n_dc} locations x {n} steps", file=file)
    locs = df["location"].to_numpy().reshape(n_dc, n)
    for d, code in enumerate(header.locations):
        wrong = locs[d] != code
        if wrong.any():
            r = np.flatnonzero(wrong)[:5] + d * n
            raise BundleError(f"rows must be sorted by location in manifest order ({code!r} expected)", file=file,
                              column="location", rows=r.tolist(), values=df["location"].gather(r).to_list())
    ts = df["ts_utc"].dt.epoch("us").to_numpy().reshape(n_dc, n)
    t0 = int(header.start_utc.timestamp()) * 1_000_000
    grid = t0 + np.arange(n, dtype=np.int64) * STEP_S * 1_000_000
    off = ts != grid[None, :]
    if off.any():
        r = np.flatnonzero(off.ravel())[:5]
        raise BundleError(f"ts_utc is not the grid start_utc + {STEP_S} s x k of each location", file=file,
                          column="ts_utc", rows=r.tolist(), values=[str(x) for x in df["ts_utc"].gather(r).to_list()])
    out = {}
    for c in SIGNAL_VALUES:
        a = df[c].to_numpy()
        _check_values(a, c, file)
        out[c] = _fresh(a.reshape(n_dc, n), np.float64)
    above = out["wetbulb_c"] > out["temp_c"] + 1e-9
    if above.any():
        r = np.flatnonzero(above.ravel())[:5]
        raise BundleError("wet-bulb above dry-bulb", file=file, column="wetbulb_c", rows=r.tolist(),
                          values=out["wetbulb_c"].ravel()[r].tolist())
    return out


def _open_tasks(path: Path) -> tuple[Any, dict[str, pl.DataType]]:
    """The tasks file opened once (``pyarrow.parquet.ParquetFile``: its footer is read here, once per load)
    and its schema as polars dtypes, derived from that footer."""
    import pyarrow.parquet as pq  # noqa: PLC0415 (pyarrow is polars' optional dependency: imported here)

    try:
        f = pq.ParquetFile(path)
        schema = dict(pl.from_arrow(f.schema_arrow.empty_table()).schema)
    except Exception as exc:  # noqa: BLE001 - any reader error is a bundle error
        raise BundleError(f"cannot read the Parquet schema ({exc})", file=str(path)) from None
    return f, schema


def _row_group(f: Any, k: int, columns: list[str], file: str) -> pl.DataFrame:
    """Columns ``columns`` of row group ``k`` of the open tasks file ``f``; one that cannot be read (a corrupt page,
    or the file changed since it was checked) is refused naming the file, the row group and the columns."""
    try:
        return pl.from_arrow(f.read_row_group(k, columns=columns))
    except Exception as exc:  # noqa: BLE001
        raise BundleError(f"cannot read row group {k} ({exc})", file=file, column=", ".join(columns)) from None


def _read_task_columns(path: Path, f: Any, schema: dict[str, pl.DataType],
                       dtypes: dict[str, pl.DataType]) -> tuple[dict[str, np.ndarray], dict]:
    """The task columns ``dtypes`` of the open file ``f`` (schema ``schema``, :func:`_open_tasks`) into arrays
    allocated once, filled one Parquet row group at a time (peak: the arrays plus one row group). Nulls are
    counted per column (total, first rows) and set to 0 in the arrays; the caller raises for them in its
    order."""
    file = str(path)
    _check_schema(path, list(dtypes), dtypes, schema)
    n = f.metadata.num_rows
    kind = {pl.Int64: np.int64, pl.Float64: np.float64, pl.Boolean: np.bool_}
    out = {c: np.empty(n, dtype=np.int64 if c == "arrival_ts_utc" else kind[dt]) for c, dt in dtypes.items()}
    nulls: dict[str, list] = {}  # column -> [count, first rows]
    off = 0
    for i in range(f.num_row_groups):
        df = _row_group(f, i, list(dtypes), file)
        m = df.height
        for c in dtypes:
            s = df[c].dt.epoch("us") if c == "arrival_ts_utc" else df[c]
            k = s.null_count()
            if k:
                seen = nulls.setdefault(c, [0, []])
                seen[0] += k
                seen[1] = (seen[1] + (off + np.flatnonzero(s.is_null().to_numpy())[:5]).tolist())[:5]
                s = s.fill_null(False if s.dtype == pl.Boolean else 0)
            out[c][off:off + m] = s.to_numpy()
        off += m
    return out, nulls


def read_tasks(root: Path, header: Header) -> dict[str, np.ndarray]:
    """The task columns as arrays, read by Parquet row groups into arrays allocated once, in two passes:
    arrival and ``task_id`` first (checked while they are the only columns held: the uniqueness check
    needs a copy of the ids), then the rest. A year of tasks is ~1.3 M rows per 1× load; reading whole
    columns would add one or two columns to the peak (BENCHMARKS.md, "Workload derivation"). The file's
    footer (schema, row groups) is read once for both passes."""
    path = root / TASKS
    file = str(path)
    f, schema, out = _read_arrival_and_ids(root, header)
    cols, nulls = _read_task_columns(path, f, schema, _REST)
    for c in (*TASK_RESOURCES, *TASK_FLEX):
        _no_nulls(file, c, nulls)
        a = cols.pop(c)
        _check_values(a, c, file)
        out[c] = a
    for c in TASK_FLAGS:
        _no_nulls(file, c, nulls)
        out[c] = cols.pop(c)
    _check_flexibility(out, file)
    return out


def _no_nulls(file: str, c: str, nulls: dict) -> None:
    """What _read_parquet raises for a column with nulls (``nulls``: :func:`_read_task_columns`'s)."""
    if c in nulls:
        k, rows = nulls[c]
        raise BundleError(f"{k} null value(s)", file=file, column=c, rows=rows, values=[None] * len(rows))


#: the task columns read after arrival and ``task_id``
_REST = {c: TASKS_TABLE.polars_schema()[c] for c in (*TASK_RESOURCES, *TASK_FLEX, *TASK_FLAGS)}


def _check_unique_ids(ids: np.ndarray, file: str, *, in_place: bool) -> None:
    """Refuse ids that are not unique (naming up to five of the repeated values). Sorted, not hashed: a copy of the
    ids at most (none with ``in_place``, for a caller that drops them: their order is lost), so that a bundle of
    hundreds of millions of tasks is checked within a bounded peak (a hash set holds 2-3 times the ids)."""
    s = ids if in_place else ids.copy()
    s.sort()
    dup = s[1:] == s[:-1]
    if dup.any():
        raise BundleError("task_id is not unique", file=file, column="task_id",
                          values=np.unique(s[1:][dup])[:5].tolist())


def _read_arrival_and_ids(root: Path, header: Header, *, keep_ids: bool = True
                          ) -> tuple[Any, dict[str, pl.DataType], dict[str, np.ndarray]]:
    """The tasks file opened (:func:`_open_tasks`) and its arrivals (s since the start) and ids, checked: no nulls,
    every arrival in the bundle's window and in order, the ids unique (``keep_ids=False``: the ids are not
    returned, and checked in place)."""
    path = root / TASKS
    file = str(path)
    schema_of = TASKS_TABLE.polars_schema()
    first = {c: schema_of[c] for c in ("arrival_ts_utc", "task_id")}
    f, schema = _open_tasks(path)
    cols, nulls = _read_task_columns(path, f, schema, first)
    t0 = int(header.start_utc.timestamp()) * 1_000_000
    _no_nulls(file, "arrival_ts_utc", nulls)
    arr_us = cols.pop("arrival_ts_utc")
    end = t0 + header.n_steps * STEP_S * 1_000_000
    outside = (arr_us < t0) | (arr_us >= end)
    if outside.any():
        r = np.flatnonzero(outside)[:5]
        window = f"[{header.start_utc.isoformat()}, +{header.n_steps} steps)"
        raise BundleError(f"arrival outside the bundle window {window}", file=file, column="arrival_ts_utc",
                          rows=r.tolist(),
                          values=[str(dt.datetime.fromtimestamp(int(x) / 1e6, dt.UTC)) for x in arr_us[r]])
    del outside
    if arr_us.size > 1:
        back = arr_us[1:] < arr_us[:-1]  # np.diff would hold a second int64 column
        if back.any():
            r = np.flatnonzero(back)[:5] + 1
            raise BundleError("rows are not sorted by arrival_ts_utc", file=file, column="arrival_ts_utc",
                              rows=r.tolist(), values=[str(x) for x in arr_us[r]])
        del back
    # seconds from the start, (arr_us - t0) as float64 / 1e6, written over the int64 buffer block by
    # block (each block read before it is overwritten): no second column
    arrival_s = arr_us.view(np.float64)
    for i in range(0, arr_us.shape[0], 1 << 20):
        arrival_s[i:i + (1 << 20)] = (arr_us[i:i + (1 << 20)] - t0).astype(np.float64) / 1e6
    out = {"arrival_s": arrival_s}
    del arr_us
    _no_nulls(file, "task_id", nulls)
    ids = cols.pop("task_id")
    _check_unique_ids(ids, file, in_place=not keep_ids)
    if keep_ids:
        out["task_id"] = ids
    return f, schema, out


class TaskRows:
    """The task columns of a bundle's tasks file other than its arrivals and ids, read by Parquet row group as a run
    asks for rows (:meth:`take`), so that a year of them is never held whole: every row group is checked as
    :func:`read_tasks` checks the whole file when the file is opened (:func:`open_tasks`, :meth:`check_group`),
    and each column read again is checked again (nulls, finiteness, bounds)."""

    def __init__(self, path: Path, f: Any):
        self.path, self._f = path, f
        sizes = [f.metadata.row_group(i).num_rows for i in range(f.num_row_groups)]
        self.starts = np.concatenate([[0], np.cumsum(sizes, dtype=np.int64)])
        self._split: tuple[np.ndarray, list] | None = None  # (rows, [(group, positions, rows in the group)])

    def _read(self, k: int, columns: list[str]) -> dict[str, np.ndarray]:
        """Columns ``columns`` of row group ``k``, with no nulls and each within its bounds."""
        file = str(self.path)
        df = _row_group(self._f, k, columns, file)
        off = int(self.starts[k])
        out = {}
        for c in columns:
            k_null = df[c].null_count()
            if k_null:
                rows = (off + np.flatnonzero(df[c].is_null().to_numpy())[:5]).tolist()
                raise BundleError(f"{k_null} null value(s)", file=file, column=c, rows=rows, values=[None] * len(rows))
            out[c] = df[c].to_numpy()
            if c in _REST and c not in TASK_FLAGS:
                _check_values(out[c], c, file, rows=np.arange(off, off + df.height))
        return out

    def check_group(self, k: int) -> tuple[int, int]:
        """Check row group ``k`` whole (:func:`read_tasks`'s checks); its interruptible and elastic tasks."""
        g = self._read(k, list(_REST))
        _check_flexibility(g, str(self.path), rows=np.arange(int(self.starts[k]), int(self.starts[k + 1])))
        return int(g["interruptible"].sum()), int((g["max_scale"] > 1.0).sum())

    def take(self, name: str, rows: np.ndarray) -> np.ndarray:
        """Column ``name`` at file rows ``rows`` (any order; the split of ``rows`` by row group is kept for the next
        column asked for the same rows)."""
        if not len(rows):  # (a chunk in which no task arrives)
            return np.empty(0, _dtype(name))
        if self._split is None or self._split[0] is not rows:
            r = np.asarray(rows, dtype=np.int64)
            g = np.searchsorted(self.starts, r, side="right") - 1
            order = np.argsort(g, kind="stable")
            ks, first = np.unique(g[order], return_index=True)
            ends = [*first[1:], order.shape[0]]
            self._split = (rows, [(int(k), order[a:b], r[order[a:b]] - self.starts[k])
                                  for k, a, b in zip(ks, first, ends, strict=True)])
        out = np.empty(len(rows), _dtype(name))
        for k, pos, local in self._split[1]:
            out[pos] = self._read(k, [name])[name][local]
        return out


def _dtype(name: str) -> np.dtype:
    """The array dtype of task column ``name`` (:func:`read_tasks`'s)."""
    return np.dtype(np.int64 if name == "task_id" else np.bool_ if name in TASK_FLAGS else np.float64)


class TaskColumn:
    """One task column of a :class:`TaskRows`, indexed by file rows like the array it stands for."""

    def __init__(self, rows: TaskRows, name: str):
        self._rows, self.name = rows, name
        self.shape = (int(rows.starts[-1]),)
        self.dtype = _dtype(name)

    def __getitem__(self, rows) -> np.ndarray:
        return self._rows.take(self.name, rows)


def open_tasks(root: Path, header: Header) -> tuple[dict[str, Any], int, int]:
    """The task columns as :func:`read_tasks` gives them, the arrivals as an array and the rest (the ids too, once
    checked unique) as :class:`TaskColumn` read on demand, after every row group has been checked as
    :func:`read_tasks` checks them; and the counts of interruptible and elastic tasks
    (``manifest_params.check_count_values``)."""
    f, schema, out = _read_arrival_and_ids(root, header, keep_ids=False)
    _check_schema(root / TASKS, list(_REST), _REST, schema)
    rows = TaskRows(root / TASKS, f)
    n_int = n_el = 0
    for k in range(f.num_row_groups):
        i, e = rows.check_group(k)
        n_int += i
        n_el += e
    out.update({c: TaskColumn(rows, c) for c in ("task_id", *_REST)})
    return out, n_int, n_el


def _check_flexibility(t: dict[str, np.ndarray], file: str, *, rows: np.ndarray | None = None) -> None:
    """A checkpoint overhead only on a task that can be paused or rescaled (anything else is a column
    mix-up: the engine could never charge it)."""
    flexible = t["interruptible"] | (t["min_scale"] < 1.0) | (t["max_scale"] > 1.0)
    bad = (t["checkpoint_s"] > 0.0) & ~flexible
    if bad.any():
        r, v = _first_bad(bad, t["checkpoint_s"])
        raise BundleError(f"{int(bad.sum())} task(s) with a checkpoint overhead that are neither interruptible nor "
                          "elastic (min_scale = max_scale = 1)", file=file, column="checkpoint_s",
                          rows=(rows[r].tolist() if rows is not None else r), values=v)


def read_network(root: Path, header: Header) -> dict[str, np.ndarray]:
    path = root / NETWORK
    file = str(path)
    dtypes = NETWORK_TABLE.polars_schema()
    df = _read_parquet(path, list(dtypes), dtypes)
    idx = {code: i for i, code in enumerate(header.locations)}
    n_dc = header.n_dc
    src = df["src_location"].replace_strict(idx, default=-1, return_dtype=pl.Int64).to_numpy()
    dst = df["dst_location"].replace_strict(idx, default=-1, return_dtype=pl.Int64).to_numpy()
    keep = (src >= 0) & (dst >= 0)  # rows for locations outside the bundle are ignored
    rows = np.flatnonzero(keep)
    pair = src[keep] * n_dc + dst[keep]
    counts = np.bincount(pair, minlength=n_dc * n_dc)
    if (counts != 1).any():
        k = int(np.flatnonzero(counts != 1)[0])
        a, b = header.locations[k // n_dc], header.locations[k % n_dc]
        raise BundleError(f"the pair {a} -> {b} appears {int(counts[k])} times (every ordered pair exactly once)",
                          file=file, column="src_location")
    out = {}
    for c in NETWORK_VALUES:
        v = df[c].to_numpy()[keep]
        _check_values(v, c, file, rows=rows)
        m = np.empty(n_dc * n_dc)
        m[pair] = v
        out[c] = np.ascontiguousarray(m.reshape(n_dc, n_dc))
    return out


def read_content(root: Path, manifest: dict[str, Any], tasks: bool = True, *,
                 lazy_tasks: bool = False) -> BundleContent:
    """Read and check every file of a bundle whose integrity was verified; ``tasks=False``: all but the tasks (their
    file's bytes were still verified), for a reader that leaves the tasks to each run (``tasks`` is then None);
    ``lazy_tasks``: the task columns other than arrivals are read on demand (:func:`open_tasks`), not held whole."""
    root = Path(root)
    header = read_header(manifest, str(root / MANIFEST))
    n_tasks = check_bundle_sizes(root, header.n_dc, header.n_steps)
    if tasks and not lazy_tasks:
        BUNDLE.tasks_whole.check(n_tasks, file=str(root / TASKS), what="the number of tasks to hold whole",
                                 error=BundleError)
    datacenters, signals = read_datacenters(root, header), read_signals(root, header)
    if not tasks:
        tasks = None
    elif lazy_tasks:
        tasks, n_int, n_el = open_tasks(root, header)
        check_count_values(manifest, int(tasks["task_id"].shape[0]), n_int, n_el, str(root / MANIFEST))
    else:
        tasks = read_tasks(root, header)
        check_counts(manifest, tasks, str(root / MANIFEST))
    return BundleContent(root=root, manifest=manifest, header=header, datacenters=datacenters, signals=signals,
                         tasks=tasks, network=read_network(root, header))
