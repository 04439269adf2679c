"""Origin sampling (docs/model.md §2): each task's origin drawn from P(origin = d) ∝ weight_d x
activity_d(local hour). The model itself (activity, probabilities) is ``gridshift.origin``, shared with
the bundle builder's sizing."""

from __future__ import annotations

import numpy as np
from numba import njit

from gridshift.origin import ACTIVITY_OFF, ACTIVITY_ON, BUSINESS_END_H, BUSINESS_START_H, activity, probabilities

from .realisation import uniforms_from

__all__ = ["ACTIVITY_OFF", "ACTIVITY_ON", "BUSINESS_END_H", "BUSINESS_START_H", "activity", "probabilities",
           "sample_origins"]


def sample_origins(rng: np.random.Generator, step_index: np.ndarray, probs: np.ndarray, first: int = 0
                   ) -> np.ndarray:
    """Draw one origin per task from the (n_dc, n_steps) probabilities of its arrival step.

    Exactly one uniform per task is drawn, in task order, so the result depends only on the
    generator state and the tasks (never on the policy). ``first``: the tasks are those from index
    ``first`` on of a longer sequence, whose first ``first`` uniforms are skipped, not drawn (a run's
    window gets the origins its tasks have in the whole year).
    """
    u = uniforms_from(rng, first, step_index.shape[0])
    origin = np.zeros(step_index.shape[0], dtype=np.int32)
    if step_index.shape[0] == 0:
        return origin
    # cumulative probabilities of the steps the tasks arrive in only (each step's column is its own)
    s_lo = int(step_index.min())
    cum = np.cumsum(probs[:, s_lo:int(step_index.max()) + 1], axis=0)  # (n_dc, steps spanned)
    cum[-1] = 1.0
    _count_bounds(u, np.ascontiguousarray(cum[:-1].T), step_index - s_lo, origin)
    return origin


@njit(cache=True, nogil=True)
def _count_bounds(u, cum_t, col, origin):
    """origin[i] = the count of the bounds ``cum_t[col[i], :]`` (the cumulative probabilities of
    datacenters 0 .. n_dc - 2 at task i's step, step-major) that are <= u[i]: the inverse CDF, one
    pass over the tasks (numpy needed a gather of every task per datacenter, n_dc - 1 passes)."""
    for i in range(u.shape[0]):
        row = cum_t[col[i]]
        x = u[i]
        n = 0
        for d in range(row.shape[0]):
            if x >= row[d]:
                n += 1
        origin[i] = n
