"""How the policies' savings against ``local_only`` move across the parameters that decide them
(docs/sensitivity.md, issue 24 item 6, issue 35 items 1, 3 and 4).

    ./run.sh python -m benchmarks.sensitivity BUNDLE --home DIR --mirror DIR            # print the page
    ./run.sh python -m benchmarks.sensitivity BUNDLE --home DIR --mirror DIR --write    # also write docs/sensitivity.md
    ./run.sh python -m benchmarks.sensitivity BUNDLE --home DIR --mirror DIR --only utilisation,egress --write

``BUNDLE``: the main job's regions and year at the rack preset with V100s, the page's bundle (``gridshift export
--regions US-CAL-CISO,DE-LU,SG --year 2023 --mirror ../shared/data --scale rack --gpu V100 --home DIR`` writes it
into ``DIR/bundles/``; without the two size options it is the default's ×1 year, 32 times the run time). One axis at
a time moves away from the run defaults, the others stay at theirs: the network energy per GB moved (0, the default,
the 2015 figure) and the network power model (:mod:`sim_core.network_power`, derived exactly from the default runs),
data locality on / off, who shares a dataset (the ``catalogue`` presets, ``trace_groups`` at
:data:`CATALOGUE_TENANTS` tenants), the forecast model (every model of ``sim_core.forecast.MODELS``), the facility
design (every preset of ``gridshift.dc_params.FACILITY_PRESETS``, read when the script runs, applied over the
bundle's site physics), task flexibility on / off (off: every task as ``gridshift.bundle.TASK_FLEX_DEFAULTS``), the
egress price (:mod:`sim_core.egress`), and, each from another export of the bundle's own build parameters with one
of them changed (``--home``/``--mirror``, built on first use, ``gridshift export``'s path): the sizing utilisation,
the mirror's year and the region set (:data:`BUNDLE_AXES`). A saving is ``100 x (local_only - policy) / local_only``
of a run's carbon including transfers and of its cost including transfers, paired per seed and window with
``local_only`` under the same setting; the page gives its mean over the seeds and windows with the smallest and
largest, and a section of spreads beyond the seeds. Each distinct setting runs once (the defaults are shared by
every axis).

``--only AXIS,...`` runs only those axes (and the default setting they are compared with) and, with ``--write``,
replaces only their sections of the page (each sits between ``<!-- sensitivity:AXIS:start/end -->`` markers); the
spread section is rewritten only by a call that runs every bundle axis (it spans them all). Give it the page's
``--days`` and ``--seeds`` (the header states the call's).
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as dt
import re
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np
from matplotlib.figure import Figure

import sim_core
from benchmarks._report import ROOT, machine
from gridshift.atomic import atomic_write_bytes
from gridshift.bundle import TASK_FLEX_DEFAULTS
from gridshift.dc_params import FACILITY_PRESETS, DatacenterParams
from gridshift.run_options import PAI_2020_USERS
from gridshift.scale import RACK_SCALE
from gridshift.scale import describe as scale_describe
from gridshift_plots.style import direct_labels, save_png
from sim_core import forecast as F
from sim_core import network_power as NP
from sim_core.bench.figures import policy_styles
from sim_core.egress import DEFAULT_EGRESS, EGRESS_PRESETS, with_egress
from sim_core.options import DEFAULT_TRANSFER_PRESET, TRANSFER_KWH_PER_GB_PRESETS
from sim_core.physics import param_vector

PAGE = ROOT / "docs" / "sensitivity.md"
#: two 30-day windows (winter and summer: the Mondays of ISO weeks 2 and 28 of the bundle's year), three seeds:
#: 6 runs per policy and setting (about 8 min on 2 cores)
ISO_WEEKS = (2, 28)
DAYS = 30
SEEDS = (0, 1, 2)
BASELINE = "local_only"
METRICS = (("carbon_incl_transfer_kg", "carbon incl. transfers"), ("cost_incl_transfer_usd", "cost incl. transfers"))
#: what else a run keeps: transfer emissions and its window (the power-model rows are derived from them), and the
#: share of its tasks late (``sim_core.sla.late_rule``: service beside each saving)
EXTRA = ("transfer_carbon_kg", "start_step", "steps", "sla_violation_rate")
#: the column of :data:`EXTRA`'s late share in a row of :func:`measure`
LATE = len(METRICS) + EXTRA.index("sla_violation_rate")
#: the bundle axes drawn as curves (saving and lateness against the value), and where each figure goes
FIGURE_AXES = ("utilisation", "scale")
FIGURE = ROOT / "docs" / "img" / "sensitivity_{axis}.png"
#: tenant counts of the ``trace_groups`` catalogue: the trace's users, and a tenth and ten times as many (the split of
#: tasks among users is an assumption: fewer tenants stand for a few heavy users holding most tasks)
CATALOGUE_TENANTS = (PAI_2020_USERS // 10, PAI_2020_USERS, PAI_2020_USERS * 10)
#: Axes that need another export of the bundle: key -> (title, BuildParams field, values). A value equal to the
#: main bundle's shares its runs. ``scale``: the rack preset (the main job's), a tenth and the whole of the source
#: cluster (gridshift.scale); x10 is out of this machine's reach (its export projects to ~92 GB, BENCHMARKS "Scale").
BUNDLE_AXES: dict[str, tuple[str, str, tuple]] = {
    "utilisation": ("sizing utilisation (`gridshift export --target-utilization`, the mean utilisation the sites are "
                    "sized for)", "target_utilization", (0.3, 0.5, 0.7, 0.8)),
    "year": ("year of the mirror's signals (`--year`)", "year", (2022, 2023)),
    "regions": ("region set (`--regions`)", "regions",
                (("US-CAL-CISO", "DE-LU", "SG"), ("US-CAL-CISO", "DE-LU", "CL-SIC", "SG", "AU-NSW"))),
    "scale": ("study scale (`gridshift export --scale`, × the PAI 2020 source cluster's workload and sites)", "scale",
              (RACK_SCALE, 0.1, 1.0)),
}


@dataclasses.dataclass(frozen=True)
class Setting:
    """One value of one axis: a label, run options, a scenario transform (None: the bundle as it is) and build
    parameters that differ from the bundle's (another export)."""

    label: str
    options: tuple[tuple[str, object], ...] = ()
    scenario: str | None = None  # key of the transform, so that equal settings share their runs
    bundle: tuple[tuple[str, object], ...] = ()

    @property
    def key(self) -> tuple:
        return self.options, self.scenario, self.bundle


