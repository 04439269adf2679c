"""A lower bound of each datacenter's total power as a convex piecewise-linear function of the LP's
per-step variables, derived from the engine's physics (``sim_core.physics``).

For datacenter d and step k the LP has the time-weighted busy resources ``B = (B_c, B_g, B_m)`` (cores,
allocated GPUs, GB in use) and, with managed power, the time-weighted servers on or waking ``A = (A_c,
A_g)`` (CPU-only and GPU servers). For every engine state (busy resources, servers on / waking /
asleep, weather) the engine's ``total_kw`` is at least

    P(B, A) = max_k [ (1 + t_k) Q + e_k ]                  transformer loss at the load Q behind it
    Q       = max_j [ (1 + s_j) (I + C + L) + c_j ] + U     cooling load I + C + lighting L, chiller, tower, pumps
    U       = max( UPS planes (I) )                        UPS loss carrying the IT
    I       = max( H + fan planes (H, a) )                 IT incl. server fans, a = (A_c + A_g) / servers
    C       = max( crac planes (H) )                       CRAC fans
    H       = h0 + h_Ac A_c + h_Ag A_g + h_Bc B_c + h_Bg B_g + h_Bm B_m      IT heat excl. fans (kW)

(docs/optimum.md derives every term). Each part is a valid minorant of the engine's term at the
actual state and is non-decreasing in the parts it is composed with, so the composition is a
minorant of ``total_kw``. ``tests/unit/sim_core/optimum`` checks it against ``physics.dc_step`` on the
states of engine runs, and ``optimum.slack.bracket_slack`` measures how far below the engine it lies at a run's state.

The facility tail (chiller + tower or dry-cooler fans + pumps as a function of the cooling load at a
step's weather) is :func:`facility_tail`: the engine's own cooling plant, ``physics.facility_from_cooling``
(the part of ``physics.dc_step`` from the cooling load on: one model; ``test_facility_tail.py`` checks the
two agree exactly for every condenser type), evaluated on a grid and turned into the lower convex
hull of its lower staircase: rigorous because that tail is non-decreasing in the cooling load wherever
the chiller meets the load (checked on the grid; a step where the chiller could run short falls back
to the tail's constant floor, the pumps at minimum flow and the fans at minimum airflow).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from numba import njit

from .. import physics as ph

#: tangent points of the server-fan perspective bound (airflow ratio r0 > the fans' minimum)
FAN_R0 = (0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0, 1.15, 1.35)
#: CRAC fan tangent points: CRAC airflow ratios (above the fans' minimum)
CRAC_X0 = (0.65, 0.75, 0.85, 1.0, 1.15)
#: facility-tail grid on [0, the largest cooling load the bound reaches]: evenly spaced points plus
#: geometrically spaced ones (a relative spacing bounds the staircase's loss at low load)
GRID_LINEAR, GRID_GEOM = 256, 240
#: facility lines kept per (datacenter, step): the hull edges supporting it at these fractions of
#: 1.1 x the design cooling load (denser at low load, where lightly used sites operate)
FAC_SUPPORT = tuple(1.1 * ((q + 0.5) / 12) ** 2 for q in range(12))
N_FAC_PIECES = len(FAC_SUPPORT)


@dataclass
class SitePower:
    """One datacenter's power-bound coefficients (kW per unit, except the server counts)."""

    managed: bool
    hosted: bool  # has servers (power states apply)
    n_servers: float
    n_c: float  # CPU-only servers
    n_g: float  # GPU servers
    spare_c: float  # servers of each kind always on or waking (spare pool)
    spare_g: float
    cps: float  # cores per server
    gps: float  # GPUs per GPU server
    mps: float  # GB per server
    h0: float  # IT heat lower bound: constant (kW)
    h_ac: float  # per CPU-only server on or waking (kW)
    h_ag: float  # per GPU server on or waking (kW)
    h_bc: float  # per busy core (kW)
    h_bg: float  # per allocated GPU (kW)
    h_bm: float  # per GB in use (kW)
    sleep_floor: float  # the part of h0 drawn by sleeping equipment (kW)
    heat_d: float  # design IT heat, design IT power, design cooling load, design heat rejected (kW)
    it_d: float
    cool_d: float
    rej_d: float
    cap: tuple[float, float, float]  # cores, GPUs, GB
    cool_hi: float  # the largest cooling load I + C the bound's terms reach (kW): the facility lines hold up to it
    cool_lo: float  # the least cooling load I + C the bound's terms reach (kW): the facility lines hold from it
    fan_planes: np.ndarray  # (m, 3): I - H >= a_H * (H - sleep_floor) + a_A * (A_c + A_g) + c
    crac_planes: np.ndarray  # (m, 2): C >= a_H * H + c
    light: float = 0.0  # lighting (kW, constant): in the cooling load and the power chain
    ups_planes: np.ndarray = None  # (m, 2): U >= a_I * I + c (UPS loss carrying the IT)
    tr_planes: np.ndarray = None  # (m, 2): P >= (1 + a) * Q + c (transformer loss serving the load Q)


