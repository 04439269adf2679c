"""A home's configuration (gridshift.json): written atomically, and a bad file refused naming it, never a crash."""

from __future__ import annotations

import pytest

from gridshift.errors import GridshiftError
from gridshift.home import Home


def test_configure_keeps_other_values_and_reads_back(tmp_path):
    home = Home(tmp_path)
    assert home.config() == {} and home.configured_mirror() is None
    home.configure(mirror="/data/mirror")
    home.configure(other="x")
    assert home.config() == {"mirror": "/data/mirror", "other": "x"}
    assert str(home.configured_mirror()) == "/data/mirror"


@pytest.mark.parametrize(("text", "match"), [
    ("{not json", "not valid JSON"),
    ('["mirror"]', "expected a JSON object of strings"),
    ('{"mirror": 7}', "expected a JSON object of strings"),
])
def test_a_bad_configuration_is_refused_naming_the_file(tmp_path, text, match):
    home = Home(tmp_path)
    home.config_path.write_text(text)
    with pytest.raises(GridshiftError, match=match) as err:
        home.configured_mirror()
    assert str(home.config_path) in str(err.value)


def test_a_huge_bad_value_is_quoted_in_part(tmp_path):
    home = Home(tmp_path)
    home.config_path.write_text('{"mirror": ["' + "x" * 100_000 + '"]}')
    with pytest.raises(GridshiftError) as err:
        home.config()
    assert len(str(err.value)) < 500 and "characters" in str(err.value)
