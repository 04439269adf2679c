"""Wet-bulb temperature from dry-bulb and relative humidity (Stull 2011), as a polars expression.

Stull, R. (2011). Wet-Bulb Temperature from Relative Humidity and Air Temperature. J. Appl. Meteor.
Climatol. 50, 2267-2269. Accurate to about ±1 °C for RH 5-99 % and −20…50 °C at sea-level
pressure; the result is capped at the dry-bulb temperature (wet-bulb can never exceed it).
"""

from __future__ import annotations

import polars as pl


def stull_wetbulb(temp_c: pl.Expr, rh_pct: pl.Expr) -> pl.Expr:
    t, rh = temp_c, rh_pct
    tw = (
        t * (0.151977 * (rh + 8.313659).sqrt()).arctan()
        + (t + rh).arctan()
        - (rh - 1.676331).arctan()
        + 0.00391838 * rh.pow(1.5) * (0.023101 * rh).arctan()
        - 4.686035
    )
    return pl.min_horizontal(tw, t)