def site_power(p: np.ndarray, cap_cores: float, cap_gpus: float, cap_mem: float, managed: bool) -> SitePower:
    """The coefficients of one datacenter (``p``: its ``physics.param_vector``)."""
    n, ng, gps, mps = (float(x) for x in ph.server_layout(p, float(cap_cores), float(cap_gpus), float(cap_mem)))
    n_servers, heat_d, it_d, cool_d, rej_d = (float(x) for x in ph.design_point(p, float(cap_cores),
                                                                                   float(cap_gpus), float(cap_mem)))
    t_in = p[ph.P_SUPPLY] + p[ph.P_SUPPLY_APP]
    p0 = float(ph.cpu_server_power(p, 0.0, t_in))
    p1 = float(ph.cpu_server_power(p, 1.0, t_in))
    gi, gmax, ua = p[ph.P_GPU_IDLE], p[ph.P_GPU_MAX], p[ph.P_GPU_ALLOC_U]
    gsleep, psleep = p[ph.P_GPU_SLEEP_W], p[ph.P_SLEEP_W]
    wake_w = p[ph.P_WAKE_FRAC] * p[ph.P_CPU_MAX]
    mstat, mdyn = p[ph.P_MEM_STATIC], p[ph.P_MEM_DYN]
    cps = p[ph.P_CORES_PER_SERVER]
    spare = p[ph.P_SPARE_MIN]
    hosted = n > 0
    if managed and hosted:
        # a server on or waking draws at least min(idle, waking) power plus its memory's static power;
        # a GPU server also its GPUs' idle power (chord G / N_g per server: min(gps A_g, G) >= G A_g / N_g);
        # a sleeping one its sleep power (its GPUs theirs)
        floor = min(p0, wake_w) + mps * mstat
        h0 = n * psleep + cap_gpus * gsleep
        h_ac = floor - psleep
        h_ag = floor - psleep + ((cap_gpus / ng) * (gi - gsleep) if ng > 0 else 0.0)
        h_bc = (p1 - p0) / cps  # chord of the (concave) server curve, per core of a server on
        h_bg = float(ph.gpu_power(p, ua)) - gi  # log2 curve per device >= its chord through 0 and 1 device
        sleep_floor = h0
        n_c, n_g = n - ng, ng
        spare_c, spare_g = min(spare, n_c), min(spare, n_g)
    else:
        # every server on (power="always_on"), or no servers (GPUs and memory always on)
        ns = n_servers if not managed else 0.0
        h0 = ns * p0 + cap_gpus * gi + cap_mem * mstat
        h_ac = h_ag = 0.0
        h_bc = ns * (p1 - p0) / cap_cores if (ns > 0 and cap_cores > 0) else 0.0
        # the per-device curve (managed without servers, and always on: one GPU model in both modes); only
        # gridshift 0.1's preset (gpu_power_model "fleet_average") runs always_on on the fleet-average log2
        # curve, bounded by its chord over [0, 1]
        fleet = not managed and p[ph.P_GPU_FLEET] > 0.5
        h_bg = ((gmax - gi) if cap_gpus > 0 else 0.0) if fleet else float(ph.gpu_power(p, ua)) - gi
        sleep_floor = 0.0
        n_c = n_g = spare_c = spare_g = 0.0
    # server fans: fan = a F max(rmin, h / a)^3 (h = heat / heat_d) is the perspective of a convex
    # function: tangent planes F (3 r0^2 h - 2 r0^3 a) and F rmin^3 a bound it at any (h, a), a > 0
    fan_f = p[ph.P_ITFAN_FRAC] * heat_d
    rmin = p[ph.P_ITFAN_MIN]
    per_a = 1.0 / n if (managed and hosted) else 0.0  # a = per_a (A_c + A_g), or the constant 1
    planes = []
    if heat_d > 0:
        planes.append((0.0, fan_f * rmin ** 3 * per_a, 0.0 if per_a else fan_f * rmin ** 3))
        for r0 in FAN_R0:
            if r0 <= rmin:
                continue
            planes.append((fan_f * 3 * r0 * r0 / heat_d, -fan_f * 2 * r0 ** 3 * per_a,
                           0.0 if per_a else -fan_f * 2 * r0 ** 3))
    fan_planes = np.array(planes, dtype=np.float64).reshape(-1, 3)
    # CRAC fans: v_crac / v_crac,design >= kappa heat / it_d (derivation in docs/optimum.md), then the
    # cubic law with the minimum airflow: a convex function of the heat, bounded by its tangents
    app = p[ph.P_SUPPLY_APP] + p[ph.P_RETURN_APP]
    dt_s = p[ph.P_SERVER_DT]
    fc = p[ph.P_CRAC_FRAC] * it_d
    cmin = p[ph.P_CRAC_MIN]
    crac = []
    if it_d > 0:
        kappa = (dt_s + app) / (app + dt_s * heat_d / it_d)
        crac.append((0.0, fc * cmin ** 3))
        for x0 in CRAC_X0:
            if x0 <= cmin:
                continue
            # fc x^3 with x = kappa H / it_d, tangent at x0: fc (3 x0^2 x - 2 x0^3)
            crac.append((fc * 3 * x0 * x0 * kappa / it_d, -2.0 * fc * x0 ** 3))
    crac_planes = np.array(crac, dtype=np.float64).reshape(-1, 2)
    site = SitePower(managed=bool(managed), hosted=hosted, n_servers=n, n_c=n_c, n_g=n_g, spare_c=spare_c,
                     spare_g=spare_g, cps=cps, gps=gps, mps=mps, h0=h0 / 1000.0, h_ac=h_ac / 1000.0,
                     h_ag=h_ag / 1000.0, h_bc=h_bc / 1000.0, h_bg=h_bg / 1000.0, h_bm=mdyn / 1000.0,
                     sleep_floor=sleep_floor / 1000.0, heat_d=heat_d, it_d=it_d, cool_d=cool_d, rej_d=rej_d,
                     cap=(float(cap_cores), float(cap_gpus), float(cap_mem)), cool_hi=0.0, cool_lo=0.0,
                     fan_planes=fan_planes, crac_planes=crac_planes)
    site.light = float(p[ph.P_LIGHT] * it_d)
    site.ups_planes, site.tr_planes = _chain_planes(p, it_d, rej_d)
    site.cool_hi = _lp_cooling_max(site)
    site.cool_lo = _lp_cooling_min(site)
    return site


