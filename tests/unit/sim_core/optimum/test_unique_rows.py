"""The class builder's unique-rows helpers give exactly numpy's ``np.unique(..., axis=0, return_inverse=True)``
(same rows, same order, same inverse): the LP's class numbering, and so the bound, depends on it."""

from __future__ import annotations

import numpy as np
import pytest

from sim_core.optimum import classes as C


def _numpy(*cols):
    uk, inv = np.unique(np.stack(cols, axis=1), axis=0, return_inverse=True)
    return uk, inv.ravel()


@pytest.mark.parametrize("dense", [True, False])
def test_unique_rows_equal_numpy_on_random_keys(dense, monkeypatch) -> None:
    if not dense:
        monkeypatch.setattr(C, "_DENSE_KEYS", 0)  # the sorting path
    rng = np.random.default_rng(7)
    n = 50_000
    cols = (rng.integers(0, 3, n), rng.integers(0, 5, n), rng.integers(-1, 700, n),
            np.where(rng.random(n) < 0.2, 0, rng.integers((1 << 20) - 40, (1 << 20) + 5, n)))
    rows, inv = C._unique_rows(*cols)
    want_rows, want_inv = _numpy(*cols)
    assert rows.dtype == np.int64 and np.array_equal(rows, want_rows) and np.array_equal(inv, want_inv)
    assert np.array_equal(rows[inv], np.stack(cols, axis=1))


def test_unique_rows_edge_cases() -> None:
    empty = np.zeros(0, np.int64)
    rows, inv = C._unique_rows(empty, empty)
    assert rows.shape == (0, 2) and inv.shape == (0,)
    one = np.array([5, 5, 5])
    assert [a.tolist() for a in C._unique_rows(one, -one)] == [[[5, -5]], [0, 0, 0]]
    # spans whose product overflows int64: numpy's own row sort, same answer
    big = np.array([0, 2**40, 0, 2**40], np.int64)
    rows, inv = C._unique_rows(big, big, np.array([1, 0, 1, 0]))
    want_rows, want_inv = _numpy(big, big, np.array([1, 0, 1, 0]))
    assert np.array_equal(rows, want_rows) and np.array_equal(inv, want_inv)


def test_unique_codes_equal_numpy() -> None:
    rng = np.random.default_rng(3)
    code = rng.integers(0, 10_000, 100_000)
    uk, inv = C._unique_codes(code, 10_000)
    want_uk, want_inv = np.unique(code, return_inverse=True)
    assert np.array_equal(uk, want_uk) and np.array_equal(inv, want_inv) and inv.dtype == np.int64
