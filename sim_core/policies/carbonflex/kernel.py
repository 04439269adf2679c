"""CarbonFlex's execution phase (Hanafy, Wu, Irwin, Shenoy, arXiv:2505.18357, §4.3 and §5): at the start of
each one-hour slot it provisions each site with the mean of the k = 5 nearest past states' oracle
provisioning (Algorithm 2, in whole servers of the site's M) and threshold rho, and schedules the flexible
jobs on those servers by marginal throughput (Algorithm 3): a job is scaled up only by servers whose marginal
throughput is at least rho; jobs that get no server wait (or are suspended). m_t servers of M provision that
share of each of the site's resources (cores, GPUs, GB); jobs are fitted per resource, as the oracle did
(``oracle.oracle_alg1``)."""

from __future__ import annotations

import math
from collections import namedtuple

import numpy as np
from numba import njit

from ...engine.capacity import fallback_dc, fits, site_max_scale, speedup
from ...engine.layout import (
    IO_S0,
    OPT_ALLOW_DEFER,
    SC_CTL_N,
    SC_FLEX_N,
    SC_PEND_N,
    ST_PAUSED,
    ST_STARTED,
    STEP_S,
    STEPS_PER_DAY,
)
from ...engine.loop import policy_loop
from .. import registry
from ..plan import (
    available,
    carbon_buffer,
    ctl,
    know_carbon,
    release_load,
    release_vload,
    resource_book,
    site_fractions,
    steps_of,
    task_slots,
    work_left,
)
from .oracle import (
    D_M,
    D_RHO,
    DAY_SLOTS,
    F_ELAST,
    F_Q0,
    K_NN,
    KB_ROWS,
    N_COLS,
    N_FEAT,
    N_REPLAYS,
    SLOT_STEPS,
    carbon_state,
    carbonflex_learn,
    in_queues,
    provisioned_share,
    queue_of,
    task_servers,
)

CARBONFLEX = registry.code("carbonflex")
#: the variant whose k-NN standardises the state's features (:func:`knn_provision`)
CARBONFLEX_SCALED = registry.code("carbonflex_scaled")
# slots of CarbonFlexState.rate[d]: knowledge-base rows, this slot's provisioning m_t (servers), this slot's rho
R_ROWS, R_M, R_RHO = 0, 1, 2

#: CarbonFlex's state between steps (:func:`new_state`): ``tgt`` per task, the scale Algorithm 3 chose (NaN: none),
#: ``book`` (5, n_dc, n_steps + 1) jobs per queue (rows 2-4) of the tasks it cannot control, to be released at a run
#: step, ``load`` (5, n_dc) those booked now, ``cb`` the carbon known now (``plan.carbon_buffer``), ``day`` (1,) the
#: bundle day of the last learning phase (-1: none yet), ``vload`` (2, n_dc, 3) fractions of each site's cores /
#: GPUs / GB the tasks it cannot control hold now (row 0), ``vbook`` (2, n_dc, 3, n_steps + 1) those to release at
#: a run step, ``table`` (n_dc, N_REPLAYS x KB_ROWS, N_COLS) the knowledge base (state -> servers, rho; one block
#: per replay, NaN rows unused), ``rate`` (n_dc, 3) its rows per site, this slot's servers and rho (``R_*``),
#: ``past`` the tasks (``engine.Tasks``) of the job history before the run's start the learning phase replays.
CarbonFlexState = namedtuple("CarbonFlexState", ["tgt", "book", "load", "cb", "day", "vload", "vbook", "table",
                                                 "rate", "past"])


def new_state(n_tasks: int, n_dc: int, n_steps: int, horizon_steps: int, past) -> CarbonFlexState:
    """A run's empty state: nothing learned or booked, with the job history ``past``."""
    return CarbonFlexState(tgt=task_slots(n_tasks), book=np.zeros((5, n_dc, n_steps + 1)), load=np.zeros((5, n_dc)),
                           cb=carbon_buffer(n_dc, horizon_steps), day=np.array([-1], np.int64),
                           table=np.full((n_dc, N_REPLAYS * KB_ROWS, N_COLS), np.nan), rate=np.zeros((n_dc, 3)),
                           past=past, **resource_book(n_dc, n_steps))


