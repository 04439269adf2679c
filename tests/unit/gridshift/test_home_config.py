"""A home's configuration (gridshift.json): written atomically, and a bad file refused naming it, never a crash."""

from __future__ import annotations

import os
import signal
import tracemalloc

import pytest

from gridshift.errors import GridshiftError
from gridshift.home import Home
from gridshift.limits import CONFIG_BYTES


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


def _refused(home: Home, match: str) -> str:
    """The home's configuration refused naming its file, within 10 s (a FIFO must not hang the read)."""
    def _hang(*_a):
        raise TimeoutError("reading the configuration hung")

    old = signal.signal(signal.SIGALRM, _hang)
    signal.alarm(10)
    try:
        with pytest.raises(GridshiftError, match=match) as err:
            home.config()
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
    assert str(home.config_path) in str(err.value)
    return str(err.value)


def test_a_deeply_nested_configuration_is_refused_not_a_recursion_error(tmp_path):
    home = Home(tmp_path)
    home.config_path.write_text("[" * 200_000 + "]" * 200_000)
    _refused(home, "nested too deeply")


@pytest.mark.parametrize(("make", "what"), [
    (lambda p: p.mkdir(), "a directory"),
    (lambda p: os.mkfifo(p), "a FIFO"),
    (lambda p: p.symlink_to("/dev/zero"), "a character device"),
])
def test_a_configuration_that_is_not_a_regular_file_is_refused_before_it_is_read(tmp_path, make, what):
    home = Home(tmp_path)
    make(home.config_path)
    _refused(home, f"the home's configuration is {what}")


def test_a_configuration_above_its_limit_is_refused_from_its_size(tmp_path):
    home = Home(tmp_path)
    with home.config_path.open("wb") as fh:
        fh.truncate(CONFIG_BYTES.limit + 1)  # sparse: nothing written
    tracemalloc.start()
    try:
        text = _refused(home, "above the limit")
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert f"is {CONFIG_BYTES.limit + 1:,} bytes, above the limit of {CONFIG_BYTES.limit:,} bytes" in text
    assert peak < CONFIG_BYTES.limit // 4
