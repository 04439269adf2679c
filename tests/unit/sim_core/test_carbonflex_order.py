"""CarbonFlex's Algorithm 1 (``oracle_alg1``) takes its entries key by key (one key per marginal throughput and
step, keys of one value merged) instead of sorting them all; on random windows full of ties (equal and nearly
equal carbon, equal deadlines, equal marginal throughputs, non-positive carbon, marginal throughput 1 and above)
it makes exactly the decisions of the one stable sort of every entry that Algorithm 1 describes (the reference
below, the first implementation). The knowledge base's job counts, kept row by row, equal checking every job
for every row."""

from __future__ import annotations

import math

import numpy as np
import pytest
from numba import njit

from sim_core.engine.capacity import speedup
from sim_core.policies import carbonflex as CF
from sim_core.policies.carbonflex import kernel as CK
from sim_core.policies.carbonflex import oracle as O
from tests.unit.sim_core.test_baselines import HOUR, STEP


@njit(cache=False)
def _sorted_alg1(a, dl, work, r, frac, smin, smax, mthr, ci, slot_s):
    """Algorithm 1 with every (job, step, unit) entry materialised and stable-sorted by -p / CI (made in
    deadline order), then the greedy pass."""
    n_job, n_slot = a.shape[0], ci.shape[0]
    q0, q1, nu = np.empty(n_job, np.int64), np.empty(n_job, np.int64), np.empty(n_job, np.int64)
    n_ent = 0
    for j in range(n_job):
        q0[j] = max(int(math.floor(a[j] / slot_s)), 0)
        y = dl[j] / slot_s
        q1[j] = min(int(math.ceil(y)), n_slot) if y < n_slot else n_slot
        nu[j] = 1 + (int(math.ceil((smax[j] - smin[j]) * r[j] - 1e-9)) if mthr[j] > 0.0 and r[j] > 0.0 else 0)
        n_ent += max(q1[j] - q0[j], 0) * nu[j]
    ej, eq, eu, val = np.empty(n_ent, np.int64), np.empty(n_ent, np.int64), np.empty(n_ent, np.int64), np.empty(n_ent)
    e = 0
    for j in np.argsort(dl, kind="mergesort"):
        for q in range(q0[j], q1[j]):
            for u in range(nu[j]):
                ej[e], eq[e], eu[e] = j, q, u
                p = 1.0 if u == 0 else mthr[j]
                val[e] = -p / ci[q] if ci[q] > 0.0 else -np.inf
                e += 1
    order = np.argsort(val, kind="mergesort")
    x, units = np.zeros((n_job, n_slot)), np.zeros((n_job, n_slot), np.int64)
    used, rho, done = np.zeros((n_slot, 3)), np.full(n_slot, np.inf), np.zeros(n_job)
    for e in order:
        j, q, u = ej[e], eq[e], eu[e]
        if done[j] >= work[j] - 1e-9 or units[j, q] != u:
            continue
        dx = smin[j] if u == 0 else min(1.0, (smax[j] - smin[j]) * r[j] - (u - 1)) / r[j]
        fits = True
        for y in range(3):
            if used[q, y] + dx * frac[j, y] > 1.0 + 1e-9:
                fits = False
        if not fits:
            continue
        f = (min((q + 1) * slot_s, dl[j]) - max(q * slot_s, a[j])) / slot_s
        if f <= 0.0:
            continue
        x[j, q] += dx
        units[j, q] += 1
        for y in range(3):
            used[q, y] += dx * frac[j, y]
        p = 1.0 if u == 0 else mthr[j]
        done[j] += (speedup(smin[j], mthr[j]) if u == 0 else mthr[j] * dx) * f * slot_s
        rho[q] = min(rho[q], p)
    for q in range(n_slot):
        if rho[q] == np.inf:
            rho[q] = 1.0
    return x, used, rho, done


