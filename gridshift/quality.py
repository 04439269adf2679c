"""Data-quality thresholds shared by the ingest, the Dagster checks and the bundle builder: declared once."""

from __future__ import annotations

from datetime import timedelta

#: The share of a UTC year's intervals a grid partition (signal × location × year) must hold. The
#: ingest refuses a file below it unless told ``allow_partial`` (then the partition is recorded as
#: partial in ``partition_quality``); the Dagster coverage check and the bundle builder's "is this
#: partition present" use the same figure.
MIN_COVERAGE = 0.95

#: The fill limit: the longest run of missing source time that is filled (and flagged) rather than refused.
#: The ingest's time-grid check refuses a file with a longer gap; a bundle fills up to it (the export's
#: ``--max-gap-hours`` default). One value for every step.
MAX_GAP = timedelta(hours=3)
#: Year edges with no neighbouring-year data (e.g. an Open-Meteo local-year file shifted by its fixed UTC
#: offset, at most 14 h) are filled by holding the nearest value, flagged, up to this (``--max-edge-fill-hours``).
MAX_EDGE_FILL = timedelta(hours=15)
