"""CarbonFlex's learning phase (Hanafy, Wu, Irwin, Shenoy, arXiv:2505.18357, §4.2): the oracle of its
Algorithm 1 replayed over the past window, and the knowledge base of (state of Table 2 -> provisioning
m_t in servers, threshold rho) it leaves, one row per one-hour slot."""

from __future__ import annotations

import math

import numpy as np
from numba import njit

from ...engine.capacity import speedup
from ...engine.layout import CFG_CPS, CFG_GPS, CFG_MPS, CFG_N_C, CFG_N_G, SIG_CARBON, STEP_S, STEPS_PER_DAY
from .. import registry
from ..plan import site_fractions

#: k of the k-nearest-neighbour lookup (§5 "Runtime Provisioning": "select the nearest five instances")
K_NN = registry.param("carbonflex", "k")
#: one-hour slots (§5 "Runtime Provisioning": "At the start of each slot, which we set as 1 hour")
SLOT_STEPS = registry.param("carbonflex", "slot_steps")
#: the past window T the oracle replays (§4.2 and §4.1 Algorithm 1: "e.g., a week")
CF_WINDOW_DAYS = registry.param("carbonflex", "window_days")
#: slots of the day-ahead carbon rank CI^R (Table 2: "rank of slot t compared to day-ahead CI")
DAY_SLOTS = 24
#: queues by allowed delay (§6.1: three queues of 6, 24 and 48 h): upper bounds of the first two
Q_BOUNDS_S = (6.0 * 3600.0, 24.0 * 3600.0)
# columns of a knowledge-base row: the state of Table 2 (CI_t, CI^G_t, CI^R_t, jobs per queue (3),
# mean elasticity), then the oracle's decisions (m_t in servers, rho)
F_CI, F_GRAD, F_RANK, F_Q0, F_ELAST = 0, 1, 2, 3, 6
N_FEAT = 7
D_M, D_RHO = 7, 8
N_COLS = 9
#: the job history the learning phase replays (§6: 7 weeks), one week-long window ending at each of its days
CF_HISTORY_DAYS = registry.param("carbonflex", "history_days")
N_REPLAYS = CF_HISTORY_DAYS - CF_WINDOW_DAYS + 1
#: knowledge-base rows of one replay: one per slot of the window with its whole day-ahead in the window
KB_ROWS = CF_WINDOW_DAYS * 24 - (DAY_SLOTS - 1)


@njit(cache=True, nogil=True, inline="always")
def task_servers(c, g, m, cfg, d):
    """Servers (fractional) a request of c cores, g GPUs and m GB takes at datacenter d: its dominant
    share of one server (§3: a job is allocated k servers; gridshift's tasks request cores, GPUs, GB)."""
    r = c / cfg[d, CFG_CPS] if cfg[d, CFG_CPS] > 0.0 else 0.0
    if g > 0.0 and cfg[d, CFG_GPS] > 0.0:
        r = max(r, g / cfg[d, CFG_GPS])
    if m > 0.0 and cfg[d, CFG_MPS] > 0.0:
        r = max(r, m / cfg[d, CFG_MPS])
    return r


@njit(cache=True, nogil=True, inline="always")
def site_servers(cfg, cap, d):
    """M, the maximum cluster capacity of site d in servers (§3): its CPU-only and GPU servers."""
    n = cfg[d, CFG_N_C] + cfg[d, CFG_N_G]
    if n <= 0.0 and cfg[d, CFG_CPS] > 0.0:
        n = math.floor(cap[d, 0] / cfg[d, CFG_CPS])
    return n


@njit(cache=True, nogil=True, inline="always")
def in_queues(max_delay, flexible, i):
    """Whether task i (of the task columns ``max_delay``, ``flexible``) is one of CarbonFlex's jobs: it may wait
    (an allowed delay) or be suspended or scaled; the others run at once outside its provisioning, as under every
    policy. (Columns, not the tasks' tuple: the per-task loops bind each column once, see ``kernel.decide``.)"""
    return max_delay[i] > 0.0 or flexible[i]