@dataclasses.dataclass(frozen=True)
class Axis:
    key: str
    title: str
    settings: list[Setting]


def windows_for(year: int) -> list[str]:
    """The Mondays of :data:`ISO_WEEKS` of ``year``, UTC midnight."""
    return [dt.datetime.combine(dt.date.fromisocalendar(year, w, 1), dt.time(), dt.UTC).isoformat()
            for w in ISO_WEEKS]


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


def _value_label(field: str, v) -> str:
    if field == "scale":  # (×, with a preset's name and the GPUs it stands for: gridshift.scale.describe)
        return scale_describe(v).split(" at utilisation")[0]
    return ", ".join(v) if field == "regions" else f"{v:g}" if isinstance(v, float) else str(v)


def axes(build: dict) -> list[Axis]:
    """The axes and their settings; the facility designs and forecast models are read from their registries now.
    ``build``: the bundle's build parameters (its manifest's ``parameters``)."""
    from scenario_builder.bundle import BuildParams

    bundle_physics = str(build.get("physics", "default"))
    kwh = [("none", "0 (`none`)"), (DEFAULT_TRANSFER_PRESET, f"{TRANSFER_KWH_PER_GB_PRESETS[DEFAULT_TRANSFER_PRESET]:g}"
                                    f" (`{DEFAULT_TRANSFER_PRESET}`, default)"),
           ("aslan2018-2015", "0.06 (`aslan2018-2015`)")]
    out = [
        Axis("network", "network energy per GB moved (kWh/GB, `transfer_kwh_per_gb`)",
             [Setting(lbl, () if k == DEFAULT_TRANSFER_PRESET else (("transfer_kwh_per_gb", k),)) for k, lbl in kwh]),
        Axis("power_model", "network energy as a power model (`sim_core.network_power`)", [Setting("default")]),
        Axis("locality", "data locality (`locality`)",
             [Setting("on (default)"), Setting("off", (("locality", False),))]),
        Axis("catalogue", "who shares a dataset (`catalogue`; `catalogue_tenants`, the tenants of `trace_groups`: "
             "the PAI 2020 trace's 1,300 users by default, split evenly among the sites, an assumption varied here)",
             [Setting("`public` (default: nine shared public datasets)")]
             + [Setting(f"`trace_groups`, {n:,} tenants" + (" (the trace's users)" if n == PAI_2020_USERS else ""),
                        (("catalogue", "trace_groups"),) + ((("catalogue_tenants", n),) if n != PAI_2020_USERS
                                                            else ()))
                for n in CATALOGUE_TENANTS]),
        Axis("forecast", "forecast model (`forecast`)",
             [Setting(f"`{m}`" + (" (default)" if m == F.DEFAULT_MODEL else ""),
                      () if m == F.DEFAULT_MODEL else (("forecast", m),)) for m in F.MODELS]),
        Axis("facility", "facility design (`gridshift.dc_params.FACILITY_PRESETS`, over the bundle's site physics)",
             [Setting(f"`{n}`" + (" (the bundle's)" if n == bundle_physics else ""), (),
                      None if n == bundle_physics else f"facility:{n}") for n in FACILITY_PRESETS]),
        Axis("flexibility", "task flexibility", [Setting("on (the bundle's)"), Setting("off", (), "flexibility:off")]),
        Axis("egress", "egress price per GB moved (`sim_core.egress.EGRESS_PRESETS`)",
             [Setting(f"`{n}`" + (" (the bundle's list prices)" if n == DEFAULT_EGRESS else f", ≤ {c:g} USD/GB"), (),
                      None if n == DEFAULT_EGRESS else f"egress:{n}") for n, c in EGRESS_PRESETS.items()]),
    ]
    params = BuildParams.from_manifest(build)
    for key, (title, field, values) in BUNDLE_AXES.items():
        own = getattr(params, field)
        out.append(Axis(key, title, [
            Setting(_value_label(field, v) + (" (the bundle's)" if v == own else ""), (), None,
                    () if v == own else ((field, v),)) for v in values]))
    return out


