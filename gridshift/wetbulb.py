"""Wet-bulb temperature from dry-bulb temperature and relative humidity (Stull 2011): one formula.

Stull, R. (2011). Wet-Bulb Temperature from Relative Humidity and Air Temperature. J. Appl. Meteor.
Climatol. 50, 2267-2269. Accurate to about ±1 °C for RH 5-99 % and −20…50 °C at sea-level
pressure. The result is capped at the dry-bulb temperature: a wet-bulb can never exceed it.

Written with NumPy ufuncs only, so the same function serves floats, NumPy arrays and polars
expressions (polars dispatches the ufuncs to its own kernels): the ingest computes the warehouse's
``wetbulb_c`` column with it, and the physics tests use it for their operating points.
"""

from __future__ import annotations

import numpy as np


def stull_wetbulb(temp_c, rh_pct):
    """Wet-bulb (°C) of ``temp_c`` (°C) at ``rh_pct`` (%), capped at ``temp_c``."""
    t, rh = temp_c, rh_pct
    tw = (t * np.arctan(0.151977 * np.sqrt(rh + 8.313659)) + np.arctan(t + rh) - np.arctan(rh - 1.676331)
          + 0.00391838 * rh ** 1.5 * np.arctan(0.023101 * rh) - 4.686035)
    return np.minimum(tw, t)
