"""The leaderboard's protocol: one declared object that says what every entry is scored on and how
(docs/leaderboard.md). Its sha256 (:attr:`Protocol.sha256`) is recorded in every result row, with the score
bundle's id and the code version, so a row always names exactly the rules it was scored under.

* **Years.** Entries that learn or tune (the recipes' agents) do so on ``train_year``'s bundles only; every entry
  is scored on ``score_year``'s bundles, which are built for scoring and nothing else. ``score_year`` is a
  parameter (:meth:`Protocol.for_year`): the same protocol runs unchanged on a year it has never seen.
* **The scenario grid.** Every region set x sizing utilisation x window (one per season): a score bundle per
  (region set, utilisation), a run window per season. The windows are short (``days``) so that the whole
  default leaderboard, with the optimum's bracket of every cell, fits an hour on 2 cores (BENCHMARKS.md).
* **Metrics.** Carbon including the transfers' emissions, cost including egress, the share of tasks late, water,
  and the share of the optimum's bracket each entry closes: every run drains (equal work, docs/simulation.md
  "How a run ends"), so every entry of a cell does the same work.

Every default below is a choice named with its reason; none was chosen from a leaderboard's result.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import asdict, dataclass, replace
from typing import NamedTuple

from gridshift import scale as scale_mod
from gridshift.dc_params import GPU_GENERATIONS
from gridshift.hashing import canonical_json, sha256_bytes

#: the region sets (benchmarks/sensitivity.py's region axis): the README's main job, and it widened to five
#: sites on four continents (adds Chile's and New South Wales' grids)
MAIN_REGIONS = ("US-CAL-CISO", "DE-LU", "SG")
WIDE_REGIONS = ("US-CAL-CISO", "DE-LU", "CL-SIC", "SG", "AU-NSW")


class Cell(NamedTuple):
    """One scenario of the grid: a region set, the utilisation its sites are sized for, a window's ISO week."""

    regions: tuple[str, ...]
    utilisation: float
    iso_week: int

    @property
    def label(self) -> str:
        return f"{'+'.join(self.regions)} u{self.utilisation:g} w{self.iso_week:02d}"


@dataclass(frozen=True)
class Protocol:
    """What a leaderboard scores and how (module docstring). ``metrics``: the columns ranked, as their result
    columns name them (each with its unit); ``baseline``: the entry savings and the bracket's share are
    measured from (``local_only``: every task at its origin, what no scheduling does)."""

    name: str = "gridshift-leaderboard"
    revision: int = 2
    train_year: int = 2022
    score_year: int = 2023
    region_sets: tuple[tuple[str, ...], ...] = (MAIN_REGIONS, WIDE_REGIONS)
    #: ``gridshift export --target-utilization``: its default 0.5, and 0.8, the busiest of the sensitivity
    #: page's sizing axis (how the savings shrink as a cluster fills, docs/sensitivity.md)
    utilisations: tuple[float, ...] = (0.5, 0.8)
    #: one window per season: the Monday of ISO weeks 8 (late February: after CarbonFlex's 7 weeks of history
    #: in the same year), 20, 33 and 46
    iso_weeks: tuple[int, ...] = (8, 20, 33, 46)
    #: each window's days of arrivals (then drained); 2 days: the recipes' own episode length (sim_core.rl.recipes)
    days: float = 2.0
    #: workload seeds (a seed draws the run's workload realisation and origins)
    seeds: tuple[int, ...] = (0,)
    #: the score bundles' size and GPUs (``gridshift export --scale/--gpu``): the rack preset with V100s, not the
    #: export's default (the source cluster with H100s). Why: the learning recipes' agents decide per task and were
    #: trained on rack-sized bundles (sim_core.rl.recipes), and the bracket of each of the 16 cells is solved on the
    #: cell's tasks; at ×1 a cell holds 32× the tasks. Revision 2 declares it (revision 1 used the same bundles).
    scale: str = "rack"
    gpu: str = "V100"
    metrics: tuple[str, ...] = ("carbon_incl_transfer_kg", "cost_incl_transfer_usd", "sla_violation_rate", "water_l",
                                "bracket_closed_min_frac", "bracket_closed_max_frac")
    baseline: str = "local_only"

    def __post_init__(self) -> None:
        for y in (self.train_year, self.score_year):
            if not isinstance(y, int) or not 1990 <= y <= 2100:
                raise ValueError(f"protocol year {y!r} is not a year (1990..2100)")
        if self.train_year == self.score_year:
            raise ValueError(f"the score year must be held out: train year and score year are both {self.score_year}")
        if not self.region_sets or any(len(r) < 2 for r in self.region_sets):
            raise ValueError("the protocol needs region sets of at least two regions each")
        if not self.utilisations or any(not 0.0 < u <= 1.0 for u in self.utilisations):
            raise ValueError(f"utilisations must be in (0, 1], got {self.utilisations}")
        if not self.iso_weeks or any(not 1 <= w <= 52 for w in self.iso_weeks):
            raise ValueError(f"iso_weeks must be in 1..52, got {self.iso_weeks}")
        if not 0.0 < self.days <= 7.0:
            raise ValueError(f"days must be in (0, 7], got {self.days}")
        try:
            scale_mod.parse(self.scale)
        except scale_mod.ScaleError as err:  # a ValueError like every refusal here (read_rows names the file)
            raise ValueError(f"protocol {err}") from None
        if not isinstance(self.gpu, str) or self.gpu not in GPU_GENERATIONS:
            raise ValueError(f"gpu must be one of {sorted(GPU_GENERATIONS)}, got {self.gpu!r}")
        if not self.seeds or any(s < 0 for s in self.seeds):
            raise ValueError(f"seeds must be non-negative integers, got {self.seeds}")

    def for_year(self, score_year: int) -> Protocol:
        """The same protocol scored on ``score_year`` (a new hash: the year is part of the rules)."""
        return replace(self, score_year=int(score_year))

    def to_dict(self) -> dict:
        d = asdict(self)
        return {k: [list(x) for x in v] if k == "region_sets" else list(v) if isinstance(v, tuple) else v
                for k, v in d.items()}

    @classmethod
    def from_dict(cls, d: dict) -> Protocol:
        d = dict(d)
        d["region_sets"] = tuple(tuple(r) for r in d["region_sets"])
        for k in ("utilisations", "iso_weeks", "seeds", "metrics"):
            d[k] = tuple(d[k])
        return cls(**d)

    @property
    def sha256(self) -> str:
        """The sha256 of the canonical JSON of :meth:`to_dict` (recorded in every result row)."""
        return sha256_bytes(canonical_json(self.to_dict()))

    def cells(self) -> list[Cell]:
        """The scenario grid, region set by utilisation by window."""
        return [Cell(tuple(r), float(u), int(w)) for r in self.region_sets for u in self.utilisations
                for w in self.iso_weeks]

    def window_start(self, iso_week: int, year: int | None = None) -> str:
        """The window's first instant: Monday of ``iso_week`` of the score year (or ``year``), 00:00 UTC."""
        day = dt.date.fromisocalendar(int(year or self.score_year), int(iso_week), 1)
        return dt.datetime.combine(day, dt.time(), dt.UTC).isoformat()


DEFAULT = Protocol()

__all__ = ["DEFAULT", "MAIN_REGIONS", "WIDE_REGIONS", "Cell", "Protocol"]
