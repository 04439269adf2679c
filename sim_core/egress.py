"""Egress price presets: what a GB moved between two sites costs, beside the bundle's list prices (issue 35
item 3, a sensitivity row of docs/sensitivity.md).

A bundle's ``usd_per_gb`` matrix is the provider's published inter-region list prices (gridshift/data/egress,
docs/data_sources.md). A fleet that moves data in bulk between its own sites rarely pays them:

* ``"list"``: the bundle's matrix as it is (the default everywhere).
* ``"direct-connect"``: a dedicated private connection. AWS Direct Connect's pay-as-you-go page
  (aws.amazon.com/directconnect/pricing/) charges data transfer in at 0.00 USD/GB and data transfer out at
  0.0200-0.1923 USD/GB by location, plus a port fee per hour (0.30 USD for 1 Gbps, 2.25 USD for 10 Gbps). We charge
  the lowest per-GB rate, **0.02 USD/GB**, on every pair whose list price is higher (a lower bound of that matrix:
  its Asia-Pacific rates are higher). The port fee is paid whether or not a task moves, the same for every policy
  over a window, and is left out (it cannot change a saving's sign).
* ``"private-backbone"``: the operator's own backbone, paid by capacity only: **0 USD/GB** (the bound the port-fee
  model tends to when the capacity is there anyway).
"""

from __future__ import annotations

import dataclasses

import numpy as np

from .scenario import Scenario

#: per-GB price cap of each preset (USD/GB; None: the bundle's list prices)
EGRESS_PRESETS: dict[str, float | None] = {"list": None, "direct-connect": 0.02, "private-backbone": 0.0}
DEFAULT_EGRESS = "list"


def with_egress(sc: Scenario, preset: str) -> Scenario:
    """``sc`` with every cross-site price capped at the preset's (the diagonal stays 0); ``"list"``: ``sc`` itself."""
    if preset not in EGRESS_PRESETS:
        raise ValueError(f"egress preset must be one of {sorted(EGRESS_PRESETS)}, got {preset!r}")
    cap = EGRESS_PRESETS[preset]
    if cap is None:
        return sc
    usd = np.minimum(np.asarray(sc.usd_per_gb, dtype=np.float64), cap)
    np.fill_diagonal(usd, 0.0)
    return dataclasses.replace(sc, usd_per_gb=np.ascontiguousarray(usd))
