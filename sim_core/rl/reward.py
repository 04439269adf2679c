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
      masac_utility: {weight: 1.0, norm: 1.0, params: {carbon_usd_per_t: 100.0}}

Custom components::

    @register_component("gpu_hours", kind="benefit", unit="GPU-h", norm=10.0)
    def gpu_hours(o):
        return o["busy_gpus"] * 0.25
"""

from __future__ import annotations

import functools
import inspect
import math
import operator
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

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


#: MASAC system-utility parameters, from the MASAC paper (Zhang, Xu, Lim, Niyato 2023, "Sustainable AIGC Workload
#: Scheduling of Geo-Distributed Data Centers: A Multi-Agent Reinforcement Learning Approach", arXiv:2304.07948),
#: Eqs. 2-7 and Table I: hourly GPU revenue alpha 0.05 USD, carbon price mu 100 USD/t, GPU idle power ratio beta
#: 10 %. The paper gives no number for the power of a unit of GPU time rho, nor for the result size s' its U5
#: retrieves: ``gpu_kw`` 0.3 = the NVIDIA V100 SXM2's 300 W TDP (NVIDIA V100 datasheet; the paper sizes its
#: workloads in V100 days), ``result_gb`` 4.27 = the Stable Diffusion v1-4 checkpoint (CompVis model card,
#: sd-v1-4.ckpt), the model of its text-to-image task. ``pue``: None = each site's facility PUE of the step
#: (total / IT energy) in place of Table I's per-site constants; a number = that PUE at every site; a sequence =
#: one PUE per site, manifest order (Table I's eta_n: the ``masac-5dc`` preset's).
#: ``migration_usd_per_gb``: None = the bundle's own egress prices, a number = that flat USD/GB.
MASAC_DEFAULTS = {"revenue_usd_per_gpu_h": 0.05, "carbon_usd_per_t": 100.0, "idle_power_ratio": 0.10,
                  "gpu_kw": 0.3, "pue": None, "result_gb": 4.27, "migration_usd_per_gb": None,
                  "include_transfer_carbon": True}
#: Their valid ranges (None: a flag), checked wherever they are set (a Reward configuration, ``masac_params``).
MASAC_RANGES: dict[str, Bound | None] = {
    "revenue_usd_per_gpu_h": Bound(0.0, 1000.0, "a price per GPU-hour: on-demand cloud prices are a few USD; "
                                                "1,000 is beyond any"),
    "carbon_usd_per_t": Bound(0.0, 10_000.0, "a carbon price (EU ETS ~85 EUR/t in 2023); 10,000 USD/t is beyond "
                                             "any price or social-cost estimate"),
    "idle_power_ratio": Bound(0.0, 1.0, "an idle GPU draws a share of its full-load power (0 to all of it)"),
    "gpu_kw": Bound(0.0, 10.0, "full-load power of one GPU: datacenter GPUs draw 0.3-1.2 kW; 10 kW is beyond any"),
    "pue": Bound(1.0, 5.0, "a power usage effectiveness: at least 1 (no overhead); 5 is beyond any datacenter"),
    "result_gb": Bound(0.0, 1e6, "size of a job's result (its trained model): 1 PB is beyond any"),
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
    pue = params.get("pue")
    if isinstance(pue, list | tuple | np.ndarray):  # one PUE per site (Table I's eta_n): each checked
        if len(pue) == 0:
            raise RewardConfigError("component 'masac_utility': pue must be a number, None or one number per site, "
                                    "got an empty sequence")
        for v in pue:
            check_params("masac_utility", {"pue": v}, MASAC_RANGES)
        params = {**params, "pue": tuple(float(v) for v in pue)}
        rest = {k: v for k, v in params.items() if k != "pue"}
        return {**check_params("masac_utility", rest, MASAC_RANGES), "pue": params["pue"]}
    return check_params("masac_utility", params, MASAC_RANGES)


def _ratio(num, den):
    """num / den elementwise, 0 where den is 0 (a site that drew no energy has no price or intensity to read)."""
    num, den = np.asarray(num, dtype=np.float64), np.asarray(den, dtype=np.float64)
    return np.divide(num, den, out=np.zeros(np.broadcast(num, den).shape), where=den != 0.0)


def masac_site_terms(busy_gpus, idle_gpus, it_kwh, total_kwh, cost_usd, carbon_kg,
                     revenue_usd_per_gpu_h: float, carbon_usd_per_t: float, idle_power_ratio: float,
                     gpu_kw: float, pue) -> dict[str, np.ndarray]:
    """The per-site terms of the paper's Eqs. 2-4 for one step (USD, arrays over the sites), with the site's
    price P_n = cost / energy and carbon intensity I_n = emissions / energy of the step (the engine's own
    signals: it computes cost and emissions as energy x signal), eta_n = ``pue`` (a number, or one per site) or
    the step's total / IT energy::

        revenue     = alpha x busy GPU-h                              (U1, revenue)
        energy_cost = eta rho P x busy GPU-h                          (U1, energy of the busy GPUs)
        idle_cost   = eta beta rho P x idle GPU-h                     (U2)
        carbon_cost = mu eta rho ((1 - beta) busy + beta installed) GPU-h x I  (U3)
    """
    h = STEP_HOURS
    busy, idle = np.asarray(busy_gpus, dtype=np.float64), np.asarray(idle_gpus, dtype=np.float64)
    eta = _ratio(total_kwh, it_kwh) if pue is None else np.broadcast_to(np.asarray(pue, dtype=np.float64), busy.shape)
    eta = np.where(np.asarray(it_kwh) > 0.0, eta, 1.0) if pue is None else eta
    price = _ratio(cost_usd, total_kwh)  # USD/kWh
    kg_per_kwh = _ratio(carbon_kg, total_kwh)
    beta = idle_power_ratio
    return {"revenue": revenue_usd_per_gpu_h * busy * h,
            "energy_cost": eta * gpu_kw * price * busy * h,
            "idle_cost": eta * beta * gpu_kw * idle * price * h,
            "carbon_cost": carbon_usd_per_t * eta * gpu_kw * (busy + beta * idle) * h * kg_per_kwh / 1000.0}


def masac_transfer_terms(transfer_cost_usd, transfer_carbon_kg, transfer_gb, transfers,
                         carbon_usd_per_t: float, result_gb: float, migration_usd_per_gb: float | None,
                         include_transfer_carbon: bool) -> dict[str, Any]:
    """The paper's Eqs. 5-6 for the remote assignments decided in one step (USD; scalars or arrays)::

        migration_cost = c(s + s') + mu o(s + s')       (U4: egress USD, or GB x migration_usd_per_gb,
                                                        + mu x transfer emissions when include_transfer_carbon)
        retrieval_cost = transfers x (c(s') + mu o(s')) (U5: result_gb per remote job, at the step's mean
                                                        USD and kg per GB of its transfers)

    U5 is charged when the job is sent, not when its result comes back (this engine has no return transfer).
    """
    usd = transfer_cost_usd if migration_usd_per_gb is None else migration_usd_per_gb * transfer_gb
    kg = transfer_carbon_kg if include_transfer_carbon else 0.0 * transfer_carbon_kg
    usd_per_gb = _ratio(transfer_cost_usd, transfer_gb) if migration_usd_per_gb is None else migration_usd_per_gb
    kg_per_gb = _ratio(kg, transfer_gb)
    retrieval = transfers * result_gb * (usd_per_gb + carbon_usd_per_t * kg_per_gb / 1000.0)
    return {"migration_cost": usd + carbon_usd_per_t * kg / 1000.0, "retrieval_cost": retrieval}


def masac_terms(o, revenue_usd_per_gpu_h: float = MASAC_DEFAULTS["revenue_usd_per_gpu_h"],
                carbon_usd_per_t: float = MASAC_DEFAULTS["carbon_usd_per_t"],
                idle_power_ratio: float = MASAC_DEFAULTS["idle_power_ratio"],
                gpu_kw: float = MASAC_DEFAULTS["gpu_kw"],
                pue: float | tuple | None = MASAC_DEFAULTS["pue"],
                result_gb: float = MASAC_DEFAULTS["result_gb"],
                migration_usd_per_gb: float | None = MASAC_DEFAULTS["migration_usd_per_gb"],
                include_transfer_carbon: bool = MASAC_DEFAULTS["include_transfer_carbon"]) -> dict[str, float]:
    """The MASAC system utility of one step and its terms (USD), the paper's Eq. 7a::

        utility = U1 - U2 - U3 - U4 - U5
                = (revenue - energy_cost) - idle_cost - carbon_cost - migration_cost - retrieval_cost

    (:func:`masac_site_terms` summed over the sites, :func:`masac_transfer_terms`). Defaults:
    :data:`MASAC_DEFAULTS` (the paper's Table I; see there).
    """
    site = masac_site_terms(o.per_dc("busy_gpus"), o.per_dc("idle_gpus"), o.per_dc("it_kwh"), o.per_dc("total_kwh"),
                            o.per_dc("cost_usd"), o.per_dc("carbon_kg"), revenue_usd_per_gpu_h, carbon_usd_per_t,
                            idle_power_ratio, gpu_kw, pue)
    out = {k: functools.reduce(operator.add, v.tolist(), 0.0) for k, v in site.items()}  # (in order: the jitted
    # vector environment sums the same way and must agree bit for bit)
    xfer = masac_transfer_terms(o["transfer_cost_usd"], o["transfer_carbon_kg"], o["transfer_gb"], o["transfers"],
                                carbon_usd_per_t, result_gb, migration_usd_per_gb, include_transfer_carbon)
    out.update({k: float(v) for k, v in xfer.items()})
    out["gpu_profit"] = out["revenue"] - out["energy_cost"]
    out["utility"] = (out["gpu_profit"] - out["idle_cost"] - out["carbon_cost"] - out["migration_cost"]
                      - out["retrieval_cost"])
    return out


@register_component("masac_utility", kind="benefit", unit="USD", norm=1.0, ranges=MASAC_RANGES)
def masac_utility(o, revenue_usd_per_gpu_h: float = MASAC_DEFAULTS["revenue_usd_per_gpu_h"],
                  carbon_usd_per_t: float = MASAC_DEFAULTS["carbon_usd_per_t"],
                  idle_power_ratio: float = MASAC_DEFAULTS["idle_power_ratio"],
                  gpu_kw: float = MASAC_DEFAULTS["gpu_kw"],
                  pue: float | tuple | None = MASAC_DEFAULTS["pue"],
                  result_gb: float = MASAC_DEFAULTS["result_gb"],
                  migration_usd_per_gb: float | None = MASAC_DEFAULTS["migration_usd_per_gb"],
                  include_transfer_carbon: bool = MASAC_DEFAULTS["include_transfer_carbon"]) -> float:
    """MASAC system utility (the paper's Eq. 7a): GPU profit - idle, carbon, migration and retrieval costs (USD)."""
    return masac_terms(o, revenue_usd_per_gpu_h, carbon_usd_per_t, idle_power_ratio, gpu_kw, pue, result_gb,
                       migration_usd_per_gb, include_transfer_carbon)["utility"]


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
           "unregister_component", "get_component", "masac_terms", "masac_site_terms", "masac_transfer_terms",
           "MASAC_DEFAULTS", "MASAC_RANGES", "DEFAULT_REWARD", "TERM_RANGES", "check_masac_params", "check_params",
           "USD_NORM", "KG_NORM", "default_reward_table"]
