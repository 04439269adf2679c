"""Chunked stepping: a run's arrays hold its live tasks, not its window's.

A run given ``chunk_steps`` (``sim_core.run``) takes its window's tasks one chunk of arrivals at a time: it steps
to the first step of the next chunk, then :func:`compact` drops the tasks that are done (a final status,
``layout.ST_FINAL``, and no index field refers to them) from the engine's arrays, writes their per-task results
into the run's per-task outputs (:class:`Outputs`, at their index in the window), renumbers every field that holds
a task index and appends the next chunk's tasks. What each field holds is declared once beside the namedtuples
(``layout.TASK_KIND``, ``layout.STATE_KIND``, ``layout.LIST_COUNT``, ``layout.SC_TASK_INDEX``), so compaction is
one generic pass over them. A task keeps the origin and uniform it has in the whole window
(``simulator.window_tasks`` takes the same draws for any interval) and the engine sees its live tasks in the same
order, so every result is that of the one-chunk run, bit for bit (tests/unit/sim_core/test_chunks.py).

Runs with flexible-task controls (the stateful baselines, a user's jitted policy) keep one chunk: their per-task
flexible state and a baseline's own per-task plan are not yet declared for compaction.
"""

from __future__ import annotations

import numpy as np

from .engine import layout as L

#: the fields of ``engine.Tasks`` and ``engine.State`` that no result reads (dropped when the stepping ends, and
#: never part of a chunked run's per-task outputs)
ENGINE_ONLY_TASK_FIELDS = ("mem", "bw", "u_rand", "ckpt", "mthr", "flexible", "ds", "ds_gb")
ENGINE_ONLY_STATE_FIELDS = ("nxt", "seq", "pend")
#: the per-task fields the results read: what a task leaving the arrays writes into the run's outputs
TASK_OUT = tuple(f for f in L.Tasks._fields if f not in ENGINE_ONLY_TASK_FIELDS)
STATE_OUT = tuple(f for f, k in L.STATE_KIND.items() if k in (L.K_VALUE, L.K_LINK)
                  and f not in ENGINE_ONLY_STATE_FIELDS)


class Outputs:
    """The per-task results of a chunked run's window (``n`` tasks), filled as its tasks leave the arrays: one
    array per field of :data:`TASK_OUT` and :data:`STATE_OUT`, allocated at the first write with the dtype
    of the engine's array."""

    def __init__(self, n: int):
        self.n = n
        self.tasks: dict[str, np.ndarray] = {}
        self.state: dict[str, np.ndarray] = {}

    def put(self, rows: np.ndarray, T, S, sel: np.ndarray) -> None:
        """Write the tasks ``sel`` (a mask or indices into the engine's arrays) at window indices ``rows``."""
        for fields, src, dst in ((TASK_OUT, T, self.tasks), (STATE_OUT, S, self.state)):
            for f in fields:
                a = getattr(src, f)
                if f not in dst:
                    dst[f] = np.empty(self.n, a.dtype)
                dst[f][rows] = a[sel]


def referenced(S, n: int) -> np.ndarray:
    """Which of the ``n`` tasks in the arrays a field of ``S`` refers to (a queue or transit link, a list entry)."""
    ref = np.zeros(n, bool)
    for name, kind in L.STATE_KIND.items():
        a = getattr(S, name)
        if name in L.LIST_COUNT:
            v = a[:int(S.sc[L.LIST_COUNT[name]])]
        elif kind in (L.K_LINK, L.K_INDEX):
            v = a[a >= 0]
        else:
            continue
        ref[v] = True
    return ref


def _check_one_slot(S, n: int) -> None:
    """A run with per-task flexible state keeps one chunk (module docstring)."""
    for name, kind in L.STATE_KIND.items():
        if kind == L.K_FLEX and getattr(S, name).shape[0] != 1:
            raise ValueError(f"State.{name} is per task (a run with flexible-task controls): it runs in one chunk")


def compact(T, S, gidx: np.ndarray, out: Outputs, new_T, first: int):
    """The engine's arrays without their done tasks (written into ``out``) and with the chunk ``new_T`` appended,
    whose first task is task ``first`` of the window: ``(T, S, gidx)``, ``gidx`` the window index of every task
    in the arrays. Every index field is renumbered; the tasks kept stay in their order, before the new ones."""
    n = T.arrival.shape[0]
    _check_one_slot(S, n)
    leave = np.isin(S.status, L.ST_FINAL) & ~referenced(S, n)
    out.put(gidx[leave], T, S, leave)
    keep = ~leave
    new_pos = np.cumsum(keep, dtype=np.int64) - 1  # (a kept task's index after the compaction)
    n_keep = int(new_pos[-1]) + 1 if n else 0
    m = new_T.arrival.shape[0]
    fresh = L.task_arrays(m)

    def renumber(v: np.ndarray) -> np.ndarray:
        live = v >= 0
        if not keep[v[live]].all():
            raise AssertionError("a task an index field refers to was dropped")
        w = v.copy()
        w[live] = new_pos[v[live]]
        return w

    T2 = L.Tasks(*(np.concatenate([a[keep], b]) for a, b in zip(T, new_T, strict=True)))
    upd = {}
    for name, kind in L.STATE_KIND.items():
        a = getattr(S, name)
        if kind == L.K_VALUE:
            upd[name] = np.concatenate([a[keep], fresh[name]])
        elif kind == L.K_LINK:
            upd[name] = np.concatenate([renumber(a[keep]), fresh[name]])
        elif kind == L.K_INDEX:
            upd[name] = renumber(a)
        elif kind == L.K_LIST:
            k = int(S.sc[L.LIST_COUNT[name]])
            b = np.zeros(max(n_keep + m, 1), a.dtype)
            b[:k] = renumber(a[:k])
            upd[name] = b
    for slot in L.SC_TASK_INDEX:  # (in place: the counters are the run's)
        S.sc[slot] = int(keep[:int(S.sc[slot])].sum())
    gidx2 = np.concatenate([gidx[keep], np.arange(first, first + m, dtype=np.int64)])
    return T2, S._replace(**upd), gidx2


def finish(T, S, gidx: np.ndarray, out: Outputs):
    """The run's ``(Tasks, State)`` for its results once it has stepped: every task still in the arrays written
    into ``out``, the per-task fields the results read replaced by the window's outputs, the rest dropped."""
    out.put(gidx, T, S, np.arange(T.arrival.shape[0]))
    T2 = T._replace(**dict.fromkeys(ENGINE_ONLY_TASK_FIELDS), **out.tasks)
    S2 = S._replace(**dict.fromkeys(ENGINE_ONLY_STATE_FIELDS), **out.state)
    return T2, S2
