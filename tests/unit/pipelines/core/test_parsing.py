"""Strict parsing and the partition rules, on small inputs written here (no mirror needed)."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import polars as pl
import pytest

from gridshift.errors import DataError
from pipelines.core import http
from pipelines.core.redact import redact_uri
from pipelines.core.source import check_partition
from pipelines.core.tabular import first_data_line, json_numbers, read_csv_strings, strict_json, to_float


def test_a_column_named_twice_is_refused_not_silently_dropped():
    content = b"a,b,a\n1,2,3\n"
    assert pl.read_csv(content).columns == ["a", "b", "a_duplicated_0"]  # what a reader would do
    with pytest.raises(DataError) as info:
        read_csv_strings(content, "f.csv", ["a"])
    assert info.value.column == "a" and info.value.rows == [1] and "fields 1 and 3" in str(info.value)
    assert read_csv_strings("\ufeffa,b\n1,2\n".encode(), "f.csv", ["a"]).columns == ["a", "b"]  # a BOM is fine


def test_a_leading_comment_block_is_skipped_and_rows_are_named_by_their_file_lines():
    content = b"# notes\n# source: https://example.org\na,b\n1,x\n2,3\n"
    df = read_csv_strings(content, "t.csv", ["a", "b"], comment_prefix="#", exact=True)
    assert df.columns == ["a", "b"] and df.height == 2 and first_data_line(content, "#") == 4
    with pytest.raises(DataError) as info:
        to_float(df, "b", "t.csv", first_line=first_data_line(content, "#"))
    assert info.value.rows == [4] and info.value.values == ["x"] and info.value.column == "b"
    # only the leading block: a comment-like line among the data is data (the caller's checks refuse it)
    inner = read_csv_strings(b"# n\na,b\n#1,2\n", "t.csv", ["a"], comment_prefix="#")
    assert inner["a"].to_list() == ["#1"]
    with pytest.raises(DataError, match="appears twice") as dup:
        read_csv_strings(b"# n\n# m\na,a\n1,2\n", "t.csv", ["a"], comment_prefix="#")
    assert dup.value.rows == [3]  # the header's own line
    with pytest.raises(DataError, match="are not") as extra:
        read_csv_strings(b"a,b,c\n1,2,3\n", "t.csv", ["a", "b"], exact=True)
    assert extra.value.rows == [1]


def test_json_keys_given_twice_and_nan_are_refused():
    assert strict_json(b'{"a": 1, "b": {"a": 2}}', "f") == {"a": 1, "b": {"a": 2}}  # one per object is fine
    with pytest.raises(DataError, match="appears twice") as info:
        strict_json(b'{"utc_offset_seconds": 3600, "x": 1, "utc_offset_seconds": 39600}', "f.json")
    assert info.value.column == "utc_offset_seconds" and info.value.values == [3600, 39600]
    with pytest.raises(DataError, match="NaN is not a JSON number"):
        strict_json(b'{"t": [1.0, NaN]}', "f.json")
    with pytest.raises(DataError, match="truncated"):
        strict_json(b'{"t": [1.0,', "f.json")


@pytest.mark.parametrize("values,rows", [([1.5, True, 2.0], [1]), ([False, 1.0], [0]), ([1.0, None, True], [2])])
def test_booleans_are_not_numbers(values, rows):
    assert pl.Series(values, dtype=pl.Float64, strict=True).null_count() <= 1  # polars would take them as 1.0/0.0
    with pytest.raises(DataError, match="boolean") as info:
        json_numbers(values, "f.json", "hourly.temperature_2m")
    assert info.value.rows == rows and info.value.column == "hourly.temperature_2m"


def test_numbers_and_nulls_pass_and_text_is_refused():
    assert json_numbers([1, 2.5, None], "f", "c").to_list() == [1.0, 2.5, None]
    with pytest.raises(DataError, match="not numbers") as info:
        json_numbers([1.0, "3.5", 2.0], "f", "c")
    assert info.value.rows == [1] and info.value.values == ["3.5"]


def _frame(*ts: datetime) -> pl.DataFrame:
    return pl.DataFrame({"ts_utc": pl.Series(ts, dtype=pl.Datetime("us", "UTC"))})


def test_partition_rules():
    h = timedelta(hours=1)
    y0 = datetime(2023, 1, 1, tzinfo=UTC)
    check_partition(_frame(y0 - 14 * h, y0, y0 + h), file="f", column="t", year=2023)  # a local-year edge
    with pytest.raises(DataError, match="no data rows"):
        check_partition(_frame(), file="f", column="t", year=2023)
    with pytest.raises(DataError, match="not in time order") as info:
        check_partition(_frame(y0, y0 + 2 * h, y0 + h), file="f", column="t", year=2023)
    assert info.value.rows == [4]  # CSV line of the third row
    with pytest.raises(DataError, match="outside the partition's UTC year 2023") as info:
        check_partition(_frame(y0 - 15 * h, y0), file="f", column="t", year=2023)
    assert info.value.rows == [2]
    with pytest.raises(DataError, match="outside"):
        check_partition(_frame(datetime(2024, 1, 1, 14, tzinfo=UTC)), file="f", column="t", year=2023)


def test_redact_scrubs_token_parameters_in_urls_and_dicts(monkeypatch):
    monkeypatch.setenv("ENTSOE_API_KEY", "abcd-secret-1234")
    msg = http.redact("GET http://x/api?securityToken=abcd-secret-1234&documentType=A44 failed")
    assert "abcd-secret-1234" not in msg and "securityToken=***" in msg
    # entsoe-py logs its parameters as a dict; an unknown token-like parameter is scrubbed by name
    assert "zzz-unknown" not in http.redact("params {'securityToken': 'zzz-unknown', 'periodStart': '1'}")
    assert redact_uri("https://h/p?auth-token=t0k3n&zone=DE", drop=True) == "https://h/p?zone=DE"
    assert redact_uri("https://h/p?securityToken=t0k3n&zone=DE") == "https://h/p?securityToken=***&zone=DE"