@njit(cache=True, nogil=True, inline="always")
def queue_of(max_delay):
    """Queue index (0, 1, 2) of a job by its allowed delay (§6.1's 6 / 24 / 48 h queues)."""
    if max_delay <= Q_BOUNDS_S[0]:
        return 0
    return 1 if max_delay <= Q_BOUNDS_S[1] else 2


@njit(cache=True, nogil=True, inline="always")
def binding_servers(frac, M):
    """Servers of M a load of per-resource fractions ``frac`` of the site needs: its binding resource's share
    of the site's servers (§3's provisioning in servers; the engine's capacity is per resource)."""
    return M * max(frac[0], max(frac[1], frac[2]))


@njit(cache=True, nogil=True, inline="always")
def provisioned_share(m_t, cfg, cap, d):
    """The share of each of site d's resources m_t of its M servers provision (the whole site without M)."""
    M = site_servers(cfg, cap, d)
    return m_t / M if M > 0.0 else 1.0


@njit(cache=True, nogil=True, inline="always")
def entry_value(p, c):
    """An entry's sort value (Line 6): -p_j(k) / CI_t, -inf where CI_t is not positive (ascending = best first)."""
    return -p / c if c > 0.0 else -np.inf


@njit(cache=True, nogil=True)
def entry_ranges(a, dl, r, smin, smax, mthr, n_slot, slot_s):
    """Each job's steps [q0, q1) of the window its entries cover and its number of allocation units nu."""
    n_job = a.shape[0]
    q0 = np.empty(n_job, np.int64)
    q1 = np.empty(n_job, np.int64)
    nu = np.empty(n_job, np.int64)
    for j in range(n_job):
        q0[j] = max(int(math.floor(a[j] / slot_s)), 0)
        y = dl[j] / slot_s
        q1[j] = min(int(math.ceil(y)), n_slot) if y < n_slot else n_slot
        nu[j] = 1 + (int(math.ceil((smax[j] - smin[j]) * r[j] - 1e-9)) if mthr[j] > 0.0 and r[j] > 0.0 else 0)
    return q0, q1, nu


@njit(cache=True, nogil=True)
def scaling_classes(nu, mthr):
    """Each job's scaling class: 0 if it has no scaling unit (nu = 1), else k >= 1 for ``ps[k - 1]``, the k-th of
    the distinct marginal throughputs (p_j(k) of its scaling units) of the jobs that scale. Returns (kcls, ps)."""
    pm = mthr[nu > 1]
    ps = np.unique(pm)
    kcls = np.zeros(nu.shape[0], np.int64)
    for j in range(nu.shape[0]):
        if nu[j] > 1:
            kcls[j] = np.searchsorted(ps, mthr[j]) + 1
    return kcls, ps


@njit(cache=True, nogil=True)
def entry_keys(q0, q1, kcls, ps, ci):
    """Lines 2-5's entries grouped by key: key k n_slot + q holds the entries of class k at step q (class 0: every
    job's base unit, p = 1; class k >= 1: the scaling units of the jobs of :func:`scaling_classes`'s class k, p =
    ps[k - 1]), all of one value -p / CI_q (:func:`entry_value`). The jobs are in deadline order (Line 6's ties).
    Returns (kval: each key's value; start, jobs: key x's jobs ``jobs[start[x]:start[x + 1]]``, in increasing
    order, those whose window [q0, q1) holds its step)."""
    n_job, n_slot, n_cls = q0.shape[0], ci.shape[0], ps.shape[0] + 1
    n_key = n_cls * n_slot
    kval = np.empty(n_key)
    for k in range(n_cls):
        p = 1.0 if k == 0 else ps[k - 1]
        for q in range(n_slot):
            kval[k * n_slot + q] = entry_value(p, ci[q])
    diff = np.zeros((n_cls, n_slot + 1), np.int64)  # (each class's windows as differences along its steps)
    for j in range(n_job):
        if q1[j] > q0[j]:
            diff[0, q0[j]] += 1
            diff[0, q1[j]] -= 1
            if kcls[j] > 0:
                diff[kcls[j], q0[j]] += 1
                diff[kcls[j], q1[j]] -= 1
    start = np.zeros(n_key + 1, np.int64)
    for k in range(n_cls):
        c = 0
        for q in range(n_slot):
            c += diff[k, q]
            start[k * n_slot + q + 1] = start[k * n_slot + q] + c
    jobs = np.empty(start[n_key], np.int32)
    fill = start[:n_key].copy()
    for j in range(n_job):
        for q in range(q0[j], q1[j]):
            jobs[fill[q]] = j
            fill[q] += 1
        if kcls[j] > 0:
            for x in range(kcls[j] * n_slot + q0[j], kcls[j] * n_slot + q1[j]):
                jobs[fill[x]] = j
                fill[x] += 1
    return kval, start, jobs