@njit(cache=True, nogil=True)
def knn_provision(tab, state, k, scaled):
    """Algorithm 2's match and mean (§4.3; §5: the k nearest by Euclidean distance, scikit-learn's k-NN over a
    KD-tree): the k rows of the knowledge base ``tab`` (its rows whose provisioning is not NaN) nearest to
    ``state`` (ties: the earlier row); returns (m_t = their mean provisioning rounded up to whole servers, rho =
    their mean threshold). The paper names the distance, not a scaling of the state: ``scaled`` False measures
    it over the state of Table 2 as it is (g/kWh, job counts, fractions; ``carbonflex``), True over each
    feature standardised by the rows' mean and standard deviation (``carbonflex_scaled``: scikit-learn's usual
    ``StandardScaler`` before k-NN)."""
    n_all = tab.shape[0]
    ok = np.empty(n_all, np.bool_)
    n_ok = 0
    for q in range(n_all):
        ok[q] = tab[q, D_M] == tab[q, D_M]
        n_ok += ok[q]
    sd = np.ones(N_FEAT)
    if scaled and n_ok > 1:
        for f in range(N_FEAT):
            m = 0.0
            for q in range(n_all):
                if ok[q]:
                    m += tab[q, f]
            m /= n_ok
            v = 0.0
            for q in range(n_all):
                if ok[q]:
                    v += (tab[q, f] - m) ** 2
            sd[f] = math.sqrt(v / n_ok) if v > 0.0 else 1.0  # (a constant feature ranks no row above another)
    kk = min(k, n_ok)
    near_d = np.empty(kk)  # the kk rows first in a stable ascending sort of the distances, in that order
    near_q = np.empty(kk, np.int64)
    n_near = 0
    for q in range(n_all if kk > 0 else 0):
        dq = np.inf  # (a row without provisioning: never nearer than one with it)
        if ok[q]:
            dq = 0.0
            for f in range(N_FEAT):
                x = (tab[q, f] - state[f]) / sd[f]
                dq += x * x
        if n_near == kk and not sorts_before(dq, near_d[kk - 1]):
            continue
        p = min(n_near, kk - 1)  # (insert, dropping the last when full; rows come in order: ties stay behind)
        while p > 0 and sorts_before(dq, near_d[p - 1]):
            near_d[p], near_q[p] = near_d[p - 1], near_q[p - 1]
            p -= 1
        near_d[p], near_q[p] = dq, q
        n_near = min(n_near + 1, kk)
    m = 0.0
    rho = 0.0
    for x in range(kk):
        m += tab[near_q[x], D_M]
        rho += tab[near_q[x], D_RHO]
    return math.ceil(m / kk - 1e-9), rho / kk


@njit(cache=True, nogil=True, inline="always")
def sorts_before(d1, d2):
    """Whether a distance d1 of a later row sorts before d2 of an earlier one in NumPy's stable ascending sort
    (NaN last): strictly less, or d2 NaN and d1 not. (A selection of the k nearest with this test takes exactly
    the rows, in the order, of the whole sort it replaced: one sort of every row per site and hour was most of a
    year's stepping.)"""
    if d2 != d2:
        return d1 == d1
    return d1 < d2


@njit(cache=True, nogil=True)
def schedule_alg3(r, frac, smin, smax, mthr, budget, room, rho):
    """Algorithm 3 (§4.3) for the jobs that may wait: each job offers its base k_min = smin (p_j(k_min) = 1)
    and then one server at a time (1 / r[j] request multiples, r[j] its servers at scale 1) up to smax (p_j(k)
    = mthr[j], gridshift's linear curve; the last may be partial); the units with p_j(k) >= rho (rho is the
    least marginal throughput the oracle used, §4.2, so a unit at rho is one it used) are sorted by p_j(k)
    descending, then by the delay budget ascending, and taken while the provisioned servers are not all
    allocated (the paper's sum S_j[t] < m_t), per resource: a unit is taken while every resource it uses
    (``frac[j]``, its request at scale 1 as fractions of the site) is below the provisioned ``room`` (3), and
    only on top of the job's previous one. Returns each job's scale: 0 (no server) or in [smin, smax]."""
    n = r.shape[0]
    nu = np.empty(n, np.int64)
    n_ent = 0
    for j in range(n):
        nu[j] = 1
        if mthr[j] >= rho and mthr[j] > 0.0 and r[j] > 0.0:
            nu[j] += int(math.ceil((smax[j] - smin[j]) * r[j] - 1e-9))
        n_ent += nu[j]
    ej = np.empty(n_ent, np.int64)
    eu = np.empty(n_ent, np.int64)
    p = np.empty(n_ent)
    b = np.empty(n_ent)
    e = 0
    for j in range(n):
        for u in range(nu[j]):
            ej[e], eu[e] = j, u
            p[e] = 1.0 if u == 0 else mthr[j]
            b[e] = budget[j]
            e += 1
    o1 = np.argsort(b, kind="mergesort")
    order = o1[np.argsort(-p[o1], kind="mergesort")]
    units = np.zeros(n, np.int64)
    x = np.zeros(n)
    used = np.zeros(3)
    for e in order:
        j, u = ej[e], eu[e]
        if units[j] != u:
            continue
        full = False
        for y in range(3):
            if frac[j, y] > 0.0 and used[y] >= room[y] - 1e-9:
                full = True
        if full:
            continue
        dx = smin[j] if u == 0 else min(min(1.0, (smax[j] - smin[j]) * r[j] - (u - 1)) / r[j], smax[j] - x[j])
        x[j] += dx
        for y in range(3):
            used[y] += dx * frac[j, y]
        units[j] += 1
    return x


