"""Where demand originates (docs/model.md §2): P(origin = d) ∝ weight_d × activity_d(local hour).

Declared once and used by both the simulator (``sim_core`` samples each task's origin from it) and
the bundle builder (``scenario_builder`` sizes each site for the demand the model will send it).
Local time always comes from the site's IANA time zone, DST included.
"""

from __future__ import annotations

import datetime as dt

import numpy as np
import polars as pl

BUSINESS_START_H = 8
BUSINESS_END_H = 20
ACTIVITY_ON = 1.0
ACTIVITY_OFF = 0.3


def activity(local_hour, *, start_h: int = BUSINESS_START_H, end_h: int = BUSINESS_END_H,
             on: float = ACTIVITY_ON, off: float = ACTIVITY_OFF) -> np.ndarray:
    """Activity factor: ``on`` in local hours [start_h, end_h), ``off`` otherwise."""
    h = np.asarray(local_hour)
    # (a window with start_h > end_h wraps across midnight)
    business = (h >= start_h) & (h < end_h) if start_h <= end_h else (h >= start_h) | (h < end_h)
    return np.where(business, on, off).astype(np.float64)


def probabilities(weights, local_hour, **activity_kw) -> np.ndarray:
    """Origin probabilities. ``weights`` (n_dc,), ``local_hour`` (n_dc,) or (n_dc, n_steps);
    returns the same shape as ``local_hour``, normalised over the datacenter axis."""
    w = np.asarray(weights, dtype=np.float64)
    a = activity(local_hour, **activity_kw)
    raw = (w.reshape((-1,) + (1,) * (a.ndim - 1))) * a
    tot = raw.sum(axis=0, keepdims=True)
    if np.any(tot <= 0):
        raise ValueError("origin weights x activity sum to zero")
    return raw / tot


def local_hours(timezones: list[str], start_utc: dt.datetime, n_steps: int, step_s: int) -> np.ndarray:
    """Local hour (0-23, DST aware, from the IANA zone) of every step start, (n_dc, n_steps) int8."""
    t0 = start_utc.replace(tzinfo=None)
    ts = pl.datetime_range(t0, t0 + dt.timedelta(seconds=step_s * (n_steps - 1)),
                           interval=f"{step_s}s", time_unit="us", time_zone="UTC", eager=True)
    out = np.empty((len(timezones), n_steps), dtype=np.int8)
    for i, tz in enumerate(timezones):
        out[i] = ts.dt.convert_time_zone(tz).dt.hour().to_numpy()
    return out
