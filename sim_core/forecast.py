"""Information a policy may have: forecast models, their calibration and the price publication times.

A policy deciding at bundle step k knows the actual signals of every step up to k (the current
step's carbon intensity, price and weather are real-time values), the day-ahead prices its market
has already published, and the latest issued forecast: forecasts are issued every
``forecast_issue_every_min`` minutes (default 60, :data:`DEFAULT_ISSUE_EVERY_MIN`), at the steps
k_i = k - k mod cadence, each for the next H hours from its issue (run option ``forecast_horizon_h``,
default 24); between issues a policy sees the latest one re-indexed to leads from now (unknown, NaN,
beyond k_i + H). Which forecast is the run option ``forecast``
(docs/simulation.md, "Information: what a policy sees"):

* ``oracle`` -- the actual future (perfect foresight; labelled as such in every output);
* ``persistence`` -- the last known value, held;
* ``seasonal_naive`` / ``seasonal_naive_weekly`` -- the value one day / one week earlier (as many
  periods back as needed to reach a known step);
* ``calibrated`` (default) -- the actual future with an error whose size follows published day-ahead
  forecast errors (carbon: DACF, Maji et al. 2022; prices: the EPF benchmark, Lago et al. 2021), grows
  with lead time as fitted to real issued forecasts (the mirror's 5-minute MOER forecasts) and is
  drawn from a counter-based hash of (run seed, signal, site, issue step, lead): reproducible from
  the seed and independent of the policy.

This module builds the arrays (:data:`sim_core.engine.Info`); the kernels that issue forecasts and
fill the history live in ``engine/information.py``.
"""

from __future__ import annotations

import datetime as dt
import math
from pathlib import Path

import numpy as np
import polars as pl

from gridshift import forecast_data as FD
from gridshift import run_options as R

from . import engine as E
from .scenario import shared

#: forecast model name -> engine code (run option ``forecast``)
MODELS = {
    "calibrated": E.FC_CALIBRATED,
    "persistence": E.FC_PERSISTENCE,
    "seasonal_naive": E.FC_SEASONAL_DAY,
    "seasonal_naive_weekly": E.FC_SEASONAL_WEEK,
    "oracle": E.FC_ORACLE,
}
if tuple(MODELS) != R.FORECAST_MODELS:  # (the run option's choices are declared in gridshift.run_options)
    raise ImportError(f"sim_core.forecast.MODELS {tuple(MODELS)} differ from the declared run option's choices "
                      f"{R.FORECAST_MODELS}")
DEFAULT_MODEL = R.get("forecast").default
#: forecast horizon (run option ``forecast_horizon_h``): at least a day ahead (the issue's "H >= 24 h"),
#: at most two weeks (its cost per issue grows with it)
DEFAULT_HORIZON_H = R.get("forecast_horizon_h").default
MIN_HORIZON_H = int(R.get("forecast_horizon_h").bound.low)
MAX_HORIZON_H = int(R.get("forecast_horizon_h").bound.high)
STEPS_PER_HOUR = 4
STEP_MIN = 15
#: issue cadence (run option ``forecast_issue_every_min``): a forecast is issued at every bundle step whose
#: start is a multiple of it from the bundle's start, and a policy sees the latest one until the next.
#: Default 60 min: the hourly resolution of the carbon-intensity forecasts of Electricity Maps, the source of
#: the bundles' carbon signal ("All endpoints return data with a resolution of 1 hour", API documentation,
#: https://static.electricitymap.org/api/docs/; its forecast covers "the next 24 hours",
#: https://www.electricitymaps.com/) -- a forecast of hourly values re-issued more often than hourly is not a
#: practice any cited source documents. 15 min (a new issue every step) and up to a day (one issue a day, as a
#: day-ahead price forecast) are options; WattTime's MOER forecasts (the mirror's ``moer-5min`` files) are
#: issued every 5 minutes, finer than a step, i.e. 15 min here.
DEFAULT_ISSUE_EVERY_MIN = R.get("forecast_issue_every_min").default
MAX_ISSUE_EVERY_MIN = int(R.get("forecast_issue_every_min").bound.high)
#: what every output says of a model (oracle runs are marked as perfect foresight)
LABELS = {
    "calibrated": "calibrated (actual + error of published day-ahead skill)",
    "persistence": "persistence (last known value held)",
    "seasonal_naive": "seasonal naive (same step yesterday)",
    "seasonal_naive_weekly": "seasonal naive (same step last week)",
    "oracle": "ORACLE (perfect foresight: the actual future)",
}
SQRT_2_OVER_PI = math.sqrt(2.0 / math.pi)  # E|z| of a standard normal


def label(model: str) -> str:
    return LABELS.get(model, model)


