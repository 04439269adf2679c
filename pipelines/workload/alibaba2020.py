"""Alibaba PAI GPU cluster trace 2020 (cluster-trace-gpu-v2020, CC-BY-4.0).

The trace ships headerless CSVs inside ``*.tar.gz``; the column names are those of the
``*.header`` files next to them (``alibaba/gpu-v2020/`` in the mirror). Read straight from the
tar.gz bytes — nothing is unpacked to disk. Units: times in seconds from the trace origin,
``plan_cpu`` in percent of a core (600 = 6 cores), ``plan_gpu`` in percent of a GPU (50 = half a
GPU), ``plan_mem`` in GB; the requests are per instance (a task runs ``inst_num`` instances).

Sources, in order (:func:`fetch_table`): a trace folder (``--trace-dir``), the mirror's
``alibaba/gpu-v2020/``, then, with ``live``, the trace's public download location
(``GRIDSHIFT_ALIBABA_URL``, default :data:`DEFAULT_URL`, the Aliyun OSS bucket named in the trace's
README). A live download goes through :func:`pipelines.core.http.download` and is verified against
the sha256 the trace's README publishes for each archive (:data:`PUBLISHED_SHA256`;
``GRIDSHIFT_ALIBABA_SHA256SUMS`` names a ``sha256sum``-format file whose entries replace those for
the files it lists, e.g. a mirror serving re-packed archives, or ``none`` to ignore the published
table). A file with no known checksum has its size and sha256 recorded at its first download
(``<home>/http_cache/alibaba-2020/downloads.json``) and verified on every reuse. The archives are
large (task 34 MB, job 60 MB), so they bypass the SQLite HTTP cache: once an ingest has landed
them (``raw/alibaba-2020/<sha256>``), a later run reads the landed file, checks its sha256, and
makes no request.

Structural faults fail the whole file with a :class:`DataError` naming the file and line: a line
with the wrong number of fields, or a time that is not a number. Row faults never crash the load
and are never silently dropped: a duplicated task row (same job and task name; the first is kept)
or a row without a job name is counted per reason, and an unparseable resource value becomes null
and is counted (the derivation then drops the row under a named reason).
"""

from __future__ import annotations

import io
import json
import os
import re
import tarfile
from pathlib import Path

import numpy as np
import polars as pl
import requests

from gridshift.atomic import atomic_write_bytes
from gridshift.errors import DataError, SourceUnavailableError
from gridshift.hashing import sha256_bytes
from gridshift.home import Home, safe_join
from gridshift.limits import UNPACKED_BYTES
from pipelines.core.raw import RawFile, read_local, read_mirror
from pipelines.core.redact import redact_uri
from pipelines.workload.base import Inputs, ParsedTrace, TraceInput, WorkloadSource
from pipelines.workload.derive import DeriveParams, Histogram

SOURCE = "alibaba-2020"
MIRROR_DIR = "alibaba/gpu-v2020"

# Verbatim from the trace's ``*.header`` files (a test checks them against the mirror).
TASK_COLUMNS = ["job_name", "task_name", "inst_num", "status", "start_time", "end_time", "plan_cpu",
                "plan_mem", "plan_gpu", "gpu_type"]
JOB_COLUMNS = ["job_name", "inst_id", "user", "status", "start_time", "end_time"]
MACHINE_COLUMNS = ["machine", "gpu_type", "cap_cpu", "cap_mem", "cap_gpu"]
TABLES = {
    "task": ("pai_task_table.tar.gz", TASK_COLUMNS),
    "job": ("pai_job_table.tar.gz", JOB_COLUMNS),
    "machine": ("pai_machine_spec.tar.gz", MACHINE_COLUMNS),
}

TRACE_TASKS_COLUMNS = [
    "source", "raw_sha256", "task_key", "line", "job_name", "task_name", "inst_num", "status", "arrival_s",
    "start_s", "end_s", "cpu_cores_per_inst", "gpus_per_inst", "mem_gb_per_inst", "gpu_type", "job_status",
    "job_user",
]


