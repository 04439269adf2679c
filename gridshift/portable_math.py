"""Elementary functions whose every bit is the same on every machine: exp, log, sin, cos, arcsin, arctan,
and a least-squares line.

Why: a bundle's id is the hash of its bytes, and its bytes must be a function of its inputs and
parameters only. NumPy's own ``np.exp``, ``np.log``, ``np.arctan``, ... are dispatched at run time to
the CPU's widest SIMD (on AVX-512 machines NumPy's AVX-512F/SVML kernels, elsewhere the C library's),
and the C library differs between systems: the same call gives results one unit in the last place
apart on two machines, and the synthetic workload's data sizes (a Gaussian copula through
``exp``/``log``) then gave two bundle ids for one input (``docs/bundles.md``, "One id on every
machine"). These functions use only IEEE-754 operations that are correctly rounded by definition
(``+ - * /``, ``sqrt``, ``rint``, ``frexp``, ``ldexp``), each a separate NumPy ufunc (no fused
multiply-add), so their results depend on nothing but their arguments.

The algorithms and coefficients are fdlibm's (Sun Microsystems, 1993; freely redistributable:
e_exp.c, e_log.c, k_sin.c, k_cos.c, e_asin.c, s_atan.c), with errors below about 1 ulp; the
argument reduction of ``sin``/``cos`` is the two-part Cody–Waite one, exact for |x| < 2**19 · π/2
(larger arguments are refused, not silently inexact). Vectorized over NumPy arrays; a scalar in gives
a 0-d array out (``float()`` it).
"""

from __future__ import annotations

import math

import numpy as np

_F = np.float64

# ---------------------------------------------------------------------------------------------- exp
_LN2_HI = 6.93147180369123816490e-01  # the high 32 bits of ln 2: k · _LN2_HI is exact for |k| < 2**20
_LN2_LO = 1.90821492927058770002e-10
_INV_LN2 = 1.44269504088896338700e00
_P1, _P2, _P3, _P4, _P5 = (1.66666666666666019037e-01, -2.77777777770155933842e-03, 6.61375632143793436117e-05,
                           -1.65339022054652515390e-06, 4.13813679705723846039e-08)
_EXP_MAX = 709.782712893383973096  # above: +inf
_EXP_MIN = -745.13321910194110842  # below: 0


def exp(x) -> np.ndarray:
    """e**x."""
    x = np.asarray(x, dtype=_F)
    with np.errstate(all="ignore"):
        xc = np.clip(x, -746.0, 710.0)  # keeps k small; the ends are set below
        k = np.rint(xc * _INV_LN2)
        hi = xc - k * _LN2_HI
        lo = k * _LN2_LO
        r = hi - lo
        t = r * r
        c = r - t * (_P1 + t * (_P2 + t * (_P3 + t * (_P4 + t * _P5))))
        y = 1.0 - ((lo - (r * c) / (2.0 - c)) - hi)
        # two steps, so neither an intermediate 2**k nor y · 2**k over/underflows before the last
        k1 = np.trunc(k / 2.0)
        out = np.ldexp(np.ldexp(y, k1.astype(np.int32)), (k - k1).astype(np.int32))
        out = np.where(x > _EXP_MAX, np.inf, np.where(x < _EXP_MIN, 0.0, out))
        return np.where(np.isnan(x), x, out)


# ---------------------------------------------------------------------------------------------- log
_LG = (6.666666666666735130e-01, 3.999999999940941908e-01, 2.857142874366239149e-01, 2.222219843214978396e-01,
       1.818357216161805012e-01, 1.531383769920937332e-01, 1.479819860511658591e-01)
_SQRT_HALF = 0.70710678118654752440


def log(x) -> np.ndarray:
    """Natural logarithm (nan below 0, -inf at 0)."""
    x = np.asarray(x, dtype=_F)
    with np.errstate(all="ignore"):
        m, e = np.frexp(x)  # x = m · 2**e, m in [0.5, 1): exact, subnormals included
        low = m < _SQRT_HALF
        m = np.where(low, m * 2.0, m)  # m in [√½, √2)
        dk = (e - low).astype(_F)
        f = m - 1.0  # exact (Sterbenz)
        hfsq = 0.5 * f * f
        s = f / (2.0 + f)
        z = s * s
        w = z * z
        t1 = w * (_LG[1] + w * (_LG[3] + w * _LG[5]))
        t2 = z * (_LG[0] + w * (_LG[2] + w * (_LG[4] + w * _LG[6])))
        out = dk * _LN2_HI - ((hfsq - (s * (hfsq + t1 + t2) + dk * _LN2_LO)) - f)
        out = np.where(x == 0.0, -np.inf, np.where(x < 0.0, np.nan, out))
        return np.where(np.isposinf(x) | np.isnan(x), x, out)


