"""Bound.admits at its edges: the high end is inclusive, the low end inclusive or not as declared; NaN is refused."""

from __future__ import annotations

import math

from gridshift.bounds import BOUNDS, Bound


def test_inclusive_low_and_high_edges():
    b = Bound(0.0, 100.0, "a percentage")
    assert b.admits(0.0) and b.admits(100.0) and b.admits(50.0)
    assert not b.admits(-1e-9) and not b.admits(100.000001)
    assert b.describe() == "[0, 100]"


def test_exclusive_low_edge():
    b = Bound(0.0, 10.0, "positive", low_inclusive=False)
    assert not b.admits(0.0) and b.admits(1e-12) and b.admits(10.0) and not b.admits(10.5)
    assert b.describe() == "(0, 10]"


def test_nan_and_infinities_are_refused():
    b = BOUNDS["rh_pct"]
    assert not b.admits(math.nan) and not b.admits(math.inf) and not b.admits(-math.inf)
