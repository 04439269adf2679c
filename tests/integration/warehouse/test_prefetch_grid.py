"""Grid partitions prepared ahead in a worker process (``warehouse.ingest.prefetch_grid``) are what the
serial path prepares, are never served for changed bytes, and a bad file's error is the serial one."""

from __future__ import annotations

import multiprocessing
import threading

from gridshift.home import Home
from tests.integration.helpers import mirror_with, replace_line
from warehouse.ingest import prefetch_grid, prepare_grid

PARTS = [("KR", 2023), ("SG", 2023), ("SG", 2022)]
KR = "electricitymaps/KR/KR_2023_hourly.csv"


def _same(a, b) -> None:
    assert [(p.location, p.year) for p in a.ready] == [(p.location, p.year) for p in b.ready]
    for p, q in zip(a.ready, b.ready, strict=True):
        assert p.frame.schema == q.frame.schema and p.frame.equals(q.frame)
        assert p.quality.equals(q.quality) and p.report == q.report
        assert p.raw.sha256 == q.raw.sha256


def test_prefetched_partitions_equal_the_serial_parse_and_nothing_is_left_running(tmp_path, shared_data):
    home = Home(tmp_path).ensure()
    serial = prepare_grid("carbon", PARTS, home=home, mirror=shared_data)
    threads = set(threading.enumerate())
    with prefetch_grid([("carbon", r, y) for r, y in PARTS], mirror=shared_data, chunk=2) as pf:
        ahead = prepare_grid("carbon", PARTS, home=home, mirror=shared_data)
    assert pf.stats.served + pf.stats.stolen == 3 and pf.stats.stale == pf.stats.missing == 0
    assert not serial.refused and not ahead.refused
    _same(ahead, serial)
    assert set(threading.enumerate()) == threads and not multiprocessing.active_children()


def test_a_file_changed_after_its_prefetch_is_prepared_again_from_the_new_bytes(tmp_path, shared_data):
    mirror = mirror_with(shared_data, tmp_path, KR, lambda b: b)
    home = Home(tmp_path / "home").ensure()
    with prefetch_grid([("carbon", "KR", 2023), ("carbon", "SG", 2023)], mirror=mirror) as pf:
        pf.wait()  # the worker has read and parsed the original bytes
        (mirror / KR).unlink()
        (mirror / KR).write_bytes((shared_data / KR).read_bytes().replace(b"\n", b"\r\n", 1))  # same rows, other bytes
        ahead = prepare_grid("carbon", [("KR", 2023), ("SG", 2023)], home=home, mirror=mirror)
    assert (pf.stats.stale, pf.stats.served) == (1, 1)
    serial = prepare_grid("carbon", [("KR", 2023), ("SG", 2023)], home=home, mirror=mirror)
    _same(ahead, serial)
    assert ahead.ready[0].report.raw_sha256 != prepare_grid(
        "carbon", [("KR", 2023)], home=home, mirror=shared_data).ready[0].report.raw_sha256


def test_a_bad_file_parsed_in_the_worker_reaches_the_caller_as_the_serial_error(tmp_path, shared_data):
    mirror = mirror_with(shared_data, tmp_path, KR, replace_line(100, lambda ln: ln.replace(",false,", ",maybe,")))
    home = Home(tmp_path / "home").ensure()
    serial = prepare_grid("carbon", [("KR", 2023), ("SG", 2023)], home=home, mirror=mirror)
    with prefetch_grid([("carbon", "KR", 2023), ("carbon", "SG", 2023)], mirror=mirror) as pf:
        pf.wait()
        ahead = prepare_grid("carbon", [("KR", 2023), ("SG", 2023)], home=home, mirror=mirror)
    assert (pf.stats.missing, pf.stats.served) == (1, 1)  # the worker refused it: the caller parsed it again
    err, ref = ahead.refused[("KR", 2023)], serial.refused[("KR", 2023)]
    assert type(err) is type(ref) and str(err) == str(ref)
    assert (err.file, err.column, err.rows, err.values) == (ref.file, ref.column, ref.rows, ref.values)
    assert "row 100" in str(err) and err.file.endswith("KR_2023_hourly.csv")
    _same(ahead, serial)