#: tangent points of the UPS loss (load fraction of the design IT power) and of the transformer loss
#: (fraction of its rating, the design heat rejected): denser at light load, where the sites operate
UPS_X0 = (0.0, 0.05, 0.1, 0.2, 0.3, 0.4, 0.5, 0.7, 1.0)
TR_Y0 = (0.0, 0.05, 0.1, 0.2, 0.3, 0.45, 0.6, 0.8, 1.0)


def _chain_planes(p: np.ndarray, it_d: float, rej_d: float) -> tuple[np.ndarray, np.ndarray]:
    """Tangent planes of the power chain behind the cooling plant (``physics.dc_step``): the UPS loss
    it_d (c0 + c1 x + c2 x^2) at x = IT / it_d (``physics.ups_loss``) and the transformer loss h + h (y / pul)^2 at
    y = load / rej_d (``physics.transformer_loss``). Both are convex and non-decreasing in their load for
    x, y >= 0 (c1, c2 >= 0; checked: otherwise the term's bound is its value at no load, c0 it_d or h, if
    non-negative), so their tangents are below them at any load and rise with it: evaluated at the bound's IT
    and load (minorants of the engine's), they stay below the engine's losses."""
    c0, c1, c2 = (float(p[k]) for k in (ph.P_UPS0, ph.P_UPS1, ph.P_UPS2))
    ups = []
    if it_d > 0:
        if c1 >= 0 and c2 >= 0:
            for x0 in UPS_X0:
                ups.append((c1 + 2 * c2 * x0, it_d * (c0 + c1 * x0 + c2 * x0 * x0) - (c1 + 2 * c2 * x0) * x0 * it_d))
        else:
            ups.append((0.0, max(0.0, it_d * c0)))
    ups = ups or [(0.0, 0.0)]
    tr = []
    eff, pul = float(p[ph.P_TR_EFF]), float(p[ph.P_TR_PUL])
    if rej_d > 0 and eff < 1.0 and pul > 0:
        half = 0.5 * pul * rej_d * (1.0 / eff - 1.0)
        k = half / (pul * pul * rej_d * rej_d)  # tr(Q) = half + k Q^2
        for y0 in TR_Y0:
            q0 = y0 * rej_d
            tr.append((2 * k * q0, half + k * q0 * q0 - 2 * k * q0 * q0))
    tr = tr or [(0.0, 0.0)]
    return np.array(ups, dtype=np.float64), np.array(tr, dtype=np.float64)


