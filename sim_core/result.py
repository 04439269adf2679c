"""RunResult: per-step-and-DC metrics, per-task outcomes, transfers and totals."""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import polars as pl

from . import engine as E
from .physics import OUT_NAMES, STEP_HOURS
from .physics import compute as physics_compute

STATUS_NAMES = ["not_arrived", "pending", "in_transit", "queued", "started", "unschedulable"]


def _version() -> str:
    try:
        from gridshift import __version__  # type: ignore[attr-defined]

        return str(__version__)
    except (ImportError, AttributeError):
        try:
            from importlib.metadata import version

            return version("gridshift")
        except Exception:  # noqa: BLE001
            return "0+unknown"


@dataclass
class RunResult:
    steps: pl.DataFrame
    tasks: pl.DataFrame
    transfers: pl.DataFrame
    totals: dict
    seed: int
    bundle_id: str
    gridshift_version: str
    policy: str
    options: dict = field(default_factory=dict)

    def to_parquet(self, out_dir: str | Path) -> Path:
        """Write steps/tasks/transfers as Parquet and totals (with run metadata) as JSON."""
        d = Path(out_dir)
        d.mkdir(parents=True, exist_ok=True)
        self.steps.write_parquet(d / "steps.parquet")
        self.tasks.write_parquet(d / "tasks.parquet")
        self.transfers.write_parquet(d / "transfers.parquet")
        meta = {"seed": self.seed, "bundle_id": self.bundle_id, "gridshift_version": self.gridshift_version,
                "policy": self.policy, "options": self.options, "totals": self.totals}
        (d / "run.json").write_text(json.dumps(meta, indent=2, sort_keys=True, default=str))
        return d


def _ts(t0_us: int, sec: np.ndarray) -> pl.Series:
    """Seconds since the bundle start -> Datetime(us, UTC) (NaN -> null)."""
    us = pl.Series(np.round(sec * 1e6)).fill_nan(None).cast(pl.Int64) + t0_us
    return us.cast(pl.Datetime("us", "UTC"))


def _enum(codes: np.ndarray, dtype: pl.Enum) -> pl.Series:
    """Category codes (negative = missing) -> an Enum series, without a string per row."""
    cats = pl.Series(dtype.categories.to_list(), dtype=dtype)
    idx = pl.Series(codes.astype(np.int64, copy=False))
    return cats.gather(idx.set(idx < 0, None) if (codes < 0).any() else idx)


def _bincount2(dc: np.ndarray, step: np.ndarray, n_dc: int, n: int, w=None) -> np.ndarray:
    ok = (dc >= 0) & (step >= 0) & (step < n)
    flat = dc[ok].astype(np.int64) * n + step[ok]
    ww = None if w is None else w[ok]
    return np.bincount(flat, weights=ww, minlength=n_dc * n).reshape(n_dc, n)