# --------------------------------------------------------------------------- fetch
URL_ENV = "GRIDSHIFT_ALIBABA_URL"
SUMS_ENV = "GRIDSHIFT_ALIBABA_SHA256SUMS"
# The public download location given in cluster-trace-gpu-v2020/README.md and data/README.md of
# https://github.com/alibaba/clusterdata (Aliyun OSS; the repository's own LFS copies are over quota).
DEFAULT_URL = "https://aliopentrace.oss-cn-beijing.aliyuncs.com/v2020GPUTraces"
# sha256 of each archive as published in cluster-trace-gpu-v2020/README.md ("Checksum"). The mirror's
# pai_machine_spec.tar.gz has this digest (a test checks it).
PUBLISHED_SHA256 = {
    "pai_group_tag_table.tar.gz": "722fef30b7fb7aa50dabd79155614b5423a9d65cf45a9b26c590d57725423a14",
    "pai_instance_table.tar.gz": "1bf1e423a7ce3f8d086699801c362fd56a7182abdb234139e5ebbed97995ca06",
    "pai_job_table.tar.gz": "5aad7f7caac501136d14ed6a48e40546f825d7b0617a3a4f337e2348fe0a6cb0",
    "pai_machine_metric.tar.gz": "53ad917193d3b1dd0f3055e723148b1f36c2f81789b014ea2930a7875892eef5",
    "pai_machine_spec.tar.gz": "cc0d38a4045af1b1af8179de8b1b54b1ddd995e6160d6d061a6b1000f1276c2d",
    "pai_sensor_table.tar.gz": "9a0b82e8bdf3949281e4ba1423d9b4b34847e52799eecb138966de46da69c7a0",
    "pai_task_table.tar.gz": "cd1d6dc3215d2a8607ccf6b6dd952b5db776df86926c73259fea7c1499ac40e5",
}
_SUMS_LINE = re.compile(r"^([0-9a-fA-F]{64})\s+\*?(\S+)$")


def base_url() -> str:
    return (os.environ.get(URL_ENV, "").strip() or DEFAULT_URL).rstrip("/")


def how_to(name: str) -> str:
    """How a user can provide one trace archive (for error messages)."""
    return (f"put {name} in --trace-dir DIR (download it from {DEFAULT_URL}/{name}), or in a mirror's "
            f"{MIRROR_DIR}/, or pass --live to download it ({URL_ENV}, default {DEFAULT_URL})")


def expected_sha256() -> dict[str, str]:
    """The checksums a live download must match: the published table, with ``GRIDSHIFT_ALIBABA_SHA256SUMS``'s
    entries replacing it for the files they name (``none``: no published checksums at all)."""
    spec = os.environ.get(SUMS_ENV, "").strip()
    if spec.lower() == "none":
        return {}
    sums = dict(PUBLISHED_SHA256)
    if spec:
        try:
            lines = Path(spec).expanduser().read_text(encoding="utf-8").splitlines()
        except OSError as exc:
            raise SourceUnavailableError(f"{SOURCE}: cannot read {SUMS_ENV}={spec}: {exc}") from None
        for n, line in enumerate(lines, 1):
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            m = _SUMS_LINE.match(line.strip())
            if not m:
                raise SourceUnavailableError(f"{SOURCE}: {spec} line {n} is not '<sha256>  <file>': {line[:80]!r}")
            sums[m.group(2)] = m.group(1).lower()
    return sums


def _records_path(home: Home) -> Path:
    return home.http_cache_path / SOURCE / "downloads.json"


def _records(home: Home) -> dict[str, dict]:
    try:
        return json.loads(_records_path(home).read_text(encoding="utf-8"))
    except FileNotFoundError:
        return {}
    except (OSError, ValueError) as exc:
        raise SourceUnavailableError(f"{SOURCE}: unreadable download record {_records_path(home)}: {exc}") from None


