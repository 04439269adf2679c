"""Information kernels (docs/simulation.md "Information"): publishing each step's actuals, issuing
forecasts (oracle, persistence, seasonal naive, calibrated), and the quantiles policies derive from them."""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from .layout import (
    FC_CALIBRATED,
    FC_ORACLE,
    FC_PERSISTENCE,
    FC_SEASONAL_DAY,
    IO_EVERY,
    IO_H,
    IO_KEY,
    IO_KPAD,
    IO_MODEL,
    IO_S0,
    PAR_FLOOR,
    PAR_MULT,
    SIG_CARBON,
    STEPS_PER_DAY,
)

# ---------------------------------------------------------------------------- information kernels
# The forecast error of the ``calibrated`` model is a pure function of (run key, signal, datacenter,
# issue step, lead): a counter-based hash (SplitMix64's finaliser) turns each such tuple into a
# uniform, two uniforms into two standard normals (Box-Muller). No generator state is carried from
# step to step, so the forecast issued at a step is the same whatever the policy did before, whether
# or not earlier steps issued one, and whichever interface asks for it.
_GOLDEN = np.uint64(0x9E3779B97F4A7C15)
_MIX1 = np.uint64(0xBF58476D1CE4E5B9)
_MIX2 = np.uint64(0x94D049BB133111EB)
_TWO_M53 = 1.0 / 9007199254740992.0  # 2**-53


@njit(cache=True, nogil=True, inline="always")
def _mix64(z):
    """SplitMix64's output function (Steele, Lea & Flood, OOPSLA 2014): a bijection of uint64."""
    z = (z ^ (z >> np.uint64(30))) * _MIX1
    z = (z ^ (z >> np.uint64(27))) * _MIX2
    return z ^ (z >> np.uint64(31))


@njit(cache=True, nogil=True, inline="always")
def _unit(z):
    """A uint64 hash -> a double uniform on (0, 1) (53 bits, never 0 nor 1)."""
    return (float(z >> np.uint64(11)) + 0.5) * _TWO_M53


@njit(cache=True, nogil=True)
def stream_base(key, s, d, k):
    """The hash of (run key, signal s, datacenter d, issue step k): the start of that issue's stream."""
    h = _mix64(np.uint64(key) + _GOLDEN * (np.uint64(k) + np.uint64(1)))
    return _mix64(h ^ ((np.uint64(s) << np.uint64(32)) + np.uint64(d)))


@njit(cache=True, nogil=True, inline="always")
def _normal_pair(base, p):
    """Standard normals number 2p and 2p + 1 of the stream ``base`` (Box-Muller on two uniforms)."""
    u1 = _unit(_mix64(base + _GOLDEN * np.uint64(2 * p + 1)))
    u2 = _unit(_mix64(base + _GOLDEN * np.uint64(2 * p + 2)))
    r = math.sqrt(-2.0 * math.log(u1))
    return r * math.cos(2.0 * math.pi * u2), r * math.sin(2.0 * math.pi * u2)


@njit(cache=True, nogil=True)
def publish(act, hist, j, s0):
    """Make the actuals of run step j (bundle step s0 + j) known: the step has begun."""
    k = s0 + j
    for s in range(act.shape[0]):
        for d in range(act.shape[1]):
            hist[s, d, k] = act[s, d, k]