@njit(cache=True, nogil=True)
def site_state(cb_d, P_load, d, T, S, pn, t, state):
    """The state of Table 2 at site d now: CI_t, CI^G_t, CI^R_t from the hourly means of the carbon known now
    (the actual of this step, then the forecast), the flexible jobs in the system there (waiting, running or
    suspended) per queue, and their mean marginal throughput (elasticity)."""
    ch = np.empty(DAY_SLOTS)
    for q in range(DAY_SLOTS):
        c = 0.0
        for s in range(SLOT_STEPS):
            h = q * SLOT_STEPS + s
            c += cb_d[h] if h < cb_d.shape[0] else np.inf
        ch[q] = c / SLOT_STEPS
    carbon_state(ch, 0, state)
    for x in range(3):
        state[F_Q0 + x] = 0.0
    el = 0.0
    pend, origin, max_delay, flexible, mthr = S.pend, T.origin, T.max_delay, T.flexible, T.mthr  # (decide's note)
    for q in range(pn):
        i = pend[q]
        if origin[i] == d and in_queues(max_delay, flexible, i):
            state[F_Q0 + queue_of(max_delay[i])] += 1.0
            el += mthr[i]
    for x in range(3):  # running jobs it cannot control (their marginal throughput: 0, never scaled)
        state[F_Q0 + x] += P_load[2 + x, d]
    flex, dest, status, fin = S.flex, S.dest, S.status, S.fin
    for q in range(S.sc[SC_FLEX_N]):
        i = flex[q]
        if dest[i] == d and ((status[i] == ST_STARTED and fin[i] > t) or status[i] == ST_PAUSED):
            state[F_Q0 + queue_of(max_delay[i])] += 1.0
            el += mthr[i]
    nj = state[F_Q0] + state[F_Q0 + 1] + state[F_Q0 + 2]
    state[F_ELAST] = el / nj if nj > 0.0 else 0.0


@njit(cache=True, nogil=True, inline="always")
def max_scale(T, i, cap, d):
    """k_max of task i at site d: its max_scale, but never a request larger than the site (§3: a job's
    servers lie in [k_min, k_max] within the cluster's M; a larger one could never start again)."""
    return site_max_scale(T.cores[i], T.gpus[i], T.mem[i], T.smin[i], T.smax[i], cap, d)