def _transform(key: str | None) -> Callable | None:
    if key is None:
        return None
    kind, name = key.split(":", 1)
    if kind == "flexibility":
        return _flexibility_off
    if kind == "egress":
        return lambda sc: with_egress(sc, name)
    return _facility(name)


def variant(sc, overrides: tuple, home: Path, mirror: Path):
    """The scenario of the bundle's own build parameters with ``overrides`` (``gridshift export``'s path: what
    the home's warehouse lacks is ingested from the mirror first; a bundle already built is reused)."""
    from dagster_project import runner
    from gridshift.home import Home
    from scenario_builder.bundle import BuildParams

    p = dataclasses.replace(BuildParams.from_manifest(sc.manifest["parameters"]), **dict(overrides))
    (built,) = runner.export_bundles([p], home=Home.resolve(home), mirror=mirror)
    return sim_core.load(built.path)


def measure(sc, settings: list[Setting], policies: list[str], days: int, seeds, home: Path | None = None,
            mirror: Path | None = None, windows: list[str] | None = None) -> dict:
    """{setting key: {policy: (n_runs, n_metrics + n_extra) array}} over every distinct setting; ``windows``
    (default: :func:`windows_for` the scenario's year) are the run starts."""
    out = {}
    for s in settings:
        if s.key in out:
            continue
        base = sc
        if s.bundle:
            if home is None:
                raise SystemExit(f"the setting {s.label!r} needs another export of the bundle: give --home "
                                 "(and --mirror)")
            base = variant(sc, s.bundle, home, mirror)
        t = _transform(s.scenario)
        scn = base if t is None else t(base)
        year = int(scn.manifest.get("parameters", {}).get("year", scn.start_utc.year))
        vals = {}
        for pol in policies:
            rows = []
            for w in windows or windows_for(year):
                for seed in seeds:
                    r = sim_core.run(scn, pol, seed=seed, start=w, days=days, **dict(s.options))
                    rows.append([float(r.totals[m]) for m, _ in METRICS] + [float(r.totals[EXTRA[0]]),
                                float(r.options["start_step"]), float(r.options["steps"]),
                                float(r.totals["sla_violation_rate"])])
            vals[pol] = np.array(rows)
        out[s.key] = vals
    return out


