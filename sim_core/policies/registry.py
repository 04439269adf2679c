"""The one table of the built-in policies: each one's name, kernel module, parameters (with their defaults),
citation and description; the registry assigns each its code (:func:`code_of`). Pure Python (no Numba, no
NumPy): the command lines' help, the benchmarks and the docs table (docs/baselines.md) are built from it
without compiling or importing a kernel.

A policy is one kernel module (``sim_core/policies/<family>.py``, docs/adding_a_policy.md) whose jitted
``run(T, S, C, info, P, code, j_end)`` runs steps ``S.sc[SC_STEP] .. j_end - 1`` (``P``: the state its
``new_state`` made, a stateful policy's own structure; None for a rule) and one entry here. The module reads
its codes and parameter defaults from this table (module-level ints and floats, frozen into its kernels when
they compile), so each is declared once: only its own policies' (``sim_core.engine.cache`` recompiles a module
when they change, not when another policy's entry does). Policies defined outside this package (an
example, a test, a user's project) join through :func:`register`.
"""

from __future__ import annotations

import difflib
import hashlib
import importlib
from dataclasses import dataclass, field

from gridshift.declarations import Declarations


@dataclass(frozen=True)
class Param:
    """A parameter of a policy: ``option`` names the run option that sets it (``sim_core.options``); a
    parameter without one is a constant of the policy's kernel, its default taken from the cited source."""

    name: str
    default: float | int
    unit: str
    description: str
    option: str | None = None


def code_of(name: str) -> int:
    """The code the registry assigns to policy ``name``: the first 31 bits of the sha256 of the name. It depends
    on the name alone, so it is the same in every process and never changes when another policy is added,
    removed or reordered (nor do the kernels that freeze it, ``sim_core.engine.cache``); results store the
    name, never the code. :func:`register` refuses a name whose code another policy's already is."""
    return int.from_bytes(hashlib.sha256(name.encode()).digest()[:4], "big") & 0x7FFFFFFF


@dataclass(frozen=True)
class PolicySpec:
    """One policy. ``module``: the dotted name of the kernel module (its jitted ``run``); ``kind``: ``rule``
    (stateless, decides only the pending tasks) or ``baseline`` (a published method: keeps its own state
    across steps, made by its module's ``new_state``, and may pause, resume and rescale flexible tasks).
    :attr:`code`, the integer its kernel module branches on, is the registry's (:func:`code_of`)."""

    name: str
    module: str
    kind: str
    description: str
    citation: str = ""
    params: tuple[Param, ...] = field(default=())
    #: the parameter giving the days of past jobs (before the run's start) the policy learns from; "" for none
    past_param: str = ""

    @property
    def code(self) -> int:
        """The integer the kernel module branches on: :func:`code_of` the name."""
        return code_of(self.name)

    def past_days(self) -> float:
        """Days of job history before the run's start the policy's state receives (``past`` of its module's
        ``new_state``); 0 for none."""
        return float(self.defaults()[self.past_param]) if self.past_param else 0.0

    @property
    def stateful(self) -> bool:
        """Keeps a plan between steps and controls flexible tasks (runs whole, never one step at a time)."""
        return self.kind == "baseline"

    def defaults(self) -> dict[str, float | int]:
        """Parameter name -> default."""
        return {p.name: p.default for p in self.params}

    def kernel(self):
        """The module's jitted ``run`` (imports the kernel module; compiles nothing)."""
        return importlib.import_module(self.module).run

    def new_state(self, n_tasks: int, n_dc: int, n_steps: int, horizon_steps: int, past):
        """A new run's state of a stateful policy (its module's ``new_state``, the one structure its kernels
        keep between steps; ``past``: the tasks of :meth:`past_days`, ``engine.Tasks``); None for a rule."""
        if not self.stateful:
            return None
        return importlib.import_module(self.module).new_state(n_tasks, n_dc, n_steps, horizon_steps, past)


_RULES = "sim_core.policies.rules"
_WA = ("Wiesner et al., \"Let's Wait Awhile: How Temporal Workload Shifting Can Reduce Carbon Emissions in the "
       "Cloud\", Middleware 2021; artifact dos-group/lets-wait-awhile")
_GAIA = ("Hanafy et al., \"Going Green for Less Green: Optimizing the Cost of Reducing Cloud Carbon Emissions\" "
         "(GAIA), ASPLOS 2024; artifact umassos/GAIA")
_CS = "Hanafy et al., \"CarbonScaler\", SIGMETRICS 2024 (POMACS 7(3)); artifact umassos/CarbonScaler"
_VCC = ("Radovanović et al., \"Carbon-Aware Computing for Datacenters\", IEEE Trans. Power Systems 38(2), "
        "2023")