def _lp_cooling_min(s: SitePower) -> float:
    """The least cooling load the bound's own terms can reach (kW), x (1 - 1e-9): I + C + lighting at the least heat
    bound
    (nothing busy, only the spare pool on: every coefficient of H is >= 0), I >= H plus the fan plane that rises
    with the servers on (its least at the spare pool), C at that heat (the CRAC planes rise with H). The LP's
    I + C is never below it, nor is the bound's at any engine state, so the facility lines need only hold from
    it: the tail's hull starts at this load, not at 0 (tighter where the tail is steep at light load)."""
    h_min = s.h0 + s.h_ac * s.spare_c + s.h_ag * s.spare_g
    fan = max([0.0] + [aA * (s.spare_c + s.spare_g) + c for aH, aA, c in s.fan_planes if aH == 0.0 and aA >= 0.0])
    crac = max([0.0] + [aH * h_min + c for aH, c in s.crac_planes])
    return max(0.0, (1.0 - 1e-9) * (h_min + fan + crac + s.light))


def _lp_cooling_max(s: SitePower) -> float:
    """The largest cooling load the bound's own terms can reach (kW): I + C + lighting at the largest heat bound H
    (every server on, every resource busy) with the fan planes at the smallest share of servers on.
    The facility lines only need to hold on [0, this]: the bound at any engine state evaluates them at
    its own I + C, never above it."""
    h_max = s.h0 + s.h_ac * s.n_c + s.h_ag * s.n_g + s.h_bc * s.cap[0] + s.h_bg * s.cap[1] + s.h_bm * s.cap[2]
    a_min = s.spare_c + s.spare_g
    i_max = h_max + max([0.0] + [aH * (h_max - s.sleep_floor) + aA * a_min + c for aH, aA, c in s.fan_planes])
    c_max = max([0.0] + [aH * h_max + c for aH, c in s.crac_planes])
    return 1.001 * (i_max + c_max + s.light) + 1e-9


