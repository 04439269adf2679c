"""How a run ends (docs/simulation.md "How a run ends"): equal work.

With ``drain=True`` (the default) arrivals stop at the window's end, the policy keeps acting (deadlines still
apply) and the run goes on step by step until every task that arrived in the window has finished: the first
step after which nothing is pending, in transit, queued, paused or running. The drain is capped at the
earlier of the bundle's end and ``drain_max_days`` (default 7) past the window's end; work still left at the
cap is *charged* by what it needs (:func:`charge_share`): its GPU-hours at the run's own carbon, energy and cost
per GPU-hour and its core-hours at the run's own per core-hour (``charged_*`` in the totals, and in
``carbon_incl_transfer_kg``/``cost_incl_transfer_usd``), so that leaving work undone never lowers the equal-work
totals. The run's carbon, energy and cost are split between its GPU-hours and its core-hours as its IT energy
is: the GPUs' own energy (``it_gpu_kw``, busy and idle) is the GPU work's, the rest (CPU, memory, server fans)
the core work's, and the facility's overhead follows in the same proportion (``charge_gpu_share`` in the
totals). A resource of which the run did no work has no rate: its share goes to the other one and its work left
is not charged (``work_left_*`` reports it); a run that did no work at all by its cap charges nothing.
``drain=False`` stops at the window's end as before (nothing charged).
"""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from . import engine as E

#: the totals keys this module adds (a run's work done and left, and carbon, energy and cost per unit of work)
WORK_KEYS = ("drain_steps", "work_core_hours", "work_gpu_hours", "work_left_core_hours", "work_left_gpu_hours",
             "charged_kwh", "charged_carbon_kg", "charged_cost_usd", "total_kwh_equal_work",
             "carbon_kg_equal_work", "cost_usd_equal_work", "carbon_kg_per_core_hour", "carbon_kg_per_gpu_hour",
             "kwh_per_core_hour", "kwh_per_gpu_hour", "cost_usd_per_core_hour", "cost_usd_per_gpu_hour",
             "charge_gpu_share")

#: what ``np.nan_to_num`` turns an infinite finish into (the largest finite float)
_BIG = float(np.finfo(np.float64).max)

#: the drain is run (by the whole-run path) in chunks of this many steps, then trimmed to the step the work ended
CHUNK_STEPS = 96


def drain_steps(opts, s0: int, n: int, bundle_steps: int, step_s: float, n_tasks: int) -> int:
    """The most steps a run of window ``[s0, s0 + n)`` may drain past its end: ``drain_max_days`` or to the
    bundle's end, whichever comes first (0 with ``drain=False`` or no task). (Not the tasks' deadline slack:
    in a loaded cluster work queues well past its deadline.)"""
    if not opts.drain or n_tasks == 0:
        return 0
    return int(max(0, min(bundle_steps - (s0 + n), math.ceil(opts.drain_max_days * 86400.0 / step_s))))


def work_left_now(S) -> bool:
    """Whether any task is pending, in transit, queued, paused or runs in the next step (``engine.work_left``
    on the run's current state)."""
    return bool(E.work_left(S, int(S.sc[E.SC_STEP])))


def drain_end(S, lo: int, hi: int) -> int:
    """The step count at which the drain ended: the first ``j + 1`` (j in ``[lo, hi - 1)``, steps that have
    run) after whose step j nothing is pending, in transit, queued or paused and nothing runs in step j + 1;
    -1 if the work has not ended by then (the same rule as :func:`work_left_now`, on the recorded columns)."""
    if hi - 1 <= lo:
        return -1
    c = slice(lo, hi - 1)
    w = (S.m_pending[:, c].sum(axis=0) + S.m_queue[:, c].sum(axis=0) + S.m_transit[:, c].sum(axis=0)
         + S.m_paused[:, c].sum(axis=0) + S.run_part[:, lo + 1:hi].sum(axis=0))
    z = np.flatnonzero(w == 0)
    return lo + int(z[0]) + 1 if z.size else -1


def run_drained(prep, advance) -> None:
    """Run a prepared run's window (``advance(j_end)`` runs the policy's loop to step ``j_end``) and then its
    drain in chunks of :data:`CHUNK_STEPS` until the work has ended or the cap is reached; sets ``prep.n_end``.
    (The steps run past the end are dropped: no step reads a later one, so the kept steps are exact.)"""
    advance(prep.n_window)
    if prep.n == prep.n_window:
        prep.n_end = prep.n
        return
    lo = prep.n_window - 1
    j = prep.n_window
    while True:
        j = min(j + CHUNK_STEPS, prep.n)
        advance(j)
        end = drain_end(prep.state, lo, j)
        if end >= 0:
            prep.n_end = end
            return
        if j >= prep.n:
            prep.n_end = prep.n
            return


def charge_share(gpu_share: float, done_c: float, done_g: float, left_c: float, left_g: float) -> float:
    """The work left as a share of the run's own totals: ``gpu_share`` of them per GPU-hour done for each GPU-hour
    left, the rest per core-hour done for each core-hour left (a resource with no work done hands its share to
    the other and is not charged; nothing when neither was done)."""
    w_g = gpu_share if done_c > 0 else 1.0
    w_g = w_g if done_g > 0 else 0.0
    share = 0.0
    if done_g > 0:
        share += w_g * left_g / done_g
    if done_c > 0:
        share += (1.0 - w_g) * left_c / done_c
    return share


