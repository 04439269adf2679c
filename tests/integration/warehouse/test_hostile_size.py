"""Oversize input is refused by name (file, size, limit) before it is read, and refusals quote only excerpts.

The 2 GB case is benchmarks/bench_hostile_size.py; here the same limit on sparse files just above it (no
disk written, nothing read), so the check costs nothing in CI.
"""

from __future__ import annotations

import tracemalloc

import pytest

from gridshift.errors import MAX_MESSAGE_CHARS, MAX_VALUE_CHARS, DataError
from gridshift.home import Home
from gridshift.limits import FILE_BYTES, GRID_LINES, UNPACKED_BYTES
from tests.integration.helpers import mirror_with, replace_line, tree_digest
from warehouse.ingest import ingest_grid
from warehouse.ingest_workload import ingest_workload

CARBON = "electricitymaps/DE-LU/DE-LU_2023_hourly.csv"
POD_LIST = "alibaba/gpu-v2023/openb_pod_list_default.csv"


def _padded(mirror, relpath: str, size: int) -> None:
    """The real file followed by zeros up to ``size`` bytes: a sparse file (no disk written)."""
    with (mirror / relpath).open("r+b") as fh:
        fh.truncate(size)


@pytest.mark.parametrize(("kind", "relpath"), [
    ("carbon", CARBON), ("weather", "open-meteo/DE-LU/2023.json"),
    ("price", "prices/standardized/DE-LU/DE-LU_electricity_prices_2023.csv"),
])
def test_a_padded_mirror_file_is_refused_before_it_is_read(tmp_path, shared_data, kind, relpath):
    mirror = mirror_with(shared_data, tmp_path, relpath, lambda b: b)
    limit = FILE_BYTES[kind].limit
    _padded(mirror, relpath, limit + 1)
    home = Home.resolve(tmp_path / "home")
    tracemalloc.start()
    try:
        with pytest.raises(DataError) as info:
            ingest_grid(kind, "DE-LU", 2023, home=home, mirror=mirror)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    err = info.value
    assert err.file.endswith(relpath.split("/")[-1])
    assert f"the file is {limit + 1:,} bytes, above the limit of {limit:,} bytes" in str(err)
    assert peak < limit // 4, f"refusing held {peak:,} bytes"
    assert not home.root.exists()
    # at the limit exactly it is read (and then refused for its content: zeros are not CSV/JSON)
    _padded(mirror, relpath, limit)
    with pytest.raises(DataError) as info:
        ingest_grid(kind, "DE-LU", 2023, home=home, mirror=mirror)
    assert "above the limit" not in str(info.value)


def test_a_file_of_a_million_short_lines_is_refused_before_it_is_parsed(tmp_path, shared_data):
    """2 MB, far below the byte limit, but 1,000,001 lines: each would be a frame row once parsed."""
    extra = GRID_LINES.limit + 1 - (shared_data / CARBON).read_bytes().count(b"\n")
    mirror = mirror_with(shared_data, tmp_path, CARBON, lambda b: b + b"\n" * extra)
    with pytest.raises(DataError) as info:
        ingest_grid("carbon", "DE-LU", 2023, home=Home.resolve(tmp_path / "home"), mirror=mirror)
    assert "the number of lines is 1,000,001 lines, above the limit of 1,000,000 lines" in str(info.value)
    assert info.value.file.endswith("DE-LU_2023_hourly.csv")


def test_a_padded_pod_list_is_refused_by_name(tmp_path, shared_data):
    mirror = mirror_with(shared_data, tmp_path, POD_LIST, lambda b: b)
    limit = FILE_BYTES["workload"].limit
    _padded(mirror, POD_LIST, limit + 1)
    home = Home.resolve(tmp_path / "home")
    with pytest.raises(DataError, match=f"above the limit of {limit:,} bytes") as info:
        ingest_workload("alibaba-2023", 2023, home=home, mirror=mirror)
    assert info.value.file.endswith("openb_pod_list_default.csv")
    assert not home.root.exists()


def test_an_archive_member_claiming_more_than_the_unpacked_limit_is_refused_from_its_header(tmp_path):
    import io
    import tarfile

    from pipelines.core.raw import RawFile
    from pipelines.workload.alibaba2020 import extract_csv

    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tf:  # a header claiming 1 GiB + 1 byte, and no data
        info = tarfile.TarInfo("pai_task_table.csv")
        info.size = UNPACKED_BYTES.limit + 1
        tf.addfile(info)
    content = buf.getvalue()
    assert len(content) < 1_000
    with pytest.raises(DataError, match="the unpacked member is 1,073,741,825 bytes, above the limit") as err:
        extract_csv(RawFile(source="alibaba-2020", uri="file:///t/pai_task_table.tar.gz", content=content))
    assert err.value.file == "file:///t/pai_task_table.tar.gz!pai_task_table.csv"


def test_a_huge_offending_value_is_quoted_as_a_short_excerpt(tmp_path, shared_data):
    """One padded field (1 MB of text where a number belongs): the refusal names file, column and row,
    and quotes 80 characters of the value, not the megabyte."""
    pad = "9" + "x" * (1 << 20)

    def set_direct(line: str) -> str:
        parts = line.split(",")
        parts[4] = pad
        return ",".join(parts)

    mirror = mirror_with(shared_data, tmp_path, CARBON, replace_line(10, set_direct))
    home = Home.resolve(tmp_path / "home")
    before = tree_digest(home.root)
    with pytest.raises(DataError) as info:
        ingest_grid("carbon", "DE-LU", 2023, home=home, mirror=mirror)
    err = info.value
    assert err.rows == [10] and err.column == "Carbon Intensity gCO₂eq/kWh (direct)"
    assert err.values == [f"{pad[:MAX_VALUE_CHARS]}... ({len(pad):,} characters)"]
    assert len(str(err)) < MAX_MESSAGE_CHARS + 1_000
    assert tree_digest(home.root) == before


def test_a_long_message_is_cut():
    err = DataError("x" * 10_000_000, file="f.csv", column="c" * 1_000, rows=[1], values=["v" * 1_000_000])
    assert len(str(err)) < 3_000
    assert "message cut at 2,000 characters" in str(err) and "(1,000,000 characters)" in str(err)
    assert err.values == ["v" * 80 + "... (1,000,000 characters)"]


def test_a_downloaded_file_above_the_limit_is_refused_before_it_is_parsed():
    """A live answer is held whole by the HTTP layer; its parse is refused by the same byte limit."""
    from gridshift import locations
    from pipelines.core.raw import RawFile
    from pipelines.sources.electricitymaps import CSV

    limit = FILE_BYTES["carbon"].limit
    raw = RawFile(source=CSV.name, uri="https://data.example/DE_2023_hourly.csv", content=b"x" * (limit + 1))
    with pytest.raises(DataError, match=f"the file is {limit + 1:,} bytes, above the limit") as info:
        CSV.parse(raw, locations.get("DE-LU"), 2023)
    assert info.value.file == "https://data.example/DE_2023_hourly.csv"
