"""The workload realisation of a run: which weeks of the bundle's workload make up the year.

A bundle's year of tasks is one realisation of its workload model: the trace's weeks tiled onto the
year (docs/workload.md). A run's seed draws another one, so that the spread of a policy's results
over seeds (``compare``'s confidence intervals) covers the variability of the workload, not only of
the task origins:

``weeks`` (default)
    A block bootstrap over whole UTC weeks: every week slot of the run's year takes the tasks of one
    full week of the bundle drawn uniformly with replacement, shifted in time by the whole weeks
    between them (so weekday, hour of day and the arrivals' order inside a week are kept). The last,
    partial week of the year takes the beginning of its drawn week. A bundle shorter than two full
    weeks has nothing to draw from and is used as it is.
``origins``
    The bundle's tasks as they are; the seed only draws origins (and the ``random`` policy's
    numbers): the paired design of a comparison that wants identical demand across seeds.

Every policy run with the same seed sees the same realisation, so a comparison of policies stays
paired per seed either way. A realised task keeps its bundle row (``source``) and gets the id
``task_id * 64 + week slot`` (unique; the bundle's id is ``realised_id // 64``).
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

from gridshift import run_options as R

WEEK_S = 7 * 86400.0
MODES = R.get("workload").choices  # the run option ``workload``'s choices (gridshift.run_options)
ID_STRIDE = 64  # > 53 week slots of a year


def realise(arrival_s: np.ndarray, horizon_s: float, rng: np.random.Generator, mode: str = "weeks"
            ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(source row per realised task, its arrival in s since the bundle start, its week slot), sorted by
    arrival (ties in bundle order). ``arrival_s`` is the bundle's sorted arrivals; ``horizon_s`` the
    bundle's length. Exactly ``n_slots`` integers are drawn from ``rng`` in ``weeks`` mode, none otherwise."""
    return realise_window(arrival_s, horizon_s, rng, mode, -np.inf, np.inf).rows


class Window(NamedTuple):
    """The realised tasks of a window: ``rows`` = (source row, arrival s, week slot) of those arriving in
    it, ``first`` = the index of the first of them among all the year's realised tasks (so its random
    draws, one per task in realised order, can be skipped to), ``identity`` = whether the realised year
    is the bundle's tasks unchanged (every row in place, no shift)."""
    rows: tuple[np.ndarray, np.ndarray, np.ndarray]
    first: int
    identity: bool


def realise_window(arrival_s: np.ndarray, horizon_s: float, rng: np.random.Generator, mode: str,
                   t_lo: float, t_hi: float) -> Window:
    """The realised tasks arriving in ``[t_lo, t_hi)`` of the year :func:`realise` draws with ``rng`` (the
    same draws, so the same year): exactly its tasks in that interval, built from the week slots the
    interval overlaps only, so that a run's set-up costs what its window holds, not what the bundle does."""
    n = arrival_s.shape[0]
    if mode not in MODES:
        raise ValueError(f"workload realisation must be one of {MODES}, got {mode!r}")
    n_full = int(horizon_s // WEEK_S)
    if mode == "origins" or n_full < 2 or n == 0:
        lo, hi = (int(i) for i in np.searchsorted(arrival_s, [t_lo, t_hi], side="left"))
        return Window((np.arange(lo, hi, dtype=np.int64), arrival_s[lo:hi].copy(), np.zeros(hi - lo, dtype=np.int64)),
                      lo, True)
    n_slots = int(np.ceil(horizon_s / WEEK_S))
    drawn = rng.integers(0, n_full, size=n_slots)  # source week of every slot
    # tasks of source week w: rows [bounds[w], bounds[w + 1])
    bounds = np.searchsorted(arrival_s, np.arange(n_full + 1) * WEEK_S, side="left")
    counts = bounds[drawn + 1] - bounds[drawn]
    # slot k holds [k W, (k + 1) W) and its week's rows are sorted, so the year is the slots' concatenation in
    # time order; only the last slot can reach past the horizon, so every slot before k_lo is kept whole
    k_lo = min(int(max(t_lo, 0.0) // WEEK_S), n_slots - 1)
    k_hi = n_slots if t_hi >= horizon_s else max(int(np.ceil(t_hi / WEEK_S)), k_lo)
    src, arr, slot, n_before = _slot_rows(arrival_s, bounds, drawn, k_lo, k_hi, float(horizon_s), float(t_lo),
                                          float(t_hi))
    # the year is the bundle unchanged when slot k draws week k throughout and nothing is cut at the horizon
    identity = bool(n_slots <= n_full and np.array_equal(drawn, np.arange(n_slots))
                    and bounds[0] == 0 and bounds[n_slots] == n
                    and (n == 0 or arrival_s[-1] < horizon_s))
    return Window((src, arr, slot), int(counts[:k_lo].sum()) + n_before, identity)


@njit(cache=True, nogil=True)
def _slot_rows(arrival_s, bounds, drawn, k_lo, k_hi, horizon_s, t_lo, t_hi):
    """The realised tasks of week slots ``k_lo .. k_hi - 1`` arriving in ``[t_lo, t_hi)``: (source row,
    arrival, slot) of each, and how many of those slots' tasks arrive before ``t_lo``. Slot k holds the rows of
    its drawn week shifted by the whole weeks between them, in time order (the year is the slots'
    concatenation, sorted); a task shifted to the horizon or past it is not in the year. Two passes (count,
    fill) over the slots' rows, without the year-sized temporaries of the numpy expressions they replace."""
    n_before = 0
    n_in = 0
    for k in range(k_lo, k_hi):
        w = drawn[k]
        shift = float(k - w) * WEEK_S
        for r in range(bounds[w], bounds[w + 1]):
            a = arrival_s[r] + shift
            if a < horizon_s:
                if a < t_lo:
                    n_before += 1
                elif a < t_hi:
                    n_in += 1
    src = np.empty(n_in, np.int64)
    arr = np.empty(n_in)
    slot = np.empty(n_in, np.int64)
    i = 0
    for k in range(k_lo, k_hi):
        w = drawn[k]
        shift = float(k - w) * WEEK_S
        for r in range(bounds[w], bounds[w + 1]):
            a = arrival_s[r] + shift
            if t_lo <= a < t_hi and a < horizon_s:
                src[i] = r
                arr[i] = a
                slot[i] = k
                i += 1
    return src, arr, slot, n_before


def uniforms_from(rng: np.random.Generator, first: int, count: int) -> np.ndarray:
    """Uniforms ``first .. first + count - 1`` of ``rng``'s stream of ``random()`` doubles, i.e.
    ``rng.random(first + count)[first:]`` without drawing the first ``first``: a PCG64 double takes exactly
    one 64-bit output, so the bit generator is advanced by ``first`` outputs (``PCG64.advance``)."""
    if first:
        rng.bit_generator.advance(first)
    return rng.random(count)