_CF = "Hanafy, Wu, Irwin, Shenoy, \"CarbonFlex\", arXiv:2505.18357 (2025)"
_WA_THR = (_WA + "; the threshold rule as CarbonFlex (Hanafy et al., arXiv:2505.18357) §1 and §6.1 describe and ran "
           "it")
_ROOM = ("; capacity-aware: gridshift's variant for the limit CarbonFlex (arXiv:2505.18357) §2.2 points out in "
         "per-job plans (blind to the cluster's capacity, they crowd the low-carbon periods; GAIA, ASPLOS 2024)")
_SLOT = Param("slot_steps", 4, "steps", "one-hour slots of the plan (hourly carbon intensity in the papers)")
_GAIA_PARAMS = (
    Param("short_s", 7200.0, "s", "jobs shorter than this join the short queue (artifact src/task.py TwoQueues)"),
    Param("wait_short_s", 6.0 * 3600.0, "s", "waiting time of the short queue (artifact default -w 6x24)"),
    Param("wait_long_s", 24.0 * 3600.0, "s", "waiting time of the long queue (artifact default -w 6x24)"),
    Param("grid_steps", 4, "steps", "start times considered: every hour of the wait "
          "(artifact carbon_waiting_policy.py)"),
)
#: CarbonFlex's learning phase (both variants): the window its oracle replays and the job history it replays
_CF_PARAMS = (
    _SLOT, Param("window_days", 7, "days", "past window T the oracle replays (§4.2: a week)"),
    Param("history_days", 49, "days", "job history whose week-long windows the oracle replays, one ending at each "
          "day (§6: the first 7 weeks of the Alibaba trace for learning, the 8th for evaluation; §6.1: the "
          "historical trace replayed with different start times)"),
)

BUILTIN: tuple[PolicySpec, ...] = (
    PolicySpec("local_only", _RULES, "rule", "every task at its origin"),
    PolicySpec("round_robin", _RULES, "rule", "the next datacenter with room, in turn"),
    PolicySpec("most_available", _RULES, "rule", "the datacenter with the most free cores"),
    PolicySpec("least_pending", _RULES, "rule", "the datacenter with the fewest tasks queued or in transit"),
    PolicySpec("lowest_carbon", _RULES, "rule", "the datacenter with room of lowest carbon intensity now"),
    PolicySpec("lowest_price", _RULES, "rule", "the datacenter with room of lowest electricity price now"),
    PolicySpec("lowest_utilization", _RULES, "rule", "the datacenter with room of lowest committed fraction"),
    PolicySpec("random", _RULES, "rule", "a datacenter with room, uniformly (the run's seeded uniforms)"),
    PolicySpec("defer_to_greener", _RULES, "rule",
               "defer while the origin's carbon is above a quantile of its forecast window and the deadline "
               "allows; else the greenest datacenter with room that meets the deadline",
               params=(Param("defer_quantile", 0.3, "", "quantile of the window's carbon intensity",
                             option="defer_quantile"),
                       Param("defer_window_steps", 96, "steps", "window: now and the forecast's next steps",
                             option="defer_window_steps"))),
    PolicySpec("wait_awhile", "sim_core.policies.wait_awhile", "baseline",
               "start each delay-tolerant task in the lowest-carbon contiguous window within its allowed delay",
               _WA),
    PolicySpec("wait_awhile_interrupting", "sim_core.policies.wait_awhile", "baseline",
               "run an interruptible task in the lowest-carbon steps before its deadline, paused otherwise", _WA),
    PolicySpec("gaia_lowest_carbon_window", "sim_core.policies.gaia", "baseline",
               "start at the hour (within the queue's wait) of least carbon for a job of the queue's mean length",
               _GAIA, _GAIA_PARAMS),
    PolicySpec("gaia_carbon_time", "sim_core.policies.gaia", "baseline",
               "start at the hour that saves the most carbon per unit of completion time", _GAIA, _GAIA_PARAMS),
    PolicySpec("gaia_res_first", "sim_core.policies.gaia", "baseline",
               "Carbon-Time, but a waiting job starts at once on free reserved capacity (cost-aware)", _GAIA,
               _GAIA_PARAMS),
    PolicySpec("carbonscaler", "sim_core.policies.carbonscaler", "baseline",
               "scale elastic tasks by marginal throughput per unit of carbon (greedy over the forecast), done by "
               "the deadline", _CS, (_SLOT,)),
    PolicySpec("vcc", "sim_core.policies.vcc", "baseline",
               "a daily virtual capacity curve per site from the day-ahead carbon forecast caps the flexible load "
               "per hour", _VCC,
               (_SLOT, Param("history_days", 7, "days", "the daily flexible demand forecast is the largest of "
                             "this many past days (our stand-in for the paper's risk-aware quantile forecast)"))),
    PolicySpec("carbonflex", "sim_core.policies.carbonflex", "baseline",
               "each day replays its oracle (Algorithm 1) over the past week; each hour provisions each site's "
               "servers as the k nearest past states' oracle did, and scales jobs by marginal throughput above "
               "the learned threshold rho (Algorithm 3)", _CF,
               _CF_PARAMS + (Param("k", 5, "", "nearest past states whose provisioning and rho are averaged (§5: "
                                   "k = 5, Euclidean distance)"),), past_param="history_days"),
    PolicySpec("carbonflex_scaled", "sim_core.policies.carbonflex", "baseline",
               "CarbonFlex with its k-NN over standardised state features (each feature's distance in standard "
               "deviations of the knowledge base; the paper names Euclidean distance and no scaling)", _CF,
               _CF_PARAMS + (Param("k", 5, "", "nearest past states whose provisioning and rho are averaged (§5: "
                                   "k = 5, Euclidean distance over standardised features)"),),
               past_param="history_days"),
    PolicySpec("wait_awhile_threshold", "sim_core.policies.wait_awhile", "baseline",
               "suspend-resume: a delay-tolerant task runs while its site's carbon is at most a quantile of the next "
               "24 h of forecast, waits (or is paused) above it, and runs to completion once its allowed delay is "
               "spent", _WA_THR,
               (Param("quantile", 0.3, "", "the threshold: this quantile of the forecast (CarbonFlex §6.1: the 30th "
                      "percentile)"),
                Param("window_steps", 96, "steps", "the forecast window: now and the next 24 h (CarbonFlex §6.1)"))),
    PolicySpec("wait_awhile_capacity", "sim_core.policies.wait_awhile", "baseline",
               "wait_awhile's lowest-carbon window, among the windows with room left at the site in the policy's "
               "own plan of the tasks it has started and planned (else at once)", _WA + _ROOM),
    PolicySpec("gaia_carbon_time_capacity", "sim_core.policies.gaia", "baseline",
               "gaia_carbon_time among the hourly starts with room left at the site in the policy's plan (jobs of "
               "the queue's mean length), else at once", _GAIA + _ROOM, _GAIA_PARAMS),
)

