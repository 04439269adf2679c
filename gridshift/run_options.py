"""Every run option of the simulator, declared once: name, type, default, valid range, unit, meaning, citation.

Everything else is generated from :data:`OPTIONS` (docs/architecture.md, "Extending gridshift"):

* the checks of ``sim_core.options`` (``Options``: each value validated by its declaration, nothing coerced);
* the flags of ``gridshift run``, ``compare`` and ``optimum`` (``gridshift_cli.run_flags``);
* the Dagster sweep's config (``dagster_project.assets.sweep.SweepConfig``);
* the options table of docs/simulation.md (``benchmarks.docs_tables``; a test checks the page).

This module imports neither Numba nor a kernel (``gridshift --help`` reads it). To add an option, append a
:class:`RunOption` to ``OPTIONS`` below and read ``options.<name>`` where the simulator uses it; a test or a
plug-in may :func:`declare` one at run time (and :func:`undeclare` it).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

from gridshift.battery_params import BatteryParams
from gridshift.bounds import Bound
from gridshift.declarations import Declarations
from gridshift.origin import ACTIVITY_OFF, ACTIVITY_ON, BUSINESS_END_H, BUSINESS_START_H

#: the kinds of option: a flag, an integer, a real number, one of named choices, free text, a parameter set
BOOL, INT, FLOAT, CHOICE, TEXT, PARAMS = "bool", "int", "float", "choice", "text", "params"
KINDS = (BOOL, INT, FLOAT, CHOICE, TEXT, PARAMS)
#: the commands that take run options as flags
COMMANDS = ("run", "compare", "optimum")
#: largest integer any option may take (fits every kernel integer, including int32 counters)
MAX_INT_OPTION = 2**31 - 1


@dataclass(frozen=True)
class RunOption:
    """One run option.

    ``kind`` is one of :data:`KINDS`. ``bound`` is the valid range of an ``INT`` or ``FLOAT`` (with its reason;
    refused outside, never clipped); ``choices`` the values of a ``CHOICE``; ``presets`` names that a ``FLOAT``
    also takes (each stands for its value; the default may be one); ``multiple_of`` a step an ``INT`` must be a
    multiple of; ``nullable``: ``None`` is allowed (``TEXT``); ``per_task``: the Python API also takes one value
    per bundle task (a 1-D array; never a flag). ``commands`` are the CLI commands that show it as a flag
    (``flag``: its flag declaration, default ``--name`` or, for a ``BOOL``, ``--name/--no-name``), ``sweep``
    whether the Dagster sweep's config has it. ``citation`` says where the default (and range) come from.

    A ``PARAMS`` option is a set of named parameters declared by its own class ``params`` (a frozen dataclass with
    ``from_value(mapping or instance)``, which checks every field against its range, and ``to_dict()``; e.g.
    ``gridshift.battery_params.BatteryParams``); its default is ``None``, the feature off. ``requires`` names
    the ``PARAMS`` option without which this one has no effect. An option that is off (a ``PARAMS`` left ``None``,
    or one whose ``requires`` is) is left out of a run's options and run key, so declaring a new feature keeps
    every stored run's key."""

    name: str
    kind: str
    default: Any
    doc: str
    citation: str
    unit: str = ""
    bound: Bound | None = None
    choices: tuple[str, ...] = ()
    presets: Mapping[str, float] = field(default_factory=dict)
    multiple_of: int | None = None
    nullable: bool = False
    per_task: bool = False
    flag: str = ""
    commands: tuple[str, ...] = COMMANDS
    sweep: bool = True
    params: Any = None
    requires: str = ""

    def __post_init__(self) -> None:
        def bad(why: str) -> ValueError:
            return ValueError(f"run option {self.name!r}: {why}")

        if not self.name.isidentifier() or self.name != self.name.lower():
            raise bad("a name is a lower-case Python identifier")
        if self.kind not in KINDS:
            raise bad(f"kind {self.kind!r} is not one of {KINDS}")
        if (self.bound is not None) != (self.kind in (INT, FLOAT)):
            raise bad("an int or float option has a bound (its valid range), no other kind has one")
        if bool(self.choices) != (self.kind == CHOICE):
            raise bad("a choice option lists its choices, no other kind does")
        if (self.params is not None) != (self.kind == PARAMS) or (self.kind == PARAMS and self.default is not None):
            raise bad("a params option names its parameter class and defaults to None (off); no other kind has one")
        if (self.presets and self.kind != FLOAT) or (self.multiple_of and self.kind != INT):
            raise bad("presets belong to a float option, multiple_of to an int option")
        if set(self.commands) - set(COMMANDS):
            raise bad(f"commands must be among {COMMANDS}")
        if not (self.doc and self.citation):
            raise bad("an option has a doc and a citation")
        if not self.admits(self.default):
            raise bad(f"its default {self.default!r} is not a valid value")

    def admits(self, v: Any) -> bool:
        """Whether ``v`` is a valid scalar value (the checks of ``sim_core.options`` also name the reason)."""
        if v is None:
            return self.nullable or self.kind == PARAMS
        if self.kind == PARAMS:
            return isinstance(v, Mapping | self.params)
        if self.kind == BOOL:
            return isinstance(v, bool)
        if self.kind == CHOICE:
            return v in self.choices
        if self.kind == TEXT:
            return isinstance(v, str)
        if self.kind == FLOAT and isinstance(v, str):
            return v in self.presets
        if isinstance(v, bool) or not isinstance(v, int | float) or (self.kind == INT and not isinstance(v, int)):
            return False
        assert self.bound is not None
        return self.bound.admits(v) and not (self.multiple_of and v % self.multiple_of)

    @property
    def cli_flag(self) -> str:
        dashed = self.name.replace("_", "-")
        return self.flag or (f"--{dashed}/--no-{dashed}" if self.kind == BOOL else f"--{dashed}")

    def describe_valid(self, *, api: bool = True) -> str:
        """The valid values in words (the docs table; ``api=False``: the flags' help, without what only the Python
        API takes)."""
        if self.kind == BOOL:
            return "True or False"
        if self.kind == PARAMS:
            names = ", ".join(f"`{f}`" for f in self.params.__dataclass_fields__)
            how = "a mapping of" if api else "name=value pairs, comma-separated, of"
            return f"`None` (off) or {how} {names} (each in its range)"
        if self.kind == CHOICE:
            return " or ".join(f'`"{c}"`' for c in self.choices)
        if self.kind == TEXT:
            return "`None` or a string" if self.nullable else "a string"
        assert self.bound is not None
        b = self.bound
        if self.kind == INT:
            hi = "2³¹ − 1" if b.high == MAX_INT_OPTION else f"{b.high:g}"
            rng = f"integer in {b.low:g}..{hi}" + (f", a multiple of {self.multiple_of}" if self.multiple_of else "")
        else:
            rng = f"finite number in {b.describe()}"
        if self.presets:
            rng += ", or " + ", ".join(f'`"{k}"` (= {v:g})' for k, v in self.presets.items())
        if self.per_task and api:
            rng += "; or a 1-D array of them, one per bundle task (Python API)"
        return rng