def caption(options: dict) -> str:
    """What a run's (or a sweep's) policies were told of the future, from its canonical options: the
    forecast model, horizon and issue cadence (every table and figure of a sweep carries it)."""
    h = options.get("forecast_horizon_h")
    every = options.get("forecast_issue_every_min")
    return (label(str(options.get("forecast"))) + (f", {h} h ahead" if h is not None else "")
            + (f", issued every {every} min" if every is not None else ""))


def is_oracle(options: dict) -> bool:
    """Whether a run's canonical options (``RunResult.options``, ``Comparison.options``) gave its policies
    the actual future."""
    return options.get("forecast") == "oracle"


# ---------------------------------------------------------------------------- calibration
def lead_shape(h_steps: np.ndarray, exponent: float) -> np.ndarray:
    """g(h) = (h / 1 day) ** p: the growth of the forecast error with lead time h (steps)."""
    return (np.asarray(h_steps, dtype=np.float64) / E.STEPS_PER_DAY) ** exponent


def sigma_curve(target_mae: float, lead_from_h: float, lead_to_h: float, horizon_steps: int,
                exponent: float) -> np.ndarray:
    """sigma(h), h = 1..horizon_steps, of a normal error sigma(h) z whose mean absolute value over the
    leads (lead_from_h, lead_to_h] (the published forecast's horizon) equals ``target_mae``:
    sigma(h) = c g(h) with c = target / (sqrt(2 / pi) x mean of g over those leads)."""
    ref = np.arange(int(round(lead_from_h * STEPS_PER_HOUR)) + 1, int(round(lead_to_h * STEPS_PER_HOUR)) + 1)
    c = target_mae / (SQRT_2_OVER_PI * float(lead_shape(ref, exponent).mean()))
    return c * lead_shape(np.arange(1, horizon_steps + 1), exponent)


def increments(sigma: np.ndarray) -> np.ndarray:
    """Standard deviations of the independent increments of a random walk e(h) = sum of inc_l z_l
    whose standard deviation at lead h is sigma(h) (sigma non-decreasing)."""
    var = np.square(sigma)
    return np.sqrt(np.diff(var, prepend=0.0).clip(min=0.0))


def naive_weekly_mae(price: np.ndarray) -> float:
    """Mean absolute error of the weekly naive forecast p(t - 1 week) over the series (the rMAE
    denominator of Lago et al. 2021, ``m='W'``); the daily naive for a series shorter than a week and a
    day, the mean absolute deviation for one shorter than a day and a step (test bundles)."""
    p = np.asarray(price, dtype=np.float64)
    for lag in (7 * E.STEPS_PER_DAY, E.STEPS_PER_DAY):
        if p.shape[0] > lag:
            return float(np.mean(np.abs(p[lag:] - p[:-lag])))
    return float(np.mean(np.abs(p - p.mean()))) if p.size else 0.0


def calibration(locations, price: np.ndarray, horizon_steps: int) -> tuple[np.ndarray, np.ndarray, list[dict]]:
    """Per signal and site: the increments of the calibrated error (``Info.inc``), the error form
    (``Info.par``) and a record of what calibrated it (for the run's documentation and tests).

    Carbon: multiplicative, E|e| over the published horizon = the region's day-ahead MAPE.
    Price: additive, E|e| over the published horizon = rMAE_W x MAE of the weekly naive forecast of
    the bundle's own price series at that site (Lago et al.'s scale-free measure)."""
    p = FD.lead_exponent()
    n_dc = len(locations)
    inc = np.zeros((E.N_FC, n_dc, horizon_steps))
    par = np.zeros((E.N_FC, E.N_PAR))
    par[E.SIG_CARBON, E.PAR_MULT] = 1.0
    par[E.SIG_CARBON, E.PAR_FLOOR] = 0.0
    par[E.SIG_PRICE, E.PAR_MULT] = 0.0
    par[E.SIG_PRICE, E.PAR_FLOOR] = -np.inf
    used = []
    for d, loc in enumerate(locations):
        c = FD.skill("carbon", loc)
        inc[E.SIG_CARBON, d] = increments(sigma_curve(c.value, c.lead_from_h, c.lead_to_h, horizon_steps, p))
        q = FD.skill("price", loc)
        scale = naive_weekly_mae(price[d])
        inc[E.SIG_PRICE, d] = increments(sigma_curve(q.value * scale, q.lead_from_h, q.lead_to_h,
                                                     horizon_steps, p))
        used.append({"location": loc, "carbon_mape": c.value, "carbon_key": c.location, "price_rmae_w": q.value,
                     "price_key": q.location, "price_naive_w_mae": scale, "lead_exponent": p})
    return inc, par, used


