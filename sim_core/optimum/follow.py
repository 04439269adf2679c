"""The LP's own assignment of whole tasks: each task placed where its class's fluid work runs in the LP's solution
(docs/optimum.md "The upper bound: the best schedule found").

The LP (``optimum.solve``, cumulative formulation) runs each class's work (one resource of the tasks of one origin,
``optimum.classes``) as fluid cells y[class, datacenter, step]. Within a class the members differ only in their
release and deadline, so the fluid work can be read in the order of the members' deadlines: the class's cells,
step by step (datacenters within a step), make one cumulative curve of resource-steps, and each member takes the
cell where the work of the members before it ends (its start position on that curve). A task's class is that of its
GPUs (a GPU task) or its cores (a CPU-only one). A member past the class's last cell (work the LP leaves outside the
window) gets no cell (site -1). The result is a start (datacenter, step) per task: it packs the sites as the LP
does (the rounding's greedy slot search, ``optimum.rounding``, does not: it runs work in Singapore that the LP runs
nowhere); the upper bound's plan makes it meet the deadlines (``upper.follow_plan``).
"""

from __future__ import annotations

import numpy as np


def follow_cells(cls_of_task: np.ndarray, deadline: np.ndarray, weight: np.ndarray, cell_cls: np.ndarray,
                 cell_dc: np.ndarray, cell_step: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each task's (datacenter, step) on its class's cumulative fluid curve (the module's docs). ``cls_of_task``:
    the task's class (-1: none); ``weight``: its resource-steps in the cells' units; ``cell_*`` and ``y``: the
    LP's cells and their values. Returns (site, step), -1 where the task gets no cell."""
    m = cls_of_task.shape[0]
    site = np.full(m, -1, np.int64)
    step = np.full(m, -1, np.int64)
    live = np.flatnonzero(y > 1e-9)
    if live.size == 0:
        return site, step
    c_cls, c_dc, c_step, c_y = cell_cls[live], cell_dc[live], cell_step[live], y[live]
    co = np.lexsort((c_dc, c_step, c_cls))
    c_cls, c_dc, c_step, c_y = c_cls[co], c_dc[co], c_step[co], c_y[co]
    n_cls = int(max(c_cls.max(), cls_of_task.max()) + 1)
    cum = np.cumsum(c_y)
    tot = np.bincount(c_cls, weights=c_y, minlength=n_cls)
    base = np.concatenate([[0.0], np.cumsum(tot)])[:-1]  # the curve's value where each class starts
    has = np.flatnonzero(cls_of_task >= 0)
    to = has[np.lexsort((deadline[has], cls_of_task[has]))]  # by class, then deadline
    c = cls_of_task[to]
    w = weight[to]
    first = np.r_[True, c[1:] != c[:-1]]
    csum = np.cumsum(w)
    before = csum - w - np.maximum.accumulate(np.where(first, csum - w, 0.0))  # members' work before it
    ok = before < tot[c] - 1e-9
    at = np.searchsorted(cum, base[c] + before, side="right")
    at = np.minimum(at, cum.shape[0] - 1)
    ok &= c_cls[at] == c
    site[to[ok]] = c_dc[at[ok]]
    step[to[ok]] = c_step[at[ok]]
    return site, step


__all__ = ["follow_cells"]