# ------------------------------------------------------------------------------------------ values cited once
#: Network energy per GB moved to another region (kWh/GB), by name; ``transfer_kwh_per_gb`` takes a number or
#: one of these names. Source of both Aslan figures: Aslan, Mayers, Koomey & France, "Electricity Intensity of
#: Internet Data Transmission: Untangling the Estimates", J. Industrial Ecology 22(4), 785-798 (2018), abstract:
#: "a new estimate of 0.06 kWh/GB for 2015" for core and fixed-line access networks (an average, attributional
#: figure: the networks' energy divided by their traffic), whose intensity "has decreased by half approximately
#: every 2 years since 2000 (for developed countries)".
#:
#: * ``"aslan2018-2023"`` (the default): that trend carried to 2023, the year of the bundles' signals:
#:   0.06 x 0.5^((2023 - 2015) / 2) = 0.00375 kWh/GB (our arithmetic on the abstract's two figures). No later
#:   peer-reviewed kWh/GB for core + fixed access was found; the later literature argues that a marginal figure is
#:   lower still: Mytton, Lundén & Malmodin, "Network energy use not directly proportional to data volume: The
#:   power model approach for more reliable network energy consumption calculations", J. Industrial Ecology
#:   28(4), 966-980 (2024), doi:10.1111/jiec.13512: network power is mostly a baseload that does not follow the
#:   data volume, so an average kWh/GB overstates what one more transfer adds. The default is therefore an upper
#:   figure for the consequence of moving a task, ``"none"`` the lower bound.
#: * ``"aslan2018-2015"``: 0.06, the 2015 figure, the spec's (docs/model.md §3) and SustainCluster's value
#:   (simulation/cluster_manager.py, "Extracted from https://onlinelibrary.wiley.com/doi/10.1111/jiec.12630"):
#:   for comparisons with results of that setup.
#: * ``"none"``: 0, a transfer adds no network energy (the power-model view's bound for a provisioned backbone).
TRANSFER_KWH_PER_GB_PRESETS: dict[str, float] = {
    "aslan2018-2023": 0.06 * 0.5 ** ((2023 - 2015) / 2),
    "aslan2018-2015": 0.06,
    "none": 0.0,
}
DEFAULT_TRANSFER_PRESET = "aslan2018-2023"
#: forecast models (``sim_core.forecast.MODELS`` gives each its engine code): what a policy may know of the future
FORECAST_MODELS = ("calibrated", "persistence", "seasonal_naive", "seasonal_naive_weekly", "oracle")
_FORECAST_CITE = ("docs/simulation.md \"Information\": the default model adds the published day-ahead forecast "
                  "skill of each signal (gridshift.forecast_data) to the actual values")
