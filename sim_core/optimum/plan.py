"""A schedule as one decision per task (where and when to dispatch it), and the Python policy that follows
it through the engine (``sim_core.run``'s callable interface): what every upper-bound candidate is run as."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np


@dataclass
class Plan:
    """One decision per task of the window (the engine's task order): where and when to dispatch it."""

    site: np.ndarray  # datacenter (-1: fits none, the engine leaves it unscheduled)
    step: np.ndarray  # window step to dispatch it at (>= the window's steps: not inside the window)
    late: np.ndarray  # 1: no datacenter could finish it by its deadline within the capacity left
    plan_s: float  # time to round (s)


class PlanPolicy:
    """A Python policy (``sim_core.run``'s callable interface) that dispatches each pending task to its
    planned datacenter from its planned step on, and defers it before."""

    __name__ = "optimum_plan"

    def __init__(self, plan: Plan, s0: int):
        self.site = plan.site
        self.step = plan.step
        self.s0 = int(s0)

    def __call__(self, obs: dict) -> np.ndarray:
        idx = obs["pending_index"]
        j = int(obs["step"]) - self.s0
        due = self.step[idx] <= j
        return np.where(due, self.site[idx] + 1, 0).astype(np.int64)


__all__ = ["Plan", "PlanPolicy"]
