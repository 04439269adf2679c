"""VCC, virtual capacity curves (Radovanović et al., "Carbon-Aware Computing for Datacenters", IEEE Trans.
Power Systems 2023; docs/baselines.md): at the start of each day a curve per site, from the day-ahead carbon
forecast, caps the flexible load of each hour; a delay-tolerant task waits while running it would exceed
its hour's cap.

The curve is a fraction of the site's capacity (SustainGym's DatacenterEnv, which reimplements VCC: "the
fraction of the datacenter's maximum capacity allowed to be allocated"), applied to its cores, GPUs and
memory alike, and it must hold the day's flexible work (CarbonFlex §2.2: VCC moves batch jobs to
low-carbon periods "while ensuring the daily demand is met"; DatacenterEnv's reward charges a day whose
curve sums to less than its work, ``max(0, 0.97 w_t - C sum_h a(t-h))``). Demand and capacity are
therefore measured per resource, in fractions of that resource: the sum of the tasks' dominant shares is
not a load (a cores-bound and a GPU-bound task share a site), and measured in it a site at half of every
resource looked fully booked, so the curve came out flat."""

from __future__ import annotations

from collections import namedtuple

import numpy as np
from numba import njit

from ..engine.capacity import fallback_dc, fits
from ..engine.layout import IO_S0, OPT_ALLOW_DEFER, SC_PEND_N, STEP_S, STEPS_PER_DAY
from ..engine.loop import policy_loop
from . import registry
from .plan import (
    available,
    carbon_buffer,
    know_carbon,
    needs_forecast,
    release_vload,
    resource_book,
    site_fractions,
    steps_of,
    task_slots,
)

VCC = registry.code("vcc")
#: one-hour slots: VCC's hourly capacity curve
SLOT_STEPS = registry.param("vcc", "slot_steps")
#: days of daily flexible demand the state keeps (``dem``; the curve's demand forecast reads them)
HISTORY_DAYS = registry.param("vcc", "history_days")
# integer slots of VccState.isc
I_DAYS = 0  # complete days of demand recorded, at most HISTORY_DAYS

#: VCC's state between steps (:func:`new_state`): ``start`` per task (the bundle step it was first seen; NaN: not
#: yet), ``curve`` (n_dc, 24) the flexible capacity fraction allowed per hour of the current day, ``dem`` (n_dc,
#: HISTORY_DAYS + 1) daily flexible demand (fraction x steps; the last column is today's), ``infl`` (2, n_dc, 96)
#: the inflexible fraction per step of yesterday / today, ``cb`` the carbon known now (``plan.carbon_buffer``),
#: ``isc`` integer slots (``I_*``), ``vload`` (2, n_dc, 3) fractions of each site's cores / GPUs / GB booked now
#: (0 flexible, 1 inflexible; the curve caps them alike), ``vbook`` (2, n_dc, 3, n_steps + 1) the fractions to
#: release at a run step, ``vdem`` (n_dc, 3) today's flexible demand per resource (fraction x steps).
VccState = namedtuple("VccState", ["start", "curve", "dem", "infl", "cb", "isc", "vload", "vbook", "vdem"])


def new_state(n_tasks: int, n_dc: int, n_steps: int, horizon_steps: int, past) -> VccState:
    """A run's empty state: nothing seen, no curve (no cap), no demand recorded (``past``: unused)."""
    return VccState(start=task_slots(n_tasks), curve=np.full((n_dc, 24), np.inf),
                    dem=np.zeros((n_dc, HISTORY_DAYS + 1)), infl=np.zeros((2, n_dc, STEPS_PER_DAY)),
                    cb=carbon_buffer(n_dc, horizon_steps), isc=np.array([0], np.int64), vdem=np.zeros((n_dc, 3)),
                    **resource_book(n_dc, n_steps))


@njit(cache=True, nogil=True)
def vcc_curve(cb_d, dem_max, infl_prev, out):
    """The day's virtual capacity curve of one site, from the carbon forecast issued at the day's start
    (``cb_d``, per step): the day's flexible demand forecast (``dem_max``, fraction of the site's binding
    resource x steps) is placed in the hours of lowest forecast carbon intensity, each hour holding at most
    the capacity the inflexible load leaves (1 - yesterday's largest inflexible fraction in that hour);
    out[h] is the flexible fraction allowed in hour h (0 in the hours that get nothing), and
    sum(out) x SLOT_STEPS = dem_max: the day's demand is kept, only its hours move. When the capacity left
    cannot hold the demand, every hour gets what is left (a capacity-bound day: nothing can move)."""
    n_h = out.shape[0]
    ch = np.empty(n_h)
    room = np.empty(n_h)
    for h in range(n_h):
        c = 0.0
        r = 0.0
        for s in range(h * SLOT_STEPS, (h + 1) * SLOT_STEPS):
            c += cb_d[s] if s < cb_d.shape[0] else np.inf
            r = max(r, infl_prev[s])
        ch[h] = c
        room[h] = max(1.0 - r, 0.0)
        out[h] = 0.0
    order = np.argsort(ch, kind="mergesort")
    left = dem_max
    for h in order:
        if left <= 1e-12:
            break
        a = min(room[h], left / SLOT_STEPS)
        out[h] = a
        left -= a * SLOT_STEPS
    if left > 1e-12:
        for h in range(n_h):
            out[h] = room[h]