@njit(cache=True, nogil=True)
def plan_hour(T, S, C, P, d, pn, t, t1, allow_defer, scaled):
    """The start of a slot at site d (§4.3): provision m_t and rho by k-NN (:func:`knn_provision`), give the
    jobs that can no longer wait what they need first (a waiting job its request; a started one its
    maximum scale when a slot without servers would make it late: §6.1, a job past its allowed delay runs to
    completion), then Algorithm 3 over the rest; the chosen scale of each job goes to ``P.tgt``."""
    cfg = C.srv_cfg
    state = np.empty(N_FEAT)
    site_state(P.cb[d], P.load, d, T, S, pn, t, state)
    m_t, rho = knn_provision(P.table[d], state, K_NN, scaled)
    P.rate[d, R_M] = m_t
    P.rate[d, R_RHO] = rho
    n_max = pn + S.sc[SC_FLEX_N]
    ids = np.empty(n_max, np.int64)
    r = np.empty(n_max)
    frac = np.empty((n_max, 3))
    budget = np.empty(n_max)
    n = 0
    forced = P.vload[0, d].copy()  # held by running jobs it cannot control
    fi = np.empty(3)  # (one scratch for every job)
    # (columns bound once: decide's note)
    pend, origin, max_delay, flexible, cores, gpus, mem, duration, deadline, tgt, cap = \
        S.pend, T.origin, T.max_delay, T.flexible, T.cores, T.gpus, T.mem, T.duration, T.deadline, P.tgt, C.cap
    for q in range(pn):
        i = pend[q]
        if origin[i] != d or not in_queues(max_delay, flexible, i):
            continue
        site_fractions(cores[i], gpus[i], mem[i], cap, d, fi)
        if not (allow_defer and t1 + duration[i] <= deadline[i]):
            tgt[i] = np.nan  # runs now at its request
            forced += fi
            continue
        ids[n], frac[n], budget[n] = i, fi, deadline[i] - t - duration[i]
        r[n] = task_servers(cores[i], gpus[i], mem[i], cfg, d)
        n += 1
    flex, status, fin, dest, ckpt, mthr = S.flex, S.status, S.fin, S.dest, T.ckpt, T.mthr
    for q in range(S.sc[SC_FLEX_N]):
        i = flex[q]
        running = status[i] == ST_STARTED and fin[i] > t
        if dest[i] != d or not (running or status[i] == ST_PAUSED) or (running and fin[i] <= t1):
            continue
        site_fractions(cores[i], gpus[i], mem[i], cap, d, fi)
        w = work_left(i, t, status, fin, S.segs, S.rem, S.nseg, S.scale, ckpt, mthr)
        xm = max_scale(T, i, cap, d)
        if t + SLOT_STEPS * STEP_S + ckpt[i] + w / speedup(xm, mthr[i]) > deadline[i]:
            tgt[i] = xm
            forced += xm * fi
            continue
        ids[n], frac[n], budget[n] = i, fi, deadline[i] - t - w
        r[n] = task_servers(cores[i], gpus[i], mem[i], cfg, d)
        n += 1
    ids = ids[:n]
    xmax = np.empty(n)
    for q in range(n):
        xmax[q] = max_scale(T, ids[q], C.cap, d)
    room = provisioned_share(m_t, cfg, C.cap, d) - forced  # the provisioned share of each resource left
    x = schedule_alg3(r[:n], frac[:n], T.smin[ids], xmax, T.mthr[ids], budget[:n], room, rho)
    for q in range(n):
        P.tgt[ids[q]] = x[q]


@njit(cache=True, nogil=True)
def flex_in_use(T, S, C, P_vload, t, used):
    """Fractions of each site's cores, GPUs and GB (``used`` (n_dc, 3)) CarbonFlex's running jobs hold now:
    those booked for the jobs it cannot control, and each controllable one's scale x its request."""
    used[:] = P_vload[0]
    # (arrays bound once, one scratch: decide's note)
    flex, status, fin, dest, scale, cores, gpus, mem, cap = S.flex, S.status, S.fin, S.dest, S.scale, T.cores, \
        T.gpus, T.mem, C.cap
    fi = np.empty(3)
    for q in range(S.sc[SC_FLEX_N]):
        i = flex[q]
        if status[i] == ST_STARTED and fin[i] > t:
            d = dest[i]
            site_fractions(cores[i], gpus[i], mem[i], cap, d, fi)
            x = scale[i]
            for y in range(3):
                used[d, y] += x * fi[y]


