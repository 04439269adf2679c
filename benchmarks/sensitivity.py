"""How the policies' savings against ``local_only`` move across the parameters that decide them
(docs/sensitivity.md, issue 24 item 6).

    ./run.sh python -m benchmarks.sensitivity BUNDLE            # print the page
    ./run.sh python -m benchmarks.sensitivity BUNDLE --write    # also write docs/sensitivity.md

``BUNDLE``: the README's main-job bundle (``gridshift export --regions US-CAL-CISO,DE-LU,SG --year 2023 --mirror
../shared/data --home DIR`` writes it into ``DIR/bundles/``). One axis at a time moves away from the run defaults,
the others stay at theirs: the network energy per GB moved (0, the default, the 2015 figure), data locality on /
off, the forecast model (every model of ``sim_core.forecast.MODELS``), the facility design (every preset of
``gridshift.dc_params.FACILITY_PRESETS``, read when the script runs, applied over the bundle's site physics) and
task flexibility on / off (off: every task as ``gridshift.bundle.TASK_FLEX_DEFAULTS``, no allowed delay, not
interruptible, not elastic). A saving is ``100 x (local_only - policy) / local_only`` of a run's carbon including
transfers and of its cost including transfers, paired per seed and window with ``local_only`` under the same
setting; the page gives its mean over the seeds and windows with the smallest and largest. Each distinct
setting runs once (the defaults are shared by every axis).
"""

from __future__ import annotations

import argparse
import dataclasses
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

import sim_core
from benchmarks._report import ROOT, machine
from gridshift.atomic import atomic_write_bytes
from gridshift.bundle import TASK_FLEX_DEFAULTS
from gridshift.dc_params import FACILITY_PRESETS, DatacenterParams
from sim_core import forecast as F
from sim_core.options import DEFAULT_TRANSFER_PRESET, TRANSFER_KWH_PER_GB_PRESETS
from sim_core.physics import param_vector

PAGE = ROOT / "docs" / "sensitivity.md"
#: two 30-day windows (winter and summer), three seeds: 6 runs per policy and setting (about 8 min on 2 cores)
WINDOWS = ("2023-01-09T00:00:00+00:00", "2023-07-10T00:00:00+00:00")
DAYS = 30
SEEDS = (0, 1, 2)
BASELINE = "local_only"
METRICS = (("carbon_incl_transfer_kg", "carbon incl. transfers"), ("cost_incl_transfer_usd", "cost incl. transfers"))


@dataclasses.dataclass(frozen=True)
class Setting:
    """One value of one axis: a label, run options and a scenario transform (None: the bundle as it is)."""

    label: str
    options: tuple[tuple[str, object], ...] = ()
    scenario: str | None = None  # key of the transform, so that equal settings share their runs


def _flexibility_off(sc):
    n = sc.n_tasks
    return dataclasses.replace(sc, **{c: np.full(n, v, dtype=bool if isinstance(v, bool) else np.float64)
                                      for c, v in TASK_FLEX_DEFAULTS.items()})


def _facility(name: str) -> Callable:
    def apply(sc):
        phys = [DatacenterParams.from_dict({**p.to_dict(), **FACILITY_PRESETS[name]}) for p in sc.physics]
        return dataclasses.replace(sc, physics=phys,
                                   params=np.ascontiguousarray(np.stack([param_vector(p) for p in phys])))
    return apply


def axes(bundle_physics: str) -> list[tuple[str, list[Setting]]]:
    """The axes and their settings; the facility designs and forecast models are read from their registries now."""
    kwh = [("none", "0 (`none`)"), (DEFAULT_TRANSFER_PRESET, f"{TRANSFER_KWH_PER_GB_PRESETS[DEFAULT_TRANSFER_PRESET]:g}"
                                    f" (`{DEFAULT_TRANSFER_PRESET}`, default)"),
           ("aslan2018-2015", "0.06 (`aslan2018-2015`)")]
    return [
        ("network energy per GB moved (kWh/GB, `transfer_kwh_per_gb`)",
         [Setting(lbl, () if k == DEFAULT_TRANSFER_PRESET else (("transfer_kwh_per_gb", k),)) for k, lbl in kwh]),
        ("data locality (`locality`)", [Setting("on (default)"), Setting("off", (("locality", False),))]),
        ("forecast model (`forecast`)",
         [Setting(f"`{m}`" + (" (default)" if m == F.DEFAULT_MODEL else ""),
                  () if m == F.DEFAULT_MODEL else (("forecast", m),)) for m in F.MODELS]),
        ("facility design (`gridshift.dc_params.FACILITY_PRESETS`, over the bundle's site physics)",
         [Setting(f"`{n}`" + (" (the bundle's)" if n == bundle_physics else ""), (),
                  None if n == bundle_physics else f"facility:{n}") for n in FACILITY_PRESETS]),
        ("task flexibility", [Setting("on (the bundle's)"), Setting("off", (), "flexibility:off")]),
    ]


