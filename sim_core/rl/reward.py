"""Composable rewards over one simulation step.

A reward component maps one step's results (a :class:`sim_core.outcome.StepOutcome`: per-datacenter arrays of the
step and step-level transfer/SLA numbers) to one raw number in physical units. A :class:`Reward`
combines components with weights and normalisation factors::

    reward = - sum_{cost-like i}  w_i * value_i / norm_i  + sum_{benefit i}  w_i * value_i / norm_i

Built-in components (raw value, unit):

==================== ============================================================ ===========
``energy_cost``      electricity cost of all datacenters in the step               USD
``carbon_emissions`` operational emissions of all datacenters                      kg CO2eq
``energy``           total facility energy (IT + cooling)                          kWh
``transfer_cost``    egress cost of the remote assignments decided in the step     USD
``transfer_emissions`` emissions of those transfers                                kg CO2eq
``sla_penalty``      SLA violations of the tasks that started in the step          count
``water``            cooling water (evaporation + drift + blowdown)                L
``masac_utility``    MASAC system utility (a *benefit*, see :func:`masac_terms`)   USD
==================== ============================================================ ===========

Summed over a run, the first seven equal the run totals ``cost_usd``, ``carbon_kg``, ``total_kwh``,
``transfer_cost_usd``, ``transfer_carbon_kg``, ``sla_violations`` and ``water_l``.

Default reward (:data:`DEFAULT_REWARD`, the environments' reward when none is given): every cost the run
totals report, weight 1 each, with one norm per unit so that a USD of egress counts as a USD of electricity
and a kg CO2eq of a transfer as a kg of a datacenter's emissions::

    energy_cost 1/20 USD, transfer_cost 1/20 USD, carbon_emissions 1/100 kg, transfer_emissions 1/100 kg,
    sla_penalty 1/1 violation, water 1/500 L          (facility energy: charged through its price and emissions)

Configuration (a dict, a YAML string or a YAML file)::

    components:                 # (or the mapping itself, or under a top-level ``reward:`` key)
      energy_cost: 1.0          # weight only: the component's default norm
      carbon_emissions: {weight: 0.5, norm: 50.0}
      masac_utility: {weight: 1.0, norm: 100.0, params: {carbon_usd_per_t: 100.0}}

Custom components::

    @register_component("gpu_hours", kind="benefit", unit="GPU-h", norm=10.0)
    def gpu_hours(o):
        return o["busy_gpus"] * 0.25
"""

from __future__ import annotations

import functools
import inspect
import math
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gridshift import bounds
from gridshift.bounds import Bound

from ..physics import STEP_HOURS


class RewardConfigError(ValueError):
    """A reward configuration is invalid (unknown component, bad normaliser, bad YAML, ...)."""


# ---------------------------------------------------------------------------- registry
@dataclass(frozen=True)
class ComponentSpec:
    """A registered component: ``fn(outcome, **params) -> float`` in ``unit``."""

    name: str
    fn: Callable[..., float]
    kind: str = "cost"  # "cost" (subtracted) or "benefit" (added)
    norm: float = 1.0  # default normalisation factor
    unit: str = ""
    doc: str = ""
    params: dict = field(default_factory=dict)  # parameter name -> default
    ranges: dict = field(default_factory=dict)  # parameter name -> Bound (a number) or None (a flag)


REGISTRY: dict[str, ComponentSpec] = {}

#: The valid range of a term's weight and norm, with the reason (one declaration; docs/bundle_format.md).
TERM_RANGES: dict[str, Bound] = {
    "weight": Bound(-1e6, 1e6, "a finite multiplier (negative turns a cost into a bonus); beyond 10^6 one term "
                               "swamps every other and products may overflow"),
    "norm": Bound(1e-9, 1e12, "a positive per-step magnitude in the component's unit (it divides)"),
}


def _real(v: Any) -> float | None:
    """``v`` as a float if it is a real number (not a bool, not a string); else None."""
    if isinstance(v, bool) or not isinstance(v, int | float):
        return None
    try:
        return float(v)
    except OverflowError:
        return math.inf


def _check_term_value(name: str, what: str, v: Any) -> float:
    b = TERM_RANGES[what]
    x = _real(v)
    if x is None or not math.isfinite(x) or not b.admits(x):
        kind = "a positive finite number" if what == "norm" else "a finite number"
        raise RewardConfigError(f"component {name!r}: {what} must be {kind} in {b.describe()} ({b.reason}), "
                                f"got {v!r}")
    return x


