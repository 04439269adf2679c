"""Wet-bulb temperature from dry-bulb temperature and relative humidity (Stull 2011): one formula.

Stull, R. (2011). Wet-Bulb Temperature from Relative Humidity and Air Temperature. J. Appl. Meteor.
Climatol. 50, 2267-2269. Accurate to about ±1 °C for RH 5-99 % and −20…50 °C at sea-level
pressure. The result is capped at the dry-bulb temperature: a wet-bulb can never exceed it.

The arctangents are ``portable_math.arctan`` and RH^1.5 is RH·√RH, so the warehouse's ``wetbulb_c``
column (computed with it at ingest) and every bundle built from it have the same bits on every
machine. Takes floats or arrays; returns an array (0-d for scalars: ``float()`` it).
"""

from __future__ import annotations

import numpy as np

from gridshift.portable_math import arctan


def stull_wetbulb(temp_c, rh_pct) -> np.ndarray:
    """Wet-bulb (°C) of ``temp_c`` (°C) at ``rh_pct`` (%), capped at ``temp_c``."""
    t, rh = np.asarray(temp_c, dtype=np.float64), np.asarray(rh_pct, dtype=np.float64)
    tw = (t * arctan(0.151977 * np.sqrt(rh + 8.313659)) + arctan(t + rh) - arctan(rh - 1.676331)
          + 0.00391838 * (rh * np.sqrt(rh)) * arctan(0.023101 * rh) - 4.686035)
    return np.minimum(tw, t)