# ------------------------------------------------------------------------------------- sin and cos
_S = (-1.66666666666666324348e-01, 8.33333333332248946124e-03, -1.98412698298579493134e-04,
      2.75573137070700676789e-06, -2.50507602534068634195e-08, 1.58969099521155010221e-10)
_C = (4.16666666666666019037e-02, -1.38888888888741095749e-03, 2.48015872894767294178e-05,
      -2.75573143513906633035e-07, 2.08757232129817482790e-09, -1.13596475577881948265e-11)
_PIO2_1 = 1.57079632673412561417e00  # the first 33 bits of π/2: n · _PIO2_1 is exact for |n| < 2**20
_PIO2_1T = 6.07710050650619224932e-11
_INV_PIO2 = 6.36619772367581382433e-01
_TRIG_MAX = 2.0 ** 19 * 1.5707963267948966


def _kernel_sin(r: np.ndarray) -> np.ndarray:
    z = r * r
    v = z * r
    t = _S[1] + z * (_S[2] + z * (_S[3] + z * (_S[4] + z * _S[5])))
    return r + v * (_S[0] + z * t)


def _kernel_cos(r: np.ndarray) -> np.ndarray:
    z = r * r
    t = z * (_C[0] + z * (_C[1] + z * (_C[2] + z * (_C[3] + z * (_C[4] + z * _C[5])))))
    hz = 0.5 * z
    w = 1.0 - hz
    return w + (((1.0 - w) - hz) + z * t)


