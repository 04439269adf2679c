"""CarbonFlex's oracle (docs/reproductions.md): Algorithm 1 (``sim_core.policies.carbonflex.oracle.oracle_alg1``)
run once with perfect knowledge of the whole evaluation window — every job's arrival, length and deadline and
the actual carbon intensity, per site, within the site's capacity in every resource — as the paper defines its
oracle (§4.2, §6). Its slots are the engine's 15-minute steps, as in the policy's learning phase.

It is an offline reference that reads the future, so it is not one of ``sim_core.POLICIES`` (whose tests
check that no policy reads the future): this module computes Algorithm 1's *planned* schedule and its job
carbon, and :class:`PlanFollower` runs that plan through the engine as a Python policy that reads it (as the
optimum's ``sim_core.optimum.upper.PlanPolicy`` follows its plan). The plan is turned into each site's
busy cores / GPUs / GB per 15-minute step (a job holds its planned scale x its request from the step's start,
or its arrival, until the step ends, its deadline, or its work is done) and those busy profiles
go through the engine's own power model (``sim_core.physics.compute``) under the preset's job accounting (busy
IT energy x carbon intensity). :func:`job_carbon_kg` evaluates any busy profile the same way, so a simulated
run's profile can be put on the same footing (:func:`run_busy`).
"""

from __future__ import annotations

import numpy as np
import polars as pl

H = 3600.0


def _seconds(col, sc) -> np.ndarray:
    """Seconds since the bundle's start of a tz-aware timestamp column."""
    return (col.dt.epoch("us").to_numpy() - int(sc.start_utc.timestamp()) * 1_000_000) / 1e6


def _bundle_rows(sc, t: pl.DataFrame) -> np.ndarray:
    """The bundle row of each run task (a resampled year's ids are ``bundle id * ID_STRIDE + week slot``,
    ``sim_core.simulator``); checked against the tasks' lengths."""
    from sim_core.realisation import ID_STRIDE

    tid = t["task_id"].to_numpy()
    if tid.size and tid.max() > sc.task_id.max():
        tid = tid // ID_STRIDE
    order = np.argsort(sc.task_id, kind="stable")
    row = order[np.clip(np.searchsorted(sc.task_id, tid, sorter=order), 0, order.size - 1)]
    if not (np.array_equal(sc.task_id[row], tid) and np.array_equal(sc.duration_s[row], t["duration_s"].to_numpy())):
        raise ValueError("run tasks do not map onto the bundle's tasks (task_id, duration_s)")
    return row