def _cell(x: np.ndarray) -> str:
    return f"{x.mean():+.2f} ({x.min():+.2f}…{x.max():+.2f})"


def savings(v: dict, pol: str, k: int) -> np.ndarray:
    base, x = v[BASELINE][:, k], v[pol][:, k]
    return 100.0 * (base - x) / base


def _table(results: dict, ax: Axis, policies: list[str]) -> list[str]:
    lines = []
    for k, (_, mname) in enumerate(METRICS):
        lines += [f"Saving in {mname}, %:", "",
                  "| policy | " + " | ".join(s.label for s in ax.settings) + " |",
                  "|---|" + "---:|" * len(ax.settings)]
        for pol in policies:
            if pol != BASELINE:
                lines.append(f"| `{pol}` | " + " | ".join(_cell(savings(results[s.key], pol, k))
                                                          for s in ax.settings) + " |")
        lines.append("")
    lines += ["Tasks late (finishing after their deadline, `sim_core.sla`), % of the tasks started:", "",
              "| policy | " + " | ".join(s.label for s in ax.settings) + " |", "|---|" + "---:|" * len(ax.settings)]
    for pol in policies:
        lines.append(f"| `{pol}` | " + " | ".join(_late_cell(late(results[s.key], pol)) for s in ax.settings) + " |")
    return lines + [""]


def late(v: dict, pol: str) -> np.ndarray:
    """A policy's share of tasks late per run, in %."""
    return 100.0 * v[pol][:, LATE]


def _late_cell(x: np.ndarray) -> str:
    return f"{x.mean():.2f} ({x.min():.2f}…{x.max():.2f})"


def numeric_axis(ax: Axis) -> list[float] | None:
    """The values of an axis of :data:`FIGURE_AXES` (drawn as curves), else None."""
    return [float(v) for v in BUNDLE_AXES[ax.key][2]] if ax.key in FIGURE_AXES else None


def axis_figure(results: dict, ax: Axis, policies: list[str]):
    """Two panels against a numeric axis's value: each policy's carbon saving incl. transfers (mean, with the
    smallest…largest run as a band) and its share of tasks late (mean): a headline as a curve, with its
    service beside it."""
    xs = numeric_axis(ax)
    styles = policy_styles(policies)
    fig = Figure(figsize=(13, 5.5), layout="constrained")
    fig.get_layout_engine().set(rect=(0, 0, 0.86, 1), wspace=0.25)
    left, right = fig.subplots(1, 2)
    ends_l, ends_r = [], []
    for pol in policies:
        st = styles[pol]
        if pol != BASELINE:
            sv = [savings(results[s.key], pol, 0) for s in ax.settings]
            m = [x.mean() for x in sv]
            left.fill_between(xs, [x.min() for x in sv], [x.max() for x in sv], color=st["color"], alpha=0.08, lw=0)
            left.plot(xs, m, color=st["color"], marker=st["marker"], ms=4, lw=1.2)
            ends_l.append((pol, xs[-1], m[-1], st["color"]))
        lt = [late(results[s.key], pol).mean() for s in ax.settings]
        right.plot(xs, lt, color=st["color"], marker=st["marker"], ms=4, lw=1.2)
        ends_r.append((pol, xs[-1], lt[-1], st["color"]))
    for ax_ in (left, right):  # (a scale spans decades: log spacing)
        if max(xs) / min(xs) > 10:
            ax_.set_xscale("log")
    left.axhline(0.0, color="0.5", lw=0.8)
    left.set(xlabel=ax.title.split(" (")[0], ylabel=f"carbon saving incl. transfers vs {BASELINE}, %", xticks=xs)
    right.set(xlabel=ax.title.split(" (")[0], ylabel="tasks late, % of tasks started", xticks=xs)
    for ax_ in (left, right):
        ax_.set_xticklabels([f"{x:g}" for x in xs])
    fig.suptitle(f"{ax.title}: mean over seeds and windows (band: smallest…largest run)", fontsize=10)
    direct_labels(left, ends_l)
    direct_labels(right, ends_r)
    return fig