# ---------------------------------------------------------------------------- the facility tail
def facility_tail(p: np.ndarray, cool, t_db, t_wb, design: tuple[float, float, float, float]):
    """(chiller + tower or dry-cooler fans + pumps in kW, unmet cooling kW) for cooling load ``cool``
    (kW) at dry/wet bulb ``t_db``/``t_wb`` (°C), broadcast together (arrays of the broadcast shape):
    the engine's own cooling plant, ``physics.facility_from_cooling``, the part of ``physics.dc_step``
    from the cooling load on, applied element by element (``physics.facility_kernel``).
    ``design`` = heat_d, it_d, cool_d, rej_d (``physics.design_point``); cool_d and rej_d must be > 0."""
    _, _, cool_d, rej_d = design
    if not (cool_d > 0 and rej_d > 0):
        raise ValueError(f"facility_tail: the design cooling load and heat rejected must be > 0 kW, "
                         f"got cool_d={cool_d!r}, rej_d={rej_d!r}")
    b = np.broadcast_arrays(*(np.asarray(x, dtype=np.float64) for x in (cool, t_db, t_wb)))
    flat = [np.ascontiguousarray(x).reshape(-1) for x in b]
    plant = np.empty(flat[0].shape[0])
    unmet = np.empty_like(plant)
    ph.facility_kernel(np.ascontiguousarray(p, dtype=np.float64), *flat, float(cool_d), float(rej_d), plant, unmet)
    return plant.reshape(b[0].shape), unmet.reshape(b[0].shape)


def tail_floor(p: np.ndarray, design) -> float:
    """A constant the facility tail never goes below (kW): both pumps at minimum flow and the tower
    (or dry-cooler) fans at minimum airflow (the plant's own functions at zero flow / heat); the chiller
    at 0."""
    _, _, cool_d, rej_d = design
    wet = p[ph.P_COND_WATER] > 0.5
    dry = p[ph.P_COND_DRY] > 0.5
    pmin = float(ph.pump_fraction(p, 0.0))
    out = p[ph.P_CHW_PUMP] * cool_d * pmin if cool_d > 0 else 0.0
    if wet or dry:
        out += p[ph.P_CW_PUMP] * cool_d * pmin
        # the fans' airflow ratio at zero heat is clamped to their minimum (any wet-bulb for the tower)
        out += ph.tower_fan_power(p, 0.0, rej_d, 0.0) if wet else ph.dry_cooler_fan_power(p, 0.0, rej_d)
    return float(out)


# ---------------------------------------------------------------------------- convex minorants
@njit(cache=True, nogil=True)
def _hull_pieces(x, y, xq, slope, icpt, count):
    """Per row r: the lower convex hull of the points (x[r, i], y[r, i]) (x increasing), reduced to the
    edges that support it at the abscissae ``xq[r, :]``; each kept edge is written as a line
    y = slope x + icpt (slopes non-decreasing), count[r] lines. Every hull edge lies on or below every
    point, so any subset of them is a convex minorant of the points."""
    n_rows, m = x.shape
    n_keep = xq.shape[1]
    hx = np.empty(m)
    hy = np.empty(m)
    for r in range(n_rows):
        h = 0
        for i in range(m):
            xi = x[r, i]
            yi = y[r, i]
            while h >= 2:
                # pop the last point while it is not strictly below the chord (lower hull, left to right)
                cross = (hx[h - 1] - hx[h - 2]) * (yi - hy[h - 2]) - (hy[h - 1] - hy[h - 2]) * (xi - hx[h - 2])
                if cross <= 0.0:
                    h -= 1
                else:
                    break
            hx[h] = xi
            hy[h] = yi
            h += 1
        ne = h - 1
        if ne <= 0:
            slope[r, 0] = 0.0
            icpt[r, 0] = hy[0]
            count[r] = 1
            continue
        c = 0
        last = -1
        e = 0
        for q in range(n_keep):  # xq increasing
            while e < ne - 1 and hx[e + 1] <= xq[r, q]:
                e += 1
            if e == last:
                continue
            last = e
            s = (hy[e + 1] - hy[e]) / (hx[e + 1] - hx[e])
            slope[r, c] = s
            icpt[r, c] = hy[e] - s * hx[e]
            c += 1
        count[r] = c