def _check_norm(name: str, norm: Any) -> float:
    return _check_term_value(name, "norm", norm)


def check_params(name: str, params: Mapping[str, Any], ranges: Mapping[str, Bound | None]) -> dict[str, Any]:
    """The parameters ``params`` of component ``name``, each checked against ``ranges``: a :class:`Bound` (a
    real, finite number inside it; never a bool or a string), ``None`` for a flag (``True``/``False``). A
    parameter whose range is a Bound may also be ``None`` when its default is (``migration_usd_per_gb``).
    Parameters without a declared range (custom components) pass unchecked."""
    spec = get_component(name)
    for key, v in params.items():
        if key not in ranges:
            continue
        b = ranges[key]
        if b is None:
            if not isinstance(v, bool):
                raise RewardConfigError(f"component {name!r}: {key} must be True or False, got {v!r}")
            continue
        if v is None and spec.params.get(key, 0.0) is None:
            continue
        x = _real(v)
        if x is None or not math.isfinite(x) or not b.admits(x):
            raise RewardConfigError(f"component {name!r}: {key} must be a finite number in {b.describe()} "
                                    f"({b.reason}), got {v!r}")
    return dict(params)


def register_component(name: str | None = None, *, kind: str = "cost", norm: float = 1.0, unit: str = "",
                       replace: bool = False, ranges: Mapping[str, Bound | None] | None = None):
    """Decorator: register ``fn(outcome, **params) -> float`` as reward component ``name``
    (default: the function's name). ``kind``: ``"cost"`` (reward -= w x value / norm) or
    ``"benefit"`` (reward += w x value / norm). Keyword parameters with defaults become the
    component's ``params`` (overridable per configuration); ``ranges``: their valid ranges
    (:func:`check_params`), checked whenever a configuration sets them."""
    if kind not in ("cost", "benefit"):
        raise ValueError(f"kind must be 'cost' or 'benefit', got {kind!r}")

    def deco(fn):
        key = name or fn.__name__
        if not isinstance(key, str) or not key:
            raise ValueError("a component needs a non-empty string name")
        if key in REGISTRY and not replace:
            raise ValueError(f"reward component {key!r} is already registered (pass replace=True)")
        sig = inspect.signature(fn)
        ps = list(sig.parameters.values())
        if not ps or ps[0].kind not in (ps[0].POSITIONAL_ONLY, ps[0].POSITIONAL_OR_KEYWORD):
            raise ValueError(f"component {key!r}: fn must take the step outcome as first argument")
        params = {p.name: p.default for p in ps[1:] if p.default is not inspect.Parameter.empty}
        REGISTRY[key] = ComponentSpec(key, fn, kind, _check_norm(key, norm), unit,
                                      (inspect.getdoc(fn) or "").split("\n")[0], params, dict(ranges or {}))
        return fn

    return deco


def unregister_component(name: str) -> None:
    REGISTRY.pop(name, None)


def get_component(name: str) -> ComponentSpec:
    try:
        return REGISTRY[name]
    except KeyError:
        raise RewardConfigError(f"unknown reward component {name!r}; registered: {sorted(REGISTRY)}") from None


# ---------------------------------------------------------------------------- built-in components
# Default norms are round per-step magnitudes of the reference 5-DC cluster (sim_core.testing.
# reference_bundle, ~1.3 M tasks/year, `lowest_carbon`: ~290 kWh, 20 USD, 90 kg, 500 L, 0.3 USD of
# egress and 0.09 kg of transfer emissions per step), so that equal weights give terms of order 1.
#: name -> (step total it reads, unit, default norm, what it is)
STEP_TOTAL_COMPONENTS = {
    "energy_cost": ("cost_usd", "USD", 20.0, "Electricity cost of all datacenters in the step (USD)."),
    "carbon_emissions": ("carbon_kg", "kg", 100.0, "Operational emissions of all datacenters in the step (kg CO2eq)."),
    "energy": ("total_kwh", "kWh", 300.0, "Total facility energy of all datacenters in the step (kWh)."),
    "transfer_cost": ("transfer_cost_usd", "USD", 0.3, "Egress cost of the remote assignments decided in the step."),
    "transfer_emissions": ("transfer_carbon_kg", "kg", 0.1, "Emissions of the transfers decided in the step (kg)."),
    "sla_penalty": ("sla_violations", "violations", 1.0, "SLA violations of the tasks that started in the step."),
    "water": ("water_l", "L", 500.0, "Cooling water of all datacenters in the step (L)."),
}


