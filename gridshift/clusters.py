"""Named datacenter clusters: declared once, read by the bundle builder and the test bundles.

``REFERENCE``: SustainCluster's default five-datacenter cluster (capacities and population weights
as in its ``datacenters_reference.csv``, mirrored at ``reference/datacenters_reference.csv`` of the
shared data; a test checks the two agree), for side-by-side runs with that benchmark.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class ClusterSite:
    location: str
    population_weight: float
    total_cores: float
    total_gpus: float
    total_mem_gb: float


REFERENCE: tuple[ClusterSite, ...] = (
    ClusterSite("US-CAL-CISO", 0.18, 50_000, 1_000, 80_000),
    ClusterSite("DE-LU", 0.22, 85_000, 600, 80_000),
    ClusterSite("CL-SIC", 0.20, 110_000, 300, 60_000),
    ClusterSite("SG", 0.25, 75_000, 700, 50_000),
    ClusterSite("AU-NSW", 0.15, 65_000, 300, 60_000),
)
REFERENCE_BY_LOCATION = {s.location: s for s in REFERENCE}