def _reduce(x: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """x = n · π/2 + r with |r| <= about π/4; n mod 4 as an int."""
    finite = np.isfinite(x)
    if np.any(np.abs(x[finite]) > _TRIG_MAX):
        raise ValueError(f"portable_math.sin/cos take |x| <= {_TRIG_MAX:.6g} (exact reduction); got "
                         f"{float(np.max(np.abs(x[finite]))):.6g}")
    n = np.rint(x * _INV_PIO2)
    r = (x - n * _PIO2_1) - n * _PIO2_1T
    return r, np.mod(np.where(finite, n, 0.0), 4.0).astype(np.int8)


def sin(x) -> np.ndarray:
    """sin(x), x in radians, |x| <= 2**19 · π/2."""
    x = np.asarray(x, dtype=_F)
    with np.errstate(all="ignore"):
        r, q = _reduce(x)
        s, c = _kernel_sin(r), _kernel_cos(r)
        out = np.select([q == 0, q == 1, q == 2], [s, c, -s], -c)
        return np.where(np.isfinite(x), out, np.nan)


def cos(x) -> np.ndarray:
    """cos(x), x in radians, |x| <= 2**19 · π/2."""
    x = np.asarray(x, dtype=_F)
    with np.errstate(all="ignore"):
        r, q = _reduce(x)
        s, c = _kernel_sin(r), _kernel_cos(r)
        out = np.select([q == 0, q == 1, q == 2], [c, -s, -c], s)
        return np.where(np.isfinite(x), out, np.nan)


# ------------------------------------------------------------------------------------------ arcsin
_PS = (1.66666666666666657415e-01, -3.25565818622400915405e-01, 2.01212532134862925881e-01,
       -4.00555345006794114027e-02, 7.91534994289814532176e-04, 3.47933107596021167570e-05)
_QS = (-2.40339491173441421878e00, 2.02094576023350569471e00, -6.88283971605453293030e-01,
       7.70381505559019352791e-02)
_PIO2_HI = 1.57079632679489655800e00
_PIO2_LO = 6.12323399573676603587e-17
_PIO4_HI = 7.85398163397448278999e-01


def _asin_pq(t: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    p = t * (_PS[0] + t * (_PS[1] + t * (_PS[2] + t * (_PS[3] + t * (_PS[4] + t * _PS[5])))))
    q = 1.0 + t * (_QS[0] + t * (_QS[1] + t * (_QS[2] + t * _QS[3])))
    return p, q


def arcsin(x) -> np.ndarray:
    """arcsin(x) in radians, nan outside [-1, 1]."""
    x = np.asarray(x, dtype=_F)
    with np.errstate(all="ignore"):
        ax = np.abs(x)
        # |x| < 0.5: x + x · R(x²)
        p, q = _asin_pq(x * x)
        small = x + x * (p / q)
        # 0.5 <= |x| <= 1: π/2 - 2 asin(√((1 - |x|) / 2))
        t = (1.0 - ax) * 0.5
        p, q = _asin_pq(t)
        s = np.sqrt(t)
        r = p / q
        near_one = _PIO2_HI - (2.0 * (s + s * r) - _PIO2_LO)
        # 0.5 <= |x| < 0.975: s split into a high part w (low 32 bits cleared) and a correction c
        w = (s.view(np.int64) & np.int64(-(1 << 32))).view(_F)
        c = (t - w * w) / (s + w)
        pp = 2.0 * s * r - (_PIO2_LO - 2.0 * c)
        mid = _PIO4_HI - (pp - (_PIO4_HI - 2.0 * w))
        big = np.where(ax >= 0.975, near_one, mid)
        out = np.where(ax < 0.5, small, np.copysign(big, x))
        return np.where(ax > 1.0, np.nan, out)


# ------------------------------------------------------------------------------------------ arctan
_ATANHI = (4.63647609000806093515e-01, 7.85398163397448278999e-01, 9.82793723247329054082e-01,
           1.57079632679489655800e00)
_ATANLO = (2.26987774529616870924e-17, 3.06161699786838301793e-17, 1.39033110312309984516e-17,
           6.12323399573676603587e-17)
_AT = (3.33333333333329318027e-01, -1.99999999998764832476e-01, 1.42857142725034663711e-01,
       -1.11111104054623557880e-01, 9.09088713343650656196e-02, -7.69187620504482999495e-02,
       6.66107313738753120669e-02, -5.83357013379057348645e-02, 4.97687799461593236017e-02,
       -3.65315727442169155270e-02, 1.62858201153657823623e-02)


def arctan(x) -> np.ndarray:
    """arctan(x) in radians."""
    x = np.asarray(x, dtype=_F)
    with np.errstate(all="ignore"):
        ax = np.abs(x)
        conds = [ax < 0.4375, ax < 0.6875, ax < 1.1875, ax < 2.4375]
        reduced = np.select(conds, [ax, (2.0 * ax - 1.0) / (2.0 + ax), (ax - 1.0) / (ax + 1.0),
                                    (ax - 1.5) / (1.0 + 1.5 * ax)], -1.0 / ax)
        idx = np.select(conds, [-1, 0, 1, 2], 3)
        z = reduced * reduced
        w = z * z
        s1 = z * (_AT[0] + w * (_AT[2] + w * (_AT[4] + w * (_AT[6] + w * (_AT[8] + w * _AT[10])))))
        s2 = w * (_AT[1] + w * (_AT[3] + w * (_AT[5] + w * (_AT[7] + w * _AT[9]))))
        hi = np.asarray(_ATANHI)[np.maximum(idx, 0)]
        lo = np.asarray(_ATANLO)[np.maximum(idx, 0)]
        out = np.where(idx < 0, reduced - reduced * (s1 + s2), hi - ((reduced * (s1 + s2) - lo) - reduced))
        return np.where(np.isnan(x), x, np.copysign(out, x))


# -------------------------------------------------------------------------------- least squares
def line_fit(x, y) -> tuple[float, float]:
    """(intercept, slope) of the least-squares line through (x, y), from centred sums with ``math.fsum``
    (correctly rounded, so the same bits on every machine; a LAPACK solve's depend on the BLAS kernel)."""
    xs, ys = [float(v) for v in np.asarray(x, dtype=_F)], [float(v) for v in np.asarray(y, dtype=_F)]
    n = len(xs)
    if n < 2 or n != len(ys):
        raise ValueError(f"a line needs at least 2 points and as many x as y (got {n} and {len(ys)})")
    mx, my = math.fsum(xs) / n, math.fsum(ys) / n
    dx, dy = [v - mx for v in xs], [v - my for v in ys]
    slope = math.fsum(a * b for a, b in zip(dx, dy, strict=True)) / math.fsum(a * a for a in dx)
    return my - slope * mx, slope