def oracle_busy(res, sc, slot_steps: int = 1, dominant: bool = False) -> dict:
    """Algorithm 1's plan for the jobs of run ``res`` (its window's tasks as the run realised them: origin,
    arrival, length, the engine's deadline a + l + d), per site: busy cores / GPUs / GB per step ((3, n_dc, n)
    from the run's first step), the jobs whose deadline the plan had to extend, the work left undone
    (seconds at scale 1; 0 unless the bundle ends first), the jobs' core-, GPU- and GB-hours at scale 1 and the
    sites' cores, GPUs and GB (``need_h``, ``cap``: (3,) summed over sites), and the jobs in the plan's system
    per step (arrived, not finished: ``in_system`` (n,), summed over sites). Requests and scaling come from the
    bundle. ``slot_steps`` and ``dominant`` give the models gridshift used before (docs/baselines.md): slots
    of that many steps (a job charged its servers for every slot it touches), and capacity in servers, each job
    charged its dominant share of one server against M = the site's servers."""
    from sim_core.policies.carbonflex.oracle import site_servers, task_servers
    from sim_core.simulator import server_config

    t = res.tasks.filter(pl.col("duration_s") < 1e12)
    row = _bundle_rows(sc, t)
    k0 = int(res.steps["step"].min())
    step_s = float(sc.step_s)
    slot_s = slot_steps * step_s  # (1: the engine's steps, as sim_core.policies.carbonflex.oracle.carbonflex_learn)
    a = _seconds(t["arrival_ts_utc"], sc) - k0 * step_s
    dl = _seconds(t["deadline_ts_utc"], sc) - k0 * step_s
    # the horizon: the last deadline plus room for the extensions (EXTEND_ROUNDS days), within the bundle
    last = float(dl.max()) if t.height else 0.0
    n_slot = min(int(np.ceil(last / slot_s)) + EXTEND_ROUNDS * int(86400 / slot_s), (sc.n_steps - k0) // slot_steps)
    n = n_slot * slot_steps
    org = t["origin"].to_physical().to_numpy()
    cfg = server_config(sc)
    cap = np.stack([sc.cap_cores, sc.cap_gpus, sc.cap_mem_gb], axis=1).astype(np.float64)
    busy = np.zeros((3, sc.n_dc, n))
    out = {"k0": k0, "busy": busy, "jobs": int(t.height), "extended": 0, "undone_s": 0.0,
           "need_h": np.zeros(3), "cap": cap.sum(axis=0), "in_system": np.zeros(n)}
    tid = t["task_id"].to_numpy()
    nz_tid, nz_step, nz_x = [], [], []
    for d in range(sc.n_dc):
        sel = org == d
        i = row[sel]
        if not i.size:
            continue
        req = np.stack([sc.cpu_cores[i], sc.gpus[i], sc.mem_gb[i]]).astype(np.float64)
        job = {"a": a[sel], "dl": np.minimum(dl[sel], n * step_s), "work": t["duration_s"].to_numpy()[sel],
               "r": np.array([task_servers(c, g, m, cfg, d) for c, g, m in req.T]),
               "frac": np.ascontiguousarray(np.divide(req.T, cap[d], out=np.zeros(req.T.shape), where=cap[d] > 0)),
               "smin": sc.min_scale[i].astype(np.float64), "smax": sc.max_scale[i].astype(np.float64),
               "mthr": sc.marginal_throughput[i].astype(np.float64)}
        if dominant:
            job["frac"] = np.zeros(req.T.shape)
            job["frac"][:, 0] = job["r"] / site_servers(cfg, cap, d)
        ci = sc.carbon_g_per_kwh[d, k0:k0 + n].astype(np.float64).reshape(n_slot, slot_steps).mean(axis=1)
        x, job["dl"], n_ext = _plan_site(job, ci, slot_s, n * step_s)
        busy[:, d], left = _execute(x, job, req, slot_s, step_s, slot_steps)
        out["extended"] += n_ext
        out["undone_s"] += float(left.sum())
        out["need_h"] += req @ job["work"] / H  # the jobs' need at scale 1, per resource
        out["in_system"] += np.repeat(_in_system(x, job["a"], slot_s), slot_steps)
        jj, qq = np.nonzero(x)  # the plan per step (a slot's scale in each of its steps)
        nz_tid.append(np.repeat(tid[sel][jj], slot_steps))
        nz_step.append((qq[:, None] * slot_steps + np.arange(slot_steps)).ravel())
        nz_x.append(np.repeat(x[jj, qq], slot_steps))
    out["plan"] = tuple(np.concatenate([np.zeros(0, dt), *v]).astype(dt)
                        for v, dt in ((nz_tid, np.int64), (nz_step, np.int64), (nz_x, np.float64)))
    return out


#: CarbonFlex §6.5 ("Effect of Delay"): jobs the oracle's greedy schedule cannot finish by their deadline get
#: their delay extended; gridshift extends it by a day at a time, at most this many times
EXTEND_ROUNDS = 7


def _plan_site(job: dict, ci: np.ndarray, slot_s: float, horizon_s: float) -> tuple[np.ndarray, np.ndarray, int]:
    """Algorithm 1 on one site; jobs it leaves unfinished get their deadline extended by a day and the
    algorithm is rerun (the paper's fix for its oracle's infeasible jobs). Returns (scale per job and slot,
    deadlines, jobs extended)."""
    from sim_core.policies.carbonflex.oracle import oracle_alg1

    dl = job["dl"].copy()
    ext = np.zeros(dl.shape, dtype=bool)
    for _ in range(EXTEND_ROUNDS + 1):
        alloc, _used, _rho, done = oracle_alg1(job["a"], dl, job["work"], job["r"], job["frac"], job["smin"],
                                               job["smax"], job["mthr"], ci, slot_s)
        late = done < job["work"] - 1e-6
        if not late.any() or (dl[late] >= horizon_s).all():
            break
        ext |= late
        dl = np.where(late, np.minimum(dl + 86400.0, horizon_s), dl)
    return alloc, dl, int(ext.sum())


class PlanFollower:
    """A Python policy (``sim_core.run``'s callable interface) that carries out Algorithm 1's plan
    (:func:`oracle_busy`'s ``plan``: task ids, run steps and scales): a waiting task is sent to its origin at
    the first step the plan gives it servers and deferred before; a started flexible task is rescaled to the
    plan's scale each step, paused (if interruptible) where the plan gives it none, resumed where it gives it
    some. It reads the future (the whole window's plan), so it is an offline reference, never a registered
    policy. The engine still forces a task at its deadline and runs a non-interruptible one in one piece."""

    __name__ = "carbonflex_oracle_plan"

    def __init__(self, plan: tuple[np.ndarray, np.ndarray, np.ndarray], k0: int):
        tid, step, x = plan
        order = np.lexsort((tid, step))
        self.tid, self.x = tid[order], x[order]
        n = int(step.max()) + 2 if step.size else 1
        self.ptr = np.searchsorted(step[order], np.arange(n + 1))
        self.k0 = int(k0)

    def scale(self, j: int, ids: np.ndarray) -> np.ndarray:
        """The plan's scale of tasks ``ids`` at run step j (0 where it gives them nothing)."""
        if j < 0 or j + 1 >= self.ptr.size or not ids.size:
            return np.zeros(ids.shape)
        seg = slice(self.ptr[j], self.ptr[j + 1])
        have, xs = self.tid[seg], self.x[seg]
        pos = np.clip(np.searchsorted(have, ids), 0, max(have.size - 1, 0))
        hit = (pos < have.size) & (have[pos] == ids) if have.size else np.zeros(ids.shape, bool)
        return np.where(hit, xs[pos] if have.size else 0.0, 0.0)

    def __call__(self, obs: dict):
        j = int(obs["step"]) - self.k0
        go = self.scale(j, np.asarray(obs["pending_task_id"], np.int64)) > 0.0
        actions = np.where(go, np.asarray(obs["origin"], np.int64) + 1, 0).astype(np.int64)
        f = np.asarray(obs["flex_index"])
        want = self.scale(j, np.asarray(obs["flex_task_id"], np.int64))
        # (the plan's sum of units may overshoot max_scale by a rounding error)
        want = np.where(want > 0.0, np.clip(want, obs["flex_min_scale"], obs["flex_max_scale"]), 0.0)
        cur, state = np.asarray(obs["flex_scale"]), obs["flex_state"]
        intr = np.asarray(obs["flex_interruptible"], bool)
        run = np.array([s_ == "running" for s_ in state], bool)
        paused = np.array([s_ == "paused" for s_ in state], bool)  # ("resuming": it takes no control)
        change = (run & (want != cur) & ((want > 0.0) | intr)) | (paused & (want > 0.0))
        return actions, {int(i): float(w) for i, w in zip(f[change], want[change], strict=True)}


def _in_system(x, a, step_s) -> np.ndarray:
    """Jobs arrived and not finished at each step of a plan ``x`` (n_job, n) of scales per step."""
    n = x.shape[1]
    ran = x > 0.0
    last = np.where(ran.any(axis=1), n - 1 - np.argmax(ran[:, ::-1], axis=1), -1)
    first = np.clip(np.floor(a / step_s).astype(np.int64), 0, n)
    d = np.zeros(n + 1)
    ok = last >= first
    np.add.at(d, first[ok], 1.0)
    np.add.at(d, last[ok] + 1, -1.0)
    return np.cumsum(d)[:n]


def _execute(x, job: dict, req, slot_s, step_s, slot_steps):
    """Per-step busy (3, n) resources of a plan ``x`` (n_job, n_slot) of scales (request multiples): in slot q
    job j runs from max(q slot, a) for the slot's part before its deadline, shortened in the slot its work
    completes (its rate is ``speedup(x, mthr)``, the engine's linear scaling curve). Returns (busy, work left
    per job)."""
    a, dl, work, mthr = job["a"], job["dl"], job["work"], job["mthr"]
    n_job, n_slot = x.shape
    q = np.arange(n_slot)
    s0 = np.maximum(q[None, :] * slot_s, a[:, None])
    avail = np.clip(np.minimum((q[None, :] + 1) * slot_s, dl[:, None]) - s0, 0.0, None)
    avail = np.where(x > 0.0, avail, 0.0)
    rate = np.where(x > 0.0, 1.0 + mthr[:, None] * (x - 1.0), 0.0)
    before = np.cumsum(rate * avail, axis=1) - rate * avail  # work done before slot q
    need = np.clip(work[:, None] - before, 0.0, None)
    run = np.minimum(avail, np.divide(need, rate, out=np.zeros_like(need), where=rate > 0))
    left = np.clip(work - (rate * run).sum(axis=1), 0.0, None)
    busy = np.zeros((3, n_slot * slot_steps))
    for s in range(slot_steps):
        lo = q[None, :] * slot_s + s * step_s
        ov = np.clip(np.minimum(s0 + run, lo + step_s) - np.maximum(s0, lo), 0.0, None) / step_s
        w = (x * ov).T  # (n_slot, n_job): request multiples held over the step
        busy[:, s::slot_steps] = (w @ req.T).T
    return busy, left


def job_carbon_kg(sc, busy: np.ndarray, k0: int) -> tuple[float, float, float]:
    """(job carbon kg, busy GPU-hours, busy IT kWh) of a busy profile (3, n_dc, n) from bundle step ``k0``: the
    engine's power model (``sim_core.physics.compute``, every server on) gives the IT power, busy IT = IT less
    its idle, sleep and wake parts (the preset's ``job`` accounting, ``repro_presets.carbon_kg``), times the
    step's intensity."""
    from sim_core.physics import compute

    used = np.flatnonzero(busy.sum(axis=(0, 1)) > 0.0)
    n = int(used[-1]) + 1 if used.size else 0  # (steps after the last work: no job energy)
    busy = busy[:, :, :n]
    ks = slice(k0, k0 + n)
    ph = compute(sc.params, sc.cap_cores, sc.cap_gpus, sc.cap_mem_gb, busy[0], busy[1], busy[2],
                 sc.temp_c[:, ks], sc.wetbulb_c[:, ks])
    it = ph["it_kw"] - ph["it_idle_kw"] - ph["it_sleep_kw"] - ph["it_wake_kw"]
    h = sc.step_s / H
    kg = float((it * h * sc.carbon_g_per_kwh[:, ks]).sum() / 1000.0)
    return kg, float(busy[1].sum() * h), float(it.sum() * h)


def run_busy(res) -> tuple[np.ndarray, int]:
    """A simulated run's busy profile (3, n_dc, n) and its first bundle step, from its (dc-major) steps frame."""
    s = res.steps.sort(["dc", "step"])
    n_dc = s["dc"].n_unique()
    busy = np.stack([s[c].to_numpy().reshape(n_dc, -1) for c in ("busy_cores", "busy_gpus", "busy_mem_gb")])
    return busy, int(s["step"].min())
