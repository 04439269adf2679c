"""Reference tables: raw landings, locations, cloud egress prices, network paths."""

from __future__ import annotations

import pandera.polars as pa

from gridshift import columns as C
from gridshift.columns import UtcDatetime
from pipelines.sources.network import RTT_BASES, THROUGHPUT_BASES  # declared with the model that writes them


class RawFiles(pa.DataFrameModel):
    """Every raw upstream file landed, named by its sha256 (lineage for every row)."""

    sha256: str = C.sha256("sha256 of the landed bytes")
    source: str = C.source()
    uri: str
    bytes: int = pa.Field(ge=0)
    fetched_at: UtcDatetime = C.utc("UTC")
    path: str = pa.Field(description="landed path relative to the gridshift home")

    class Config:
        strict = True
        unique = ["sha256"]


class Locations(pa.DataFrameModel):
    """The location registry (gridshift/data/locations.csv)."""

    location: str = C.location()
    emaps_zone: str
    market: str
    price_currency: str = C.currency("currency of the market's prices")
    entsoe_area: str = pa.Field(nullable=True)
    iso_market: str = pa.Field(nullable=True)
    timezone: str
    weather_place: str
    lat: float = pa.Field(ge=-90, le=90, metadata={"unit": "deg"})
    lon: float = pa.Field(ge=-180, le=180, metadata={"unit": "deg"})
    macro_cluster: str = C.macro_cluster()
    aws_region: str
    gcp_region: str
    azure_region: str
    price_data: str = pa.Field(isin=["yes", "partial", "no"])
    carbon_data: str = pa.Field(isin=["yes", "partial", "no"])
    weather_data: str = pa.Field(isin=["yes", "partial", "no"])

    class Config:
        strict = True
        unique = ["location"]


class EgressPrice(pa.DataFrameModel):
    """Cloud inter-region data transfer price, USD per GB, from the provider's matrix."""

    provider: str = C.provider()
    src_region: str
    dst_region: str
    usd_per_gb: float = pa.Field(ge=0, le=10, metadata={"unit": "USD/GB"})
    source: str = C.source()
    raw_sha256: str = C.sha256()

    class Config:
        strict = True
        unique = ["provider", "src_region", "dst_region"]


class NetworkPath(pa.DataFrameModel):
    """Throughput and RTT between two locations of the registry, per provider (pipelines/sources/network.py):
    Persico et al. 2016's measurements between macro-regions, and, inside one macro-region, RTT from
    distance (fitted to Azure's published P50 RTTs) and throughput from Persico's fitted TCP window."""

    provider: str = C.provider()
    src_location: str = C.location()
    dst_location: str = C.location()
    src_macro: str = C.macro_cluster()
    dst_macro: str = C.macro_cluster()
    distance_km: float = pa.Field(ge=0, le=20_100, metadata={"unit": "km"},
                                  description="great-circle distance between the locations' coordinates")
    throughput_mbps: float = pa.Field(gt=0, le=1e7, metadata={"unit": "Mbit/s"})
    rtt_ms: float = pa.Field(gt=0, le=10_000, metadata={"unit": "ms"})
    rtt_basis: str = pa.Field(isin=list(RTT_BASES), description="where rtt_ms comes from (docs/sources.md)")
    throughput_basis: str = pa.Field(isin=list(THROUGHPUT_BASES),
                                     description="where throughput_mbps comes from (docs/sources.md)")
    source: str = C.source()
    raw_sha256: str = C.sha256()

    class Config:
        strict = True
        unique = ["provider", "src_location", "dst_location"]
