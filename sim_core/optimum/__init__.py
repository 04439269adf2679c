"""The offline optimum: a lower bound of a window's carbon (or cost) over every schedule that meets
the tasks' delay limits, from a linear-programming relaxation solved with HiGHS, and an upper bound, a
schedule rounded from it and run through the engine (docs/optimum.md)."""

from .solve import OBJECTIVES, LPProfile, OptimumError, OptimumResult, optimum
from .upper import Bracket, PlanPolicy, UpperResult, bracket, upper_bound

__all__ = ["OBJECTIVES", "Bracket", "LPProfile", "OptimumError", "OptimumResult", "PlanPolicy", "UpperResult",
           "bracket", "optimum", "upper_bound"]
