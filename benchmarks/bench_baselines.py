"""Stepping time of the published baselines (docs/baselines.md) next to the rule policies, on the
reference year (bench_sim.py's bundle: 35,040 steps, 5 DCs, 1.3 M synthetic tasks), and on the same
bundle with flexible tasks (the baselines act only on those).

    ./run.sh python benchmarks/bench_baselines.py              # prints, updates BENCHMARKS.md
    ./run.sh python benchmarks/bench_baselines.py --tasks 200000 --no-write

Each figure comes from a fresh subprocess after a 1-day warm-up run (the Numba cache is warm). The
flexible variant gives the same tasks the workload pipeline's default flexibility
(``pipelines.workload.flexibility.assign_flexibility``, ``FlexParams()``, seed 0: GAIA's queue delays,
every task that can pay its checkpoint interruptible and elastic). The figures are written between
``<!-- baselines:start -->`` and ``<!-- baselines:end -->`` in BENCHMARKS.md.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from benchmarks._report import machine, publish, run_child, run_child_json  # noqa: E402
from sim_core.policies import registry  # noqa: E402 - the policies' table (pure Python)

#: three rule policies for reference, then every published baseline in the registry
POLICIES = ("local_only", "lowest_carbon", "defer_to_greener", *registry.of_kind("baseline"))

CHILD = r"""
import json, sys, time
import sim_core
from sim_core import engine as E
from sim_core.policies import registry
from sim_core.simulator import Prepared
path, policy = sys.argv[1], sys.argv[2]
sc = sim_core.load(path)
sim_core.run(sc, policy, days=1)  # warm-up (loads or compiles the kernels)
spec = registry.get(policy)
prep = Prepared(sc, 0, policy_code=spec.code, controls=spec.stateful)
run = spec.kernel()
t = time.perf_counter()
run(prep.tasks, prep.state, prep.ctx, prep.info, prep.plan, spec.code, prep.n)
t_step = time.perf_counter() - t
sc_ = prep.state.sc
print(json.dumps(dict(n_tasks=int(prep.hi - prep.lo), n_steps=prep.n, t_step=t_step,
                      pauses=int(sc_[E.SC_PAUSES]), rescales=int(sc_[E.SC_RESCALES]))))
"""

MAKE = r"""
import sys
from pipelines.workload.flexibility import FlexParams, assign_flexibility
from sim_core.testing import reference_bundle, synthetic_tasks
tmp, n_tasks, flex = sys.argv[1], int(sys.argv[2]), sys.argv[3] == "1"
t = synthetic_tasks(n_tasks, 35040, 0)
if flex:
    t = assign_flexibility(t, FlexParams(), 0)
print(reference_bundle(tmp, n_tasks=n_tasks, name="flex" if flex else "plain", tasks=t))
"""


def make_bundle(tmp: Path, n_tasks: int, flex: bool) -> str:
    return run_child(MAKE, tmp, n_tasks, "1" if flex else "0")


def measure(path: str, policy: str) -> dict:
    return run_child_json(CHILD, path, policy)



def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--tasks", type=int, default=1_300_000)
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()
    cmd = "./run.sh python benchmarks/bench_baselines.py" + (
        f" --tasks {args.tasks}" if args.tasks != 1_300_000 else "")
    with tempfile.TemporaryDirectory() as tmpd:
        tmp = Path(tmpd)
        plain = make_bundle(tmp, args.tasks, False)
        flex = make_bundle(tmp, args.tasks, True)
        rows = []
        for pol in POLICIES:
            a = measure(plain, pol)
            b = measure(flex, pol)
            print(pol, json.dumps(a), json.dumps(b), flush=True)
            rows.append((pol, a, b))
    ref = rows[1][1]["t_step"]  # lowest_carbon on the plain year: bench_sim's headline policy
    lines = ["## Published baselines: stepping time", "", f"Command: `{cmd}`  ",
             f"Machine: {machine()} (shared); "
             f"measured {time.strftime('%Y-%m-%d')}; each figure from a fresh process, warm Numba cache, default "
             "forecast (`calibrated`).", "",
             f"Full year, reference 5-DC cluster, {rows[0][1]['n_tasks']:,} synthetic tasks; *flexible*: the same "
             "tasks with the workload pipeline's default flexibility (`assign_flexibility`, `FlexParams()`). "
             f"Load average when done: {os.getloadavg()[0]:.1f} (a shared machine: compare the ratios within this "
             "table; the simulation section's quiet-machine figure is the absolute one).", "",
             "| policy | stepping s | × lowest_carbon | stepping s, flexible | pauses / rescales, flexible |",
             "|---|---|---|---|---|"]
    for pol, a, b in rows:
        lines.append(f"| `{pol}` | {a['t_step']:.2f} | {a['t_step'] / ref:.2f} | {b['t_step']:.2f} | "
                     f"{b['pauses']:,} / {b['rescales']:,} |")
    publish("baselines", "\n".join(lines), not args.no_write)


if __name__ == "__main__":
    main()
