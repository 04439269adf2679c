"""The time step of every bundle and simulation, declared once: 15 minutes (900 s), UTC, interval start.

The bundle format (``gridshift.bundle``), the resampling and sizing of the bundle builder, the workload's
arrival slots and the simulator's physics all step on this grid; each form below derives from ``STEP_S``.
"""

from __future__ import annotations

from datetime import timedelta

STEP_S = 900
STEP = timedelta(seconds=STEP_S)
STEP_US = STEP_S * 1_000_000
#: hours per step (0.25: energy in kWh = power in kW x STEP_H)
STEP_H = STEP_S / 3600
STEPS_PER_DAY = 86_400 // STEP_S
#: the step as a polars duration string (``pl.datetime_range``, ``dt.truncate``)
POLARS_INTERVAL = f"{STEP_S // 60}m"
