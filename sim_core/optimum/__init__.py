"""The offline optimum: a lower bound of a window's carbon (or cost) over every schedule that meets
the tasks' delay limits, from a linear-programming relaxation solved with HiGHS, an upper bound, the best
schedule found (rounded from the LP, heuristics' runs repaired, a local search) run through the engine, and
the integrality gap of small windows (docs/optimum.md)."""

from .mip import IntegralityGap, integrality_gap
from .solve import OBJECTIVES, LPProfile, OptimumError, OptimumResult, optimum
from .upper import Bracket, PlanPolicy, UpperResult, bracket, upper_bound

__all__ = ["OBJECTIVES", "Bracket", "IntegralityGap", "LPProfile", "OptimumError", "OptimumResult", "PlanPolicy",
           "UpperResult", "bracket", "integrality_gap", "optimum", "upper_bound"]
