"""portable_math: within 1 ulp of the C library on every range the bundle path uses, the IEEE special
values right, and results that depend on nothing but the argument (golden bits)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from gridshift import portable_math as pm

RNG = np.random.default_rng(20261129)


def _ulps(got: np.ndarray, want: np.ndarray) -> float:
    ok = np.isfinite(want) & (want != 0)
    return float(np.max(np.abs(got[ok] - want[ok]) / np.spacing(np.abs(want[ok]))))


CASES = {
    "exp": (pm.exp, math.exp, np.concatenate([RNG.uniform(-708, 709, 20_000), RNG.uniform(-6, 6, 20_000)])),
    "log": (pm.log, math.log, np.concatenate([np.exp(RNG.uniform(-700, 700, 20_000)), RNG.uniform(0.5, 2, 20_000),
                                              [5e-324, 2.2e-308, 1.0 + 2.0 ** -52]])),
    "sin": (pm.sin, math.sin, np.concatenate([RNG.uniform(-7, 7, 20_000), RNG.uniform(-1e5, 1e5, 5_000)])),
    "cos": (pm.cos, math.cos, np.concatenate([RNG.uniform(-7, 7, 20_000), RNG.uniform(-1e5, 1e5, 5_000)])),
    "arcsin": (pm.arcsin, math.asin, np.concatenate([RNG.uniform(-1, 1, 20_000), [0.4999, 0.5, 0.975, 1.0]])),
    "arctan": (pm.arctan, math.atan, np.concatenate([RNG.uniform(-5, 5, 20_000),
                                                     np.exp(RNG.uniform(-40, 40, 5_000))])),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_within_one_ulp_of_the_c_library(name):
    f, ref, x = CASES[name]
    assert _ulps(f(x), np.array([ref(v) for v in x])) <= 1.0


def test_special_values():
    assert np.array_equal(pm.exp([-np.inf, np.inf, 0.0, -746.0, 710.0]), [0.0, np.inf, 1.0, 0.0, np.inf])
    assert np.isnan(pm.exp(np.nan))
    assert float(pm.exp(-740.0)) == pytest.approx(math.exp(-740.0), rel=1e-10)  # subnormal result
    got = pm.log([0.0, -1.0, np.inf, 1.0])
    assert got[0] == -np.inf and np.isnan(got[1]) and got[2] == np.inf and got[3] == 0.0
    assert np.isnan(pm.arcsin([1.5, -1.0000001])).all()
    assert np.array_equal(pm.arcsin([1.0, -1.0]), [math.pi / 2, -math.pi / 2])
    assert np.array_equal(pm.arctan([np.inf, -np.inf, 0.0]), [math.pi / 2, -math.pi / 2, 0.0])
    assert np.isnan(pm.sin([np.inf, np.nan])).all() and np.isnan(pm.cos(np.inf))


def test_trigonometry_refuses_what_it_cannot_reduce_exactly():
    with pytest.raises(ValueError, match="exact reduction"):
        pm.sin([1e7])


def test_golden_bits():
    # the same on every machine by construction; a change here changes every bundle id
    got = [float(pm.exp(1.0)), float(pm.log(10.0)), float(pm.sin(1.0)), float(pm.cos(1.0)),
           float(pm.arcsin(0.7)), float(pm.arctan(3.0))]
    assert [v.hex() for v in got] == [
        "0x1.5bf0a8b14576ap+1", "0x1.26bb1bbb55516p+1", "0x1.aed548f090ceep-1", "0x1.14a280fb5068cp-1",
        "0x1.8d00e692afd95p-1", "0x1.3fc176b7a8560p+0",
    ]


def test_line_fit_is_least_squares():
    x = RNG.uniform(0, 100, 200)
    y = 3.0 + 0.5 * x + RNG.normal(0, 1, 200)
    b0, b1 = pm.line_fit(x, y)
    want = np.polyfit(x, y, 1)
    assert b1 == pytest.approx(want[0], rel=1e-12) and b0 == pytest.approx(want[1], rel=1e-12)
    with pytest.raises(ValueError, match="at least 2 points"):
        pm.line_fit([1.0], [2.0])
