"""What one simulation step produced (:class:`StepOutcome`): the step API's result type.

The simulator fills it in place every step (``Simulator.step_fast``); reward components
(``sim_core.rl.reward``) and environments read it.
"""

from __future__ import annotations

import numpy as np

from .physics import N_STEP_DC, STEP_DC_NAMES
from .transfer import N_STEP_XFER, STEP_XFER_NAMES


class StepOutcome:
    """One step's results, in preallocated buffers that the simulator overwrites every step.

    ``o["name"]`` is a step total (a float): any of ``DC_NAMES`` summed over the datacenters
    (``it_kwh``, ``total_kwh``, ``cost_usd``, ``carbon_kg``, ``water_l``, ``unmet_cooling_kwh``,
    ``busy_cores``, ``busy_gpus``, ``busy_mem_gb`` (time-weighted averages over the step),
    ``idle_gpus`` (installed - busy), ``it_idle_kwh``/``it_sleep_kwh``/``it_wake_kwh`` (IT energy of
    capacity on but unused, of sleeping and of waking servers), ``servers_on``/``servers_waking``/
    ``servers_asleep`` (time-weighted counts)) or a step-level number of ``STEP_NAMES`` (``transfer_cost_usd``,
    ``transfer_kwh``, ``transfer_carbon_kg``, ``transfer_gb``, ``transfers``, ``sla_violations``,
    ``tasks_started``, ``tasks_decided``). ``o.per_dc("name")`` is the (n_dc,) array of a
    ``DC_NAMES`` metric (a view: copy it to keep it). ``cap_gpus`` is the installed GPU count per DC.
    """

    DC_NAMES = STEP_DC_NAMES
    STEP_NAMES = STEP_XFER_NAMES
    COUNT_NAMES = frozenset({"transfers", "sla_violations", "tasks_started", "tasks_decided"})
    NAMES = DC_NAMES + STEP_NAMES

    __slots__ = ("n_dc", "dc", "dc_sum", "xfer", "cap_gpus", "locations", "step", "_idx")

    def __init__(self, n_dc: int, cap_gpus=None, locations=None):
        self.n_dc = int(n_dc)
        self.dc = np.zeros((N_STEP_DC, self.n_dc))
        self.dc_sum = np.zeros(N_STEP_DC)
        self.xfer = np.zeros(N_STEP_XFER)
        self.cap_gpus = (np.zeros(self.n_dc) if cap_gpus is None
                         else np.array(cap_gpus, dtype=np.float64).reshape(self.n_dc))
        self.locations = list(locations) if locations is not None else [str(d) for d in range(self.n_dc)]
        self.step = -1
        idx: dict[str, tuple[np.ndarray, int]] = {n: (self.dc_sum, i) for i, n in enumerate(self.DC_NAMES)}
        idx.update({n: (self.xfer, i) for i, n in enumerate(self.STEP_NAMES)})
        self._idx = idx

    def __getitem__(self, name: str) -> float:
        try:
            a, i = self._idx[name]
        except KeyError:
            raise KeyError(f"unknown step metric {name!r}; known: {list(self.NAMES)}") from None
        return float(a[i])

    def per_dc(self, name: str) -> np.ndarray:
        try:
            return self.dc[self.DC_NAMES.index(name)]
        except ValueError:
            raise KeyError(f"{name!r} is not a per-datacenter metric; known: {list(self.DC_NAMES)}") from None

    @classmethod
    def from_values(cls, n_dc: int, *, cap_gpus=None, step: int = 0, **values) -> StepOutcome:
        """An outcome from given numbers (for tests and offline use): per-DC metrics as (n_dc,)
        arrays (their step totals are summed here), step-level metrics as scalars."""
        o = cls(n_dc, cap_gpus=cap_gpus)
        o.step = step
        for name, v in values.items():
            if name in cls.DC_NAMES:
                i = cls.DC_NAMES.index(name)
                o.dc[i] = np.broadcast_to(np.asarray(v, dtype=np.float64), (o.n_dc,))
                o.dc_sum[i] = o.dc[i].sum()
            elif name in cls.STEP_NAMES:
                o.xfer[cls.STEP_NAMES.index(name)] = float(v)
            else:
                raise KeyError(f"unknown step metric {name!r}; known: {list(cls.NAMES)}")
        return o
