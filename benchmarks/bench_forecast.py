"""What forecasts cost the rule policies' stepping (issue 14: "within 2x of today's; forecast models add no
Python work per step"): a full year (35,040 steps), the reference 5-DC cluster, 1.3 M tasks, the kernel call
bench_sim times (``Prepared`` + ``policies.rules.run``), per policy x forecast model x issue cadence.

    ./run.sh python benchmarks/bench_forecast.py                 # best of 3, writes BENCHMARKS.md
    ./run.sh python benchmarks/bench_forecast.py --rounds 5 --bundle /tmp/year5 --no-write

All configurations run in one process, interleaved round by round (round r runs every configuration once, in
a rotated order), so that a shared machine's load falls on all of them alike; each figure is the best of the
rounds, wall and CPU (``time.thread_time``: the stepping runs in this thread) side by side. ``lowest_carbon``
reads no forecast: it is the yardstick that makes figures from different loads comparable (ratio column).
The figures are printed and written between ``<!-- forecast:start -->`` and ``<!-- forecast:end -->``.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from benchmarks._report import machine, publish  # noqa: E402

#: (policy, forecast model, issue cadence in minutes); lowest_carbon never issues a forecast
CONFIGS = [("lowest_carbon", "calibrated", 60)] + [
    ("defer_to_greener", m, every) for m in ("calibrated", "oracle", "persistence") for every in (15, 60)]
#: the full-year stepping time of the rule policies when they read the actual future instead of a forecast
#: (quiet machine): the reference of the bound "forecasts cost at most 2x the stepping" (docs/simulation.md,
#: "Information")
BEFORE_S = {"lowest_carbon": 0.30, "defer_to_greener": 0.42}


def generator_micro(rounds: int) -> dict[str, float]:
    """Route (b) of the cost question, measured: CPU ns per lead of a year of 95-lead ``calibrated`` issues at 5
    sites (35,040 issues, one signal), best of ``rounds``, the three interleaved:

    * ``issue_at``: the engine's own forecast-issue kernel, ``sim_core.engine.issue_at``, called for every
      issue step from a jitted loop (so no Python call per issue is timed): the generator plus the kernel's
      per-lead work (bundle-end and publication checks, the actual's lookup, the floor, the store);
    * ``engine``: the generator alone, as the engine computes it -- two SplitMix64 hashes per Box-Muller pair,
      a lead loop with a parity branch -- copied out of ``issue_at`` (``engine_generator``) so that it can be
      set against the alternative on equal terms (the same loop without the kernel's per-lead work). The copy
      is checked to give exactly ``issue_at``'s output (additive error on actuals of 0, no floor: the
      forecast is the error itself) before it is timed, and the script stops if it does not;
    * ``one_hash_split``: the alternative, one 64-bit hash per pair (two 32-bit uniforms) generated in a
      separate branch-free loop and then summed (not in the engine)."""
    import math

    import numpy as np
    from numba import njit

    from sim_core import engine as E
    from sim_core.engine import information as EI

    golden, m32 = EI._GOLDEN, 1.0 / 4294967296.0  # the engine's Weyl increment; 2**-32

    @njit
    def issue_loop(act, fci, known, inc, par, iopt, n_issue, hh):
        acc = 0.0
        for k in range(n_issue):
            E.issue_at(act, fci, known, inc, par, iopt, 0, k, hh)
            acc += fci[0, 0, hh - 1]
        return acc

    @njit
    def engine_generator(key, k0, n_issue, n_dc, hh, inc, out):
        acc = 0.0
        for k in range(k0, k0 + n_issue):
            for d in range(n_dc):
                base = E.stream_base(key, 0, d, k)
                e = 0.0
                z2 = 0.0
                for h in range(1, hh + 1):
                    if h % 2 == 1:
                        z1, z2 = EI._normal_pair(base, (h - 1) // 2)
                        e += inc[h - 1] * z1
                    else:
                        e += inc[h - 1] * z2
                    out[h - 1] = e
                acc += out[hh - 1]
        return acc

    @njit
    def one_hash_split(key, n_issue, n_dc, hh, inc, out, z):
        acc = 0.0
        for k in range(n_issue):
            for d in range(n_dc):
                base = E.stream_base(key, 0, d, k)
                for p in range((hh + 1) // 2):  # branch-free: normals 2p and 2p + 1 from one hash
                    x = EI._mix64(base + golden * np.uint64(p + 1))
                    u1 = (float(x >> np.uint64(32)) + 0.5) * m32
                    u2 = (float(x & np.uint64(0xFFFFFFFF)) + 0.5) * m32
                    r = math.sqrt(-2.0 * math.log(u1))
                    z[2 * p] = r * math.cos(2.0 * math.pi * u2)
                    z[2 * p + 1] = r * math.sin(2.0 * math.pi * u2)
                e = 0.0
                for h in range(hh):
                    e += inc[h] * z[h]
                    out[h] = e
                acc += out[hh - 1]
        return acc

    hh, n_dc, n_issue, key = 95, 5, 35040, 1
    inc, out, z = np.full(96, 0.01), np.empty(96), np.empty(96)
    # issue_at's inputs: actuals 0 (with the additive error and no floor the forecast is the error), nothing
    # published beyond the issue step, the same lead increments at every site, issued every step from step 0
    act = E.steps_major((E.N_FC, n_dc, n_issue + hh + 1), np.float64)
    act[:] = 0.0
    known = E.steps_major((E.N_FC, n_dc, n_issue), np.int64)
    known[:] = np.arange(n_issue)
    inc_e = np.ascontiguousarray(np.broadcast_to(inc[:hh], (E.N_FC, n_dc, hh)))
    par = np.zeros((E.N_FC, E.N_PAR))
    par[:, E.PAR_FLOOR] = -np.inf
    iopt = np.zeros(E.N_IOPT, dtype=np.int64)
    iopt[E.IO_MODEL], iopt[E.IO_H], iopt[E.IO_KEY], iopt[E.IO_EVERY] = E.FC_CALIBRATED, hh, key, 1
    fci = np.empty((E.N_FC, n_dc, hh))
    for k in (0, 1, 17, n_issue - 1):  # the copy is the engine's generator, exactly
        E.issue_at(act, fci, known, inc_e, par, iopt, 0, k, hh)
        for d in range(n_dc):
            engine_generator(key, k, 1, d + 1, hh, inc, out)  # leaves issue k, site d in out
            if not np.array_equal(fci[0, d], out[:hh]):
                raise SystemExit(f"engine_generator differs from sim_core.engine.issue_at (issue {k}, site {d})")
    issue_loop(act, fci, known, inc_e, par, iopt, 2, hh)
    engine_generator(key, 0, 2, n_dc, hh, inc, out)
    one_hash_split(key, 2, n_dc, hh, inc, out, z)
    best = {"issue_at": float("inf"), "engine": float("inf"), "one_hash_split": float("inf")}
    for _ in range(rounds):
        for name, f in (("issue_at", lambda: issue_loop(act, fci, known, inc_e, par, iopt, n_issue, hh)),
                        ("engine", lambda: engine_generator(key, 0, n_issue, n_dc, hh, inc, out)),
                        ("one_hash_split", lambda: one_hash_split(key, n_issue, n_dc, hh, inc, out, z))):
            c = time.thread_time()
            f()
            best[name] = min(best[name], 1e9 * (time.thread_time() - c) / (n_issue * n_dc * hh))
    return best


def bundle(path: str | None, n_tasks: int) -> str:
    from sim_core.testing import reference_bundle

    if path and (Path(path).exists() and any(Path(path).iterdir())):
        return str(next(p for p in Path(path).iterdir() if (p / "manifest.json").exists()))
    out = Path(path) if path else Path(__import__("tempfile").mkdtemp(prefix="bench_forecast_"))
    out.mkdir(parents=True, exist_ok=True)
    return str(reference_bundle(out, n_tasks=n_tasks, n_steps=35040, n_dc=5, name="year5"))


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--tasks", type=int, default=1_300_000)
    ap.add_argument("--bundle", default=None, help="a folder to keep (or reuse) the year bundle in")
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()

    import sim_core
    from sim_core.policies import registry, rules
    from sim_core.simulator import Prepared

    load0 = os.getloadavg()[0]
    sc = sim_core.load(bundle(args.bundle, args.tasks))
    for pol in ("lowest_carbon", "defer_to_greener"):  # load or compile the kernels
        sim_core.run(sc, pol, days=1)
    best: dict[tuple, tuple[float, float]] = {}
    for r in range(args.rounds):
        order = CONFIGS[r % len(CONFIGS):] + CONFIGS[:r % len(CONFIGS)]
        for cfg in order:
            pol, model, every = cfg
            code = registry.code(pol)
            prep = Prepared(sc, 0, policy_code=code, forecast=model, forecast_issue_every_min=every)
            w, c = time.perf_counter(), time.thread_time()
            rules.run(prep.tasks, prep.state, prep.ctx, prep.info, None, code, prep.n)
            w, c = time.perf_counter() - w, time.thread_time() - c
            b = best.get(cfg, (float("inf"), float("inf")))
            best[cfg] = (min(b[0], w), min(b[1], c))
            print(f"round {r}: {pol:17s} {model:12s} every {every:3d} min: {w:.3f} s wall, {c:.3f} s CPU", flush=True)
            del prep
    gen = generator_micro(args.rounds)
    load1 = os.getloadavg()[0]
    yard = best[CONFIGS[0]]
    cmd = "./run.sh python benchmarks/bench_forecast.py" + (f" --rounds {args.rounds}" if args.rounds != 3 else "")
    lines = [
        "### Rule policies: what forecasts cost the stepping",
        "",
        f"Command: `{cmd}`  ",
        f"Machine: {machine()}; measured {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}, 1-min load average "
        f"{load0:.1f} at the start, {load1:.1f} at the end (a shared machine: wall above CPU time is the load). "
        f"Full year (35,040 steps), reference 5-DC cluster, {args.tasks:,} tasks, seed 0, `Prepared` + "
        "`policies.rules.run`; "
        f"best of {args.rounds} rounds in one process, configurations interleaved. Wall and CPU (thread) time; "
        "the last column divides the CPU time by `lowest_carbon`'s (which reads no forecast), a load-independent "
        "comparison with the pre-forecast engine (`defer_to_greener` / `lowest_carbon` = 0.42 / 0.30 = 1.4).",
        "",
        "| policy | forecast | issued every | stepping wall s | stepping CPU s | CPU / `lowest_carbon` CPU |",
        "|---|---|---:|---:|---:|---:|",
    ]
    for cfg in CONFIGS:
        pol, model, every = cfg
        w, c = best[cfg]
        lines.append(f"| `{pol}` | `{model}` | {every} min | {w:.2f} | {c:.2f} | {c / yard[1]:.2f} |")
    lines.append("")
    lines.append(f"References without forecasts (policies reading the actual future, quiet machine): `lowest_carbon` "
                 f"{BEFORE_S['lowest_carbon']:.2f} s, `defer_to_greener` {BEFORE_S['defer_to_greener']:.2f} s; "
                 f"the 2x bound for `defer_to_greener` is {2 * BEFORE_S['defer_to_greener']:.2f} s, "
                 f"i.e. {2 * BEFORE_S['defer_to_greener'] / BEFORE_S['lowest_carbon']:.1f}x `lowest_carbon`.")
    lines.append("")
    lines.append(f"Forecast issue (route b), CPU per lead, a year of 95-lead `calibrated` issues at 5 sites "
                 f"(`generator_micro` in the script): the engine's kernel `sim_core.engine.issue_at` "
                 f"{gen['issue_at']:.1f} ns (generator + its per-lead lookups and store); its generator alone "
                 f"(a copy of the kernel's loop, checked to give exactly `issue_at`'s output) {gen['engine']:.1f} ns; "
                 f"the alternative, one 64-bit hash per pair + a separate branch-free loop, "
                 f"{gen['one_hash_split']:.1f} ns.")
    publish("forecast", "\n".join(lines), not args.no_write)


if __name__ == "__main__":
    main()