def _totals(row: np.ndarray) -> dict:
    return {"carbon_incl_transfer_kg": row[0], "transfer_carbon_kg": row[2]}


def _power_model(sc, results: dict, policies: list[str]) -> list[str]:
    """The saving under each power-model preset and the break-even marginal intensity, from the default runs."""
    v = results[Setting("default").key]
    k_run = TRANSFER_KWH_PER_GB_PRESETS[DEFAULT_TRANSFER_PRESET]
    lo, hi = NP.MARGINAL_KWH_PER_GB_RANGE
    models = list(NP.NETWORK_POWER_MODELS.values())
    fixed = {}
    for m in models:
        for row in v[BASELINE]:
            key = (m.name, int(row[3]), int(row[4]))
            if key not in fixed:
                fixed[key] = NP.fixed_kwh(sc, m, key[1], key[2])
    cap = NP.path_capacity_mbps(sc)
    lines = [
        f"Derived exactly from the default runs (at {k_run:g} kWh/GB; no policy reads the intensity, so transfer "
        "emissions scale with it). Each preset charges its marginal kWh/GB on every GB moved and its fixed share, "
        f"{models[0].baseload_w_per_mbps:g} W per Mbps of the bundle's path throughput between its sites "
        f"({cap:,.0f} Mbps in all, {models[0].baseload_w_per_mbps * cap / 1000:.2f} kW), to every run over its "
        "window, `local_only` included (the sites are connected either way; the bundle's throughput is a measured "
        "per-path figure, below a provisioned capacity, so this share is a low one: it dilutes a saving and cannot "
        "flip its sign, whatever its size). Break-even: the marginal intensity at "
        f"which the saving is zero (∞: never; – : no saving to lose). Sign change: in how many of the runs the "
        f"break-even lies inside the literature's plausible range, {lo:g}…{hi:g} kWh/GB.", "",
        "| policy | " + " | ".join(f"`{m.name}` ({m.marginal_kwh_per_gb:.3g} kWh/GB + fixed share)" for m in models)
        + " | break-even kWh/GB | sign change in range |",
        "|---|" + "---:|" * (len(models) + 2)]
    for pol in policies:
        if pol == BASELINE:
            continue
        cells = []
        for m in models:
            s = [NP.saving_at(_totals(b), _totals(p), k_run, m.marginal_kwh_per_gb,
                              fixed[(m.name, int(b[3]), int(b[4]))][1])
                 for b, p in zip(v[BASELINE], v[pol], strict=True)]
            cells.append(_cell(np.array(s)))
        be = np.array([NP.break_even_kwh_per_gb(_totals(b), _totals(p), k_run)
                       for b, p in zip(v[BASELINE], v[pol], strict=True)])
        fin = be[np.isfinite(be)]
        if fin.size == be.size:
            cells.append(f"{fin.mean():.4f} ({fin.min():.4f}…{fin.max():.4f})")
        else:
            cells.append(", ".join("∞" if x == np.inf else "–" if np.isnan(x) else f"{x:.4f}" for x in be))
        inside = int(np.sum((be >= lo) & (be <= hi)))
        cells.append(f"{'yes' if inside else 'no'} ({inside} of {be.size})")
        lines.append(f"| `{pol}` | " + " | ".join(cells) + " |")
    return lines + [""]