def _case(rng, slot_s):
    """A random window of 8 to 200 steps and 1 to 60 jobs with many ties and a tight site."""
    n_slot, n_job = int(rng.integers(8, 200)), int(rng.integers(1, 60))
    c = rng.choice([50.0, 100.0, 100.0, 300.0, 300.0 * (1 + 2e-16), 400.0, 0.0, -1.0, 1e-310], n_slot)
    ci = np.where(rng.random(n_slot) < 0.5, c, np.round(rng.uniform(1.0, 500.0, n_slot), 1))
    span = n_slot * slot_s
    a = np.where(rng.random(n_job) < 0.3, 0.0, rng.uniform(0.0, 0.8 * span, n_job))
    if rng.random() < 0.5:
        a = np.floor(a / slot_s) * slot_s  # arrivals at step starts, like the engine's
    dl = np.minimum(a + rng.choice([1.0, 2.5, 6.0, 24.0], n_job) * slot_s * rng.integers(1, 8, n_job), span)
    dl = np.where(rng.random(n_job) < 0.2, dl[0], dl)  # equal deadlines
    work = rng.uniform(0.1, 6.0, n_job) * slot_s
    r = rng.choice([0.25, 0.5, 1.0, 1.5, 3.0], n_job)
    frac = rng.choice([0.0, 0.05, 0.1, 0.3, 0.6], (n_job, 3))
    smin = rng.choice([0.5, 1.0, 1.0, 2.0], n_job)
    smax = smin + rng.choice([0.0, 0.5, 1.0, 3.0, 7.0], n_job)
    mthr = rng.choice([0.0, 0.25, 0.5, 0.8, 1.0, 1.2, 0.5 * (1 + 2e-16)], n_job)
    return a, dl, work, r, frac, smin, smax, mthr, ci, slot_s


@pytest.mark.parametrize("seed", range(12))
def test_merged_entries_make_exactly_the_sorted_entries_decisions(seed):
    rng = np.random.default_rng(seed)
    n_taken = 0
    for it in range(40):
        case = _case(rng, STEP if it % 2 else HOUR)
        got, want = CF.oracle_alg1(*case), _sorted_alg1(*case)
        for g, w in zip(got, want, strict=True):
            assert np.array_equal(g, w), (seed, it)
        # the learning phase's pass without x: the same plan and each job's last step with work
        *rest, last = O.alg1_pass(*case, np.empty((0, case[8].shape[0])))
        for g, w in zip(rest, want[1:], strict=True):
            assert np.array_equal(g, w), (seed, it)
        ran = want[0] > 0.0
        assert last.tolist() == [int(np.flatnonzero(row)[-1]) if row.any() else -1 for row in ran]
        n_taken += int((want[0] > 0).sum())
    assert n_taken > 100  # the cases place real work (not only empty windows)


def test_a_job_with_nothing_to_do_and_an_empty_window():
    """No jobs: nothing used, rho 1 everywhere; a job past the window's end: no entry, no work done."""
    x, used, rho, done = CF.oracle_alg1(np.zeros(0), np.zeros(0), np.zeros(0), np.zeros(0), np.zeros((0, 3)),
                                        np.zeros(0), np.zeros(0), np.zeros(0), np.array([1.0, 2.0]), HOUR)
    assert x.shape == (0, 2) and not used.any() and rho.tolist() == [1.0, 1.0] and done.shape == (0,)
    one = (np.array([3 * HOUR]), np.array([4 * HOUR]), np.array([HOUR]), np.ones(1), np.full((1, 3), 0.5),
           np.ones(1), np.ones(1), np.zeros(1), np.array([1.0, 2.0]), HOUR)
    x, used, rho, done = CF.oracle_alg1(*one)
    assert not x.any() and done.tolist() == [0.0]


def _kb_counts_reference(a, last, max_delay, mthr, n_rows):
    """Each row's jobs per queue and their mean marginal throughput, by checking every job for every row."""
    out = np.zeros((n_rows, 4))
    for q in range(n_rows):
        el = 0.0
        for j in range(a.shape[0]):
            if a[j] < q * O.SLOT_STEPS * STEP + STEP and last[j] >= q * O.SLOT_STEPS:
                out[q, 0 if max_delay[j] <= 6 * HOUR else 1 if max_delay[j] <= 24 * HOUR else 2] += 1.0
                el += mthr[j]
        nj = out[q, :3].sum()
        out[q, 3] = el / nj if nj > 0.0 else 0.0
    return out