@njit(cache=True, nogil=True, inline="always")
def new_curves(P, cb, day_start):
    """Each site's curve for the day: from the largest daily flexible demand of the days recorded (our
    stand-in for the paper's high-quantile demand forecast; none yet, or a run that starts within a day: no
    cap)."""
    P_curve, P_dem, P_isc, P_infl = P.curve, P.dem, P.isc, P.infl
    for d in range(P_curve.shape[0]):
        if P_isc[I_DAYS] == 0 or not day_start:
            for h in range(24):
                P_curve[d, h] = np.inf
        else:
            dmax = 0.0
            for x in range(P_isc[I_DAYS]):
                dmax = max(dmax, P_dem[d, x])
            vcc_curve(cb[d], dmax, P_infl[0, d], P_curve[d])


@njit(cache=True, nogil=True, inline="always")
def roll_day(P_dem, P_infl, P_isc):
    """A day has ended: shift the daily flexible demand one day back (today's becomes yesterday's) and
    yesterday's inflexible load becomes today's."""
    days = P_dem.shape[1] - 1
    nd = min(P_isc[I_DAYS] + 1, days)
    for d in range(P_dem.shape[0]):
        for x in range(days - 1, 0, -1):
            P_dem[d, x] = P_dem[d, x - 1]
        P_dem[d, 0] = P_dem[d, days]
        P_dem[d, days] = 0.0
        for s in range(STEPS_PER_DAY):
            P_infl[0, d, s] = P_infl[1, d, s]
    P_isc[I_DAYS] = nd


@njit(cache=True, nogil=True, inline="always")
def new_day(P):
    """A day has ended: roll the daily demand (today's, per site, is its binding resource's) and the
    inflexible load; today's per-resource demand starts at 0."""
    roll_day(P.dem, P.infl, P.isc)
    P.vdem[:] = 0.0


@njit(cache=True, nogil=True)
def decide(T, S, C, info, P, code, j, actions):
    """One step: the actions of the pending tasks (0 = defer, never past the last step from which a task can
    still finish by its deadline). VCC never pauses or rescales a task."""
    cap = C.cap
    k = info.iopt[IO_S0] + j
    t = C.t0 + STEP_S * j
    t1 = t + STEP_S
    pn = S.sc[SC_PEND_N]
    pend = S.pend
    allow_defer = C.opts[OPT_ALLOW_DEFER] > 0.5
    T_dur, T_dl, T_o, T_md = T.duration, T.deadline, T.origin, T.max_delay
    T_c, T_g, T_m = T.cores, T.gpus, T.mem
    P_start, P_vload, P_vbook, P_vdem, P_dem, P_curve = P.start, P.vload, P.vbook, P.vdem, P.dem, P.curve
    last = P_dem.shape[1] - 1
    day_start = k % STEPS_PER_DAY == 0
    release_vload(P_vload, P_vbook, j)
    if day_start or j == 0:
        if j > 0:
            new_day(P)
        know_carbon(info, j, k, P.cb)
        new_curves(P, P.cb, day_start)
    elif needs_forecast(T_md, T.flexible, pend, pn, False, False):
        know_carbon(info, j, k, P.cb)
    avail = available(cap, S.commit)
    h_now = (k % STEPS_PER_DAY) // SLOT_STEPS
    need = np.empty(3)
    for q in range(pn):
        i = pend[q]
        o = T_o[i]
        can_wait = allow_defer and t1 + T_dur[i] <= T_dl[i]
        site_fractions(T_c[i], T_g[i], T_m[i], cap, o, need)  # the fraction of each resource the task takes
        flex = T_md[i] > 0.0
        n_s = steps_of(T_dur[i])
        if P_start[i] != P_start[i]:  # (first seen: its demand joins today's)
            P_start[i] = k
            if flex:
                dm = 0.0
                for x in range(3):
                    P_vdem[o, x] += need[x] * n_s
                    dm = max(dm, P_vdem[o, x])
                P_dem[o, last] = dm
        # a flexible task runs when the flexible load of every resource stays within the cap (or nothing
        # flexible runs and the cap is positive); it is booked until it ends when it runs or cannot wait
        run = True
        if flex:
            lim = P_curve[o, h_now]
            idle = True
            for x in range(3):
                run = run and P_vload[0, o, x] + need[x] <= lim + 1e-9
                idle = idle and P_vload[0, o, x] <= 1e-12
            run = run or (idle and lim > 0.0)
        if run or not can_wait:
            r = 0 if flex else 1
            jr = j + n_s
            for x in range(3):
                P_vload[r, o, x] += need[x]
                if jr < P_vbook.shape[3]:
                    P_vbook[r, o, x, jr] += need[x]
        if not run and can_wait:
            actions[q] = 0
            continue
        best = o  # temporal shifting: at the origin (else the datacenter left least over-committed)
        if not fits(T_c[i], T_g[i], T_m[i], cap, o):
            best = fallback_dc(T_c[i], T_g[i], T_m[i], cap, avail)
            if best < 0:
                best = o
        for r in range(3):
            avail[best, r] -= T_c[i] if r == 0 else (T_g[i] if r == 1 else T_m[i])
        actions[q] = best + 1
    for d in range(P_vload.shape[1]):  # today's inflexible load at this step (tomorrow's curve reads it)
        P.infl[1, d, k % STEPS_PER_DAY] = max(P_vload[1, d, 0], P_vload[1, d, 1], P_vload[1, d, 2])


#: The run loop: steps S.sc[SC_STEP] .. j_end - 1 with VCC (its state in ``P``, :data:`VccState`).
run = policy_loop(decide)