_ISSUE_CITE = ("Electricity Maps, the source of the bundles' carbon signal: \"All endpoints return data with a "
               "resolution of 1 hour\" (API documentation, static.electricitymap.org/api/docs/), its forecast "
               "covering \"the next 24 hours\"; 15 min (every step) and a day (a day-ahead issue) are the options' "
               "ends")
_SPEC = "the project's specification, docs/model.md"
#: users of the Alibaba PAI 2020 trace, the default tenants of the ``trace_groups`` catalogue (sim_core.locality):
#: "a mix of training and inference jobs submitted by over 1,300 users" (the two-month trace of Weng et al., "MLaaS
#: in the Wild: Workload Analysis and Scheduling in Large-Scale Heterogeneous GPU Clusters", NSDI 2022, as its
#: authors' project page states it: cse.hkust.edu.hk/pg/research/projects/weiwa/mlaas; the trace's ``user`` column
#: of pai_job_table). "Over": a lower bound, taken as the count. How tasks split among users is published only as a
#: CDF plot (the trace's analysis notebook, alibaba/clusterdata cluster-trace-gpu-v2020/analysis/analysis.ipynb,
#: "Figure 2": tasks per user from 1 to about 3e5): tasks are split evenly, an assumption the sensitivity page varies.
PAI_2020_USERS = 1300
#: the ``catalogue`` presets (who shares a dataset under data locality; sim_core.locality)
CATALOGUES = ("public", "trace_groups")
#: the battery rules' names (``sim_core.policies.registry.BATTERY_RULES`` declares them; a test keeps these equal)
BATTERY_RULE_NAMES = ("carbon_quantile", "price_quantile", "idle")

