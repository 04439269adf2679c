"""The per-datacenter configuration of a bundle (``datacenters.json``): how capacities are obtained.

``--datacenters`` names one of three sources; the manifest records which (``parameters.datacenters``)
and every entry says where its capacities came from (``capacity_source``):

``sized`` (default)
    Capacities derived from the bundle's workload for ``--target-utilization`` (default 0.5; see
    :mod:`scenario_builder.sizing`), the sizing record in the manifest (``sizing``). Population weights
    are the reference cluster's where it has the location, else the mean of its five (0.20).
``reference``
    SustainCluster's default five-datacenter cluster (``gridshift.clusters.REFERENCE``), for
    side-by-side runs with that benchmark. Any other location gets :data:`OTHER_DEFAULT`: the mean of
    those five rows (77,000 cores, 580 GPUs, 66,000 GB memory, population weight 0.20).
``FILE``
    An override file applied on top of the reference values, location by location.

Population weights are relative (the simulator normalises them), so they need not sum to 1.
``physics`` is the full :class:`gridshift.dc_params.DatacenterParams` parameter set, defaults
from that class.

Override file (``--datacenters FILE``), JSON or CSV, validated; a location is matched in any letter case
(``de-lu`` is ``DE-LU``); a location not in the bundle, one given twice, an unknown location, an unknown key
and a value outside its field's range (``gridshift.fields``: what the bundle's ``verify`` checks) are errors:

* JSON: ``{"datacenters": [{"location": "DE-LU", "total_gpus": 800, "physics": {"condenser": "air"}}]}``
  (a bare list is accepted too). A row with ``"location": "*"`` applies to every location first.
* CSV: a ``location`` column plus any of ``total_cores,total_gpus,total_mem_gb,population_weight``
  and any ``DatacenterParams`` field name as a column (empty cell = keep the default).
"""

from __future__ import annotations

import io
import json
import math
from pathlib import Path
from typing import Any

import polars as pl

from gridshift import clusters, locations
from gridshift import export_defaults as D
from gridshift.dc_params import FACILITY_PRESETS, DatacenterParams, physics_column
from gridshift.errors import DataError, GridshiftError
from gridshift.fields import FIELDS
from scenario_builder import sizing

CAPACITY_KEYS = ("total_cores", "total_gpus", "total_mem_gb", "population_weight")
SOURCES = ("sized", "reference")
#: Any other location: the mean of the reference rows.
OTHER_DEFAULT: dict[str, float] = {
    "population_weight": 0.20, "total_cores": 77000, "total_gpus": 580, "total_mem_gb": 66000,
}


def default_entry(code: str, physics: str = "default", gpu: str = D.GPU) -> dict[str, Any]:
    """The reference cluster's entry for ``code`` (or the mean of its rows), with the facility preset
    ``physics`` (``gridshift.dc_params.FACILITY_PRESETS``) and the GPU generation ``gpu``
    (``gridshift.dc_params.GPU_GENERATIONS``)."""
    loc = locations.get(code)
    site = clusters.REFERENCE_BY_LOCATION.get(code)
    caps = {k: getattr(site, k) for k in CAPACITY_KEYS} if site else OTHER_DEFAULT
    return {
        "location": code,
        "timezone": loc.timezone,
        **{k: float(caps[k]) for k in CAPACITY_KEYS},
        "capacity_source": "reference cluster" if site else "default (mean of reference)",
        "physics": DatacenterParams(**FACILITY_PRESETS[physics]).with_gpu(gpu).to_dict(),
    }


def sizing_demand(codes: list[str], year: int) -> sizing.Demand:
    """An empty demand record for sized entries of ``codes`` (their time zones and population weights), which the
    workload's tasks are added to as they stream by (:meth:`sizing.Demand.add`)."""
    entries = [default_entry(c) for c in codes]
    return sizing.Demand.of_sites([e["timezone"] for e in entries], [e["population_weight"] for e in entries], year)


