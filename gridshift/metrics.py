"""Every metric of a benchmark run, declared once: name, unit, how it aggregates, range, meaning.

Everything else is generated from :data:`METRICS` (docs/architecture.md, "Extending gridshift"):

* the run contract's ranges and identities (``gridshift.run_contract``), so every run object's metrics are
  checked by their declaration;
* the metric columns of a run object (``gridshift.results``), of ``compare``'s ``runs.parquet`` and summary
  (``sim_core.bench``) and of the warehouse's long-format index (``benchmark_metrics``);
* the metrics table of docs/benchmarks.md (``benchmarks.docs_tables``; a test checks the page);
* a leaderboard's columns: :attr:`Metric.better` says which way is better, :attr:`Metric.aggregate` how
  values of several sites or steps combine (summed, a ratio of sums, a weighted mean).

A metric's value is the run's ``RunResult.totals[name]`` (``source="totals"``) or a utilisation mean of its
per-step frame (``source="steps"``, ``sim_core.bench.metrics.run_metrics``). To add one, append a
:class:`Metric` below (and have the simulator put the value in its totals); a test or a plug-in may
:func:`declare` one at run time (and :func:`undeclare` it). Stdlib only.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from gridshift.bounds import Bound
from gridshift.declarations import Declarations

#: how a metric combines over sites and steps: SUM adds (energy, mass, money, work); COUNT adds whole numbers;
#: RATIO is one sum over another (``of``: numerator, denominator), recomputed from the sums, never averaged;
#: MEAN is a weighted mean (over capacity, tasks or steps: the doc says which), recomputed from its parts
SUM, COUNT, RATIO, MEAN = "sum", "count", "ratio", "mean"
AGGREGATES = (SUM, COUNT, RATIO, MEAN)
#: which way is better on a leaderboard ("" for a metric that describes the run rather than ranks it)
LOWER, HIGHER = "lower", "higher"


@dataclass(frozen=True)
class Metric:
    """One metric. ``of``: for a RATIO its (numerator, denominator) metrics, for a SUM the metrics it is the
    sum of (an identity the run contract checks; empty when its terms are not all metrics); ``if_zero``: a
    RATIO's value when its denominator is 0 (None: undefined, any value or NaN); ``nan``: the value may be NaN
    (undefined); ``savings``: compare reports a saving vs the baseline policy (a resource where less is better)."""

    name: str
    unit: str
    aggregate: str
    doc: str
    bound: Bound
    of: tuple[str, ...] = ()
    if_zero: float | None = 0.0
    nan: bool = False
    savings: bool = False
    better: str = ""
    source: str = "totals"

    def __post_init__(self) -> None:
        def bad(why: str) -> ValueError:
            return ValueError(f"metric {self.name!r}: {why}")

        if not self.name.isidentifier() or self.name != self.name.lower():
            raise bad("a name is a lower-case Python identifier carrying its unit")
        if self.aggregate not in AGGREGATES:
            raise bad(f"aggregate {self.aggregate!r} is not one of {AGGREGATES}")
        if (self.aggregate == RATIO) != (len(self.of) == 2) or (self.of and self.aggregate not in (RATIO, SUM)):
            raise bad("a ratio names its numerator and denominator (of), a sum may name its terms, nothing else does")
        if self.better not in ("", LOWER, HIGHER) or self.source not in ("totals", "steps"):
            raise bad("better is '', 'lower' or 'higher'; source is 'totals' or 'steps'")
        if self.savings and self.better != LOWER:
            raise bad("a saving is reported only for a metric where lower is better")
        if not (self.unit and self.doc):
            raise bad("a metric has a unit and a doc")

    @property
    def description(self) -> str:  # (the name compare.json and the summary have always used)
        return self.doc


_KWH = Bound(0.0, 1e13, "an energy: 256 sites drawing 100 MW for a year are 2.2e11 kWh")
_KG = Bound(0.0, 1e14, "emissions: at most 5 kg/kWh of the largest energy")
_USD = Bound(-1e15, 1e15, "a cost: prices lie in -10..100 USD/kWh (gridshift.bounds), so -10..100 x the energy")
_COUNT = Bound(0.0, 1e12, "a whole count (tasks, steps): 20 M tasks per bundle at most (gridshift.limits)")
_FRAC = Bound(0.0, 1.0, "a fraction")
_HOURS = Bound(0.0, 1e15, "work done or left: 20 M tasks x 1e6 GPUs x 30 years bounds it")
_PER = Bound(0.0, 1e15, "a non-negative total per unit of work (0 when no such work was done)")
_RATIO_PUE = Bound(1.0, math.inf, "facility energy / IT energy: the facility includes IT (+inf: overhead without IT)")


def _util(r: str, busy: str, capacity: str) -> Metric:
    return Metric(f"mean_{r}_util_frac", "fraction", MEAN, f"busy {busy} / {capacity} capacity, capacity-weighted "
                  "over DCs and steps", _FRAC, nan=True, source="steps")


#: Every metric of a run, in output order. Names carry their unit; counts and fractions are dimensionless.
METRICS: tuple[Metric, ...] = (
    Metric("total_kwh", "kWh", SUM, "facility energy (IT + cooling + pumps), all DCs", _KWH, savings=True,
           better=LOWER),
    Metric("it_kwh", "kWh", SUM, "IT energy (CPU, GPU, memory, server fans), all DCs", _KWH, savings=True,
           better=LOWER),
    Metric("pue", "ratio", RATIO, "total_kwh / it_kwh", _RATIO_PUE, of=("total_kwh", "it_kwh"), if_zero=None,
           nan=True, better=LOWER),
    Metric("it_idle_kwh", "kWh", SUM, "IT energy of servers on but unused (the idle baseline)", _KWH, better=LOWER),
    Metric("it_sleep_kwh", "kWh", SUM, "IT energy of servers asleep or off", _KWH),
    Metric("it_wake_kwh", "kWh", SUM, "IT energy of servers waking up", _KWH),
    Metric("idle_share_of_it", "fraction", RATIO, "it_idle_kwh / it_kwh: IT energy of capacity on but unused", _FRAC,
           of=("it_idle_kwh", "it_kwh"), if_zero=None, nan=True, better=LOWER),
    Metric("cost_usd", "USD", SUM, "electricity cost: Σ total_kwh × price", _USD, savings=True, better=LOWER),
    Metric("carbon_kg", "kg CO2eq", SUM, "operational emissions: Σ total_kwh × carbon intensity", _KG, savings=True,
           better=LOWER),
    Metric("water_l", "L", SUM, "site cooling water (tower evaporation, drift, blowdown; hybrid pad evaporation)",
           Bound(0.0, 1e15, "site cooling water"), savings=True, better=LOWER),
    Metric("wue_l_per_kwh", "L/kWh", RATIO, "water_l / it_kwh",
           Bound(0.0, math.inf, "water / IT energy (+inf: water without IT energy)"), of=("water_l", "it_kwh"),
           if_zero=None, better=LOWER),
    Metric("transfer_cost_usd", "USD", SUM, "egress cost of remote assignments",
           Bound(0.0, 1e15, "egress prices are non-negative (gridshift.bounds usd_per_gb)"), savings=True,
           better=LOWER),
    Metric("transfer_kwh", "kWh", SUM, "network energy of remote assignments", _KWH, better=LOWER),
    Metric("transfer_carbon_kg", "kg CO2eq", SUM, "emissions of that network energy", _KG, better=LOWER),
    Metric("cost_incl_transfer_usd", "USD", SUM, "cost_usd + charged_cost_usd + transfer_cost_usd (all arrived work)",
           _USD, savings=True, better=LOWER),
    Metric("carbon_incl_transfer_kg", "kg CO2eq", SUM,
           "carbon_kg + charged_carbon_kg + transfer_carbon_kg (all arrived work)", _KG,
           of=("carbon_kg", "charged_carbon_kg", "transfer_carbon_kg"), savings=True, better=LOWER),
    Metric("work_gpu_hours", "GPU-h", SUM, "GPU-hours of work done (nominal: GPUs x duration)", _HOURS),
    Metric("work_core_hours", "core-h", SUM, "core-hours of work done (nominal: cores x duration)", _HOURS),
    Metric("work_left_gpu_hours", "GPU-h", SUM, "GPU-hours left undone at the run's end (drain cap or window end)",
           _HOURS, better=LOWER),
    Metric("drain_steps", "count", COUNT, "steps run past the window's end until the work finished (or the cap)",
           _COUNT),
    Metric("charged_carbon_kg", "kg CO2eq", SUM, "carbon charged for the work left at the drain cap (the run's own "
           "rates per GPU-hour and per core-hour, sim_core.drain)", _KG, better=LOWER),
    Metric("carbon_kg_per_gpu_hour", "kg CO2eq/GPU-h", RATIO, "carbon_kg / work_gpu_hours", _PER,
           of=("carbon_kg", "work_gpu_hours"), better=LOWER),
    Metric("carbon_kg_per_core_hour", "kg CO2eq/core-h", RATIO, "carbon_kg / work_core_hours", _PER,
           of=("carbon_kg", "work_core_hours"), better=LOWER),
    Metric("kwh_per_gpu_hour", "kWh/GPU-h", RATIO, "total_kwh / work_gpu_hours", _PER,
           of=("total_kwh", "work_gpu_hours"), better=LOWER),
    Metric("cost_usd_per_gpu_hour", "USD/GPU-h", RATIO, "cost_usd / work_gpu_hours",
           Bound(-1e15, 1e15, "a cost per GPU-hour (prices may be < 0)"), of=("cost_usd", "work_gpu_hours"),
           better=LOWER),
    Metric("sla_violation_rate", "fraction", RATIO, "share of the tasks started that are late (printed as late %)",
           _FRAC, of=("sla_violations", "tasks_started"), better=LOWER),
    Metric("sla_violations", "count", COUNT, "tasks late: finishing after their deadline (sim_core.sla.late_rule)",
           _COUNT, better=LOWER),
    Metric("mean_wait_s", "s", MEAN, "mean arrival → start time of started tasks (weighted by task)",
           Bound(0.0, 1e12, "a wait in seconds"), better=LOWER),
    Metric("tasks", "count", COUNT, "tasks arriving in the window", _COUNT),
    Metric("tasks_started", "count", COUNT, "tasks started in the window", _COUNT),
    Metric("tasks_completed", "count", COUNT, "tasks finished by the end of the run (its drain included)", _COUNT,
           better=HIGHER),
    Metric("tasks_remote", "count", COUNT, "tasks assigned to a DC other than their origin", _COUNT),
    Metric("tasks_unschedulable", "count", COUNT, "tasks that fit no DC", _COUNT),
    Metric("tasks_forced", "count", COUNT, "tasks assigned by force at the deferral limit", _COUNT),
    Metric("unmet_cooling_kwh", "kWh", SUM, "cooling demand the plant could not meet", _KWH, better=LOWER),
    _util("cpu", "cores", "core"),
    _util("gpu", "GPUs", "GPU"),
    _util("mem", "memory", "memory"),
)

#: every metric, in output order (those declared at run time by a test or a plug-in last)
_TABLE: Declarations[Metric] = Declarations("metric", METRICS)
#: add a metric at run time: stored, compared, checked and listed like those above (refused if the name is taken)
declare = _TABLE.declare
#: remove a metric added by :func:`declare` (the built-in ones stay)
undeclare = _TABLE.undeclare
declared = _TABLE.declared
names = _TABLE.names
#: the metric of a name, or None
get = _TABLE.find


def units() -> dict[str, str]:
    return {m.name: m.unit for m in declared()}
