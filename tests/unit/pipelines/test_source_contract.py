"""One contract, every registered source, on small files written in the upstream formats (no mirror, no
network): the rows pass their table's Pandera model, timestamps are UTC-aware interval starts, numeric
columns carry their unit in the name, the primary key is unique, the values are those written in the
fixture after the documented conversion, and a malformed value is refused with an error naming the
file, the column, the row and the value. The per-source odd cases are in ``sources/`` and ``workload/``.
"""

from __future__ import annotations

import re

import polars as pl
import pytest
from polars.testing import assert_frame_equal

from gridshift import sources as source_info
from gridshift.errors import DataError
from pipelines.sources import registry
from tests.unit.pipelines.fixtures import grid_cases, network_cases, workload_cases
from tests.unit.pipelines.fixtures.case import Case
from warehouse.load import validate
from warehouse.schemas import TABLES

CASES: list[Case] = [*grid_cases.CASES, *network_cases.CASES, *workload_cases.CASES]
IDS = [c.id for c in CASES]
#: the cases whose table names the source of every row (derived workload tasks keep it in workload_runs)
SOURCED = [c for c in CASES if "source" in TABLES[c.table].columns]

# A numeric column names its unit; counts and positions are dimensionless by name.
UNIT = re.compile(r"(^|_)(g_per_kwh|pct|per_mwh|usd_per_local|min|c|kmh|km|mbps|ms|usd_per_gb|s|cores|gpus|gb)"
                  r"(_per_inst)?$")
DIMENSIONLESS = {"line", "inst_num", "task_id", "year", "source_line", "layer"}


@pytest.fixture(scope="module")
def parsed(tmp_path_factory) -> dict[str, pl.DataFrame]:
    """Each case's rows, parsed once for the module (the fixtures are written under a tmp folder)."""
    cache: dict[str, pl.DataFrame] = {}

    def get(case: Case) -> pl.DataFrame:
        if case.id not in cache:
            cache[case.id] = case.rows(tmp_path_factory.mktemp("mirror"))
        return cache[case.id]

    return get


class TestSourceContract:
    def test_every_registered_source_has_a_fixture_case(self):
        assert set(registry.implementations()) == set(source_info.names())
        assert {c.source for c in CASES} == set(source_info.names())
        for c in CASES:
            assert c.table == source_info.get(c.source).table or c.source in workload_cases.DERIVED

    @pytest.mark.parametrize("case", CASES, ids=IDS)
    def test_rows_pass_the_tables_pandera_model(self, case, parsed):
        df = parsed(case)
        assert df.height > 0
        assert validate(case.table, df, file=case.id).height == df.height

    @pytest.mark.parametrize("case", CASES, ids=IDS)
    def test_timestamps_are_utc_aware_interval_starts_in_order(self, case, parsed):
        df, expected = parsed(case), case.expected()
        times = [c for c, t in df.schema.items() if isinstance(t, pl.Datetime)]
        for col in times:
            assert df.schema[col] == pl.Datetime("us", "UTC"), col
        for col in (c for c in times if c in expected.columns):
            # the first and last intervals are the fixture's own (an interval-end reading is an hour late)
            assert (df[col].min(), df[col].max()) == (expected[col].min(), expected[col].max())
            assert df[col].is_sorted()

    @pytest.mark.parametrize("case", CASES, ids=IDS)
    def test_numeric_columns_name_their_unit(self, case, parsed):
        df = parsed(case)
        numeric = [c for c, t in df.schema.items() if t.is_numeric() and c not in DIMENSIONLESS]
        assert numeric and [c for c in numeric if not UNIT.search(c)] == []

    @pytest.mark.parametrize("case", CASES, ids=IDS)
    def test_primary_key_is_unique(self, case, parsed):
        df = parsed(case)
        key = list(TABLES[case.table].primary_key)
        assert not df.select(key).is_duplicated().any()

    @pytest.mark.parametrize("case", CASES, ids=IDS)
    def test_values_equal_the_written_ones_after_the_documented_conversion(self, case, parsed):
        df, expected = parsed(case), case.expected()
        key = list(case.key)
        got = (case.view(df) if case.view else df).select(expected.columns).sort(key)
        assert got.height == expected.height
        assert_frame_equal(got, expected.sort(key), check_exact=False, rel_tol=1e-12, abs_tol=1e-9)

    @pytest.mark.parametrize("case", SOURCED, ids=[c.id for c in SOURCED])
    def test_rows_name_the_source_that_read_them(self, case, parsed):
        assert parsed(case)["source"].unique().to_list() == [case.source]

    @pytest.mark.parametrize("case", CASES, ids=IDS)
    def test_a_malformed_value_is_refused_naming_file_column_row_and_value(self, case, tmp_path):
        with pytest.raises(DataError) as info:
            case.malformed(tmp_path)
        err, bad = info.value, case.bad
        assert err.file is not None and err.file.endswith(bad.file), err.file
        assert err.column == bad.column
        if bad.rows is not None:
            assert err.rows == bad.rows
        if bad.values is not None:
            assert err.values == bad.values