def _record(home: Home, name: str, raw: RawFile) -> None:
    recs = _records(home)
    recs[name] = {"sha256": raw.sha256, "bytes": len(raw.content), "url": raw.uri,
                  "recorded_at": raw.fetched_at.isoformat(timespec="seconds")}
    atomic_write_bytes(_records_path(home), json.dumps(recs, indent=1, sort_keys=True).encode())


def _landed(home: Home, sha256: str) -> Path:
    # the layout of pipelines.raw.landed_relpath: raw/<source>/<sha[:2]>/<sha>
    return home.root / "raw" / SOURCE / sha256[:2] / sha256


def fetch_live(table: str, *, home: Home, session: requests.Session | None = None) -> RawFile:
    """One trace archive from ``GRIDSHIFT_ALIBABA_URL``: the landed copy if its sha256 is known and it is
    on disk (no request), else a checked download (see the module docstring for the checksums)."""
    from pipelines.core import http

    name = TABLES[table][0]
    url = f"{base_url()}/{name}"
    what = f"{SOURCE}: {redact_uri(url)}"
    sha = expected_sha256().get(name)
    basis = "published checksum" if sha and sha == PUBLISHED_SHA256.get(name) else f"checksum from {SUMS_ENV}"
    size = None
    if sha is None and name in (rec := _records(home)):
        sha, size, basis = rec[name]["sha256"], rec[name]["bytes"], f"recorded at first download ({rec[name]['url']})"
    if sha is not None:
        landed = _landed(home, sha)
        if landed.is_file():
            content = read_local(landed, SOURCE, uri=url).content
            got = sha256_bytes(content)
            if got != sha or (size is not None and len(content) != size):
                raise http.DownloadError(f"{what}: landed copy {landed} does not match its {basis} "
                                         f"(sha256 {got}, expected {sha}); remove it to download again")
            return RawFile(source=SOURCE, uri=url, content=content)
    own = session is None
    session = session or http.make_session(home)
    try:
        # the archives are tens of MB: keep them out of the SQLite cache (the landed copy is the cache)
        with session.cache_disabled():
            try:
                raw = http.download(session, url, source=SOURCE, expect=http.Expect(sha256=sha, kind="gzip"))
            except http.DownloadError as exc:
                if sha is not None and "checksum mismatch" in str(exc):
                    raise http.DownloadError(f"{exc} ({basis})") from None
                raise
    finally:
        if own:
            session.close()
    if size is not None and len(raw.content) != size:
        raise http.DownloadError(f"{what}: {len(raw.content)} bytes, {basis} says {size}; nothing landed")
    try:
        extract_csv(raw)  # a gzip that is not the trace's one-CSV tar is refused before anything is recorded
    except DataError as exc:
        raise http.DownloadError(f"{what}: not the trace's tar.gz ({exc}); nothing landed") from None
    if sha is None:
        _record(home, name, raw)
    return raw


def fetch_table(
    table: str, *, trace_dir: Path | None = None, mirror: Path | None = None, live: bool = False,
    home: Home | None = None, session: requests.Session | None = None,
) -> RawFile:
    """The raw ``.tar.gz`` of one trace table. Source order: ``trace_dir`` (a folder holding the
    trace's files) → the mirror's ``alibaba/gpu-v2020/`` → the live download (``live``). When none can
    provide it, ``SourceUnavailableError`` names every source tried and how to provide the file."""
    name = TABLES[table][0]
    tried: list[str] = []
    if trace_dir is not None:
        path = safe_join(Path(trace_dir), name)
        if path.is_file():
            return read_local(path, SOURCE)
        tried.append(f"{name} not found in trace dir {trace_dir} (looked for {path})")
    if mirror is not None:
        try:
            return read_mirror(mirror, f"{MIRROR_DIR}/{name}", SOURCE)
        except SourceUnavailableError as exc:
            tried.append(str(exc).removeprefix(f"{SOURCE}: "))
    if trace_dir is None and mirror is None:
        tried.append("no --trace-dir and no mirror given")
    if not live:
        raise SourceUnavailableError(f"{SOURCE}: {name} is unavailable: " + "; ".join(tried)
                                     + f"; live download is off. To provide it: {how_to(name)}")
    try:
        return fetch_live(table, home=home or Home.resolve(), session=session)
    except SourceUnavailableError as exc:
        raise SourceUnavailableError(f"{SOURCE}: {name} is unavailable: " + "; ".join([*tried, f"live: {exc}"])
                                     + f". To provide it: {how_to(name)}") from None


