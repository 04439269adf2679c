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
schedule was 161.5 kg higher after the same refills; docs/optimum.md). A task's class is that of its GPUs
(a GPU task) or its cores (a CPU-only one). A member the curve does not reach (work the LP leaves outside the
window, or a release after the class's last cell with work) gets no cell (site -1). The result is a start
(datacenter, step) per task: it packs the sites as the LP does (the rounding's greedy slot search,
``optimum.rounding``, does not: it runs work in Singapore that the LP runs nowhere); the upper bound's plan makes it
meet the deadlines.
"""

from __future__ import annotations

import numpy as np
from numba import njit

#: work below this (resource-steps) is the solver's noise, not a cell's work
EPS_WORK = 1e-9


@njit(cache=True, nogil=True)
def _push(hd, hi, size, d, i):
    """Push (deadline ``d``, member ``i``) onto the binary min-heap ``hd``/``hi`` of ``size`` entries; ties in the
    deadline go to the lower member index (the earlier release)."""
    k = size
    hd[k] = d
    hi[k] = i
    while k > 0:
        p = (k - 1) // 2
        if hd[p] < hd[k] or (hd[p] == hd[k] and hi[p] < hi[k]):
            break
        hd[p], hd[k] = hd[k], hd[p]
        hi[p], hi[k] = hi[k], hi[p]
        k = p
    return size + 1


@njit(cache=True, nogil=True)
def _pop(hd, hi, size):
    """The member at the top of the heap, and the heap's new size."""
    top = hi[0]
    size -= 1
    hd[0] = hd[size]
    hi[0] = hi[size]
    k = 0
    while True:
        a, b, s = 2 * k + 1, 2 * k + 2, k
        if a < size and (hd[a] < hd[s] or (hd[a] == hd[s] and hi[a] < hi[s])):
            s = a
        if b < size and (hd[b] < hd[s] or (hd[b] == hd[s] and hi[b] < hi[s])):
            s = b
        if s == k:
            break
        hd[s], hd[k] = hd[k], hd[s]
        hi[s], hi[k] = hi[k], hi[s]
        k = s
    return top, size


@njit(cache=True, nogil=True)
def _walk(cell_lo, cell_hi, c_dc, c_step, c_y, mem_lo, mem_hi, m_rel, m_dl, m_w, site, step):
    """Walk each class's cells (``cell_lo[k]:cell_hi[k]``, in curve order) with its members
    (``mem_lo[k]:mem_hi[k]``, by release): at each cell, the released members join a heap by deadline, and members
    leave it earliest deadline first while the work taken is below the curve's value there. Writes ``site`` and
    ``step`` (by position in the members' order)."""
    hd = np.empty(m_rel.shape[0])
    hi = np.empty(m_rel.shape[0], np.int64)
    for k in range(cell_lo.shape[0]):
        p, size = mem_lo[k], 0
        cum, taken = 0.0, 0.0
        for q in range(cell_lo[k], cell_hi[k]):
            cum += c_y[q]
            while p < mem_hi[k] and m_rel[p] <= c_step[q]:
                size = _push(hd, hi, size, m_dl[p], p)
                p += 1
            while size > 0 and taken < cum - EPS_WORK:
                i, size = _pop(hd, hi, size)
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