def _spread(results: dict, ax_list: list[Axis], policies: list[str]) -> list[str]:
    """Beyond the seeds: per policy, the range of its mean carbon saving over each axis that moves the study's
    conditions (years, region sets, sizing), beside the default cell's seed-and-window range."""
    keys = [a for a in ax_list if a.key in BUNDLE_AXES]
    if not keys:
        return []
    lines = ["Saving in carbon incl. transfers, %: the default setting's mean (smallest…largest run over seeds and "
             "windows), then the smallest…largest of the mean over each axis's settings.", "",
             "| policy | default (seeds × windows) | " + " | ".join(f"over {a.key}" for a in keys) + " |",
             "|---|" + "---:|" * (len(keys) + 1)]
    for pol in policies:
        if pol == BASELINE:
            continue
        cells = [_cell(savings(results[Setting("default").key], pol, 0))]
        for a in keys:
            means = [savings(results[s.key], pol, 0).mean() for s in a.settings]
            cells.append(f"{min(means):+.2f}…{max(means):+.2f}")
        lines.append(f"| `{pol}` | " + " | ".join(cells) + " |")
    return lines + [""]


def _block(name: str, lines: list[str]) -> str:
    return "\n".join([f"<!-- sensitivity:{name}:start -->", *lines, f"<!-- sensitivity:{name}:end -->"])


def sections(sc, results: dict, ax_list: list[Axis], policies: list[str]) -> dict[str, str]:
    """{axis key (and "spread"): its section of the page, between its markers}."""
    out = {}
    for ax in ax_list:
        body = _power_model(sc, results, policies) if ax.key == "power_model" else _table(results, ax, policies)
        if numeric_axis(ax):
            img = FIGURE.relative_to(PAGE.parent).as_posix().format(axis=ax.key)
            body = [f"![saving and lateness against {ax.key}]({img})", "", *body]
        out[ax.key] = _block(ax.key, [f"## {ax.title}", "", *body])
    spread = _spread(results, ax_list, policies)
    if spread and set(BUNDLE_AXES) <= {a.key for a in ax_list}:  # it spans every bundle axis: only all rewrite it
        out["spread"] = _block("spread", ["## Uncertainty beyond the seeds", "", *spread])
    return out


def header(sc, days: int, seeds) -> str:
    """The page's head: the bundle (its regions, year, size, GPUs and task count, from its manifest), the windows
    and seeds."""
    from scenario_builder.bundle import BuildParams

    p = BuildParams.from_manifest(sc.manifest.get("parameters", {}))
    size = scale_describe(p.scale).split(" at utilisation")[0]
    main = (" The main job's regions and year at the rack preset with V100s, not its default size (×1 with H100s): "
            "a run costs about its task count times 1.4 µs (BENCHMARKS.md \"Scale\"), so this page at ×1 would take "
            "about 32 times as long; the scale axis below measures what changes with size."
            if p.scale == RACK_SCALE else "")
    return "\n".join([
        "# Sensitivity: what the policies' savings depend on",
        "",
        "Generated by `./run.sh python -m benchmarks.sensitivity BUNDLE --home DIR --mirror DIR --write` "
        "(`benchmarks/sensitivity.py`); do not edit by hand.",
        "",
        f"Bundle `{sc.bundle_id}`: {', '.join(p.regions)} × {p.year}, the {p.workload} year of "
        f"{sc.manifest.get('n_tasks', 0) / 1e6:.2f} M tasks, scale {size} of {p.gpu}.{main} Windows of {days} "
        f"days from the Mondays of ISO weeks {ISO_WEEKS[0]} and {ISO_WEEKS[1]} of the bundle's year (2023-01-09, "
        f"2023-07-10); seeds {', '.join(map(str, seeds))}: {len(ISO_WEEKS) * len(seeds)} "
        "runs per policy and setting. One axis at a time moves away from the run defaults (docs/simulation.md) and "
        "the bundle's build parameters, the others stay at theirs. Each cell: the saving against "
        f"`{BASELINE}` under the same setting, in % (positive = less than `{BASELINE}`), paired per seed and window: "
        "mean (smallest…largest). Runs drain (equal work).",
        "",
    ])