# ---------------------------------------------------------------------------- publication
def known_steps(locations, start_utc: dt.datetime, step_s: int, n_all: int, s0: int, n: int) -> np.ndarray:
    """(N_FC, n_dc, n) int64: the last bundle step whose actual is known at each run step.

    Carbon: the step itself. Price: the step itself, or -- for a market with a publication rule
    (gridshift/data/forecast/day_ahead_publication.csv) -- the last step of the last delivery day
    whose day-ahead prices are published at the step's start (the delivery day is a calendar day in
    the rule's time zone; DST handled by the zone)."""
    k = np.arange(s0, s0 + n, dtype=np.int64)
    out = np.broadcast_to(k, (E.N_FC, len(locations), n)).copy()
    t0 = start_utc.replace(tzinfo=dt.UTC) if start_utc.tzinfo is None else start_utc
    for d, loc in enumerate(locations):
        rule = FD.publication_rule(loc)
        if rule is None:
            continue
        utc = pl.Series("t", [t0 + dt.timedelta(seconds=int(x) * step_s) for x in (s0, s0 + n - 1)])
        ts = pl.datetime_range(utc[0], utc[1], interval=f"{step_s}s", time_unit="us", eager=True)
        local = ts.dt.convert_time_zone(rule.timezone)
        minutes = local.dt.hour().cast(pl.Int32) * 60 + local.dt.minute().cast(pl.Int32)
        pub_min = rule.publication.hour * 60 + rule.publication.minute
        # delivery days known at the step: up to (today + days_before) once today's auction is out
        ahead = pl.when(minutes >= pub_min).then(rule.days_before).otherwise(rule.days_before - 1)
        frame = pl.DataFrame({"date": local.dt.date(), "ahead": pl.select(ahead).to_series()})
        last_day = frame.select(pl.col("date") + pl.duration(days=pl.col("ahead"))).to_series()
        # end of that local day, in UTC
        end_local = (last_day + dt.timedelta(days=1)).cast(pl.Datetime("us")).dt.replace_time_zone(
            rule.timezone, ambiguous="earliest", non_existent="null")
        end_s = (end_local.dt.convert_time_zone("UTC").dt.epoch("us").to_numpy() / 1e6) - t0.timestamp()
        last = np.ceil(end_s / step_s).astype(np.int64) - 1
        out[E.SIG_PRICE, d] = np.clip(np.maximum(last, k), 0, n_all - 1)
    return out


# ---------------------------------------------------------------------------- the arrays of a run
def forecast_key(seed: int) -> int:
    """The 63-bit key of a run's forecast-error stream: child 3 of ``SeedSequence(seed)`` (children 0-2
    are the origin, policy and workload streams of sim_core.simulator.Prepared)."""
    state = np.random.SeedSequence(seed).spawn(4)[3].generate_state(1, dtype=np.uint64)[0]
    return int(state) & (2**63 - 1)


def horizon_steps(horizon_h: int) -> int:
    return int(horizon_h) * STEPS_PER_HOUR


def issue_every_steps(every_min: int, step_s: int) -> int:
    """The issue cadence in bundle steps (``forecast_issue_every_min`` is a whole number of steps)."""
    q, r = divmod(int(every_min) * 60, int(step_s))
    if r or q < 1:
        raise ValueError(f"forecast_issue_every_min={every_min!r} is not a whole number of {step_s}-s steps")
    return q


_WINDOW_MEMO_SIZE = 64


def _actuals(sc) -> np.ndarray:
    """The actual signals (carbon, price, dry bulb, wet bulb) of the whole bundle, step-major
    (engine.steps_major): ``Info.act``, the same for every run of the scenario."""
    memo = shared(sc)
    if "act" not in memo:
        act = E.steps_major((E.N_SIG, sc.n_dc, sc.n_steps))
        for s, a in enumerate((sc.carbon_g_per_kwh, sc.price_usd_per_mwh, sc.temp_c, sc.wetbulb_c)):
            act[s] = a
        memo["act"] = act
    return memo["act"]


