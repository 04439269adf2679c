"""PAI 2020 trace, live: checksummed download from a loopback fake of the trace's public bucket.

The fake serves small archives in the trace's real format: headerless CSVs (columns in the order of
the mirror's ``*.header`` files) inside ``.tar.gz``, built from the workload tests' fixture rows, and
the real ``pai_machine_spec.tar.gz`` from the mirror (whose digest is the published one).
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gridshift.errors import SourceUnavailableError
from gridshift.home import Home
from gridshift_cli import app
from pipelines.workload import alibaba2020
from pipelines.workload.derive import DeriveParams
from tests.integration.pipelines.workload.workload_fixture import (
    EXPECTED_DROPPED,
    JOB_ROWS,
    TASK_ROWS,
    csv_lines,
    tar_gz,
    write_trace,
)
from warehouse.db import read_table
from warehouse.ingest_workload import ingest_workload

TASK, JOB, SPEC = "pai_task_table.tar.gz", "pai_job_table.tar.gz", "pai_machine_spec.tar.gz"


def _sha(b: bytes) -> str:
    return hashlib.sha256(b).hexdigest()


def _files(root: Path) -> list[Path]:
    return sorted(p for p in root.rglob("*") if p.is_file()) if root.exists() else []


@pytest.fixture
def trace(fake, shared_data, tmp_path, monkeypatch):
    """The fake bucket holds task, job and machine-spec archives; a sums file names the fixture's digests."""
    hdr = shared_data / "alibaba" / "gpu-v2020"
    assert (hdr / "pai_task_table.header").read_text().strip().split(",") == alibaba2020.TASK_COLUMNS
    assert (hdr / "pai_job_table.header").read_text().strip().split(",") == alibaba2020.JOB_COLUMNS
    assert all(len(r) == len(alibaba2020.TASK_COLUMNS) for r in TASK_ROWS)
    files = {TASK: tar_gz("pai_task_table.csv", csv_lines(TASK_ROWS)),
             JOB: tar_gz("pai_job_table.csv", csv_lines(JOB_ROWS)),
             SPEC: (hdr / SPEC).read_bytes()}
    fake.state.files.update(files)
    sums = tmp_path / "SHA256SUMS"
    sums.write_text(f"# the fixture's archives\n{_sha(files[TASK])}  {TASK}\n{_sha(files[JOB])}  *{JOB}\n")
    monkeypatch.setenv("GRIDSHIFT_ALIBABA_SHA256SUMS", str(sums))
    return files


def _ingest(home: Home, mirror: Path | None, **kw):
    return ingest_workload("alibaba-2020", 2023, home=home, mirror=mirror, params=DeriveParams(week_order="cycle"),
                           **kw)


def test_live_download_checksummed_landed_and_reused_without_requests(fake, trace, shared_data, tmp_path):
    home = Home(tmp_path / "home")
    rep = _ingest(home, shared_data, live=True)  # the mirror has no task/job table: live
    assert (rep.n_source_rows, rep.n_kept, rep.dropped) == (20, 5, EXPECTED_DROPPED)
    assert fake.state.count("/files/") == 2
    url = f"{fake.url}/files"
    raw = dict(read_table(home.warehouse_path, "SELECT uri, sha256 FROM raw_files WHERE source = ?",
                          [alibaba2020.SOURCE]).iter_rows())
    assert raw == {f"{url}/{TASK}": _sha(trace[TASK]), f"{url}/{JOB}": _sha(trace[JOB])}
    for name in (TASK, JOB):  # landed by hash, read-only
        p = home.root / "raw" / alibaba2020.SOURCE / _sha(trace[name])[:2] / _sha(trace[name])
        assert p.read_bytes() == trace[name]
    # the same rows as from a trace folder holding the same files
    ref_home = Home(tmp_path / "ref")
    ref_dir = tmp_path / "trace"
    ref_dir.mkdir()
    for name in (TASK, JOB):  # the very bytes served (a new tar.gz would carry another gzip mtime)
        (ref_dir / name).write_bytes(trace[name])
    _ingest(ref_home, shared_data, trace_dir=ref_dir)
    for q in ("SELECT * EXCLUDE (created_at) FROM workload_runs",
              "SELECT * FROM workload_tasks ORDER BY arrival_ts_utc, task_id"):
        assert read_table(home.warehouse_path, q).equals(read_table(ref_home.warehouse_path, q))
    # second run: the landed copies are verified and reused; no request at all
    rep2 = _ingest(home, shared_data, live=True)
    assert rep2.raw_sha256s == rep.raw_sha256s and fake.state.count() == 2
    # nothing big went into the SQLite HTTP cache
    assert sum(p.stat().st_size for p in _files(home.http_cache_path)) < 200_000