def sized(codes: list[str], demand: sizing.Demand, target_utilization: float, physics: str = "default",
          gpu: str = D.GPU) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Entries sized from the workload's ``demand`` (:func:`sizing_demand`, every task added) and the manifest's
    sizing record."""
    entries = [default_entry(c, physics, gpu) for c in codes]
    params = DatacenterParams()
    sites = sizing.size_sites(demand, codes, target_utilization=target_utilization,
                              cores_per_server=params.cores_per_server)
    for e, s in zip(entries, sites, strict=True):
        e.update(s.capacity)
        e["capacity_source"] = f"sized from the workload for a mean utilization of {target_utilization:g}"
    record = {"target_utilization": float(target_utilization), "method": "scenario_builder.sizing",
              "sites": {s.location: s.record() for s in sites}}
    return entries, record


def build(codes: list[str], spec: str | Path, *, demand: sizing.Demand | None = None,
          target_utilization: float = D.TARGET_UTILIZATION, physics: str = D.PHYSICS, gpu: str = D.GPU
          ) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """``datacenters.json``'s list in ``codes`` order, and the sizing record (empty unless sized).

    ``spec``: ``"sized"`` (needs the workload's ``demand``, :func:`sizing_demand`), ``"reference"``, or an
    override file.
    """
    if spec == "sized":
        if demand is None:
            raise GridshiftError("sized datacenters need the workload's demand")
        return sized(codes, demand, target_utilization, physics, gpu)
    if spec == "reference":
        return [default_entry(c, physics, gpu) for c in codes], {}
    return overridden(codes, Path(spec), physics, gpu), {}


def _number(v: Any, key: str, file: str, loc: str) -> float:
    """A capacity value within its field's bound (the range the bundle's ``verify`` checks)."""
    if isinstance(v, bool):
        raise DataError(f"{loc}: {key} must be a number, got {v!r}", file=file, column=key)
    try:
        x = float(v)
    except (TypeError, ValueError, OverflowError):
        raise DataError(f"{loc}: {key} must be a number, got {v!r}", file=file, column=key) from None
    b = FIELDS[key].bound
    if not (math.isfinite(x) and b.admits(x)):
        raise DataError(f"{loc}: {key} = {v!r} is outside its range {b.describe()} ({b.reason})", file=file,
                        column=key)
    return x


def _rows_from_file(path: Path) -> list[dict[str, Any]]:
    file = str(path)
    try:
        text = path.read_bytes()
    except OSError as exc:
        raise DataError(f"cannot read datacenters file: {exc}", file=file) from exc
    if path.suffix.lower() == ".json":
        try:
            body = json.loads(text)
        except (json.JSONDecodeError, UnicodeDecodeError) as exc:
            raise DataError(f"invalid JSON: {exc}", file=file) from exc
        rows = body.get("datacenters") if isinstance(body, dict) else body
        if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
            raise DataError("expected {\"datacenters\": [ {...}, ... ]} or a list of objects", file=file)
        return rows
    if path.suffix.lower() == ".csv":
        try:
            df = pl.read_csv(io.BytesIO(text), infer_schema=False)
        except Exception as exc:  # polars raises several types for malformed CSV
            raise DataError(f"cannot parse CSV: {exc}", file=file) from exc
        numeric = set(DatacenterParams.numeric_fields()) | set(CAPACITY_KEYS)
        rows = []
        for rec in df.iter_rows(named=True):  # a handful of rows
            row: dict[str, Any] = {"physics": {}}
            for k, v in rec.items():
                if v is None or str(v).strip() == "":
                    continue
                v = str(v).strip()
                if k in ("location", "timezone") or k in CAPACITY_KEYS:
                    row[k] = v
                else:
                    row["physics"][k] = v if k not in numeric else _csv_float(v, k, file)
            rows.append(row)
        return rows
    raise DataError("datacenters file must end in .json or .csv", file=file)


def _csv_float(v: str, key: str, file: str) -> float:
    try:
        return float(v)
    except ValueError:
        raise DataError(f"{key} must be a number, got {v!r}", file=file, column=key) from None


def overridden(codes: list[str], override: Path, physics: str = "default", gpu: str = D.GPU) -> list[dict[str, Any]]:
    """The reference entries (with the facility preset and GPU generation) with the override file applied."""
    entries = {c: default_entry(c, physics, gpu) for c in codes}
    file = str(override)
    rows = _rows_from_file(override)
    allowed = {"location", "timezone", "physics", *CAPACITY_KEYS}
    seen: set[str] = set()
    # "*" rows first, so that per-location rows win
    for row in sorted(rows, key=lambda r: r.get("location") != "*"):
        code = row.get("location")
        if not isinstance(code, str):
            raise DataError("every row needs a 'location'", file=file, column="location")
        unknown = sorted(set(row) - allowed)
        if unknown:
            raise DataError(f"{code}: unknown key(s) {unknown}; allowed: {sorted(allowed)}", file=file,
                            column=unknown[0])
        if code != "*":
            code = locations.get(code).location  # unknown or malformed codes are errors; any letter case
            if code not in entries:
                raise DataError(f"{row['location']}: not a location of this bundle ({', '.join(codes)}); an override "
                                "for it would be ignored", file=file, column="location", values=[row["location"]])
        if code in seen:
            raise DataError(f"{code}: given twice (one row per location; the second would silently win)", file=file,
                            column="location", values=[row["location"]])
        seen.add(code)
        targets = list(entries) if code == "*" else [code]
        for t in targets:
            e = entries[t]
            for k in CAPACITY_KEYS:
                if k in row:
                    e[k] = _number(row[k], k, file, t)
            if "timezone" in row:
                from zoneinfo import ZoneInfo, ZoneInfoNotFoundError
                try:
                    ZoneInfo(str(row["timezone"]))
                except (ZoneInfoNotFoundError, ValueError):
                    raise DataError(f"{t}: unknown IANA time zone {row['timezone']!r}", file=file,
                                    column="timezone") from None
                e["timezone"] = str(row["timezone"])
            if "physics" in row:
                if not isinstance(row["physics"], dict):
                    raise DataError(f"{t}: 'physics' must be an object", file=file, column="physics")
                merged = {**e["physics"], **row["physics"]}
                try:
                    e["physics"] = DatacenterParams.from_dict(merged).to_dict()
                except (TypeError, ValueError) as exc:
                    raise DataError(f"{t}: invalid physics parameters: {exc}", file=file,
                                    column=physics_column(exc)) from None
            e["capacity_source"] = "override file"
    return [entries[c] for c in codes]