def _window_arrays(sc, s0: int, n: int, hmax: int, pad: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(inc, par, known) of a window: they depend on the scenario, the window, the horizon and the issue
    cadence only (never on the seed), and the kernels only read them, so runs of the same window share them
    (an environment that resets every episode then skips the calibration and the publication calendar).
    ``known`` starts ``pad`` steps before the window: at the issue step in force at its start."""
    memo = shared(sc).setdefault("windows", {})
    key = (s0, n, hmax, pad)
    if key not in memo:
        if len(memo) >= _WINDOW_MEMO_SIZE:
            memo.pop(next(iter(memo)))
        inc, par, _ = calibration(sc.signal_locations, sc.price_usd_per_mwh, hmax)
        # step-major storage (engine.steps_major), as the other per-step arrays
        known = E.steps_major((E.N_FC, sc.n_dc, pad + n), np.int64)
        known[...] = known_steps(sc.signal_locations, sc.start_utc, sc.step_s, sc.n_steps, s0 - pad, pad + n)
        memo[key] = (inc, par, known)
    return memo[key]


def build_info(sc, s0: int, n: int, options, seed: int) -> E.Info:
    """The information arrays of a run over bundle steps s0 .. s0 + n - 1 (``engine.Info``): the actual
    signals, an empty history holding the steps before the window, the forecast buffers and what
    calibrates them."""
    hmax = horizon_steps(options.forecast_horizon_h)
    every = issue_every_steps(options.forecast_issue_every_min, sc.step_s)
    pad = s0 % every  # the issue in force at the window's start was made pad steps before it
    # step-major storage (engine.steps_major): the kernels read every datacenter's value of one step
    act = _actuals(sc)
    hist = E.steps_major(act.shape, fill=np.nan)
    hist[:, :, :s0] = act[:, :, :s0]  # the past before the window is known; step s0 on when it begins
    inc, par, known = _window_arrays(sc, s0, n, hmax, pad)
    iopt = np.zeros(E.N_IOPT, np.int64)
    iopt[E.IO_MODEL] = MODELS[options.forecast]
    iopt[E.IO_H] = hmax
    iopt[E.IO_S0] = s0
    iopt[E.IO_KEY] = forecast_key(seed)
    iopt[E.IO_WINDOW] = min(options.defer_window_steps, hmax + 1)
    iopt[E.IO_EVERY] = every
    iopt[E.IO_KPAD] = pad
    fopt = np.zeros(E.N_FOPT)
    fopt[E.FO_DEFER_Q] = options.defer_quantile
    return E.Info(act=act, hist=hist, fc=np.full((E.N_FC, sc.n_dc, hmax), np.nan), known=known, inc=inc,
                  par=par, iopt=iopt, fopt=fopt, stamp=np.full((E.N_FC, 4), -1, np.int64),
                  pub=np.zeros((E.N_FC, sc.n_dc), np.int64), fci=np.full((E.N_FC, sc.n_dc, hmax), np.nan))


# ---------------------------------------------------------------------------- real issued forecasts
MOER_LEADS = 36
MOER_STEP_MIN = 5


def moer_forecast_errors(path: str | Path) -> pl.DataFrame:
    """Error by lead time of the issued forecasts in a 5-minute MOER file of the data mirror
    (``moer-5min/*.csv.gz``: ``time``, ``moer``, forecasts ``f1..f36`` issued at ``time``).

    ``f_k`` issued at row t is compared with the MOER of row t + k - 1, i.e. the 5-minute interval
    that ends 5k minutes after the issue (the alignment with the smallest error: ``f1`` is the
    forecast of the interval under way). Persistence, for reference: the value of row t - 1 (the last
    interval complete at issue) for the same target. Columns: ``lead_min`` (5k), ``n``, ``mae``,
    ``nmae`` (MAE / mean MOER, the MOER is 0 in some intervals so a MAPE is undefined),
    ``persistence_mae``, ``persistence_nmae``."""
    df = pl.read_csv(path)
    m = df["moer"].to_numpy().astype(np.float64)
    n = m.shape[0]
    mean = float(m.mean())
    rows = []
    for k in range(1, MOER_LEADS + 1):
        f = df[f"f{k}"].to_numpy().astype(np.float64)
        i = np.arange(1, n - (k - 1))
        err = np.abs(f[i] - m[i + k - 1])
        per = np.abs(m[i - 1] - m[i + k - 1])
        rows.append({"lead_min": MOER_STEP_MIN * k, "n": int(i.size), "mae": float(err.mean()),
                     "nmae": float(err.mean()) / mean, "persistence_mae": float(per.mean()),
                     "persistence_nmae": float(per.mean()) / mean})
    return pl.DataFrame(rows)


def fit_lead_exponent(errors: pl.DataFrame) -> float:
    """Least-squares slope p of log(MAE) on log(lead): error proportional to lead ** p."""
    x = np.log(errors["lead_min"].to_numpy().astype(np.float64))
    y = np.log(errors["mae"].to_numpy())
    return float(np.polyfit(x, y, 1)[0])


__all__ = ["MODELS", "DEFAULT_MODEL", "DEFAULT_HORIZON_H", "build_info", "calibration", "known_steps",
           "moer_forecast_errors", "fit_lead_exponent", "label", "is_oracle"]