def test_trace_dir_and_mirror_come_before_live(fake, trace, shared_data, tmp_path):
    home = Home(tmp_path / "home")
    _ingest(home, shared_data, trace_dir=write_trace(tmp_path / "trace"), live=True)
    spec = alibaba2020.fetch_table("machine", mirror=shared_data, live=True, home=home)
    assert spec.uri.startswith("file://") and fake.state.count() == 0


def test_published_checksum_verifies_the_real_machine_spec(fake, trace, shared_data, tmp_path):
    home = Home(tmp_path / "home")
    assert alibaba2020.expected_sha256()[SPEC] == alibaba2020.PUBLISHED_SHA256[SPEC] == _sha(trace[SPEC])
    rf = alibaba2020.fetch_table("machine", live=True, home=home)
    assert rf.sha256 == alibaba2020.PUBLISHED_SHA256[SPEC] and alibaba2020.parse_machine_spec(rf).height > 1000
    fake.state.files[SPEC] = trace[JOB]  # a mirror serving other bytes under the name
    with pytest.raises(SourceUnavailableError, match=r"checksum mismatch .*\(published checksum\)"):
        alibaba2020.fetch_table("machine", live=True, home=Home(tmp_path / "other"))


@pytest.mark.parametrize("fault,match", [
    (("truncate",), r"(?i)truncat|incomplete|broken"),
    (("html",), "HTML page"),
    (("status", 404), "HTTP 404"),
])
def test_faulty_download_is_a_clear_error_nothing_landed(fake, trace, shared_data, tmp_path, fault, match):
    fake.state.add_fault(f"/files/{TASK}", *fault)
    home = Home(tmp_path / "home")
    with pytest.raises(SourceUnavailableError, match=match) as info:
        _ingest(home, shared_data, live=True)
    assert "alibaba-2020: pai_task_table.tar.gz is unavailable" in str(info.value)
    assert _files(home.raw_dir) == [] and not (home.http_cache_path / alibaba2020.SOURCE).exists()
    if home.warehouse_path.exists():
        assert read_table(home.warehouse_path, "SELECT count(*) FROM workload_tasks").item() == 0
    _ingest(home, shared_data, live=True)  # the next run downloads cleanly
    assert read_table(home.warehouse_path, "SELECT count(*) FROM trace_tasks").item() == 17


def test_wrong_checksum_is_refused_nothing_landed(fake, trace, shared_data, tmp_path, monkeypatch):
    sums = tmp_path / "bad-sums"
    sums.write_text(f"{'0' * 64}  {TASK}\n")
    monkeypatch.setenv("GRIDSHIFT_ALIBABA_SHA256SUMS", str(sums))
    home = Home(tmp_path / "home")
    with pytest.raises(SourceUnavailableError, match=r"checksum mismatch \(sha256 [0-9a-f]{64}, expected 0{64}\)"):
        _ingest(home, shared_data, live=True)
    assert _files(home.raw_dir) == [] and not home.warehouse_path.exists()