def _transform(key: str | None) -> Callable | None:
    if key is None:
        return None
    kind, name = key.split(":", 1)
    return _flexibility_off if kind == "flexibility" else _facility(name)


def measure(sc, settings: list[Setting], policies: list[str], windows, days: int, seeds) -> dict:
    """{(options, scenario key): {policy: (n_runs, n_metrics) array}} over every distinct setting."""
    out = {}
    for s in settings:
        key = (s.options, s.scenario)
        if key in out:
            continue
        t = _transform(s.scenario)
        scn = sc if t is None else t(sc)
        vals = {}
        for pol in policies:
            rows = []
            for w in windows:
                for seed in seeds:
                    r = sim_core.run(scn, pol, seed=seed, start=w, days=days, **dict(s.options))
                    rows.append([float(r.totals[m]) for m, _ in METRICS])
            vals[pol] = np.array(rows)
        out[key] = vals
    return out


def _cell(x: np.ndarray) -> str:
    return f"{x.mean():+.2f} ({x.min():+.2f}…{x.max():+.2f})"


def page(sc_id: str, results: dict, ax, policies: list[str], windows, days: int, seeds, secs: float) -> str:
    lines = [
        "# Sensitivity: what the policies' savings depend on",
        "",
        "Generated by `./run.sh python -m benchmarks.sensitivity BUNDLE --write` (`benchmarks/sensitivity.py`); do "
        "not edit by hand.",
        "",
        f"Bundle `{sc_id}` (the README's main job: US-CAL-CISO, DE-LU, SG × 2023, the synthetic 1.26 M-task "
        f"year). Windows of {days} days from {', '.join(w[:10] for w in windows)}; seeds "
        f"{', '.join(map(str, seeds))}: {len(windows) * len(seeds)} runs per policy and setting. One axis at a time "
        "moves away from the run defaults (docs/simulation.md), the others stay at theirs. Each cell: the saving "
        f"against `{BASELINE}` under the same setting, in % (positive = less than `{BASELINE}`), paired per seed "
        "and window: mean (smallest…largest). Runs drain (equal work).",
        "",
    ]
    for title, settings in ax:
        lines += [f"## {title}", ""]
        for k, (_, mname) in enumerate(METRICS):
            lines += [f"Saving in {mname}, %:", "",
                      "| policy | " + " | ".join(s.label for s in settings) + " |",
                      "|---|" + "---:|" * len(settings)]
            for pol in policies:
                if pol == BASELINE:
                    continue
                cells = []
                for s in settings:
                    v = results[(s.options, s.scenario)]
                    base, x = v[BASELINE][:, k], v[pol][:, k]
                    cells.append(_cell(100.0 * (base - x) / base))
                lines.append(f"| `{pol}` | " + " | ".join(cells) + " |")
            lines.append("")
    lines += [f"Run time: {secs:.0f} s on {machine()} (shared with other work).", ""]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("bundle", type=Path)
    ap.add_argument("--write", action="store_true", help="write docs/sensitivity.md")
    ap.add_argument("--days", type=float, default=DAYS)
    ap.add_argument("--seeds", default=",".join(map(str, SEEDS)))
    ap.add_argument("--windows", default=",".join(WINDOWS))
    ap.add_argument("--policies", default=",".join(sim_core.POLICIES))
    a = ap.parse_args(argv)
    seeds = [int(s) for s in a.seeds.split(",")]
    windows = a.windows.split(",")
    policies = a.policies.split(",")
    if BASELINE not in policies:
        policies.insert(0, BASELINE)
    days = int(a.days) if float(a.days).is_integer() else a.days
    t0 = time.perf_counter()
    sc = sim_core.load(a.bundle)
    ax = axes(str(sc.manifest.get("parameters", {}).get("physics", "default")))
    results = measure(sc, [s for _, ss in ax for s in ss], policies, windows, days, seeds)
    text = page(sc.bundle_id, results, ax, policies, windows, days, seeds, time.perf_counter() - t0)
    print(text)
    if a.write:
        atomic_write_bytes(PAGE, text.encode())


if __name__ == "__main__":
    main()