def build_result(prep, policy: str) -> RunResult:
    sc = prep.scenario
    T, S, C = prep.tasks, prep.state, prep.ctx
    n_dc, n, s0 = sc.n_dc, prep.n, prep.s0
    step_s = float(sc.step_s)
    t0_us = int(sc.start_utc.timestamp()) * 1_000_000
    ks = slice(s0, s0 + n)

    # ---------------------------------------------------------------- physics per (dc, step)
    busy_c, busy_g, busy_m = (np.maximum(S.part[r], 0.0) for r in range(3))
    ph = physics_compute(sc.params, sc.cap_cores, sc.cap_gpus, sc.cap_mem_gb, busy_c, busy_g, busy_m,
                         sc.temp_c[:, ks], sc.wetbulb_c[:, ks])
    carbon = sc.carbon_g_per_kwh[:, ks]
    price = sc.price_usd_per_mwh[:, ks]
    it_kwh = ph["it_kw"] * STEP_HOURS
    total_kwh = ph["total_kw"] * STEP_HOURS

    # ---------------------------------------------------------------- per-task derived arrays
    status = S.status
    origin = T.origin
    dest = S.dest.astype(np.int64)
    started = status == E.ST_STARTED
    finish = np.where(started, S.start + T.duration, np.nan)
    j_arr = ((T.arrival - C.t0) // step_s).astype(np.int64)
    dec_ok = np.isfinite(S.decision)
    j_dec = np.where(dec_ok, (np.where(dec_ok, S.decision, 0.0) - C.t0) // step_s, -1).astype(np.int64)
    j_start = np.where(started, (np.where(started, S.start, 0.0) - C.t0) // step_s, -1).astype(np.int64)
    remote = (dest >= 0) & (dest != origin)
    dsafe = np.where(dest >= 0, dest, 0)
    xfer_cost = np.where(remote, T.bw * sc.usd_per_gb[origin, dsafe], 0.0)
    xfer_kwh = np.where(remote, T.bw * prep.options.transfer_kwh_per_gb, 0.0)
    k_dec = np.clip(j_dec + s0, 0, sc.n_steps - 1)
    ci_o = sc.carbon_g_per_kwh[origin, k_dec]
    mean = prep.options.transfer_emissions == "mean"
    ci = 0.5 * (ci_o + sc.carbon_g_per_kwh[dsafe, k_dec]) if mean else ci_o
    xfer_kg = np.where(remote, xfer_kwh * ci / 1000.0, 0.0)
    violated = S.violated.astype(bool)

    o64 = origin.astype(np.int64)
    arrived = _bincount2(o64, j_arr, n_dc, n)
    unsched = _bincount2(o64[status == E.ST_UNSCHEDULABLE], j_arr[status == E.ST_UNSCHEDULABLE], n_dc, n)
    assigned = _bincount2(dest, j_dec, n_dc, n)
    forced_m = S.forced.astype(bool)
    forced = _bincount2(dest[forced_m], j_dec[forced_m], n_dc, n)
    started_m = _bincount2(dest, j_start, n_dc, n)
    viol = _bincount2(dest[violated], j_start[violated], n_dc, n)
    x_out = _bincount2(o64[remote], j_dec[remote], n_dc, n)
    x_cost = _bincount2(o64[remote], j_dec[remote], n_dc, n, xfer_cost[remote])
    x_kwh = _bincount2(o64[remote], j_dec[remote], n_dc, n, xfer_kwh[remote])
    x_kg = _bincount2(o64[remote], j_dec[remote], n_dc, n, xfer_kg[remote])
    j_fin = np.where(started, np.ceil((np.where(started, finish, 0.0) - C.t0) / step_s) - 1, -1).astype(np.int64)
    finished = _bincount2(dest, j_fin, n_dc, n)

    # ---------------------------------------------------------------- steps frame (dc-major rows)
    def flat(a):
        return np.ascontiguousarray(a).reshape(-1)

    step_idx = np.tile(np.arange(s0, s0 + n, dtype=np.int32), n_dc)
    times = sc.step_times()[ks]
    loc_enum = pl.Enum(sc.locations)
    cols: dict[str, object] = {
        "step": step_idx,
        "ts_utc": pl.Series(np.tile(times, n_dc)).dt.replace_time_zone("UTC"),
        "location": _enum(np.repeat(np.arange(n_dc), n), loc_enum),
        "dc": np.repeat(np.arange(n_dc, dtype=np.int16), n),
        "local_hour": flat(sc.local_hour[:, ks]),
        "carbon_g_per_kwh": flat(carbon), "price_usd_per_mwh": flat(price),
        "temp_c": flat(sc.temp_c[:, ks]), "wetbulb_c": flat(sc.wetbulb_c[:, ks]),
        "busy_cores": flat(busy_c), "busy_gpus": flat(busy_g), "busy_mem_gb": flat(busy_m),
        "cpu_util": flat(busy_c / np.where(sc.cap_cores > 0, sc.cap_cores, 1.0)[:, None]),
        "gpu_util": flat(busy_g / np.where(sc.cap_gpus > 0, sc.cap_gpus, 1.0)[:, None]),
        "mem_util": flat(busy_m / np.where(sc.cap_mem_gb > 0, sc.cap_mem_gb, 1.0)[:, None]),
    }
    for name in OUT_NAMES:
        cols[name] = flat(ph[name])
    cols["pue"] = flat(ph["total_kw"] / ph["it_kw"])
    cols["it_kwh"] = flat(it_kwh)
    cols["total_kwh"] = flat(total_kwh)
    cols["cost_usd"] = flat(total_kwh * price / 1000.0)
    cols["carbon_kg"] = flat(total_kwh * carbon / 1000.0)
    cols["wue_l_per_kwh"] = flat(ph["water_l"] / it_kwh)
    cols["unmet_cooling_kwh"] = flat(ph["unmet_cooling_kw"] * STEP_HOURS)
    ints = {
        "arrived": arrived, "unschedulable": unsched, "assigned": assigned, "forced": forced,
        "started": started_m, "finished": finished, "running": S.run_part,
        "queue_len": S.m_queue, "in_transit": S.m_transit, "deferred": S.m_pending,
        "sla_violations": viol, "transfers_out": x_out,
    }
    for k, v in ints.items():
        cols[k] = flat(v).astype(np.int64)
    cols["transfer_cost_usd"] = flat(x_cost)
    cols["transfer_kwh"] = flat(x_kwh)
    cols["transfer_carbon_kg"] = flat(x_kg)
    steps = pl.DataFrame(cols)

    # ---------------------------------------------------------------- tasks frame
    tid = sc.task_id[prep.lo:prep.hi]
    tasks = pl.DataFrame({
        "task_id": tid,
        "origin": _enum(origin, loc_enum),
        "dest": _enum(dest, loc_enum),
        "status": _enum(status, pl.Enum(STATUS_NAMES)),
        "arrival_ts_utc": _ts(t0_us, T.arrival),
        "decision_ts_utc": _ts(t0_us, S.decision),
        "ready_ts_utc": _ts(t0_us, S.ready),
        "start_ts_utc": _ts(t0_us, S.start),
        "finish_ts_utc": _ts(t0_us, finish),
        "deadline_ts_utc": _ts(t0_us, T.deadline),
        "duration_s": T.duration,
        "wait_s": np.where(started, S.start - T.arrival, np.nan),
        "transit_delay_s": S.delay,
        "violated": violated,
        "forced": forced_m,
        "remote": remote,
        "transfer_cost_usd": xfer_cost,
    }).with_columns(pl.col("wait_s").fill_nan(None))

    # ---------------------------------------------------------------- transfers frame
    rm = np.nonzero(remote)[0]
    transfers = pl.DataFrame({
        "task_id": tid[rm],
        "src_location": _enum(origin[rm], loc_enum),
        "dst_location": _enum(dest[rm], loc_enum),
        "decision_ts_utc": _ts(t0_us, S.decision[rm]),
        "bandwidth_gb": T.bw[rm],
        "delay_s": S.delay[rm],
        "cost_usd": xfer_cost[rm],
        "energy_kwh": xfer_kwh[rm],
        "carbon_kg": xfer_kg[rm],
    })

    # ---------------------------------------------------------------- totals
    it_tot = float(it_kwh.sum())
    tot_kwh = float(total_kwh.sum())
    water = float(ph["water_l"].sum())
    n_started = int(started.sum())
    totals = {
        "steps": n, "n_dc": n_dc, "tasks": int(T.arrival.shape[0]),
        "tasks_started": n_started,
        "tasks_completed": int((started & (finish <= C.t0 + n * step_s)).sum()),
        "tasks_unschedulable": int((status == E.ST_UNSCHEDULABLE).sum()),
        "tasks_pending_at_end": int((status == E.ST_PENDING).sum()),
        "tasks_queued_at_end": int((status == E.ST_QUEUED).sum()),
        "tasks_in_transit_at_end": int((status == E.ST_TRANSIT).sum()),
        "tasks_remote": int(remote.sum()),
        "tasks_forced": int(S.sc[E.SC_FORCED]),
        "invalid_actions": int(S.sc[E.SC_INVALID]),
        "sla_violations": int(violated.sum()),
        "sla_violation_rate": float(violated.sum() / n_started) if n_started else 0.0,
        "mean_wait_s": float(np.nanmean(np.where(started, S.start - T.arrival, np.nan))) if n_started else 0.0,
        "it_kwh": it_tot, "total_kwh": tot_kwh, "pue": tot_kwh / it_tot if it_tot else float("nan"),
        "cost_usd": float(steps["cost_usd"].sum()), "carbon_kg": float(steps["carbon_kg"].sum()),
        "water_l": water, "wue_l_per_kwh": water / it_tot if it_tot else float("nan"),
        "unmet_cooling_kwh": float((ph["unmet_cooling_kw"] * STEP_HOURS).sum()),
        "transfer_cost_usd": float(xfer_cost.sum()), "transfer_kwh": float(xfer_kwh.sum()),
        "transfer_carbon_kg": float(xfer_kg.sum()),
    }
    totals["carbon_incl_transfer_kg"] = totals["carbon_kg"] + totals["transfer_carbon_kg"]
    totals["cost_incl_transfer_usd"] = totals["cost_usd"] + totals["transfer_cost_usd"]
    return RunResult(steps=steps, tasks=tasks, transfers=transfers, totals=totals, seed=prep.seed,
                     bundle_id=sc.bundle_id, gridshift_version=_version(), policy=policy,
                     options={**prep.options.public(), "start_step": s0, "steps": n})
