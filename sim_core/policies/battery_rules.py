"""The battery rules (``registry.BATTERY_RULES``): each site's charge / discharge target of every step from
the grid signal the rule watches, read only at that step and before it (what a site knows then).

``carbon_quantile`` / ``price_quantile``: charge at full power when the step's carbon intensity (price) is at or
below the ``q_low`` quantile of the last ``window_steps`` steps (this one included), discharge at full power when
it is at or above the ``q_high`` quantile, idle otherwise. ``idle``: never charge or discharge.
"""

from __future__ import annotations

import numpy as np
from numba import njit

from .registry import battery_rule


@njit(cache=True, nogil=True, inline="always")
def _quantile(a, m, q):
    """The q quantile of the sorted ``a[:m]`` (m >= 1), linear between order statistics (numpy's default)."""
    pos = q * (m - 1)
    lo = int(np.floor(pos))
    hi = min(lo + 1, m - 1)
    return a[lo] + (a[hi] - a[lo]) * (pos - lo)


@njit(cache=True, nogil=True)
def quantile_targets(signal, s0, n, window, q_low, q_high, power_kw, out):
    """``out[d, j]`` for run step j (bundle step s0 + j): +power_kw[d] at or below the q_low quantile of the
    trailing window of ``signal[d]`` (bundle steps max(0, k - window + 1) .. k), -power_kw[d] at or above its
    q_high quantile (charging wins a tie: a flat window charges), else 0. The window is kept sorted as it slides
    (one insertion and one removal per step, not a sort)."""
    n_dc = signal.shape[0]
    buf = np.empty(window)
    for d in range(n_dc):
        m = 0
        first = max(0, s0 - window + 1)
        for k in range(first, s0 + n):
            if m == window:  # drop the value leaving the window
                old = signal[d, k - window]
                i = np.searchsorted(buf[:m], old)
                buf[i:m - 1] = buf[i + 1:m].copy()
                m -= 1
            x = signal[d, k]
            i = np.searchsorted(buf[:m], x)
            buf[i + 1:m + 1] = buf[i:m].copy()
            buf[i] = x
            m += 1
            if k < s0:
                continue
            j = k - s0
            if x <= _quantile(buf, m, q_low):
                out[d, j] = power_kw[d]
            elif x >= _quantile(buf, m, q_high):
                out[d, j] = -power_kw[d]
            else:
                out[d, j] = 0.0


def targets(name: str, carbon: np.ndarray, price: np.ndarray, s0: int, n: int, power_kw: np.ndarray) -> np.ndarray:
    """(n_dc, n) targets (kW) of battery rule ``name`` over run steps 0..n-1 (``carbon``/``price``: the bundle's
    (n_dc, n_bundle) signals; a drained run's steps past the bundle's end repeat its last step's signal)."""
    spec = battery_rule(name)
    n_dc = carbon.shape[0]
    out = np.zeros((n_dc, n))
    if spec.signal is None:
        return out
    sig = carbon if spec.signal == "carbon" else price
    p = spec.defaults()
    n_in = min(n, sig.shape[1] - s0)
    quantile_targets(np.ascontiguousarray(sig, dtype=np.float64), s0, n_in, int(p["window_steps"]),
                     float(p["q_low"]), float(p["q_high"]), np.ascontiguousarray(power_kw), out)
    if n_in < n:
        out[:, n_in:] = out[:, n_in - 1:n_in]
    return out
