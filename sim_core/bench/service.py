"""Policies ranked at equal service: each policy's carbon saving at the share of tasks late that the baseline
(``local_only``) has, from a sweep's summary (what ``compare`` prints under its table and the results pages show).

Lateness is :func:`sim_core.sla.late_rule`'s (the metric ``sla_violation_rate``: the tasks started that finish
after their deadline). The method (:data:`METHOD`), stated wherever the column is shown:

* a policy *meets* the baseline's service when its 95 % interval of the share late reaches the baseline's:
  mean − CI ≤ baseline mean + baseline CI. Its saving at matched service is its own (``as run``);
* a policy that is later than that is placed on its *family*'s frontier: the policies of the sweep from the same
  paper (the same kernel module, e.g. every Wait Awhile variant; a rule policy is a family of its own). Among the
  family's points that meet the baseline's service, the best saving, or the straight line between one that meets
  it and one that does not, read at the baseline's share late (running a share of the tasks under each
  variant: a mixture of the two schedules, assumed to add up linearly) — whichever saves more;
* a family with no point that meets the baseline's service is ``not comparable`` (no saving is shown: its
  saving was bought with lateness).
"""

from __future__ import annotations

import math

import polars as pl

from ..policies import registry
from .metrics import BASELINE

#: the lateness metric and the saving compared at equal service
LATE = "sla_violation_rate"
SAVING = "carbon_incl_transfer_kg"

METHOD = (f"saving at matched service: each policy's carbon saving (incl. transfers) at the share of tasks late "
          f"that {BASELINE} has; a policy whose 95 % interval of the share late reaches {BASELINE}'s keeps its own "
          "saving, a later one is read on its family's frontier (the variants of its paper in this sweep: the best "
          "variant that meets the service, or the line between one that meets it and one that does not, at "
          f"{BASELINE}'s share late); \"not comparable\": no variant meets it")

SCHEMA = {"policy": pl.String, "family": pl.String, "late_pct": pl.Float64, "late_ci95_pct": pl.Float64,
          "carbon_saving_pct": pl.Float64, "matched_saving_pct": pl.Float64, "method": pl.String}


def family(policy: str) -> str:
    """The family of a policy: its paper's kernel module for a published baseline (``wait_awhile``, ``gaia``...),
    its own name for a rule policy or one outside the registry."""
    try:
        spec = registry.get(policy)
    except KeyError:
        return policy
    return spec.module.rsplit(".", 1)[-1] if spec.kind == "baseline" else policy


def _stats(summary: pl.DataFrame, policy: str) -> tuple[float, float, float]:
    """(share late, its CI, carbon saving %) of ``policy``'s summary rows (NaN where absent; a CI of NaN, one
    seed, counts as 0)."""
    def row(metric):
        r = summary.filter((pl.col("policy") == policy) & (pl.col("metric") == metric))
        return r.row(0, named=True) if r.height else None

    late, sav = row(LATE), row(SAVING)
    if late is None or late["mean"] is None:
        return math.nan, math.nan, math.nan
    ci = late["ci95"] if late["ci95"] is not None and late["ci95"] == late["ci95"] else 0.0
    s = sav["savings_vs_local_only_pct"] if sav is not None else None
    return float(late["mean"]), float(ci), math.nan if s is None else float(s)


def matched_service(summary: pl.DataFrame, policies: list[str] | None = None) -> pl.DataFrame:
    """One row per policy (sweep order): its share late (%, ± CI), its carbon saving and its saving at matched
    service with the way it was read (:data:`METHOD`). Empty when the baseline is not in the sweep."""
    pols = policies or list(dict.fromkeys(summary["policy"].to_list()))
    if BASELINE not in pols:
        return pl.DataFrame(schema=SCHEMA)
    st = {p: _stats(summary, p) for p in pols}
    l0, c0, _ = st[BASELINE]
    limit = l0 + c0

    def meets(p: str) -> bool:
        late, ci, _ = st[p]
        return late - ci <= limit + 1e-15

    rows = []
    for p in pols:
        late, ci, sav = st[p]
        fam = family(p)
        if meets(p):
            best, how = sav, "as run"
        else:
            members = [q for q in pols if family(q) == fam and not math.isnan(st[q][2])]
            ok = [q for q in members if meets(q)]
            if not ok:
                lo = min(st[q][0] for q in members)
                best, how = None, f"not comparable: the {fam} variants here are ≥ {100 * lo:.2f} % late"
            else:
                best, how = max((st[q][2], f"as {q}") for q in ok)
                for b in ok:
                    for a in members:
                        lb, sb, la, sa = st[b][0], st[b][2], st[a][0], st[a][2]
                        if lb < l0 < la:
                            v = sb + (sa - sb) * (l0 - lb) / (la - lb)
                            if v > best:
                                best, how = v, f"between {b} and {a}"
        rows.append({"policy": p, "family": fam, "late_pct": 100 * late, "late_ci95_pct": 100 * ci,
                     "carbon_saving_pct": sav, "matched_saving_pct": best, "method": how})
    return pl.DataFrame(rows, schema=SCHEMA)


def ranking_lines(frame: pl.DataFrame) -> list[str]:
    """The matched-service ranking as text lines (best saving first, then the not comparable ones)."""
    if frame.height == 0:
        return []
    ranked = frame.sort(["matched_saving_pct", "policy"], descending=[True, False], nulls_last=True)
    base = frame.filter(pl.col("policy") == BASELINE).row(0, named=True)
    out = [f"at matched service ({BASELINE}: {base['late_pct']:.2f} ± {base['late_ci95_pct']:.2f} % of tasks late):"]
    for r in ranked.iter_rows(named=True):
        v = "n/a" if r["matched_saving_pct"] is None else f"{r['matched_saving_pct']:+.2f} %"
        out.append(f"  {r['policy']:<34} {v:>9}  ({r['late_pct']:.2f} % late; {r['method']})")
    return out


def markdown(frame: pl.DataFrame) -> str:
    """The ranking as a Markdown table (best first), with the method under it."""
    if frame.height == 0:
        return ""
    ranked = frame.sort(["matched_saving_pct", "policy"], descending=[True, False], nulls_last=True)
    lines = ["| policy | tasks late % | carbon saving % | saving at matched service % | how |",
             "|---|---:|---:|---:|---|"]
    for r in ranked.iter_rows(named=True):
        m = "not comparable" if r["matched_saving_pct"] is None else f"{r['matched_saving_pct']:.2f}"
        s = "n/a" if r["carbon_saving_pct"] != r["carbon_saving_pct"] else f"{r['carbon_saving_pct']:.2f}"
        lines.append(f"| {r['policy']} | {r['late_pct']:.2f} ± {r['late_ci95_pct']:.2f} | {s} | {m} | "
                     f"{r['method']} |")
    return "\n".join(lines) + "\n\n" + METHOD + ".\n"