@njit(cache=True, nogil=True, inline="always")
def key_before(k1, k2, ptr, jobs, n_slot):
    """Whether key k1's next entry comes before key k2's among entries of one value (Line 6's stable sort of
    entries made job by deadline, then step, then unit): by the job (jobs are in deadline order), then step, then
    class (one job's entries at one step: its base unit first, then its scaling units)."""
    r1, r2 = jobs[ptr[k1]], jobs[ptr[k2]]
    if r1 != r2:
        return r1 < r2
    q1, q2 = k1 % n_slot, k2 % n_slot
    if q1 != q2:
        return q1 < q2
    return k1 < k2


@njit(cache=True, nogil=True)
def sift_keys(heap, n, x, ptr, jobs, n_slot):
    """Restore the heap property of ``heap[:n]`` (keys by their next entry, :func:`key_before`) below position x."""
    while True:
        c = 2 * x + 1
        if c >= n:
            return
        if c + 1 < n and key_before(heap[c + 1], heap[c], ptr, jobs, n_slot):
            c += 1
        if not key_before(heap[c], heap[x], ptr, jobs, n_slot):
            return
        heap[x], heap[c] = heap[c], heap[x]
        x = c


@njit(cache=True, nogil=True)
def oracle_alg1(a, dl, work, r, frac, smin, smax, mthr, ci, slot_s):
    """Algorithm 1 (§4.2, CarbonFlex_Oracle_Algorithm) over one site's window of n_slot slots of ``slot_s`` s.

    Job j (times in seconds from the window's start): arrival a[j], deadline dl[j] (a + l + d), work[j]
    (seconds at scale 1), r[j] servers at scale 1 (its dominant share of one server: the size of a scaling
    unit), frac[j] (3) its request at scale 1 as fractions of the site's cores, GPUs and GB, scales [smin,
    smax], marginal throughput mthr[j]. Its allocation units: the base k_min = smin (p_j(k_min) = 1, throughput
    speedup(smin)), then one server at a time (1 / r[j] request multiples) up to smax (p_j(k) = mthr:
    gridshift's scaling curve is linear, the last unit may be partial). Lines 2-6: one entry per (job, slot in
    [a, dl], unit), sorted by p_j(k) / CI_t descending, ties by deadline. Lines 7-11: take entries best first
    (in the order of one stable sort of them all, without materialising it: see :func:`alg1_pass`);
    skip one whose slot would exceed the site's capacity M in any resource (the paper writes >= M for its
    homogeneous servers; gridshift checks each resource and lets it fill to exactly its capacity) or whose job
    is done; a unit is taken only on top of the job's previous unit in that slot. A slot the job covers only
    in part gives that fraction of its throughput. Returns (x (n_job, n_slot) scale of each job per slot,
    used (n_slot, 3) fractions of the site's resources in use, rho (n_slot): the least p_j(k) used in each slot
    (1 where nothing ran), done (n_job) work done: below work[j] where the window could not finish the job,
    Lines 13-15)."""
    x = np.zeros((a.shape[0], ci.shape[0]))
    used, rho, done, _ = alg1_pass(a, dl, work, r, frac, smin, smax, mthr, ci, slot_s, x)
    return x, used, rho, done