# --------------------------------------------------------------------------- read
def extract_csv(raw: RawFile) -> tuple[str, bytes]:
    """The one ``.csv`` member of a tar.gz, read in memory. Returns (file label, bytes).

    A member whose header claims more than :data:`gridshift.limits.UNPACKED_BYTES` is refused as its
    header is read, before anything is decompressed past it (a small archive can claim gigabytes)."""
    try:
        with tarfile.open(fileobj=io.BytesIO(raw.content), mode="r:gz") as tf:
            members = []
            for m in tf:  # headers one at a time: each size checked before the reader skips its data
                if m.isfile() and m.name.endswith(".csv"):
                    UNPACKED_BYTES.check(m.size, file=f"{raw.uri}!{m.name}", what="the unpacked member")
                    members.append(m)
            if len(members) != 1:
                raise DataError(
                    f"expected exactly one .csv member in the archive, found {[m.name for m in members]}",
                    file=raw.uri,
                )
            fh = tf.extractfile(members[0])
            assert fh is not None
            return f"{raw.uri}!{members[0].name}", fh.read()
    except (tarfile.TarError, OSError, EOFError) as exc:
        raise DataError(f"not a readable tar.gz archive: {exc}", file=raw.uri) from None


def check_field_counts(content: bytes, n_columns: int, file: str) -> int:
    """Refuse any line whose number of fields is not ``n_columns``; return the number of lines.

    Vectorized over the bytes (commas between newlines); the trace has no quoted fields.
    """
    buf = np.frombuffer(content, dtype=np.uint8)
    if buf.size == 0:
        return 0
    nl = np.flatnonzero(buf == 10)
    if buf[-1] != 10:
        nl = np.append(nl, buf.size)  # last line without a newline
    ends = nl
    starts = np.concatenate([[0], nl[:-1] + 1])
    # commas per line from the commas' positions (one int64 per comma, ~the file's size for the trace's
    # short fields): a running count over the bytes (an int64 per byte) would take eight times the file
    commas = np.flatnonzero(buf == 44)
    per_line = np.searchsorted(commas, ends) - np.searchsorted(commas, starts)
    bad = np.flatnonzero(per_line != n_columns - 1)
    if bad.size:
        lines = (bad + 1).tolist()
        values = [content[starts[i]:ends[i]].decode("utf8", "replace")[:80] for i in bad[:10]]
        raise DataError(
            f"{bad.size} line(s) do not have {n_columns} comma-separated fields "
            f"(first has {int(per_line[bad[0]]) + 1})",
            file=file, rows=lines, values=values,
        )
    return int(nl.size)


def read_headerless(raw: RawFile, columns: list[str]) -> tuple[pl.DataFrame, str]:
    """Read a headerless trace table as text columns plus ``line`` (1-based line in the CSV)."""
    file, content = extract_csv(raw)
    if b'"' in content:
        raise DataError("quoted fields are not part of this trace's format", file=file)
    n = check_field_counts(content, len(columns), file)
    if n == 0:
        return pl.DataFrame(schema={c: pl.String for c in columns} | {"line": pl.Int64}), file
    try:
        df = pl.read_csv(io.BytesIO(content), has_header=False, new_columns=columns, infer_schema=False)
    except Exception as exc:  # polars raises several types for malformed CSV
        raise DataError(f"cannot parse CSV: {exc}", file=file) from None
    if df.height != n:
        raise DataError(f"read {df.height} rows but the file has {n} lines", file=file)
    return df.with_columns(line=pl.int_range(1, df.height + 1, dtype=pl.Int64)), file