def test_gzip_that_is_not_the_trace_archive_is_refused(fake, trace, shared_data, tmp_path, monkeypatch):
    import gzip

    fake.state.files[TASK] = gzip.compress(b"not a tar\n")
    monkeypatch.setenv("GRIDSHIFT_ALIBABA_SHA256SUMS", "none")
    home = Home(tmp_path / "home")
    with pytest.raises(SourceUnavailableError, match="not the trace's tar.gz"):
        _ingest(home, shared_data, live=True)
    assert _files(home.raw_dir) == [] and not (home.http_cache_path / alibaba2020.SOURCE).exists()


def test_without_published_checksum_size_and_sha_recorded_then_verified(fake, trace, shared_data, tmp_path,
                                                                         monkeypatch):
    import json

    monkeypatch.setenv("GRIDSHIFT_ALIBABA_SHA256SUMS", "none")  # e.g. a mirror of re-packed archives
    home = Home(tmp_path / "home")
    _ingest(home, shared_data, live=True)
    rec = json.loads((home.http_cache_path / alibaba2020.SOURCE / "downloads.json").read_text())
    assert {k: (v["sha256"], v["bytes"]) for k, v in rec.items()} == {
        TASK: (_sha(trace[TASK]), len(trace[TASK])), JOB: (_sha(trace[JOB]), len(trace[JOB]))}
    _ingest(home, shared_data, live=True)
    assert fake.state.count() == 2  # reuse: landed copies, verified against the record
    # the landed task archive is gone and the server now answers other bytes: refused
    landed = home.root / "raw" / alibaba2020.SOURCE / _sha(trace[TASK])[:2] / _sha(trace[TASK])
    landed.chmod(0o644)
    landed.unlink()
    fake.state.files[TASK] = tar_gz("pai_task_table.csv", csv_lines(TASK_ROWS[:5]))
    with pytest.raises(SourceUnavailableError, match="recorded at first download"):
        _ingest(home, shared_data, live=True)
    # a landed copy that no longer matches is refused too, never used
    landed_job = home.root / "raw" / alibaba2020.SOURCE / _sha(trace[JOB])[:2] / _sha(trace[JOB])
    landed_job.chmod(0o644)
    landed_job.write_bytes(b"tampered")
    with pytest.raises(SourceUnavailableError, match="landed copy .* does not match"):
        alibaba2020.fetch_table("job", live=True, home=home)


def test_no_source_names_the_source_and_how_to_provide_it(fake, trace, shared_data, tmp_path):
    home = Home(tmp_path / "home")
    with pytest.raises(SourceUnavailableError) as info:
        _ingest(home, shared_data)
    msg = str(info.value)
    assert msg.startswith("alibaba-2020: pai_task_table.tar.gz is unavailable")
    assert "not found in mirror" in msg and "--trace-dir" in msg and "--live" in msg
    assert "GRIDSHIFT_ALIBABA_URL" in msg and alibaba2020.DEFAULT_URL in msg
    with pytest.raises(SourceUnavailableError, match="no --trace-dir and no mirror given"):
        alibaba2020.fetch_table("task")
    assert fake.state.count() == 0


def test_cli_ingest_workload_live_twice(fake, trace, shared_data, tmp_path):
    home = tmp_path / "home"
    args = ["ingest", "--sources", "workload", "--workload", "alibaba-2020", "--year", "2023", "--live",
            "--mirror", str(shared_data), "--home", str(home)]
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    assert "tasks in the year" in res.output and fake.state.count("/files/") == 2
    n = read_table(Home(home).warehouse_path, "SELECT count(*) FROM workload_tasks WHERE workload = 'alibaba-2020'")
    assert n.item() > 0
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    assert fake.state.count() == 2  # the second run makes no request
    res = CliRunner().invoke(app, [a for a in args if a != "--live"] + ["--home", str(tmp_path / "h2")])
    assert res.exit_code == 1 and "pai_task_table.tar.gz is unavailable" in res.output