OPTIONS: tuple[RunOption, ...] = (
    RunOption("single_action", BOOL, False, "one action applies to every pending task (the single-action mode of "
              "a Python policy or RL agent)", f"{_SPEC} §3 (a single-action mode is an option)", commands=(),
              sweep=False),
    RunOption("allow_defer", BOOL, True, "a policy may defer a task (action 0); False: every pending task is "
              "assigned in its arrival step", f"{_SPEC} §3 (a no-defer mode is an option)",
              flag="--allow-defer/--no-defer"),
    RunOption("sla_multiplier", FLOAT, 1.5, "deadline = arrival + max(multiplier x duration, allowed delay + "
              "duration); a task finishing after it is late (sim_core.sla)", f"{_SPEC} §3 "
              "(default 1.5; per-task multipliers allowed)", unit="x duration",
              bound=Bound(0.0, 1e6, "deadline = arrival + max(multiplier x duration, allowed delay + duration): > 0; "
                                    "a million durations is beyond any run", low_inclusive=False), per_task=True),
    RunOption("carbon_basis", TEXT, None, "the carbon accounting basis the run expects; must match the bundle's "
              "(None: the bundle's own)", "docs/bundle_format.md (the manifest's carbon basis)", nullable=True),
    RunOption("transfer_emissions", CHOICE, "origin", "whose carbon intensity prices a transfer's network energy: "
              "the origin's, or the mean of origin and destination", f"{_SPEC} §3 (\"an option uses the mean of "
              "origin and destination\")", choices=("origin", "mean")),
    RunOption("transfer_kwh_per_gb", FLOAT, DEFAULT_TRANSFER_PRESET, "network energy per GB moved to another "
              "region (a number, or a preset name)", "Aslan et al., J. Industrial Ecology 22(4) 2018, abstract: "
              "0.06 kWh/GB in 2015, halving every ~2 years (gridshift.run_options.TRANSFER_KWH_PER_GB_PRESETS)",
              unit="kWh/GB",
              bound=Bound(0.0, 100.0, "network energy per GB: 0.06 kWh/GB for 2015, halving every ~2 years since "
                                      "2000 (Aslan et al. 2018), i.e. ~11 kWh/GB back in 2000 (our arithmetic); 100 "
                                      "is beyond any year"), presets=TRANSFER_KWH_PER_GB_PRESETS),
    RunOption("business_start_h", INT, BUSINESS_START_H, "local hour business activity starts (task origins)",
              f"{_SPEC} §2 (business hours [08:00, 20:00))", unit="h",
              bound=Bound(0, 24, "an hour of the day"), commands=(), sweep=False),
    RunOption("business_end_h", INT, BUSINESS_END_H, "local hour business activity ends (task origins)",
              f"{_SPEC} §2 (business hours [08:00, 20:00))", unit="h",
              bound=Bound(0, 24, "an hour of the day"), commands=(), sweep=False),
    RunOption("activity_on", FLOAT, ACTIVITY_ON, "relative weight of task origins in business hours",
              f"{_SPEC} §2 (activity 1.0 in business hours)",
              bound=Bound(0.0, 1e6, "a relative weight of task origins (only ratios matter; >= 0)"), commands=(),
              sweep=False),
    RunOption("activity_off", FLOAT, ACTIVITY_OFF, "relative weight of task origins outside business hours",
              f"{_SPEC} §2 (0.3 otherwise)",
              bound=Bound(0.0, 1e6, "a relative weight of task origins (only ratios matter; >= 0)"), commands=(),
              sweep=False),
    RunOption("defer_quantile", FLOAT, 0.3, "defer_to_greener defers while the origin's carbon is above this "
              "quantile of its forecast window", "docs/baselines.md (defer_to_greener: quantile 0.3)",
              bound=Bound(0.0, 1.0, "a quantile"), commands=(), sweep=False),
    RunOption("defer_window_steps", INT, 96, "defer_to_greener's forecast window (a window past the bundle end is "
              "clipped there)", "docs/baselines.md (defer_to_greener: 96 steps, 24 h)", unit="steps",
              bound=Bound(1, MAX_INT_OPTION, "at least one step; fits a kernel integer"), commands=(), sweep=False),
    RunOption("power", CHOICE, "managed", "server power: managed (idle servers beyond a spare pool switched off, "
              "woken with a latency) or always_on (every server on: the reference cluster's model)",
              "docs/model.md §4a (server power states)", choices=("managed", "always_on")),
    RunOption("workload", CHOICE, "weeks", "the workload realisation: weeks (the seed also draws which trace "
              "weeks fill the year) or origins (the bundle's tasks as they are; the seed draws only origins)",
              "docs/simulation.md (sim_core.realisation)", choices=("weeks", "origins"),
              flag="--realisation"),  # (export's --workload names the trace)
    RunOption("forecast", CHOICE, "calibrated", "what policies are told of the future: calibrated (actual + "
              "published day-ahead error), persistence, seasonal_naive, seasonal_naive_weekly, or oracle (perfect "
              "foresight)", _FORECAST_CITE, choices=FORECAST_MODELS, commands=("run", "compare")),
    RunOption("forecast_horizon_h", INT, 24, "forecast horizon", "Electricity Maps' forecast covers \"the next 24 "
              "hours\" (at least a day ahead, at most two weeks: its cost per issue grows with it)", unit="h",
              bound=Bound(24, 336, "at least a day ahead, at most two weeks"), commands=("run", "compare")),
    RunOption("forecast_issue_every_min", INT, 60, "minutes between forecast issues: policies see the latest "
              "issued forecast between issues", _ISSUE_CITE, unit="min",
              bound=Bound(15, 1440, "a step to a day"), multiple_of=15, commands=("run", "compare")),
    RunOption("drain", BOOL, True, "arrivals stop at the window's end and the run goes on until every task "
              "that arrived has finished (or the cap, the rest charged); False: stop at the window's end",
              "docs/simulation.md \"How a run ends\" (equal work for every policy)"),
    RunOption("locality", BOOL, True, "data locality: a task's shared dataset moves only to a site holding no "
              "replica of it (False: every move ships the dataset)", "docs/simulation.md \"Data locality\""),
    RunOption("locality_retention_days", FLOAT, 30.0, "days a site keeps a dataset replica after its last use "
              "(0: only tasks decided at the same instant share it)", "AWS S3 Intelligent-Tiering moves an object "
              "not accessed for 30 consecutive days out of its frequent-access tier (S3 user guide)", unit="days",
              bound=Bound(0.0, 3660.0, "how long a site keeps a dataset replica after its last use: >= 0 days (0: "
                                       "only tasks decided at the same instant share it), at most ten years")),
    RunOption("catalogue", CHOICE, "public", "who shares a dataset under data locality: public (one copy of each "
              "of the nine public catalogue datasets, held wherever a task reads it) or trace_groups (each of the "
              "trace's tenants, homed at one site, reads its own copy: a job group per tenant and dataset)",
              "docs/simulation.md \"Data locality\" (sim_core.locality; tenants: the PAI 2020 trace's users, Weng et "
              "al., NSDI 2022)", choices=CATALOGUES),
    RunOption("catalogue_tenants", INT, PAI_2020_USERS, "tenants of the trace_groups catalogue, split evenly among "
              "the sites (ignored by public)", "the PAI 2020 trace's jobs were \"submitted by over 1,300 users\" "
              "(Weng et al., \"MLaaS in the Wild\", NSDI 2022, project page; gridshift.run_options.PAI_2020_USERS)",
              unit="tenants",
              bound=Bound(1, 1_000_000, "at least one tenant; a million is beyond any trace's users")),
    RunOption("drain_max_days", FLOAT, 7.0, "the cap on draining past the window's end (also the bundle's end); "
              "the work left there is charged at the run's own rates", "docs/simulation.md \"How a run ends\" "
              "(a week past the window)", unit="days",
              bound=Bound(0.0, 366.0, "the longest a run drains past its window (docs/simulation.md \"How a run "
                                      "ends\"): >= 0 days, at most a year")),
    RunOption("battery", PARAMS, None, "battery storage at every site (sim_core.battery): None = none; else its "
              "parameters (a field left out takes its cited default): grid energy = facility energy + charge - "
              "discharge", "gridshift.battery_params.BatteryParams (each default's source in its docstring: NREL "
              "ATB 2020 round trip 0.85, a 4-hour device, ...)", params=BatteryParams),
    RunOption("battery_policy", CHOICE, "carbon_quantile", "the rule that sets each battery's charge / discharge "
              "target where a Python policy sets none", "sim_core.policies.registry.BATTERY_RULES (adapted from "
              "SustainDC's rule-based battery controller, HewlettPackard/dc-rl)",
              choices=BATTERY_RULE_NAMES, requires="battery"),
)