def parse_number(df: pl.DataFrame, col: str, file: str, *, strict: bool) -> tuple[pl.Series, int]:
    """Text → Float64. Empty or NaN → null. Non-numeric text: DataError (``strict``, with the
    lines) or null and counted. Returns (values, number of unparseable values)."""
    txt = df[col].str.strip_chars()
    val = txt.cast(pl.Float64, strict=False)
    bad = val.is_null() & txt.is_not_null() & (txt != "")
    n_bad = int(bad.sum())
    if n_bad and strict:
        rows = df.filter(bad)
        raise DataError(
            f"{n_bad} value(s) are not numbers (seconds from the trace origin)",
            file=file, column=col, rows=rows["line"].head(10).to_list(), values=rows[col].head(10).to_list(),
        )
    return val.fill_nan(None), n_bad


def _text(s: pl.Series) -> pl.Series:
    """Stripped text; empty → null."""
    return s.str.strip_chars().replace("", None)


def dedupe(df: pl.DataFrame, key: str, dropped: dict[str, int], reason: str = "duplicate_task") -> pl.DataFrame:
    """Keep the first row (lowest line) per key; count the others."""
    first = df.sort("line").filter(pl.col(key).is_first_distinct())
    dropped[reason] = df.height - first.height
    return first


def parse_task_table(raw: RawFile) -> ParsedTrace:
    """``pai_task_table`` → ``trace_tasks`` rows (per-instance requests in cores, GPUs, GB)."""
    df, file = read_headerless(raw, TASK_COLUMNS)
    dropped: dict[str, int] = {}
    issues: dict[str, int] = {}
    start, _ = parse_number(df, "start_time", file, strict=True)
    end, _ = parse_number(df, "end_time", file, strict=True)
    res = {}
    for col in ("inst_num", "plan_cpu", "plan_mem", "plan_gpu"):
        res[col], n_bad = parse_number(df, col, file, strict=False)
        if n_bad:
            issues[f"unparseable_{col}"] = n_bad
    inst = res["inst_num"]
    inst_ok = inst.is_null() | ((inst == inst.round()) & (inst.abs() < 2**53))
    if not inst_ok.all():
        issues["unparseable_inst_num"] = issues.get("unparseable_inst_num", 0) + int((~inst_ok).sum())
    out = pl.DataFrame({
        "line": df["line"],
        "job_name": _text(df["job_name"]),
        "task_name": _text(df["task_name"]),
        "inst_num": pl.select(pl.when(inst_ok).then(inst)).to_series().cast(pl.Int64),
        "status": _text(df["status"]),
        "arrival_s": start,
        "start_s": start,
        "end_s": end,
        "cpu_cores_per_inst": res["plan_cpu"] / 100.0,
        "gpus_per_inst": res["plan_gpu"] / 100.0,
        "mem_gb_per_inst": res["plan_mem"],
        "gpu_type": _text(df["gpu_type"]),
    }).with_columns(
        source=pl.lit(SOURCE, dtype=pl.String),
        raw_sha256=pl.lit(raw.sha256, dtype=pl.String),
        task_key=pl.concat_str([pl.col("job_name"), pl.lit("/"), pl.col("task_name").fill_null("")]),
        job_status=pl.lit(None, dtype=pl.String),
        job_user=pl.lit(None, dtype=pl.String),
    )
    no_key = out.filter(pl.col("job_name").is_null())
    dropped["missing_job_name"] = no_key.height
    out = dedupe(out.filter(pl.col("job_name").is_not_null()), "task_key", dropped)
    return ParsedTrace(out.select(TRACE_TASKS_COLUMNS), df.height, dropped, issues, file)