def _step_total(metric: str, doc: str) -> Callable[..., float]:
    def component(o) -> float:
        return o[metric]

    component.__doc__ = doc
    component.jit_term = ("total", metric)  # (what sim_core.rl.vector evaluates inside its jitted step)
    return component


for _name, (_metric, _unit, _norm, _doc) in STEP_TOTAL_COMPONENTS.items():
    register_component(_name, unit=_unit, norm=_norm)(_step_total(_metric, _doc))


#: MASAC system-utility parameters. These are **assumptions** of this project, not numbers taken
#: from the MASAC paper (Zhang, Xu, Lim, Niyato 2023, "Sustainable AIGC Workload Scheduling of
#: Geo-Distributed Data Centers: A Multi-Agent Reinforcement Learning Approach", arXiv:2304.07948),
#: which defines the utility as GPU revenue minus energy, idle-GPU, carbon and migration costs:
#: revenue 2.0 USD/GPU-h ~ the order of public on-demand cloud prices per datacenter GPU-hour
#: (V100 class, 2023); idle 0.5 USD/GPU-h ~ amortised capital + fixed operating cost of a GPU that
#: earns nothing; carbon 85 USD/t ~ the 2023 EU ETS allowance price (~ 85 EUR/t); migration: None
#: = the bundle's own egress prices (the ``transfer_cost`` USD), a number = that flat USD/GB.
MASAC_DEFAULTS = {"revenue_usd_per_gpu_h": 2.0, "idle_usd_per_gpu_h": 0.5, "carbon_usd_per_t": 85.0,
                  "migration_usd_per_gb": None, "include_transfer_carbon": True}
#: Their valid ranges (None: a flag), checked wherever they are set (a Reward configuration, ``masac_params``).
MASAC_RANGES: dict[str, Bound | None] = {
    "revenue_usd_per_gpu_h": Bound(0.0, 1000.0, "a price per GPU-hour: on-demand cloud prices are a few USD; "
                                                "1,000 is beyond any"),
    "idle_usd_per_gpu_h": Bound(0.0, 1000.0, "a cost per GPU-hour, on the scale of the revenue"),
    "carbon_usd_per_t": Bound(0.0, 10_000.0, "a carbon price (EU ETS ~85 EUR/t in 2023); 10,000 USD/t is beyond "
                                             "any price or social-cost estimate"),
    "migration_usd_per_gb": bounds.get("usd_per_gb"),
    "include_transfer_carbon": None,
}


def check_masac_params(params: Mapping[str, Any]) -> dict[str, Any]:
    """``masac_params`` (overrides of :data:`MASAC_DEFAULTS`) checked against :data:`MASAC_RANGES`."""
    if not isinstance(params, Mapping):
        raise RewardConfigError(f"masac_params must be a mapping, got {type(params).__name__}")
    unknown = set(params) - set(MASAC_DEFAULTS)
    if unknown:
        raise RewardConfigError(f"unknown masac_params {sorted(unknown)}; known: {sorted(MASAC_DEFAULTS)}")
    return check_params("masac_utility", params, MASAC_RANGES)


def masac_terms(o, revenue_usd_per_gpu_h: float = MASAC_DEFAULTS["revenue_usd_per_gpu_h"],
                idle_usd_per_gpu_h: float = MASAC_DEFAULTS["idle_usd_per_gpu_h"],
                carbon_usd_per_t: float = MASAC_DEFAULTS["carbon_usd_per_t"],
                migration_usd_per_gb: float | None = MASAC_DEFAULTS["migration_usd_per_gb"],
                include_transfer_carbon: bool = MASAC_DEFAULTS["include_transfer_carbon"]) -> dict[str, float]:
    """The MASAC system utility of one step and its terms (USD)::

        revenue   = revenue_usd_per_gpu_h x busy GPU-hours        (busy GPUs time-weighted x 0.25 h)
        energy    = electricity cost of the datacenters            (o["cost_usd"])
        idle      = idle_usd_per_gpu_h x idle GPU-hours            (installed - busy GPUs, x 0.25 h)
        carbon    = carbon_usd_per_t x (DC + transfer emissions) / 1000
        migration = GB moved x migration_usd_per_gb, or the egress USD when None
        utility   = revenue - energy - idle - carbon - migration

    Defaults: :data:`MASAC_DEFAULTS` (assumptions; see there).
    """
    revenue = revenue_usd_per_gpu_h * o["busy_gpus"] * STEP_HOURS
    energy_usd = o["cost_usd"]
    idle = idle_usd_per_gpu_h * o["idle_gpus"] * STEP_HOURS
    kg = o["carbon_kg"] + (o["transfer_carbon_kg"] if include_transfer_carbon else 0.0)
    carbon = carbon_usd_per_t * kg / 1000.0
    migration = o["transfer_cost_usd"] if migration_usd_per_gb is None else migration_usd_per_gb * o["transfer_gb"]
    return {"revenue": revenue, "energy_cost": energy_usd, "idle_cost": idle, "carbon_cost": carbon,
            "migration_cost": migration,
            "utility": revenue - energy_usd - idle - carbon - migration}


