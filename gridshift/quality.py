"""Data-quality thresholds shared by the ingest, the Dagster checks and the bundle builder: declared once."""

from __future__ import annotations

#: The share of a UTC year's intervals a grid partition (signal × location × year) must hold. The
#: ingest refuses a file below it unless told ``allow_partial`` (then the partition is recorded as
#: partial in ``partition_quality``); the Dagster coverage check and the bundle builder's "is this
#: partition present" use the same figure.
MIN_COVERAGE = 0.95