@pytest.mark.parametrize("seed", range(4))
def test_knowledge_base_counts_only_the_jobs_in_the_system_as_checking_every_job(seed):
    """kb_rows walks the jobs in the system row by row; its counts and mean elasticity (summed in job order)
    equal checking every job for every row, for arrivals on and between step and slot boundaries."""
    rng = np.random.default_rng(seed)
    n_rows, n_job = 30, 400
    n_step = (n_rows + O.DAY_SLOTS) * O.SLOT_STEPS
    a = np.sort(np.where(rng.random(n_job) < 0.5, rng.uniform(0, n_step * STEP, n_job),
                         STEP * rng.integers(0, n_step, n_job).astype(float)))
    if seed % 2:
        rng.shuffle(a)  # (any order of jobs)
    done_by = (a // STEP).astype(np.int64) + rng.integers(0, 40, n_job)
    work = np.ones(n_job)
    done = np.where(rng.random(n_job) < 0.8, 1.0, 0.5)
    last_run = np.where(rng.random(n_job) < 0.05, -1, done_by)
    max_delay = rng.choice([HOUR, 6 * HOUR, 12 * HOUR, 48 * HOUR], n_job)
    mthr = rng.uniform(0.0, 1.0, n_job)
    ch = rng.uniform(50.0, 500.0, n_rows + O.DAY_SLOTS)
    used, rho = np.zeros((n_step, 3)), np.ones(n_step)
    tab = np.zeros((n_rows, O.N_COLS))
    O.kb_rows(ch, last_run, used, rho, done, work, a, max_delay, mthr, 10.0, n_rows, tab)
    last = np.where((done >= work - 1e-9) & (last_run >= 0), last_run, n_step)
    want = _kb_counts_reference(a, last, max_delay, mthr, n_rows)
    assert np.array_equal(tab[:, O.F_Q0:O.F_Q0 + 3], want[:, :3]) and np.array_equal(tab[:, O.F_ELAST], want[:, 3])
    assert want[:, :3].sum() > 100


def _knn_sorted(tab, state, k, scaled):
    """Algorithm 2's match by one stable sort of every row's distance (the implementation the selection replaced)."""
    ok = ~np.isnan(tab[:, O.D_M])
    sd = np.ones(O.N_FEAT)
    if scaled and ok.sum() > 1:
        for f in range(O.N_FEAT):
            v = tab[ok, f]
            m = sum(v) / ok.sum()  # (summed row by row, as the kernel)
            var = sum((v - m) ** 2)
            sd[f] = math.sqrt(var / ok.sum()) if var > 0.0 else 1.0
    dist = np.full(tab.shape[0], np.inf)
    for q in np.flatnonzero(ok):
        s = 0.0
        for f in range(O.N_FEAT):
            s += ((tab[q, f] - state[f]) / sd[f]) ** 2
        dist[q] = s
    order = np.argsort(dist, kind="mergesort")
    kk = min(k, int(ok.sum()))
    m = rho = 0.0
    for x in range(kk):
        m += tab[order[x], O.D_M]
        rho += tab[order[x], O.D_RHO]
    return m / kk, rho / kk  # (the kernel rounds the mean up to whole servers)


@pytest.mark.parametrize("seed", range(6))
def test_knn_selection_takes_exactly_the_rows_of_the_whole_sort(seed):
    """The k nearest rows by a selection equal those of a stable sort of all distances, in order (the sums are
    made in that order): on tables full of equal distances, rows not learned yet (NaN), and states with an unknown
    carbon (infinite: every distance infinite or NaN)."""
    rng = np.random.default_rng(seed)
    n_nan = n_cases = 0
    for it in range(60):
        n = int(rng.integers(1, 80))
        tab = np.round(rng.normal(0.0, 2.0, (n, O.N_COLS)), int(rng.integers(0, 2)))
        tab[:, O.D_M] = rng.integers(0, 20, n)
        tab[:, O.D_RHO] = rng.random(n)
        tab[rng.random(n) < 0.3, O.D_M] = np.nan
        if np.isnan(tab[:, O.D_M]).all():
            tab[0, O.D_M] = 3.0
        state = np.round(rng.normal(0.0, 2.0, O.N_FEAT), 0)
        if it % 10 == 0:
            state[O.F_CI] = np.inf
        if it % 10 == 1:
            state[O.F_CI] = np.nan
        for k in (1, 5, 9):
            for scaled in (False, True):
                (m, rho), (mean, want_rho) = CK.knn_provision(tab, state, k, scaled), _knn_sorted(tab, state, k, scaled)
                assert rho == want_rho or (np.isnan(rho) and np.isnan(want_rho)), (seed, it, k, scaled)
                # (a NaN mean: the sort put rows without a provisioning first, behind NaN distances; no integer)
                assert np.isnan(mean) or m == math.ceil(mean - 1e-9), (seed, it, k, scaled)
                n_nan += np.isnan(mean)
                n_cases += 1
    assert n_nan < n_cases // 4  # (mostly finite cases)
