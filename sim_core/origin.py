"""Origin sampling (SIMULATION.md §2): each task's origin drawn from P(origin = d) ∝ weight_d x
activity_d(local hour). The model itself (activity, probabilities) is ``gridshift.origin``, shared with
the bundle builder's sizing."""

from __future__ import annotations

import numpy as np

from gridshift.origin import ACTIVITY_OFF, ACTIVITY_ON, BUSINESS_END_H, BUSINESS_START_H, activity, probabilities

__all__ = ["ACTIVITY_OFF", "ACTIVITY_ON", "BUSINESS_END_H", "BUSINESS_START_H", "activity", "probabilities",
           "sample_origins"]


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