class _Policies(Declarations[PolicySpec]):
    """The declared policies: a name must be new, its code (:func:`code_of`) too, its kind a known one."""

    def declare(self, item: PolicySpec) -> PolicySpec:
        if not isinstance(item, PolicySpec):
            raise TypeError(f"register takes a PolicySpec, got {type(item).__name__}")
        if item.kind not in ("rule", "baseline"):
            raise ValueError(f"policy {item.name!r}: kind {item.kind!r} is neither 'rule' nor 'baseline'")
        clash = [s.name for s in self.declared() if s.code == item.code and s.name != item.name]
        if clash:
            raise ValueError(f"policy {item.name!r}: its code {item.code} is already that of {clash[0]!r} "
                             "(rename it)")
        return super().declare(item)


#: every policy, in declaration order: the built-in ones, then those :func:`register` added
_TABLE = _Policies("policy", BUILTIN)


def register(spec: PolicySpec) -> PolicySpec:
    """Add a policy to the table (for policies defined outside ``sim_core/policies``: an example, a test, a
    user's project). Its name must be new (its code is the registry's) and its kind ``rule`` or ``baseline``;
    returns ``spec``. The command lines list it (``gridshift_cli.make_app``) and ``sim_core.run`` runs it by name."""
    return _TABLE.declare(spec)


def unregister(name: str) -> PolicySpec:
    """Remove a policy added with :func:`register` (the built-in ones stay); returns its spec."""
    spec = _TABLE.find(name)
    if spec is None:
        raise KeyError(f"no registered policy {name!r}")
    _TABLE.undeclare(name)
    return spec


def names() -> tuple[str, ...]:
    """Every policy's name, in declaration order (the built-in ones first)."""
    return _TABLE.names()


def unknown(name: object) -> str:
    """What to tell a user who gave ``name``, no policy's name: the closest name (a misspelling), else every
    name. The one message of every place a policy name is parsed (``get``, runs, sweeps, the command line)."""
    close = difflib.get_close_matches(str(name), names(), n=1)
    if close:
        return f"unknown policy {name!r}: did you mean {close[0]!r}?"
    return f"unknown policy {name!r}; the policies: {', '.join(sorted(names()))}"


def get(name: str) -> PolicySpec:
    """The spec of policy ``name`` (KeyError with :func:`unknown`'s message otherwise)."""
    spec = _TABLE.find(name) if isinstance(name, str) else None
    if spec is None:
        raise KeyError(unknown(name))
    return spec


def by_code(code: int) -> PolicySpec:
    """The spec whose code is ``code``."""
    for s in _TABLE.declared():
        if s.code == code:
            return s
    raise KeyError(f"no policy has code {code}")


def code(name: str) -> int:
    """The code of policy ``name`` (what its kernel module branches on)."""
    return get(name).code


