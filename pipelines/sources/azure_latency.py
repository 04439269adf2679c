"""Measured round-trip times between cloud regions, and the distance model fitted to them.

Input: ``gridshift/data/network/azure_rtt_p50.csv`` (repository data, landed like an upstream file
for lineage): the monthly P50 round-trip times Microsoft publishes between Azure regions ("Azure
network round-trip latency statistics", 30 days ending 2025-06-29), one row per ordered pair of the
Azure regions the location registry uses inside one macro-region, with the regions' coordinates
from Azure Resource Manager's location metadata.

:func:`fit` turns them into the RTT model the network paths use between locations of one
macro-region (``pipelines.sources.network``)::

    rtt_ms = fixed_ms + inflation × 2 d / v

with ``d`` the great-circle distance (km), ``v`` = 200 km/ms the speed of light in fiber (refractive
index ≈ 1.5, i.e. ≈ 5 µs per km one way), ``inflation`` the route length over the great circle and
``fixed_ms`` the distance-independent part (metro access, equipment, queueing). Both come from an
ordinary least-squares fit over the ``same_continent`` rows. The published Internet rule of thumb —
one-way latency ≈ 2.1 × line-of-sight distance / speed of light in fiber (Bozkurt et al.,
"Dissecting Latency in the Internet's Fiber Infrastructure", arXiv:1811.10737, 2018, abstract;
Singla et al., "The Internet at the Speed of Light", HotNets 2014, median ping RTT 3.2 × c-latency)
is what the median of ``rtt / (2 d / v)`` over these rows reproduces (≈ 2.1); the affine fit is kept
because short paths are relatively slower than long ones on the cloud backbones (docs/sources.md).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from importlib.resources import files

import numpy as np
import polars as pl

from gridshift import portable_math as pm
from gridshift.errors import DataError
from pipelines.core.raw import RawFile
from pipelines.core.source import Source
from pipelines.core.tabular import bad_rows, first_data_line, read_csv_strings, to_float

NAME = "azure-rtt-p50"
DATA_FILE = "data/network/azure_rtt_p50.csv"  # in the gridshift package
URI = "gridshift:" + DATA_FILE
COLUMNS = ["src_region", "src_lat", "src_lon", "dst_region", "dst_lat", "dst_lon", "rtt_ms", "pair_class"]
PAIR_CLASSES = ("same_continent", "cross_continent")
#: Speed of light in optical fiber, km per ms (c / 1.5; ≈ 5 µs per km one way).
FIBER_KM_PER_MS = 200.0
#: Mean Earth radius (IUGG), km.
EARTH_RADIUS_KM = 6371.0088


def great_circle_km(lat1, lon1, lat2, lon2) -> np.ndarray:
    """Haversine distance on a sphere of the mean Earth radius, vectorized (degrees in, km out), with
    ``portable_math``'s trigonometry: the bundle's network table has the same bits on every machine."""
    rad = math.pi / 180.0
    p1, p2 = np.asarray(lat1, dtype=np.float64) * rad, np.asarray(lat2, dtype=np.float64) * rad
    dlat = p2 - p1
    dlon = (np.asarray(lon2, dtype=np.float64) - np.asarray(lon1, dtype=np.float64)) * rad
    s_lat, s_lon = pm.sin(dlat / 2), pm.sin(dlon / 2)
    h = s_lat * s_lat + pm.cos(p1) * pm.cos(p2) * (s_lon * s_lon)
    return 2 * EARTH_RADIUS_KM * pm.arcsin(np.sqrt(np.clip(h, 0.0, 1.0)))


def fiber_rtt_ms(distance_km) -> np.ndarray:
    """Round trip along the great circle at the speed of light in fiber."""
    return 2 * np.asarray(distance_km, dtype=np.float64) / FIBER_KM_PER_MS


def raw() -> RawFile:
    """The repository's measurement table as a raw file (landed for lineage like any upstream file)."""
    return RawFile(source=NAME, uri=URI, content=files("gridshift").joinpath(DATA_FILE).read_bytes())


def parse(raw: RawFile) -> pl.DataFrame:
    """Read and check the table: numbers where numbers belong, coordinates on the globe, RTT > 0,
    a known pair class, no repeated pair. Adds ``distance_km``."""
    file = raw.uri
    df = read_csv_strings(raw.content, file, COLUMNS, comment_prefix="#", exact=True)
    line = first_data_line(raw.content, "#")
    num = {c: to_float(df, c, file, required=True, first_line=line)
           for c in ("src_lat", "src_lon", "dst_lat", "dst_lon", "rtt_ms")}
    outside = {c: ~num[c].is_between(-lim, lim) for c, lim in
               (("src_lat", 90), ("dst_lat", 90), ("src_lon", 180), ("dst_lon", 180))}  # NaN is outside too
    checks = {
        **outside,
        "rtt_ms": ~num["rtt_ms"].is_between(0, 1000, closed="right"),
        "pair_class": ~df["pair_class"].is_in(PAIR_CLASSES),
        "dst_region": df["src_region"] == df["dst_region"],
    }
    for col, bad in checks.items():
        if bad.any():
            raise bad_rows(df, bad, "invalid row(s)", file=file, column=col, first_line=line)
    out = df.with_columns(**num)
    dup = out.select("src_region", "dst_region").is_duplicated()
    if dup.any():
        pairs = out.select(pair=pl.concat_str("src_region", pl.lit(" -> "), "dst_region"))
        raise bad_rows(pairs, dup, "repeated region pair", file=file, column="pair", first_line=line)
    return out.with_columns(distance_km=pl.Series(great_circle_km(
        out["src_lat"], out["src_lon"], out["dst_lat"], out["dst_lon"])))


@dataclass(frozen=True)
class RttFit:
    """``rtt_ms = fixed_ms + inflation × 2 d / v``, fitted on ``n`` measured pairs."""

    fixed_ms: float
    inflation: float
    n: int
    median_ratio: float  # median of rtt / (2 d / v): the single-factor inflation of the same rows
    rms_residual_ms: float

    def rtt_ms(self, distance_km) -> np.ndarray:
        return self.fixed_ms + self.inflation * fiber_rtt_ms(distance_km)


def fit(pairs: pl.DataFrame) -> RttFit:
    """Ordinary least squares of the measured RTT on the fiber round trip, same-continent pairs."""
    rows = pairs.filter(pl.col("pair_class") == "same_continent")
    if rows.height < 3:
        raise DataError("fewer than 3 same-continent pairs to fit the RTT model", file=URI, column="pair_class")
    x = fiber_rtt_ms(rows["distance_km"].to_numpy())
    y = rows["rtt_ms"].to_numpy()
    fixed, inflation = pm.line_fit(x, y)
    resid = y - (fixed + inflation * x)
    if not (math.isfinite(fixed) and math.isfinite(inflation) and inflation > 0 and fixed >= 0):
        raise DataError(f"the RTT fit is not physical (fixed {fixed:.3g} ms, inflation {inflation:.3g})", file=URI,
                        column="rtt_ms")
    return RttFit(float(fixed), float(inflation), rows.height, float(np.median(y / x)),
                  float(np.sqrt(np.mean(resid ** 2))))


class AzureRttP50(Source):
    """Microsoft's published P50 RTTs between Azure regions (repository table, cited)."""

    name = NAME

    def raw(self) -> RawFile:
        return raw()

    def parse(self, raw: RawFile) -> pl.DataFrame:
        return parse(raw)


SOURCE = AzureRttP50()
