"""The fan law the terms share (server fans, CRAC fans, cooling-tower and dry-cooler fans)."""

from __future__ import annotations

from numba import njit


@njit(cache=True, nogil=True)
def fan_power(p_ref, v, v_ref):
    """Cubic fan law P = P_ref (V / V_ref)^3."""
    r = v / v_ref
    return p_ref * r * r * r
