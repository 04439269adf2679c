"""Year options (``--year 2023``, ``2022,2023``, ``2022-2023``): hostile ranges refused before anything is expanded."""

from __future__ import annotations

import pytest
import typer

from gridshift_cli.common import parse_years


def test_years_lists_and_ranges():
    assert parse_years("2023") == [2023]
    assert parse_years("2022,2023") == [2022, 2023]
    assert parse_years("2021-2023") == [2021, 2022, 2023]


@pytest.mark.parametrize("text", ["2022-99999999999", "2023-2022", "1800-2022", "x", "", "2022-", "9" * 5000])
def test_bad_years_are_refused_by_value(text):
    with pytest.raises(typer.BadParameter, match="invalid year") as err:
        parse_years(text)
    assert len(str(err.value)) < 300
