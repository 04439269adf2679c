"""What was known when: the published forecast skill and the day-ahead price publication rules.

Two data files, each row with its source (docs/simulation.md, "Information: what a policy sees"):

* ``gridshift/data/forecast/skill.csv``: the published day-ahead forecast errors that calibrate the
  simulator's ``calibrated`` forecast model: carbon-intensity MAPE per region (DACF, Maji et al.,
  ACM e-Energy 2022, Table 4), electricity-price rMAE per market (Lago et al., Applied Energy 2021,
  the EPF benchmark) and the growth of the error with lead time (fitted to the issued 5-minute
  MOER forecasts of the data mirror). A row keyed ``*`` is the default for every other location.
* ``gridshift/data/forecast/day_ahead_publication.csv``: when a market publishes its day-ahead
  prices (a rule is declared once per market and lists the registry areas it covers). A location
  whose market has no row here has no stated rule: its price is forecast until the step itself.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass
from functools import cache
from importlib.resources import files
from zoneinfo import ZoneInfo

import polars as pl

from gridshift import locations
from gridshift.errors import GridshiftError

SIGNALS = ("carbon", "price")
METRICS = {"carbon": "mape", "price": "rmae_w"}
DEFAULT_KEY = "*"


@dataclass(frozen=True)
class Skill:
    """A published day-ahead error: ``value`` of ``metric`` over leads (lead_from_h, lead_to_h]."""

    signal: str
    location: str
    metric: str
    value: float
    lead_from_h: float
    lead_to_h: float
    source: str


@dataclass(frozen=True)
class PublicationRule:
    """Day-ahead prices of delivery day D (a calendar day in ``timezone``) are published at
    ``publication`` local time on day D - ``days_before``."""

    market: str
    timezone: str
    publication: dt.time
    days_before: int
    source: str


def _read(name: str) -> pl.DataFrame:
    return pl.read_csv(files("gridshift").joinpath(f"data/forecast/{name}").read_bytes(), infer_schema=False)


@cache
def skill_table() -> dict[tuple[str, str], Skill]:
    """(signal, location or ``*``) -> :class:`Skill`; signal ``lead`` holds the lead-time exponent."""
    out: dict[tuple[str, str], Skill] = {}
    for r in _read("skill.csv").iter_rows(named=True):
        s = Skill(r["signal"], r["location"], r["metric"], float(r["value"]), float(r["lead_from_h"]),
                  float(r["lead_to_h"]), r["source"])
        if (s.signal, s.location) in out:
            raise GridshiftError(f"skill.csv: {s.signal}/{s.location} declared twice")
        if s.signal in METRICS and s.metric != METRICS[s.signal]:
            raise GridshiftError(f"skill.csv: {s.signal}/{s.location}: metric {s.metric!r}, expected "
                                 f"{METRICS[s.signal]!r}")
        if not (s.value > 0.0 and s.lead_to_h > s.lead_from_h >= 0.0):
            raise GridshiftError(f"skill.csv: {s.signal}/{s.location}: value and leads must be positive")
        out[(s.signal, s.location)] = s
    for sig in (*SIGNALS, "lead"):
        if (sig, DEFAULT_KEY) not in out:
            raise GridshiftError(f"skill.csv: no default row ({sig}, {DEFAULT_KEY})")
    return out


def skill(signal: str, location: str) -> Skill:
    """The published error for ``signal`` at ``location`` (its own row, else the ``*`` default)."""
    t = skill_table()
    return t.get((signal, location)) or t[(signal, DEFAULT_KEY)]


def lead_exponent() -> float:
    """Exponent p of the error growth with lead time h: error(h) proportional to h**p."""
    return skill_table()[("lead", DEFAULT_KEY)].value


@cache
def publication_rules() -> dict[str, PublicationRule]:
    """Registry price area (``entsoe_area`` or ``iso_market`` of gridshift/data/locations.csv) -> rule."""
    out: dict[str, PublicationRule] = {}
    for r in _read("day_ahead_publication.csv").iter_rows(named=True):
        ZoneInfo(r["timezone"])  # raises for a non-IANA zone
        hh, mm = (int(x) for x in r["publication"].split(":"))
        rule = PublicationRule(r["market"], r["timezone"], dt.time(hh, mm), int(r["days_before"]), r["source"])
        if rule.days_before < 1:
            raise GridshiftError(f"day_ahead_publication.csv: {rule.market}: days_before must be >= 1")
        for area in r["areas"].split():
            if area in out:
                raise GridshiftError(f"day_ahead_publication.csv: area {area} has two rules")
            out[area] = rule
    return out


def publication_rule(location: str) -> PublicationRule | None:
    """The day-ahead publication rule of ``location``'s price market, or None (no stated rule, or a
    location outside the registry): its price is then known only at its own step."""
    try:
        loc = locations.get(location)
    except locations.UnknownLocationError:
        return None
    rules = publication_rules()
    for area in (loc.entsoe_area, loc.iso_market):
        if area and area in rules:
            return rules[area]
    return None


__all__ = ["Skill", "PublicationRule", "skill", "skill_table", "lead_exponent", "publication_rule",
           "publication_rules"]