@njit(cache=True, nogil=True)
def alg1_pass(a, dl, work, r, frac, smin, smax, mthr, ci, slot_s, x):
    """:func:`oracle_alg1`'s greedy pass; writes each job's scale per slot into ``x`` unless it has no rows (the
    learning phase needs only ``last``: the last slot each job ran in, -1 if none). Returns (used, rho, done,
    last).

    The entries are taken in the order of Line 6's stable sort without sorting them: the keys of
    :func:`entry_keys` (one value each, at most (distinct p) x n_slot of them) in order of value, and the entries
    of keys of one value merged by (job's deadline rank, step, unit) (:func:`key_before`), each key's jobs being in
    deadline order already. A job's scaling units at one step have one value and are adjacent in that order: one
    entry of its scaling class. An entry of a job already done is skipped, as the sort's pass skips it."""
    jorder = np.argsort(dl, kind="mergesort")  # (the pass works on the jobs in deadline order: Line 6's ties)
    used, rho, done_r, last_r = ranked_pass(a[jorder], dl[jorder], work[jorder], r[jorder], frac[jorder],
                                            smin[jorder], smax[jorder], mthr[jorder], ci, slot_s, x, jorder)
    done = np.empty_like(done_r)
    done[jorder] = done_r
    last = np.empty_like(last_r)
    last[jorder] = last_r
    return used, rho, done, last


