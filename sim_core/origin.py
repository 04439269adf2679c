"""Origin sampling (SIMULATION.md §2): P(origin = d) ∝ weight_d x activity_d(local hour)."""

from __future__ import annotations

import numpy as np

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


def sample_origins(rng: np.random.Generator, step_index: np.ndarray, probs: np.ndarray) -> np.ndarray:
    """Draw one origin per task from the (n_dc, n_steps) probabilities of its arrival step.

    Exactly one uniform per task is drawn, in task order, so the result depends only on the
    generator state and the tasks (never on the policy).
    """
    n_dc = probs.shape[0]
    u = rng.random(step_index.shape[0])
    cum = np.cumsum(probs, axis=0)  # (n_dc, n_steps)
    cum[-1] = 1.0
    origin = np.zeros(step_index.shape[0], dtype=np.int32)
    # count of cumulative bounds <= u (vectorised searchsorted per row)
    for d in range(n_dc - 1):
        origin += (u >= cum[d, step_index]).astype(np.int32)
    return origin
