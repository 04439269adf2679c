"""The one SLA rule: each task's deadline (``task_deadline``, what the engine enforces) and the words every
output and page uses for it (:func:`late_rule`), declared side by side so that code and docs cannot drift
(tests/unit/sim_core/test_sla_rule.py checks the wording against the engine and the pages).

A task is *late* (an SLA violation, ``sla_violations``) when it finishes after its deadline: the engine's
test at each (re)start, ``sim_core/engine/queues.py``; a paused task's is decided again at each resume."""

from __future__ import annotations

import numpy as np


def late_rule(sla_multiplier: object = 1.5) -> str:
    """The lateness rule in words, for ``sla_multiplier`` (a number; anything else, e.g. ``"per task"``, reads as
    each task's own multiplier): what ``compare`` prints beside its results and what docs/results.md and
    docs/model.md say."""
    num = isinstance(sla_multiplier, int | float) and not isinstance(sla_multiplier, bool)
    m = f"{sla_multiplier:g}" if num else "its own multiplier"
    return (f"a task is late when it finishes after its deadline, deadline = arrival + max({m} × duration, "
            f"allowed delay + duration) (arrival + {m} × duration for a task without an allowed delay)")


def task_deadline(arrival, duration, max_delay, sla_multiplier):
    """The deadline the engine enforces (:func:`late_rule`; docs/simulation.md "Flexible tasks"): arrival + the
    larger of the task's allowed delay + its duration and ``sla_multiplier`` x its duration; a task without an
    allowed delay (0, every version-1 task) keeps arrival + ``sla_multiplier`` x duration exactly."""
    # (in place, on two arrays instead of six temporaries: the same operations, IEEE addition commutes)
    base = sla_multiplier * duration
    base += arrival
    alt = max_delay + duration
    alt += arrival
    np.maximum(base, alt, out=alt)
    np.copyto(base, alt, where=max_delay > 0.0)
    return base