@njit(cache=True, nogil=True)
def ranked_pass(a, dl, work, r, frac, smin, smax, mthr, ci, slot_s, x, jorder):
    """:func:`alg1_pass` over its jobs in deadline order (job j here is ``jorder[j]`` of ``x``'s rows): the keys'
    jobs are then increasing, and their columns are read in that order. Returns (used, rho, done, last)."""
    n_job = a.shape[0]
    n_slot = ci.shape[0]
    q0, q1, nu = entry_ranges(a, dl, r, smin, smax, mthr, n_slot, slot_s)
    kcls, ps = scaling_classes(nu, mthr)
    kval, start, jobs = entry_keys(q0, q1, kcls, ps, ci)  # Lines 2-5
    n_key = kval.shape[0]
    korder = np.argsort(kval, kind="mergesort")  # Line 6, key by key
    keep_x = x.shape[0] > 0
    last = np.full(n_job, -1)
    srow = np.full(n_job, -1)  # a scaling job's row of ``base``
    n_s = 0
    for j in range(n_job):
        if kcls[j] > 0:
            srow[j] = n_s
            n_s += 1
    base = np.zeros((n_s, n_slot), np.bool_)  # the scaling job's base unit is taken at that step
    used = np.zeros((n_slot, 3))
    rho = np.full(n_slot, np.inf)
    done = np.zeros(n_job)
    alive = work > 1e-9  # (done[j] < work[j] - 1e-9: the job is not done)
    ptr = start[:n_key].copy()
    heap = np.empty(n_key, np.int64)
    g = 0
    while g < n_key:  # Lines 7-11, the keys of one value at a time
        h = g + 1
        while h < n_key and kval[korder[h]] == kval[korder[g]]:
            h += 1
        n = 0
        for y in range(g, h):
            if start[korder[y] + 1] > start[korder[y]]:
                heap[n] = korder[y]
                n += 1
        for y in range(n // 2 - 1, -1, -1):
            sift_keys(heap, n, y, ptr, jobs, n_slot)
        while n > 0:
            kk = heap[0]
            q = kk % n_slot
            scaling = kk >= n_slot
            e1 = start[kk + 1] if n == 1 else ptr[kk] + 1  # (one key left: the rest of its entries in order)
            for e in range(ptr[kk], e1):
                j = jobs[e]
                if not alive[j] or (scaling and not base[srow[j], q]):
                    continue
                f = (min((q + 1) * slot_s, dl[j]) - max(q * slot_s, a[j])) / slot_s
                u_lo, u_hi = (1, nu[j]) if scaling else (0, 1)
                for u in range(u_lo, u_hi):
                    if not alive[j]:
                        break
                    dx = smin[j] if u == 0 else min(1.0, (smax[j] - smin[j]) * r[j] - (u - 1)) / r[j]
                    fits = True
                    for y in range(3):
                        if used[q, y] + dx * frac[j, y] > 1.0 + 1e-9:
                            fits = False
                    if not fits or f <= 0.0:
                        break  # (the job's next unit at this step is taken only on top of this one)
                    if keep_x:
                        x[jorder[j], q] += dx
                    if dx > 0.0:
                        last[j] = max(last[j], q)
                    if srow[j] >= 0:
                        base[srow[j], q] = True
                    for y in range(3):
                        used[q, y] += dx * frac[j, y]
                    p = 1.0 if u == 0 else mthr[j]
                    done[j] += (speedup(smin[j], mthr[j]) if u == 0 else mthr[j] * dx) * f * slot_s
                    alive[j] = done[j] < work[j] - 1e-9
                    rho[q] = min(rho[q], p)
            ptr[kk] = e1
            if e1 == start[kk + 1]:  # the key is spent
                n -= 1
                heap[0] = heap[n]
            if n > 1:
                sift_keys(heap, n, 0, ptr, jobs, n_slot)
        g = h
    for q in range(n_slot):
        if rho[q] == np.inf:
            rho[q] = 1.0
    return used, rho, done, last


@njit(cache=True, nogil=True, inline="always")
def carbon_state(ch, q, row):
    """CI_t, CI^G_t and CI^R_t of Table 2 for slot q of the hourly carbon ``ch`` (q + 23 within it): the
    slot's intensity, the gradient to the next slot, and the fraction of the day-ahead's other 23 slots
    greener than it (0 = the greenest hour of the day ahead)."""
    row[F_CI] = ch[q]
    row[F_GRAD] = ch[q + 1] - ch[q]
    g = 0
    for q2 in range(q + 1, q + DAY_SLOTS):
        if ch[q2] < ch[q]:
            g += 1
    row[F_RANK] = g / (DAY_SLOTS - 1.0)


@njit(cache=True, nogil=True)
def site_jobs(T, lo, hi, d, cap, cfg, t_lo, horizon_s):
    """The jobs of ``T[lo:hi]`` that arrived at site d and are CarbonFlex's (:func:`in_queues`, a finite length),
    as Algorithm 1 takes them (times in s from ``t_lo``, deadlines cut at ``horizon_s``): (a, dl, work, r, frac,
    smin, smax, mthr, max_delay)."""
    idx = np.empty(max(hi - lo, 0), np.int64)
    n = 0
    origin, max_delay, flexible, duration = T.origin, T.max_delay, T.flexible, T.duration
    for i in range(lo, hi):
        if origin[i] == d and in_queues(max_delay, flexible, i) and duration[i] < 1e12:
            idx[n] = i
            n += 1
    idx = idx[:n]
    r = np.empty(n)
    frac = np.empty((n, 3))
    for y in range(n):
        i = idx[y]
        r[y] = task_servers(T.cores[i], T.gpus[i], T.mem[i], cfg, d)
        site_fractions(T.cores[i], T.gpus[i], T.mem[i], cap, d, frac[y])
    return (T.arrival[idx] - t_lo, np.minimum(T.deadline[idx] - t_lo, horizon_s), T.duration[idx], r, frac,
            T.smin[idx], T.smax[idx], T.mthr[idx], T.max_delay[idx])


@njit(cache=True, nogil=True)
def carbonflex_learn(hist, k, T, past, cap, cfg, t0k, table, rate, first):
    """The learning phase (§4.2, run at the start of each day): replay Algorithm 1 over the week before bundle
    step k (:func:`replay`) into the knowledge base's block of that day (one of N_REPLAYS, the oldest replaced);
    ``first`` (nothing learned yet in this run): replay the week ending at each day of the job history as well
    (CF_HISTORY_DAYS, clipped at the bundle's start: §6.1 replays the historical trace with different start
    times). ``rate[d, 0]``: the rows site d holds (NaN rows of ``table`` are unused); with fewer than k-NN's K
    nothing is learned."""
    day = k // STEPS_PER_DAY
    for back in range(N_REPLAYS - 1 if first else 0, -1, -1):
        if k - back * STEPS_PER_DAY > 0:
            replay(hist, k - back * STEPS_PER_DAY, T, past, cap, cfg, t0k - back * STEPS_PER_DAY * STEP_S, table,
                   ((day - back) % N_REPLAYS) * KB_ROWS)
    for d in range(cap.shape[0]):
        n = 0
        for q in range(table.shape[1]):
            if table[d, q, D_M] == table[d, q, D_M]:
                n += 1
        rate[d, 0] = n


@njit(cache=True, nogil=True)
def replay(hist, k, T, past, cap, cfg, t0k, table, r0):
    """One replay (§4.2): Algorithm 1 (:func:`oracle_alg1`) per site over the CF_WINDOW_DAYS days before bundle
    step k (time ``t0k``; clipped at the bundle's start) with the actual past carbon (history only) and the jobs
    (:func:`in_queues`) that arrived there at that site (their true lengths) -- those of the run (``T``) and,
    before the run's start, its job history ``past`` (``CarbonFlexState.past``: the paper replays the cluster's job
    arrival logs, so a run that starts mid-bundle learns from the jobs it did not see) -- in the engine's steps
    (a job is charged the capacity of the steps it runs, not of a whole hour); one knowledge-base row per
    one-hour slot whose day-ahead lies in the window (:func:`kb_rows`) into ``table[d, r0:r0 + KB_ROWS]``, the
    block's other rows NaN (a window shorter than K rows: all NaN)."""
    table[:, r0:r0 + KB_ROWS] = np.nan
    n_slot = CF_WINDOW_DAYS * 24
    k_lo = k - n_slot * SLOT_STEPS
    if k_lo < 0:
        n_slot = k // SLOT_STEPS
        k_lo = k - n_slot * SLOT_STEPS
    n_rows = n_slot - (DAY_SLOTS - 1)
    if n_rows < K_NN:
        return
    n_step = n_slot * SLOT_STEPS
    t_lo = t0k - (k - k_lo) * STEP_S
    h_s = n_step * STEP_S
    p_lo = np.searchsorted(past.arrival, t_lo)
    p_hi = np.searchsorted(past.arrival, t0k)
    lo = np.searchsorted(T.arrival, t_lo)
    hi = np.searchsorted(T.arrival, t0k)
    for d in range(cap.shape[0]):
        cs = hist[SIG_CARBON, d, k_lo:k_lo + n_step].copy()
        ch = np.empty(n_slot)
        for q in range(n_slot):
            ch[q] = cs[q * SLOT_STEPS:(q + 1) * SLOT_STEPS].mean()
        pa, pdl, pw, pr, pf, psmin, psmax, pm, pmd = site_jobs(past, p_lo, p_hi, d, cap, cfg, t_lo, h_s)
        ra, rdl, rw, rr, rf, rsmin, rsmax, rm, rmd = site_jobs(T, lo, hi, d, cap, cfg, t_lo, h_s)
        a = np.concatenate((pa, ra))  # (the past's arrivals all precede the run's: still in arrival order)
        work = np.concatenate((pw, rw))
        mthr = np.concatenate((pm, rm))
        used, rho, done, last = alg1_pass(a, np.concatenate((pdl, rdl)), work, np.concatenate((pr, rr)),
                                          np.concatenate((pf, rf)), np.concatenate((psmin, rsmin)),
                                          np.concatenate((psmax, rsmax)), mthr, cs, STEP_S, np.empty((0, n_step)))
        kb_rows(ch, last, used, rho, done, work, a, np.concatenate((pmd, rmd)), mthr, site_servers(cfg, cap, d),
                n_rows, table[d, r0:r0 + n_rows])


@njit(cache=True, nogil=True)
def kb_rows(ch, last_run, used, rho, done, work, a, max_delay, mthr, M, n_rows, tab):
    """Knowledge-base rows (Table 2) of the first n_rows one-hour slots of one site's oracle replay (in steps:
    ``last_run`` the last step each job ran in, ``used``, ``rho`` per step) into ``tab``: the state (the slot's
    carbon from the hourly means ``ch``; the jobs in the oracle's system at the slot's start, per queue -- arrived
    by the end of the slot's first step and not finished before it, the jobs the execution phase counts at that
    decision (the engine's arrivals within a step are pending at its decision) -- and their mean marginal throughput
    as the elasticity) and the decisions: m_t = the servers of M the oracle's busiest step in the slot used
    (:func:`binding_servers`, rounded up to whole servers), rho = the least marginal throughput it used in the slot."""
    n_job, n_step = last_run.shape[0], used.shape[0]
    slot_s = SLOT_STEPS * STEP_S
    last = np.full(n_job, n_step)  # the step a job finished in (n_step: not by the window's end)
    for j in range(n_job):
        if done[j] >= work[j] - 1e-9 and last_run[j] >= 0:
            last[j] = last_run[j]
    start, arrived = by_first_row(a, n_rows, slot_s)
    act = np.empty(n_job, np.int64)  # the jobs in the system at the row's slot start, in job order
    nxt = np.empty(n_job, np.int64)
    n_act = 0
    for q in range(n_rows):
        row = tab[q]
        carbon_state(ch, q, row)
        row[F_Q0] = row[F_Q0 + 1] = row[F_Q0 + 2] = 0.0
        n_act = merge_active(act, n_act, arrived[start[q]:start[q + 1]], last, q * SLOT_STEPS, nxt)
        act, nxt = nxt, act
        el = 0.0
        for x in range(n_act):  # (as the policy sees it, below)
            j = act[x]
            row[F_Q0 + queue_of(max_delay[j])] += 1.0
            el += mthr[j]
        nj = row[F_Q0] + row[F_Q0 + 1] + row[F_Q0 + 2]
        row[F_ELAST] = el / nj if nj > 0.0 else 0.0
        m = 0.0
        rh = 1.0
        for s in range(q * SLOT_STEPS, (q + 1) * SLOT_STEPS):
            m = max(m, binding_servers(used[s], M))
            rh = min(rh, rho[s])
        row[D_M] = math.ceil(m - 1e-9)
        row[D_RHO] = rh


@njit(cache=True, nogil=True)
def by_first_row(a, n_rows, slot_s):
    """The jobs by the first knowledge-base row that counts them as arrived (``a[j] < q slot_s + STEP_S``), in
    job order within a row: row q's are ``arrived[start[q]:start[q + 1]]`` (never-arrived ones last)."""
    n_job = a.shape[0]
    first = np.empty(n_job, np.int64)
    start = np.zeros(n_rows + 2, np.int64)
    for j in range(n_job):
        q = max(int(math.floor((a[j] - STEP_S) / slot_s)), 0)
        while q > 0 and a[j] < (q - 1) * slot_s + STEP_S:
            q -= 1
        while q < n_rows and not a[j] < q * slot_s + STEP_S:
            q += 1
        first[j] = min(q, n_rows)
        start[first[j] + 1] += 1
    for q in range(n_rows + 1):
        start[q + 1] += start[q]
    arrived = np.empty(n_job, np.int64)
    fill = start[:n_rows + 1].copy()
    for j in range(n_job):
        arrived[fill[first[j]]] = j
        fill[first[j]] += 1
    return start, arrived


@njit(cache=True, nogil=True)
def merge_active(act, n_act, new, last, s0, out):
    """The jobs in the system at step s0 into ``out`` in job order: those of ``act[:n_act]`` and ``new`` (both in
    job order) not finished before s0 (``last[j] >= s0``). Returns their count."""
    m = x = b = 0
    while x < n_act or b < new.shape[0]:
        if b >= new.shape[0] or (x < n_act and act[x] < new[b]):
            j = act[x]
            x += 1
        else:
            j = new[b]
            b += 1
        if last[j] >= s0:
            out[m] = j
            m += 1
    return m