@register_component("masac_utility", kind="benefit", unit="USD", norm=100.0, ranges=MASAC_RANGES)
def masac_utility(o, revenue_usd_per_gpu_h: float = MASAC_DEFAULTS["revenue_usd_per_gpu_h"],
                  idle_usd_per_gpu_h: float = MASAC_DEFAULTS["idle_usd_per_gpu_h"],
                  carbon_usd_per_t: float = MASAC_DEFAULTS["carbon_usd_per_t"],
                  migration_usd_per_gb: float | None = MASAC_DEFAULTS["migration_usd_per_gb"],
                  include_transfer_carbon: bool = MASAC_DEFAULTS["include_transfer_carbon"]) -> float:
    """MASAC system utility: GPU revenue - energy - idle-GPU - carbon - migration cost (USD)."""
    return masac_terms(o, revenue_usd_per_gpu_h, idle_usd_per_gpu_h, carbon_usd_per_t, migration_usd_per_gb,
                       include_transfer_carbon)["utility"]


masac_utility.jit_term = ("masac",)  # (sim_core.rl.vector evaluates it inside its jitted step, same arithmetic)


# ---------------------------------------------------------------------------- Reward
@dataclass(frozen=True)
class Term:
    name: str
    weight: float
    norm: float
    kind: str
    params: dict

    @property
    def coef(self) -> float:
        """Factor applied to the raw value: -w/norm for costs, +w/norm for benefits."""
        return (-1.0 if self.kind == "cost" else 1.0) * self.weight / self.norm


def _load_yaml(text: str, where: str):
    import yaml

    try:
        return yaml.safe_load(text)
    except yaml.YAMLError as e:
        raise RewardConfigError(f"{where}: invalid YAML ({e})") from None


def _parse_config(cfg) -> Mapping:
    """dict | YAML string | path (str or Path) -> mapping of component name -> spec."""
    if isinstance(cfg, Path) or (isinstance(cfg, str) and "\n" not in cfg and cfg.strip().endswith((".yaml", ".yml"))):
        path = Path(cfg)
        try:
            text = path.read_text(encoding="utf-8")
        except OSError as e:
            raise RewardConfigError(f"{path}: cannot read reward config ({e})") from None
        cfg = _load_yaml(text, str(path))
    elif isinstance(cfg, str):
        cfg = _load_yaml(cfg, "reward config")
    if not isinstance(cfg, Mapping):
        raise RewardConfigError(f"reward config must be a mapping, got {type(cfg).__name__}")
    if set(cfg) == {"reward"}:
        cfg = cfg["reward"]
        if not isinstance(cfg, Mapping):
            raise RewardConfigError("reward config: 'reward' must be a mapping")
    if "components" in cfg:
        extra = set(cfg) - {"components"}
        if extra:
            raise RewardConfigError(f"reward config: unknown keys {sorted(extra)} (expected 'components')")
        cfg = cfg["components"]
        if not isinstance(cfg, Mapping):
            raise RewardConfigError("reward config: 'components' must be a mapping of name -> weight or spec")
    if not cfg:
        raise RewardConfigError("reward config has no components")
    return cfg