#: every run option, in declaration order (those declared at run time by a test or a plug-in last)
_TABLE: Declarations[RunOption] = Declarations("run option", OPTIONS)
#: add an option at run time: checked, shown as flags, configurable in the sweep and listed in the docs table like
#: those above (refused if the name is taken)
declare = _TABLE.declare
#: remove an option added by :func:`declare` (the built-in ones stay)
undeclare = _TABLE.undeclare
declared = _TABLE.declared
get = _TABLE.get


def defaults() -> dict[str, Any]:
    """Every option's default (a preset as its name)."""
    return {o.name: o.default for o in declared()}


def for_command(command: str) -> Iterator[RunOption]:
    """The options a CLI command takes as flags."""
    return (o for o in declared() if command in o.commands)


def from_text(option: RunOption, raw: str | None) -> Any:
    """A flag's or config's text value as the option takes it: a number or, failing that, a preset name (a
    ``FLOAT`` with presets: the CLI and the sweep config take it as text). Nothing is checked here: the run's
    own checks refuse a bad value, naming it and its range."""
    if option.kind == PARAMS and isinstance(raw, str):
        return params_from_text(option, raw)
    if raw is None or option.kind != FLOAT or not option.presets or not isinstance(raw, str):
        return raw
    try:
        return float(raw)
    except ValueError:
        return raw


def params_from_text(option: RunOption, raw: str) -> dict[str, Any] | None:
    """A ``PARAMS`` flag's or config's text, ``name=value,name=value``, as a mapping (each value a number where it
    reads as one); empty text is ``None`` (off). Names and values are checked by the option's parameter class."""
    if not raw.strip():
        return None
    out: dict[str, Any] = {}
    for item in raw.split(","):
        name, eq, value = item.partition("=")
        if not eq or not name.strip():
            raise ValueError(f"--{option.name.replace('_', '-')}: {item.strip()!r} is not name=value (e.g. "
                             f"{next(iter(option.params.__dataclass_fields__))}=100)")
        try:
            out[name.strip()] = float(value)
        except ValueError:
            out[name.strip()] = value.strip()
    return out


def is_off(option: RunOption, values: Mapping[str, Any]) -> bool:
    """Whether ``option`` has no effect with these option values (a ``PARAMS`` left ``None``, or one whose
    ``requires`` is): such an option is left out of a run's options and run key."""
    if option.kind == PARAMS:
        return values.get(option.name) is None
    return bool(option.requires) and values.get(option.requires) is None
