"""The step's forms agree with each other and with the calendar: a day is 96 steps in each of them."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import polars as pl

from gridshift.timestep import POLARS_INTERVAL, STEP, STEP_H, STEP_S, STEP_US, STEPS_PER_DAY


def test_the_step_is_fifteen_minutes_in_every_form():
    forms = (STEP_S, STEP, STEP_US, STEP_H, STEPS_PER_DAY, POLARS_INTERVAL)
    assert forms == (900, timedelta(minutes=15), 900_000_000, 0.25, 96, "15m")
    # counts and indices are integers (a step count of 96.0 would not index an array)
    assert all(type(x) is int for x in (STEP_S, STEP_US, STEPS_PER_DAY))


def test_a_utc_day_on_the_polars_interval_has_steps_per_day_steps():
    day = datetime(2024, 3, 31, tzinfo=UTC)  # a DST day in Europe: UTC has no such thing
    grid = pl.datetime_range(day, day + timedelta(days=1), interval=POLARS_INTERVAL, closed="left",
                             time_zone="UTC", eager=True)
    assert grid.len() == STEPS_PER_DAY
    assert (grid.diff().drop_nulls() == STEP).all()
    assert grid.dt.epoch("us").diff().drop_nulls().unique().to_list() == [STEP_US]
    assert STEP_H * STEPS_PER_DAY == 24.0 and STEP.total_seconds() == STEP_S