class Reward:
    """Weighted sum of reward components over one step.

    ``Reward({"energy_cost": 1.0, "carbon_emissions": {"weight": 0.5, "norm": 50}})`` or
    ``Reward.from_config(dict | yaml_text | yaml_path)``. ``reward(outcome)`` -> float;
    ``reward.evaluate(outcome)`` -> (reward, {component: raw value}).
    """

    def __init__(self, components: Mapping[str, Any] | None = None):
        cfg = _parse_config(components if components is not None else DEFAULT_REWARD)
        terms: list[Term] = []
        for name, spec in cfg.items():
            if not isinstance(name, str):
                raise RewardConfigError(f"component names must be strings, got {name!r}")
            comp = get_component(name)
            if isinstance(spec, Mapping):
                extra = set(spec) - {"weight", "norm", "params"}
                if extra:
                    raise RewardConfigError(f"component {name!r}: unknown keys {sorted(extra)} "
                                            "(expected weight, norm, params)")
                weight, norm, params = spec.get("weight", 1.0), spec.get("norm", comp.norm), spec.get("params") or {}
            else:
                weight, norm, params = spec, comp.norm, {}
            weight = _check_term_value(name, "weight", weight)
            if not isinstance(params, Mapping):
                raise RewardConfigError(f"component {name!r}: params must be a mapping")
            unknown = set(params) - set(comp.params)
            if unknown:
                raise RewardConfigError(f"component {name!r}: unknown params {sorted(unknown)}; "
                                        f"known: {sorted(comp.params)}")
            params = check_params(name, params, comp.ranges)
            terms.append(Term(name, weight, _check_norm(name, norm), comp.kind, params))
        self.terms = tuple(terms)
        self._fast = tuple(
            (t.name, functools.partial(get_component(t.name).fn, **t.params) if t.params
             else get_component(t.name).fn, t.coef) for t in self.terms)

    @classmethod
    def from_config(cls, cfg) -> Reward:
        return cls(_parse_config(cfg))

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(t.name for t in self.terms)

    def to_config(self) -> dict:
        return {"components": {t.name: {"weight": t.weight, "norm": t.norm, **({"params": t.params} if t.params
                                                                                  else {})} for t in self.terms}}

    def __call__(self, outcome) -> float:
        r = 0.0
        for _, fn, c in self._fast:
            r += c * fn(outcome)
        return r

    def evaluate(self, outcome) -> tuple[float, dict[str, float]]:
        """(reward, raw value of every component)."""
        raw = {}
        r = 0.0
        for name, fn, c in self._fast:
            v = fn(outcome)
            raw[name] = v
            r += c * v
        return r, raw

    def __repr__(self) -> str:
        return f"Reward({self.to_config()['components']})"


#: The default norm of the money and of the carbon terms: a USD of egress weighs what a USD of electricity
#: weighs, a kg CO2eq of a transfer what a kg of a datacenter's emissions weighs.
USD_NORM = STEP_TOTAL_COMPONENTS["energy_cost"][2]
KG_NORM = STEP_TOTAL_COMPONENTS["carbon_emissions"][2]

#: The environments' default reward: every cost the run totals report, weight 1 each, one norm per unit:
#: electricity (``cost_usd``) and egress (``transfer_cost_usd``) per 20 USD, datacenter (``carbon_kg``) and
#: transfer emissions (``transfer_carbon_kg``) per 100 kg, SLA violations per violation, cooling water
#: (``water_l``) per 500 L. Facility energy (``total_kwh``) is left out: it is charged through its price and
#: its emissions already. So an agent that moves work pays for the move as the totals do.
DEFAULT_REWARD = {
    "energy_cost": {"weight": 1.0, "norm": USD_NORM},
    "transfer_cost": {"weight": 1.0, "norm": USD_NORM},
    "carbon_emissions": {"weight": 1.0, "norm": KG_NORM},
    "transfer_emissions": {"weight": 1.0, "norm": KG_NORM},
    "sla_penalty": {"weight": 1.0, "norm": STEP_TOTAL_COMPONENTS["sla_penalty"][2]},
    "water": {"weight": 1.0, "norm": STEP_TOTAL_COMPONENTS["water"][2]},
}


def default_reward_table() -> str:
    """:data:`DEFAULT_REWARD` as a Markdown table (docs/rl.md is generated from it): component, weight, norm,
    unit and the run total its sum over a run equals."""
    rows = ["| component | weight | norm | unit | run total it sums to |", "|---|---:|---:|---|---|"]
    for t in Reward(DEFAULT_REWARD).terms:
        metric, unit, _norm, _doc = STEP_TOTAL_COMPONENTS[t.name]
        rows.append(f"| `{t.name}` | {t.weight:g} | {t.norm:g} | {unit} | `{metric}` |")
    return "\n".join(rows)


__all__ = ["Reward", "RewardConfigError", "ComponentSpec", "REGISTRY", "register_component",
           "unregister_component", "get_component", "masac_terms", "MASAC_DEFAULTS", "MASAC_RANGES", "DEFAULT_REWARD",
           "TERM_RANGES", "check_masac_params", "check_params", "USD_NORM", "KG_NORM", "default_reward_table"]