def mark_sections(old: str, every: list[Axis]) -> str:
    """A page written before the markers, with each axis's section (its ``## title`` up to the next heading or
    the run-time line) put between its markers, so that ``--only`` can replace it."""
    for ax in every:
        if f"<!-- sensitivity:{ax.key}:start -->" in old:
            continue
        old = re.sub(r"(^## " + re.escape(ax.title) + r"\n.*?)\n(?=## |Run time: )",
                     lambda m, k=ax.key: f"<!-- sensitivity:{k}:start -->\n{m.group(1).rstrip()}\n"
                                         f"<!-- sensitivity:{k}:end -->\n\n", old, count=1, flags=re.S | re.M)
    return old


def assemble_page(old: str | None, head: str, secs: dict[str, str], order: list[str], footer: str) -> str:
    """The page: ``old`` with the sections of ``secs`` replaced in place (or added before the footer), or a new
    page in ``order`` when there is no old one."""
    if old is None:
        return "\n\n".join([head.rstrip(), *(secs[k] for k in order if k in secs), footer]) + "\n"
    text = head.rstrip() + "\n\n" + old[old.index("<!-- sensitivity:"):] if "<!-- sensitivity:" in old else old
    for k in order:
        if k not in secs:
            continue
        start, end = f"<!-- sensitivity:{k}:start -->", f"<!-- sensitivity:{k}:end -->"
        pat = re.compile(re.escape(start) + ".*?" + re.escape(end), re.S)
        if pat.search(text):
            text = pat.sub(lambda _m, b=secs[k]: b, text)
        else:
            text = re.sub(r"\n(Run time: [^\n]*\n?)\Z", lambda m, b=secs[k]: f"\n{b}\n\n{m.group(1)}", text)
    return re.sub(r"Run time: [^\n]*", footer, text)


def main(argv: list[str] | None = None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("bundle", type=Path)
    ap.add_argument("--write", action="store_true", help="write docs/sensitivity.md")
    ap.add_argument("--days", type=float, default=DAYS)
    ap.add_argument("--seeds", default=",".join(map(str, SEEDS)))
    ap.add_argument("--policies", default=",".join(sim_core.POLICIES))
    ap.add_argument("--only", default="", help="comma-separated axis keys to run (default: every axis)")
    ap.add_argument("--home", type=Path, help="gridshift home for the other exports of the bundle")
    ap.add_argument("--mirror", type=Path, help="the data mirror the other exports ingest from")
    a = ap.parse_args(argv)
    seeds = [int(s) for s in a.seeds.split(",")]
    policies = a.policies.split(",")
    if BASELINE not in policies:
        policies.insert(0, BASELINE)
    days = int(a.days) if float(a.days).is_integer() else a.days
    t0 = time.perf_counter()
    sc = sim_core.load(a.bundle)
    every = axes(sc.manifest.get("parameters", {}))
    order = [ax.key for ax in every] + ["spread"]
    only = [k for k in a.only.split(",") if k]
    unknown = sorted(set(only) - set(order) - {"spread"})
    if unknown:
        raise SystemExit(f"--only: unknown axes {unknown}; choose from {order[:-1]}")
    chosen = [ax for ax in every if not only or ax.key in only]
    settings = [Setting("default")] + [s for ax in chosen for s in ax.settings]
    results = measure(sc, settings, policies, days, seeds, a.home, a.mirror)
    secs = sections(sc, results, chosen, policies)
    footer = (f"Run time: {time.perf_counter() - t0:.0f} s on {machine()} (shared with other work)"
              + (f"; this call ran {', '.join(ax.key for ax in chosen)}." if only else "."))
    old = mark_sections(PAGE.read_text(), every) if only and PAGE.exists() else None
    text = assemble_page(old, header(sc, days, seeds), secs, order, footer)
    print(text)
    if a.write:
        atomic_write_bytes(PAGE, text.encode())
        for ax in chosen:
            if numeric_axis(ax):
                print(save_png(axis_figure(results, ax, policies), Path(str(FIGURE).format(axis=ax.key))))


if __name__ == "__main__":
    main()