def staircase_hull(grid: np.ndarray, values: np.ndarray, support: np.ndarray):
    """Lines (slope, intercept, count) below the lower staircase of non-decreasing functions sampled at
    ``grid`` (rows: one function each, ``values`` (rows, m); ``grid`` (m,) or (rows, m)): on
    [x_i, x_{i+1}] such a function is at least f(x_i), so the points (x_0, f(x_0)) and (x_{i+1}, f(x_i))
    lie below it, and so does the lower convex hull of those points. The hull edges supporting it at
    ``support`` (increasing abscissae, (K,) or (rows, K)) are kept, a hair (1e-9 relative) lower."""
    rows, m = values.shape
    xs = np.ascontiguousarray(np.broadcast_to(grid, (rows, m)), dtype=np.float64)
    ys = np.empty((rows, m))
    ys[:, 0] = values[:, 0]
    ys[:, 1:] = values[:, :-1]
    xq = np.ascontiguousarray(np.broadcast_to(support, (rows, np.shape(support)[-1])), dtype=np.float64)
    k = xq.shape[1]
    slope = np.zeros((rows, k))
    icpt = np.zeros((rows, k))
    count = np.zeros(rows, np.int64)
    _hull_pieces(xs, ys, xq, slope, icpt, count)
    icpt -= 1e-9 * (np.abs(values).max(axis=1, keepdims=True) + 1.0)
    # unused slots repeat the last line (so that every slot is a valid line)
    idx = np.minimum(np.arange(k)[None, :], np.maximum(count, 1)[:, None] - 1)
    return np.take_along_axis(slope, idx, 1), np.take_along_axis(icpt, idx, 1), count


def tail_grid(site: SitePower) -> np.ndarray:
    """The cooling loads (kW) at which the facility tail of a site is sampled: [cool_lo, cool_hi] (the loads
    the bound's own I + C can take), evenly spaced plus geometrically spaced from max(cool_lo, 1e-4 cool_hi)
    (a relative spacing bounds the staircase's loss at low load)."""
    top, lo = site.cool_hi, min(site.cool_lo, site.cool_hi)
    return np.unique(np.concatenate([np.linspace(lo, top, GRID_LINEAR),
                                     np.geomspace(max(lo, 1e-4 * top), top, GRID_GEOM)]))


@dataclass
class FacilityPieces:
    """Per (datacenter, step): the facility tail is at least max_j slope[..., j] * cool + icpt[..., j]."""

    slope: np.ndarray  # (n_dc, n, K)
    icpt: np.ndarray
    count: np.ndarray  # (n_dc, n) distinct lines (slots beyond repeat the last one)
    short: np.ndarray  # (n_dc, n) bool: the chiller runs short somewhere in [0, cool_hi] (reported)
    fallback: np.ndarray  # (n_dc, n) bool: not non-decreasing on the grid -> constant floor only


