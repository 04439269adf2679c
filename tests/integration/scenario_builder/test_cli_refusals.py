"""What the ingest command shows for refused input: the DataError itself (file, column, row, an excerpt of
the value), never a raw Pandera report or the whole offending input."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from gridshift.limits import FILE_BYTES
from gridshift_cli import app
from tests.integration.helpers import mirror_with, replace_line

runner = CliRunner()
POD_LIST = "alibaba/gpu-v2023/openb_pod_list_default.csv"


def _set_field(col: int, value: str):
    def edit(line: str) -> str:
        parts = line.split(",")
        parts[col] = value
        return ",".join(parts)

    return edit


@pytest.mark.parametrize(("field", "value", "column", "shown"), [
    (1, "-12000", "cpu_cores_per_inst", "-12.0"),
    (9, "inf", "end_s", "inf"),
    (4, "1000000000000", "gpus_per_inst", "1000000000.0"),
    (8, "-5", "arrival_s", "-5.0"),
], ids=["negative cpu_milli", "infinite deletion_time", "1e12 gpu_milli", "negative creation_time"])
def test_an_impossible_pod_is_reported_by_file_column_and_row(tmp_path, shared_data, field, value, column, shown):
    """The four alibaba-2023 refusals printed Pandera's JSON report (derived column, no file, no row)."""
    mirror = mirror_with(shared_data, tmp_path, POD_LIST, replace_line(3, _set_field(field, value)))
    res = runner.invoke(app, ["ingest", "--year", "2023", "--sources", "workload", "--workload", "alibaba-2023",
                              "--mirror", str(mirror), "--home", str(tmp_path / "home")])
    assert res.exit_code == 1, res.output
    assert "DATAFRAME_CHECK" not in res.output and '"schema"' not in res.output, res.output
    assert "openb_pod_list_default.csv" in res.output and f"column: '{column}'" in res.output
    assert f"row 3: '{shown}'" in res.output, res.output


def test_a_padded_mirror_file_is_named_with_its_size_and_the_limit(tmp_path, shared_data):
    relpath = "electricitymaps/DE-LU/DE-LU_2023_hourly.csv"
    mirror = mirror_with(shared_data, tmp_path, relpath, lambda b: b)
    limit = FILE_BYTES["carbon"].limit
    with (mirror / relpath).open("r+b") as fh:
        fh.truncate(limit + 1)  # sparse: nothing written, nothing read
    res = runner.invoke(app, ["ingest", "--regions", "DE-LU", "--year", "2023", "--sources", "carbon",
                              "--mirror", str(mirror), "--home", str(tmp_path / "home")])
    assert res.exit_code == 1
    assert f"the file is {limit + 1:,} bytes, above the limit of {limit:,} bytes" in res.output
    assert "DE-LU_2023_hourly.csv" in res.output and len(res.output) < 5_000


def test_an_implausible_partition_is_ingested_only_with_allow_implausible(tmp_path, shared_data):
    """Prices ÷ 1000: refused by the command by name; with --allow-implausible ingested and recorded."""
    from gridshift.home import Home
    from warehouse.db import read_table

    relpath = "prices/standardized/DE-LU/DE-LU_electricity_prices_2023.csv"

    def milli(line: str) -> str:
        parts = line.split(",")
        return ",".join([*parts[:2], repr(float(parts[2]) / 1000)]) if parts[0][:1].isdigit() else line

    def scale(data: bytes) -> bytes:
        return "\n".join(milli(ln) if ln else ln for ln in data.decode().split("\n")).encode()

    mirror = mirror_with(shared_data, tmp_path, relpath, scale)
    args = ["ingest", "--regions", "DE-LU", "--year", "2023", "--sources", "price", "--mirror", str(mirror),
            "--home", str(tmp_path / "home")]
    res = runner.invoke(app, args)
    assert res.exit_code == 1 and "below the plausible floor of 1" in res.output and "price_usd_per_mwh" in res.output
    ok = runner.invoke(app, [*args, "--allow-implausible"])
    assert ok.exit_code == 0, ok.output
    q = read_table(Home(tmp_path / "home").warehouse_path, "SELECT plausibility_overridden FROM partition_quality")
    assert q.rows() == [("mean_price",)]