@njit(cache=True, nogil=True)
def issue_at(act, fci, known, inc, par, iopt, s, ki, n_leads):
    """The forecast of signal s (0 carbon, 1 price) issued at bundle step ki (an issue step) for leads
    1..n_leads, into ``fci[s]`` (lead h at index h - 1).

    Lead h targets bundle step t = ki + h: NaN past the bundle's end; the actual when t was known at ki
    (a published day-ahead price); otherwise the model's value -- ``oracle``: the actual;
    ``persistence``: the last value known at ki; ``seasonal_naive`` (period P = 1 day or 1 week): the
    value at the latest step t - m P known at ki (persistence when that is before the bundle's start);
    ``calibrated``: the actual with the error e(h) = sum over l <= h of inc[l - 1] z_l, z_l standard
    normals of this issue's stream, applied as actual (1 + e) or actual + e (par), never below the floor."""
    model = iopt[IO_MODEL]
    jk = ki - iopt[IO_S0] + iopt[IO_KPAD]  # index of the issue step in ``known``
    n_all = act.shape[2]
    period = STEPS_PER_DAY if model == FC_SEASONAL_DAY else 7 * STEPS_PER_DAY
    mult = par[s, PAR_MULT] > 0.5
    floor = par[s, PAR_FLOOR]
    for d in range(act.shape[1]):
        kn = min(max(known[s, d, jk], ki), n_all - 1)
        last = act[s, d, kn]
        base = stream_base(iopt[IO_KEY], s, d, ki) if model == FC_CALIBRATED else np.uint64(0)
        e = 0.0
        z2 = 0.0
        for h in range(1, n_leads + 1):
            t = ki + h
            if t >= n_all:
                fci[s, d, h - 1] = np.nan
                continue
            if model == FC_CALIBRATED:
                if h % 2 == 1:
                    z1, z2 = _normal_pair(base, (h - 1) // 2)
                    e += inc[s, d, h - 1] * z1
                else:
                    e += inc[s, d, h - 1] * z2
            if t <= kn or model == FC_ORACLE:
                v = act[s, d, t]
            elif model == FC_PERSISTENCE:
                v = last
            elif model == FC_CALIBRATED:
                v = act[s, d, t] * (1.0 + e) if mult else act[s, d, t] + e
                if v < floor:
                    v = floor
            else:  # seasonal naive
                tp = t - ((t - kn + period - 1) // period) * period
                v = act[s, d, tp] if tp >= 0 else last
            fci[s, d, h - 1] = v


@njit(cache=True, nogil=True)
def issue_forecast(act, fc, fci, known, inc, par, iopt, stamp, pub, s, j, n_leads):
    """What is known at run step j (bundle step k) of signal s's next n_leads steps, into ``fc[s]`` (and
    the count of published leads into ``pub[s]``): the forecast issued at the latest issue step
    k_i = k - k mod IO_EVERY (:func:`issue_at`, kept in ``fci`` until the next issue), re-indexed to
    leads from now -- lead h is the issued lead h + k - k_i, NaN beyond the issued horizon H -- except
    the steps whose actual is known now (day-ahead prices published since k_i), which are actuals.
    Does nothing when ``fc`` already holds this step's view for at least as many leads. With an issue
    every step (IO_EVERY = 1) this is the forecast issued now."""
    hmax = iopt[IO_H]
    k = iopt[IO_S0] + j
    n_leads = min(max(n_leads, 0), hmax)
    if stamp[s, 2] == k and stamp[s, 3] >= n_leads:
        return
    every = max(iopt[IO_EVERY], 1)
    ki = k - k % every
    age = k - ki
    if not (stamp[s, 0] == ki and stamp[s, 1] >= min(n_leads + age, hmax)):
        # issue enough leads for this view and the same view at every step until the next issue
        want = min(n_leads + every - 1, hmax)
        issue_at(act, fci, known, inc, par, iopt, s, ki, want)
        stamp[s, 0] = ki
        stamp[s, 1] = want
    n_all = act.shape[2]
    jk = j + iopt[IO_KPAD]
    for d in range(act.shape[1]):
        kn = min(max(known[s, d, jk], k), n_all - 1)
        pub[s, d] = min(kn - k, hmax)
        for h in range(1, n_leads + 1):
            t = k + h
            if t >= n_all:
                v = np.nan
            elif t <= kn:
                v = act[s, d, t]
            elif h + age <= hmax:
                v = fci[s, d, h + age - 1]
            else:
                v = np.nan
            fc[s, d, h - 1] = v
    stamp[s, 2] = k
    stamp[s, 3] = n_leads


@njit(cache=True, nogil=True)
def issue_all(act, fc, fci, known, inc, par, iopt, stamp, pub, j):
    """Every signal's forecast known at run step j over the whole horizon (what the policy views get)."""
    for s in range(fc.shape[0]):
        issue_forecast(act, fc, fci, known, inc, par, iopt, stamp, pub, s, j, iopt[IO_H])


@njit(cache=True, nogil=True)
def greener_threshold(hist, fc, k, window, q, thr):
    """thr[d] = the q-quantile (linear, as numpy) of datacenter d's carbon intensity over the window
    of ``window`` steps starting now: the known value of step k and the forecast of the next
    window - 1 steps (leads past the bundle's end are left out), i.e. what was known at step k.
    With the ``oracle`` model this is exactly :func:`rolling_quantile` of the actual series."""
    window = max(window, 1)
    qq = q if q >= 0.0 else 0.0  # (NaN -> 0)
    if qq > 1.0:
        qq = 1.0
    buf = np.empty(window)
    for d in range(hist.shape[1]):
        buf[0] = hist[SIG_CARBON, d, k]
        m = 1
        for h in range(1, min(window, fc.shape[2] + 1)):
            v = fc[SIG_CARBON, d, h - 1]
            if v == v:  # (not NaN: past the bundle's end)
                buf[m] = v
                m += 1
        pos = qq * (m - 1)
        lo = int(math.floor(pos))
        # the lo-th smallest value, then the next one (the smallest of the rest): the two order statistics a
        # full sort would give, in linear time (this runs for every datacenter at every step)
        a = _select(buf, m, lo)
        b = a
        if lo + 1 < m:
            b = buf[lo + 1]
            for r in range(lo + 2, m):
                if buf[r] < b:
                    b = buf[r]
        thr[d] = a + (b - a) * (pos - lo)


@njit(cache=True, nogil=True)
def _select(a, m, kth):
    """Rearrange a[:m] in place so that a[kth] is its kth smallest value (quickselect, Hoare partition,
    median-of-three pivot), everything before it <= it and everything after it >= it; returns a[kth]."""
    lo, hi = 0, m - 1
    while hi > lo:
        mid = (lo + hi) // 2
        if a[mid] < a[lo]:
            a[mid], a[lo] = a[lo], a[mid]
        if a[hi] < a[lo]:
            a[hi], a[lo] = a[lo], a[hi]
        if a[hi] < a[mid]:
            a[hi], a[mid] = a[mid], a[hi]
        pivot = a[mid]
        i, j = lo, hi
        while i <= j:
            while a[i] < pivot:
                i += 1
            while a[j] > pivot:
                j -= 1
            if i <= j:
                a[i], a[j] = a[j], a[i]
                i += 1
                j -= 1
        if kth <= j:
            hi = j
        elif kth >= i:
            lo = i
        else:
            break
    return a[kth]


@njit(cache=True, nogil=True)
def rolling_quantile(x, window, q):
    """q-quantile (linear, as numpy) of x[k : k + window] (clipped at the end), per row."""
    n_dc, n = x.shape
    out = np.empty((n_dc, n))
    # Guards (the options are validated before a run; the kernel does not rely on it): a window
    # of at least 1 step, a buffer no longer than the series, and q in [0, 1] (NaN -> 0), so that
    # lo and hi below are always in 0 .. m - 1. None of these changes a valid call's result.
    window = max(window, 1)
    qq = q if q >= 0.0 else 0.0  # (NaN -> 0)
    if qq > 1.0:
        qq = 1.0
    buf = np.empty(min(window, max(n, 1)))
    for d in range(n_dc):
        for k in range(n):
            m = min(window, n - k)
            for t in range(m):
                buf[t] = x[d, k + t]
            v = np.sort(buf[:m])
            pos = qq * (m - 1)  # in [0, m - 1]: lo in 0 .. m - 1 (m >= 1)
            lo = int(math.floor(pos))
            hi = min(lo + 1, m - 1)
            out[d, k] = v[lo] + (v[hi] - v[lo]) * (pos - lo)
    return out