#: the per-task work terms (:func:`work_terms`), in the order ``work_totals`` sums them
WORK_TERMS = ("work_all_core_s", "work_left_core_s", "work_all_gpu_s", "work_left_gpu_s")


def work_terms(status, start, finish, rem_p, duration, cores, gpus, t_end: float) -> dict[str, np.ndarray]:
    """The terms of :data:`WORK_TERMS` of some of the run's tasks (:func:`_work_terms`; ``rem_p``: the recorded
    remainders when the run has them per task, else the durations): the run's are those of its tasks in order,
    whose sums :func:`work_totals` takes."""
    *terms, counts = _work_terms(status, start, finish, rem_p, duration, cores, gpus, t_end)
    return {name: terms[k][:counts[k // 2]] for k, name in enumerate(WORK_TERMS)}


def work_totals(prep, n: int, sums: dict[str, float], totals: dict, gpu_share: float) -> dict:
    """The work done and left at the run's end (nominal: cores or GPUs x duration, at scale 1; ``sums``: the sums
    of the run's :data:`WORK_TERMS`), the work left charged at the run's own rates per GPU-hour and per
    core-hour (:func:`charge_share`; only with ``drain=True``; ``gpu_share``: the GPUs' share of the run's IT
    energy), and the per-unit rates."""
    all_c, left_c, all_g, left_g = (sums[name] / 3600 for name in WORK_TERMS)
    done_c, done_g = all_c - left_c, all_g - left_g
    out = {"drain_steps": int(n - prep.n_window), "work_core_hours": done_c, "work_gpu_hours": done_g,
           "work_left_core_hours": left_c, "work_left_gpu_hours": left_g}
    share = charge_share(gpu_share, done_c, done_g, left_c, left_g) if prep.options.drain else 0.0
    out["charge_gpu_share"] = gpu_share
    for name, key in (("kwh", "total_kwh"), ("carbon_kg", "carbon_kg"), ("cost_usd", "cost_usd")):
        out[f"charged_{name}"] = totals[key] * share
        out[f"{key}_equal_work"] = totals[key] + out[f"charged_{name}"]
    for name, key in (("carbon_kg", "carbon_kg"), ("kwh", "total_kwh"), ("cost_usd", "cost_usd")):
        out[f"{name}_per_core_hour"] = _per(totals[key], done_c)
        out[f"{name}_per_gpu_hour"] = _per(totals[key], done_g)
    return out


@njit(cache=True, nogil=True)
def _work_terms(status, start, finish, rem_p, duration, cores, gpus, t_end):
    """Per resource (cores, GPUs), the terms of the work all and left, ``r x duration`` and ``r x remaining``,
    of the tasks that count (schedulable, with a finite size >= 0), in task order: arrays 2j and 2j + 1 of the
    four returned before ``counts``, the first ``counts[j]`` of each (four task-sized arrays rather than one
    block: an allocation under the allocator's mmap threshold is reused run after run, a larger one is fresh
    pages every time). The remaining seconds at ``t_end``: the whole duration if never
    started, the recorded remainder if paused or waiting to resume, else the finish past ``t_end`` (a NaN
    finish as ``t_end``, infinities as the largest finite floats), at most the duration. The caller sums each
    row with numpy: the same terms in the same order as the numpy expressions this replaces, so the same
    pairwise sums, in one pass instead of thirty over a year's tasks."""
    m = status.shape[0]
    all_c, left_c, all_g, left_g = np.empty(m), np.empty(m), np.empty(m), np.empty(m)
    counts = np.zeros(2, np.int64)
    for i in range(m):
        d = duration[i]
        if status[i] == E.ST_UNSCHEDULABLE or not (np.isfinite(d) and d >= 0):
            continue
        if start[i] != start[i]:
            rem = d
        elif status[i] == E.ST_PAUSED or status[i] == E.ST_QUEUED:
            rem = rem_p[i]
        else:
            f = finish[i]
            f = t_end if f != f else (_BIG if f == np.inf else (-_BIG if f == -np.inf else f))
            x = f - t_end
            rem = x if x > 0.0 else 0.0
        if not (rem != rem or rem <= d):  # np.minimum(rem, d): a NaN remainder stays
            rem = d
        r = cores[i]
        if np.isfinite(r) and r >= 0:
            all_c[counts[0]] = r * d
            left_c[counts[0]] = r * rem
            counts[0] += 1
        r = gpus[i]
        if np.isfinite(r) and r >= 0:
            all_g[counts[1]] = r * d
            left_g[counts[1]] = r * rem
            counts[1] += 1
    return all_c, left_c, all_g, left_g, counts


def _per(x: float, work: float) -> float:
    """``x`` per unit of work; 0.0 when the run did no such work (totals stay finite and compare equal run to
    run; ``work_*_hours`` says there was none)."""
    return x / work if work > 0 else 0.0
