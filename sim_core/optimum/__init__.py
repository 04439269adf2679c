"""The offline optimum: a lower bound of a window's carbon (or cost) over every schedule that meets
the tasks' delay limits, from a linear-programming relaxation solved with HiGHS (docs/optimum.md)."""

from .solve import OBJECTIVES, OptimumError, OptimumResult, optimum

__all__ = ["OBJECTIVES", "OptimumError", "OptimumResult", "optimum"]
