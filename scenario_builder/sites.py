"""Several datacenters per location, and sites in cloud regions: a sites file (``--datacenters FILE``).

A datacenters file whose rows carry a ``site`` key is a *sites file*: every row is its own datacenter
of the bundle (its own row in ``datacenters.json``, its own rows in ``signals.parquet``), labelled
``site``. A row places the site either at a registry ``location`` or in a ``cloud_region``
(``provider:region_id`` of ``gridshift/data/cloud_regions.csv``, resolved to the location whose
Electricity Maps zone supplies that region). Sites share their location's signals exactly (carbon,
price, weather: one resampling per location, copied per site); the ``datacenters.json`` entry names
that location (``signal_location``) and the manifest's ``location_meta[site]`` the location, the
coordinates and the cloud region.

Columns (CSV) or keys (JSON ``{"sites": [...]}``, ``{"datacenters": [...]}`` or a bare list):
``site`` (required, ``[A-Za-z0-9][A-Za-z0-9._-]*``, unique), ``location`` or ``cloud_region`` (exactly
one), optional ``lat``/``lon`` (default: the region's or the location's), the capacities
``total_cores,total_gpus,total_mem_gb,population_weight`` (default: the location's reference entry,
``scenario_builder.datacenters``) and any ``DatacenterParams`` field. Every problem is a
:class:`DataError` naming the file, the column, the row (1-based, as in the file) and the value.

Network between sites (:func:`site_network`):

* sites at **different locations**: the locations' path and egress price, as in any bundle;
* sites at **one location** (not in any measurement the project holds): within
  :data:`AZ_MAX_KM` of each other they are treated as availability zones of one region -- Microsoft
  documents zones "typically within 100 km" of each other with a round-trip latency "of less than
  2 ms" (Microsoft Learn, "What are Azure availability zones?"), so RTT = :data:`AZ_RTT_MS` (the
  bound, i.e. conservative) and throughput the per-flow cap (window / 2 ms exceeds it for both
  fitted windows); farther apart, the project's intra-macro-region model: RTT from the great-circle
  distance with the Azure P50 fit, throughput = the provider's Persico window / RTT, capped.
  Egress between them: :data:`INTRA_REGION_USD_PER_GB`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import polars as pl

from gridshift import cloud_regions, locations
from gridshift import export_defaults as D
from gridshift.bundle.format import DC_LABEL
from gridshift.dc_params import DatacenterParams, physics_column
from gridshift.errors import DataError, GridshiftError
from pipelines.sources import azure_latency
from pipelines.sources.network import PER_FLOW_CAP_MBPS
from scenario_builder import datacenters as dc_mod

#: Zones of one region: "typically within 100 km" and "a round-trip latency of less than 2 ms"
#: (Microsoft Learn, "What are Azure availability zones?", learn.microsoft.com/azure/reliability/
#: availability-zones-overview). The bound is used as the RTT.
AZ_MAX_KM = 100.0
AZ_RTT_MS = 2.0
#: Data moved between two sites of one location (zones of one region), USD per GB moved:
#: AWS charges 0.01 USD/GB out of the source zone and 0.01 USD/GB into the destination zone ("Data
#: transfer within the same AWS Region", aws.amazon.com/ec2/pricing/on-demand/#Data_Transfer) -> 0.02;
#: GCP 0.01 USD/GB between zones of a region ("VM-VM data transfer ... between zones in the same
#: region", cloud.google.com/vpc/network-pricing); Azure 0 (Microsoft announced in 2024 that it does not
#: charge for data transfer between availability zones; azure.microsoft.com/pricing/details/bandwidth).
INTRA_REGION_USD_PER_GB = {"aws": 0.02, "gcp": 0.01, "azure": 0.0}
#: synthetic providers of test bundles use the AWS figure
KEYS = ("site", "location", "cloud_region", "lat", "lon", "timezone", "physics", *dc_mod.CAPACITY_KEYS)


@dataclass
class Site:
    """One datacenter of a sites bundle."""

    label: str
    location: str  # the registry location whose signals it takes
    lat: float
    lon: float
    cloud_region: str | None  # provider:region_id, when placed in a region
    entry: dict[str, Any] = field(default_factory=dict)  # its datacenters.json entry

    def meta(self, provider: str) -> dict[str, Any]:
        loc = locations.get(self.location)
        return {"location": self.location, "zone_id": loc.emaps_zone, "timezone": loc.timezone,
                "lat": self.lat, "lon": self.lon,
                "cloud_region": self.cloud_region or f"{provider}:{loc.cloud_region(provider)}",
                "cloud_region_source": "sites file" if self.cloud_region else "location registry",
                "macro_cluster": loc.macro_cluster, "weather_place": loc.weather_place, "market": loc.market}


def is_sites_file(path: str | Path) -> bool:
    """Whether a datacenters file lists sites (any row with a ``site`` key) rather than per-location
    overrides. A JSON file with a top-level ``sites`` list is one too."""
    p = Path(path)
    if p.suffix.lower() == ".json":
        import json
        try:
            body = json.loads(p.read_bytes())
        except (OSError, ValueError):
            return False
        if isinstance(body, dict) and "sites" in body:
            return True
    try:
        rows = _rows(p)
    except GridshiftError:
        return False
    return any("site" in r for r in rows)


def _rows(path: Path) -> list[dict[str, Any]]:
    if path.suffix.lower() == ".json":
        import json
        try:
            body = json.loads(path.read_bytes())
        except (OSError, ValueError) as exc:
            raise DataError(f"invalid JSON: {exc}", file=str(path)) from None
        if isinstance(body, dict) and "sites" in body:
            rows = body["sites"]
            if not isinstance(rows, list) or not all(isinstance(r, dict) for r in rows):
                raise DataError("'sites' must be a list of objects", file=str(path), column="sites")
            return rows
    if path.suffix.lower() == ".csv":
        return _csv_rows(path)
    return dc_mod._rows_from_file(path)


def _csv_rows(path: Path) -> list[dict[str, Any]]:
    """A CSV sites file: the site keys as columns, any other column a ``DatacenterParams`` field
    (empty cell = the default)."""
    import io
    file = str(path)
    try:
        df = pl.read_csv(io.BytesIO(path.read_bytes()), infer_schema=False, comment_prefix="#")
    except Exception as exc:  # noqa: BLE001 - polars raises several types for malformed CSV
        raise DataError(f"cannot parse CSV: {exc}", file=file) from None
    numeric = set(DatacenterParams.numeric_fields())
    rows = []
    for i, rec in enumerate(df.iter_rows(named=True), start=1):  # one row per site
        row: dict[str, Any] = {}
        phys: dict[str, Any] = {}
        for k, v in rec.items():
            if v is None or str(v).strip() == "":
                continue
            v = str(v).strip()
            if k in KEYS:
                row[k] = v
            elif k in numeric:
                try:
                    phys[k] = float(v)
                except ValueError:
                    raise DataError(f"{k} must be a number", file=file, column=k, rows=[i], values=[v]) from None
            else:
                phys[k] = v
        if phys:
            row["physics"] = phys
        rows.append(row)
    return rows


def _num(v: Any, key: str, file: str, row: int, *, low: float, high: float, allow_low: bool) -> float:
    x = None
    if not isinstance(v, bool):
        try:
            x = float(v)
        except (TypeError, ValueError):
            x = None
    ok = x is not None and x == x and abs(x) != float("inf") and (x >= low if allow_low else x > low) and x <= high
    if not ok:
        rng = f"{'[' if allow_low else '('}{low:g}, {high:g}]"
        raise DataError(f"{key} must be a finite number in {rng}", file=file, column=key, rows=[row], values=[v])
    return float(x)  # type: ignore[arg-type]


def read(path: str | Path, *, physics: str = "default", gpu: str = D.GPU, regions_file: str | Path | None = None
         ) -> list[Site]:
    """The sites of a sites file, in file order, each with its ``datacenters.json`` entry."""
    p = Path(path)
    file = str(p)
    rows = _rows(p)
    if not rows:
        raise DataError("no sites listed", file=file, column="site")
    out: list[Site] = []
    seen: dict[str, int] = {}
    for i, row in enumerate(rows, start=1):
        unknown = sorted(set(row) - set(KEYS))
        if unknown:
            raise DataError(f"unknown key(s) {unknown}; allowed: {sorted(KEYS)}", file=file, column=unknown[0],
                            rows=[i], values=[row[unknown[0]]])
        label = row.get("site")
        if not isinstance(label, str) or not DC_LABEL.match(label):
            raise DataError(f"site label must match {DC_LABEL.pattern}", file=file, column="site", rows=[i],
                            values=[label])
        if label in seen:
            raise DataError(f"site {label!r} is listed twice (rows {seen[label]} and {i})", file=file, column="site",
                            rows=[seen[label], i], values=[label])
        seen[label] = i
        has_loc, has_reg = row.get("location") not in (None, ""), row.get("cloud_region") not in (None, "")
        if has_loc == has_reg:
            raise DataError("give exactly one of 'location' and 'cloud_region'", file=file, column="location",
                            rows=[i], values=[[row.get("location"), row.get("cloud_region")]])
        region = None
        if has_reg:
            key = str(row["cloud_region"])
            try:
                region = cloud_regions.get(key, regions_file)
                code = cloud_regions.location_of(region)
            except DataError:
                raise
            except GridshiftError as exc:
                raise DataError(str(exc), file=file, column="cloud_region", rows=[i], values=[key]) from None
            lat, lon = region.lat, region.lon
        else:
            code = str(row["location"])
            try:
                loc = locations.get(code)
            except GridshiftError as exc:
                raise DataError(str(exc), file=file, column="location", rows=[i], values=[code]) from None
            lat, lon = loc.lat, loc.lon
        if row.get("lat") not in (None, ""):
            lat = _num(row["lat"], "lat", file, i, low=-90.0, high=90.0, allow_low=True)
        if row.get("lon") not in (None, ""):
            lon = _num(row["lon"], "lon", file, i, low=-180.0, high=180.0, allow_low=True)
        e = dc_mod.default_entry(code, physics, gpu)
        for k in dc_mod.CAPACITY_KEYS:
            if row.get(k) not in (None, ""):
                e[k] = _num(row[k], k, file, i, low=0.0, high=1e9, allow_low=k == "total_gpus")
        if "timezone" in row:
            raise DataError("a site takes its location's time zone", file=file, column="timezone", rows=[i],
                            values=[row["timezone"]])
        if row.get("physics"):
            if not isinstance(row["physics"], dict):
                raise DataError("'physics' must be an object", file=file, column="physics", rows=[i])
            try:
                e["physics"] = DatacenterParams.from_dict({**e["physics"], **row["physics"]}).to_dict()
            except (TypeError, ValueError) as exc:
                raise DataError(f"invalid physics parameters: {exc}", file=file, column=physics_column(exc),
                                rows=[i]) from None
        e["location"] = label
        e["signal_location"] = code
        e["capacity_source"] = "sites file" if any(row.get(k) not in (None, "") for k in dc_mod.CAPACITY_KEYS) \
            else e["capacity_source"]
        out.append(Site(label, code, float(lat), float(lon), region.key if region else None, e))
    return out


def site_network(sites: list[Site], loc_net: pl.DataFrame, provider: str, window_mbit_ms: float | None
                 ) -> pl.DataFrame:
    """``network.parquet`` rows for every ordered pair of sites (see the module docstring).

    ``loc_net``: the location-pair rows (``scenario_builder.bundle._network``) over the sites'
    locations; ``window_mbit_ms``: the provider's fitted throughput × RTT (None: the per-flow cap)."""
    n = len(sites)
    codes = sorted({s.location for s in sites})
    li = {c: k for k, c in enumerate(codes)}
    m = len(codes)
    mats = {c: np.full((m, m), np.nan) for c in ("usd_per_gb", "throughput_mbps", "rtt_ms")}
    a = loc_net["src_location"].replace_strict(li, default=-1, return_dtype=pl.Int64).to_numpy()
    b = loc_net["dst_location"].replace_strict(li, default=-1, return_dtype=pl.Int64).to_numpy()
    keep = (a >= 0) & (b >= 0)
    for c, mat in mats.items():
        mat[a[keep], b[keep]] = loc_net[c].to_numpy()[keep]
    loc_idx = np.array([li[s.location] for s in sites])
    usd = mats["usd_per_gb"][loc_idx[:, None], loc_idx[None, :]]
    thr = mats["throughput_mbps"][loc_idx[:, None], loc_idx[None, :]]
    rtt = mats["rtt_ms"][loc_idx[:, None], loc_idx[None, :]]
    same = loc_idx[:, None] == loc_idx[None, :]
    lat = np.array([s.lat for s in sites])
    lon = np.array([s.lon for s in sites])
    d = azure_latency.great_circle_km(lat[:, None], lon[:, None], lat[None, :], lon[None, :])
    d = np.asarray(d, dtype=np.float64).reshape(n, n)
    fit = azure_latency.fit(azure_latency.parse(azure_latency.raw()))
    near = d <= AZ_MAX_KM
    rtt_in = np.where(near, AZ_RTT_MS, fit.rtt_ms(d))
    thr_in = np.full((n, n), PER_FLOW_CAP_MBPS) if window_mbit_ms is None else \
        np.minimum(window_mbit_ms / rtt_in, PER_FLOW_CAP_MBPS)
    usd_in = INTRA_REGION_USD_PER_GB.get(provider, INTRA_REGION_USD_PER_GB["aws"])
    usd = np.where(same, usd_in, usd)
    thr = np.where(same, thr_in, thr)
    rtt = np.where(same, rtt_in, rtt)
    eye = np.eye(n, dtype=bool)  # a site to itself: no transfer (as for a location to itself)
    usd, thr, rtt = np.where(eye, 0.0, usd), np.where(eye, PER_FLOW_CAP_MBPS, thr), np.where(eye, 0.0, rtt)
    if np.isnan(usd).any() or np.isnan(thr).any() or np.isnan(rtt).any():
        i, j = np.argwhere(np.isnan(usd) | np.isnan(thr) | np.isnan(rtt))[0]
        raise GridshiftError(f"network: no path for sites {sites[i].label} ({sites[i].location}) -> "
                             f"{sites[j].label} ({sites[j].location})")
    labels = np.array([s.label for s in sites], dtype=object)
    src, dst = np.meshgrid(np.arange(n), np.arange(n), indexing="ij")
    return pl.DataFrame({"src_location": labels[src.ravel()], "dst_location": labels[dst.ravel()],
                         "usd_per_gb": usd.ravel(), "throughput_mbps": thr.ravel(), "rtt_ms": rtt.ravel()},
                        schema={"src_location": pl.String, "dst_location": pl.String, "usd_per_gb": pl.Float64,
                                "throughput_mbps": pl.Float64, "rtt_ms": pl.Float64})
