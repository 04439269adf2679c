"""Local input files are read once and safely: regular files only, within their limit, one version whole;
a mirror file must resolve inside the mirror (or be a link to the same file of another mirror)."""

from __future__ import annotations

import os

import pytest

from gridshift import bounded_read
from gridshift.errors import DataError
from gridshift.limits import Limit
from gridshift.secret_text import scrub_secrets
from pipelines.core.raw import read_mirror

LIMIT = Limit(1 << 20, "bytes", "test")


def test_a_file_rewritten_in_place_while_it_is_read_is_refused(tmp_path, monkeypatch):
    """The writer truncates and rewrites the file between the reader's fstat and its read: the bytes read would be
    the new version's (or a mix, for a larger file): refused, never returned."""
    path = tmp_path / "f.csv"
    path.write_bytes(b"a,b\n1,2\n")
    real_fdopen = os.fdopen

    class Racing:
        def __init__(self, fh):
            self.fh = fh

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.fh.close()

        def fileno(self):
            return self.fh.fileno()

        def read(self, n):
            with path.open("r+b") as w:  # the other version, written in place
                w.truncate(0)
                w.write(b"a,b\n3,4\n5,6\n")
            return self.fh.read(n)

    assert bounded_read.read_bounded(path, LIMIT, file="f.csv") == b"a,b\n1,2\n"
    monkeypatch.setattr(bounded_read.os, "fdopen", lambda fd, mode: Racing(real_fdopen(fd, mode)))
    with pytest.raises(DataError, match="changed while it was read") as err:
        bounded_read.read_bounded(path, LIMIT, file="f.csv")
    assert err.value.file == "f.csv"


def test_mirror_links_resolve_inside_the_mirror_or_to_the_same_file_of_another(tmp_path):
    other = tmp_path / "other"
    (other / "a").mkdir(parents=True)
    (other / "a" / "x.csv").write_bytes(b"theirs")
    mirror = tmp_path / "mirror"
    (mirror / "a").mkdir(parents=True)
    (mirror / "a" / "real.csv").write_bytes(b"ours")
    (mirror / "a" / "inside.csv").symlink_to(mirror / "a" / "real.csv")
    (mirror / "a" / "x.csv").symlink_to(other / "a" / "x.csv")  # the same relative path of another mirror
    (mirror / "a" / "y.csv").symlink_to(other / "a" / "x.csv")  # another path's file
    secret = tmp_path / ".env"
    secret.write_text("ENTSOE_API_KEY=abcdefgh12345678\n")
    (mirror / "a" / "env.csv").symlink_to(secret)
    assert read_mirror(mirror, "a/inside.csv", "electricitymaps-csv").content == b"ours"
    assert read_mirror(mirror, "a/x.csv", "electricitymaps-csv").content == b"theirs"
    for rel, target in (("a/y.csv", other / "a" / "x.csv"), ("a/env.csv", secret)):
        with pytest.raises(DataError, match=f"links outside the mirror, to {target}") as err:
            read_mirror(mirror, rel, "electricitymaps-csv")
        assert err.value.file.endswith(rel)


def test_secrets_are_scrubbed_from_text(monkeypatch):
    monkeypatch.setenv("ELECTRICITYMAPS_TOKEN", "emaps-0123456789")
    monkeypatch.setenv("SOME_SERVICE_SECRET", "s3cr3t-value-42")
    monkeypatch.setenv("FLAG_KEY", "true")  # too short to search for: ordinary words stay
    text = ("echo emaps-0123456789 and s3cr3t-value-42\x00ENTSOE_API_KEY=unsetvalue99\x00PATH=/usr/bin "
            "the primary key: (a, b), key=3 is true")
    assert scrub_secrets(text) == ("echo *** and ***\x00ENTSOE_API_KEY=***\x00PATH=/usr/bin "
                                   "the primary key: (a, b), key=3 is true")
    assert str(DataError("found emaps-0123456789", rows=[2], values=["x emaps-0123456789"])).count("***") == 2
