"""A bundle argument: a directory as given, else an id under the home's bundles folder; a missing one is
"bundle not found" listing the home's ids, a ``..`` that names no directory stays an unsafe path."""

from __future__ import annotations

import os

import pytest

from gridshift.home import LISTED_IDS, BundleNotFoundError, Home, UnsafePathError, bundle_ids, resolve_bundle


def _home_with(tmp_path, *ids: str) -> Home:
    home = Home(tmp_path / "home")
    for i in ids:
        (home.bundles_dir / i).mkdir(parents=True)
        (home.bundles_dir / i / "manifest.json").write_text("{}")
    return home


def test_a_directory_and_an_id_resolve(tmp_path, monkeypatch):
    home = _home_with(tmp_path, "0123456789abcdef")
    monkeypatch.chdir(tmp_path)
    assert resolve_bundle("0123456789abcdef", home) == home.bundles_dir / "0123456789abcdef"
    assert resolve_bundle(str(home.bundles_dir / "0123456789abcdef"), None) == home.bundles_dir / "0123456789abcdef"
    assert resolve_bundle("home/bundles/0123456789abcdef", home).resolve() == home.bundles_dir / "0123456789abcdef"


def test_a_missing_path_is_not_found_naming_it_and_listing_the_homes_ids(tmp_path, monkeypatch):
    """The README's case: a path under another home (or a bundle id that changed) is not found, not unsafe."""
    home = _home_with(tmp_path, "bbbbbbbbbbbbbbbb", "aaaaaaaaaaaaaaaa")
    (home.bundles_dir / "not-a-bundle").mkdir()  # no manifest: not listed
    monkeypatch.chdir(tmp_path)
    with pytest.raises(BundleNotFoundError) as info:
        resolve_bundle(".gridshift/bundles/7e5c801b5f8c14ed", home)
    msg = str(info.value)
    assert msg.startswith("bundle not found: '.gridshift/bundles/7e5c801b5f8c14ed' "
                          f"({tmp_path}/.gridshift/bundles/7e5c801b5f8c14ed) is no directory;")
    assert msg.endswith(f"{home.bundles_dir} holds 2 bundle(s): aaaaaaaaaaaaaaaa, bbbbbbbbbbbbbbbb")
    assert "unsafe" not in msg


def test_a_missing_id_is_not_found_under_the_home(tmp_path, monkeypatch):
    home = _home_with(tmp_path, "aaaaaaaaaaaaaaaa")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(BundleNotFoundError, match=rf"'7e5c801b5f8c14ed' \({tmp_path}/7e5c801b5f8c14ed\) is no "
                       rf"directory, nor a bundle id under {home.bundles_dir}; {home.bundles_dir} holds 1 "
                       r"bundle\(s\): aaaaaaaaaaaaaaaa$"):
        resolve_bundle("7e5c801b5f8c14ed", home)


def test_an_empty_or_absent_home_and_no_home_say_so(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    with pytest.raises(BundleNotFoundError, match=r"holds no bundle \(gridshift export builds one\)$"):
        resolve_bundle("7e5c801b5f8c14ed", Home(tmp_path / "empty"))
    with pytest.raises(BundleNotFoundError, match=r"is no directory; no gridshift home to look in for an id"):
        resolve_bundle("7e5c801b5f8c14ed", None)
    (tmp_path / "file").write_text("x")
    with pytest.raises(BundleNotFoundError, match="is a file, not a bundle directory"):
        resolve_bundle("file", None)


def test_a_long_list_is_cut_and_points_at_gridshift_list(tmp_path, monkeypatch):
    ids = [f"{i:016x}" for i in range(LISTED_IDS + 3)]
    home = _home_with(tmp_path, *ids)
    monkeypatch.chdir(tmp_path)
    assert bundle_ids(home.bundles_dir) == ids
    with pytest.raises(BundleNotFoundError) as info:
        resolve_bundle("nope", home)
    assert str(info.value).endswith(f"holds {len(ids)} bundle(s): {', '.join(ids[:LISTED_IDS])}, ... and 3 more "
                                    "(gridshift list)")


@pytest.mark.parametrize("ref", ["../../etc-nowhere", "a/../../b", f"..{os.sep}x"])
def test_a_dotdot_that_names_no_directory_is_unsafe(tmp_path, monkeypatch, ref):
    home = _home_with(tmp_path, "aaaaaaaaaaaaaaaa")
    monkeypatch.chdir(tmp_path)
    with pytest.raises(UnsafePathError, match=r"unsafe path component '\.\.' in .*: no bundle directory there, and a "
                       rf"bundle id is a plain name under {home.bundles_dir}$"):
        resolve_bundle(ref, home)


def test_an_existing_directory_is_taken_as_given_wherever_it_is(tmp_path, monkeypatch):
    home = _home_with(tmp_path, "aaaaaaaaaaaaaaaa")
    monkeypatch.chdir(home.bundles_dir / "aaaaaaaaaaaaaaaa")
    assert resolve_bundle("..", home).resolve() == home.bundles_dir
    assert resolve_bundle("../aaaaaaaaaaaaaaaa", None).resolve() == home.bundles_dir / "aaaaaaaaaaaaaaaa"
