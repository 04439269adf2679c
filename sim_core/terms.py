"""The physics terms, collected from their modules, and the conservation identities their outputs enter.

Each term module declares itself (``TERM``, :class:`sim_core.physics.term.Term`: the parameters it owns, from a
registry with ranges; its named outputs, the per-step columns of the results; the identities its outputs enter
and those whose total it computes): ``sim_core.physics.site.MODULES`` (IT, cooling plant, water, power chain, the
order ``dc_step`` composes them in), network energy (``sim_core.transfer``) and the battery (``sim_core.battery``).
:func:`collect` gathers them and checks them against each other; :func:`residuals` evaluates every identity on a
run's per-step frame, so a test (or a user) sees at once that a new term's energy, carbon, cost or water is
accounted for.
"""

from __future__ import annotations

from dataclasses import replace
from types import ModuleType

import numpy as np
import polars as pl

from . import battery, transfer
from .physics import site
from .physics.params import DERIVED_PARAMS
from .physics.term import Identity, Term

#: the identities over the results' own columns: a site's carbon and cost are its grid energy's
#: (``grid_carbon_kg`` and ``grid_cost_usd`` are derived by :func:`residuals` from the step's signals)
RESULT_IDENTITIES = (
    Identity("carbon", "carbon_kg", "a site's carbon is its grid energy x the step's carbon intensity",
             ((1.0, "grid_carbon_kg"),)),
    Identity("cost", "cost_usd", "a site's cost is its grid energy x the step's price", ((1.0, "grid_cost_usd"),)),
)
#: the modules of the terms, in their order
MODULES: tuple[ModuleType, ...] = site.MODULES + (transfer, battery)


def collect(modules, result_identities: tuple[Identity, ...] = RESULT_IDENTITIES
            ) -> tuple[tuple[Term, ...], tuple[Identity, ...]]:
    """(terms, identities) declared by ``modules`` (each with a ``TERM``) and ``result_identities``: each
    identity's parts are its own followed by what each term's ``enters`` adds, in the modules' order. Refuses
    (ValueError naming the term) two terms of one name, an output or a parameter declared by two terms, a
    parameter in neither its registry nor the derived ones, an identity declared twice or entered but not
    declared."""
    terms = tuple(replace(m.TERM, module=m.__name__) for m in modules)
    seen_out: dict[str, str] = {}
    seen_par: dict[tuple[int, str], str] = {}
    for t in terms:
        if t.name in {u.name for u in terms if u is not t}:
            raise ValueError(f"two physics terms named {t.name!r}")
        for o in t.outputs:
            if o in seen_out:
                raise ValueError(f"physics term {t.name!r}: output {o!r} is already declared by term {seen_out[o]!r}")
            seen_out[o] = t.name
        for p in t.params:
            if p not in t.registry and p not in DERIVED_PARAMS:
                raise ValueError(f"physics term {t.name!r}: parameter {p!r} is in neither its registry nor "
                                 "sim_core.physics.params.DERIVED_PARAMS")
            key = (id(t.registry) if p in t.registry else 0, p)
            if key in seen_par:
                raise ValueError(f"physics term {t.name!r}: parameter {p!r} is already declared by term "
                                 f"{seen_par[key]!r}")
            seen_par[key] = t.name
    declared = [i for t in terms for i in t.identities] + list(result_identities)
    names = [i.name for i in declared]
    if len(set(names)) != len(names):
        raise ValueError(f"an identity declared twice: {sorted(n for n in set(names) if names.count(n) > 1)}")
    for t in terms:
        unknown = set(t.enters) - set(names)
        if unknown:
            raise ValueError(f"physics term {t.name!r} enters identities nobody declares: {sorted(unknown)}")
    identities = tuple(replace(i, parts=i.parts + tuple(part for t in terms for part in t.enters.get(i.name, ())))
                       for i in declared)
    return terms, identities


TERMS, IDENTITIES = collect(MODULES)


def term(name: str) -> Term:
    for t in TERMS:
        if t.name == name:
            return t
    raise KeyError(f"no physics term {name!r}; the terms: {', '.join(t.name for t in TERMS)}")


def _with_derived(steps: pl.DataFrame, soc0_kwh: np.ndarray | None) -> pl.DataFrame:
    """The frame with the columns an identity reads that the frame does not carry: grid energy without a battery
    (the facility's, no charge or discharge), the grid energy's carbon and cost at the step's signals, and each
    battery's change of energy held in the step (the frame is site-major, each site's
    steps in order; ``soc0_kwh`` (n_dc,): the energy before the first step)."""
    if "grid_kwh" not in steps.columns:
        steps = steps.with_columns(pl.col("total_kwh").alias("grid_kwh"), pl.lit(0.0).alias("battery_charge_kwh"),
                                   pl.lit(0.0).alias("battery_discharge_kwh"))
    steps = steps.with_columns((pl.col("grid_kwh") * pl.col("carbon_g_per_kwh") / 1000.0).alias("grid_carbon_kg"),
                               (pl.col("grid_kwh") * pl.col("price_usd_per_mwh") / 1000.0).alias("grid_cost_usd"))
    if "battery_soc_kwh" not in steps.columns:
        return steps
    n_dc = steps["dc"].n_unique()
    soc = steps["battery_soc_kwh"].to_numpy().reshape(n_dc, -1)
    s0 = np.zeros(n_dc) if soc0_kwh is None else np.asarray(soc0_kwh, dtype=np.float64)
    prev = np.concatenate([s0[:, None], soc[:, :-1]], axis=1)
    return steps.with_columns(pl.Series("battery_soc_delta_kwh", (soc - prev).reshape(-1)))


def residuals(steps: pl.DataFrame, soc0_kwh: np.ndarray | None = None,
              identities: tuple[Identity, ...] | None = None) -> dict[str, float]:
    """The largest relative residual of every identity whose columns the frame has (a battery's identities only
    with batteries; ``soc0_kwh``: each battery's energy before the first step, its ``soc_min``),
    max |total - sum parts| / max(1, |total|). ``identities``: those of :func:`collect` (default: the built-in
    terms')."""
    df = _with_derived(steps, soc0_kwh)
    out = {}
    for ident in IDENTITIES if identities is None else identities:
        cols = [ident.total] + [c for _, c in ident.parts]
        if any(c not in df.columns for c in cols):
            continue
        tot = df[ident.total].to_numpy()
        s = np.zeros_like(tot)
        for sign, c in ident.parts:
            s = s + sign * df[c].to_numpy()
        out[ident.name] = float(np.max(np.abs(tot - s) / np.maximum(1.0, np.abs(tot)))) if tot.size else 0.0
    return out
