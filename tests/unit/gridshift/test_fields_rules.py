"""The field registry's own rules (gridshift.fields): known types only, what a table may restate, a table's
fields and key, a field declared once; and the ranges of its shared bounds at their edges."""

from __future__ import annotations

import math

import pytest

from gridshift.fields import FIELDS, FLOAT, Field, TableSpec, _at_least, _pct, _registry, table


def test_unknown_dtype_is_refused_by_name():
    with pytest.raises(ValueError, match="field 'x': unknown dtype 'float32'"):
        Field("x", "float32")
    assert Field("x", FLOAT).polars_dtype.is_float()


def test_but_restates_description_and_isin_only():
    f = Field("code", "string")
    assert f.but(description="d").description == "d"
    assert f.but(isin=("a", "b")).isin == ("a", "b")  # open domain: the writer may name it
    with pytest.raises(ValueError, match=r"may not change \['bound', 'unit'\]"):
        f.but(unit="s", bound=None)
    with pytest.raises(ValueError, match=r"may not change \['isin'\]"):
        f.but(isin=("a",)).but(isin=("b",))


def test_table_spec_refuses_duplicates_and_a_key_outside_its_fields():
    a, b = Field("a", FLOAT), Field("b", FLOAT)
    assert TableSpec("t", "", (a, b), ("a", "b")).columns == ["a", "b"]
    assert TableSpec("t", "", (a, b), ()).columns == ["a", "b"]
    with pytest.raises(ValueError, match="duplicated fields"):
        TableSpec("t", "", (a, a), ("a",))
    with pytest.raises(ValueError, match="a key outside them"):
        TableSpec("t", "", (a,), ("b",))


def test_table_takes_registry_fields_and_refuses_a_changed_contract():
    t = table("t", "d", ["rtt_ms", FIELDS["provider"].but(description="cloud")], ["rtt_ms"])
    assert t.columns == ["rtt_ms", "provider"] and t.primary_key == ("rtt_ms",)
    assert t.fields[1].description == "cloud" and t.fields[0] is FIELDS["rtt_ms"]
    for changed in (Field("rtt_ms", "int64", bound=FIELDS["rtt_ms"].bound, unit="ms"),
                    Field("rtt_ms", FLOAT, unit="s", bound=FIELDS["rtt_ms"].bound),
                    Field("rtt_ms", FLOAT, unit="ms", bound=FIELDS["rtt_ms"].bound, nullable=True),
                    Field("rtt_ms", FLOAT, unit="ms", bound=FIELDS["rtt_ms"].bound, pattern="x")):
        assert changed != FIELDS["rtt_ms"]
        with pytest.raises(ValueError, match="redeclares the contract of field 'rtt_ms'"):
            table("t", "", [changed], ["rtt_ms"])


def test_registry_refuses_a_field_declared_twice():
    assert list(_registry([Field("a", FLOAT), Field("b", FLOAT)])) == ["a", "b"]
    with pytest.raises(ValueError, match="field 'a' declared twice"):
        _registry([Field("a", FLOAT), Field("a", FLOAT)])


def test_shared_bounds_at_their_edges():
    count = _at_least(0, "a count")
    assert count.admits(0) and not count.admits(-1) and count.high == math.inf and count.reason == "a count"
    pct = _pct()
    assert (pct.low, pct.high, pct.reason) == (0, 100, "a percentage")
    assert pct.admits(100) and not pct.admits(100.5) and _pct("share").reason == "share"