def parse_job_table(raw: RawFile) -> tuple[pl.DataFrame, dict[str, int]]:
    """``pai_job_table`` → (job_name, job_user, job_status, job_start_s, job_end_s), one row per job."""
    df, file = read_headerless(raw, JOB_COLUMNS)
    start, _ = parse_number(df, "start_time", file, strict=True)
    end, _ = parse_number(df, "end_time", file, strict=True)
    jobs = pl.DataFrame({
        "job_name": _text(df["job_name"]), "job_user": _text(df["user"]), "job_status": _text(df["status"]),
        "job_start_s": start, "job_end_s": end, "line": df["line"],
    }).filter(pl.col("job_name").is_not_null())
    counts: dict[str, int] = {"job_rows": df.height}
    jobs = dedupe(jobs, "job_name", counts, "duplicate_job")
    return jobs.drop("line"), counts


def attach_jobs(parsed: ParsedTrace, jobs: pl.DataFrame) -> ParsedTrace:
    """Fill ``job_user`` and ``job_status`` from the job table; count tasks whose job is absent."""
    t = parsed.tasks.drop("job_user", "job_status").join(
        jobs.select("job_name", "job_user", "job_status"), on="job_name", how="left", maintain_order="left"
    )
    missing = int(t.filter(pl.col("job_user").is_null() & pl.col("job_status").is_null()).height)
    issues = dict(parsed.issues)
    issues["task_without_job"] = missing
    return ParsedTrace(t.select(TRACE_TASKS_COLUMNS), parsed.n_rows, parsed.dropped, issues, parsed.file)


def parse_machine_spec(raw: RawFile) -> pl.DataFrame:
    """``pai_machine_spec`` → (machine, gpu_type, cap_cpu_cores, cap_mem_gb, cap_gpus)."""
    df, file = read_headerless(raw, MACHINE_COLUMNS)
    out = {"machine": _text(df["machine"]), "gpu_type": _text(df["gpu_type"])}
    for col, name in (("cap_cpu", "cap_cpu_cores"), ("cap_mem", "cap_mem_gb"), ("cap_gpu", "cap_gpus")):
        out[name], _ = parse_number(df, col, file, strict=True)
    return pl.DataFrame(out)


def trace_frame(trace_tasks: pl.DataFrame) -> pl.DataFrame:
    """The columns the derivation reads (``workload_derive.TRACE_FRAME_COLUMNS``)."""
    return trace_tasks.select(
        source_line=pl.col("line"), status="status", inst_num="inst_num", arrival_s="arrival_s", start_s="start_s",
        end_s="end_s", cpu_cores_per_inst="cpu_cores_per_inst", gpus_per_inst="gpus_per_inst",
        mem_gb_per_inst="mem_gb_per_inst", gpu_type="gpu_type",
    )


class Alibaba2020(WorkloadSource):
    """The PAI 2020 task and job tables (trace folder → mirror → live download)."""

    name = SOURCE

    def load(self, year: int, base: DeriveParams, *, seed: int, load_factor: float, inputs: Inputs,
             histograms: dict[str, Histogram] | None) -> TraceInput:
        src = {"trace_dir": inputs.trace_dir, "mirror": inputs.mirror, "live": inputs.live, "home": inputs.home}
        task_raw = fetch_table("task", **src)
        job_raw = fetch_table("job", **src)
        jobs, job_counts = parse_job_table(job_raw)
        parsed = attach_jobs(parse_task_table(task_raw), jobs)
        return TraceInput(base.with_(seed=seed, load_factor=load_factor), trace_raw=task_raw, parsed=parsed,
                          others=[job_raw], extra={"job_table": job_counts})


TRACE = Alibaba2020()