#: this file below ``sim_core`` (``sim_core.engine.cache`` counts it in a module's digest as :func:`frozen`)
TABLE_FILE = "policies/registry.py"


def frozen(module: str) -> bytes:
    """What the kernels of module ``module`` (a dotted name) freeze from this table: the codes and parameter
    defaults of the policies it runs (``PolicySpec.module`` is the module or a package holding it). A module
    reads only its own policies' (a test checks), so another policy's entry changes none of its kernels."""
    own = [s for s in _TABLE.declared() if module == s.module or module.startswith(s.module + ".")]
    return "".join(f"{s.name}={s.code}:" + ",".join(f"{p.name}={p.default!r}" for p in s.params) + ";\n"
                   for s in own).encode()


def param(name: str, param_name: str) -> float | int:
    """The default of parameter ``param_name`` of policy ``name`` (what its kernel module freezes)."""
    return get(name).defaults()[param_name]


def of_kind(kind: str) -> tuple[str, ...]:
    """The names of the policies of ``kind`` (``rule`` or ``baseline``), in declaration order."""
    return tuple(s.name for s in _TABLE.declared() if s.kind == kind)


def markdown_table() -> str:
    """The docs table (docs/baselines.md, "Every policy"): one row per policy."""
    rows = ["| name | kind | parameters (defaults) | source | rule in one line |",
            "|---|---|---|---|---|"]
    for s in _TABLE.declared():
        ps = ", ".join(f"`{p.name}` = {p.default:g}{' ' + p.unit if p.unit else ''}" for p in s.params) or "-"
        rows.append(f"| `{s.name}` | {s.kind} | {ps} | {s.citation or '-'} | {s.description} |")
    return "\n".join(rows) + "\n"


#: where the docs table lives (docs/baselines.md), between these markers
DOCS_START, DOCS_END = "<!-- policies:start -->", "<!-- policies:end -->"


def with_docs_table(text: str) -> str:
    """``text`` (docs/baselines.md) with the block between :data:`DOCS_START` and :data:`DOCS_END` replaced by
    :func:`markdown_table` (ValueError when a marker is missing)."""
    a, b = text.find(DOCS_START), text.find(DOCS_END)
    if a < 0 or b < a:
        raise ValueError(f"the docs page has no {DOCS_START} ... {DOCS_END} block")
    return text[:a + len(DOCS_START)] + "\n" + markdown_table() + text[b:]



# ---------------------------------------------------------------------------------------------- battery rules
@dataclass(frozen=True)
class BatteryRuleSpec:
    """A battery rule (``sim_core.policies.battery_rules``): each site's charge / discharge target per step from
    one grid signal (``carbon``, ``price``; None: always idle). Chosen with the run option ``battery_policy``,
    beside the task policy; a Python policy may set the targets itself (``Simulator.step(..., battery=...)``)."""

    name: str
    signal: str | None
    description: str
    citation: str = ""
    params: tuple[Param, ...] = field(default=())

    def defaults(self) -> dict[str, float | int]:
        return {p.name: p.default for p in self.params}


_SDC = ("Sarkar et al., \"SustainDC: Benchmarking for Sustainable Data Center Control\", NeurIPS 2024 Datasets and "
        "Benchmarks; artifact HewlettPackard/dc-rl, RBCBatteryAgent (charge when carbon intensity is low against "
        "its outlook, discharge when high); here against the site's past day, which a site knows without a "
        "forecast")
_QUANTILE_PARAMS = (
    Param("window_steps", 96, "steps", "the trailing window the step's value is ranked in: the past day"),
    Param("q_low", 0.25, "", "charge at full power at or below this quantile of the window (the day's greenest / "
          "cheapest quarter)"),
    Param("q_high", 0.75, "", "discharge at full power at or above this quantile (the day's dirtiest / dearest "
          "quarter)"),
)
BATTERY_RULES: tuple[BatteryRuleSpec, ...] = (
    BatteryRuleSpec("carbon_quantile", "carbon", "charge in the day's greenest hours, discharge in its dirtiest",
                    _SDC, _QUANTILE_PARAMS),
    BatteryRuleSpec("price_quantile", "price", "charge in the day's cheapest hours, discharge in its dearest",
                    _SDC, _QUANTILE_PARAMS),
    BatteryRuleSpec("idle", None, "never charge or discharge (the battery only where a Python policy sets it)"),
)
DEFAULT_BATTERY_RULE = "carbon_quantile"


def battery_rule(name: str) -> BatteryRuleSpec:
    """The battery rule ``name`` (KeyError naming the rules otherwise)."""
    for s in BATTERY_RULES:
        if s.name == name:
            return s
    raise KeyError(f"unknown battery rule {name!r}; the battery rules: {', '.join(s.name for s in BATTERY_RULES)}")
