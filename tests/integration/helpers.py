"""Helpers of the integration tests: corrupted mirrors (symlink the real files, replace one with a modified copy)
and the run identities every bundle size must keep."""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path


def mirror_with(shared: Path, tmp: Path, relpath: str, mutate: Callable[[bytes], bytes]) -> Path:
    """A mirror in ``tmp`` where ``relpath`` is ``mutate(real bytes)`` and every other file links the real one.

    Every directory of the mirror is a real directory and only files are symlinks, so replacing
    the target (unlink the link, write a new file) can never write through to ../shared/data.
    """
    mirror = tmp / "mirror"
    for src in shared.rglob("*"):
        dst = mirror / src.relative_to(shared)
        if src.is_dir():
            dst.mkdir(parents=True, exist_ok=True)
        else:
            dst.parent.mkdir(parents=True, exist_ok=True)
            dst.symlink_to(src)
    target = mirror / relpath
    original = (shared / relpath).read_bytes()
    assert target.is_symlink() and not target.parent.is_symlink()
    target.unlink()
    target.write_bytes(mutate(original))
    return mirror


#: what a home records about runs, not data: the Dagster instance (run history, the UI's lineage) and the
#: full reports of failed commands. A refused input is meant to appear there.
RUN_RECORDS = ("dagster", "logs")


def tree_digest(root: Path) -> str:
    """sha256 over every data file's relative path and bytes under ``root`` (the warehouse, raw landings,
    bundles, HTTP cache; not the run records) — missing root → empty digest."""
    h = hashlib.sha256()
    if root.exists():
        for p in sorted(root.rglob("*")):
            if p.is_file() and p.relative_to(root).parts[0] not in RUN_RECORDS:
                h.update(str(p.relative_to(root)).encode())
                h.update(p.read_bytes())
    return h.hexdigest()


def replace_line(lineno: int, new: Callable[[str], str]) -> Callable[[bytes], bytes]:
    """Mutation: rewrite line ``lineno`` (1-based, header is line 1) of a text file."""

    def _mut(data: bytes) -> bytes:
        lines = data.decode("utf-8").split("\n")
        lines[lineno - 1] = new(lines[lineno - 1])
        return "\n".join(lines).encode("utf-8")

    return _mut


def year_instance(*years: int):
    """An in-memory Dagster instance holding ``years`` as year partitions (the dynamic dimension of the grid and
    workload assets: ``dagster_project.partitions.add_years``), for materializing a partition outside the runner."""
    import dagster as dg

    from dagster_project.partitions import add_years

    instance = dg.DagsterInstance.ephemeral()
    add_years(instance, years)
    return instance


def assert_run_identities(res, bundle: Path) -> None:
    """The run's energy, carbon, cost and water identities, per step and in the totals, and no site's GPUs above
    their generation's maximum (board + its share of the DGX host): ``res`` a ``RunResult`` of ``bundle``."""
    import json

    import numpy as np
    import polars as pl
    import pytest

    s = res.steps
    parts = sum(s[k] for k in ("it_kw", "crac_fan_kw", "chiller_kw", "tower_fan_kw", "chw_pump_kw", "cw_pump_kw",
                               "lighting_kw", "ups_loss_kw", "transformer_loss_kw"))
    np.testing.assert_allclose(parts.to_numpy(), s["total_kw"].to_numpy(), rtol=1e-12)
    it = s["it_cpu_kw"] + s["it_gpu_kw"] + s["it_mem_kw"] + s["it_fan_kw"]
    np.testing.assert_allclose(it.to_numpy(), s["it_kw"].to_numpy(), rtol=1e-12)
    np.testing.assert_allclose(s["total_kwh"].to_numpy(), (s["total_kw"] * 0.25).to_numpy(), rtol=1e-15)
    np.testing.assert_allclose(s["carbon_kg"].to_numpy(), (s["total_kwh"] * s["carbon_g_per_kwh"] / 1000).to_numpy(),
                               rtol=1e-12)
    np.testing.assert_allclose(s["cost_usd"].to_numpy(), (s["total_kwh"] * s["price_usd_per_mwh"] / 1000).to_numpy(),
                               rtol=1e-12)
    water = s["water_evap_l"] + s["water_drift_l"] + s["water_blowdown_l"] + s["air_econ_water_l"]
    np.testing.assert_allclose(water.to_numpy(), s["water_l"].to_numpy(), rtol=1e-12, atol=1e-9)
    caps = json.loads((bundle / "datacenters.json").read_text())["datacenters"]
    for d in caps:
        kw = d["total_gpus"] * d["physics"]["gpu_max_w"] / 1000
        assert float(s.filter(pl.col("location") == d["location"])["it_gpu_kw"].max()) <= kw + 1e-9
    for k in ("total_kwh", "carbon_kg", "cost_usd", "water_l"):  # the totals are the steps' sums
        assert res.totals[k] == pytest.approx(float(s[k].sum()), rel=1e-9), k