@njit(cache=True, nogil=True)
def decide(T, S, C, info, P, code, j, actions):
    """One step. At the start of a day: the learning phase. At the start of each slot (and of the run): the
    provisioning and Algorithm 3 at every site that has learned (:func:`plan_hour`); a waiting flexible job
    runs when Algorithm 3 gave it servers, or (between slot starts, Algorithm 3 running when a job arrives)
    when its request fits in the servers provisioned and not in use, or when it can wait no longer. A site
    with nothing learned yet is carbon-agnostic (every job runs at once, §4.3's fallback to M)."""
    cap = C.cap
    n_dc = cap.shape[0]
    k = info.iopt[IO_S0] + j
    t = C.t0 + STEP_S * j
    t1 = t + STEP_S
    pn = S.sc[SC_PEND_N]
    pend = S.pend
    allow_defer = C.opts[OPT_ALLOW_DEFER] > 0.5
    P_tgt, P_rate = P.tgt, P.rate
    release_load(P.load, P.book, j)
    release_vload(P.vload, P.vbook, j)
    day_start = k % STEPS_PER_DAY == 0
    hour_start = k % SLOT_STEPS == 0 or j == 0
    if day_start:
        carbonflex_learn(info.hist, k, T, P.past, cap, C.srv_cfg, t, P.table, P_rate, P.day[0] < 0)
        P.day[0] = k // STEPS_PER_DAY
    if hour_start:
        know_carbon(info, j, k, P.cb)
        for d in range(n_dc):
            if P_rate[d, R_ROWS] >= K_NN:
                plan_hour(T, S, C, P, d, pn, t, t1, allow_defer, code == CARBONFLEX_SCALED)
    used = np.empty((n_dc, 3))
    flex_in_use(T, S, C, P.vload, t, used)
    avail = available(cap, S.commit)
    fi = np.empty(3)  # (one scratch for every pending task)
    # (the task columns bound once: a field read of the tasks' tuple per pending task per step costs an atomic
    # reference count each time; with those in site_state and plan_hour, 5 % of a x1 run's time)
    origin, max_delay, flexible, cores, gpus, mem, duration, deadline, srv_cfg = \
        T.origin, T.max_delay, T.flexible, T.cores, T.gpus, T.mem, T.duration, T.deadline, C.srv_cfg
    for q in range(pn):
        i = pend[q]
        o = origin[i]
        if in_queues(max_delay, flexible, i) and P_rate[o, R_ROWS] >= K_NN:
            can_wait = allow_defer and t1 + duration[i] <= deadline[i]
            site_fractions(cores[i], gpus[i], mem[i], cap, o, fi)
            if hour_start:
                run = P_tgt[i] > 0.0
            else:  # its request fits in the provisioned share of every resource
                lim = provisioned_share(P_rate[o, R_M], srv_cfg, cap, o)
                run = True
                for y in range(3):
                    run = run and (fi[y] <= 0.0 or used[o, y] + fi[y] <= lim + 1e-9)
                P_tgt[i] = np.nan
            if can_wait and not run:
                actions[q] = 0
                continue
            for y in range(3):
                used[o, y] += fi[y]
            if not flexible[i]:  # (not controllable: its resources and its queue are booked until it ends)
                book(P, o, j + steps_of(duration[i]), fi, queue_of(max_delay[i]))
        best = o  # temporal shifting: at the origin (else the datacenter left least over-committed)
        if not fits(cores[i], gpus[i], mem[i], cap, o):
            best = fallback_dc(cores[i], gpus[i], mem[i], cap, avail)
            if best < 0:
                best = o
        avail[best, 0] -= cores[i]
        avail[best, 1] -= gpus[i]
        avail[best, 2] -= mem[i]
        actions[q] = best + 1
    if S.sc[SC_FLEX_N] > 0:
        S.sc[SC_CTL_N] = controls(T, S, P_tgt, P_rate, t, t1)


@njit(cache=True, nogil=True, inline="always")
def book(P, d, jr, fi, qi):
    """Book the fractions ``fi`` (3) of site d's resources and one job of queue qi until run step jr."""
    P.load[2 + qi, d] += 1.0
    for y in range(3):
        P.vload[0, d, y] += fi[y]
    if jr < P.book.shape[2]:
        P.book[2 + qi, d, jr] += 1.0
        for y in range(3):
            P.vbook[0, d, y, jr] += fi[y]


@njit(cache=True, nogil=True)
def controls(T, S, P_tgt, P_rate, t, t1):
    """The started flexible tasks at sites that have learned take the scale Algorithm 3 chose (``P.tgt``): 0
    suspends an interruptible one (a task that cannot be suspended keeps its minimum scale), a positive one
    resumes or rescales it; NaN leaves it as it is. Returns the count of controls."""
    n_ctl = 0
    flex, status, fin, dest, scale, intr, smin = S.flex, S.status, S.fin, S.dest, S.scale, T.interruptible, T.smin
    for q in range(S.sc[SC_FLEX_N]):
        i = flex[q]
        if P_rate[dest[i], R_ROWS] < K_NN:
            continue
        running = status[i] == ST_STARTED and fin[i] > t
        paused = status[i] == ST_PAUSED
        if (running and fin[i] <= t1) or not (running or paused):
            continue
        x = P_tgt[i]
        if x != x:
            continue
        if x <= 0.0 and not intr[i]:
            x = smin[i]
        if (running and x != scale[i]) or (paused and x > 0.0):
            n_ctl = ctl(S, n_ctl, i, x)
    return n_ctl


#: The run loop: steps S.sc[SC_STEP] .. j_end - 1 with CarbonFlex (its state in ``P``, :data:`CarbonFlexState`).
run = policy_loop(decide)
