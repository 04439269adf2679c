"""The LP's own assignment of whole tasks: each task placed where its class's fluid work runs in the LP's solution
(docs/optimum.md "The upper bound: the best schedule found").

The LP (``optimum.solve``, cumulative formulation) runs each class's work (one resource of the tasks of one origin,
``optimum.classes``) as fluid cells y[class, datacenter, step]. Within a class the members differ only in their
release and deadline, so the fluid work is read as a single queue would run it: the class's cells, step by step
(datacenters within a step, in order), make one cumulative curve of resource-steps, and walking it, the members
already released take the work earliest deadline first; each member's cell is the one where the work of the members
taken before it ends (its start position on that curve). A member is never placed before its release, so the plan
made of it (``upper.follow_plan``) need not move members released late to their last step, as the earlier reading,
members in deadline order at their curve positions whatever their release, did (on the README week its best
schedule was 161.5 kg higher after its refills; docs/optimum.md). A task's class is that of its GPUs
(a GPU task) or its cores (a CPU-only one). A member the curve does not reach (work the LP leaves outside the
window, or a release after the class's last cell with work) gets no cell (site -1). The result is a start
(datacenter, step) per task: it packs the sites as the LP does (the rounding's greedy slot search,
``optimum.rounding``, does not: it runs work in Singapore that the LP runs nowhere); the upper bound's plan makes it
meet the deadlines.
"""

from __future__ import annotations

import heapq

import numpy as np
from numba import njit

#: work below this (resource-steps) is the solver's noise, not a cell's work
EPS_WORK = 1e-9


@njit(cache=True, nogil=True)
def _walk(cell_lo, cell_hi, c_dc, c_step, c_y, mem_lo, mem_hi, m_rel, m_dl, m_w, site, step):
    """Walk each class's cells (``cell_lo[k]:cell_hi[k]``, in curve order) with its members
    (``mem_lo[k]:mem_hi[k]``, by release): at each cell, the released members join a heap by deadline (``heapq``,
    which Numba compiles), and members leave it earliest deadline first while the work taken is below the curve's
    value there. Writes ``site`` and ``step`` (by position in the members' order)."""
    for k in range(cell_lo.shape[0]):
        heap = [(0.0, 0)]  # (deadline, member position): ties go to the earlier position (the earlier release)
        heap.pop()  # (seeded only to give Numba the items' type)
        p = mem_lo[k]
        cum, taken = 0.0, 0.0
        for q in range(cell_lo[k], cell_hi[k]):
            cum += c_y[q]
            while p < mem_hi[k] and m_rel[p] <= c_step[q]:
                heapq.heappush(heap, (m_dl[p], p))
                p += 1
            while len(heap) > 0 and taken < cum - EPS_WORK:
                i = heapq.heappop(heap)[1]
                site[i] = c_dc[q]
                step[i] = c_step[q]
                taken += m_w[i]


def follow_cells(cls_of_task: np.ndarray, release: np.ndarray, deadline: np.ndarray, weight: np.ndarray,
                 cell_cls: np.ndarray, cell_dc: np.ndarray, cell_step: np.ndarray,
                 y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each task's (datacenter, step) on its class's cumulative fluid curve, released members earliest deadline
    first (the module's docs). ``cls_of_task``: the task's class (-1: none); ``release``: the first step it may
    take (the cells' step numbering); ``deadline``: any monotone key (NaN: none, after every other); ``weight``:
    its resource-steps in the cells' units; ``cell_*`` and ``y``: the LP's cells and their values. Returns
    (site, step), -1 where the task gets no cell."""
    m = cls_of_task.shape[0]
    site = np.full(m, -1, np.int64)
    step = np.full(m, -1, np.int64)
    live = np.flatnonzero(y > EPS_WORK)
    has = np.flatnonzero(cls_of_task >= 0)
    if live.size == 0 or has.size == 0:
        return site, step
    c_cls, c_dc, c_step, c_y = cell_cls[live], cell_dc[live], cell_step[live], y[live]
    co = np.lexsort((c_dc, c_step, c_cls))  # by class, then step, then datacenter: the curve's order
    c_cls, c_dc, c_step, c_y = c_cls[co], c_dc[co], c_step[co], c_y[co]
    to = has[np.lexsort((deadline[has], release[has], cls_of_task[has]))]  # by class, then release (then deadline)
    m_cls = cls_of_task[to]
    classes = np.intersect1d(c_cls, m_cls)
    cell_lo, cell_hi = np.searchsorted(c_cls, classes, "left"), np.searchsorted(c_cls, classes, "right")
    mem_lo, mem_hi = np.searchsorted(m_cls, classes, "left"), np.searchsorted(m_cls, classes, "right")
    s_site = np.full(to.shape[0], -1, np.int64)
    s_step = np.full(to.shape[0], -1, np.int64)
    dl = np.where(np.isnan(deadline[to]), np.inf, deadline[to])
    _walk(cell_lo, cell_hi, c_dc.astype(np.int64), c_step.astype(np.int64), c_y.astype(np.float64), mem_lo, mem_hi,
          release[to].astype(np.int64), dl.astype(np.float64), weight[to].astype(np.float64), s_site, s_step)
    site[to] = s_site
    step[to] = s_step
    return site, step


__all__ = ["follow_cells"]