def facility_pieces(params: np.ndarray, sites: list[SitePower], temp_c: np.ndarray, wetbulb_c: np.ndarray
                    ) -> FacilityPieces:
    """The facility-tail minorant of every datacenter and step of a window (signals (n_dc, n)).

    The tail is non-decreasing in the cooling load (docs/optimum.md: the chiller's load and condenser
    temperature, and the heat the fans and pumps move, all rise with it; once the chiller is at its
    capacity its power is constant while the tower and pumps still rise, unless the condenser water
    warms with the load). That is checked on the grid: a step where a sampled value falls falls back
    to the tail's constant floor (both pumps at minimum flow, the fans at minimum airflow). With an air-side
    economizer, a step whose weather the inlet envelope admits gets a tail of 0 (the plant may be off)."""
    n_dc, n = temp_c.shape
    k = N_FAC_PIECES
    slope = np.zeros((n_dc, n, k))
    icpt = np.zeros((n_dc, n, k))
    count = np.ones((n_dc, n), np.int64)
    short = np.zeros((n_dc, n), bool)
    fallback = np.zeros((n_dc, n), bool)
    for d in range(n_dc):
        s = sites[d]
        p = params[d]
        if s.cool_d <= 0:
            continue
        design = (s.heat_d, s.it_d, s.cool_d, s.rej_d)
        grid = tail_grid(s)
        vals, unmet = facility_tail(p, grid[None, :], temp_c[d][:, None], wetbulb_c[d][:, None], design)
        floor = tail_floor(p, design)
        bad = (np.diff(vals, axis=1) < -1e-9 * (1.0 + np.abs(vals[:, 1:]))).any(axis=1)
        sl, ic, ct = staircase_hull(grid, vals, np.asarray(FAC_SUPPORT) * s.cool_d)
        sl[bad] = 0.0
        ic[bad] = floor
        ct[bad] = 1
        if p[ph.P_AIR_ECON] > 0.5:
            # where the envelope admits outside air it may carry the whole load with the plant off
            # (physics.air_economizer): there the tail's minorant is 0
            w = np.array([ph.humidity_ratio(a, b) for a, b in zip(temp_c[d], wetbulb_c[d], strict=True)])
            free = (w <= p[ph.P_W_HI]) & ((w >= p[ph.P_W_LO]) | (p[ph.P_AIR_EVAP] > 0.5))
            sl[free] = 0.0
            ic[free] = 0.0
            ct[free] = 1
        slope[d], icpt[d], count[d] = sl, ic, ct
        short[d] = (unmet > 0.0).any(axis=1)
        fallback[d] = bad
    return FacilityPieces(slope=slope, icpt=icpt, count=count, short=short, fallback=fallback)


# ---------------------------------------------------------------------------- evaluation
def bound_at(site: SitePower, fac_slope, fac_icpt, bc, bg, bm, ac, ag):
    """The power bound (kW) at given per-step variables (arrays broadcast together; ``fac_*`` the
    steps' facility lines, shape (..., K)): returns (H, I, C, P), each the largest of its rows. P: the load
    Q = I + C + lighting + the plant's tail at that cooling load + the UPS loss, plus the transformer loss at Q."""
    bc, bg, bm, ac, ag = (np.asarray(x, dtype=np.float64) for x in (bc, bg, bm, ac, ag))
    h = site.h0 + site.h_ac * ac + site.h_ag * ag + site.h_bc * bc + site.h_bg * bg + site.h_bm * bm
    i = h.copy()  # (fan >= 0)
    for aH, aA, c in site.fan_planes:
        i = np.maximum(i, h + aH * (h - site.sleep_floor) + aA * (ac + ag) + c)
    c_ = np.zeros_like(h)
    for aH, c in site.crac_planes:
        c_ = np.maximum(c_, aH * h + c)
    u = np.zeros_like(h)
    for a, c in site.ups_planes:
        u = np.maximum(u, a * i + c)
    cool = i + c_ + site.light  # the load the plant sees: IT, CRAC fans and lighting
    q = (cool[..., None] + fac_slope * cool[..., None] + fac_icpt).max(axis=-1) + u
    p = np.max([(1.0 + a) * q + c for a, c in site.tr_planes], axis=0)
    return h, i, c_, p
