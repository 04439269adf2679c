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

import numpy as np

WEEK_S = 7 * 86400.0
MODES = ("weeks", "origins")
ID_STRIDE = 64  # > 53 week slots of a year


def realise(arrival_s: np.ndarray, horizon_s: float, rng: np.random.Generator, mode: str = "weeks"
            ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(source row per realised task, its arrival in s since the bundle start, its week slot), sorted by
    arrival (ties in bundle order). ``arrival_s`` is the bundle's sorted arrivals; ``horizon_s`` the
    bundle's length. Exactly ``n_slots`` integers are drawn from ``rng`` in ``weeks`` mode, none otherwise."""
    n = arrival_s.shape[0]
    if mode not in MODES:
        raise ValueError(f"workload realisation must be one of {MODES}, got {mode!r}")
    n_full = int(horizon_s // WEEK_S)
    if mode == "origins" or n_full < 2 or n == 0:
        return np.arange(n, dtype=np.int64), arrival_s.copy(), np.zeros(n, dtype=np.int64)
    n_slots = int(np.ceil(horizon_s / WEEK_S))
    drawn = rng.integers(0, n_full, size=n_slots)  # source week of every slot
    # tasks of source week w: rows [bounds[w], bounds[w + 1])
    bounds = np.searchsorted(arrival_s, np.arange(n_full + 1) * WEEK_S, side="left")
    counts = bounds[drawn + 1] - bounds[drawn]
    # the last slot may be partial: keep the drawn week's tasks that land before the horizon
    src = np.concatenate([np.arange(bounds[w], bounds[w + 1]) for w in drawn]) if n_slots else np.zeros(0, int)
    slot = np.repeat(np.arange(n_slots), counts)
    shift = (slot - drawn[slot]) * WEEK_S
    arr = arrival_s[src] + shift
    keep = arr < horizon_s
    # slot k holds [k W, (k + 1) W) and its week's rows are sorted: the concatenation is in time order
    return src[keep].astype(np.int64), arr[keep], slot[keep].astype(np.int64)
